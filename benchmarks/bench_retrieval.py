"""Retrieval benchmark: index the FEVER dev evidence sentences (>= 10,000 passages), then time
BM25, dense and hybrid retrieval and measure recall@5 of the gold evidence sentence.

    python benchmarks/bench_retrieval.py [--queries 2000]
"""

from __future__ import annotations

import argparse
import re
import time

from _common import peak_rss_mb, write_result

from rag.retrieval import BM25Retriever, DenseRetriever, HybridRetriever
from verifier.datasets import load_preset
from verifier.types import Passage

_SPLIT = re.compile(r"(?<=\.)\s+(?=[A-Z0-9])")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=2000, help="claims used as queries")
    ap.add_argument("--top-k", type=int, default=5)
    ap.add_argument("--no-distractors", dest="distractors", action="store_false",
                    help="index the FEVER sentences only")
    args = ap.parse_args()

    examples = load_preset("fever")
    sent_id: dict[str, str] = {}
    gold: list[set[str]] = []
    for ex in examples:
        ids = set()
        for s in _SPLIT.split(ex.evidence_text):
            s = s.strip()
            if len(s) < 10:
                continue
            ids.add(sent_id.setdefault(s, f"s{len(sent_id)}"))
        gold.append(ids)
    n_fever = len(sent_id)
    # FEVER dev has fewer unique evidence sentences than the 10,000 passages asked for: the
    # COVID-Fact evidence sentences are added as distractors (they are never gold).
    if args.distractors:
        for ex in load_preset("covidfact"):
            for s in ex.evidence:
                s = s.strip()
                if len(s) >= 10:
                    sent_id.setdefault(s, f"d{len(sent_id)}")
    docs = [Passage(s, i) for s, i in sent_id.items()]
    print(f"corpus: {len(docs)} passages ({n_fever} unique FEVER dev evidence sentences + "
          f"{len(docs) - n_fever} COVID-Fact distractor sentences); queries: {args.queries} "
          f"of the {len(examples)} FEVER dev claims, evenly spaced (timing and recall)")
    step = max(1, len(examples) // args.queries)
    qidx = list(range(0, len(examples), step))[: args.queries]
    queries = [examples[i].claim for i in qidx]

    results = {}
    base_mem = peak_rss_mb()
    for name, factory in (("bm25", lambda: BM25Retriever(chunk_max_chars=2000)),
                          ("dense", lambda: DenseRetriever(chunk_max_chars=2000, batch_size=128)),
                          ("hybrid", lambda: HybridRetriever(chunk_max_chars=2000,
                                                             batch_size=128))):
        r = factory()
        if hasattr(r, "warm_up"):
            r.warm_up()
        t0 = time.perf_counter()
        r.index(docs)
        build = time.perf_counter() - t0
        t0 = time.perf_counter()
        hits = r.retrieve_batch(queries, top_k=args.top_k)
        qtime = time.perf_counter() - t0
        recall = sum(bool({e.source_id for e in h} & gold[i]) for h, i in zip(hits, qidx,
                                                                                strict=True))
        results[name] = {"passages": len(r.passages), "build_seconds": round(build, 2),
                         "queries_per_second": round(len(queries) / qtime, 1),
                         f"recall@{args.top_k}": round(recall / len(queries), 4),
                         "peak_rss_mb_so_far": round(peak_rss_mb(), 1)}
        print(f"{name:7s} build {build:7.1f}s  {len(queries) / qtime:8.1f} queries/s  "
              f"recall@{args.top_k} {recall / len(queries):.3f}  peak RSS {peak_rss_mb():.0f} MiB")
    print("(dense and hybrid build times include embedding every passage on this CPU; peak RSS "
          "is the process's running maximum, so later rows include earlier indexes)")
    write_result("retrieval", {"corpus_passages": len(docs), "fever_passages": n_fever,
                               "queries": len(queries),
                               "baseline_rss_mb": round(base_mem, 1), "results": results})


if __name__ == "__main__":
    main()
