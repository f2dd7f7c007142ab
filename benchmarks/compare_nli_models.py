"""Candidate NLI models side by side: ranking on the mitigation drafts, and verify latency.

For each model folder (``embedded`` is the shipped one), in one process so the timings
compare: the benchmark drafts of ``bench_mitigation.py`` (FEVER dev claims, one planted false
claim per draft, claims paired as the verifier pairs them; built once for all models) are
verified with that NLI model, and the NLI detector's entailment minus contradiction is scored
as a ranking of true over planted claims (AUROC, and the best both-sides figure one cut on
these claims could reach); then the latency of ``Verifier.verify`` with that model, measured
as ``bench_verifier.py`` measures the shipped one (``time_verify``). Every model is read with
the shipped model's detector settings (``chunk_tokens``, ``hypothesis_sentences``), so only
the weights differ.

The ranking reads the NLI detector's scores, not a status: the meta-classifier is fitted on
the shipped model's features and says little about another model's.

    python benchmarks/compare_nli_models.py --models embedded path/to/candidate [...]
        [--drafts 200] [--latency-runs 20] [--name nli_candidates]
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import result_name, write_result
from bench_mitigation import PlantedDraft, best_cut, planted_drafts
from bench_verifier import time_verify

from verifier.embedded import embedded_model_dir
from verifier.nli import NLIDetector
from verifier.verify import Verifier


def load(spec: str) -> NLIDetector:
    """``embedded``, or a model folder read with the shipped model's detector settings."""
    if spec == "embedded":
        return NLIDetector()
    shipped = json.loads((embedded_model_dir() / "config.json").read_text(encoding="utf-8"))
    return NLIDetector(spec, chunk_tokens=shipped.get("chunk_tokens"),
                       hypothesis_sentences=shipped.get("hypothesis_sentences"))


def ranking(nli: NLIDetector, drafts: list[PlantedDraft]) -> dict[str, float]:
    """How the NLI scores rank true over planted claims (``bench_mitigation.best_cut``)."""
    verifier = Verifier(nli, top_k_evidence=2, meta=None, alignment_classifier=None)
    truth, score = [], []
    for planted in drafts:
        for true, v in zip(planted.truth, verifier.verify_claims(
                list(planted.paired), passages=list(planted.passages)), strict=True):
            truth.append(true)
            score.append(v.scores.get("nli.entailment", 0.0)
                         - v.scores.get("nli.contradiction", 0.0))
    return best_cut(np.array(truth), np.array(score))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", required=True, metavar="FOLDER",
                    help="model folders; 'embedded' is the shipped model")
    ap.add_argument("--drafts", type=int, default=200)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--latency-runs", type=int, default=20)
    ap.add_argument("--name", type=result_name, default="nli_candidates", help="results file name")
    args = ap.parse_args()
    if args.latency_runs < 1:
        ap.error(f"--latency-runs must be >= 1, got {args.latency_runs}")
    if len(set(args.models)) != len(args.models):
        ap.error(f"--models names a model twice: {args.models}")
    for spec in args.models:  # every folder checked before the first long run
        if spec != "embedded" and not (Path(spec) / "config.json").is_file():
            ap.error(f"--models: {spec!r} is not a model folder (no config.json)")
    logging.basicConfig(level=logging.WARNING)
    drafts = list(planted_drafts(args.drafts, seed=args.seed))
    rows: dict[str, dict[str, Any]] = {}
    for spec in args.models:
        nli = load(spec)
        t0 = time.perf_counter()
        rank = ranking(nli, drafts)
        secs = time.perf_counter() - t0
        lat = time_verify(args.latency_runs, Verifier(nli))
        rows[spec] = {"path": str(embedded_model_dir()) if spec == "embedded" else spec,
                      **rank, "drafts_seconds": round(secs, 1), "verify_latency": lat}
        print(f"{spec}: AUROC {rank['auroc']:.4f}; best cut {rank['cut']:.3f}: removed "
              f"{rank['removed']:.3f}, kept {rank['kept']:.3f}; {args.drafts} drafts in "
              f"{secs:.0f}s; verify median {lat['median_ms']:.0f} ms (NLI "
              f"{lat['stages_ms']['nli']:.0f} ms)", flush=True)
    base = rows[args.models[0]]["verify_latency"]
    for spec, r in list(rows.items())[1:]:
        lat = r["verify_latency"]
        print(f"{spec} / {args.models[0]}: verify latency "
              f"x{lat['median_ms'] / base['median_ms']:.2f}, NLI stage "
              f"x{lat['stages_ms']['nli'] / base['stages_ms']['nli']:.2f}, AUROC "
              f"{r['auroc'] - rows[args.models[0]]['auroc']:+.4f}")
    write_result(args.name, {"drafts": args.drafts, "seed": args.seed,
                             "latency_runs": args.latency_runs, "models": rows})


if __name__ == "__main__":
    main()
