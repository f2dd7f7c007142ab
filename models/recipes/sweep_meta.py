"""Re-check ``train_meta.py``'s options by its criterion, folds grouped by evidence.

The ensemble's options (``--C``, ``--calibration``, ``--weighting``, ``--limit``) were chosen
when the cross-validation folds still split rows that share evidence. This fits the ensemble
for every combination on the rows ``train_meta.py`` fits it on (the labelled sets' and the
pipeline rows) and prints its macro-F1 per training set, 5-fold cross-validated with folds
grouped by evidence (``verifier.training.fold_of``; the mean over sets as in
``train_meta.py``), with the standard error over the five folds, and, for the best setting
and each setting one option away from the recipe, its difference from the recipe fold by
fold (mean and standard error). Each stage's estimator is fixed per sweep: stage one's
(``--support-estimator``) by default boosted trees, what ``train_meta.py``'s ``auto`` picks
for the ensemble (``C`` then sets stage two's regularisation only); stage two's
(``--refute-estimator``) by default the recipe's, logistic, as the shipped classifiers
(``train_meta.py --refute-estimator auto`` chooses it by the same CV and logs both). Eval
splits are never read. The output in this folder (``meta_sweep.json``) is ``--limits 800``
with the defaults (boosted stage one); the 40-setting sweep with a logistic stage one before
it: ``git show 8392581:models/recipes/meta_sweep.json``.

    python models/recipes/sweep_meta.py [--cache DIR] [--limits 800 0]
        [--support-estimator boosting|logistic] [--refute-estimator logistic|boosting]

``--cache``: ``train_meta.py``'s feature cache folder (with ``--limits 0`` it needs every
labelled train row: ~25 minutes on a 2-core CPU where they are missing). Writes
``models/recipes/meta_sweep.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
from train_meta import (
    GROUPS,
    RECIPE,
    cv_folds,
    features_for,
    paired_lead,
    row_labels,
    training_rows,
)

from verifier.meta import ESTIMATORS
from verifier.training import feature_array
from verifier.verify import Verifier

logger = logging.getLogger("sweep_meta")
HERE = Path(__file__).resolve().parent
GRID: dict[str, tuple[Any, ...]] = {
    "C": (0.01, 0.03, 0.1, 0.3, 1.0), "calibration": ("sigmoid", "isotonic"),
    "weighting": ("balanced", "none")}
#: The options a run is compared on (stage two's estimator is fixed per sweep).
SWEPT = ("limit", *GRID)


def _name(run: dict) -> str:
    return ", ".join(f"{k}={run[k]}" for k in SWEPT)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--cache", type=Path, default=None, help="train_meta.py's --cache folder")
    ap.add_argument("--limits", type=int, nargs="+", default=[800],
                    help="rows per data set to try (0: all)")
    ap.add_argument("--out", type=Path, default=HERE / "meta_sweep.json")
    ap.add_argument("--support-estimator", default="boosting", choices=ESTIMATORS,
                    help="stage one's estimator in every run (default: boosting, which "
                    "train_meta.py's auto picks for the shipped ensemble)")
    ap.add_argument("--refute-estimator", default=RECIPE["refute_estimator"],
                    choices=ESTIMATORS,
                    help="stage two's estimator in every run (default: the recipe's, which "
                    "the shipped classifiers use)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    t0 = time.perf_counter()
    verifier = Verifier(meta=None, alignment_classifier=None)
    runs = []
    for limit in args.limits:
        rows, examples = training_rows(verifier, limit=limit, cache=args.cache)
        y, groups, folds = row_labels(rows, examples)
        names = features_for(GROUPS["ensemble"], rows)
        X = feature_array(rows, names)
        for C, cal, weighting in itertools.product(*GRID.values()):
            cv, s = cv_folds(names, X, y, groups, folds, weighting, C=C, calibration=cal, cv=5,
                             estimator=args.support_estimator,
                             refute_estimator=args.refute_estimator)
            run = {"limit": limit, "C": C, "calibration": cal, "weighting": weighting,
                   "support_estimator": args.support_estimator,
                   "refute_estimator": args.refute_estimator,
                   "rows": len(rows), "cv_macro_f1": cv["mean"],
                   "fold_se": round(float(s.std(ddof=1) / np.sqrt(len(s))), 2),
                   "folds": np.round(s, 2).tolist()}
            runs.append(run)
            logger.info("limit %s C %s %s %s: %.2f +- %.2f", limit or "all", C, cal, weighting,
                        run["cv_macro_f1"], run["fold_se"])
    best = max(runs, key=lambda r: r["cv_macro_f1"])
    print(f"{len(runs)} settings: CV macro-F1 {min(r['cv_macro_f1'] for r in runs):.2f} to "
          f"{best['cv_macro_f1']:.2f} (best: {_name(best)}, fold SE {best['fold_se']:.2f})")
    recipe = next((r for r in runs if all(r[k] == RECIPE[k] for k in SWEPT)), None)
    compared = []
    if recipe is not None:
        print(f"recipe ({_name(recipe)}): {recipe['cv_macro_f1']:.2f}; per fold, a setting "
              "minus the recipe:")
        near = [r for r in runs if sum(r[k] != RECIPE[k] for k in SWEPT) == 1]
        for r in [best, *near] if best is not recipe else near:
            diff = np.asarray(r["folds"]) - np.asarray(recipe["folds"])
            lead, se = paired_lead(r["folds"], recipe["folds"])
            compared.append({**{k: r[k] for k in SWEPT}, "mean": round(lead, 2),
                             "se": round(se, 2), "folds": np.round(diff, 2).tolist()})
            print(f"  {_name(r)}: {lead:+.2f} (SE {se:.2f}; {np.round(diff, 2)})")
    args.out.write_text(json.dumps({"criterion": "cv_macro_f1 (train splits, folds grouped by "
                                    "evidence, mean over sets)", "recipe": RECIPE,
                                    "runs": runs, "minus_recipe": compared,
                                    "seconds": round(time.perf_counter() - t0)},
                                   indent=1) + "\n")
    logger.info("wrote %s", args.out)


if __name__ == "__main__":
    main()
