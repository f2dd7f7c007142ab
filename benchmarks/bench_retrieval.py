"""Retrieval benchmark: index >= 10,000 passages built from the FEVER dev evidence sentences,
then time BM25, dense and hybrid retrieval and measure recall of the gold evidence sentence.

    python benchmarks/bench_retrieval.py [--queries 0] [--passages 10000] [--retrievers ...]

Corpus: the ``evidence`` field of ``fever-dev/fever_dev_rte_claim_evidence.jsonl`` is the gold
sentences joined in FEVER's tokenisation (each ends with `` .``); it is split back into
sentences and deduplicated. FEVER dev has only about 7,100 unique evidence sentences, so
sentences from the web pages of WiCE dev (``wice-dev/entailment_retrieval_claim_dev.jsonl``,
never gold for a FEVER claim) are added as distractors, a fixed random sample, until the
corpus holds ``--passages`` passages. Each sentence is one passage (one document).

Queries: the FEVER dev claims (all 13,332 by default, or ``--queries N`` evenly spaced), read
through ``load_preset("fever")`` as every other benchmark reads them (CSV-escaped claims
unescaped; the loader needs the FEVER-Symmetric files beside fever-dev, for its split). A
claim's hit at k = any of its gold sentences among the top k passages.

Each retriever runs in its own fresh process, so its peak RSS is its own (model, corpus,
index and query batch together). Build time of the dense and hybrid indexes includes
embedding every passage. Timings are wall-clock on whatever CPU runs this; on a machine shared
with other jobs they are noisy.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import re
import resource
import time

from _common import result_name, write_result

from verifier.datasets import data_root, load_preset

#: FEVER's tokenised sentences end with " ." (or " ?", " !"); the next starts after a space.
_FEVER_SENT_END = re.compile(r"(?<= [.?!])\s+")
RETRIEVERS = ("bm25", "dense", "hybrid", "dense-fp32")


def fever_sentences(evidence: str) -> list[str]:
    """Split a FEVER ``evidence`` field back into its sentences."""
    return [s.strip() for s in _FEVER_SENT_END.split(evidence) if s.strip()]


def build_corpus(n_passages: int, seed: int = 0) -> tuple[list[tuple[str, str]], list[str],
                                                            list[set[str]], dict]:
    """Return ``(passages as (id, text), claims, gold ids per claim, corpus stats)``."""
    root = data_root()
    rows = load_preset("fever", root=root)  # every pair, claims as the loader reads them
    sent_id: dict[str, str] = {}
    claims, gold = [], []
    for r in rows:
        sents = fever_sentences(r.evidence_text)
        ids = {sent_id.setdefault(s, f"fever{len(sent_id)}") for s in sents}
        claims.append(r.claim)
        gold.append(ids)
    n_fever = len(sent_id)
    distractors: list[str] = []
    if n_passages > n_fever:
        pool: set[str] = set()
        with (root / "wice-dev" / "entailment_retrieval_claim_dev.jsonl").open(
                encoding="utf-8") as fh:
            for line in fh:
                for s in json.loads(line)["evidence"]:
                    s = s.strip()
                    if len(s) >= 40 and not s.startswith("(meta data)") and s not in sent_id:
                        pool.add(s)
        need = n_passages - n_fever
        if need > len(pool):
            raise SystemExit(f"only {len(pool)} distractor sentences for the {need} asked for")
        distractors = random.Random(seed).sample(sorted(pool), need)
    passages = [(i, s) for s, i in sent_id.items()]
    passages += [(f"wice{k}", s) for k, s in enumerate(distractors)]
    stats = {"passages": len(passages), "fever_sentences": n_fever,
             "wice_distractor_sentences": len(distractors), "claims": len(claims),
             "labels": {lab: sum(r.label == lab for r in rows)
                        for lab in sorted({r.label for r in rows})}}
    return passages, claims, gold, stats


def _rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def run_one(name: str, passages: list[tuple[str, str]], queries: list[str],
            gold: list[set[str]], top_k: int, batch_size: int, single: int) -> dict:
    """Build one retriever in this (fresh) process, query it, return its figures."""
    import torch

    from rag.retrieval import BM25Retriever, DenseRetriever, HybridRetriever
    from verifier.embedded import resolve_device, resolve_dtype
    from verifier.types import Passage

    docs = [Passage(text, sid) for sid, text in passages]
    chunk_max_chars = 4000  # each sentence stays one passage
    r: BM25Retriever | DenseRetriever | HybridRetriever
    if name == "bm25":
        r = BM25Retriever(chunk_max_chars=chunk_max_chars)
    elif name == "hybrid":
        r = HybridRetriever(batch_size=batch_size, chunk_max_chars=chunk_max_chars)
    else:
        r = DenseRetriever(batch_size=batch_size, dtype="float32" if name == "dense-fp32" else None,
                           chunk_max_chars=chunk_max_chars)
    info: dict = {"torch_threads": torch.get_num_threads()}
    if name != "bm25":
        device = resolve_device(None)
        info["device"] = device
        info["dtype"] = "float32" if name == "dense-fp32" else resolve_dtype(None, device)
        t0 = time.perf_counter()
        assert not isinstance(r, BM25Retriever)
        r.warm_up()
        info["model_load_seconds"] = round(time.perf_counter() - t0, 2)
    rss0 = _rss_mb()
    t0 = time.perf_counter()
    r.index(docs)
    build = time.perf_counter() - t0
    rss1 = _rss_mb()
    t0 = time.perf_counter()
    hits = r.retrieve_batch(queries, top_k=top_k)
    qtime = time.perf_counter() - t0
    # one query at a time (interactive use), on the first `single` queries
    sample = queries[:single]
    t0 = time.perf_counter()
    for q in sample:
        r.retrieve(q, top_k=top_k)
    single_s = time.perf_counter() - t0

    def recall(k: int) -> float:
        return sum(bool({e.source_id for e in h[:k]} & g) for h, g in zip(hits, gold, strict=True)
                   ) / len(queries)

    return {**info, "passages": len(r.passages), "build_seconds": round(build, 2),
            "index_rss_increase_mb": round(rss1 - rss0, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "queries_per_second_batch": round(len(queries) / qtime, 1),
            "single_query_latency_ms": round(1000 * single_s / max(1, len(sample)), 2),
            "recall@1": round(recall(1), 4), f"recall@{top_k}": round(recall(top_k), 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=0,
                    help="FEVER dev claims used as queries, evenly spaced (0: all 13,332)")
    ap.add_argument("--passages", type=int, default=10_000,
                    help="corpus size; WiCE distractor sentences fill it past FEVER's ~7,100")
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=64, help="embedding batch size")
    ap.add_argument("--single", type=int, default=200,
                    help="queries also timed one at a time (single-query latency)")
    ap.add_argument("--retrievers", default="bm25,dense,hybrid",
                    help=f"comma-separated, from {','.join(RETRIEVERS)} (dense-fp32: dense "
                         "retriever forced to float32, to check the bf16 default)")
    ap.add_argument("--out", type=result_name, default="retrieval",
                    help="name of benchmarks/results/<out>.json")
    args = ap.parse_args()
    names = [n for n in args.retrievers.split(",") if n]
    bad = sorted(set(names) - set(RETRIEVERS))
    if bad:
        ap.error(f"unknown retriever(s) {bad}; choose from {RETRIEVERS}")

    passages, claims, gold, stats = build_corpus(args.passages)
    n = len(claims)
    qidx = list(range(n)) if args.queries <= 0 or args.queries >= n else \
        [round(i * n / args.queries) for i in range(args.queries)]
    queries, qgold = [claims[i] for i in qidx], [gold[i] for i in qidx]
    print(f"corpus: {stats['passages']} passages = {stats['fever_sentences']} unique FEVER dev "
          f"evidence sentences + {stats['wice_distractor_sentences']} WiCE web-page sentences "
          "(distractors, never gold)")
    print(f"queries: {len(queries)} of the {n} FEVER dev claims"
          f"{'' if len(queries) == n else ', evenly spaced'}; hit = a gold sentence in the top "
          f"{args.top_k}; single-query latency on the first {min(args.single, len(queries))}")
    print("each retriever runs in a fresh process; the CPU is shared with other jobs, so "
          "timings are noisy\n")

    note = ("Wall-clock on a CPU shared with other agents' jobs (noisy). Dense and hybrid build "
            "times include embedding every passage. Peak RSS is per retriever (own process: "
            "Python, libraries, model, corpus, index, query results).")
    results: dict[str, dict] = {}
    record = {
        "corpus": stats, "queries": len(queries), "top_k": args.top_k,
        "query_selection": "all claims" if len(queries) == n else "evenly spaced claims",
        "data": {"fever": "fever-dev/fever_dev_rte_claim_evidence.jsonl",
                 "distractors": "wice-dev/entailment_retrieval_claim_dev.jsonl"},
        "note": note, "command": "python benchmarks/bench_retrieval.py " +
        " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items()),
        "results": results}
    ctx = mp.get_context("spawn")
    for k, name in enumerate(names):
        with ctx.Pool(1) as pool:
            res = pool.apply(run_one, (name, passages, queries, qgold, args.top_k,
                                       args.batch_size, args.single))
        results[name] = res
        print(f"{name:10s} build {res['build_seconds']:7.1f}s  "
              f"{res['queries_per_second_batch']:8.1f} queries/s (batch)  "
              f"{res['single_query_latency_ms']:7.1f} ms/query (single)  "
              f"recall@1 {res['recall@1']:.3f}  recall@{args.top_k} "
              f"{res[f'recall@{args.top_k}']:.3f}  peak RSS {res['peak_rss_mb']:.0f} MiB "
              f"(index +{res['index_rss_increase_mb']:.0f} MiB)")
        # written after every retriever, so an interrupted run keeps what it measured
        write_result(args.out, {**record, "complete": k == len(names) - 1})
    print("\n" + note)


if __name__ == "__main__":
    main()
