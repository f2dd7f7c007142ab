"""Rank NLI checkpoints on train rows that none of them trained on (a dev comparison).

For each set the meta-classifiers are fitted on, the ``train`` examples
:func:`verifier.training.nli_holdout` keeps out of the NLI training data
(``prepare_nli_data.py --meta-holdout``), a seeded sample of ``--per-set`` where there are
more (:func:`verifier.training.sample_examples`, as ``train_meta.py --nli-holdout``
samples). Each model scores ``(evidence, claim)`` as :class:`verifier.NLIDetector` feeds the
verifier (chunked evidence, bf16 on this CPU); the figure is the AUROC of ``p(entailment) -
p(contradiction)`` for supported against the rest (refuted, not supported, not enough info),
as the verifier's first stage splits them. No eval split is read, so the result may choose a
checkpoint.

    python models/recipes/compare_holdout.py --models embedded DIR [DIR ...] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

import numpy as np

from verifier.datasets import SUPPORTS, Example
from verifier.nli import NLIDetector
from verifier.training import META_SETS, nli_holdout, sample_examples

logger = logging.getLogger("compare_holdout")


def auroc(detector: NLIDetector, rows: list[Example]) -> float:
    """AUROC of entailment minus contradiction, supported rows against the rest."""
    from sklearn.metrics import roc_auc_score

    labels = list(detector.labels)
    p = detector.predict([(e.evidence_text, e.claim) for e in rows])
    score = p[:, labels.index("entailment")] - p[:, labels.index("contradiction")]
    return float(roc_auc_score([e.label == SUPPORTS for e in rows], score))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", required=True,
                    help="'embedded' or a model folder / Hugging Face id, each")
    ap.add_argument("--per-set", type=int, default=1500, help="rows per set at most (0: all)")
    ap.add_argument("--out", type=Path, default=None, help="write the table as JSON here")
    args = ap.parse_args()
    if args.per_set < 0:
        ap.error(f"--per-set must be >= 0, got {args.per_set}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    rows = {name: sample_examples(name, "train", args.per_set or None, where=nli_holdout)
            for name in META_SETS}
    table: dict[str, dict[str, float]] = {}
    for model in args.models:
        detector = NLIDetector(None if model == "embedded" else model)
        scores = {}
        for name, ex in rows.items():
            t0 = time.perf_counter()
            scores[name] = round(100 * auroc(detector, ex), 2)
            logger.info("%s %s: %d rows, AUROC %.2f (%.0f s)", model, name, len(ex),
                        scores[name], time.perf_counter() - t0)
        scores["mean"] = round(float(np.mean(list(scores.values()))), 2)
        table[model] = scores
    width = max(len(m) for m in table)
    print(f"{'model':<{width}} " + " ".join(f"{s:>9}" for s in [*META_SETS, "mean"]))
    for model, scores in table.items():
        print(f"{model:<{width}} " + " ".join(f"{scores[s]:>9.2f}" for s in [*META_SETS, "mean"]))
    if args.out:
        args.out.write_text(json.dumps({"rows": {n: len(r) for n, r in rows.items()},
                                        "auroc": table}, indent=1) + "\n")


if __name__ == "__main__":
    main()
