"""``make demo``: the main job on the embedded defaults, offline.

Indexes the bundled corpus, asks a question, prints the draft, its claims and each claim's
evidence (source id + character span), and the embedded NLI model's scores for each claim
against its best evidence sentence.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from importlib import resources
from pathlib import Path
from typing import IO, Any

DEFAULT_QUESTION = "When was the Eiffel Tower built, and how tall is it?"


def corpus_path() -> Path:
    """Path of the bundled demo corpus (``verifier/demo_data/corpus.jsonl``)."""
    return Path(str(resources.files("verifier") / "demo_data" / "corpus.jsonl"))


def run_demo(question: str | None = None, *, out: IO[str] = sys.stdout,
             max_new_tokens: int = 96) -> dict[str, Any]:
    """Run the demo and return its result as a JSON-serialisable dict."""
    from rag.generation import HFGenerator
    from rag.pipeline import RAGPipeline
    from rag.retrieval import HybridRetriever
    from verifier.cli_rag import _print_result, load_documents
    from verifier.nli import NLIDetector

    question = question or DEFAULT_QUESTION
    t0 = time.perf_counter()
    docs = load_documents(corpus_path())
    retriever = HybridRetriever(chunk_max_chars=400).index(docs)
    print(f"Indexed {len(docs)} documents ({len(retriever.passages)} passages) in "
          f"{time.perf_counter() - t0:.1f}s with the embedded all-MiniLM-L6-v2 + BM25.\n",
          file=out)
    pipe = RAGPipeline(retriever, HFGenerator(max_new_tokens=max_new_tokens), top_k=4)
    res = pipe.run(question)
    _print_result(res, out)
    detector = NLIDetector()
    pairs = [(ce.evidence[0].content, ce.claim.text) for ce in res.claims if ce.evidence]
    probs = detector.predict(pairs) if pairs else []
    print("\nNLI on each claim vs its best evidence (embedded nli-minilm-l6; "
          "entailment / neutral / contradiction):", file=out)
    k = 0
    nli_rows = []
    for i, ce in enumerate(res.claims, start=1):
        if not ce.evidence:
            print(f"  {i}. no evidence found", file=out)
            continue
        e, n, c = (float(x) for x in probs[k])
        k += 1
        nli_rows.append({"claim": ce.claim.text, "entailment": e, "neutral": n,
                         "contradiction": c})
        print(f"  {i}. {e:.2f} / {n:.2f} / {c:.2f}  {ce.claim.text}", file=out)
    print(f"\nStage timings (s): {res.timings}", file=out)
    return {**res.to_dict(), "nli": nli_rows}


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m verifier.demo``."""
    ap = argparse.ArgumentParser(description="Run the offline demo.")
    ap.add_argument("question", nargs="?", default=None)
    ap.add_argument("--max-new-tokens", type=int, default=96)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    run_demo(args.question, max_new_tokens=args.max_new_tokens)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
