"""Accuracy suite: ``verifier eval`` over every preset, one table.

Each preset runs on its ``eval`` split under ../shared/data (see ``verifier.batch.PRESETS`` and
``verifier.datasets``; ``--split all`` for the whole files) with the NLI detector alone
(``--mode nli``) and the embedded model unless ``--model`` is given. SummEdits is also broken
down by domain. On the 2-class sets the decision cut on p(SUPPORTS) is the one stored with the
model (``thresholds.json``, tuned on train splits by ``models/recipes/tune_thresholds.py``:
the preset's own where it has a train split, else the scheme's); the balanced accuracy at
0.5 is printed beside it, from the same predictions.

    python benchmarks/bench_eval_suite.py [--limit N] [--presets fever,wice] [--threshold T]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from _common import ROOT, result_name, write_result

from verifier.batch import CLASSES, PRESETS, decide, metrics_of_predictions
from verifier.datasets import load_preset

#: Presets broken down by a field of their examples' ``meta``.
BREAKDOWN = {"summedits": "domain"}

#: Published balanced accuracies (SummEdits paper, Laban et al. 2023, overall).
PUBLISHED = {"summedits": "BAcc: SummaC-Conv 57.1, QAFactEval 65.5, GPT-4 82.1"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--presets", default=",".join(PRESETS))
    ap.add_argument("--out", type=Path, default=None, help="keep the eval outputs here")
    ap.add_argument("--split", choices=("eval", "all"), default="eval")
    ap.add_argument("--threshold", default="auto",
                    help="passed to verifier eval (default auto: the model's tuned cuts)")
    ap.add_argument("--name", type=result_name, default="eval_suite",
                    help="results file benchmarks/results/NAME.json")
    args = ap.parse_args()
    out_root = args.out or Path(tempfile.mkdtemp(prefix="eval-suite-"))
    table: dict[str, dict[str, Any]] = {}
    for name in args.presets.split(","):
        out = out_root / name
        cmd = [sys.executable, "-m", "verifier", "eval", "--preset", name, "--output-dir",
               str(out), "--progress", "off", "--no-plots", "--split", args.split]
        if args.model:
            cmd += ["--model", args.model]
        if args.limit:
            cmd += ["--limit", str(args.limit)]
        if PRESETS[name].scheme != "3class":
            cmd += ["--threshold", args.threshold]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{name}: FAILED\n{proc.stderr[-2000:]}")
            table[name] = {"error": proc.stderr[-2000:]}
            continue
        m = json.loads((out / "metrics.json").read_text())
        run = json.loads((out / "run.json").read_text())
        table[name] = {"scheme": PRESETS[name].scheme, "n": m["n"], "n_errors": m["n_errors"],
                       "accuracy": m.get("accuracy"), "macro_f1": m.get("macro_f1"),
                       "balanced_accuracy": m.get("balanced_accuracy"), "auroc": m.get("auroc"),
                       "ece": m.get("ece"), "pairs_per_second": run["pairs_per_second"],
                       "threshold": m.get("threshold"),
                       "threshold_source": m.get("threshold_source"),
                       "balanced_accuracy_at_0.5": at_half(out, PRESETS[name].scheme),
                       "published": PUBLISHED.get(name, "")}
        if name in BREAKDOWN:
            table[name]["by_" + BREAKDOWN[name]] = breakdown(name, BREAKDOWN[name], out)
        print(f"{name}: {json.dumps(table[name])}", flush=True)
    print("\n| data set | scheme | n | errors | accuracy | macro-F1 | balanced acc. | cut | "
          "BAcc at 0.5 | AUROC | pairs/s | published |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, r in table.items():
        if "error" in r:
            print(f"| {name} | failed | | | | | | | | | | |")
            continue

        def f(x: float | None) -> str:
            return "" if x is None else f"{100 * x:.1f}"

        cut = "" if r["threshold"] is None else f"{r['threshold']:.2f}"
        print(f"| {name} | {r['scheme']} | {r['n']} | {r['n_errors']} | {f(r['accuracy'])} | "
              f"{f(r['macro_f1'])} | {f(r['balanced_accuracy'])} | {cut} | "
              f"{f(r['balanced_accuracy_at_0.5'])} | {f(r['auroc'])} | "
              f"{r['pairs_per_second']} | {r['published']} |")
        for key, r2 in r.get("by_" + BREAKDOWN.get(name, ""), {}).items():
            print(f"| {name}: {key} | | {r2['n']} | | {f(r2['accuracy'])} | "
                  f"{f(r2['macro_f1'])} | {f(r2['balanced_accuracy'])} | | "
                  f"{f(r2['balanced_accuracy_at_0.5'])} | {f(r2['auroc'])} | | |")
    two = [r for r in table.values() if "error" not in r and r["threshold"] is not None]
    if two:
        mean_cut = float(np.mean([r["balanced_accuracy"] for r in two]))
        mean_half = float(np.mean([r["balanced_accuracy_at_0.5"] for r in two]))
        print(f"\nmean balanced accuracy over the {len(two)} 2-class sets: "
              f"{100 * mean_cut:.2f} at the cuts, {100 * mean_half:.2f} at 0.5")
    write_result(args.name, {"model": args.model or "embedded:nli-minilm-l6",
                             "limit": args.limit, "split": args.split, "presets": table})


def _at_half(preds: list[dict], scheme: str) -> float | None:
    """Balanced accuracy of the predictions re-decided at p(SUPPORTS) >= 0.5 (2-class)."""
    if scheme == "3class" or not preds:
        return None
    classes = CLASSES[scheme]
    probs = [[p["probabilities"][c] for c in classes] for p in preds]
    decided = decide(np.asarray(probs), scheme, 0.5)  # type: ignore[arg-type]
    m = metrics_of_predictions([{**p, "predicted": d} for p, d in zip(preds, decided,
                                                                      strict=True)], classes)
    return m.get("balanced_accuracy")


def at_half(out: Path, scheme: str) -> float | None:
    """:func:`_at_half` of a run's ``predictions.jsonl``."""
    lines = (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    return _at_half([json.loads(x) for x in lines], scheme)


def breakdown(name: str, key: str, out: Path) -> dict[str, dict]:
    """Accuracy, macro-F1, balanced accuracy (at the run's cut and at 0.5) and AUROC per value
    of ``meta[key]``."""
    group = {e.id: e.meta[key] for e in load_preset(name)}
    classes = CLASSES[PRESETS[name].scheme]
    rows: dict[str, list[dict]] = {}
    for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
        p = json.loads(line)
        rows.setdefault(group[p["id"]], []).append(p)
    keys = ("n", "accuracy", "macro_f1", "balanced_accuracy", "auroc")
    res = {}
    for g, ps in sorted(rows.items()):
        m = metrics_of_predictions(ps, classes)
        res[g] = {k: m.get(k) for k in keys}
        res[g]["balanced_accuracy_at_0.5"] = _at_half(ps, PRESETS[name].scheme)
    return res


if __name__ == "__main__":
    main()
