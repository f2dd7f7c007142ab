"""Choose ``EvidencePairer``'s ``min_score``: when is a second evidence sentence unrelated?

FEVER's ``train`` split (never its ``eval`` split, which ``benchmarks/bench_mitigation.py``
reports) is cut into drafts of five claims; each claim's evidence text is one document.
The embedded pairer ranks every sentence of the five documents for every claim; the
sentences after the best one are "own" (from the claim's own evidence) or "unrelated" (from
another claim's). For each candidate cut, the share of own and of unrelated sentences that
reach it; the cut with the best balanced accuracy is chosen. The cut applies to a claim's
best sentence too, so for each cut also: the share of claims whose best sentence in their
own evidence falls under it (they would get no evidence), and of claims that, given only
the other claims' documents, still get some (they should get none). Also recorded: the share of
each kind that the embedded NLI model (reading the sentence alone) says contradicts the
claim, p(contradiction) > 0.5: why unrelated sentences must not reach the verifier.

    python models/recipes/tune_pairing.py [--out models/recipes/pairing_tuning.json]
"""

from __future__ import annotations

import argparse
import json
import logging
import random
from pathlib import Path

import numpy as np

from rag.pairing import EvidencePairer
from verifier.datasets import load_preset
from verifier.types import Claim, Evidence

logger = logging.getLogger("tune_pairing")
HERE = Path(__file__).resolve().parent
CUTS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35)


def sentence_scores(per_draft: int = 5, top_k: int = 3, seed: int = 7
                    ) -> tuple[dict[str, list[float]], dict[str, list[tuple[str, str]]]]:
    """Pairing scores of FEVER train claims' evidence sentences, by kind, and the
    (sentence, claim) pairs of the ``own`` and ``unrelated`` ones.

    ``own`` / ``unrelated``: the sentences ranked 2nd to ``top_k``-th, from the claim's own
    evidence or another claim's; ``own_best``: each claim's best sentence in its own
    evidence; ``unrelated_best``: its best one in the other claims' evidence (as if its own
    were not retrieved).
    """
    ex = load_preset("fever", "train")
    random.Random(seed).shuffle(ex)
    pairer = EvidencePairer(top_k=10_000, min_score=0.0)  # every sentence, ranked
    scores: dict[str, list[float]] = {k: [] for k in ("own", "unrelated", "own_best",
                                                      "unrelated_best")}
    pairs: dict[str, list[tuple[str, str]]] = {"own": [], "unrelated": []}
    for d in range(len(ex) // per_draft):
        items = ex[d * per_draft:(d + 1) * per_draft]
        passages = [Evidence(e.evidence_text, f"d{i}", (0, len(e.evidence_text)))
                    for i, e in enumerate(items)]
        claims = [Claim(" ".join(e.claim.split())) for e in items]
        for ci, ce in enumerate(pairer.pair(claims, passages)):
            kinds = ["own" if ev.source_id == f"d{ci}" else "unrelated" for ev in ce.evidence]
            scores["own_best"].append(ce.evidence[kinds.index("own")].score)
            scores["unrelated_best"].append(ce.evidence[kinds.index("unrelated")].score)
            for ev, kind in zip(ce.evidence[1:top_k], kinds[1:top_k], strict=True):
                scores[kind].append(ev.score)
                pairs[kind].append((ev.content, claims[ci].text))
    return scores, pairs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=HERE / "pairing_tuning.json")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from verifier.nli import NLIDetector

    scores, pairs = sentence_scores()
    own, other, own_best, other_best = (np.array(scores[k]) for k in (
        "own", "unrelated", "own_best", "unrelated_best"))
    nli = NLIDetector()
    contradicted = {k: round(float((nli.predict(v)[:, 2] > 0.5).mean()), 4)
                    for k, v in pairs.items()}
    logger.info("p(contradiction) > 0.5 for own second sentences %.3f, unrelated %.3f",
                contradicted["own"], contradicted["unrelated"])
    rows = []
    for cut in CUTS:
        own_kept, other_kept = float((own >= cut).mean()), float((other >= cut).mean())
        rows.append({"min_score": cut, "own_kept": round(own_kept, 4),
                     "unrelated_kept": round(other_kept, 4),
                     "balanced_accuracy": round((own_kept + 1 - other_kept) / 2, 4),
                     "claims_losing_own_evidence": round(float((own_best < cut).mean()), 4),
                     "claims_with_only_unrelated_evidence_kept": round(
                         float((other_best >= cut).mean()), 4)})
        logger.info("min_score %.2f: own second sentences kept %.3f, unrelated kept %.3f, "
                    "balanced accuracy %.3f; claims whose own best sentence falls under it "
                    "%.4f, claims given only other claims' documents that still get evidence "
                    "%.3f", cut, own_kept, other_kept, rows[-1]["balanced_accuracy"],
                    rows[-1]["claims_losing_own_evidence"],
                    rows[-1]["claims_with_only_unrelated_evidence_kept"])
    best = max(rows, key=lambda r: r["balanced_accuracy"])
    logger.info("chosen: min_score %.2f", best["min_score"])
    args.out.write_text(json.dumps({
        "data": "fever train split, drafts of 5 claims, top 3 sentences per claim",
        "own_sentences": int(own.size), "unrelated_sentences": int(other.size),
        "claims": int(own_best.size),
        "nli_contradiction_share": contradicted,
        "cuts": rows, "chosen": best["min_score"]}, indent=1) + "\n")


if __name__ == "__main__":
    main()
