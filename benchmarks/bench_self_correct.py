"""The self-correcting loop on questions built from FEVER dev claims, embedded defaults.

Questions are "Is it true that <claim>?"; the index holds the evidence texts of all the
questions' claims. Printed: share approved, mean iterations, and the grounding score of the
first draft (before) and of the returned answer (after).

    python benchmarks/bench_self_correct.py [--questions 100] [--max-new-tokens 64]
"""

from __future__ import annotations

import argparse
import random
import time

from _common import write_result

from mitigation.mitigator import Mitigator
from rag.generation import HFGenerator
from rag.retrieval import HybridRetriever
from rag.self_correct import SelfCorrectingPipeline
from verifier.datasets import load_preset
from verifier.types import Passage
from verifier.verify import Verifier


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=100)
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    ex = load_preset("fever", "eval")
    random.Random(args.seed).shuffle(ex)
    ex = ex[: args.questions]
    docs: dict[str, str] = {}
    for e in ex:
        docs.setdefault(e.evidence_text, f"fever-{e.id}")
    retriever = HybridRetriever().index([Passage(t, sid) for t, sid in docs.items()])
    pipe = SelfCorrectingPipeline(retriever, HFGenerator(max_new_tokens=args.max_new_tokens),
                                  Verifier(), Mitigator("balanced"), top_k=3)
    approved, iters, before, after = 0, [], [], []
    t0 = time.perf_counter()
    for i, e in enumerate(ex, start=1):
        claim = e.claim.rstrip(" .")
        q = f"Is it true that {claim[:1].lower() + claim[1:]}?"
        ans = pipe.run(q)
        approved += ans.approved
        iters.append(len(ans.trace))
        first = ans.trace[0].grounding_score
        before.append(first if first is not None else 0.0)
        after.append(ans.grounding_score)
        if i % 10 == 0:
            print(f"{i} questions, {time.perf_counter() - t0:.0f}s", flush=True)
    n = len(ex)
    res = {"questions": n, "approved_share": round(approved / n, 4),
           "mean_iterations": round(sum(iters) / n, 3),
           "grounding_before": round(sum(before) / n, 4),
           "grounding_after": round(sum(after) / n, 4),
           "seconds": round(time.perf_counter() - t0, 1)}
    print(f"approved {res['approved_share']:.2f}, mean iterations {res['mean_iterations']:.2f}, "
          f"grounding before {res['grounding_before']:.3f} -> after {res['grounding_after']:.3f}"
          f" ({n} questions, {res['seconds']}s)")
    write_result("self_correct", res)


if __name__ == "__main__":
    main()
