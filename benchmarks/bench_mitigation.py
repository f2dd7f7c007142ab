"""Mitigation on FEVER drafts with one planted false claim each.

Each draft joins four SUPPORTS claims and one REFUTES claim of FEVER dev (in random order); the
five evidence texts are the documents. Claims are the draft's sentences (the decomposer is
bypassed so that every planted claim is one claim); the verifier pairs each with evidence
sentences, decides a status, and the mitigator rewrites the draft. Printed: the share of
planted false claims the final answer no longer asserts (removed, corrected, replaced by a
warning, or hedged) and the share of true claims kept as asserted (cited or kept). A diagnostic
follows: how well the verdicts' scores rank true above planted claims (AUROC) and the best
both-sides figure any one cut on them could reach, tuned on these claims themselves (an
upper bound of what re-thresholding could do, not a setting to ship).

    python benchmarks/bench_mitigation.py [--drafts 200] [--strictness balanced] [--seed 13]
        [--context-chars 400]   # 0: evidence read inside its whole passage
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from _common import wilson_interval, write_result
from sklearn.metrics import roc_auc_score

from mitigation.mitigator import Mitigator
from rag.pairing import EvidencePairer
from verifier.datasets import REFUTES, SUPPORTS, load_preset
from verifier.types import Claim, ClaimEvidence, Evidence, Status
from verifier.verify import CONTEXT_CHARS, Verifier

NOT_ASSERTED = {"removed", "corrected", "warned", "hedged"}
ASSERTED = {"cited", "kept"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drafts", type=int, default=200)
    ap.add_argument("--true-per-draft", type=int, default=4)
    ap.add_argument("--strictness", default="balanced")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--context-chars", type=int, default=CONTEXT_CHARS,
                    help=f"Verifier(context_chars=...): characters of its passage an evidence "
                    f"sentence is read in (default {CONTEXT_CHARS}; 0: the whole passage, "
                    f"as before 2026-11-27; results then go to a file of their own)")
    args = ap.parse_args()
    context = args.context_chars or None
    verifier = Verifier(top_k_evidence=2, strictness=args.strictness, context_chars=context)
    mitigator = Mitigator(args.strictness)
    actions: dict[str, Counter] = {"planted": Counter(), "true": Counter()}
    lost_own_first = 0  # true claims not kept whose best evidence was their own document's
    overruled: list[dict[str, str]] = []  # true claims the verifier supported, not kept
    truth: list[bool] = []
    rank_scores: dict[str, list[float]] = {"ensemble p(Supported)": [],
                                           "NLI entailment - contradiction": []}
    t0 = time.perf_counter()
    for planted in planted_drafts(args.drafts, args.true_per_draft, args.seed):
        verdicts = verifier.verify_claims(list(planted.paired), passages=list(planted.passages))
        answer = mitigator.mitigate(planted.draft, verdicts, documents=planted.docs)
        for i, (true, edit, pe, v) in enumerate(zip(planted.truth, answer.edits, planted.paired,
                                                    verdicts, strict=True)):
            truth.append(true)
            rank_scores["ensemble p(Supported)"].append(v.probabilities.get("Supported", 0.0))
            rank_scores["NLI entailment - contradiction"].append(
                v.scores.get("nli.entailment", 0.0) - v.scores.get("nli.contradiction", 0.0))
            actions["true" if true else "planted"][edit.action] += 1
            if true and edit.action not in ASSERTED:
                own = bool(pe.evidence) and \
                    pe.evidence[0].source_id == planted.passages[i].source_id
                lost_own_first += own
                if v.status == Status.SUPPORTED:
                    overruled.append({"claim": edit.claim, "action": edit.action,
                                      "reason": edit.reason})
    secs = time.perf_counter() - t0
    n_false = sum(actions["planted"].values())
    n_true = sum(actions["true"].values())
    n_removed = sum(actions["planted"][a] for a in NOT_ASSERTED)
    n_kept = sum(actions["true"][a] for a in ASSERTED)
    removed, kept = n_removed / n_false, n_kept / n_true
    interval = {"removed": wilson_interval(n_removed, n_false),
                "kept": wilson_interval(n_kept, n_true)}
    print(f"{args.drafts} drafts, {args.strictness} mode, {secs:.0f}s "
          f"({n_true + n_false} claims)")
    print(f"planted false claims no longer asserted: {removed:.3f}  "
          f"(actions: {dict(actions['planted'])})  target >= 0.90")
    print(f"true claims kept:                        {kept:.3f}  "
          f"(actions: {dict(actions['true'])})  target >= 0.90")
    print("95 % Wilson intervals (the sample of drafts): removed "
          f"{interval['removed'][0]:.3f}-{interval['removed'][1]:.3f}, kept "
          f"{interval['kept'][0]:.3f}-{interval['kept'][1]:.3f}")
    lost = n_true - n_kept
    print(f"true claims not kept whose best evidence sentence came from their own document: "
          f"{lost_own_first} of {lost}")
    print(f"true claims the verifier called Supported that the answer does not keep (a check "
          f"finding overruled it; listed in the JSON): {len(overruled)}")
    ranking = {name: best_cut(np.array(truth), np.array(vals))
               for name, vals in rank_scores.items()}
    for name, r in ranking.items():
        print(f"diagnostic, {name}: AUROC {r['auroc']:.3f}; best cut on these claims "
              f"{r['cut']:.3f}: removed {r['removed']:.3f}, kept {r['kept']:.3f}")
    suffix = "" if context == CONTEXT_CHARS else f"_context{args.context_chars}"
    write_result(f"mitigation_{args.strictness}{suffix}", {
        "drafts": args.drafts, "strictness": args.strictness, "seconds": round(secs, 1),
        "context_chars": context,
        "planted_removed_or_corrected": round(removed, 4), "true_kept": round(kept, 4),
        "wilson_95": {k: [round(lo, 4), round(hi, 4)] for k, (lo, hi) in interval.items()},
        "planted_actions": dict(actions["planted"]), "true_actions": dict(actions["true"]),
        "true_not_kept_own_evidence_first": lost_own_first,
        "true_supported_not_kept": overruled,
        "ranking_diagnostic": ranking})


@dataclass(frozen=True)
class PlantedDraft:
    """One benchmark draft: four true claims and a planted false one, paired with evidence."""

    draft: str
    docs: dict[str, str]
    #: One per claim, in draft order: the claim's own document as a passage.
    passages: tuple[Evidence, ...]
    paired: tuple[ClaimEvidence, ...]
    truth: tuple[bool, ...]


def planted_drafts(drafts: int = 200, true_per_draft: int = 4, seed: int = 13
                   ) -> Iterator[PlantedDraft]:
    """The benchmark's drafts (FEVER dev eval split), each claim paired as the verifier
    pairs a draft's claims (``EvidencePairer(top_k=2)`` over the draft's five documents)."""
    for name, value in (("drafts", drafts), ("true_per_draft", true_per_draft)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
    rng = random.Random(seed)
    ex = load_preset("fever", "eval")
    sup = [e for e in ex if e.label == SUPPORTS]
    ref = [e for e in ex if e.label == REFUTES]
    rng.shuffle(sup)
    rng.shuffle(ref)
    if drafts * true_per_draft > len(sup) or drafts > len(ref):
        raise ValueError(f"drafts={drafts} x true_per_draft={true_per_draft} needs more FEVER "
                         f"eval claims than there are ({len(sup)} SUPPORTS, {len(ref)} "
                         "REFUTES)")
    pairer = EvidencePairer(top_k=2)
    for d in range(drafts):
        items = [(e, True) for e in sup[d * true_per_draft:(d + 1) * true_per_draft]]
        items.append((ref[d], False))
        rng.shuffle(items)
        docs = {f"doc{d}-{i}": e.evidence_text for i, (e, _) in enumerate(items)}
        passages = tuple(Evidence(t, sid, (0, len(t))) for sid, t in docs.items())
        draft, claims = "", []
        for e, _ in items:
            text = " ".join(e.claim.split())
            if not text.endswith((".", "!", "?")):
                text += "."
            start = len(draft) + (1 if draft else 0)
            draft = f"{draft} {text}" if draft else text
            claims.append(Claim(text, (start, start + len(text))))
        yield PlantedDraft(draft, docs, passages, tuple(pairer.pair(claims, list(passages))),
                           tuple(true for _, true in items))


def best_cut(truth: np.ndarray, score: np.ndarray) -> dict[str, float]:
    """AUROC, and the cut that maximises min(removed, kept) when claims under it are dropped."""
    best = (-1.0, 0.0, 0.0)
    for t in np.unique(score):
        kept = float((score[truth] >= t).mean())
        removed = float((score[~truth] < t).mean())
        if min(kept, removed) > min(best[1], best[2]):
            best = (float(t), removed, kept)
    return {"auroc": round(float(roc_auc_score(truth, score)), 4), "cut": round(best[0], 4),
            "removed": round(best[1], 4), "kept": round(best[2], 4)}


if __name__ == "__main__":
    main()
