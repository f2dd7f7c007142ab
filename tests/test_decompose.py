from __future__ import annotations

import pytest

from rag.decompose import LLMDecomposer, SpacyDecomposer, classify_claim, strip_citations
from rag.generation import StaticGenerator
from verifier.types import ClaimType


@pytest.mark.parametrize(
    ("text", "ctype", "verifiable"),
    [
        ("I think Paris is beautiful.", ClaimType.OPINION, False),
        ("You should visit Paris.", ClaimType.RECOMMENDATION, False),
        ("The market will grow next year.", ClaimType.PREDICTION, False),
        ('He said "we will fight on the beaches".', ClaimType.QUOTE, True),
        ("Berlin is larger than Paris.", ClaimType.COMPARISON, True),
        ("The tower was built in 1889.", ClaimType.DATE, True),
        ("The city has 2 million inhabitants.", ClaimType.QUANTITY, True),
        ("Water boils when heated.", ClaimType.GENERAL_KNOWLEDGE, True),
        ("Paris might be in France.", ClaimType.FACT, False),
        ("It is a wonderful place.", ClaimType.ASSESSMENT, False),
    ],
)
def test_decompose_classify_rules(text, ctype, verifiable) -> None:
    assert classify_claim(text) == (ctype, verifiable)


def test_decompose_relationship_from_entities() -> None:
    assert classify_claim("Obama met Merkel in Berlin.", ["PERSON", "PERSON", "GPE"]) == (
        ClaimType.RELATIONSHIP, True)


def test_decompose_strip_citations() -> None:
    assert strip_citations("Paris is in France [1][2, 3].") == "Paris is in France."


def test_decompose_blank_fallback_splits_sentences_with_spans() -> None:
    d = SpacyDecomposer(model="not_a_real_spacy_model")
    text = "Paris is in France. Is it big? I think it is lovely."
    claims = d.decompose(text)
    assert [c.text for c in claims] == ["Paris is in France.", "I think it is lovely."]
    for c in claims:
        assert text[c.span[0]:c.span[1]].startswith(c.text[:5])
    assert d.decompose("   ") == []
    with pytest.raises(TypeError, match="text must be a str"):
        d.decompose(3)  # type: ignore[arg-type]


def test_decompose_llm_parses_and_falls_back() -> None:
    text = "Paris is in France. Berlin is in Germany."
    good = LLMDecomposer(StaticGenerator('["Paris is in France", "Berlin is in Germany"]'))
    claims = good.decompose(text)
    assert [c.span for c in claims] == [(0, 19), (20, 41)]
    bad = StaticGenerator("sorry, no list here")
    with pytest.raises(ValueError, match="no JSON list"):
        LLMDecomposer(bad, on_error="raise").decompose(text)
    fb = LLMDecomposer(bad, fallback=SpacyDecomposer(model="not_a_real_spacy_model"))
    assert [c.text for c in fb.decompose(text)] == ["Paris is in France.", "Berlin is in Germany."]
    with pytest.raises(ValueError, match="list of strings"):
        LLMDecomposer.parse("[1, 2]")


@pytest.mark.slow
def test_decompose_spacy_splits_coordinated_clauses() -> None:
    text = ("Paris is the capital of France [1] and it has 2 million inhabitants. "
            "I think it is beautiful.")
    claims = SpacyDecomposer().decompose(text)
    assert [c.text for c in claims] == ["Paris is the capital of France.",
                                        "Paris has 2 million inhabitants.",
                                        "I think it is beautiful."]
    assert text[claims[1].span[0]:claims[1].span[1]] == "it has 2 million inhabitants."
    assert [c.verifiable for c in claims] == [True, True, False]
