from __future__ import annotations

import pytest

from rag.chunking import chunk_document
from rag.retrieval import BM25Retriever, DenseRetriever, HybridRetriever, Retriever, tokenize
from verifier.errors import IndexMismatchError
from verifier.types import Passage

DOCS = [
    Passage("Paris is the capital of France. The Seine river flows through Paris. "
            "It has about two million people.", "wiki/paris"),
    Passage("Berlin is the capital of Germany. Berlin has a population of 3.6 million.",
            "wiki/berlin"),
    Passage("London is the capital of England. The Thames flows through London.", "wiki/london"),
    Passage("The dog is a domesticated animal. A dog can be red or blue.", "wiki/dog"),
]


def test_retrieval_tokenize_drops_stop_words_and_punctuation() -> None:
    assert tokenize("The capital of France, is PARIS!") == ["capital", "france", "paris"]


def test_chunking_spans_slice_back_and_cover(tmp_path) -> None:
    text = " ".join(f"Sentence number {i} talks about the city of Paris." for i in range(40))
    passages = chunk_document(text, "doc", max_chars=200, overlap=1)
    assert len(passages) > 5
    for p in passages:
        s, e = p.metadata["doc_span"]
        assert text[s:e] == p.text and len(p.text) <= 200
    assert passages[0].metadata["doc_span"][0] == 0
    assert passages[-1].metadata["doc_span"][1] == len(text)
    for a, b in zip(passages, passages[1:], strict=False):
        assert b.metadata["doc_span"][0] <= a.metadata["doc_span"][1]


def test_chunking_long_sentence_is_split_not_dropped() -> None:
    text = "word " * 300
    passages = chunk_document(text, "d", max_chars=100, overlap=0)
    assert "".join(p.text for p in passages).replace(" ", "") == text.replace(" ", "")


@pytest.mark.parametrize("kwargs", [{"max_chars": 0}, {"overlap": -1}])
def test_chunking_rejects_bad_arguments(kwargs) -> None:
    with pytest.raises(ValueError, match="must be"):
        chunk_document("a b", "d", **kwargs)


def _check_spans(r, evs) -> None:
    for ev in evs:
        s, e = ev.span
        assert r.document(ev.source_id)[s:e] == ev.content


def test_retrieval_bm25_finds_and_spans_slice_back() -> None:
    r = BM25Retriever(chunk_max_chars=60).index(DOCS)
    evs = r.retrieve("Which river flows through Paris?", top_k=3)
    assert evs[0].source_id == "wiki/paris" and "Seine" in evs[0].content
    assert [e.rank for e in evs] == list(range(len(evs)))
    _check_spans(r, evs)
    assert isinstance(r, Retriever)


def test_retrieval_errors_are_clear(tiny_embedding_model) -> None:
    with pytest.raises(ValueError, match="empty corpus"):
        BM25Retriever().index([])
    r = BM25Retriever().index(DOCS)
    with pytest.raises(ValueError, match="query must not be empty"):
        r.retrieve("  ")
    with pytest.raises(ValueError, match="top_k must be > 0, got 0"):
        r.retrieve("paris", top_k=0)
    with pytest.raises(ValueError, match="no index"):
        DenseRetriever(str(tiny_embedding_model)).retrieve("paris")
    with pytest.raises(ValueError, match="repeats source_id"):
        BM25Retriever().index([DOCS[0], DOCS[0]])
    with pytest.raises(ValueError, match="dense_weight must be in"):
        HybridRetriever(dense_weight=2)


def test_retrieval_hybrid_save_load_round_trip(tmp_path, tiny_embedding_model) -> None:
    model = str(tiny_embedding_model)
    r = HybridRetriever(model, chunk_max_chars=80, device="cpu", dtype="float32").index(DOCS)
    queries = ["capital of Germany", "Thames river", "red dog"]
    before = r.retrieve_batch(queries, top_k=3)
    for evs in before:
        _check_spans(r, evs)
    r.save(tmp_path / "idx")
    again = HybridRetriever.load(tmp_path / "idx", device="cpu")
    assert again.retrieve_batch(queries, top_k=3) == before
    assert again.to_dict() == {**r.to_dict(), "init_parameters": {
        **r.to_dict()["init_parameters"], "device": "cpu"}}
    with pytest.raises(IndexMismatchError, match="written with embedding model"):
        HybridRetriever.load(tmp_path / "idx", model_name_or_path="another/model")
    with pytest.raises(IndexMismatchError, match="not 'retriever.bm25.v1'"):
        BM25Retriever.load(tmp_path / "idx")


@pytest.mark.parametrize("index_type", ["flat", "hnsw", "ivf"])
def test_retrieval_dense_index_types(tmp_path, tiny_embedding_model, index_type) -> None:
    r = DenseRetriever(str(tiny_embedding_model), index_type=index_type, dtype="float32",
                       device="cpu").index(DOCS)
    evs = r.retrieve("Paris", top_k=2)
    assert 1 <= len(evs) <= 2
    _check_spans(r, evs)
    r.save(tmp_path / index_type)
    assert DenseRetriever.load(tmp_path / index_type).retrieve("Paris", top_k=2) == evs


@pytest.mark.slow
def test_retrieval_hybrid_with_embedded_model() -> None:
    r = HybridRetriever().index(DOCS)
    evs = r.retrieve("How many people live in Berlin?", top_k=2)
    assert evs[0].source_id == "wiki/berlin"
    _check_spans(r, evs)
