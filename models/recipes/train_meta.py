"""Fit the shipped meta-classifiers (``models/meta/ensemble.json`` and ``alignment.json``).

Features come from :meth:`verifier.Verifier.verify_pairs` with the meta-classifiers off
(embedded NLI model, embedded MiniLM for the cosines), on the ``train`` splits of the data
sets in :data:`verifier.training.META_SETS` (never their ``eval`` splits, which
``benchmarks/bench_verifier.py`` reports). Each set is capped at ``--limit`` seeded random
rows so that no set dominates.

    python models/recipes/train_meta.py [--limit 800] [--cache DIR] [--out models/meta]

Writes ``ensemble.json`` (all detector features), ``alignment.json`` (alignment and check
features only), ``nli_only.json`` (NLI features only: the benchmark's calibrated-NLI row),
``no_alignment.json`` and ``no_uncertainty.json`` (ablations) and ``training_log.json``
(rows per set, features used, support-stage coefficients).
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from collections import Counter
from pathlib import Path

import numpy as np

from verifier.meta import StatusClassifier
from verifier.training import META_SETS, collect_features, feature_array, sample_examples
from verifier.verify import Verifier, all_features

logger = logging.getLogger("train_meta")
HERE = Path(__file__).resolve().parent

def _group(*prefixes: str, exclude: tuple[str, ...] = ()) -> tuple[str, ...]:
    return tuple(f for f in all_features()
                 if f.startswith(prefixes) and not f.startswith(exclude))


#: Features by detector: NLI (probabilities and their log-odds), evidence alignment (with
#: the deterministic checks), uncertainty; ``x.*`` interactions need NLI and alignment both.
NLI_GROUP = _group("nli.")
ALIGN_GROUP = _group("align.", "checks.", "match.")
UNC_GROUP = _group("unc.")
#: The shipped classifiers: the ensemble, the alignment classifier, and the ablations the
#: benchmark reports (the ensemble without one detector; without NLI it is the alignment
#: classifier, since the uncertainty features available on labelled pairs come from NLI).
GROUPS: dict[str, tuple[str, ...]] = {
    "ensemble": all_features(),
    "alignment": ALIGN_GROUP,
    "nli_only": NLI_GROUP,
    "no_alignment": NLI_GROUP + UNC_GROUP,
    "no_uncertainty": tuple(f for f in all_features() if f not in UNC_GROUP),
}


def usable(names: tuple[str, ...], X: np.ndarray) -> list[str]:
    """Names whose column is not missing everywhere and not constant."""
    keep = []
    for j, n in enumerate(names):
        col = X[:, j]
        fin = col[np.isfinite(col)]
        if fin.size and (np.ptp(fin) > 0 or fin.size < len(col)):
            keep.append(n)
    return keep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=800, help="rows per data set (0: all)")
    ap.add_argument("--cache", type=Path, default=None,
                    help="folder for the feature cache (train.jsonl); resumes")
    ap.add_argument("--out", type=Path, default=HERE.parent / "meta")
    ap.add_argument("--C", type=float, default=0.1, help="inverse regularisation")
    ap.add_argument("--calibration", default="isotonic", choices=["isotonic", "sigmoid"])
    ap.add_argument("--cv", type=int, default=5, help="folds for the calibration data")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    t0 = time.perf_counter()
    verifier = Verifier(meta=None, alignment_classifier=None)
    rows = []
    for name in META_SETS:
        ex = sample_examples(name, "train", args.limit or None)
        cache = args.cache / "train.jsonl" if args.cache else None
        if cache:
            cache.parent.mkdir(parents=True, exist_ok=True)
        rows += collect_features(verifier, ex, cache=cache)
        logger.info("%s: %d rows", name, len(ex))
    y = np.array([r["status"] for r in rows], dtype=object)
    args.out.mkdir(parents=True, exist_ok=True)
    log = {"limit": args.limit, "rows": len(rows),
           "rows_per_set": dict(Counter(r["dataset"] for r in rows)),
           "labels": dict(Counter(y.tolist())), "C": args.C,
           "calibration": args.calibration, "cv": args.cv,
           "classifiers": {}}
    for model_name, group in GROUPS.items():
        names = usable(group, feature_array(rows, group))
        X = feature_array(rows, names)
        model = StatusClassifier(names, C=args.C, calibration=args.calibration,
                                 cv=args.cv).fit(X, y)
        model.save(args.out / f"{model_name}.json")
        sup = model.support_
        coefs = dict(zip(sup.feature_names_in_.tolist(),
                         np.round(sup.coef_[0][: len(names)], 4).tolist(), strict=True))
        log["classifiers"][model_name] = {"features": names,
                                          "support_stage_coefficients": coefs}
        logger.info("%s: %d features", model_name, len(names))
    log["seconds"] = round(time.perf_counter() - t0, 1)
    (args.out / "training_log.json").write_text(json.dumps(log, indent=1) + "\n")
    logger.info("wrote %s in %.0fs", args.out, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
