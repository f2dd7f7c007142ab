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

With ``--pipeline``, the sampled FEVER claims are also checked as a draft's claims are
(:func:`verifier.training.pipeline_features`, as ``train_meta.py`` builds its pipeline rows:
the pairer's sentences from the claim's own document among four others', each read in its
passage, the deciding unit's row): the AUROC of entailment minus contradiction, SUPPORTS
against REFUTES, with the own document given (what ``benchmarks/bench_mitigation.py`` needs
of the model), and the share of claims given only other claims' documents whose deciding row
reads as a contradiction (an unrelated sentence is no contradiction). Not in the mean.

    python models/recipes/compare_holdout.py --models embedded DIR [DIR ...] [--pipeline] \
        [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from verifier.datasets import SUPPORTS, Example
from verifier.nli import NLIDetector
from verifier.training import META_SETS, nli_holdout, pipeline_features, sample_examples
from verifier.verify import Verifier

logger = logging.getLogger("compare_holdout")


def auroc(detector: NLIDetector, rows: list[Example]) -> float:
    """AUROC of entailment minus contradiction, supported rows against the rest."""
    from sklearn.metrics import roc_auc_score

    labels = list(detector.labels)
    p = detector.predict([(e.evidence_text, e.claim) for e in rows])
    score = p[:, labels.index("entailment")] - p[:, labels.index("contradiction")]
    return float(roc_auc_score([e.label == SUPPORTS for e in rows], score))


def pipeline_scores(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The ``--pipeline`` figures of :func:`verifier.training.pipeline_features` rows.

    ``pipeline_auroc``: AUROC (%) of ``nli.entailment - nli.contradiction`` for SUPPORTS
    against REFUTES over the rows checked with their own document; ``unrelated_contradiction``:
    the share (%) of rows checked without it whose deciding row has contradiction as its most
    probable label; ``rows_with_own`` and ``rows_others_only``: how many rows each figure
    reads. A claim for which the pairer finds no evidence sentence has no row
    (``pipeline_features``): the verifier decides it without reading the NLI model.
    """
    from sklearn.metrics import roc_auc_score

    own = [r["features"] | {"label": r["label"]} for r in rows if r["meta"]["case"] == "with"]
    other = [r["features"] for r in rows if r["meta"]["case"] == "without"]
    if not own or not other:
        raise ValueError(f"rows must hold rows checked with and without their own document, "
                         f"got {len(own)} with and {len(other)} without")
    auc = roc_auc_score([f["label"] == SUPPORTS for f in own],
                        [f["nli.entailment"] - f["nli.contradiction"] for f in own])
    con = np.mean([f["nli.contradiction"] > max(f["nli.entailment"], f["nli.neutral"])
                   for f in other])
    return {"pipeline_auroc": round(100 * float(auc), 2),
            "unrelated_contradiction": round(100 * float(con), 2),
            "rows_with_own": len(own), "rows_others_only": len(other)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", required=True,
                    help="'embedded' or a model folder / Hugging Face id, each")
    ap.add_argument("--per-set", type=int, default=1500, help="rows per set at most (0: all)")
    ap.add_argument("--pipeline", action="store_true",
                    help="also check the FEVER claims as a draft's claims are (see above)")
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
        if args.pipeline:
            t0 = time.perf_counter()
            verifier = Verifier(detector, meta=None, alignment_classifier=None)
            prow, _ = pipeline_features(verifier, rows["fever"])
            scores.update(pipeline_scores(prow))
            logger.info("%s fever pipeline: %d rows with the own document, AUROC %.2f; %d "
                        "without, %.2f %% read as contradiction (%.0f s)", model,
                        scores["rows_with_own"], scores["pipeline_auroc"],
                        scores["rows_others_only"], scores["unrelated_contradiction"],
                        time.perf_counter() - t0)
        table[model] = scores
    width = max(len(m) for m in table)
    cols = [*META_SETS, "mean"] + (["pipeline_auroc", "unrelated_contradiction"]
                                   if args.pipeline else [])
    print(f"{'model':<{width}} " + " ".join(f"{s:>9}" for s in cols))
    for model, scores in table.items():
        print(f"{model:<{width}} " + " ".join(f"{scores[s]:>9.2f}" for s in cols))
    if args.out:
        args.out.write_text(json.dumps({"rows": {n: len(r) for n, r in rows.items()},
                                        "auroc": table}, indent=1) + "\n")


if __name__ == "__main__":
    main()
