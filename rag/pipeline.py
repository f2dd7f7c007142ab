"""The Baseline RAG pipeline: retrieve, generate, decompose, pair."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from rag.decompose import Decomposer, SpacyDecomposer
from rag.generation import Generator, HFGenerator, build_prompt, trim_echo
from rag.pairing import MIN_SCORE, EvidencePairer, check_min_score
from rag.retrieval import DenseRetriever, HybridRetriever, Retriever
from verifier.checking import is_int
from verifier.types import ClaimEvidence, Evidence, Generation

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RAGResult:
    """Everything the pipeline produced for one question.

    Attributes:
        question: The question.
        passages: Retrieved passages, best first (spans index their documents).
        prompt: The prompt given to the generator.
        draft: The generated draft (with token log-probs when the backend gives them).
        claims: Each atomic claim of the draft with its best evidence sentences.
        timings: Seconds spent per stage.
    """

    question: str
    passages: tuple[Evidence, ...]
    prompt: str
    draft: Generation
    claims: tuple[ClaimEvidence, ...]
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict."""
        return {"question": self.question, "passages": [p.to_dict() for p in self.passages],
                "prompt": self.prompt, "draft": self.draft.to_dict(),
                "claims": [c.to_dict() for c in self.claims], "timings": dict(self.timings)}


class RAGPipeline:
    """Retriever -> Generator -> Decomposer -> pairing, with the embedded defaults.

    Args:
        retriever: Anything with ``retrieve(query, *, top_k)``.
        generator: Anything with ``generate(prompt, *, n)`` (default: the embedded SmolLM2).
        decomposer: Anything with ``decompose(text)`` (default: spaCy).
        pairer: Claim/evidence pairing (default: reuses the dense encoder of a
            :class:`~rag.retrieval.DenseRetriever` or :class:`~rag.retrieval.HybridRetriever`).
        top_k: Passages retrieved per question.
        min_evidence_score: Least pairing score of an evidence sentence, for the default
            ``pairer`` (as in :class:`verifier.Verifier`); ignored when ``pairer`` is given.
    """

    def __init__(self, retriever: Retriever, generator: Generator | None = None,
                 decomposer: Decomposer | None = None, pairer: EvidencePairer | None = None,
                 *, top_k: int = 5, min_evidence_score: float = MIN_SCORE) -> None:
        if not is_int(top_k) or top_k <= 0:
            raise ValueError(f"top_k must be an int > 0, got {top_k!r}")
        min_evidence_score = check_min_score(min_evidence_score, "min_evidence_score")
        self.retriever = retriever
        self._generator = generator
        self.decomposer = decomposer or SpacyDecomposer()
        if pairer is None:
            encoder: DenseRetriever | None = None
            if isinstance(retriever, HybridRetriever):
                encoder = retriever.dense
            elif isinstance(retriever, DenseRetriever):
                encoder = retriever
            pairer = EvidencePairer(encoder=encoder, min_score=min_evidence_score)
        self.pairer = pairer
        self.top_k = int(top_k)

    @property
    def generator(self) -> Generator:
        """The generator (the embedded SmolLM2 is created on first use when none was given)."""
        if self._generator is None:
            self._generator = HFGenerator()
        return self._generator

    def run(self, question: str, *, draft: str | None = None) -> RAGResult:
        """Answer ``question`` (or take ``draft`` as the answer) and pair its claims."""
        t: dict[str, float] = {}
        t0 = time.perf_counter()
        passages = self.retriever.retrieve(question, top_k=self.top_k)
        t["retrieve"] = time.perf_counter() - t0
        prompt = build_prompt(question, passages)
        t0 = time.perf_counter()
        # a small model may go on with the prompt itself after its answer: that is cut
        gen = Generation(draft) if draft is not None else trim_echo(
            self.generator.generate(prompt)[0], prompt)
        t["generate"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        claims = self.decomposer.decompose(gen.text)
        t["decompose"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        paired = self.pairer.pair(claims, passages)
        t["pair"] = time.perf_counter() - t0
        return RAGResult(question, tuple(passages), prompt, gen, tuple(paired),
                         {k: round(v, 4) for k, v in t.items()})
