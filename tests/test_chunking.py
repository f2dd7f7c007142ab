from __future__ import annotations

import pytest

from rag.chunking import chunk_document

TEXTS = [
    " ".join(f"Sentence number {i} talks about the city of Paris." for i in range(40)),
    "Title line\n\nFirst paragraph. It has two sentences!\tA tab here?  Double  spaces.\n"
    "Ünïcödé text — with dashes… and more words. " * 6,
    "x" * 450 + " tail words here. " + "y" * 30,
]


def _check(text: str, passages, max_chars: int) -> None:
    assert passages, "a non-blank document gives at least one passage"
    covered = [False] * len(text)
    prev_start = prev_end = -1
    for k, p in enumerate(passages):
        s, e = p.metadata["doc_span"]
        assert text[s:e] == p.text
        assert len(p.text) <= max_chars
        assert p.text == p.text.strip()
        assert p.metadata["chunk"] == k and p.source_id == "doc"
        assert s > prev_start and e > prev_end  # document order, each adds new text
        prev_start, prev_end = s, e
        for i in range(s, e):
            covered[i] = True
    missing = [i for i, c in enumerate(covered) if not c and not text[i].isspace()]
    assert missing == [], f"characters dropped at {missing[:10]}"


@pytest.mark.parametrize("max_chars", [40, 200, 1000])
@pytest.mark.parametrize("overlap", [0, 1, 2])
@pytest.mark.parametrize("text", TEXTS, ids=["sentences", "mixed", "no-spaces"])
def test_chunking_spans_slice_back_and_cover(text, max_chars, overlap) -> None:
    _check(text, chunk_document(text, "doc", max_chars=max_chars, overlap=overlap), max_chars)


def test_chunking_long_sentence_is_split_not_dropped() -> None:
    text = "word " * 300
    passages = chunk_document(text, "doc", max_chars=100, overlap=0)
    assert all(len(p.text) <= 100 for p in passages) and len(passages) >= 15
    assert "".join(p.text for p in passages).replace(" ", "") == text.replace(" ", "")
    hard = chunk_document("z" * 250, "doc", max_chars=100, overlap=0)
    assert [p.metadata["doc_span"] for p in hard] == [(0, 100), (100, 200), (200, 250)]


def test_chunking_overlap_repeats_sentences() -> None:
    text = "Alpha one. Beta two. Gamma three. Delta four. Epsilon five."
    no = chunk_document(text, "doc", max_chars=22, overlap=0)
    assert [p.text for p in no] == ["Alpha one. Beta two.", "Gamma three.", "Delta four.",
                                    "Epsilon five."]
    one = chunk_document(text, "doc", max_chars=22, overlap=1)
    # "Gamma three." is not repeated alone: with its overlap "Delta four." would not fit.
    assert [p.text for p in one] == ["Alpha one. Beta two.", "Beta two. Gamma three.",
                                     "Delta four.", "Epsilon five."]


def test_chunking_short_document_is_one_passage_with_metadata() -> None:
    text = "  Paris is the capital of France.  "
    [p] = chunk_document(text, "wiki/paris", metadata={"title": "Paris"})
    assert p.text == "Paris is the capital of France."
    assert p.metadata == {"title": "Paris", "doc_span": (2, 33), "chunk": 0}


@pytest.mark.parametrize(("text", "kwargs", "error", "match"), [
    ("a b", {"max_chars": 0}, ValueError, "max_chars must be a positive int, got 0"),
    ("a b", {"max_chars": True}, ValueError, "max_chars must be a positive int"),
    ("a b", {"overlap": -1}, ValueError, "overlap must be an int >= 0, got -1"),
    ("   ", {}, ValueError, "document 'doc' is empty"),
    (b"bytes", {}, TypeError, "text must be a str, got bytes"),
])
def test_chunking_rejects_bad_arguments(text, kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        chunk_document(text, "doc", **kwargs)


def _count_words_and_digits(texts) -> list[int]:
    """A stand-in tokenizer: a word is a token, each digit is one more (as word pieces)."""
    return [len(t.split()) + sum(c.isdigit() for c in t) for t in texts]


@pytest.mark.parametrize("overlap", [0, 1, 2])
@pytest.mark.parametrize("text", TEXTS + [
    "Prices: " + " ".join(str(10_000 + 7 * i) for i in range(60)) + ". The tail is here.",
], ids=["sentences", "mixed", "no-spaces", "numbers"])
def test_chunking_keeps_every_passage_within_a_token_limit(text, overlap) -> None:
    passages = chunk_document(text, "doc", max_chars=800, overlap=overlap, max_tokens=30,
                              count_tokens=_count_words_and_digits)
    _check(text, passages, 800)  # spans slice back, nothing dropped, each adds new text
    assert max(_count_words_and_digits([p.text for p in passages])) <= 30
    # within the limit, passages are as long as before: the same as by characters alone
    short = chunk_document(text, "doc", max_chars=800, overlap=overlap, max_tokens=10_000,
                           count_tokens=_count_words_and_digits)
    assert short == chunk_document(text, "doc", max_chars=800, overlap=overlap)


def test_chunking_cuts_a_sentence_over_the_token_limit_at_whitespace() -> None:
    text = "Codes " + " ".join(f"{i:04d}" for i in range(20)) + " end."  # 5 tokens a code
    passages = chunk_document(text, "doc", max_tokens=12, count_tokens=_count_words_and_digits)
    assert [p.text for p in passages][:2] == ["Codes 0000 0001", "0002 0003"]
    assert passages[-1].text == "0018 0019 end."  # 11 tokens
    one_word = chunk_document("1" * 25, "doc", max_tokens=12,
                              count_tokens=_count_words_and_digits)
    assert [p.metadata["doc_span"] for p in one_word] == [(0, 11), (11, 22), (22, 25)]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"max_tokens": 10}, "max_tokens and count_tokens go together"),
    ({"count_tokens": _count_words_and_digits}, "max_tokens and count_tokens go together"),
    ({"max_tokens": 0, "count_tokens": _count_words_and_digits},
     "max_tokens must be a positive int, got 0"),
])
def test_chunking_rejects_a_bad_token_limit(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        chunk_document("a b", "doc", **kwargs)
