"""Re-check ``train_meta.py``'s options by its criterion, folds grouped by evidence.

The ensemble's options (``--C``, ``--calibration``, ``--weighting``, ``--limit``) were chosen
when the cross-validation folds still split rows that share evidence. This fits the ensemble
for every combination on the same train rows and prints its macro-F1 per training set,
5-fold cross-validated with folds grouped by evidence (``verifier.training.fold_of``; the
mean over sets as in ``train_meta.py``), with the standard error over the five folds. Eval
splits are never read.

    python models/recipes/sweep_meta.py [--cache DIR] [--limits 800 0]

``--cache``: ``train_meta.py``'s feature cache folder (with ``--limits 0`` it needs every
train row: ~25 minutes on a 2-core CPU where they are missing). Writes
``models/recipes/meta_sweep.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import time
from pathlib import Path

import numpy as np
from train_meta import GROUPS, _set_macro_f1, _weights, usable

from verifier.meta import StatusClassifier
from verifier.training import META_SETS, collect_features, feature_array, fold_of, sample_examples
from verifier.verify import Verifier

logger = logging.getLogger("sweep_meta")
HERE = Path(__file__).resolve().parent
#: The shipped recipe (``train_meta.py``'s defaults).
SHIPPED = {"limit": 800, "C": 0.1, "calibration": "sigmoid", "weighting": "balanced"}
GRID = {"C": (0.01, 0.03, 0.1, 0.3, 1.0), "calibration": ("sigmoid", "isotonic"),
        "weighting": ("balanced", "none")}


def fold_scores(names: list[str], X: np.ndarray, y: np.ndarray, groups: np.ndarray,
                folds: np.ndarray, weighting: str, **params: object
                ) -> tuple[float, np.ndarray]:
    """``train_meta.cv_macro_f1``'s mean (per set, folds weighted by rows; mean over sets)
    and each fold's mean over sets, shape ``(folds,)``, for its standard error."""
    sets = list(dict.fromkeys(groups.tolist()))
    f1 = np.full((len(np.unique(folds)), len(sets)), np.nan)
    n = np.zeros_like(f1)
    for i, k in enumerate(np.unique(folds)):
        test = folds == k
        model = StatusClassifier(names, **params).fit(
            X[~test], y[~test], groups=groups[~test],
            sample_weight=_weights(groups[~test], weighting))
        for j, g in enumerate(sets):
            m = test & (groups == g)
            if m.any():
                f1[i, j], n[i, j] = _set_macro_f1(model, X[m], y[m]), m.sum()
    per_set = [np.average(f1[n[:, j] > 0, j], weights=n[n[:, j] > 0, j])
               for j in range(len(sets))]
    return float(np.mean(per_set)), np.nanmean(f1, axis=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--cache", type=Path, default=None, help="train_meta.py's --cache folder")
    ap.add_argument("--limits", type=int, nargs="+", default=[800],
                    help="rows per data set to try (0: all)")
    ap.add_argument("--out", type=Path, default=HERE / "meta_sweep.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    t0 = time.perf_counter()
    verifier = Verifier(meta=None, alignment_classifier=None)
    runs = []
    for limit in args.limits:
        rows, examples = [], []
        for name in META_SETS:
            ex = sample_examples(name, "train", limit or None)
            rows += collect_features(verifier, ex,
                                     cache=args.cache / "train.jsonl" if args.cache else None)
            examples += ex
        y = np.array([r["status"] for r in rows], dtype=object)
        groups = np.array([r["dataset"] for r in rows], dtype=object)
        folds = np.array([fold_of(e) for e in examples])
        names = usable(GROUPS["ensemble"], feature_array(rows, GROUPS["ensemble"]))
        X = feature_array(rows, names)
        for C, cal, weighting in itertools.product(*GRID.values()):
            cv, s = fold_scores(names, X, y, groups, folds, weighting, C=C, calibration=cal,
                                cv=5)
            run = {"limit": limit, "C": C, "calibration": cal, "weighting": weighting,
                   "rows": len(rows), "cv_macro_f1": round(cv, 2),
                   "fold_se": round(float(s.std(ddof=1) / np.sqrt(len(s))), 2),
                   "folds": np.round(s, 2).tolist()}
            runs.append(run)
            logger.info("limit %s C %s %s %s: %.2f +- %.2f", limit or "all", C, cal, weighting,
                        run["cv_macro_f1"], run["fold_se"])
    best = max(runs, key=lambda r: r["cv_macro_f1"])
    shipped = next((r for r in runs if all(r[k] == v for k, v in SHIPPED.items())), None)
    print(f"{len(runs)} settings: CV macro-F1 {min(r['cv_macro_f1'] for r in runs):.2f} to "
          f"{best['cv_macro_f1']:.2f} (best: {', '.join(f'{k}={best[k]}' for k in SHIPPED)}, "
          f"fold SE {best['fold_se']:.2f})")
    if shipped is not None:
        diff = np.asarray(best["folds"]) - np.asarray(shipped["folds"])
        print(f"shipped ({', '.join(f'{k}={v}' for k, v in SHIPPED.items())}): "
              f"{shipped['cv_macro_f1']:.2f}; best - shipped per fold: {np.round(diff, 2)} "
              f"(mean {diff.mean():+.2f}, SE {diff.std(ddof=1) / np.sqrt(len(diff)):.2f})")
    args.out.write_text(json.dumps({"criterion": "cv_macro_f1 (train splits, folds grouped by "
                                    "evidence, mean over sets)", "shipped": SHIPPED,
                                    "runs": runs, "seconds": round(time.perf_counter() - t0)},
                                   indent=1) + "\n")
    logger.info("wrote %s", args.out)


if __name__ == "__main__":
    main()
