"""Claims whose evidence was not retrieved: does the verifier say it cannot check them?

Each FEVER eval-split claim (SUPPORTS or REFUTES) is verified, with ``Verifier.verify``'s
pairing, against the evidence documents of four *other* claims: nothing given is about it,
so the honest status is ``Insufficient_Info``. Printed side by side: the status shares with
the default pairer (``EvidencePairer(min_score=0.15)``: sentences scoring under it are not
evidence) and with ``min_score=0`` (every claim gets its best sentences, however unrelated;
the behaviour before). A second table does the same with the claim's own document among the
five, to show what the floor costs where the evidence is there. Last, the latency of
``Verifier().verify`` on ``bench_verifier.py``'s 5-claim draft against 10 passages at each
floor, interleaved in one process (this machine's speed drifts between runs; the ratio is
the figure to compare).

    python benchmarks/bench_no_evidence.py [--claims 300] [--seed 5]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

import numpy as np
from _common import write_result

from rag.pairing import MIN_SCORE
from verifier.datasets import SUPPORTS, load_preset
from verifier.types import Claim, Evidence, Status
from verifier.verify import Verifier


def latency(verifier: Verifier, floors: dict[str, float], runs: int = 30) -> dict[str, float]:
    """Median ms of ``verifier.verify`` on the latency draft at each floor, interleaved."""
    from bench_verifier import LATENCY_DRAFT, LATENCY_PASSAGES

    times: dict[str, list[float]] = {n: [] for n in floors}
    for i in range(runs + 3):
        for name, floor in floors.items():
            verifier.pairer.min_score = floor
            verifier.embedding_cache.clear()  # cold: every run embeds its sentences again
            t0 = time.perf_counter()
            verifier.verify(LATENCY_DRAFT, evidence=list(LATENCY_PASSAGES))
            if i >= 3:  # the first runs warm up
                times[name].append(time.perf_counter() - t0)
    return {n: round(1000 * float(np.median(t)), 1) for n, t in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", type=int, default=300)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    if args.claims <= 0:
        raise SystemExit(f"--claims must be > 0, got {args.claims}")
    ex = load_preset("fever", "eval")
    random.Random(args.seed).shuffle(ex)
    verifier = Verifier()  # one set of models; the pairer's floor is switched per call
    floors = {f"min_score={MIN_SCORE} (default)": MIN_SCORE, "min_score=0 (before)": 0.0}
    counts: dict[str, dict[str, Counter]] = {c: {f: Counter() for f in floors}
                                             for c in ("without", "with")}
    t0 = time.perf_counter()
    for i in range(args.claims):
        e = ex[i]
        others = [ex[(i + k) % len(ex)] for k in range(1, 5)]
        claim = Claim(" ".join(e.claim.split()))
        for case, docs in (("without", others), ("with", [e, *others])):
            passages = [Evidence(d.evidence_text, f"d{j}", (0, len(d.evidence_text)))
                        for j, d in enumerate(docs)]
            for name, floor in floors.items():
                verifier.pairer.min_score = floor
                paired = verifier.pairer.pair([claim], passages)
                (v,) = verifier.verify_claims(paired, passages=passages)
                key = v.status.value if case == "without" else (
                    f"{v.status.value} ({'true' if e.label == SUPPORTS else 'false'} claim)")
                counts[case][name][key] += 1
    secs = time.perf_counter() - t0
    result: dict[str, object] = {"claims": args.claims, "seconds": round(secs, 1)}
    print(f"{args.claims} FEVER eval claims, {secs:.0f}s")
    for case, title in (("without", "checked against 4 other claims' documents only"),
                        ("with", "checked against their own document and 4 others")):
        print(f"\n{title}:")
        result[case] = {}
        for name in floors:
            c = counts[case][name]
            shares = {k: round(v / args.claims, 3) for k, v in sorted(c.items())}
            result[case][name] = shares  # type: ignore[index]
            print(f"  {name:26s} " + ", ".join(f"{k} {v:.3f}" for k, v in shares.items()))
    ms = latency(verifier, floors)
    default, before = floors
    ratio = ms[default] / ms[before]
    print("\nVerifier().verify, 5 claims x 10 passages, median ms: "
          + ", ".join(f"{n} {v}" for n, v in ms.items()) + f" (ratio {ratio:.2f})")
    result["verify_latency_ms"] = {**ms, "ratio": round(ratio, 3)}
    insuff = {n: counts["without"][n][Status.INSUFFICIENT_INFO.value] / args.claims
              for n in floors}
    result["insufficient_info_without_evidence"] = {k: round(v, 3) for k, v in insuff.items()}
    write_result("no_evidence", result)


if __name__ == "__main__":
    main()
