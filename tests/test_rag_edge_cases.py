"""Edge cases of the rag stages.

Characters split over byte-level tokens, generator and pipeline settings, evidence given
without spans, index load and re-index, LLM claims of one sentence, the pipeline's pairer.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pytest
from conftest import save_tiny_llama

from mitigation.mitigator import Mitigator
from rag.decompose import LLMDecomposer
from rag.generation import HFGenerator, OpenAICompatibleGenerator, StaticGenerator, token_offsets
from rag.pairing import EvidencePairer, split_evidence
from rag.pipeline import RAGPipeline
from rag.retrieval import BM25Retriever, DenseRetriever, HybridRetriever
from verifier.errors import IndexMismatchError
from verifier.types import Claim, ClaimVerdict, Evidence, Passage, Status

DOCS = [Passage("Paris is the capital of France.", "a1"),
        Passage("Berlin is the capital of Germany.", "a2"),
        Passage("London is in England.", "a3")]
NEW_DOCS = [Passage("Rome is in Italy.", "b1"), Passage("Madrid is in Spain.", "b2")]


# --------------------------------------------------------------------- token offsets
class _ByteTokenizer:
    """Byte-level tokenizer: token id = byte value; decodes like a byte-level BPE."""

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        return bytes(ids).decode("utf-8", errors="replace")


@pytest.mark.parametrize("text", ["Café in Zürich 🍕 is nice.", "東京は日本の首都です。", "naïve"])
def test_generation_token_offsets_keep_split_characters_whole(text) -> None:
    ids = list(text.encode("utf-8"))
    out, spans = token_offsets(_ByteTokenizer(), ids)
    assert out == text == _ByteTokenizer().decode(ids)
    assert len(spans) == len(ids) and spans[0][0] == 0 and spans[-1][1] == len(out)
    assert all(a <= b == c for (a, b), (c, _) in zip(spans, spans[1:], strict=False))
    pieces = [out[a:b] for a, b in spans]
    assert "".join(pieces) == out and "\ufffd" not in "".join(pieces)
    for ch in set(text):  # a multi-byte character: empty spans, then the completing token
        n = len(ch.encode("utf-8"))
        if n > 1:
            k = next(i for i, p in enumerate(pieces) if ch in p)
            assert pieces[k] == ch and pieces[k - n + 1:k] == [""] * (n - 1)


def test_generation_token_offsets_keep_an_unfinished_character_at_the_end() -> None:
    # a guard for the cut-back logic's edge (the old code passed this case too): a character
    # that never completes keeps its U+FFFD, and the spans still reach the end of the text
    ids = list("ok 🍕".encode())[:-1]
    out, spans = token_offsets(_ByteTokenizer(), ids)
    assert out == _ByteTokenizer().decode(ids) and out.endswith("\ufffd")
    assert spans[-1][1] == len(out)


@pytest.fixture(scope="module")
def tiny_byte_lm(tmp_path_factory):
    """A tiny random Llama over a byte-level BPE vocabulary (one token per byte)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {t: i for i, t in enumerate(["<eos>", *sorted(alphabet)])}
    tk = Tokenizer(models.BPE(vocab, [], unk_token=None))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    folder = tmp_path_factory.mktemp("tiny-byte-lm")
    PreTrainedTokenizerFast(tokenizer_object=tk, eos_token="<eos>",
                            pad_token="<eos>").save_pretrained(folder)
    return save_tiny_llama(folder, len(vocab), eos_id=0, layers=1, positions=256)


def test_generation_score_text_equals_the_continuation_with_split_characters(
        tiny_byte_lm) -> None:
    gen = HFGenerator(str(tiny_byte_lm), device="cpu", use_chat_template=False)
    cont = "Café in Zürich 🍕"
    s = gen.score("Say hi.", cont)
    assert s.text == cont and "".join(s.tokens) == cont
    assert len(s.tokens) == len(s.token_logprobs) == len(cont.encode("utf-8"))
    assert all(s.text[a:b] == t for (a, b), t in zip(s.token_offsets, s.tokens, strict=True))
    assert "🍕" in s.tokens and s.tokens.count("") == len("é🍕ü".encode()) - 3
    g = gen.generate("Say hi.", n=1)[0]  # random bytes: the text is still what decode gives
    assert "".join(g.tokens) == g.text and len(g.tokens) == len(g.token_logprobs)


@pytest.mark.slow
def test_generation_token_offsets_with_the_embedded_smollm2_tokenizer() -> None:
    from transformers import AutoTokenizer

    from verifier.embedded import embedded_generator_gguf

    path, gguf = embedded_generator_gguf()
    tok = AutoTokenizer.from_pretrained(str(path), gguf_file=gguf)
    for s in ["Café in Zürich 🍕 is nice.", "東京は日本の首都です。"]:
        ids = tok(s, add_special_tokens=False)["input_ids"]
        text, spans = token_offsets(tok, ids)
        assert text == tok.decode(ids, skip_special_tokens=True) == s
        assert "".join(text[a:b] for a, b in spans) == text


# --------------------------------------------------------------------- validation
@pytest.mark.parametrize(("kwargs", "match"), [
    ({"temperature": float("nan")}, "temperature must be >= 0 and finite, got nan"),
    ({"temperature": float("inf")}, "temperature must be >= 0 and finite, got inf"),
    ({"max_new_tokens": True}, "max_new_tokens must be a positive int, got True"),
    ({"top_p": "x"}, "top_p must be a number in \\(0, 1\\], got 'x'"),
    ({"top_p": None}, "top_p must be a number in \\(0, 1\\], got None"),
    ({"top_p": float("nan")}, "top_p must be a number in \\(0, 1\\], got nan"),
    ({"seed": "abc"}, "seed must be an int or None, got 'abc'"),
    ({"seed": 1.5}, "seed must be an int or None, got 1.5"),
    # torch.manual_seed's range: beyond it, generate() failed with "Overflow when unpacking"
    ({"seed": 2**64, "temperature": 0.7},
     r"seed must be an int from -2\*\*63 to 2\*\*64 - 1 \(torch's range\), got "
     r"18446744073709551616"),
    ({"seed": -(2**63) - 1}, "seed must be an int from -2"),
])
def test_generation_hf_rejects_bad_settings(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        HFGenerator(**kwargs)


def test_generation_hf_accepts_numpy_numbers() -> None:
    g = HFGenerator(temperature=np.float32(0.5), top_p=np.float64(0.9), seed=np.int64(3))
    assert g.seed == 3 and type(g.seed) is int and g.top_p == pytest.approx(0.9)
    assert HFGenerator(seed=2**64 - 1).seed == 2**64 - 1 and HFGenerator(seed=-1).seed == -1


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"timeout": float("nan")}, "timeout must be > 0 and finite, got nan"),
    ({"timeout": float("inf")}, "timeout must be > 0 and finite, got inf"),
    ({"temperature": float("nan")}, "temperature must be >= 0 and finite, got nan"),
    ({"seed": "abc"}, "seed must be an int or None, got 'abc'"),
    ({"seed": True}, "seed must be an int or None, got True"),
])
def test_generation_openai_rejects_bad_settings(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        OpenAICompatibleGenerator("m", **kwargs)


def test_generation_openai_seed_is_a_python_int() -> None:
    # a numpy seed would not serialise into the JSON request body
    g = OpenAICompatibleGenerator("m", seed=np.int64(3))
    assert g.seed == 3 and type(g.seed) is int


def test_pipeline_rejects_bool_top_k() -> None:
    with pytest.raises(ValueError, match="top_k must be an int > 0, got True"):
        RAGPipeline(BM25Retriever(), StaticGenerator("x"), decomposer=object(), top_k=True)


def test_pipeline_cuts_a_draft_that_goes_on_with_its_prompt() -> None:
    # the embedded 135M model answered, then wrote "Question: ..." and the instruction, whose
    # sentences became claims ("Do not copy the list of passages.")
    from rag.decompose import SpacyDecomposer

    echo = ("Paris is the capital of France.\n\nQuestion: What is the capital of France?\n\n"
            "Answer the question in two or three sentences of your own. Do not copy the list "
            "of passages.")
    retriever = BM25Retriever().index([Passage("Paris is the capital of France.", "doc1")])
    result = RAGPipeline(retriever, StaticGenerator(echo),
                         decomposer=SpacyDecomposer(model="not_installed"),
                         pairer=EvidencePairer(dense_weight=0.0)).run(
        "What is the capital of France?")
    assert result.draft.text == "Paris is the capital of France."
    assert [c.claim.text for c in result.claims] == ["Paris is the capital of France."]
    # a draft the user brings is taken as it is
    given = RAGPipeline(retriever, StaticGenerator("x"),
                        decomposer=SpacyDecomposer(model="not_installed"),
                        pairer=EvidencePairer(dense_weight=0.0)).run(
        "What is the capital of France?", draft=echo)
    assert given.draft.text == echo


# --------------------------------------------------------------------- pairing
def test_pairing_keeps_different_texts_of_one_source_without_spans() -> None:
    ev = [Evidence("Paris is in France.", "atlas"), Evidence("Lima is in Peru!!!!", "atlas")]
    assert [e.content for e in split_evidence(ev)] == ["Paris is in France.",
                                                       "Lima is in Peru!!!!"]
    out = EvidencePairer(dense_weight=0.0, min_score=0.0).pair([Claim("Lima is in Peru.")], ev)
    assert out[0].evidence[0].content == "Lima is in Peru!!!!"


def test_pairing_still_dedupes_overlapping_chunks() -> None:
    doc = "Intro. Paris is in France. Berlin is in Germany."
    ev = [Evidence(doc[0:26], "d", (0, 26)), Evidence(doc[7:48], "d", (7, 48))]
    assert [(e.content, e.span) for e in split_evidence(ev)] == [
        ("Intro.", (0, 6)), ("Paris is in France.", (7, 26)), ("Berlin is in Germany.", (27, 48))]


# --------------------------------------------------------------------- retrieval
def _tiny(cls, model, **kw):
    return cls(model, device="cpu", dtype="float32", **kw)


@pytest.mark.parametrize("cls", [DenseRetriever, HybridRetriever])
def test_retrieval_load_uses_the_given_model_path(cls, tiny_embedding_model, tmp_path) -> None:
    link = tmp_path / "link-to-model"
    os.symlink(tiny_embedding_model, link)
    r = _tiny(cls, str(link)).index(DOCS)
    r.save(tmp_path / "idx")
    os.unlink(link)  # the saved path is gone; the same model lives on at its real path
    loaded = cls.load(tmp_path / "idx", model_name_or_path=str(tiny_embedding_model),
                      device="cpu")
    assert loaded.to_dict()["init_parameters"]["model_name_or_path"] == str(
        tiny_embedding_model)
    assert loaded.retrieve(DOCS[0].text, top_k=1)[0].source_id == "a1"  # same text: cos 1
    # without it: the saved one, recorded as the resolved folder (the link's target)
    default = cls.load(tmp_path / "idx", device="cpu")
    assert default.to_dict()["init_parameters"]["model_name_or_path"] == str(
        Path(tiny_embedding_model).resolve())


def _other_weights(src: Path, dst: Path) -> Path:
    """A copy of the model folder ``src`` with other weights (same architecture)."""
    import shutil

    from safetensors.torch import load_file, save_file

    shutil.copytree(src, dst)
    for f in dst.rglob("*.safetensors"):
        tensors = load_file(f)
        save_file({k: v + 0.5 if v.is_floating_point() else v for k, v in tensors.items()}, f)
    return dst


@pytest.mark.parametrize("cls", [DenseRetriever, HybridRetriever])
def test_retrieval_load_checks_the_model_by_its_files(cls, tiny_embedding_model, tmp_path,
                                                      monkeypatch) -> None:
    import shutil

    # written from a relative path: another model at that relative path elsewhere is refused
    (tmp_path / "a").mkdir()
    shutil.copytree(tiny_embedding_model, tmp_path / "a" / "enc")
    monkeypatch.chdir(tmp_path / "a")
    r = _tiny(cls, "enc").index(DOCS)
    r.save(tmp_path / "idx")
    (tmp_path / "b").mkdir()
    _other_weights(tiny_embedding_model, tmp_path / "b" / "enc")
    monkeypatch.chdir(tmp_path / "b")
    assert cls.load(tmp_path / "idx", device="cpu").retrieve(DOCS[0].text, top_k=1)[0] \
        .source_id == "a1"  # the saved (absolute) folder, not ./enc of this directory
    with pytest.raises(IndexMismatchError, match="its files differ|not '"):
        cls.load(tmp_path / "idx", model_name_or_path="enc", device="cpu")
    # the same model moved: found by its files; the old folder gone is said at load
    shutil.move(tmp_path / "a" / "enc", tmp_path / "moved")
    with pytest.raises(FileNotFoundError, match="is not there any more; pass "
                                                "model_name_or_path="):
        cls.load(tmp_path / "idx", device="cpu")
    moved = cls.load(tmp_path / "idx", model_name_or_path=str(tmp_path / "moved"), device="cpu")
    assert moved.retrieve(DOCS[0].text, top_k=1)[0].source_id == "a1"


@pytest.mark.parametrize("kind", ["bm25", "dense", "hybrid"])
def test_retrieval_failed_reindex_keeps_the_old_index(kind, tiny_embedding_model,
                                                      monkeypatch) -> None:
    r = {"bm25": BM25Retriever,
         "dense": lambda: _tiny(DenseRetriever, str(tiny_embedding_model)),
         "hybrid": lambda: _tiny(HybridRetriever, str(tiny_embedding_model))}[kind]()
    r.index(DOCS)
    before = r.retrieve_batch(["capital of France", "London England"], top_k=3)

    def boom(*args, **kwargs):
        raise MemoryError("simulated OOM")

    # a step after chunking fails: the BM25 statistics (bm25) or the encoding (dense, hybrid)
    if kind == "bm25":
        monkeypatch.setattr(r, "_okapi", boom)
    else:
        monkeypatch.setattr(r if kind == "dense" else r.dense, "encode", boom)
    with pytest.raises(MemoryError):
        r.index(NEW_DOCS)
    monkeypatch.undo()
    assert list(r.documents) == ["a1", "a2", "a3"]
    assert r.retrieve_batch(["capital of France", "London England"], top_k=3) == before
    if kind != "bm25":
        dense = r if kind == "dense" else r.dense
        assert dense._faiss.ntotal == len(dense.passages) == len(dense.embeddings)


@pytest.mark.parametrize("kind", ["bm25", "dense", "hybrid"])
def test_retrieval_failed_save_keeps_the_old_index_on_disk(kind, tiny_embedding_model,
                                                           tmp_path, monkeypatch) -> None:
    make = {"bm25": BM25Retriever,
            "dense": lambda: _tiny(DenseRetriever, str(tiny_embedding_model)),
            "hybrid": lambda: _tiny(HybridRetriever, str(tiny_embedding_model))}[kind]
    cls = type(make())
    folder = tmp_path / "idx"
    old = make().index(DOCS)
    old.save(folder)
    files = {f.name: f.read_bytes() for f in folder.iterdir()}
    before = old.retrieve_batch(["capital of France", "London England"], top_k=3)

    # the disk fills up while the new index is written: the BM25 index's last corpus file,
    # the dense ones' FAISS index (written after the corpus files)
    if kind == "bm25":
        write_text = Path.write_text

        def full(self, *args, **kwargs):
            if self.name == "passages.json":
                raise OSError(28, "No space left on device")
            return write_text(self, *args, **kwargs)

        monkeypatch.setattr(Path, "write_text", full)
    else:
        import faiss

        def full(*args, **kwargs):
            raise RuntimeError("No space left on device")

        monkeypatch.setattr(faiss, "write_index", full)
    with pytest.raises((OSError, RuntimeError), match="No space left"):
        make().index(NEW_DOCS).save(folder)
    monkeypatch.undo()
    assert {f.name: f.read_bytes() for f in folder.iterdir()} == files  # no staging left
    again = cls.load(folder)
    assert list(again.documents) == ["a1", "a2", "a3"]
    assert again.retrieve_batch(["capital of France", "London England"], top_k=3) == before
    make().index(NEW_DOCS).save(folder)  # a save that succeeds replaces it
    assert list(cls.load(folder).documents) == ["b1", "b2"]
    assert sorted(files) == sorted(f.name for f in folder.iterdir())


# --------------------------------------------------------------------- LLM decomposer
def test_decompose_llm_claims_of_one_sentence_do_not_overlap() -> None:
    draft = "Paris is the capital of France and has 2 million people."
    d = LLMDecomposer(StaticGenerator(
        '["Paris has 2 million people.", "Paris is the capital of France."]'), on_error="raise")
    claims = d.decompose(draft)
    assert [c.text for c in claims] == ["Paris has 2 million people.",
                                        "Paris is the capital of France."]
    assert [draft[slice(*c.span)] for c in claims] == ["has 2 million people.",
                                                       "Paris is the capital of France"]
    text = Mitigator().mitigate(draft, [ClaimVerdict(c, Status.SUPPORTED) for c in claims]).text
    assert "Paris" in text


def test_decompose_llm_drops_a_claim_sharing_no_word_with_the_draft(caplog) -> None:
    draft = "Paris is the capital of France. Berlin is big."
    d = LLMDecomposer(StaticGenerator('["Tokyo is in Japan.", "Berlin is big."]'),
                      on_error="raise")
    with caplog.at_level(logging.WARNING, logger="rag.decompose"):
        claims = d.decompose(draft)
    assert [(c.text, c.span) for c in claims] == [("Berlin is big.", (32, 46))]
    assert "Tokyo is in Japan." in caplog.text and "dropped" in caplog.text


def test_decompose_llm_more_claims_than_words_become_one_claim() -> None:
    draft = "Yes. Paris!"
    d = LLMDecomposer(StaticGenerator('["Paris exists.", "Paris is real.", "Paris is old."]'),
                      on_error="raise")
    claims = d.decompose(draft)
    assert len(claims) == 1 and claims[0].span == (5, 11)
    assert claims[0].text == "Paris exists. Paris is real. Paris is old."


# --------------------------------------------------------------------- pipeline
def test_pipeline_default_pairer_reuses_a_dense_retrievers_encoder(tiny_embedding_model
                                                                    ) -> None:
    dense = _tiny(DenseRetriever, str(tiny_embedding_model))
    p = RAGPipeline(dense, StaticGenerator("x"), decomposer=object())
    assert p.pairer.encoder is dense
    hybrid = _tiny(HybridRetriever, str(tiny_embedding_model))
    assert RAGPipeline(hybrid, StaticGenerator("x"), decomposer=object()).pairer.encoder \
        is hybrid.dense
