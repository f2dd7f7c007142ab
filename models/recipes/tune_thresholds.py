"""Choose the NLI model's decision cuts on p(SUPPORTS) from the train splits (never eval).

``verifier eval`` scores 2-class data sets by ``p(SUPPORTS)`` (``e / (e + c)`` for
SUPPORTS-vs-REFUTES sets, ``e`` for supported-vs-not; see
:func:`verifier.batch.probabilities_for_scheme`). A cut of 0.5 is rarely the best one, and the
best one differs between data sets, so this recipe picks, on the **train** splits of the
dev-visible sets (``verifier.datasets``; their eval splits are never read):

- per scheme, the cut that maximises the mean balanced accuracy over the scheme's sets (the
  default for any data set of that scheme, WiCE and your own files included);
- per preset, the cut that maximises that preset's own balanced accuracy (used by
  ``verifier eval --preset NAME``).

Ties go to the cut nearest 0.5. The result is written next to the model as
``thresholds.json``, which :func:`verifier.batch.stored_threshold` reads.

    python models/recipes/tune_thresholds.py [--model DIR] [--limit 0]
        [--out models/nli-minilm-l6/thresholds.json]
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import balanced_accuracy_score

from verifier.batch import (
    PRESETS,
    THRESHOLDS_FILE,
    THRESHOLDS_FORMAT,
    gold_for_scheme,
    probabilities_for_scheme,
)
from verifier.datasets import SUPPORTS, load_preset
from verifier.embedded import embedded_model_dir
from verifier.nli import NLIDetector

logger = logging.getLogger("tune_thresholds")
#: Presets whose train split (``verifier.datasets``) tunes the cuts, by scheme.
SETS: dict[str, tuple[str, ...]] = {
    "supports-refutes": ("fever", "fever-sym", "covidfact"),
    "supported-not": ("scifact", "summedits", "frank"),
}
#: Sets whose train split the embedded model (v0.2) was trained on: with gold labels (FEVER,
#: COVID-Fact) or, unlabelled, on the teacher's soft labels (SciFact). Their cuts come from
#: rows the model has seen; recorded in the output (``in_nli_training``).
NLI_TRAINED = {"fever": "gold labels", "covidfact": "gold labels",
               "scifact": "teacher soft labels (distillation)"}
GRID = np.round(np.arange(0.01, 0.991, 0.01), 2)


def bacc_curve(score: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """Balanced accuracy of ``score >= t`` for every ``t`` in :data:`GRID`."""
    return np.array([balanced_accuracy_score(positive, score >= t) for t in GRID])


def best_cut(curve: np.ndarray) -> float:
    """The grid cut with the highest value of ``curve``; ties go to the cut nearest 0.5."""
    best = curve.max()
    cands = GRID[curve >= best - 1e-12]
    return float(cands[np.argmin(np.abs(cands - 0.5))])


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--model", default=None, help="NLI model folder (default: embedded)")
    ap.add_argument("--limit", type=int, default=0,
                    help="seeded random train rows per set (0: all)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"default: MODEL/{THRESHOLDS_FILE}")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    model_dir = Path(args.model) if args.model else embedded_model_dir()
    out = args.out or model_dir / THRESHOLDS_FILE
    det = NLIDetector(str(model_dir))
    presets: dict[str, dict] = {}
    schemes: dict[str, dict] = {}
    for scheme, names in SETS.items():
        curves = []
        for name in names:
            if PRESETS[name].scheme != scheme:
                raise ValueError(f"preset {name!r} has scheme {PRESETS[name].scheme!r}, "
                                 f"not {scheme!r}")
            ex = load_preset(name, "train")
            if args.limit and args.limit < len(ex):
                ex = random.Random(f"{name}-thresholds").sample(ex, args.limit)
            t0 = time.perf_counter()
            probs = det.predict([(e.evidence_text, e.claim) for e in ex])
            score = probabilities_for_scheme(probs, scheme)[:, 0]
            positive = np.array([gold_for_scheme(e.label, scheme) == SUPPORTS
                                 for e in ex])
            curve = bacc_curve(score, positive)
            curves.append(curve)
            cut = best_cut(curve)
            at_half = float(curve[np.argmin(np.abs(GRID - 0.5))])
            presets[name] = {"threshold": cut, "scheme": scheme, "split": "train", "n": len(ex),
                             "positive_share": round(float(positive.mean()), 4),
                             "balanced_accuracy_at_0.5": round(at_half, 4),
                             "balanced_accuracy": round(float(curve.max()), 4),
                             "in_nli_training": NLI_TRAINED.get(name, False)}
            logger.info("%-10s %-16s n=%5d  BAcc %.3f at 0.5 -> %.3f at %.2f  (%.0fs)", name,
                        scheme, len(ex), at_half, curve.max(), cut, time.perf_counter() - t0)
        mean = np.mean(curves, axis=0)
        cut = best_cut(mean)
        schemes[scheme] = {"threshold": cut, "sets": list(names),
                           "mean_balanced_accuracy_at_0.5":
                               round(float(mean[np.argmin(np.abs(GRID - 0.5))]), 4),
                           "mean_balanced_accuracy": round(float(mean.max()), 4)}
        logger.info("%-16s default cut %.2f: mean BAcc %.3f (at 0.5: %.3f)", scheme, cut,
                    mean.max(), schemes[scheme]["mean_balanced_accuracy_at_0.5"])
    doc = {"format": THRESHOLDS_FORMAT,
           "score": "p(SUPPORTS) of verifier.batch.probabilities_for_scheme: e / (e + c) for "
                    "supports-refutes, e for supported-not; SUPPORTS iff score >= threshold",
           "criterion": "balanced accuracy on the train splits (verifier.datasets); the "
                        "scheme's cut maximises the mean over its sets",
           "model_config_chunk_tokens": det.resolved_chunk_tokens,
           "limit": args.limit, "schemes": schemes, "presets": presets}
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    logger.info("wrote %s", out)


if __name__ == "__main__":
    main()
