"""Tune the NLI model's chunk size (premise tokens per chunk) on long-document train splits.

For each candidate ``chunk_tokens`` the embedded NLI detector scores a seeded sample of the
*train* splits of SummEdits and FRANK (their evaluation splits are never read; WiCE has no
train split here), and the AUROC of ``p(entailment) - p(contradiction)`` for "supported" is
printed and written as JSON. The winner (best mean AUROC) is the value to store as
``chunk_tokens`` in the model's ``config.json``.

    python models/recipes/tune_chunks.py [--rows 200] [--values 48,96,128,160,full] \
        [--out models/nli-minilm-l6/chunk_tuning.json]
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import time
from pathlib import Path
from typing import Literal

import numpy as np
from sklearn.metrics import roc_auc_score

from verifier.datasets import SUPPORTS, load_preset
from verifier.nli import NLIDetector

logger = logging.getLogger("tune_chunks")
SETS = ("summedits", "frank")


def _value(text: str) -> int | Literal["window"]:
    return "window" if text == "full" else int(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200, help="train rows per data set")
    ap.add_argument("--values", default="48,96,128,160,full",
                    help="comma-separated chunk_tokens values; 'full' fills the window")
    ap.add_argument("--model", default=None, help="NLI model (default: the embedded one)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    values = [v for v in args.values.split(",") if v]
    data = {}
    for name in SETS:
        train = load_preset(name, "train")
        ex = random.Random(0).sample(train, min(args.rows, len(train)))
        data[name] = (np.array([e.label == SUPPORTS for e in ex]),
                      [(e.evidence_text, e.claim) for e in ex])
    results: dict[str, dict[str, dict[str, float]]] = {}
    for v in values:
        det = NLIDetector(args.model, chunk_tokens=_value(v))  # one model load per value
        for name, (gold, pairs) in data.items():
            t0 = time.perf_counter()
            scores = det.predict_chunks(pairs)
            secs = time.perf_counter() - t0
            p = np.stack([s.probabilities for s in scores])
            auroc = roc_auc_score(gold, p[:, 0] - p[:, 2])
            row = {"n": len(pairs), "auroc": round(float(auroc), 4),
                   "mean_chunks": round(float(np.mean([len(s.chunk_spans) for s in scores])), 2),
                   "seconds": round(secs, 1)}
            results.setdefault(v, {})[name] = row
            logger.info("%-10s chunk_tokens=%-5s AUROC %.3f  chunks/pair %.1f  %.0fs", name, v,
                        row["auroc"], row["mean_chunks"], secs)
    means = {v: round(float(np.mean([r["auroc"] for r in rows.values()])), 4)
             for v, rows in results.items()}
    best = max(means, key=lambda k: means[k])
    for v, m in means.items():
        logger.info("chunk_tokens=%-5s mean AUROC %.3f%s", v, m, "  <- best" if v == best else "")
    if args.out is not None:
        args.out.write_text(json.dumps({"rows_per_set": args.rows, "sets": list(SETS),
                                        "split": "train", "results": results,
                                        "mean_auroc": means, "best": best}, indent=2) + "\n",
                            encoding="utf-8")
        logger.info("wrote %s", args.out)


if __name__ == "__main__":
    main()
