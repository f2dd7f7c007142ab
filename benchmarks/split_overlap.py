"""How much evidence the train and eval splits share, and whether shared evidence helps.

For every preset with both splits: the share of ``eval`` rows whose evidence text is also
the evidence of a ``train`` row (COVID-Fact's counterfactual claims share their evidence
with the claim they were made from; HealthVer and SciFact reuse abstracts across their
official splits). With ``--predictions DIR`` (a ``verifier eval --preset NAME`` output
folder), the AUROC and balanced accuracy of those predictions on the eval rows with shared
and with unseen evidence, side by side: if the model had learnt the evidence, the shared rows
would score higher.

    python benchmarks/split_overlap.py [--predictions DIR --preset covidfact]
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np
from _common import write_result

from verifier.datasets import SUPPORTS, load_preset
from verifier.training import META_SETS

logger = logging.getLogger("split_overlap")


def overlap(name: str) -> tuple[float, set[str]]:
    """Share of the eval rows whose evidence a train row has; the ids of those rows."""
    seen = {e.evidence_text for e in load_preset(name, "train")}
    ev = load_preset(name, "eval")
    shared = {e.id for e in ev if e.evidence_text in seen}
    return len(shared) / max(len(ev), 1), shared


def _scores(rows: list[dict]) -> dict[str, float]:
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    y = np.array([r["gold"] == SUPPORTS for r in rows])
    p = np.array([r["probabilities"][SUPPORTS] for r in rows])
    pred = np.array([r["predicted"] == SUPPORTS for r in rows])
    out = {"n": len(rows), "bacc": round(100 * balanced_accuracy_score(y, pred), 1)}
    if 0 < y.sum() < len(y):
        out["auroc"] = round(100 * roc_auc_score(y, p), 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--predictions", type=Path, default=None,
                    help="a `verifier eval` output folder (predictions.jsonl)")
    ap.add_argument("--preset", default="covidfact", help="the preset of --predictions")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    result: dict[str, object] = {}
    shared_ids: set[str] = set()
    for name in META_SETS:
        share, ids = overlap(name)
        if name == args.preset:
            shared_ids = ids
        result[name] = {"eval_rows_with_train_evidence": round(share, 4)}
        print(f"{name:10s} eval rows whose evidence a train row has: {100 * share:5.1f} %")
    if args.predictions is not None:
        path = args.predictions / "predictions.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
        if not rows or SUPPORTS not in rows[0].get("probabilities", {}):
            raise ValueError(f"--predictions {str(args.predictions)!r}: no 2-class "
                             f"predictions with p({SUPPORTS}) in {str(path)!r}")
        split = {"shared": [r for r in rows if r["id"] in shared_ids],
                 "unseen": [r for r in rows if r["id"] not in shared_ids]}
        scores = {k: _scores(v) for k, v in split.items() if v}
        for k, v in scores.items():
            print(f"{args.preset} eval rows, {k} evidence: {v}")
        result["predictions"] = {"preset": args.preset, "folder": str(args.predictions),
                                 **scores}
    write_result("split_overlap", result)


if __name__ == "__main__":
    main()
