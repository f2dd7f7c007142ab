"""Edge cases of the mitigator's rewriting and reports.

Claims across an abbreviation's full stop, unambiguous corrections and their sources, the
draft's own citation markers, hedge capitalisation, removed clauses, highlight offsets,
Markdown escaping, claim spans with whitespace, citations after closing quotes.
"""

from __future__ import annotations

import json
import re

import pytest

from mitigation.checks import run_checks
from mitigation.mitigator import Mitigator, correct_claim
from verifier.types import Claim, ClaimType, ClaimVerdict, Evidence, Status

S, C, U = Status.SUPPORTED, Status.CONTRADICTORY, Status.INSUFFICIENT_INFO


def _v(draft: str, part: str, status: Status, *ev: Evidence, text: str | None = None,
       verifiable: bool = True) -> ClaimVerdict:
    s = draft.index(part)
    ctype = ClaimType.FACT if verifiable else ClaimType.OPINION
    return ClaimVerdict(Claim(text or part, (s, s + len(part)), ctype, verifiable), status,
                        evidence=ev)


def _ev(text: str, source: str = "src") -> Evidence:
    return Evidence(text, source)


# 1. a claim across a sentence boundary ("Dr.", "U.S." split the old splitter; a claim that
# ends after a real sentence end still does)
@pytest.mark.parametrize(
    ("draft", "first", "second", "cited"),
    [("Paris is big. It has 2 million people.", "Paris is big. It", "has 2 million people.",
      "Paris is big. It [1] has 2 million people [2]."),
     ("Dr. Smith founded the lab in 1990 and it won a prize in 1995.",
      "Dr. Smith founded the lab in 1990", "it won a prize in 1995.",
      "Dr. Smith founded the lab in 1990 [1] and it won a prize in 1995 [2]."),
     ("The U.S. economy grew 2% in 2019 and unemployment fell to 3.5%.",
      "The U.S. economy grew 2% in 2019", "unemployment fell to 3.5%.",
      "The U.S. economy grew 2% in 2019 [1] and unemployment fell to 3.5% [2].")],
)
def test_mitigation_claim_across_abbreviation_written_once(draft, first, second, cited) -> None:
    verdicts = [_v(draft, first, S, _ev(first, "a")), _v(draft, second, S, _ev(second, "b"))]
    assert Mitigator().mitigate(draft, verdicts).body == cited
    mixed = [verdicts[0], _v(draft, second, U, _ev("Unrelated.", "b"))]
    assert Mitigator("strict").mitigate(draft, mixed).body == cited.split(" [1]")[0] + " [1]."
    removed = [_v(draft, first, U, _ev("Unrelated.", "a")), _v(draft, second, U)]
    assert Mitigator("strict").mitigate(draft, removed).body == \
        "No statement of the draft could be verified."


# 2. corrections from the checks' value contradictions
def test_mitigation_correction_replaces_the_flagged_token_only() -> None:
    claim = "Founded in 1910, the company had 10 employees."
    ev = ["The company had 12 employees."]
    fixed = correct_claim(claim, ev, run_checks(claim, ev))
    assert fixed is not None and fixed[0] == "Founded in 1910, the company had 12 employees."
    # the flagged value written twice: the finding is not used, the alignment is
    claim = "Team 10 had 10 employees."
    ev = ["Team 10 had 12 employees."]
    fixed = correct_claim(claim, ev, run_checks(claim, ev))
    assert fixed is not None and fixed[0] == "Team 10 had 12 employees."


@pytest.mark.parametrize(
    ("draft", "evidence"),
    [("The tower is 125 metres wide and 300 metres tall.", "The tower is 330 metres tall."),
     ("The tower is 100 metres wide.", "The tower is 330 metres tall and 125 metres wide."),
     ("The tower, begun in 1887, opened in 1890.", "The tower opened in 1889.")],
)
def test_mitigation_correction_needs_an_unambiguous_value(draft: str, evidence: str) -> None:
    assert correct_claim(draft, [evidence], run_checks(draft, [evidence])) is None
    ans = Mitigator().mitigate(draft, [_v(draft, draft, C, _ev(evidence))])
    assert ans.edits[0].action == "warned"


def test_mitigation_correction_with_one_value_still_corrects() -> None:
    draft = "The tower opened in 1890."
    ans = Mitigator().mitigate(draft, [_v(draft, draft, C, _ev("The tower opened in 1889."))])
    assert ans.body == "The tower opened in 1889 [1]."


# 3. a correction cites the evidence that gave the value
@pytest.mark.parametrize(
    ("draft", "right"),
    [("The tower is 300 metres tall.", "The tower is 330 metres tall."),  # number check
     ("The tower was designed by Pablo Picasso.",
      "The tower was designed by Gustave Eiffel.")],  # alignment
)
def test_mitigation_correction_cites_its_source(draft: str, right: str) -> None:
    v = _v(draft, draft, C, _ev("The tower is in Paris.", "wiki/paris"), _ev(right, "wiki/fact"))
    ans = Mitigator().mitigate(draft, [v])
    assert ans.body == right[:-1] + " [1]."
    assert [r.source_id for r in ans.references] == ["wiki/fact"]
    assert ans.references[0].excerpt == right


# 4. the draft's own markers next to a claim
def test_mitigation_adjacent_draft_markers_give_way() -> None:
    draft = "The tower is in Paris [3], and it is 330 metres tall [4][5]."
    first, second = "The tower is in Paris", "it is 330 metres tall [4][5]."
    both = [_v(draft, first, S, _ev("The tower is in Paris.", "a")),
            _v(draft, second, S, _ev("It is 330 metres tall.", "b"),
               text="The tower is 330 metres tall.")]
    assert Mitigator().mitigate(draft, both).body == \
        "The tower is in Paris [1], and it is 330 metres tall [2]."
    # a removed clause takes its marker with it
    gone = [_v(draft, first, U, _ev("Unrelated.", "a"))]
    assert Mitigator("strict").mitigate(draft, gone).body == "It is 330 metres tall [4][5]."
    draft = "The tower is in Paris.[3] It is tall.[4]"
    both = [_v(draft, "The tower is in Paris.", S, _ev("The tower is in Paris.", "a")),
            _v(draft, "It is tall.", S, _ev("It is tall.", "b"))]
    assert Mitigator().mitigate(draft, both).body == "The tower is in Paris [1]. It is tall [2]."
    draft = "The tower is in Paris. [3] It is tall."
    one = [_v(draft, "The tower is in Paris.", S, _ev("The tower is in Paris.", "a"))]
    assert Mitigator().mitigate(draft, one).body == "The tower is in Paris [1]. It is tall."


# 5. hedge capitalisation
@pytest.mark.parametrize(
    ("claim", "hedged"),
    [("Einstein, who was born in Ulm, won the Nobel Prize.",
      "Einstein, who was born in Ulm, won the Nobel Prize"),
     ("Apple's revenue grew 5% in 2020.", "Apple's revenue grew 5% in 2020"),
     ("I visited Paris in 2019.", "I visited Paris in 2019"),
     ("U.S. GDP grew 2% in 2019.", "U.S. GDP grew 2% in 2019"),
     ("NASA launched Apollo 11 in 1969.", "NASA launched Apollo 11 in 1969"),
     ("However, the tower is old.", "however, the tower is old"),
     ("The tower is old.", "the tower is old"),
     ("It's an old tower.", "it's an old tower"),
     ("Paris is in France.", "Paris is in France"),
     # words that often begin a title stay (the checks' name rule lists them, not the hedge)
     ("About a Boy is a 2002 film.", "About a Boy is a 2002 film"),
     ("Almost Famous is a film.", "Almost Famous is a film"),
     ("During 2019 the tower was open.", "during 2019 the tower was open"),
     ("FY 2020 revenue grew.", "FY 2020 revenue grew")],
)
def test_mitigation_hedge_capitalisation(claim: str, hedged: str) -> None:
    ans = Mitigator("balanced").mitigate(claim, [_v(claim, claim, U)])
    assert ans.body == f"It is suggested that {hedged}, but this could not be verified."



# an ordinary word by the draft's or the evidence's own spelling of it is lowered; a word they
# also capitalise inside a sentence stays (a name)
@pytest.mark.parametrize(("draft", "evidence", "hedged"), [
    ("Water boils at 90 °C on a mountain.", "Pure water boils at 100 °C.",
     "water boils at 90 °C on a mountain"),
    ("Water boils at 90 °C. Sea water is salty.", "", "water boils at 90 °C"),
    ("Apple sells phones.", "An apple is a fruit; he joined Apple in 2001.",
     "Apple sells phones"),
    ("Water boils at 90 °C.", "", "Water boils at 90 °C"),
    ("Paris is big.", "Paris is a city in France.", "Paris is big"),
    # the start of a longer name
    ("Pirates of the Caribbean was added in 1967.", "The pirates were added in 1967.",
     "Pirates of the Caribbean was added in 1967"),
    ("Palo Alto is in California.", "A palo is a stick.", "Palo Alto is in California"),
])
def test_mitigation_hedge_lowers_ordinary_words_by_context(draft: str, evidence: str,
                                                          hedged: str) -> None:
    first = draft.split(". ")[0].rstrip(".") + "."
    ev = (_ev(evidence),) if evidence else ()
    ans = Mitigator("balanced").mitigate(draft, [_v(draft, first, U, *ev)])
    assert ans.body.startswith(f"It is suggested that {hedged}, but this could not be "
                               "verified.")


# 6. no space before punctuation after a removed middle clause
def test_mitigation_removed_middle_clause_leaves_no_space_before_comma() -> None:
    draft = "The tower is in Paris, but it was designed by Picasso, and it opened in 1889."
    verdicts = [_v(draft, "The tower is in Paris", S, _ev("The tower is in Paris.", "a")),
                _v(draft, "it was designed by Picasso", U, _ev("Unrelated.", "b")),
                _v(draft, "it opened in 1889.", S, _ev("It opened in 1889.", "c"))]
    assert Mitigator("strict").mitigate(draft, verdicts).body == \
        "The tower is in Paris [1], and it opened in 1889 [2]."


# 7. HTML highlights at the recorded offsets
@pytest.mark.parametrize(
    ("draft", "hedged", "cited"),
    [("The tower is in Paris, and it was designed by Eiffel.", "The tower is in Paris",
      "it was designed by Eiffel."),
     ("Paris is big and Lyon is small.", "Paris is big", "Lyon is small.")],
)
def test_report_html_highlights_every_claim_by_offset(draft, hedged, cited) -> None:
    verdicts = [_v(draft, hedged, U, _ev("x y z", "s0")),
                _v(draft, cited, S, _ev(cited, "s1"))]
    ans = Mitigator().mitigate(draft, verdicts)
    assert re.findall(r'<span class="claim (\w+)" tabindex', ans.to_html()) == [
        "supported", "insufficient"]
    for e in ans.edits:
        start, end = e.body_span
        assert ans.body[start:end].lower() == e.replacement.lower()
    report = json.loads(json.dumps(ans.to_dict()))
    assert report["schema_version"] == "1"
    assert [tuple(e["body_span"]) for e in report["edits"]] == [e.body_span for e in ans.edits]


def test_mitigation_body_span_of_kept_and_removed_claims() -> None:
    draft = "I think it is lovely. The tower is red."
    verdicts = [_v(draft, "I think it is lovely.", U, verifiable=False),
                _v(draft, "The tower is red.", U)]
    ans = Mitigator("strict").mitigate(draft, verdicts)
    assert ans.body == "I think it is lovely."
    assert [e.body_span for e in ans.edits] == [(0, 21), None]


# 8. Markdown escapes HTML from the draft and the evidence
def test_mitigation_markdown_escapes_html() -> None:
    draft = 'Intro <script>alert(1)</script>. The tower is 300 metres tall.\nIt is <b>red</b>.'
    ev = Evidence('<script>x()</script> The tower is 330 metres tall.', 'src"><img src=x>')
    verdicts = [_v(draft, "The tower is 300 metres tall.", C, ev),
                _v(draft, "It is <b>red</b>.", U, _ev("It is </span><script>y()</script>"))]
    md = Mitigator().mitigate(draft, verdicts).to_markdown()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert '`src"><img src=x>`' in md  # a code span: shown as written, never as HTML
    markdown_it = pytest.importorskip("markdown_it")
    page = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    assert not re.search(r"<(?:script|img|b)\b", page)
    assert "&lt;img src=x&gt;" in page


def test_mitigation_markdown_keeps_text_from_formatting_and_rows_whole() -> None:
    markdown_it = pytest.importorskip("markdown_it")
    draft = "The *tower* is [red](http://evil.example).\nIt has a | bar. It is `tall`."
    ev = Evidence("The tower is red.", "AT&T <report> `x`")
    verdicts = [_v(draft, "The *tower* is [red](http://evil.example).", S, ev),
                _v(draft, "It has a | bar.", U, ev),
                _v(draft, "It is `tall`.", S, ev, text="It is\n`tall`.")]
    md = Mitigator().mitigate(draft, verdicts).to_markdown()
    page = markdown_it.MarkdownIt("commonmark").enable("table").render(md)
    assert "<em>" not in page and "<a " not in page and "<code>tall</code>" not in page
    assert "<code>AT&amp;T &lt;report&gt; `x`</code>" in page  # the source id, as written
    rows = re.findall(r"<tr>(.*?)</tr>", page, re.S)  # a claim's newline or "|" kept its row
    assert len(rows) == 4 and all(len(re.findall(r"<t[dh]\b", r)) == 5 for r in rows)
    assert "It has a | bar." in rows[2]


# 9. claim spans with whitespace at either end
def test_mitigation_claim_span_whitespace_is_stripped() -> None:
    draft = "Paris is big. Lyon is small."
    lyon = ClaimVerdict(Claim("Lyon is small.", (13, len(draft))), S,
                        evidence=(_ev("Lyon is small.", "a"),))
    assert Mitigator().mitigate(draft, [lyon]).body == "Paris is big. Lyon is small [1]."
    paris = ClaimVerdict(Claim("Paris is big.", (0, 14)), S, evidence=(_ev("Paris is big."),))
    ans = Mitigator().mitigate(draft, [paris])
    assert ans.body == "Paris is big [1]. Lyon is small."
    assert ans.edits[0].span == (0, 13)
    blank = ClaimVerdict(Claim("Nothing.", (13, 14)), S)
    with pytest.raises(ValueError, match=r"verdicts\[0\].*'Nothing\.'.*only whitespace"):
        Mitigator().mitigate(draft, [blank])


# 10. a citation goes after a closing quotation mark
def test_mitigation_citation_after_closing_quote() -> None:
    draft = 'Armstrong said "That is one small step." He landed in 1969.'
    verdicts = [_v(draft, 'Armstrong said "That is one small step."', S,
                   _ev('He said: "That is one small step."', "a")),
                _v(draft, "He landed in 1969.", S, _ev("He landed in 1969.", "b"))]
    assert Mitigator().mitigate(draft, verdicts).body == \
        'Armstrong said "That is one small step." [1] He landed in 1969 [2].'
    draft = 'He called it "small".'
    v = _v(draft, draft, S, _ev("He called it small.", "a"))
    assert Mitigator().mitigate(draft, [v]).body == 'He called it "small" [1].'


# a reference quoting several sentences of one source: merged windows, whole words
def test_mitigation_reference_excerpt_merges_windows_in_whole_words() -> None:
    doc = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris. "
           "It is named after the engineer Gustave Eiffel, whose company designed and built "
           "the tower. It was constructed from 1887 to 1889 as the centrepiece of the 1889 "
           "World's Fair. The tower is 330 metres tall and was the tallest man-made structure "
           "in the world until the Chrysler Building in New York was finished in 1930. "
           + "Filler text about other things goes here. " * 8
           + "Its lift system was modernised in the 1980s.")

    def ev(sentence: str) -> Evidence:
        s = doc.index(sentence)
        return Evidence(sentence, "eiffel", (s, s + len(sentence)))

    first = "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris."
    built = "It was constructed from 1887 to 1889 as the centrepiece of the 1889 World's Fair."
    lift = "Its lift system was modernised in the 1980s."
    draft = "The tower is in Paris. It was built from 1887 to 1889. Its lift is new."
    verdicts = [_v(draft, "The tower is in Paris.", S, ev(first)),
                _v(draft, "It was built from 1887 to 1889.", S, ev(built)),
                _v(draft, "Its lift is new.", S, ev(lift))]
    ans = Mitigator().mitigate(draft, verdicts, documents={"eiffel": doc})
    (ref,) = ans.references
    assert "… …" not in ref.excerpt
    for sentence in (first, built, lift):
        assert ref.excerpt.count(sentence) == 1
    # the first two windows overlap and merge; the lift sentence is far: " … " between
    assert ref.excerpt.startswith(first) and ref.excerpt.endswith(lift)
    assert ref.excerpt.count(" … ") == 1
    # every piece starts and ends on a word of the source, not inside one
    for piece in ref.excerpt.strip("…").split(" … "):
        words = piece.split()
        assert all(w in doc.split() for w in (words[0], words[-1]))


# list items: a claim is its item's sentence; the marker stays with a hedge or warning and
# goes with a removal (it was left as "-." before)
@pytest.mark.parametrize(("strictness", "body"), [
    ("balanced", "Facts:\n- It is in Paris [1].\n- Note: a statement that the sources "
                 "contradict was removed (“It is 500 metres tall”).\n- It is suggested that "
                 "it opened in 1889, but this could not be verified.\n- It is iron [1]."),
    ("strict", "Facts:\n- It is in Paris [1].\n- It is iron [1]."),
])
def test_list_items_keep_or_lose_their_marker_whole(strictness: str, body: str) -> None:
    draft = "Facts:\n- It is in Paris.\n- It is 500 metres tall.\n- It opened in 1889.\n" \
            "- It is iron."
    ev = _ev("The tower is an iron tower in Paris.")
    verdicts = [_v(draft, "It is in Paris.", S, ev), _v(draft, "It is 500 metres tall.", C, ev),
                _v(draft, "It opened in 1889.", U, ev), _v(draft, "It is iron.", S, ev)]
    out = Mitigator(strictness).mitigate(draft, verdicts)
    assert out.body == body
    for e in out.edits:
        if e.replacement is not None:
            assert out.body[slice(*e.body_span)] == e.replacement


def test_numbered_list_item_removed_with_its_number() -> None:
    # the items after it are numbered again ("3." was left after "1." before)
    draft = "1. Paris is big.\n2. Lyon is small.\n3. Rome is old."
    ev = _ev("Paris is big. Rome is old.")
    verdicts = [_v(draft, "Paris is big.", S, ev), _v(draft, "Lyon is small.", U, ev),
                _v(draft, "Rome is old.", S, ev)]
    out = Mitigator("strict").mitigate(draft, verdicts)
    assert out.body == "1. Paris is big [1].\n2. Rome is old [1]."
    assert out.body[slice(*out.edits[2].body_span)] == "Rome is old [1]."
    assert Mitigator("balanced").mitigate(draft, verdicts).body == (
        "1. Paris is big [1].\n2. It is suggested that Lyon is small, but this could not be "
        "verified.\n3. Rome is old [1].")


@pytest.mark.parametrize(("draft", "body"), [
    # ten items to nine: the numbers shrink by a digit, the spans after them move
    ("".join(f"{k}. Item {k} is {'bad' if k == 2 else 'fine'}.\n" for k in range(1, 12)),
     "".join(f"{k}. Item {k + (k > 1)} is fine [1].\n" for k in range(1, 11))),
    # ")" markers, blank lines between items, and a list that starts at 5
    ("5) Item 5 is fine.\n\n6) Item 6 is bad.\n\n7) Item 7 is fine.",
     "5) Item 5 is fine [1].\n\n6) Item 7 is fine [1]."),
    # a list the draft numbers with gaps keeps its numbers; another list is its own
    ("1. Item 1 is fine.\n3. Item 3 is bad.\n5. Item 5 is fine.",
     "1. Item 1 is fine [1].\n5. Item 5 is fine [1]."),
    # the first item removed: the list still starts at its first number; a list after
    # others keeps its own numbers
    ("1. Item 1 is bad.\n2. Item 2 is fine.\nText here.\n1. Item 9 is fine.",
     "1. Item 2 is fine [1].\nText here [1].\n1. Item 9 is fine [1]."),
])
def test_numbered_list_is_numbered_again_after_a_removal(draft: str, body: str) -> None:
    ev = _ev("Every item is fine.")
    claims = re.findall(r"Item \d+ is \w+\.|Text here\.", draft)
    verdicts = [_v(draft, c, U if "bad" in c else S, ev) for c in claims]
    out = Mitigator("strict").mitigate(draft, verdicts)
    assert out.body == body
    for e in out.edits:
        if e.body_span is not None:
            assert out.body[slice(*e.body_span)] == f"{e.claim[:-1]} [1]."


# a sentence removed whole takes one of the whitespace runs around it with it, whatever kind
@pytest.mark.parametrize(("draft", "body"), [
    ("Paris is nice.\nThe tower has a shop.\nEnd is near.", "Paris is nice.\nEnd is near."),
    ("The tower has a shop.\nParis is nice.", "Paris is nice."),
    ("Paris is nice.\tThe tower has a shop.\tEnd is near.", "Paris is nice.\tEnd is near."),
    ("Intro is here.\n\nThe tower has a shop. Next is there.",
     "Intro is here.\n\nNext is there."),
    ("Intro is here. The tower has a shop.\n\nNext is there.",
     "Intro is here.\n\nNext is there."),
    ("Paris is nice.\n\nThe tower has a shop.", "Paris is nice."),
    ("Paris is nice. The tower has a shop. End is near.", "Paris is nice. End is near."),
])
def test_removed_sentence_leaves_one_separator(draft: str, body: str) -> None:
    assert Mitigator("strict").mitigate(
        draft, [_v(draft, "The tower has a shop.", U, _ev("Paris is nice."))]).body == body


def test_hedge_keeps_an_abbreviations_stop_and_its_place() -> None:
    # the decomposer ends a sentence after "U.S." where the splitter does not: the hedge
    # stays before the next claim (it moved after it), with the abbreviation's stop
    draft = "Acme is based in the U.S. It sells tools."
    ev = _ev("It sells tools.")
    verdicts = [_v(draft, "Acme is based in the U.S.", U, ev), _v(draft, "It sells tools.", S, ev)]
    assert Mitigator().mitigate(draft, verdicts).body == (
        "It is suggested that Acme is based in the U.S., but this could not be verified. "
        "It sells tools [1].")
    draft = "Acme sells hammers, nails, etc."
    out = Mitigator().mitigate(draft, [_v(draft, draft, C, _ev("Acme sells saws."))])
    assert out.body == ("Note: a statement that the sources contradict was removed (“Acme sells "
                        "hammers, nails, etc.”).")
    draft = "We use Plan B."  # one letter: a sentence's end, not an abbreviation
    assert Mitigator().mitigate(draft, [_v(draft, draft, U, _ev("x"))]).body == (
        "It is suggested that we use Plan B, but this could not be verified.")


def test_references_quote_each_cited_sentence_and_stay_short() -> None:
    # evidence without document offsets (span (0, 0)): a second sentence of one source is
    # quoted too (it was left out: every such span looked "already quoted")
    draft = "Paris is in France. Lyon is in France."
    out = Mitigator().mitigate(draft, [
        _v(draft, "Paris is in France.", S, _ev("Paris is a city in France.", "atlas")),
        _v(draft, "Lyon is in France.", S, _ev("Lyon is a city in France.", "atlas"))])
    assert out.body == "Paris is in France [1]. Lyon is in France [1]."
    (ref,) = out.references
    assert "Paris is a city in France." in ref.excerpt and "Lyon is a city" in ref.excerpt
    # a long evidence sentence found in its document is cut to about excerpt_chars
    long = "The tower " + "was built with great care and much iron " * 15 + "in 1889."
    doc = "Intro sentence. " + long + " Outro sentence."
    ev = Evidence(long, "doc", (16, 16 + len(long)))
    draft = "The tower was built in 1889."
    out = Mitigator().mitigate(draft, [_v(draft, draft, S, ev)], documents={"doc": doc})
    assert len(out.references[0].excerpt) <= 160 and out.references[0].excerpt.endswith("…")


@pytest.mark.parametrize(("kw", "match"), [
    ({"excerpt_chars": 0}, "excerpt_chars must be an int >= 20, got 0"),
    ({"excerpt_chars": "150"}, "excerpt_chars must be an int >= 20, got '150'"),
    ({"max_citations": True}, "max_citations must be an int >= 0, got True"),
])
def test_mitigator_settings_are_checked(kw, match) -> None:
    with pytest.raises(ValueError, match=match):
        Mitigator(**kw)


@pytest.mark.parametrize("name", ["find_numbers", "find_dates", "find_ordinals"])
def test_text_parsers_remember_results_but_hand_out_fresh_lists(name: str) -> None:
    from mitigation import values

    parse = getattr(values, name)
    text = "On 20 July 1969, the second crew flew 384,400 km; the third left in 1970."
    first = parse(text)
    assert first, "the text must give the parser something to find"
    first.append(first[0])  # a caller's change to its list
    again = parse(text)
    assert again == first[:-1] and again is not first
    assert parse.__wrapped__(text) == again  # the remembered result is the computed one
    assert parse.cache_info().currsize > 0
    values.clear_caches()
    assert parse.cache_info().currsize == 0 and parse(text) == again


# a weekday goes with its date: recomputed when the evidence's date gives the day, else dropped
@pytest.mark.parametrize(("draft", "evidence", "fixed"), [
    ("The store opened on Monday, June 6, 2016.", "The store opened on June 7, 2016.",
     "The store opened on Tuesday, June 7, 2016 [1]."),
    ("On Monday 6 June 2016 the store opened.", "The store opened on 7 June 2016.",
     "On Tuesday 7 June 2016 the store opened [1]."),
    ("The store opened on Monday, June 2016.", "The store opened in July 2016.",
     "The store opened in July 2016 [1]."),
])
def test_mitigation_date_correction_mends_its_weekday(draft: str, evidence: str,
                                                      fixed: str) -> None:
    ans = Mitigator("balanced").mitigate(draft, [_v(draft, draft, C, _ev(evidence))])
    assert ans.edits[0].action == "corrected"
    assert ans.body == fixed


def test_mitigation_nothing_left_but_headings_is_nothing_left() -> None:
    draft = "# Cities\n\nRome is old.\n\n## Paris\n\nParis is big. It has museums.\n"
    verdicts = [_v(draft, part, U) for part in ("Rome is old.", "Paris is big.",
                                                "It has museums.")]
    assert Mitigator("strict").mitigate(draft, verdicts).body == \
        "No statement of the draft could be verified."
    kept = Mitigator("strict").mitigate(draft, [_v(draft, "Rome is old.", U)]).body
    assert kept.startswith("# Cities") and "Paris is big." in kept


# a range with an en dash is one value to the word swap ("1990–to 1996" before)
@pytest.mark.parametrize(("claim", "evidence", "fixed"), [
    ("He was president from 1990–1995.", "He was president from 1990 to 1996.",
     "He was president from 1990 to 1996."),
    ("The project cost $5–7 million.", "The project cost $5 to $8 million.",
     "The project cost $5 to $8 million."),
    ("He was president from 1990 to 1995.", "He was president from 1990–1996.", None),
])
def test_mitigation_correction_of_a_dashed_range(claim: str, evidence: str, fixed) -> None:
    got = correct_claim(claim, [evidence])
    assert (got[0] if got else None) == fixed


# an adverb that opens a sentence with a comma is no name; a name ending in -ly is one
@pytest.mark.parametrize(("claim", "names"), [
    ("Additionally, Paris hosts the Louvre.", []),
    ("Interestingly, Paris hosts the Louvre.", []),
    ("Kelly, Paris hosts the Louvre.", ["Kelly"]),
    ("Italy, Spain and France are big.", ["Italy", "Spain and France"]),
])
def test_mitigation_opening_adverb_is_no_entity(claim: str, names: list[str]) -> None:
    found = run_checks(claim, ["Paris hosts the Louvre."])
    assert [f.value for f in found if f.check == "entity"] == names


def test_mitigation_markdown_keeps_star_list_items() -> None:
    markdown_it = pytest.importorskip("markdown_it")
    draft = "* Paris is big.\n* Rome is *old*.\n- Bonn is small."
    verdicts = [_v(draft, "Paris is big.", S, _ev("Paris is big.")),
                _v(draft, "Rome is *old*.", S, _ev("Rome is old.")),
                _v(draft, "Bonn is small.", S, _ev("Bonn is small."))]
    md = Mitigator().mitigate(draft, verdicts).to_markdown()
    page = markdown_it.MarkdownIt("commonmark").render(md.split("## References")[0])
    assert page.count("<li>") == 3  # "* " items are a list, as "- " ones are
    assert "<em>" not in page  # emphasis inside the text still shows as written
