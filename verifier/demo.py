"""``make demo``: the main job on the embedded defaults, offline.

Indexes the bundled corpus, asks a question, prints the draft, its claims and each claim's
evidence (source id + character span), verifies each claim (embedded NLI model + deterministic
checks) and prints the mitigated answer with citations and references.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import IO, Any

from verifier.errors import ModelLoadError

logger = logging.getLogger(__name__)

DEFAULT_QUESTION = "When was the Eiffel Tower built, and how tall is it?"


def corpus_path() -> Path:
    """Path of the bundled demo corpus (``verifier/demo_data/corpus.jsonl``)."""
    return Path(str(resources.files("verifier") / "demo_data" / "corpus.jsonl"))


def run_demo(question: str | None = None, *, out: IO[str] | None = None,
             max_new_tokens: int = 96) -> dict[str, Any]:
    """Run the demo and return its result as a JSON-serialisable dict.

    Args:
        question: The question (``None``: :data:`DEFAULT_QUESTION`).
        out: Where the report is printed (default: ``sys.stdout`` at call time).
        max_new_tokens: Draft length limit (>= 1).

    Raises:
        ValueError: An empty question or a ``max_new_tokens`` under 1, before anything loads.

    Returns:
        The pipeline result (``question``, ``passages``, ``prompt``, ``draft``, ``claims``
        with their evidence, ``timings``) plus ``verdicts`` and the mitigated ``answer``.
    """
    from verifier.checking import is_int
    from verifier.text import is_blank

    if question is not None and (not isinstance(question, str) or is_blank(question)):
        raise ValueError(f"question must be a non-empty str or None (the default question), "
                         f"got {question!r}")
    if not is_int(max_new_tokens) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be an int >= 1, got {max_new_tokens!r}")
    out = sys.stdout if out is None else out
    from mitigation.mitigator import Mitigator
    from rag.generation import HFGenerator
    from rag.pipeline import RAGPipeline
    from rag.retrieval import HybridRetriever
    from verifier.cli_rag import _print_result, load_documents
    from verifier.nli import NLIDetector
    from verifier.verify import Verifier

    question = DEFAULT_QUESTION if question is None else question
    t0 = time.perf_counter()
    generator = HFGenerator(max_new_tokens=max_new_tokens, stop=["\n\n"])  # one paragraph
    with ThreadPoolExecutor(max_workers=1) as pool:
        # The generator (GGUF parsing, mostly Python) loads while the corpus is embedded.
        loading = pool.submit(generator.warm_up)
        docs = load_documents(corpus_path())
        retriever = HybridRetriever(chunk_max_chars=400).index(docs)
        print(f"Indexed {len(docs)} documents ({len(retriever.passages)} passages) in "
              f"{time.perf_counter() - t0:.1f}s with the embedded all-MiniLM-L6-v2 + BM25.\n",
              file=out)
        loading.result()
    print(f"Loaded the embedded SmolLM2-135M-Instruct generator "
          f"({time.perf_counter() - t0:.1f}s since start).\n", file=out)
    pipe = RAGPipeline(retriever, generator, top_k=4)
    res = pipe.run(question)
    _print_result(res, out)
    verifier = Verifier(NLIDetector(), decomposer=pipe.decomposer, pairer=pipe.pairer)
    verdicts = verifier.verify_claims(res.claims, passages=res.passages)
    print("\nVerification (embedded nli-minilm-l6 + deterministic checks):", file=out)
    for i, v in enumerate(verdicts, start=1):
        p = v.probabilities
        print(f"  {i}. {v.status.value:17s} (supported {p.get('Supported', 0):.2f}, "
              f"contradicted {p.get('Contradictory', 0):.2f})  {v.claim.text}", file=out)
    answer = Mitigator("balanced").mitigate(res.draft.text, verdicts,
                                            documents=retriever.documents)
    print("\nFinal answer (balanced mitigation):\n", file=out)
    print(answer.text, file=out)
    print(f"\nGrounding score {answer.grounding_score:.2f}, hallucination score "
          f"{answer.hallucination_score:.2f}", file=out)
    print(f"\nStage timings (s): {res.timings}", file=out)
    return {**res.to_dict(), "verdicts": [v.to_dict() for v in verdicts],
            "answer": answer.to_dict()}


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m verifier.demo``."""
    from verifier.cli_rag import _positive_int
    from verifier.text import is_blank

    ap = argparse.ArgumentParser(description="Run the offline demo.")
    ap.add_argument("question", nargs="?", default=None,
                    help=f"the question (default: {DEFAULT_QUESTION!r})")
    ap.add_argument("--max-new-tokens", type=_positive_int, default=96,
                    help="draft length limit, in tokens (default 96)")
    args = ap.parse_args(argv)
    if args.question is not None and is_blank(args.question):
        ap.error(f"question {args.question!r}: empty (give a question, or none for the "
                 f"default one)")
    # Offline, and no progress bars (read by tqdm when it is first imported). Idle OpenMP
    # workers sleep instead of spinning: on a shared CPU, spinning made generation up to 5x
    # slower (read when torch is first imported).
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    logging.basicConfig(level=logging.WARNING)
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # keep the demo's output readable
    try:
        run_demo(args.question, max_new_tokens=args.max_new_tokens)
    except ModelLoadError as exc:  # an embedded model package missing: say which, no trace
        logger.debug("error details", exc_info=True)
        print(f"verifier.demo: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
