"""Pair each claim with its best evidence sentences among the retrieved passages."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from rag.retrieval import DenseRetriever, tokenize
from verifier.text import trimmed_sentence_spans
from verifier.types import Claim, ClaimEvidence, Evidence

logger = logging.getLogger(__name__)


class Encoder(Protocol):
    """Anything with ``encode(texts) -> (n, dim)`` normalised embeddings (a DenseRetriever)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``."""
        ...


def split_evidence(evidences: Sequence[Evidence]) -> list[Evidence]:
    """Split passage-level evidence into sentence-level evidence with document spans.

    A passage's ``span`` gives its offset in the document, so each sentence's span is
    ``(passage_start + s, passage_start + e)``. Duplicate sentences (same source and span,
    e.g. from overlapping chunks) are kept once.
    """
    out: list[Evidence] = []
    seen: set[tuple[str, int, int]] = set()
    for ev in evidences:
        base = ev.span[0]
        for s, e in trimmed_sentence_spans(ev.content):
            key = (ev.source_id, base + s, base + e)
            if key in seen:
                continue
            seen.add(key)
            out.append(Evidence(ev.content[s:e], ev.source_id, (base + s, base + e), ev.score,
                                ev.rank))
    return out


class EvidencePairer:
    """For each claim, the top-k evidence sentences by dense + lexical similarity.

    ``score = dense_weight * cosine + (1 - dense_weight) * overlap``, where overlap is the share
    of the claim's content words found in the sentence.

    Args:
        model_name_or_path: Sentence-transformers model (``None``: the embedded MiniLM);
            ignored when ``encoder`` is given.
        encoder: An object with ``encode(texts)`` to reuse (e.g. the retriever's dense part).
        top_k: Sentences kept per claim.
        dense_weight: Weight of the cosine similarity in [0, 1].
        device: Torch device for the default encoder.

    Example:
        >>> pairer = EvidencePairer(top_k=1)  # doctest: +SKIP
        >>> pairer.pair([Claim("Paris is in France.")], [Evidence("Paris is in France.", "d1",
        ...             (0, 19))])[0].evidence[0].span  # doctest: +SKIP
        (0, 19)
    """

    def __init__(self, model_name_or_path: str | None = None, *, encoder: Encoder | None = None,
                 top_k: int = 3, dense_weight: float = 0.5, device: str | None = None) -> None:
        if not isinstance(top_k, int) or top_k <= 0:
            raise ValueError(f"top_k must be > 0, got {top_k!r}")
        if not 0.0 <= float(dense_weight) <= 1.0:
            raise ValueError(f"dense_weight must be in [0, 1], got {dense_weight!r}")
        self.model_name_or_path, self.top_k, self.dense_weight = (model_name_or_path, top_k,
                                                                  float(dense_weight))
        self.encoder: Encoder = encoder or DenseRetriever(model_name_or_path, device=device)

    def pair(self, claims: Sequence[Claim], evidences: Sequence[Evidence]) -> list[ClaimEvidence]:
        """Return one :class:`ClaimEvidence` per claim, in claim order (best sentence first)."""
        sentences = split_evidence(evidences)
        if not claims:
            return []
        if not sentences:
            return [ClaimEvidence(c, ()) for c in claims]
        if self.dense_weight > 0:
            emb = self.encoder.encode([c.text for c in claims] + [s.content for s in sentences])
            cos = emb[: len(claims)] @ emb[len(claims):].T
        else:
            cos = np.zeros((len(claims), len(sentences)), dtype=np.float32)
        sent_tokens = [set(tokenize(s.content)) for s in sentences]
        out = []
        for ci, claim in enumerate(claims):
            ct = set(tokenize(claim.text))
            lex = np.array([len(ct & st) / len(ct) if ct else 0.0 for st in sent_tokens])
            score = self.dense_weight * cos[ci] + (1 - self.dense_weight) * lex
            top = np.argsort(-score, kind="stable")[: self.top_k]
            out.append(ClaimEvidence(claim, tuple(
                Evidence(sentences[j].content, sentences[j].source_id, sentences[j].span,
                         float(score[j]), r) for r, j in enumerate(top))))
        return out
