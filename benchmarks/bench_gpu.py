"""GPU throughput of the NLI detector and of ``verifier eval`` (batch size auto); records the
device in its JSON. Without a CUDA device it says so and writes ``{"device": null}``.

    python benchmarks/bench_gpu.py [--model PATH] [--pairs 13332]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import write_result

from verifier.batch import EvalConfig, FieldMap, resolve_preset_inputs, run_eval
from verifier.datasets import load_preset
from verifier.nli import NLIDetector


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--pairs", type=int, default=13332)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: nothing measured")
        write_result("gpu", {"device": None})
        return
    device = torch.cuda.get_device_name(0)
    ex = load_preset("fever")[: args.pairs]
    pairs = [(e.evidence_text, e.claim) for e in ex]
    rows = {}
    for bs in (64, 256, 1024):
        det = NLIDetector(args.model, device="cuda", batch_size=bs)
        det.predict(pairs[:2048])
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        det.predict(pairs)
        torch.cuda.synchronize()
        rate = len(pairs) / (time.perf_counter() - t0)
        rows[f"predict_batch_{bs}"] = round(rate, 1)
        print(f"{device} {det.resolved_dtype} batch {bs}: {rate:.0f} pairs/s over {len(pairs)}")
    out = Path(tempfile.mkdtemp(prefix="gpu-eval-"))
    cfg = EvalConfig(resolve_preset_inputs("fever"), out, fields=FieldMap("claim", "evidence",
                     "label", "idx"), scheme="supports-refutes", model=args.model,
                     device="cuda", batch_size="auto", chunk_rows=4096, plots=False)
    m = run_eval(cfg, show_progress_bar=False)
    import json

    run = json.loads((out / "run.json").read_text())
    print(f"verifier eval --preset fever --device cuda --batch-size auto: "
          f"{run['pairs_per_second']} pairs/s, accuracy {m['accuracy']}")
    write_result("gpu", {"device": device, "dtype": det.resolved_dtype, "pairs": len(pairs),
                         "predict_pairs_per_second": rows,
                         "eval_pairs_per_second": run["pairs_per_second"],
                         "eval_accuracy": m["accuracy"]})


if __name__ == "__main__":
    main()
