"""Compare calibrators of the ensemble's stage one (p(Supported)) on the eval splits.

The figures of ``models/meta/README.md``, "Tried on the shipped fit (2026-11-29)". The recipe
(``train_meta.py``) fits the ensemble's stage one, then calibrates it with a sigmoid fitted on
out-of-fold scores from folds that leave whole data sets out: each training set's scores come
from trees that never saw that set. The shipped ensemble is under-confident on FRANK (ECE
0.063, its confidence under its accuracy) and over-confident on others. This script refits the
recipe once on the train feature cache and scores, on every eval split, the same trees under
each calibrator below (macro-F1 as ``benchmarks/bench_verifier.py`` scores the
ensemble, ECE of the final status probability and the signed gap, mean confidence minus
accuracy). Each variant's Supported cut is chosen as the recipe chooses it (macro-F1 on its
calibrated set-out out-of-fold scores, averaged over the training sets); the eval splits
choose nothing.

    python models/recipes/compare_calibration.py --train-cache DIR --eval-cache DIR
        [--out FILE]

``--train-cache``: ``train_meta.py --cache``'s folder; ``--eval-cache``: ``bench_verifier.py
--cache``'s. Both must hold the features of the code this runs on (~20 minutes each to
recompute on a 2-core CPU). About 2 minutes with both caches.

Calibrators (the keys of the output):

- ``recipe``: the recipe's calibrators (one sigmoid per class on the set-out scores);
- ``platt_set_out``: one sigmoid for p(Supported) on the same scores;
- ``platt_evidence_grouped``: one sigmoid on out-of-fold scores from folds grouped by
  evidence (``verifier.training.fold_of``), whose trees saw every training set;
- ``platt_both``: one sigmoid on both sets of scores, half weight each;
- ``platt_set_out_evidence_length`` / ``platt_both_evidence_length``: the sigmoid with the
  log evidence length (``align.log_evidence_tokens``, centred at 3.5) and its product with the
  score's log-odds as covariates;
- ``platt_set_out_sentences``: the same with ``log(1 + nli.sentences)``.
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score

from verifier.meta import NOT_SUPPORTED, MetaClassifier, StatusClassifier, _best_threshold
from verifier.training import feature_array
from verifier.verify import Verifier

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent.parent / "benchmarks")]  # train_meta, bench_*
import bench_verifier as bv  # noqa: E402
import train_meta as tm  # noqa: E402

#: Calibrated p(Supported) from the trees' raw p(Supported) and the rows' features.
Calibrate = Callable[[np.ndarray, np.ndarray], np.ndarray]

def covariate(names: Sequence[str], kind: str) -> Callable[[np.ndarray], np.ndarray]:
    """The covariate ``kind`` (``"evidence_length"`` or ``"sentences"``) of feature rows;
    ``0`` where the feature is missing."""
    if kind == "evidence_length":
        j = list(names).index("align.log_evidence_tokens")
        return lambda X: np.nan_to_num(X[:, j] - 3.5)
    if kind == "sentences":
        j = list(names).index("nli.sentences")
        return lambda X: np.nan_to_num(np.log1p(X[:, j]))
    raise ValueError(f"kind must be 'evidence_length' or 'sentences', got {kind!r}")


def _log_odds(p: np.ndarray) -> np.ndarray:
    """Log-odds of ``p``, clipped as ``verifier.meta``'s sigmoid calibrators clip it (inline
    there: sharing it is a code edit under ``verifier/``, which makes every feature cache
    stale)."""
    q = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    return np.log(q / (1 - q))


def _design(z: np.ndarray, u: np.ndarray | None) -> np.ndarray:
    return z[:, None] if u is None else np.column_stack([z, u, z * u])


def fit_platt(scores: Sequence[np.ndarray], target: np.ndarray, weights: Sequence[float],
              X: np.ndarray, cov: Callable[[np.ndarray], np.ndarray] | None = None
              ) -> Calibrate:
    """A sigmoid of the log-odds of ``scores`` (each an ``(n,)`` out-of-fold p(Supported)
    of the rows ``X``, weighted as ``weights`` says) for ``target``; with ``cov``, the
    covariate and its product with the log-odds enter too."""
    u = None if cov is None else cov(X)
    Z = np.concatenate([_design(_log_odds(s), u) for s in scores])
    T = np.concatenate([target] * len(scores))
    W = np.concatenate([np.full(len(target), w, dtype=np.float64) for w in weights])
    lr = LogisticRegression(C=1e6, max_iter=1000).fit(Z, T, sample_weight=W)

    def calibrate(raw: np.ndarray, Xm: np.ndarray) -> np.ndarray:
        return lr.predict_proba(_design(_log_odds(raw), None if cov is None else cov(Xm)))[:, 1]

    return calibrate


def raw_support(model: StatusClassifier, X: np.ndarray) -> np.ndarray:
    """The stage-one trees' uncalibrated p(Supported) of the rows ``X``."""
    stage = model.support_
    raw = stage._raw_proba(stage._prepare(X, fit=False))
    return raw[:, list(stage.classes_).index("Supported")]


def with_calibration(model: StatusClassifier, calibrate: Calibrate, cut: float
                     ) -> StatusClassifier:
    """A copy of the fitted ``model`` whose stage one is calibrated by ``calibrate`` and whose
    Supported cut is ``cut`` (stage two as fitted); ``model`` is left as it is."""
    out, stage = copy.copy(model), copy.copy(model.support_)
    k = list(stage.classes_).index("Supported")

    def predict_proba(X: np.ndarray) -> np.ndarray:
        s = calibrate(raw_support(model, X), X)
        return np.stack([1 - s, s] if k == 1 else [s, 1 - s], axis=1)

    stage.predict_proba = predict_proba  # type: ignore[method-assign]  # this copy's only
    out.support_, out.support_threshold_ = stage, cut
    return out


def score_set(model: StatusClassifier, rows: list[dict[str, Any]]) -> dict[str, float]:
    """Macro-F1 of ``model``'s statuses, ECE of its status probabilities and their signed
    gap (mean confidence minus accuracy) on one eval set, as ``bench_verifier.py`` scores
    the ensemble."""
    gold, three = bv.gold_statuses(rows)
    pred = bv.collapse(model.predict(feature_array(rows, list(model.feature_names_in_))),
                       three)
    f1 = f1_score(gold, pred, labels=sorted(set(gold.tolist())), average="macro",
                  zero_division=0)
    chosen, conf = bv.confidences(bv.model_proba(model, rows), three)
    right = (chosen == gold).astype(float)
    return {"macro_f1": round(100 * float(f1), 2), "ece": round(float(bv.ece(conf, right)), 4),
            "gap": round(float(conf.mean() - right.mean()), 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train-cache", type=Path, required=True)
    ap.add_argument("--eval-cache", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=None, help="JSON of the figures")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    verifier = Verifier(meta=None, alignment_classifier=None)
    rows, examples, y, groups, folds = tm.recipe_rows(verifier, args.train_cache)
    names = tm.features_for(tm.GROUPS["ensemble"], rows)
    X = feature_array(rows, names)
    evals = bv.eval_rows(verifier, args.eval_cache)
    params = tm.ENSEMBLE_FIT
    model = StatusClassifier(names, **params).fit(X, y, groups=groups)
    supported = (y == "Supported").astype(float)
    set_out = model.support_._oof[:, list(model.support_.classes_).index("Supported")]
    grouped = MetaClassifier(names, C=params["C"], calibration="sigmoid", cv=5,
                             estimator="boosting").fit(
        X, np.where(y == "Supported", "Supported", NOT_SUPPORTED), groups=folds)
    by_evidence = grouped._oof[:, list(grouped.classes_).index("Supported")]
    length, sentences = covariate(names, "evidence_length"), covariate(names, "sentences")
    calibrators: dict[str, Calibrate | None] = {
        "recipe": None,  # the model as fitted
        "platt_set_out": fit_platt([set_out], supported, [1.0], X),
        "platt_evidence_grouped": fit_platt([by_evidence], supported, [1.0], X),
        "platt_both": fit_platt([set_out, by_evidence], supported, [0.5, 0.5], X),
        "platt_set_out_evidence_length": fit_platt([set_out], supported, [1.0], X, length),
        "platt_both_evidence_length": fit_platt([set_out, by_evidence], supported, [0.5, 0.5],
                                                X, length),
        "platt_set_out_sentences": fit_platt([set_out], supported, [1.0], X, sentences),
    }
    out: dict[str, Any] = {"recipe_cut": model.support_threshold_}
    for variant, calibrate in calibrators.items():
        if calibrate is None:
            cut, variant_model = model.support_threshold_, model
        else:
            cut = _best_threshold(calibrate(set_out, X), y == "Supported", groups)
            variant_model = with_calibration(model, calibrate, cut)
        sets = {name: score_set(variant_model, erows) for name, erows in evals.items()}
        eces = [s["ece"] for s in sets.values()]
        out[variant] = {"cut": cut, "sets": sets,
                        "mean_macro_f1": round(float(np.mean([s["macro_f1"]
                                                              for s in sets.values()])), 2),
                        "max_ece": max(eces), "sets_over_0.05": sum(e > 0.05 for e in eces)}
        print(f"{variant:30s} cut {cut:.2f}  mean macro-F1 {out[variant]['mean_macro_f1']:.2f}"
              f"  max ECE {max(eces):.3f}  over 0.05: {out[variant]['sets_over_0.05']}  | "
              + "  ".join(f"{n} {s['ece']:.3f} ({s['gap']:+.3f})" for n, s in sets.items()),
              flush=True)
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
