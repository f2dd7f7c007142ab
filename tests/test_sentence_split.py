"""The shared sentence splitter (``verifier.text.sentence_spans``) and its abbreviations."""

from __future__ import annotations

import pytest

from rag.pairing import split_evidence
from verifier.nli import hypothesis_sentences
from verifier.text import abbreviation_stop, sentence_spans, trimmed_sentence_spans
from verifier.types import Evidence


def _sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in trimmed_sentence_spans(text)]


@pytest.mark.parametrize(("text", "expected"), [
    # initials and dotted abbreviations split names before (a sentence per initial)
    ("Middle-earth is the setting of J. R. R. Tolkien 's legendarium .",
     ["Middle-earth is the setting of J. R. R. Tolkien 's legendarium ."]),
    ("George W. Bush was president. He left.", ["George W. Bush was president.", "He left."]),
    ("Washington, D.C. is the capital. It is big.",
     ["Washington, D.C. is the capital.", "It is big."]),
    ("It topped the U.S. Billboard 200 in 2009.", ["It topped the U.S. Billboard 200 in 2009."]),
    ("Dr. Smith met Mr. Jones at St. Paul's. They talked.",
     ["Dr. Smith met Mr. Jones at St. Paul's.", "They talked."]),
    # "Inc." and the like end a sentence before a capital, not before a lower-case word
    ("He joined Apple Inc. The firm grew.", ["He joined Apple Inc.", "The firm grew."]),
    ("Martin Luther King Jr. was born in 1929.", ["Martin Luther King Jr. was born in 1929."]),
    ("It was ranked No. 5 in the list. The court said no. The law stood.",
     ["It was ranked No. 5 in the list.", "The court said no.", "The law stood."]),
    # what always ends a sentence
    ("Paris is big. Berlin is big.", ["Paris is big.", "Berlin is big."]),
    ("He said “we won.” They left.", ["He said “we won.”", "They left."]),
    ("Ask Dr.\nSmith came.", ["Ask Dr.", "Smith came."]),  # a line break
    ("It rained! Then it stopped? Yes.", ["It rained!", "Then it stopped?", "Yes."]),
    # a word with a dot inside is no abbreviation unless it is dotted letters
    ("Growth was 3.5%. Next year it fell.", ["Growth was 3.5%.", "Next year it fell."]),
    ("See example.com. It is big.", ["See example.com.", "It is big."]),
    ("He holds a Ph.D. in physics.", ["He holds a Ph.D. in physics."]),
])
def test_sentence_spans_keep_abbreviations_inside_sentences(text: str,
                                                            expected: list[str]) -> None:
    assert _sentences(text) == expected
    spans = sentence_spans(text)  # still tiles the text
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))


def test_abbreviation_stop_reads_case_only_when_asked() -> None:
    assert not abbreviation_stop("He joined Apple Inc.", "The firm")
    assert abbreviation_stop("he joined apple inc.", "The firm", read_case=False)
    # a stop detached by tokenisation: the abbreviation's own, or the sentence's end after it
    assert abbreviation_stop("west ham united f.c .", "is a club", read_case=False)
    assert not abbreviation_stop("he moved to the U.S. .", "He stayed")
    assert not abbreviation_stop("Paris is big .", "Berlin")
    assert not abbreviation_stop("No stop here", "x")
    assert not abbreviation_stop(".", "x")


def test_evidence_sentences_keep_a_name_with_initials_whole() -> None:
    doc = "Middle-earth is the setting of much of writer J. R. R. Tolkien 's legendarium ."
    units = split_evidence([Evidence(doc, "d", (0, len(doc)))])
    assert [u.content for u in units] == [doc]  # was four: "... J.", "R.", "R.", "Tolkien"


def test_hypothesis_sentences_unchanged_for_lower_cased_summaries() -> None:
    t = "the firm, apple inc. the biggest, grew. it rained all day long."
    assert [t[s:e] for s, e in hypothesis_sentences(t)] == [
        "the firm, apple inc. the biggest, grew.", "it rained all day long."]


def test_hypothesis_sentences_keep_their_case_blind_abbreviation_rule() -> None:
    # the shared splitter ends a sentence after "Inc." before a capital; hypotheses do not
    t = "He joined Apple Inc. The firm grew large quickly."
    assert _sentences(t) == ["He joined Apple Inc.", "The firm grew large quickly."]
    assert [t[s:e] for s, e in hypothesis_sentences(t)] == [t]


def test_sentence_split_is_linear_in_a_run_of_initials() -> None:
    import time

    text = "A. " * 20_000  # 60 KB that never ends a sentence: 5.5 s when each stop re-read it all
    t0 = time.perf_counter()
    assert sentence_spans(text) == [(0, len(text))]
    assert time.perf_counter() - t0 < 1.0


# a hard-wrapped plain-text document: a sentence runs on over its line breaks
def test_hard_wrapped_lines_are_one_sentence() -> None:
    text = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in\n"
            "Paris, France. It is named after the engineer Gustave Eiffel, whose company\n"
            "designed and built the tower from 1887 to 1889.\n\n"
            "Locally nicknamed La dame de fer, it was constructed as the centrepiece of\n"
            "the 1889 World's Fair.\n"
            "- The tower is 330 metres tall and was the tallest structure\n"
            "- Gustave Eiffel's company built it in two years and two months\n"
            "Paris is the capital and largest city of France\n"
            "Berlin is the capital and largest city of Germany\n"
            "Project Manager: it was advanced in many ways, so that,\n"
            "Industrial Designer: and I think it is.")
    assert [text[a:b].replace("\n", " ") for a, b in trimmed_sentence_spans(text)] == [
        "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, "
        "France.",
        "It is named after the engineer Gustave Eiffel, whose company designed and built the "
        "tower from 1887 to 1889.",
        "Locally nicknamed La dame de fer, it was constructed as the centrepiece of the 1889 "
        "World's Fair.",
        "- The tower is 330 metres tall and was the tallest structure",
        "- Gustave Eiffel's company built it in two years and two months",
        "Paris is the capital and largest city of France",
        "Berlin is the capital and largest city of Germany",
        "Project Manager: it was advanced in many ways, so that,",
        "Industrial Designer: and I think it is."]


def test_hard_wrapped_evidence_is_split_into_whole_sentences() -> None:
    doc = ("It was built by the company of the engineer Gustave Eiffel, whose\n"
           "company designed it. It opened in 1889.")
    found = split_evidence([Evidence(doc, "d", (0, len(doc)))])
    assert [e.content for e in found] == [doc[:doc.index(" It opened")], "It opened in 1889."]
    assert all(doc[slice(*e.span)] == e.content for e in found)


@pytest.mark.parametrize(("phrase", "text", "found"), [
    # a word goes on with a combining mark (a Hindi vowel sign, a Tamil virama), which "\w"
    # does not match: "भारत" is not in "भारतीय", nor "தம" in "தமிழ்"
    ("भारत", "भारतीय रेल चलती है", False),
    ("भारत", "यह भारत है", True),
    ("तीय", "भारतीय रेल", False),
    ("தம", "தமிழ் மொழி", False),
    ("abc", "x abc\U000110b0 y", False),  # a mark beyond the BMP (Kaithi)
    ("abc", "x abc. y", True),
    ("$5", "it cost $50", False),
    ("10", "in 10.5 days", False),
])
def test_phrase_in_a_word_that_goes_on_with_a_combining_mark(phrase: str, text: str,
                                                             found: bool) -> None:
    from verifier.text import phrase_in

    assert phrase_in(phrase, text) is found
