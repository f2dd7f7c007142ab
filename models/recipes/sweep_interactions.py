"""Measure evidence-length interactions for the ensemble by ``train_meta.py``'s criterion.

Each variant adds products of shipped features with ``align.log_evidence_tokens`` (the log
evidence token count) to the ensemble's features and is fitted as the recipe fits the
ensemble (``RECIPE``: every row the same weight, logistic stage two). Printed per variant:
macro-F1 5-fold cross-validated within the train splits, folds grouped by evidence (the
criterion; with its lead over the shipped features fold by fold, mean and standard error),
leave-one-set-out over the labelled sets, and with ``--eval-cache`` the eval table's mean
macro-F1 and how many sets' ECE exceed 0.05 (``benchmarks/bench_verifier.py``'s scoring;
reported, never a criterion). Measured on 2026-11-25 and not shipped: see
``models/meta/README.md`` (the sweep was first written up under "The version before" and
re-run on the features of "This version").

    python models/recipes/sweep_interactions.py --cache DIR [--eval-cache DIR]

``--cache``: ``train_meta.py``'s feature cache folder; ``--eval-cache``:
``bench_verifier.py``'s. Writes ``models/recipes/interaction_sweep.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import Any

import numpy as np
from train_meta import (
    GROUPS,
    RECIPE,
    _weights,
    cv_folds,
    features_for,
    loso_macro_f1,
    paired_lead,
    recipe_rows,
)

from verifier.meta import StatusClassifier
from verifier.training import META_SETS, collect_features, feature_array, sample_examples
from verifier.verify import Verifier

HERE = Path(__file__).resolve().parent
BENCHMARKS = HERE.parents[1] / "benchmarks"
LENGTH = "align.log_evidence_tokens"
#: Variants: the features multiplied by the evidence length.
VARIANTS: dict[str, tuple[str, ...]] = {
    "entailment": ("nli.logit_entailment",),
    "entailment, document recall": ("nli.logit_entailment", "align.doc_recall"),
    "claim, bigram, document recall": ("align.claim_recall", "align.bigram_recall",
                                       "align.doc_recall"),
    "entailment, claim, bigram, document recall": (
        "nli.logit_entailment", "align.claim_recall", "align.bigram_recall",
        "align.doc_recall"),
}


def with_products(rows: list[dict[str, Any]], names: list[str], factors: tuple[str, ...]
                  ) -> tuple[list[str], np.ndarray]:
    """The rows' ``names`` columns, then each factor times :data:`LENGTH`."""
    base = feature_array(rows, names)
    extra = feature_array(rows, [*factors, LENGTH])
    products = extra[:, :-1] * extra[:, -1:]
    return [*names, *(f"x.{f}_x_length" for f in factors)], np.hstack([base, products])


def eval_scores(model: StatusClassifier, evals: dict[str, list[dict[str, Any]]],
                names: list[str], factors: tuple[str, ...]) -> dict[str, Any]:
    """Mean macro-F1 over the eval sets and the sets whose ECE exceeds 0.05."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    from bench_verifier import collapse, confidences, ece, gold_statuses
    from sklearn.metrics import f1_score

    from verifier.meta import STATUSES

    f1s, over = {}, []
    for name, rows in evals.items():
        gold, three = gold_statuses(rows)
        X = with_products(rows, names, factors)[1]
        pred = collapse(model.predict(X).astype(object), three)
        f1s[name] = round(100 * f1_score(gold, pred, labels=sorted(set(gold.tolist())),
                                         average="macro", zero_division=0), 1)
        p = model.predict_proba(X)[:, [list(model.classes_).index(s) for s in STATUSES]]
        top, conf = confidences(p, three)
        if ece(conf, (top == gold).astype(float)) > 0.05:
            over.append(name)
    return {"mean_macro_f1": round(float(np.mean(list(f1s.values()))), 2), "macro_f1": f1s,
            "sets_over_ece_0.05": over}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, required=True, help="train_meta.py's cache folder")
    ap.add_argument("--eval-cache", type=Path, default=None,
                    help="bench_verifier.py's cache folder (adds the eval table's figures)")
    ap.add_argument("--out", type=Path, default=HERE / "interaction_sweep.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    verifier = Verifier(meta=None, alignment_classifier=None)
    rows, examples, y, groups, folds = recipe_rows(verifier, args.cache)
    evals = {} if args.eval_cache is None else {
        name: collect_features(verifier, sample_examples(name, "eval", 600),
                               cache=args.eval_cache / "eval.jsonl") for name in META_SETS}
    params = {"C": RECIPE["C"], "calibration": RECIPE["calibration"], "cv": 5,
              "refute_estimator": RECIPE["refute_estimator"]}
    names = features_for(GROUPS["ensemble"], rows)
    out: dict[str, Any] = {}
    ref = None
    for variant, factors in {"shipped features": (), **VARIANTS}.items():
        cols, X = with_products(rows, names, factors)
        cv, per_fold = cv_folds(cols, X, y, groups, folds, RECIPE["weighting"], **params)
        loso = loso_macro_f1(cols, X, y, groups, RECIPE["weighting"], **params)
        rec: dict[str, Any] = {"cv_macro_f1": cv["mean"],
                               "loso_labelled_sets": loso["mean_labelled_sets"]}
        if ref is None:
            ref = per_fold
        else:
            lead, se = paired_lead(per_fold, ref)
            rec["cv_lead"], rec["cv_lead_se"] = round(lead, 2), round(se, 2)
        if evals:
            model = StatusClassifier(cols, **params).fit(
                X, y, groups=groups, sample_weight=_weights(groups, RECIPE["weighting"]))
            rec["eval"] = eval_scores(model, evals, names, factors)
        out[variant] = rec
        print(f"{variant:45s} CV {rec['cv_macro_f1']:.2f}"
              + (f" lead {rec['cv_lead']:+.2f} (SE {rec['cv_lead_se']:.2f})"
                 if "cv_lead" in rec else "")
              + f"  leave-one-set-out {rec['loso_labelled_sets']:.2f}"
              + (f"  eval {rec['eval']['mean_macro_f1']:.2f}, ECE > 0.05 on "
                 f"{len(rec['eval']['sets_over_ece_0.05'])} sets" if "eval" in rec else ""),
              flush=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
