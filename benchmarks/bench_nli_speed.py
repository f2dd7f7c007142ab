"""NLI speed, side by side on the same weights and the same FEVER pairs: ``NLIDetector.predict``
(bucketed batches, bf16 where fast) against the naive ``pipeline("text-classification")``
called pair by pair.

    python benchmarks/bench_nli_speed.py [--pairs 2000] [--pipeline-pairs 300]
"""

from __future__ import annotations

import argparse
import time

from _common import write_result

from verifier.datasets import load_preset
from verifier.embedded import embedded_model_dir
from verifier.nli import NLIDetector


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--pipeline-pairs", type=int, default=300,
                    help="pairs timed for the naive pipeline (it is slow; pairs/s is reported)")
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()
    ex = load_preset("fever")[: args.pairs]
    pairs = [(e.evidence_text, e.claim) for e in ex]
    path = args.model or str(embedded_model_dir())

    det = NLIDetector(path, batch_size=args.batch_size)
    det.predict(pairs[:64])  # warm-up
    t0 = time.perf_counter()
    det.predict(pairs)
    fast = len(pairs) / (time.perf_counter() - t0)
    print(f"NLIDetector.predict ({det.resolved_dtype}, batch {args.batch_size}): "
          f"{fast:.1f} pairs/s over {len(pairs)} pairs")

    det32 = NLIDetector(path, batch_size=args.batch_size, dtype="float32")
    det32.predict(pairs[:64])
    t0 = time.perf_counter()
    det32.predict(pairs)
    fast32 = len(pairs) / (time.perf_counter() - t0)
    print(f"NLIDetector.predict (float32): {fast32:.1f} pairs/s over {len(pairs)} pairs")

    from transformers import pipeline

    clf = pipeline("text-classification", model=path, device="cpu", top_k=None)
    sub = pairs[: args.pipeline_pairs]
    clf({"text": sub[0][0], "text_pair": sub[0][1]})
    t0 = time.perf_counter()
    for p, h in sub:
        clf({"text": p, "text_pair": h}, truncation=True)
    naive = len(sub) / (time.perf_counter() - t0)
    print(f"pipeline('text-classification') pair by pair (float32 as loaded): {naive:.1f} "
          f"pairs/s over the first {len(sub)} pairs")
    print(f"ratio NLIDetector / pipeline: {fast / naive:.1f}x "
          f"(float32 NLIDetector: {fast32 / naive:.1f}x); targets: >= 1000 pairs/s and >= 5x")
    write_result("nli_speed", {"model": args.model or "embedded:nli-minilm-l6",
                               "pairs": len(pairs), "pipeline_pairs": len(sub),
                               "detector_dtype": det.resolved_dtype,
                               "detector_pairs_per_second": round(fast, 1),
                               "detector_fp32_pairs_per_second": round(fast32, 1),
                               "pipeline_pairs_per_second": round(naive, 1),
                               "ratio": round(fast / naive, 2),
                               "ratio_fp32": round(fast32 / naive, 2)})


if __name__ == "__main__":
    main()
