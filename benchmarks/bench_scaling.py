"""How the verifier's own CPU work grows with the number of pairs of one call.

Two parts, on FEVER eval pairs:

1. ``Verifier.verify_pairs`` with the NLI detector and the alignment detector stubbed out (a
   constant NLI row, no alignment features), so that only the verifier's bookkeeping is
   timed (pairing units with claims, feature rows, the meta-classifiers' decisions), for
   ``--sizes`` pairs: what a GPU job pays on the CPU whatever its device. Linear growth
   gives a ratio of time to size that stays level.
2. The alignment detector and the deterministic checks on ``--alignment-pairs`` pairs with
   their embeddings cached (the model's cost is not timed) and the checks' remembered parses
   forgotten before each run (``mitigation.values.clear_caches``): seconds per run, best of
   three.

    python benchmarks/bench_scaling.py [--sizes 500 2000 8000] [--alignment-pairs 800]

To time an older version beside this one, run this file from a worktree of it (code that
remembers no parses has nothing to forget)::

    D=$(realpath ../shared/data); git worktree add /tmp/old REV
    cp benchmarks/bench_scaling.py /tmp/old/benchmarks/
    (cd /tmp/old && PYTHONPATH=. NLI_VERIFIER_DATA=$D python benchmarks/bench_scaling.py)
"""

from __future__ import annotations

import argparse
import functools
import time
from collections.abc import Callable, Iterable, Sequence

import numpy as np
from _common import write_result

from verifier.training import sample_examples
from verifier.types import Claim, ClaimEvidence, Evidence
from verifier.verify import Verifier

try:
    from mitigation.values import clear_caches
except ImportError:  # a version before 632b73b, run from its worktree: nothing remembered
    def clear_caches() -> None:
        """Nothing to forget."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 2000, 8000])
    ap.add_argument("--alignment-pairs", type=int, default=800)
    args = ap.parse_args()
    for name, values in (("sizes", args.sizes), ("alignment_pairs", [args.alignment_pairs])):
        if any(n < 1 for n in values):
            ap.error(f"--{name.replace('_', '-')} must be >= 1, got {values}")
    examples = sample_examples("fever", "eval", None, seed=3)
    need = max(*args.sizes, args.alignment_pairs)
    if need > len(examples):
        ap.error(f"at most {len(examples)} FEVER eval pairs, asked for {need}")

    verifier = Verifier()
    # instance attributes over the methods, deleted below to bring the methods back
    def fake_nli(pairs: Iterable[object]) -> np.ndarray:
        return np.tile(np.array([[0.6, 0.3, 0.1]], dtype=np.float32), (len(list(pairs)), 1))

    def no_alignment(paired: Sequence[object]) -> list[dict]:
        return [{} for _ in paired]

    setattr(verifier.nli, "predict", fake_nli)  # noqa: B010 (mypy refuses assigning a method)
    setattr(verifier, "_run_alignment", no_alignment)  # noqa: B010
    verifier.verify_pairs([examples[0].claim], [examples[0].evidence_text])  # loads the meta
    bookkeeping = {}
    for n in args.sizes:
        claims = [e.claim for e in examples[:n]]
        evidences = [e.evidence_text for e in examples[:n]]
        best = min(_seconds(functools.partial(verifier.verify_pairs, claims, evidences))
                   for _ in range(2))
        bookkeeping[n] = round(best, 3)
        print(f"verify_pairs bookkeeping, {n} pairs: {best:.2f} s "
              f"({1e3 * best / n:.3f} ms a pair)")
    del verifier.nli.predict, verifier._run_alignment

    paired = [ClaimEvidence(Claim(e.claim), (Evidence(e.evidence_text, f"doc{i}",
                                                      (0, len(e.evidence_text))),))
              for i, e in enumerate(examples[:args.alignment_pairs])]
    verifier._run_alignment(paired)  # embeds every text once; the cache keeps them
    runs = []
    for _ in range(3):
        clear_caches()
        runs.append(_seconds(lambda: verifier._run_alignment(paired)))
    print(f"alignment and checks, {len(paired)} pairs (embeddings cached, parses not): "
          f"{min(runs):.2f} s ({1e3 * min(runs) / len(paired):.2f} ms a pair)")
    write_result("scaling", {
        "verify_pairs_bookkeeping_seconds": bookkeeping,
        "alignment_pairs": len(paired),
        "alignment_and_checks_seconds": round(min(runs), 3)})


def _seconds(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
