"""NLI speed, side by side on the same weights and the same FEVER pairs.

``NLIDetector.predict`` (length-sorted batches, dynamic padding, bf16 where the CPU runs it
natively) against the naive ``pipeline("text-classification")`` called pair by pair. The
pipeline is timed twice: as ``pipeline()`` loads the checkpoint by default (transformers 5
keeps the dtype stored in the checkpoint: bf16 for the embedded model) and forced to fp32.
The pipeline is slow, so it runs on the first ``--pipeline-pairs`` of the pairs and its
pairs/s is compared. Rounds are interleaved (the machine is shared) and medians reported.

    python benchmarks/bench_nli_speed.py [--model PATH] [--pairs 2000] [--pipeline-pairs 300]
        [--rounds 3]

Writes ``benchmarks/results/nli_speed.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

from _common import write_result

from verifier.datasets import load_preset
from verifier.embedded import embedded_model_dir
from verifier.nli import NLIDetector

TARGET_RATE, TARGET_RATIO = 1000.0, 5.0


def matmul_tflops(dtype_name: str, seconds: float = 2.0) -> float:
    """Measured dense matmul throughput of this machine (a roofline for the model)."""
    import torch

    dtype = getattr(torch, dtype_name)
    a = torch.randn(2048, 384, dtype=dtype)
    b = torch.randn(384, 1536, dtype=dtype)
    with torch.inference_mode():
        a @ b
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            a @ b
            n += 1
    return 2 * 2048 * 384 * 1536 * n / (time.perf_counter() - t0) / 1e12


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--model", default=None, help="HF id or folder (default: embedded model)")
    ap.add_argument("--pairs", type=int, default=2000, help="first N FEVER dev pairs")
    ap.add_argument("--pipeline-pairs", type=int, default=300,
                    help="the first N of those for the pair-by-pair pipeline")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import torch
    from transformers import AutoTokenizer, pipeline

    pairs = [(e.evidence_text, e.claim) for e in load_preset("fever", "eval")[: args.pairs]]
    sub = pairs[: args.pipeline_pairs]
    path = args.model or str(embedded_model_dir())
    tok = AutoTokenizer.from_pretrained(path)
    n_tokens = sum(len(x) for x in tok([p for p, _ in pairs], [h for _, h in pairs],
                                       verbose=False)["input_ids"])
    print(f"{len(pairs)} FEVER dev pairs, {n_tokens / len(pairs):.1f} tokens a pair on average; "
          f"torch threads {torch.get_num_threads()}; load average {os.getloadavg()[0]:.1f}")

    det = NLIDetector(path, batch_size=args.batch_size)
    det32 = NLIDetector(path, batch_size=args.batch_size, dtype="float32")
    pipe = pipeline("text-classification", model=path, device="cpu", top_k=None)
    pipe32 = pipeline("text-classification", model=path, device="cpu", top_k=None,
                      dtype=torch.float32)
    for d in (det, det32):
        d.predict(pairs[:64])  # warm-up
    for p in (pipe, pipe32):
        p({"text": sub[0][0], "text_pair": sub[0][1]}, truncation=True)
    pipe_dtype = str(pipe.model.dtype).replace("torch.", "")

    def time_detector(d: NLIDetector) -> float:
        t0 = time.perf_counter()
        d.predict(pairs)
        return len(pairs) / (time.perf_counter() - t0)

    def time_pipeline(p: Any) -> float:
        t0 = time.perf_counter()
        for premise, hypothesis in sub:
            p({"text": premise, "text_pair": hypothesis}, truncation=True)
        return len(sub) / (time.perf_counter() - t0)

    runs: dict[str, list[float]] = {"detector": [], "detector_fp32": [], "pipeline": [],
                                    "pipeline_fp32": []}
    loads = [os.getloadavg()[0]]
    for r in range(args.rounds):
        runs["detector"].append(time_detector(det))
        runs["pipeline"].append(time_pipeline(pipe))
        runs["detector_fp32"].append(time_detector(det32))
        runs["pipeline_fp32"].append(time_pipeline(pipe32))
        loads.append(os.getloadavg()[0])
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.1f}" for k, v in runs.items())
              + f" pairs/s (load average {loads[-1]:.1f})", flush=True)
    med = {k: statistics.median(v) for k, v in runs.items()}
    ratio = med["detector"] / med["pipeline"]
    ratio_vs_fp32_pipe = med["detector"] / med["pipeline_fp32"]
    peak = matmul_tflops(det.resolved_dtype)
    flops_per_pair = 2 * n_tokens / len(pairs) * sum(
        w.numel() for n, w in pipe32.model.named_parameters() if "embeddings" not in n)
    roofline = peak * 1e12 / flops_per_pair

    print(f"\nmedians of {args.rounds} interleaved rounds (pairs/s):")
    print(f"  NLIDetector.predict, {det.resolved_dtype} (default), batch {args.batch_size}, "
          f"{len(pairs)} pairs: {med['detector']:.1f}")
    print(f"  NLIDetector.predict, float32, {len(pairs)} pairs: {med['detector_fp32']:.1f}")
    print(f"  pipeline pair by pair, as loaded by default ({pipe_dtype}), first {len(sub)} "
          f"pairs: {med['pipeline']:.1f}")
    print(f"  pipeline pair by pair, float32, first {len(sub)} pairs: "
          f"{med['pipeline_fp32']:.1f}")
    print(f"ratio NLIDetector / default pipeline: {ratio:.1f}x; / fp32 pipeline: "
          f"{ratio_vs_fp32_pipe:.1f}x; fp32 NLIDetector / fp32 pipeline: "
          f"{med['detector_fp32'] / med['pipeline_fp32']:.1f}x")
    print(f"targets: >= {TARGET_RATE:.0f} pairs/s ("
          f"{'met' if med['detector'] >= TARGET_RATE else 'NOT met'}) and >= {TARGET_RATIO:.0f}x "
          f"({'met' if ratio >= TARGET_RATIO else 'NOT met'} against the default pipeline, "
          f"{'met' if ratio_vs_fp32_pipe >= TARGET_RATIO else 'NOT met'} against fp32)")
    print(f"context: {det.resolved_dtype} matmul measured at {peak:.2f} TFLOP/s here; at "
          f"{flops_per_pair / 1e9:.2f} GFLOP a pair (non-embedding weights only) the compute "
          f"roofline is ~{roofline:.0f} pairs/s")
    write_result("nli_speed", {
        "model": args.model or "embedded:nli-minilm-l6", "pairs": len(pairs),
        "pipeline_pairs": len(sub), "mean_tokens_per_pair": round(n_tokens / len(pairs), 1),
        "rounds": args.rounds, "load_average": loads,
        "detector_dtype": det.resolved_dtype, "detector_batch_size": args.batch_size,
        "pipeline_default_dtype": pipe_dtype,
        "runs_pairs_per_second": {k: [round(x, 1) for x in v] for k, v in runs.items()},
        "detector_pairs_per_second": round(med["detector"], 1),
        "detector_fp32_pairs_per_second": round(med["detector_fp32"], 1),
        "pipeline_pairs_per_second": round(med["pipeline"], 1),
        "pipeline_fp32_pairs_per_second": round(med["pipeline_fp32"], 1),
        "ratio": round(ratio, 2), "ratio_vs_fp32_pipeline": round(ratio_vs_fp32_pipe, 2),
        "ratio_fp32_vs_fp32": round(med["detector_fp32"] / med["pipeline_fp32"], 2),
        "matmul_tflops": round(peak, 3), "gflop_per_pair": round(flops_per_pair / 1e9, 3),
        "roofline_pairs_per_second": round(roofline, 1),
        "targets": {"pairs_per_second": TARGET_RATE, "ratio": TARGET_RATIO},
    })


if __name__ == "__main__":
    main()
