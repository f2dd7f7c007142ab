"""Peak memory of ``verifier eval`` at 10k vs 100k rows (the FEVER dev file repeated): the
reader streams, so memory must stay flat (within 10 %).

    python benchmarks/bench_eval_memory.py [--small 10000] [--large 100000] [--model PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, result_name, write_result

from verifier.batch import PRESETS, resolve_preset_inputs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=10_000)
    ap.add_argument("--large", type=int, default=100_000)
    ap.add_argument("--model", default=None, help="NLI model (default: the embedded one)")
    ap.add_argument("--name", type=result_name, default="eval_memory", help="result file name")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="eval-mem-"))
    src = resolve_preset_inputs("fever")[0].read_text().splitlines()
    big = tmp / "fever_repeated.jsonl"
    with big.open("w") as fh:
        for i in range(args.large):
            fh.write(src[i % len(src)] + "\n")
    results = {}
    for n in (args.small, args.large):
        out = tmp / f"out{n}"
        cmd = [sys.executable, "-m", "verifier", "eval", str(big), "--output-dir", str(out),
               "--scheme", PRESETS["fever"].scheme, "--claim-field", "claim",
               "--evidence-field", "evidence", "--label-field", "label", "--id-field", "idx",
               "--limit", str(n), "--progress", "off", "--no-plots"]
        if args.model:
            cmd += ["--model", args.model]
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
        run = json.loads((out / "run.json").read_text())
        m = json.loads((out / "metrics.json").read_text())
        rows = m["n"] + m["n_errors"]
        results[n] = {"rows": rows, "peak_memory_mb": run["peak_memory_mb"],
                      "pairs_per_second": run["pairs_per_second"]}
        print(f"{n:7d} rows: peak RSS {run['peak_memory_mb']:.0f} MiB, "
              f"{run['pairs_per_second']} pairs/s, rows out {rows}", flush=True)
    a, b = results[args.small]["peak_memory_mb"], results[args.large]["peak_memory_mb"]
    growth = (b - a) / a
    print(f"peak memory {args.large} vs {args.small} rows: {growth * 100:+.1f}% "
          f"({'flat within 10%' if abs(growth) <= 0.10 else 'NOT flat'})")
    write_result(args.name, {"model": args.model or "embedded:nli-minilm-l6",
                                 "results": results, "growth": round(growth, 4)})


if __name__ == "__main__":
    main()
