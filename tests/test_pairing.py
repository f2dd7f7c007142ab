from __future__ import annotations

import zlib

import numpy as np
import pytest

from rag.pairing import EvidencePairer, split_evidence
from rag.retrieval import BM25Retriever
from verifier.types import Claim, Evidence, Passage


class HashEncoder:
    """Deterministic bag-of-words encoder for tests."""

    def encode(self, texts):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, zlib.crc32(w.strip(".,").encode()) % 64] += 1
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


DOC = ("Intro text here. Paris is the capital of France. The Seine flows through Paris. "
       "Berlin is in Germany.")


def test_pairing_spans_slice_back_to_document() -> None:
    r = BM25Retriever(chunk_max_chars=50).index([Passage(DOC, "doc")])
    evs = r.retrieve("capital of France Seine", top_k=3)
    pairs = EvidencePairer(encoder=HashEncoder(), top_k=2).pair(
        [Claim("Paris is the capital of France."), Claim("The Seine is in Paris.")], evs)
    assert [p.claim.text for p in pairs] == ["Paris is the capital of France.",
                                             "The Seine is in Paris."]
    assert pairs[0].evidence[0].content == "Paris is the capital of France."
    for p in pairs:
        for ev in p.evidence:
            assert DOC[ev.span[0]:ev.span[1]] == ev.content
        assert [e.rank for e in p.evidence] == list(range(len(p.evidence)))


def test_pairing_dedupes_overlapping_chunks() -> None:
    a = Evidence(DOC[17:80], "doc", (17, 80))
    b = Evidence(DOC[48:80], "doc", (48, 80))
    sents = split_evidence([a, b])
    assert len({(s.span) for s in sents}) == len(sents)


def test_pairing_no_evidence_and_bad_args() -> None:
    out = EvidencePairer(encoder=HashEncoder()).pair([Claim("x y")], [])
    assert out[0].evidence == ()
    with pytest.raises(ValueError, match="top_k must be > 0, got 0"):
        EvidencePairer(top_k=0)
