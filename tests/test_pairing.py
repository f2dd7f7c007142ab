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
    with pytest.raises(ValueError, match="top_k must be an int > 0, got 0"):
        EvidencePairer(top_k=0)


def test_pairing_pair_claims_with_documents_slices_back() -> None:
    from rag.pairing import pair_claims

    docs = {"doc": DOC, "b": "Other text. Berlin is the capital of Germany. End."}
    r = BM25Retriever(chunk_max_chars=50).index([Passage(t, sid) for sid, t in docs.items()])
    evs = r.retrieve("capital Berlin Paris", top_k=4)
    claims = [Claim("Berlin is the capital of Germany."), Claim("Paris is the capital.")]
    out = pair_claims(claims, evs, documents=docs, top_k=2, embedding_model=HashEncoder())
    assert [len(p.evidence) for p in out] == [2, 2]
    assert out[0].evidence[0].source_id == "b"
    assert out[0].evidence[0].content == "Berlin is the capital of Germany."
    assert out[1].evidence[0].content == "Paris is the capital of France."
    for p in out:
        assert [e.score for e in p.evidence] == sorted((e.score for e in p.evidence),
                                                       reverse=True)
        for ev in p.evidence:
            assert docs[ev.source_id][ev.span[0]:ev.span[1]] == ev.content


def test_pairing_documents_relocate_or_reject_bad_spans() -> None:
    from rag.pairing import split_evidence

    # a passage whose span indexes something else (e.g. its chunk): found in the document
    ev = Evidence("The Seine flows through Paris.", "doc", (0, 30))
    (sent,) = split_evidence([ev], documents={"doc": DOC})
    assert DOC[sent.span[0]:sent.span[1]] == sent.content
    with pytest.raises(ValueError, match="evidence from 'doc' at span \\(0, 5\\) is not in"):
        split_evidence([Evidence("Rome!", "doc", (0, 5))], documents={"doc": DOC})
    # a source the mapping does not know keeps its own span
    (other,) = split_evidence([Evidence("Rome is old.", "x", (7, 19))], documents={"doc": DOC})
    assert other.span == (7, 19)


def test_pairing_lexical_only_needs_no_model_and_round_trips() -> None:
    from verifier.registry import from_config

    pairer = EvidencePairer(dense_weight=0.0, top_k=1)
    out = pairer.pair([Claim("The Seine flows through Paris.")],
                      [Evidence(DOC, "doc", (0, len(DOC)))])
    assert out[0].evidence[0].content == "The Seine flows through Paris."
    assert out[0].evidence[0].score == pytest.approx(1.0)  # all claim words, lexical only
    assert pairer._encoder is None  # never loaded
    again = from_config(pairer.to_dict())
    assert isinstance(again, EvidencePairer) and again.to_dict() == pairer.to_dict()
    with pytest.raises(ValueError, match="dense_weight must be in \\[0, 1\\], got 2"):
        EvidencePairer(dense_weight=2)
    with pytest.raises(TypeError, match="claims must hold Claim objects, got str"):
        pairer.pair(["x"], [])  # type: ignore[list-item]
    assert pairer.pair([], [Evidence(DOC, "doc", (0, len(DOC)))]) == []


def test_pairing_keeps_only_sentences_that_reach_min_score() -> None:
    from rag.pairing import pair_claims

    # lexical only: score = share of the claim's content words in the sentence
    doc = "The Seine flows through Paris. Paris hosts a flower market. Berlin has bears."
    claim = Claim("The Seine flows through Paris in France.")  # 5 content words
    evs = [Evidence(doc, "doc", (0, len(doc)))]
    kept = EvidencePairer(dense_weight=0.0, top_k=3, min_score=0.2).pair([claim], evs)[0]
    assert [e.content for e in kept.evidence] == ["The Seine flows through Paris.",
                                                  "Paris hosts a flower market."]
    assert [e.score for e in kept.evidence] == pytest.approx([0.8, 0.2])  # 0.2 reaches it
    strict = EvidencePairer(dense_weight=0.0, top_k=3, min_score=0.5).pair([claim], evs)[0]
    assert [e.content for e in strict.evidence] == ["The Seine flows through Paris."]
    every = EvidencePairer(dense_weight=0.0, top_k=3, min_score=0.0).pair([claim], evs)[0]
    assert len(every.evidence) == 3 and every.evidence[2].content == "Berlin has bears."
    # a claim none of whose sentences reaches min_score gets no evidence at all
    claim2 = Claim("Bears live in Berlin zoo.")  # bears, live, berlin, zoo
    (half,) = EvidencePairer(dense_weight=0.0, top_k=3, min_score=0.5).pair([claim2], evs)
    assert [(e.content, e.score) for e in half.evidence] == [("Berlin has bears.", 0.5)]
    (none,) = EvidencePairer(dense_weight=0.0, top_k=3, min_score=0.9).pair([claim2], evs)
    assert none.claim == claim2 and none.evidence == ()
    for bad in (-0.1, 1.5, True, "0.2", [0.2]):
        with pytest.raises(ValueError, match="min_score must be in \\[0, 1\\], got"):
            EvidencePairer(min_score=bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="min_score must be in \\[0, 1\\], got"):
            pair_claims([claim], evs, min_score=bad)  # type: ignore[arg-type]


def test_pairing_min_score_zero_keeps_sentences_with_negative_cosines() -> None:
    class Opposite:  # the claim's embedding points away from every sentence's
        def encode(self, texts):
            out = np.zeros((len(texts), 2), dtype=np.float32)
            out[:, 0] = [1.0 if t.startswith("Claim") else -1.0 for t in texts]
            return out

    evs = [Evidence("Alpha beta. Gamma delta.", "d", (0, 24))]
    (every,) = EvidencePairer(encoder=Opposite(), top_k=3, min_score=0.0).pair(
        [Claim("Claim about zeta.")], evs)
    assert [e.content for e in every.evidence] == ["Alpha beta.", "Gamma delta."]
    assert all(e.score < 0 for e in every.evidence)
    (floored,) = EvidencePairer(encoder=Opposite(), top_k=3).pair([Claim("Claim zeta.")], evs)
    assert floored.evidence == ()


def test_pairing_with_a_sentence_transformers_model(tiny_embedding_model) -> None:
    from rag.pairing import pair_claims

    evs = [Evidence(DOC, "doc", (0, len(DOC)))]
    out = pair_claims([Claim("The Seine flows through Paris.")], evs, top_k=4,
                      embedding_model=str(tiny_embedding_model))
    best = out[0].evidence
    assert len(best) == 4 and best[0].content == "The Seine flows through Paris."
    assert all(DOC[e.span[0]:e.span[1]] == e.content for e in best)
    assert [e.rank for e in best] == [0, 1, 2, 3]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"dense_weight": True}, "dense_weight must be in"),
    ({"batch_size": 0}, "batch_size must be an int > 0, got 0"),
    ({"batch_size": 2.5}, "batch_size must be an int > 0"),
])
def test_pairing_rejects_bad_settings(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        EvidencePairer(**kwargs)


def test_split_evidence_drops_a_sentence_of_invisible_characters() -> None:
    # a line holding only a zero-width space became evidence the NLI model cannot score
    doc = "Paris is the capital of France.\n\u200b\nIt has 2 million people."
    got = [e.content for e in split_evidence([Evidence(doc, "d", (0, len(doc)))])]
    assert got == ["Paris is the capital of France.", "It has 2 million people."]


def test_split_evidence_cuts_a_sentence_over_max_chars_at_clause_boundaries() -> None:
    body = ", ".join(f"item number {k} of the list" for k in range(100))  # no full stop
    doc = f"Intro here. {body}. Last one."
    units = split_evidence([Evidence(doc, "d", (0, len(doc)))], max_chars=200)
    assert units[0].content == "Intro here." and units[-1].content == "Last one."
    pieces = units[1:-1]
    assert len(pieces) > 1 and all(len(u.content) <= 200 for u in pieces)
    assert all(u.content.endswith((",", ".")) for u in pieces)  # at a comma, not mid-clause
    assert all(doc[u.span[0]:u.span[1]] == u.content for u in units)
    assert " ".join(u.content for u in pieces) == f"{body}."  # nothing lost
    # the default leaves such a list whole up to MAX_SENTENCE_CHARS, and None always
    default = split_evidence([Evidence(doc, "d", (0, len(doc)))])  # 2,900 chars: > 1,000
    assert len(default) > 9 and max(len(u.content) for u in default) <= 400
    assert len(split_evidence([Evidence(doc, "d", (0, len(doc)))], max_chars=None)) == 3


def test_sentence_pieces_without_clause_boundaries() -> None:
    from verifier.text import sentence_pieces

    words = "word " * 100  # no comma: cut at a space
    assert [b - a for a, b in sentence_pieces(words, 0, len(words), 100)] == [99] * 5
    run = "x" * 250  # no space either: cut after max_chars
    assert sentence_pieces(run, 0, 250, 100) == [(0, 100), (100, 200), (200, 250)]
    dash = "alpha beta gamma - delta epsilon zeta"
    assert [dash[a:b] for a, b in sentence_pieces(dash, 0, len(dash), 30)] == [
        "alpha beta gamma", "- delta epsilon zeta"]
    assert sentence_pieces("  short  ", 0, 9, 100) == [(2, 7)]


@pytest.mark.parametrize("bad", [0, -1, 2.5, "1000", True])
def test_max_sentence_chars_is_checked(bad: object) -> None:
    with pytest.raises(ValueError, match=r"max_sentence_chars must be an int > 0 or None, "
                                         rf"got {bad!r}"):
        EvidencePairer(encoder=HashEncoder(), max_sentence_chars=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=rf"max_chars must be an int > 0 or None, got {bad!r}"):
        split_evidence([Evidence("Paris.", "d", (0, 6))], max_chars=bad)  # type: ignore[arg-type]
    assert EvidencePairer(encoder=HashEncoder()).to_dict()["init_parameters"][
        "max_sentence_chars"] == 1000
