"""Fit the shipped meta-classifiers (``models/meta/ensemble.json`` and ``alignment.json``).

Features come from :meth:`verifier.Verifier.verify_pairs` with the meta-classifiers off
(embedded NLI model, embedded MiniLM for the cosines), on the ``train`` splits of the data
sets in :data:`verifier.training.META_SETS` (never their ``eval`` splits, which
``benchmarks/bench_verifier.py`` reports). Each set is capped at ``--limit`` seeded random
rows, and rows are weighted alike (``--weighting none``; ``balanced`` gives every set the same total
weight, the choice before the pipeline rows, see ``models/meta/README.md``).

    python models/recipes/train_meta.py [--limit 800] [--weighting none] [--cache DIR]
        [--out models/meta] [--drop FEATURE ...] [--nli-holdout]
        [--support-estimator auto|boosting|logistic]
        [--refute-estimator auto|boosting|logistic]

Writes ``ensemble.json`` (NLI, alignment and check features), ``alignment.json`` (alignment
and check features only), ``nli_only.json`` (NLI features only), ``with_uncertainty.json``
(the ensemble plus the uncertainty features) and ``training_log.json`` (rows per set,
features, learned p(Supported) cut, support-stage coefficients where stage one is logistic,
macro-F1 per set 5-fold cross-validated within the train splits and leave-one-set-out, and,
for a stage set to ``auto``, each classifier's CV with either estimator fold by fold: the
one with the higher CV is fitted). Stage one is ``auto`` by default: boosted trees for the
ensemble, the alignment classifier and ``with_uncertainty``, the logistic regression for
``nli_only`` (see ``models/meta/README.md``, "Stage one: boosted trees"). Stage two is
logistic although ``auto`` picks boosted trees for the ensemble: see the same card, "Stage
two: boosted trees measured, not shipped".
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from verifier.checking import arg_number
from verifier.datasets import Example
from verifier.meta import ESTIMATORS, NOT_SUPPORTED, StatusClassifier, balanced_weights
from verifier.training import (
    META_SETS,
    PIPELINE_SET,
    collect_features,
    feature_array,
    fold_of,
    nli_holdout,
    pipeline_features,
    sample_examples,
)
from verifier.verify import NLI_DETAIL_FEATURES, Verifier, all_features

logger = logging.getLogger("train_meta")
HERE = Path(__file__).resolve().parent
#: FEVER train claims whose draft-style rows join the training rows (``--pipeline-claims``).
PIPELINE_CLAIMS = 2000
#: The recipe's options (the command line's defaults; ``sweep_meta.py`` re-checks them).
RECIPE: dict[str, Any] = {"limit": 800, "C": 0.1, "calibration": "sigmoid", "weighting": "none",
                          "refute_estimator": "logistic", "support_estimator": "auto"}
#: The shipped ensemble's fit as the comparison scripts refit it: the recipe, with the stage
#: one ``--support-estimator auto`` chose for it (boosted trees; ``../meta/training_log.json``).
ENSEMBLE_FIT: dict[str, Any] = {"C": RECIPE["C"], "calibration": RECIPE["calibration"], "cv": 5,
                                "estimator": "boosting",
                                "refute_estimator": RECIPE["refute_estimator"]}

def _group(*prefixes: str, exclude: tuple[str, ...] = ()) -> tuple[str, ...]:
    return tuple(f for f in all_features()
                 if f.startswith(prefixes) and not f.startswith(exclude))


#: Features by detector: NLI (probabilities and their log-odds), evidence alignment (with
#: the deterministic checks), uncertainty; ``x.*`` interactions need NLI and alignment both.
#: The NLI features read from the scores behind the deciding row
#: (:data:`verifier.verify.NLI_DETAIL_FEATURES`): measured, not in the shipped classifiers
#: (with them the ensemble's CV was 74.07 against 73.85, a lead of +0.31 with a standard
#: error of 0.21 over the paired folds: within the folds' noise; ``models/meta/README.md``).
DETAIL_GROUP = NLI_DETAIL_FEATURES
NLI_GROUP = _group("nli.", exclude=DETAIL_GROUP)
ALIGN_GROUP = _group("align.", "checks.", "match.")
UNC_GROUP = _group("unc.")
#: The shipped classifiers: the ensemble, the alignment classifier, and the variants the
#: benchmark's ablation rows use (without NLI = the alignment classifier, without alignment
#: = ``nli_only``). The uncertainty features available on labelled pairs (the NLI entropy:
#: they have no generator draft) are left out of the ensemble: with them its leave-one-set-out
#: macro-F1 on the training sets was lower (``training_log.json``, ``loso_macro_f1``);
#: ``with_uncertainty`` keeps them for the benchmark's row.
GROUPS: dict[str, tuple[str, ...]] = {
    "ensemble": tuple(f for f in all_features() if f not in UNC_GROUP + DETAIL_GROUP),
    "alignment": ALIGN_GROUP,
    "nli_only": NLI_GROUP,
    "with_uncertainty": tuple(f for f in all_features() if f not in DETAIL_GROUP),
}

#: Classifiers fitted on the labelled sets' rows only, not on the pipeline rows: with them
#: the alignment classifier's cross-validated macro-F1 fell on the labelled sets (55.3 ->
#: 53.5, HealthVer 45.9 -> 26.6) and on the pipeline rows too (43.2 -> 38.7): run this
#: script with ``LABELLED_ONLY`` empty and compare ``training_log.json``.
LABELLED_ONLY = frozenset({"alignment"})


def _weights(groups: np.ndarray, weighting: str) -> np.ndarray | None:
    return balanced_weights(groups) if weighting == "balanced" else None


def _set_macro_f1(model: StatusClassifier, X: np.ndarray, y: np.ndarray) -> float:
    """Macro-F1 of one set's rows: 3-class where it has ``Insufficient_Info`` rows, else
    supported vs the rest (as ``benchmarks/bench_verifier.py`` scores it)."""
    from sklearn.metrics import f1_score

    pred = model.predict(X).astype(object)
    gold = np.where(y == NOT_SUPPORTED, "Contradictory", y).astype(object)
    if not (gold == "Insufficient_Info").any():
        gold = np.where(gold == "Supported", "Supported", "rest")
        pred = np.where(pred == "Supported", "Supported", "rest")
    return 100 * f1_score(gold, pred, average="macro", zero_division=0)


def _with_means(out: dict[str, float]) -> dict[str, float]:
    out["mean"] = round(float(np.mean(list(out.values()))), 2)
    if PIPELINE_SET in out:  # the figure comparable with classifiers fitted before them
        out["mean_labelled_sets"] = round(float(np.mean([out[g] for g in META_SETS if g in out])),
                                          2)
    return out


def loso_macro_f1(names: list[str], X: np.ndarray, y: np.ndarray, groups: np.ndarray,
                  weighting: str = "none", fit_on: np.ndarray | None = None,
                  **params: Any) -> dict[str, float]:
    """Macro-F1 on each training set of a classifier fitted on the other sets (a new kind
    of data). ``fit_on``: a row mask; rows outside it are scored, never fitted on."""
    fit_on = np.ones(len(y), dtype=bool) if fit_on is None else fit_on
    out = {}
    for g in dict.fromkeys(groups.tolist()):
        held = groups == g
        tr = ~held & fit_on
        model = StatusClassifier(names, **params).fit(
            X[tr], y[tr], groups=groups[tr], sample_weight=_weights(groups[tr], weighting))
        out[g] = round(_set_macro_f1(model, X[held], y[held]), 2)
    return _with_means(out)


def cv_macro_f1(names: list[str], X: np.ndarray, y: np.ndarray, groups: np.ndarray,
                folds: np.ndarray, weighting: str = "none", fit_on: np.ndarray | None = None,
                **params: Any) -> dict[str, float]:
    """Macro-F1 per training set, 5-fold cross-validated within the training splits (the
    same kinds of data, unseen rows: what the benchmark's eval splits measure); mean over
    sets. The criterion for choosing the recipe's options. ``fit_on``: as in
    :func:`loso_macro_f1`."""
    return cv_folds(names, X, y, groups, folds, weighting, fit_on, **params)[0]


def cv_folds(names: list[str], X: np.ndarray, y: np.ndarray, groups: np.ndarray,
             folds: np.ndarray, weighting: str = "none", fit_on: np.ndarray | None = None,
             **params: Any) -> tuple[dict[str, float], np.ndarray]:
    """:func:`cv_macro_f1`, and each fold's mean over sets (for a standard error)."""
    fit_on = np.ones(len(y), dtype=bool) if fit_on is None else fit_on
    sets = list(dict.fromkeys(groups.tolist()))
    f1 = np.full((len(np.unique(folds)), len(sets)), np.nan)
    n = np.zeros_like(f1)
    for i, k in enumerate(np.unique(folds)):
        test = folds == k
        tr = ~test & fit_on
        model = StatusClassifier(names, **params).fit(
            X[tr], y[tr], groups=groups[tr], sample_weight=_weights(groups[tr], weighting))
        for j, g in enumerate(sets):
            m = test & (groups == g)
            if m.any():
                f1[i, j], n[i, j] = _set_macro_f1(model, X[m], y[m]), m.sum()
    per_set = {g: round(float(np.average(f1[n[:, j] > 0, j], weights=n[n[:, j] > 0, j])), 2)
               for j, g in enumerate(sets) if (n[:, j] > 0).any()}
    return _with_means(per_set), np.nanmean(f1, axis=1)


def paired_lead(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Mean and standard error of ``a - b`` over paired folds (the recipe's noise rule)."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    return float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(len(diff)))


#: The two stages of a :class:`~verifier.meta.StatusClassifier`, by the parameter that sets
#: each one's estimator.
STAGE_PARAMS: dict[str, str] = {"support": "estimator", "refute": "refute_estimator"}


def choose_estimator(stage: str, names: list[str], X: np.ndarray, y: np.ndarray,
                     groups: np.ndarray, folds: np.ndarray, weighting: str,
                     fit_on: np.ndarray, params: dict[str, Any]
                     ) -> tuple[str, dict[str, Any]]:
    """The estimator of ``stage`` (``"support"``: stage one, Supported vs the rest;
    ``"refute"``: stage two) with the higher CV macro-F1 (ties: ``logistic``), the other
    stage as in ``params``, and a record of both: CV per set, each fold's mean, and the
    winner's lead (mean, standard error over the paired folds)."""
    if stage not in STAGE_PARAMS:
        raise ValueError(f"stage must be one of {list(STAGE_PARAMS)}, got {stage!r}")
    runs = {}
    for est in ESTIMATORS:
        cv, per_fold = cv_folds(names, X, y, groups, folds, weighting, fit_on,
                                **{**params, STAGE_PARAMS[stage]: est})
        runs[est] = (cv, per_fold)
    best = max(ESTIMATORS, key=lambda e: runs[e][0]["mean"])
    other = next(e for e in ESTIMATORS if e != best)
    diff = runs[best][1] - runs[other][1]
    lead, se = paired_lead(runs[best][1], runs[other][1])
    record = {"chosen": best, "cv_macro_f1": {e: runs[e][0] for e in ESTIMATORS},
              "cv_lead": round(lead, 2), "cv_lead_se": round(se, 2),
              "cv_lead_per_fold": np.round(diff, 2).tolist()}
    logger.info("stage %s: %s (CV %.2f) over %s (%.2f): lead %+.2f, SE %.2f over folds", stage,
                best, runs[best][0]["mean"], other, runs[other][0]["mean"], record["cv_lead"],
                record["cv_lead_se"])
    return best, record


def features_for(group: tuple[str, ...], rows: list[dict]) -> list[str]:
    """The features of ``group`` a classifier is fitted on: :func:`usable` on the labelled
    sets' rows (a feature only the pipeline rows have, the pairer's retrieval score, would
    mark them apart from every labelled row)."""
    labelled = [r for r in rows if r["dataset"] != PIPELINE_SET]
    return usable(group, feature_array(labelled, group))


def usable(names: tuple[str, ...], X: np.ndarray) -> list[str]:
    """Names whose column is not missing everywhere and not constant."""
    keep = []
    for j, n in enumerate(names):
        col = X[:, j]
        fin = col[np.isfinite(col)]
        if fin.size and (np.ptp(fin) > 0 or fin.size < len(col)):
            keep.append(n)
    return keep


def row_labels(rows: list[dict], examples: list[Example]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each training row's status, data set (the calibration folds' groups) and evidence
    fold (the cross-validation's, :func:`verifier.training.fold_of`)."""
    y = np.array([r["status"] for r in rows], dtype=object)
    groups = np.array([r["dataset"] for r in rows], dtype=object)
    return y, groups, np.array([fold_of(e) for e in examples])


def recipe_rows(verifier: Verifier, cache: Path | None
                ) -> tuple[list[dict], list[Example], np.ndarray, np.ndarray, np.ndarray]:
    """The recipe's training rows (:func:`training_rows` at ``RECIPE["limit"]``), the
    example of each and their :func:`row_labels`, as the comparison scripts read them."""
    rows, examples = training_rows(verifier, limit=RECIPE["limit"], cache=cache)
    return (rows, examples, *row_labels(rows, examples))


def training_rows(verifier: Verifier, *, limit: int, cache: Path | None,
                  nli_holdout_only: bool = False, pipeline_claims: int = PIPELINE_CLAIMS
                  ) -> tuple[list[dict], list[Example]]:
    """The feature rows the classifiers are fitted on, and the example of each (its fold).

    ``limit`` rows of each labelled set's train split, and the rows of ``pipeline_claims``
    FEVER train claims checked as a draft's claims are (:func:`pipeline_features`).
    """
    where = nli_holdout if nli_holdout_only else None
    rows, examples = [], []
    for name in META_SETS:
        ex = sample_examples(name, "train", limit or None, where=where)
        rows += collect_features(verifier, ex, cache=cache / "train.jsonl" if cache else None)
        examples += ex
        logger.info("%s: %d rows", name, len(ex))
    if pipeline_claims:
        claims = sample_examples("fever", "train", pipeline_claims, seed=1, where=where)
        prow, owners = pipeline_features(verifier, claims,
                                         cache=cache / "pipeline.jsonl" if cache else None)
        rows += prow
        examples += owners
        logger.info("%s: %d rows from %d claims", PIPELINE_SET, len(prow), len(claims))
    return rows, examples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=arg_number(int, 0), default=RECIPE["limit"],
                    help="rows per data set (0: all)")
    ap.add_argument("--cache", type=Path, default=None,
                    help="folder for the feature cache (train.jsonl); resumes")
    ap.add_argument("--out", type=Path, default=HERE.parent / "meta")
    ap.add_argument("--C", type=arg_number(float, 0, low_open=True), default=RECIPE["C"],
                    help="inverse regularisation")
    ap.add_argument("--calibration", default=RECIPE["calibration"],
                    choices=["isotonic", "sigmoid"])
    ap.add_argument("--cv", type=arg_number(int, 2), default=5,
                    help="folds for the calibration data")
    ap.add_argument("--weighting", default=RECIPE["weighting"], choices=["balanced", "none"],
                    help="none: every row the same weight (default); balanced: every data "
                    "set the same total weight")
    ap.add_argument("--refute-estimator", default=RECIPE["refute_estimator"],
                    choices=["auto", *ESTIMATORS],
                    help="stage two (Contradictory vs Insufficient_Info): a logistic regression "
                    "(default), gradient-boosted trees, or (auto) whichever has the higher CV "
                    "macro-F1, per classifier, logging both")
    ap.add_argument("--support-estimator", default=RECIPE["support_estimator"],
                    choices=["auto", *ESTIMATORS],
                    help="stage one (Supported vs the rest): whichever of a logistic "
                    "regression and gradient-boosted trees has the higher CV macro-F1, per "
                    "classifier (auto, default), or the one named")
    ap.add_argument("--nli-holdout", action="store_true",
                    help="fit on the train examples verifier.training.nli_holdout picks only: "
                    "for an NLI model trained on data from prepare_nli_data.py --meta-holdout "
                    "(with the shipped one, whose data had them all, it changes nothing but "
                    "the row count)")
    ap.add_argument("--pipeline-claims", type=arg_number(int, 0), default=PIPELINE_CLAIMS,
                    help="FEVER train claims checked as in a draft, with and without their "
                    "own document among others (verifier.training.pipeline_features; 0: none)")
    ap.add_argument("--drop", nargs="+", default=[], metavar="FEATURE",
                    help="leave these features out of every classifier (an ablation: write "
                    "it to another --out and compare the CV in training_log.json)")
    args = ap.parse_args()
    unknown = sorted(set(args.drop) - set(all_features()))
    if unknown:
        ap.error(f"--drop: unknown features {unknown}; known: {list(all_features())}")
    emptied = [name for name, group in GROUPS.items() if set(group) <= set(args.drop)]
    if emptied:
        ap.error(f"--drop leaves no feature for {emptied}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    t0 = time.perf_counter()
    verifier = Verifier(meta=None, alignment_classifier=None)
    rows, examples = training_rows(verifier, limit=args.limit, cache=args.cache,
                                   nli_holdout_only=args.nli_holdout,
                                   pipeline_claims=args.pipeline_claims)
    y, groups, folds = row_labels(rows, examples)
    args.out.mkdir(parents=True, exist_ok=True)
    log = {"limit": args.limit, "pipeline_claims": args.pipeline_claims, "rows": len(rows),
           "rows_per_set": dict(Counter(r["dataset"] for r in rows)),
           "labels": dict(Counter(y.tolist())), "C": args.C,
           "calibration": args.calibration, "cv": args.cv,
           "weighting": args.weighting, "refute_estimator": args.refute_estimator,
           "support_estimator": args.support_estimator,
           "classifiers": {}}
    if args.drop:
        log["dropped"] = list(args.drop)
    if args.nli_holdout:
        log["nli_holdout"] = True
    pipeline_rows = groups == PIPELINE_SET
    fitted: dict[str, StatusClassifier] = {}
    for model_name, group in GROUPS.items():
        names = features_for(tuple(f for f in group if f not in args.drop), rows)
        X = feature_array(rows, names)
        fit_on = ~pipeline_rows if model_name in LABELLED_ONLY else np.ones(len(rows), bool)
        # calibration folds leave whole data sets out: calibrated for a set not seen
        params: dict[str, Any] = {"C": args.C, "calibration": args.calibration,
                                  "cv": args.cv}
        options = {"support": args.support_estimator, "refute": args.refute_estimator}
        for stage, option in options.items():  # a stage still to choose: logistic meanwhile
            params[STAGE_PARAMS[stage]] = "logistic" if option == "auto" else option
        choices: dict[str, dict[str, Any] | None] = dict.fromkeys(options)
        for stage, option in options.items():  # stage one first
            if option == "auto":
                params[STAGE_PARAMS[stage]], choices[stage] = choose_estimator(
                    stage, names, X, y, groups, folds, args.weighting, fit_on, params)
        model = StatusClassifier(names, **params).fit(
            X[fit_on], y[fit_on], groups=groups[fit_on],
            sample_weight=_weights(groups[fit_on], args.weighting))
        fitted[model_name] = model
        sup = model.support_
        coefs = (dict(zip(sup.feature_names_in_.tolist(),
                          np.round(sup.coef_[0][: len(names)], 4).tolist(), strict=True))
                 if hasattr(sup, "coef_") else None)  # boosted trees have no coefficients
        loso = loso_macro_f1(names, X, y, groups, args.weighting, fit_on, **params)
        last = choices["refute"] or choices["support"]  # its CV ran with the final params
        cv = (last["cv_macro_f1"][last["chosen"]] if last else
              cv_macro_f1(names, X, y, groups, folds, args.weighting, fit_on, **params))
        log["classifiers"][model_name] = {"features": names,
                                          "fitted_on_pipeline_rows": bool(
                                              (fit_on & pipeline_rows).any()),
                                          "support_threshold": model.support_threshold_,
                                          "support_estimator": params["estimator"],
                                          "support_estimator_choice": choices["support"],
                                          "refute_estimator": params["refute_estimator"],
                                          "refute_estimator_choice": choices["refute"],
                                          "loso_macro_f1": loso,
                                          "cv_macro_f1": cv,
                                          "support_stage_coefficients": coefs}
        logger.info("%s: %d features, macro-F1 5-fold CV %.2f, leave-one-set-out %.2f",
                    model_name, len(names), cv["mean"], loso["mean"])
    log["seconds"] = round(time.perf_counter() - t0, 1)
    # written once every classifier is fitted, each file whole: a run that fails or is
    # stopped leaves --out as it was (it left new classifiers beside old ones and an old log)
    written = []
    for model_name, model in fitted.items():
        written.append((args.out / f".{model_name}.json.tmp", args.out / f"{model_name}.json"))
        model.save(written[-1][0])
    written.append((args.out / ".training_log.json.tmp", args.out / "training_log.json"))
    written[-1][0].write_text(json.dumps(log, indent=1) + "\n")
    for tmp, path in written:
        tmp.replace(path)
    logger.info("wrote %s in %.0fs", args.out, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
