"""NLI accuracy of a model (default: the embedded one), bf16 and fp32, with the issue's targets.

3-class accuracy on SNLI eval, the val file and ANLI R1-R3 dev; SUPPORTS-vs-REFUTES accuracy
(SUPPORTS iff p(entailment) > p(contradiction)) on FEVER dev and FEVER-Symmetric v0.2 test.

    python benchmarks/bench_nli.py [--model PATH] [--limit N] [--fp32-limit N]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from _common import write_result

from verifier.datasets import SUPPORTS, data_root, load_preset
from verifier.nli import NLIDetector, supports_decision

TARGETS = {"snli": 0.85, "val": 0.75, "fever": 0.88, "fever_sym": 0.75}
L = {"entailment": 0, "neutral": 1, "contradiction": 2, "e": 0, "n": 1, "c": 2}


def load_sets(limit: int) -> dict[str, tuple[list[tuple[str, str]], np.ndarray, str]]:
    root = data_root()
    sets = {}
    for name, fname in (("snli", "nli_eval_snli.jsonl"), ("val", "nli_eval_val.jsonl")):
        rows = [json.loads(x) for x in (root / "nli-train" / fname).open()]
        sets[name] = ([(r["premise"], r["hypothesis"]) for r in rows],
                      np.array([L[r["label"]] for r in rows]), "3class")
    for rnd in ("R1", "R2", "R3"):
        rows = [json.loads(x) for x in (root / "anli" / f"{rnd}_dev.jsonl").open()]
        sets[f"anli_{rnd.lower()}"] = ([(r["context"], r["hypothesis"]) for r in rows],
                                       np.array([L[r["label"]] for r in rows]), "3class")
    for name, preset in (("fever", "fever"), ("fever_sym", "fever-sym")):
        ex = load_preset(preset, "eval")
        sets[name] = ([(e.evidence_text, e.claim) for e in ex],
                      np.array([e.label == SUPPORTS for e in ex]), "2class")
    if limit:
        sets = {k: (p[:limit], y[:limit], kind) for k, (p, y, kind) in sets.items()}
    return sets


def accuracy(probs: np.ndarray, y: np.ndarray, kind: str) -> float:
    pred = probs.argmax(1) if kind == "3class" else supports_decision(probs)
    return float((pred == y).mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="HF id or path (default: embedded model)")
    ap.add_argument("--limit", type=int, default=0, help="first N pairs of each set (0 = all)")
    ap.add_argument("--fp32-limit", type=int, default=0,
                    help="fp32 on the first N pairs of each set only (0 = same as bf16)")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--name", default="nli")
    args = ap.parse_args()
    sets = load_sets(args.limit)
    rows: dict[str, dict] = {}
    for dtype in ("bfloat16", "float32"):
        det = NLIDetector(args.model, dtype=dtype, batch_size=args.batch_size)
        det.warm_up()
        for name, (pairs, y, kind) in sets.items():
            n = len(pairs)
            if dtype == "float32" and args.fp32_limit:
                n = min(n, args.fp32_limit)
            t0 = time.perf_counter()
            probs = det.predict(pairs[:n])
            dt = time.perf_counter() - t0
            r = rows.setdefault(name, {"kind": kind})
            r[dtype] = {"n": n, "accuracy": round(accuracy(probs, y[:n], kind), 4),
                        "pairs_per_second": round(n / dt, 1)}
            if dtype == "float32":  # bf16 on the same pairs, for the difference
                bf = rows[name]["_bf16_probs"][:n]
                r["bf16_minus_fp32_same_pairs"] = round(
                    accuracy(bf, y[:n], kind) - r[dtype]["accuracy"], 4)
            else:
                r["_bf16_probs"] = probs
            print(f"{dtype:9s} {name:10s} n={n:6d} acc={r[dtype]['accuracy']:.4f} "
                  f"({n / dt:.0f} pairs/s)", flush=True)
    for r in rows.values():
        r.pop("_bf16_probs", None)
    print("\n| set | kind | n | bf16 acc | fp32 acc (n) | bf16 - fp32 | target |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows.items():
        t = TARGETS.get(name)
        status = "report" if t is None else (f">= {t} " + ("met" if r["bfloat16"]["accuracy"]
                                                            >= t else "NOT met"))
        print(f"| {name} | {r['kind']} | {r['bfloat16']['n']} | {r['bfloat16']['accuracy']:.4f} "
              f"| {r['float32']['accuracy']:.4f} ({r['float32']['n']}) | "
              f"{r['bf16_minus_fp32_same_pairs']:+.4f} | {status} |")
    write_result(args.name, {"model": args.model or "embedded:nli-minilm-l6", "sets": rows,
                             "targets": TARGETS})


if __name__ == "__main__":
    main()
