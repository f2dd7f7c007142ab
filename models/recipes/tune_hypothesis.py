"""Choose how the NLI model reads a hypothesis of several sentences, on train splits only.

Summaries (SummEdits, FRANK) are claims of several sentences; the model was trained on
one-sentence hypotheses. For every row of the *train* splits of SummEdits and FRANK (their
evaluation splits are never read; WiCE has no train split here and its claims are single
sentences) the embedded NLI detector scores

- ``whole``: the hypothesis at once (:meth:`verifier.nli.NLIDetector.predict_chunks`);
- each hypothesis sentence (:meth:`verifier.nli.NLIDetector.predict_sentences`), the pair's
  p(supported) then being the ``mean`` over sentences of each sentence's row (the shipped
  :func:`verifier.nli.aggregate_sentences`), the ``min`` over sentences (the weakest
  sentence), or the mean over sentences of the highest p(entailment) of any chunk
  (``mean_max_chunk``, which ignores the contradiction rule of
  :func:`verifier.nli.aggregate_chunks`);

and prints the AUROC of p(entailment) for "supported" of each, with the time taken. The
result is written as JSON; ``hypothesis_sentences`` in the model's ``config.json`` is set to
``true`` when ``mean`` beats ``whole`` on the mean AUROC.

    python models/recipes/tune_hypothesis.py [--rows 0] [--model DIR]
        [--out models/nli-minilm-l6/hypothesis_tuning.json]
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from verifier.datasets import SUPPORTS, load_preset
from verifier.embedded import embedded_model_dir
from verifier.nli import NLIDetector

logger = logging.getLogger("tune_hypothesis")
SETS = ("frank", "summedits")
RULES = ("whole", "mean", "min", "mean_max_chunk")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--rows", type=int, default=0, help="seeded train rows per set (0: all)")
    ap.add_argument("--model", default=None, help="NLI model folder (default: embedded)")
    ap.add_argument("--out", type=Path, default=None,
                    help="default: MODEL/hypothesis_tuning.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    model_dir = Path(args.model) if args.model else embedded_model_dir()
    det = NLIDetector(str(model_dir))
    results: dict[str, dict[str, float]] = {}
    for name in SETS:
        ex = load_preset(name, "train")
        if args.rows and args.rows < len(ex):
            ex = random.Random(f"{name}-hypothesis").sample(ex, args.rows)
        gold = np.array([e.label == SUPPORTS for e in ex])
        pairs = [(e.evidence_text, e.claim) for e in ex]
        t0 = time.perf_counter()
        whole = np.stack([s.probabilities for s in det.predict_chunks(pairs)])
        t_whole = time.perf_counter() - t0
        t0 = time.perf_counter()
        sent = det.predict_sentences(pairs)
        t_sent = time.perf_counter() - t0
        score = {
            "whole": whole[:, 0],
            "mean": np.array([s.probabilities[0] for s in sent]),
            "min": np.array([min(c.probabilities[0] for c in s.sentences) for s in sent]),
            "mean_max_chunk": np.array([np.mean([c.chunk_probabilities[:, 0].max()
                                                 for c in s.sentences]) for s in sent]),
        }
        res: dict[str, float] = {r: round(float(roc_auc_score(gold, score[r])), 4)
                                 for r in RULES}
        res.update(n=len(ex), multi_sentence_share=round(
            float(np.mean([len(s.sentence_spans) > 1 for s in sent])), 4),
            sentences=sum(len(s.sentence_spans) for s in sent),
            seconds_whole=round(t_whole, 1), seconds_sentences=round(t_sent, 1))
        results[name] = res
        logger.info("%-10s %s", name, json.dumps(res))
    mean = {r: round(float(np.mean([results[n][r] for n in SETS])), 4) for r in RULES}
    logger.info("mean AUROC %s", json.dumps(mean))
    doc = {"split": "train", "rows_per_set": args.rows or "all", "sets": list(SETS),
           "score": "AUROC of p(entailment) for supported", "results": results,
           "mean_auroc": mean, "hypothesis_sentences": bool(mean["mean"] > mean["whole"]),
           "chunk_tokens": det.resolved_chunk_tokens}
    out = args.out or model_dir / "hypothesis_tuning.json"
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    logger.info("wrote %s", out)


if __name__ == "__main__":
    main()
