from __future__ import annotations

import json

import numpy as np
import pytest

from rag.retrieval import (
    EMBEDDED_MODEL_ID,
    BM25Retriever,
    DenseRetriever,
    HybridRetriever,
    Retriever,
    tokenize,
)
from verifier.errors import IndexMismatchError
from verifier.registry import from_config
from verifier.types import Evidence, Passage

DOCS = [
    Passage("Paris is the capital of France. The Seine river flows through Paris. "
            "It has about two million people.", "wiki/paris"),
    Passage("Berlin is the capital of Germany. Berlin has a population of 3.6 million.",
            "wiki/berlin"),
    Passage("London is the capital of England. The Thames flows through London.", "wiki/london"),
    Passage("The dog is a domesticated animal. A dog can be red or blue.", "wiki/dog"),
]
QUERIES = ["capital of Germany", "Thames river", "red dog", "Which river flows through Paris?"]


def _tiny(cls, model, **kw):
    return cls(str(model), device="cpu", dtype="float32", **kw)


def _check_spans(r, evs, top_k) -> None:
    assert 0 < len(evs) <= top_k
    assert [e.rank for e in evs] == list(range(len(evs)))
    assert all(a.score >= b.score for a, b in zip(evs, evs[1:], strict=False))
    for ev in evs:
        s, e = ev.span
        assert r.document(ev.source_id)[s:e] == ev.content


def test_retrieval_tokenize_drops_stop_words_and_punctuation() -> None:
    assert tokenize("The capital of France, is PARIS!") == ["capital", "france", "paris"]
    assert tokenize("Don't stop: 3.6 million!") == ["don", "stop", "3", "6", "million"]
    assert tokenize("") == []


def test_retrieval_bm25_finds_and_spans_slice_back() -> None:
    r = BM25Retriever(chunk_max_chars=60).index(DOCS)
    evs = r.retrieve("Which river flows through Paris?", top_k=3)
    assert evs[0].source_id == "wiki/paris"
    assert evs[0].content == "The Seine river flows through Paris."
    _check_spans(r, evs, 3)
    assert isinstance(r, Retriever)
    assert r.retrieve("the of and", top_k=3) == []  # stop-words only: nothing shares a term


def test_retrieval_bm25_scores_match_rank_bm25() -> None:
    r = BM25Retriever(k1=1.2, b=0.6, chunk_max_chars=60).index(DOCS)
    okapi = r._okapi()
    for q in [*QUERIES, "Paris Paris capital", "unknownword"]:
        np.testing.assert_allclose(r.scores(q), okapi.get_scores(tokenize(q)), rtol=1e-12)
    # ties (two identical passages) are broken by passage order
    twins = BM25Retriever().index([Passage("Red dog.", "b"), Passage("Red dog.", "a")])
    assert [e.source_id for e in twins.retrieve("dog", top_k=2)] == ["b", "a"]


@pytest.mark.parametrize("kind", ["bm25", "dense", "hybrid"])
def test_retrieval_evidence_spans_slice_back_into_long_documents(kind, tiny_embedding_model
                                                                 ) -> None:
    long_docs = [Passage(" ".join(d.text for d in DOCS[i:] + DOCS[:i]) * 3, f"long{i}")
                 for i in range(3)]
    r = {"bm25": lambda: BM25Retriever(chunk_max_chars=70),
         "dense": lambda: _tiny(DenseRetriever, tiny_embedding_model, chunk_max_chars=70),
         "hybrid": lambda: _tiny(HybridRetriever, tiny_embedding_model, chunk_max_chars=70),
         }[kind]().index(long_docs)
    assert len(r.passages) > 3 * len(long_docs)
    for evs in r.retrieve_batch(QUERIES, top_k=6):
        _check_spans(r, evs, 6)
        assert all(e.span != (0, 0) for e in evs)
    assert r.document("long1") == long_docs[1].text


@pytest.mark.parametrize("kind", ["bm25", "dense", "hybrid"])
def test_retrieval_errors_are_clear(kind, tiny_embedding_model) -> None:
    make = {"bm25": BM25Retriever,
            "dense": lambda: _tiny(DenseRetriever, tiny_embedding_model),
            "hybrid": lambda: _tiny(HybridRetriever, tiny_embedding_model)}[kind]
    with pytest.raises(ValueError, match="no index: call index"):
        make().retrieve("paris")
    with pytest.raises(ValueError, match="empty corpus"):
        make().index([])
    with pytest.raises(ValueError, match="repeats source_id 'wiki/paris'"):
        make().index([DOCS[0], DOCS[0]])
    with pytest.raises(TypeError, match="documents must be a sequence of Passage, got str"):
        make().index("Paris is in France.")
    with pytest.raises(TypeError, match=r"documents\[0\] must be a Passage, got str"):
        make().index(["Paris is in France."])
    r = make().index(DOCS)
    with pytest.raises(ValueError, match="query must not be empty"):
        r.retrieve("  ")
    with pytest.raises(ValueError, match="top_k must be an int > 0, got 0"):
        r.retrieve("paris", top_k=0)
    with pytest.raises(ValueError, match="top_k must be an int > 0, got -2"):
        r.retrieve_batch(["paris"], top_k=-2)
    with pytest.raises(TypeError, match="queries must be a sequence of str, got str"):
        r.retrieve_batch("paris")
    with pytest.raises(ValueError, match=r"queries\[1\] must not be empty"):
        r.retrieve_batch(["paris", ""])
    with pytest.raises(KeyError, match="no indexed document with source_id 'nope'"):
        r.document("nope")
    assert r.retrieve_batch([]) == []
    assert len(r.retrieve("capital", top_k=100)) <= len(r.passages)


@pytest.mark.parametrize(("cls", "kwargs", "match"), [
    (HybridRetriever, {"dense_weight": 2}, "dense_weight must be in"),
    (HybridRetriever, {"rrf_k": 0}, "rrf_k must be a positive int, got 0"),
    (HybridRetriever, {"candidates": 0}, "candidates must be a positive int, got 0"),
    (DenseRetriever, {"index_type": "lsh"}, "index_type must be 'flat', 'hnsw' or 'ivf', got"),
    (DenseRetriever, {"batch_size": 0}, "batch_size must be a positive int, got 0"),
    (DenseRetriever, {"dtype": "int8"}, "dtype must be one of"),
    (BM25Retriever, {"b": 1.5}, "b must be a number in"),
    (BM25Retriever, {"chunk_max_chars": 0}, "chunk_max_chars must be a positive int, got 0"),
    (BM25Retriever, {"chunk_overlap": -1}, "chunk_overlap must be an int >= 0, got -1"),
])
def test_retrieval_constructor_rejects_bad_values(cls, kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        cls(**kwargs)


def test_retrieval_hybrid_fuses_and_batches_like_single_queries(tiny_embedding_model) -> None:
    r = _tiny(HybridRetriever, tiny_embedding_model, chunk_max_chars=60).index(DOCS)
    batch = r.retrieve_batch(QUERIES, top_k=4)
    assert batch == [r.retrieve(q, top_k=4) for q in QUERIES]
    # the weight's extremes are the two retrievers' own rankings
    bm25 = BM25Retriever(chunk_max_chars=60).index(DOCS)
    dense = _tiny(DenseRetriever, tiny_embedding_model, chunk_max_chars=60).index(DOCS)
    r.dense_weight = 0.0
    for q in QUERIES:
        fused = [(e.source_id, e.span) for e in r.retrieve(q, top_k=3)]
        assert fused == [(e.source_id, e.span) for e in bm25.retrieve(q, top_k=3)]
    # the tiny random model ties many passages: compare the cosines of what comes back
    r.dense_weight = 1.0
    row = {(p.source_id, tuple(p.metadata["doc_span"])): i for i, p in enumerate(dense.passages)}
    for q in QUERIES:
        qv = dense.encode([q])[0]
        cos = [float(dense.embeddings[row[e.source_id, e.span]] @ qv)
               for e in r.retrieve(q, top_k=3)]
        assert cos == pytest.approx([e.score for e in dense.retrieve(q, top_k=3)], abs=1e-5)
    # fused score of a passage ranked 1st by both = 1 / (rrf_k + 1)
    r.dense_weight = 0.5
    for q, evs in zip(QUERIES, batch, strict=True):
        if evs[0].span == bm25.retrieve(q)[0].span == dense.retrieve(q)[0].span:
            assert evs[0].score == pytest.approx(1 / 61)


def test_retrieval_dense_encode_is_normalised(tiny_embedding_model) -> None:
    r = _tiny(DenseRetriever, tiny_embedding_model)
    assert r._model is None  # lazy: nothing loaded by the constructor
    emb = r.encode(["Paris is in France.", "dog"])
    assert emb.shape == (2, 32) and emb.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, rtol=1e-5)
    assert r.encode([]).shape == (0, 32)


def test_retrieval_hybrid_save_load_round_trip(tmp_path, tiny_embedding_model) -> None:
    model = str(tiny_embedding_model)
    r = _tiny(HybridRetriever, tiny_embedding_model, chunk_max_chars=80).index(DOCS)
    before = r.retrieve_batch(QUERIES, top_k=3)
    r.save(tmp_path / "idx")
    files = sorted(p.name for p in (tmp_path / "idx").iterdir())
    assert files == ["documents.json", "embeddings.npy", "faiss.index", "manifest.json",
                     "passages.json"]
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["embedding_model"] == str(tiny_embedding_model.resolve())
    assert manifest["dimension"] == 32 and manifest["format_version"] == 1
    assert manifest["init_parameters"]["rrf_k"] == 60

    again = HybridRetriever.load(tmp_path / "idx", device="cpu")
    assert again.retrieve_batch(QUERIES, top_k=3) == before
    assert again.document("wiki/dog") == DOCS[3].text
    assert again.to_dict() == {**r.to_dict(), "init_parameters": {
        **r.to_dict()["init_parameters"], "device": "cpu"}}
    # the same model spelt another way is accepted
    same = HybridRetriever.load(tmp_path / "idx", model_name_or_path=model + "/.")
    assert same.retrieve_batch(QUERIES, top_k=3) == before
    with pytest.raises(IndexMismatchError, match=f"written with embedding model '{model}'.*"
                                                 "not 'another/model'"):
        HybridRetriever.load(tmp_path / "idx", model_name_or_path="another/model")
    with pytest.raises(IndexMismatchError, match=EMBEDDED_MODEL_ID):
        HybridRetriever.load(tmp_path / "idx", model_name_or_path=EMBEDDED_MODEL_ID)
    with pytest.raises(IndexMismatchError, match="not 'retriever.bm25.v1'"):
        BM25Retriever.load(tmp_path / "idx")
    with pytest.raises(FileNotFoundError, match="manifest.json missing"):
        HybridRetriever.load(tmp_path / "nowhere")


def test_retrieval_load_refuses_inconsistent_folders(tmp_path, tiny_embedding_model) -> None:
    r = _tiny(DenseRetriever, tiny_embedding_model).index(DOCS)
    r.save(tmp_path / "idx")
    np.save(tmp_path / "idx" / "embeddings.npy", r.embeddings[:2])
    with pytest.raises(IndexMismatchError, match="is inconsistent"):
        DenseRetriever.load(tmp_path / "idx")
    mf = tmp_path / "idx" / "manifest.json"
    mf.write_text(json.dumps({**json.loads(mf.read_text()), "format_version": 99}))
    with pytest.raises(IndexMismatchError, match="has format version 99; this library reads "
                                                 "format version 1; rebuild it with "
                                                 "`verifier index DOCS --out "):
        DenseRetriever.load(tmp_path / "idx")


def test_retrieval_bm25_save_load_round_trip(tmp_path) -> None:
    r = BM25Retriever(k1=1.2, chunk_max_chars=60).index(DOCS)
    r.save(tmp_path / "bm25")
    again = BM25Retriever.load(tmp_path / "bm25")
    assert again.to_dict() == r.to_dict()
    assert again.retrieve_batch(QUERIES, top_k=4) == r.retrieve_batch(QUERIES, top_k=4)


@pytest.mark.parametrize("index_type", ["flat", "hnsw", "ivf"])
def test_retrieval_dense_index_types(tmp_path, tiny_embedding_model, index_type) -> None:
    r = _tiny(DenseRetriever, tiny_embedding_model, index_type=index_type).index(DOCS)
    flat = _tiny(DenseRetriever, tiny_embedding_model).index(DOCS)
    evs = r.retrieve("Paris", top_k=2)
    _check_spans(r, evs, 2)
    assert evs == flat.retrieve("Paris", top_k=2)  # tiny corpus: approximate search is exact
    r.save(tmp_path / index_type)
    assert DenseRetriever.load(tmp_path / index_type).retrieve("Paris", top_k=2) == evs


def test_retrieval_to_dict_rebuilds_through_the_registry(tiny_embedding_model) -> None:
    for r in (BM25Retriever(k1=1.1), _tiny(DenseRetriever, tiny_embedding_model, batch_size=8),
              _tiny(HybridRetriever, tiny_embedding_model, rrf_k=10, dense_weight=0.3)):
        config = r.to_dict()
        assert json.loads(json.dumps(config)) == config
        rebuilt = from_config(config)
        assert type(rebuilt) is type(r) and rebuilt.to_dict() == config


@pytest.mark.slow
def test_retrieval_hybrid_with_embedded_model(tmp_path) -> None:
    from verifier.embedded import embedded_embedding_model

    r = HybridRetriever().index(DOCS)
    evs = r.retrieve("How many people live in Berlin?", top_k=2)
    assert evs[0].source_id == "wiki/berlin"
    _check_spans(r, evs, 2)
    dense = r.dense.retrieve_batch(["Which river runs through the French capital?"], top_k=1)
    assert dense[0][0].source_id == "wiki/paris"
    r.save(tmp_path / "idx")
    assert json.loads((tmp_path / "idx" / "manifest.json").read_text())["embedding_model"] == \
        EMBEDDED_MODEL_ID
    again = HybridRetriever.load(tmp_path / "idx", model_name_or_path=embedded_embedding_model())
    assert again.retrieve("How many people live in Berlin?", top_k=2) == evs


@pytest.mark.parametrize("k1", [float("inf"), float("nan"), -1.0, True])
def test_retrieval_bm25_rejects_a_k1_that_is_not_finite(k1) -> None:
    from rag.retrieval import BM25Retriever

    with pytest.raises(ValueError, match="k1 must be a finite number >= 0"):
        BM25Retriever(k1=k1)


def test_bm25_reads_chinese_and_japanese_text_character_by_character() -> None:
    from rag.retrieval import tokenize
    from rag.self_correct import LexicalRelevanceGrader

    assert tokenize("Café 2020年 東京") == ["café", "2020", "年", "東", "京"]
    r = BM25Retriever().index([Passage("東京は日本の首都です。", "tokyo"),
                               Passage("Paris is the capital of France.", "paris")])
    assert [e.source_id for e in r.retrieve("首都", top_k=1)] == ["tokyo"]
    assert LexicalRelevanceGrader().grade("東京は日本の首都ですか？",
                                          [Evidence("東京は日本の首都です。", "tokyo")]) == [True]


def test_retrieval_bm25_matches_a_word_however_its_accents_are_encoded() -> None:
    nfd, nfc = "cafe\u0301", "caf\u00e9"
    assert tokenize(nfd) == tokenize(nfc) == ["café"]
    assert tokenize("ＰＡＲＩＳ ２０２０") == ["paris", "2020"]  # full-width forms
    docs = [Passage(f"Le {nfd} de Flore.", "nfd"), Passage("Le thé vert.", "tea")]
    r = BM25Retriever().index(docs)
    assert [e.source_id for e in r.retrieve(nfc, top_k=1)] == ["nfd"]
    ev = BM25Retriever().index([Passage(f"Un {nfc} noir.", "nfc")]).retrieve(nfd, top_k=1)[0]
    assert ev.source_id == "nfc" and ev.content == f"Un {nfc} noir."  # the text as written


def test_retrieval_bm25_keeps_the_combining_marks_of_a_word() -> None:
    # Hindi and Tamil vowel signs and viramas are combining marks, which "\w" does not match:
    # "हिन्दी" was the tokens "ह", "न", "द", and "தமிழ்" "தம", "ழ", so a passage full of other
    # words with those letters ranked first
    assert tokenize("हिन्दी भाषा") == ["हिन्दी", "भाषा"]
    assert tokenize("தமிழ் மொழி, இந்தியாவில்!") == ["தமிழ்", "மொழி", "இந்தியாவில்"]
    assert tokenize("\U00011013\U00011038 x\u0301") == ["\U00011013\U00011038", "x\u0301"]
    docs = [Passage("हिन्दी भारत की एक भाषा है।", "hi-language"),
            Passage("नदी के किनारे हाथी दिन भर नहाते हैं।", "hi-river"),
            Passage("தமிழ் தென்னிந்தியாவில் பேசப்படும் ஒரு திராவிட மொழி ஆகும்.", "ta-language"),
            Passage("தம்பியின் கோழி வாழை தின்றது.", "ta-hen"),
            Passage("Paris is the capital of France.", "en")]
    r = BM25Retriever().index(docs)
    for query, source in (("हिन्दी", "hi-language"), ("தமிழ்", "ta-language"),
                          ("Paris", "en")):
        assert [e.source_id for e in r.retrieve(query, top_k=5)] == [source]


def _edit_manifest(folder, edit, name: str = "manifest.json") -> None:
    """Edit the JSON file ``name`` (the manifest) of a saved index in place."""
    path = folder / name
    content = json.loads(path.read_text())
    edit(content)
    path.write_text(json.dumps(content))


@pytest.mark.parametrize("edit, match", [
    (lambda m: m.pop("format_version"), "has no format version; this library reads format "
                                        "version 1; rebuild it"),
    (lambda m: m.pop("init_parameters"), "manifest.json has no 'init_parameters' .*rebuild it"),
    (lambda m: m["init_parameters"].update(stemmer="porter"),
     r"has parameters \['stemmer'\] that this library's BM25Retriever does not know"),
    (lambda m: m["init_parameters"].update(k1="high"), "bad saved parameter: k1 must be"),
    (lambda m: m.update(init_parameters=[1.5]), "'init_parameters' = \\[1.5\\], of the wrong"),
])
def test_retrieval_load_names_the_folder_of_a_manifest_from_another_version(
        tmp_path, edit, match) -> None:
    folder = tmp_path / "idx"
    BM25Retriever().index(DOCS).save(folder)
    _edit_manifest(folder, edit)
    with pytest.raises(IndexMismatchError, match=f"index at '{folder}'.*{match}"):
        BM25Retriever.load(folder)


def test_retrieval_load_takes_defaults_for_parameters_an_older_manifest_lacks(
        tmp_path, caplog) -> None:
    folder = tmp_path / "idx"
    r = BM25Retriever(k1=1.2).index(DOCS)
    r.save(folder)
    _edit_manifest(folder, lambda m: m["init_parameters"].pop("b"))
    again = BM25Retriever.load(folder)
    assert again.k1 == 1.2 and again.b == BM25Retriever().b
    assert "no saved value for ['b']" in caplog.text


@pytest.mark.parametrize("key", ["embedding_model", "dimension"])
def test_retrieval_dense_load_names_a_missing_manifest_key(tmp_path, tiny_embedding_model,
                                                           key) -> None:
    folder = tmp_path / "idx"
    _tiny(HybridRetriever, tiny_embedding_model).index(DOCS).save(folder)
    _edit_manifest(folder, lambda m: m.pop(key))
    with pytest.raises(IndexMismatchError, match=f"index at '{folder}': manifest.json has no "
                                                 f"'{key}'.*rebuild it"):
        HybridRetriever.load(folder)


@pytest.mark.parametrize("name, content, match", [
    ("manifest.json", "{", "manifest.json is not JSON"),
    ("manifest.json", "[]", "manifest.json holds a list, not an object"),
    ("passages.json", "[{}]", "is not readable: .*rebuild it"),
    ("documents.json", "[1]", "is not readable: documents.json must map"),
    ("faiss.index", "junk", "faiss.index is not readable"),
    ("embeddings.npy", "junk", "embeddings.npy is not readable"),
])
def test_retrieval_load_names_the_folder_of_a_damaged_file(tmp_path, tiny_embedding_model,
                                                           name, content, match) -> None:
    folder = tmp_path / "idx"
    _tiny(DenseRetriever, tiny_embedding_model).index(DOCS).save(folder)
    (folder / name).write_text(content)
    with pytest.raises(IndexMismatchError, match=f"index at '{folder}'.*{match}"):
        DenseRetriever.load(folder)


# an index whose documents were edited after the save used to load, and then broke the span
# promise: document(source_id) raised KeyError, or its span no longer held the passage
@pytest.mark.parametrize("edit, match", [
    (lambda d: d.pop("wiki/berlin"), "passage 1: its document 'wiki/berlin' is not in "
                                     "documents.json"),
    (lambda d: d.update({"wiki/paris": "Paris is the capital of Spain. " * 3}),
     r"passage 0: documents.json's 'wiki/paris'\[0:101\] is not its text"),
])
def test_retrieval_load_refuses_documents_that_disagree_with_the_passages(
        tmp_path, edit, match) -> None:
    folder = tmp_path / "idx"
    BM25Retriever().index(DOCS).save(folder)
    _edit_manifest(folder, edit, "documents.json")
    with pytest.raises(IndexMismatchError, match=f"index at '{folder}': passages.json and "
                                                 f"documents.json disagree on {match}.*"
                                                 "rebuild it with `verifier index"):
        BM25Retriever.load(folder)


@pytest.mark.parametrize("name", ["passages.json", "documents.json", "embeddings.npy"])
def test_retrieval_load_names_a_missing_file(tmp_path, tiny_embedding_model, name) -> None:
    folder = tmp_path / "idx"
    _tiny(HybridRetriever, tiny_embedding_model).index(DOCS).save(folder)
    (folder / name).unlink()
    with pytest.raises(IndexMismatchError, match=f"index at '{folder}': {name} is .*"
                                                 "rebuild it with `verifier index"):
        HybridRetriever.load(folder)


@pytest.mark.parametrize("cls", [DenseRetriever, HybridRetriever])
def test_retrieval_dense_passages_fit_the_embedding_models_token_limit(
        cls, tiny_embedding_model) -> None:
    # the tiny model reads 64 tokens; the document is one passage of ~760 characters and ~160
    # tokens, of which it used to embed the first 62 and silently drop the rest (the sentence
    # at the end could not be found by dense search)
    numbers = " ".join(str(1000 + 37 * i) for i in range(150))
    doc = Passage(f"The codes are {numbers}. The river is blue.", "codes")
    r = _tiny(cls, tiny_embedding_model).index([doc, DOCS[0]])
    dense = r if cls is DenseRetriever else r.dense
    tokenizer, limit = dense._model.tokenizer, dense._model.max_seq_length
    assert limit == 64
    lengths = [len(tokenizer(p.text)["input_ids"]) for p in r.passages]
    assert max(lengths) <= limit and len(r.passages) == 4  # 3 of the codes
    for p in r.passages:  # spans still slice back into the document
        s, e = p.metadata["doc_span"]
        assert r.document(p.source_id)[s:e] == p.text
    assert any(p.text.endswith("The river is blue.") for p in r.passages)
    assert r.passages[-1].text == DOCS[0].text  # a short document stays whole


def test_retrieval_dense_says_when_a_query_is_read_in_part(tiny_embedding_model,
                                                             caplog) -> None:
    r = _tiny(DenseRetriever, tiny_embedding_model).index(DOCS)
    r.retrieve("What colour is the river?", top_k=1)
    assert "longer than the embedding model" not in caplog.text
    long_query = "What colour is the river? " + " ".join(str(1000 + i) for i in range(80))
    r.retrieve(long_query, top_k=1)
    assert "1 of 1 queries are longer than the embedding model's 62 tokens" in caplog.text


@pytest.mark.slow
def test_retrieval_dense_finds_the_end_of_a_long_passage_with_minilm() -> None:
    numbers = " ".join(f"{i * 7919 % 100000:05d}" for i in range(120))  # ~720 characters
    docs = [Passage(f"{numbers} The secret ingredient of the soup is saffron.", "long"),
            Passage("Tomatoes are red fruits.", "tomato"),
            Passage("Bread is baked in an oven.", "bread")]
    r = DenseRetriever(device="cpu", dtype="float32").index(docs)
    tokenizer = r._model.tokenizer
    assert max(len(tokenizer(p.text)["input_ids"]) for p in r.passages) <= 256
    best = r.retrieve("What is the secret ingredient of the soup?", top_k=1)[0]
    assert best.source_id == "long" and best.content.endswith("is saffron.")


def test_retrieval_a_query_of_invisible_characters_is_empty() -> None:
    r = BM25Retriever().index(DOCS)
    for bad in ("\u200b", " \u00ad "):
        with pytest.raises(ValueError, match="query must not be empty"):
            r.retrieve(bad)
        with pytest.raises(ValueError, match=r"queries\[1\] must not be empty"):
            r.retrieve_batch(["Paris", bad])


def test_retrieval_an_approximate_index_that_finds_fewer_says_so(tiny_embedding_model,
                                                                  caplog) -> None:
    r = _tiny(DenseRetriever, tiny_embedding_model, index_type="hnsw").index(DOCS)

    class Short:  # an approximate search that misses passages (FAISS pads with -1)
        d = r._faiss.d

        def search(self, q, k):
            ids = np.full((len(q), k), -1)
            ids[:, 0] = 0
            return np.zeros((len(q), k), dtype=np.float32), ids

    r._faiss = Short()
    with caplog.at_level("WARNING", logger="rag.retrieval"):
        got = r.retrieve_batch(["Paris", "Berlin"], top_k=3)
    assert [len(x) for x in got] == [1, 1]
    assert "hnsw index: 2 of 2 queries got fewer than the 3 passages asked for" in caplog.text
