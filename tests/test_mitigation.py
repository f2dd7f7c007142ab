from __future__ import annotations

import json

import pytest

from mitigation.checks import (
    AllowlistRule,
    DateCheck,
    EntityCheck,
    NumberCheck,
    QuoteCheck,
    Severity,
    load_rules,
)
from mitigation.mitigator import Mitigator, correct_claim
from mitigation.values import find_dates, find_numbers, find_ordinals, find_quotes
from verifier.types import Claim, ClaimType, ClaimVerdict, Evidence, Status

DRAFT = ("The Eiffel Tower was built in 1889. It is 300 metres tall. It is in Paris and it was "
         "designed by Pablo Picasso. I think it is lovely. The tower has a famous restaurant.")
E_BUILT = Evidence("It was constructed from 1887 to 1889.", "wiki/eiffel", (10, 47))
E_TALL = Evidence("The tower is 330 metres tall.", "wiki/eiffel", (50, 79))
E_NAME = Evidence("It is named after the engineer Gustave Eiffel.", "wiki/eiffel2", (0, 46))
E_PARIS = Evidence("The Eiffel Tower is in Paris, France.", "wiki/paris", (0, 37))


def _v(text_in_draft: str, claim: str, status: Status, *ev: Evidence,
       verifiable: bool = True) -> ClaimVerdict:
    s = DRAFT.index(text_in_draft)
    ctype = ClaimType.FACT if verifiable else ClaimType.OPINION
    return ClaimVerdict(Claim(claim, (s, s + len(text_in_draft)), ctype, verifiable), status,
                        evidence=ev)


VERDICTS = [
    _v("The Eiffel Tower was built in 1889.", "The Eiffel Tower was built in 1889.",
       Status.SUPPORTED, E_BUILT),
    _v("It is 300 metres tall.", "The Eiffel Tower is 300 metres tall.", Status.CONTRADICTORY,
       E_TALL),
    _v("It is in Paris", "The Eiffel Tower is in Paris.", Status.SUPPORTED, E_PARIS),
    _v("it was designed by Pablo Picasso.", "The Eiffel Tower was designed by Pablo Picasso.",
       Status.CONTRADICTORY, E_NAME),
    _v("I think it is lovely.", "I think it is lovely.", Status.INSUFFICIENT_INFO,
       verifiable=False),
    _v("The tower has a famous restaurant.", "The tower has a famous restaurant.",
       Status.INSUFFICIENT_INFO, E_PARIS),
]


def test_mitigation_balanced_rule_paths() -> None:
    ans = Mitigator("balanced").mitigate(DRAFT, VERDICTS)
    assert [e.action for e in ans.edits] == ["cited", "corrected", "cited", "warned", "kept",
                                             "hedged"]
    assert ans.body == (
        "The Eiffel Tower was built in 1889 [1]. It is 330 metres tall [1]. It is in Paris [2]. "
        "Note: a statement that the sources contradict was removed (“The Eiffel Tower was "
        "designed by Pablo Picasso”). I think it is lovely. It is suggested that the tower has "
        "a famous restaurant, but this could not be verified.")
    assert ans.text.endswith("[2] wiki/paris: “The Eiffel Tower is in Paris, France.”")
    assert [r.source_id for r in ans.references] == ["wiki/eiffel", "wiki/paris"]


def test_mitigation_strict_removes_contradicted_and_unverified() -> None:
    ans = Mitigator("strict").mitigate(DRAFT, VERDICTS)
    assert ans.body == ("The Eiffel Tower was built in 1889 [1]. It is in Paris [2]. "
                        "I think it is lovely.")
    assert [e.action for e in ans.edits].count("removed") == 3


def test_mitigation_untouched_text_is_byte_for_byte() -> None:
    draft = "Intro  line:\n\tPlain text stays.  The tower has a restaurant.\n\nTail  \u00e9 ."
    s = draft.index("The tower")
    v = ClaimVerdict(Claim("The tower has a restaurant.", (s, s + 27)), Status.INSUFFICIENT_INFO)
    ans = Mitigator("balanced").mitigate(draft, [v])
    assert ans.body.startswith(draft[:s])
    assert ans.body.endswith(draft[s + 27:])
    assert Mitigator().mitigate(draft, []).body == draft


def test_mitigation_citations_dedupe_and_cap() -> None:
    sentences = [f"Fact number {i} is true." for i in range(25)]
    draft = " ".join(sentences)
    verdicts, pos = [], 0
    for i, s in enumerate(sentences):
        start = draft.index(s, pos)
        pos = start + len(s)
        src = f"src{i // 1}" if i != 3 else "src0"  # claim 3 reuses source 0
        verdicts.append(ClaimVerdict(Claim(s, (start, pos)), Status.SUPPORTED,
                                     evidence=(Evidence(s, src),)))
    ans = Mitigator(max_citations=20).mitigate(draft, verdicts)
    assert len(ans.references) == 20
    assert ans.body.startswith("Fact number 0 is true [1]. Fact number 1 is true [2]. "
                               "Fact number 2 is true [3]. Fact number 3 is true [1].")
    assert [e.action for e in ans.edits].count("kept") == 25 - 21  # 24 sources, 20 numbered
    with pytest.raises(ValueError, match="strictness must be"):
        Mitigator("medium")  # type: ignore[arg-type]


def test_mitigation_overlapping_spans_error() -> None:
    a = ClaimVerdict(Claim("x y", (0, 5)), Status.SUPPORTED)
    b = ClaimVerdict(Claim("y z", (3, 8)), Status.SUPPORTED)
    with pytest.raises(ValueError, match="overlapping claim spans"):
        Mitigator().mitigate("abcdefghij", [a, b])


def test_mitigation_correction_by_alignment_and_scores() -> None:
    fixed = correct_claim("The tower was designed by Pablo Picasso.",
                          ["The tower was designed by Gustave Eiffel."])
    assert fixed is not None and fixed[0] == "The tower was designed by Gustave Eiffel."
    assert correct_claim("The tower is red.", ["Bananas are yellow."]) is None
    ans = Mitigator().mitigate(DRAFT, VERDICTS)
    # verifiable: 5 claims; 2 supported, 2 contradicted, 1 insufficient
    assert ans.grounding_score == 0.0 and ans.hallucination_score == 0.5
    report = json.loads(json.dumps(ans.to_dict()))
    assert report["schema_version"] == "1" and len(report["edits"]) == 6
    assert "| 2 | The Eiffel Tower is 300 metres tall. | Contradictory | corrected |" in \
        ans.to_markdown()


@pytest.mark.parametrize(
    ("claim", "evidence", "types"),
    [
        ("It cost $1.2 billion.", "The cost was 1,200,000,000 dollars.", []),
        ("It cost $1.2 billion.", "The cost was 1.2bn USD.", []),
        ("About two million people live there.", "Population: 2,000,000.", []),
        ("It is 300 metres tall.", "The tower is 330 metres tall.", ["value_contradiction"]),
        ("It has 12 floors.", "It is tall.", ["number_not_in_evidence"]),
        ("Growth was 45%.", "Growth was 45 percent.", []),
        # an ordinal word in the evidence gives the number
        ("Psych (season 2) began in July.", "The second season of Psych began in July.", []),
        ("Louie (season 1) is a comedy.", "The first season of Louie is a comedy.", []),
        ("Psych (season 3) began in July.", "The second season of Psych began in July.",
         ["number_not_in_evidence"]),
        # other spellings of the same number raise no alarm
        ("Netflix has 200M subscribers.", "Netflix has 200 million subscribers.", []),
        ("It cost 1.2B dollars.", "It cost $1.2 billion.", []),
        ("The firm has 1,500 employees.", "The firm has 1500 employees.", []),
        ("He bought 24 eggs.", "He bought two dozen eggs.", []),
        ("It seats 150 people.", "It seats one hundred and fifty people.", []),
        ("It seats 100 people.", "It seats one hundred and fifty people.",
         ["value_contradiction"]),
        ("The pole is 5 m long.", "The pole is 5 metres long.", []),  # m: metres
        # a value is "contradicted" only when the pairing is unambiguous: one claim number
        # for the unit, one evidence value for it
        ("The tower is 100 metres wide.", "The tower is 330 metres tall and 125 metres wide.",
         ["number_not_in_evidence"]),
        ("It is 300 metres tall and 40 metres wide.", "It is 330 metres tall.",
         ["number_not_in_evidence", "number_not_in_evidence"]),
        ("It is 300 metres tall.", "It is 330 metres tall, 330 metres above the river.",
         ["value_contradiction"]),
    ],
)
def test_mitigation_number_check(claim, evidence, types) -> None:
    assert [f.type for f in NumberCheck().run(claim, [evidence])] == types


@pytest.mark.parametrize(
    ("claim", "severity"),
    [
        # part of a name: an identifier, MEDIUM like a missing name
        ("Pitch Perfect 2 centers on a singing group.", Severity.MEDIUM),
        ("The Incredibles 2 will be shown on IMAX.", Severity.MEDIUM),
        ("The Hundred Years' War includes a civil war.", Severity.MEDIUM),
        # a title's qualifier: "which season", not a quantity
        ("Game of Thrones (season 7) centers on a singing group.", Severity.MEDIUM),
        ("The Voice (Season 12) centers on a singing group.", Severity.MEDIUM),
        ("Skins (series 3) centers on a singing group.", Severity.MEDIUM),
        ("The group (about 7 members) sang.", Severity.HIGH),
        ("the group (season 7) sang.", Severity.HIGH),  # not after a name
        ("However (season 2) the group sang.", Severity.HIGH),  # nor an ordinary word
        # a number after a word that may begin a name: "All 4" is a channel
        ("The show streams on All 4 in Britain.", Severity.MEDIUM),
        # quantities stay HIGH
        ("The group has 2 members.", Severity.HIGH),
        ("In 2 weeks the group sang.", Severity.HIGH),
        ("Two films centre on a singing group.", Severity.HIGH),
        ("On May 5 the group sang.", Severity.HIGH),
        ("The ticket cost $2.", Severity.HIGH),
    ],
)
def test_mitigation_number_check_names(claim: str, severity: Severity) -> None:
    found = NumberCheck().run(claim, ["The film centers on an all-female singing group."])
    assert [(f.type, f.severity) for f in found] == [("number_not_in_evidence", severity)]


@pytest.mark.parametrize(
    ("claim", "evidence", "types"),
    [
        ("They landed on July 20, 1969.", "The landing was on 20 July 1969.", []),
        ("They landed in 1969.", "The landing was on 1969-07-20.", []),
        ("They landed on 21 July 1969.", "The landing was on 20 July 1969.",
         ["value_contradiction"]),
        ("It opened in 1793.", "It opened long ago, in 1790 or 1791.", ["date_not_in_evidence"]),
        # a decade agrees with each year in it, and only those
        ("Paramore formed in the 2000's.", "Paramore formed in 2004.", []),
        ("Paramore formed in the 2000s.", "Paramore formed in 2004.", []),
        ("Paramore formed in 2004.", "Paramore formed in the 2000s.", []),
        ("Paramore formed in the 1990s.", "Paramore formed in 2004.", ["value_contradiction"]),
        # "the 1800s" may be the century: no contradiction with 1850, one with 1950
        ("It was built in the 1800s.", "It was built in 1850.", []),
        ("It was built in the 1850s.", "It was built in the 1800s.", []),
        ("It was built in the 1800s.", "It was built in 1950.", ["value_contradiction"]),
        # a bare 2000 reads as a year; the evidence's "2,000" is the same number
        ("There were 2000 delegates.", "There were 2,000 delegates.", []),
        ("It opened in 1999.", "There were 2,000 delegates in 2001.", ["value_contradiction"]),
        # a year inside a name is an identifier: missing, MEDIUM, never "contradicted" by the
        # evidence's one date (which is about something else)
        ("Blade Runner 2049 is a sequel.", "It is the sequel to 1982 's Blade Runner .",
         ["date_not_in_evidence"]),
        ("Euro 1996 was held in England.", "The tournament was held in 1996.", []),
        ("In 2049 it is a sequel.", "It is the sequel to the 1982 film.",
         ["value_contradiction"]),
        ("The film came out in March 2049.", "It came out in 1982.", ["value_contradiction"]),
        # what is not a name before a year: a quarter, a possessive, a preposition
        ("Sales fell in Q3 2019.", "Sales fell in 2020.", ["value_contradiction"]),
        ("Rio's 2013 sequel is Rio 2.", "Rio 2 came out in 2014.", ["value_contradiction"]),
        ("During 1927 it was built.", "It was built in 1930.", ["value_contradiction"]),
        # a year in a title's qualifier names the work
        ("The Thin Red Line (1998 film) is a war film.", "It came out in 1999.",
         ["date_not_in_evidence"]),
        ("He (born 1961) is an actor.", "He was born in 1960.", ["value_contradiction"]),
        # two claim dates against the evidence's one: contradicted, but which one it
        # corrects is unknown (no evidence value: see the next test)
        ("Begun in 1887, it opened in 1890.", "The tower opened in 1889.",
         ["value_contradiction", "value_contradiction"]),
        # a year in a name is not a second date: the real one is still corrected
        ("Blade Runner 2049 came out in 2016.", "The film came out in 2017.",
         ["date_not_in_evidence", "value_contradiction"]),
        # a year in a quoted title's qualifier; not in an event's
        ('Adele\'s "Hello" (2015 song) is a ballad.', "It came out in 2016.",
         ["date_not_in_evidence"]),
        ("Clinton (2016 election) is a ballad.", "It came out in 2017.",
         ["value_contradiction"]),
    ],
)
def test_mitigation_date_check(claim, evidence, types) -> None:
    assert [f.type for f in DateCheck().run(claim, [evidence])] == types


def test_mitigation_date_correction_needs_one_claim_date() -> None:
    ev = ["The film came out in 2017."]
    name, f = DateCheck().run("Blade Runner 2049 came out in 2016.", ev)
    assert name.severity == Severity.MEDIUM and name.evidence_value is None
    assert (f.severity, f.value, f.evidence_value) == (Severity.HIGH, "2016", "2017")
    two = DateCheck().run("Begun in 1887, it opened in 1890.", ["It opened in 1889."])
    assert [(f.severity, f.evidence_value) for f in two] == [(Severity.HIGH, None)] * 2
    # a decade is corrected with its article
    (f,) = DateCheck().run("It was built in the 1990s.", ["It was built in 1985."])
    assert (f.value, f.evidence_value) == ("the 1990s", "1985")
    fixed = correct_claim("It was built in the 1990s.", ["It was built in 1985."], [f])
    assert fixed is not None and fixed[0] == "It was built in 1985."


def test_mitigation_year_in_a_name_is_medium() -> None:
    (f,) = DateCheck().run("Blade Runner 2049 is a sequel.", ["A sequel to the 1982 film."])
    assert f.severity == Severity.MEDIUM and f.value == "2049" and "part of a name" in f.message


def test_mitigation_entity_and_quote_checks() -> None:
    assert EntityCheck().run("Gustave Eiffel built it.", ["The engineer gustave eiffel."]) == []
    f = EntityCheck().run("Pablo Picasso built it.", ["Gustave Eiffel built it."])
    assert [x.value for x in f] == ["Pablo Picasso"] and f[0].severity == Severity.MEDIUM
    # a possessive is not part of the name (tokenised text splits it off)
    assert EntityCheck().run("Damon Albarn's band formed.", ["Damon Albarn 's band."]) == []
    assert [x.value for x in EntityCheck().run("Blur's album sold.", ["Oasis 's album"])] == [
        "Blur"]
    assert QuoteCheck().run('He said "we shall fight".', ["he said: We  shall fight."]) == []
    assert QuoteCheck().run('He said "we shall win".', ["we shall fight"])[0].severity == \
        Severity.HIGH
    # tokenised evidence (`` '' quotes, spaced punctuation) still holds the quote
    ptb = ["She is best known for her song , `` Love or Lust , '' featured in Deep Cover ."]
    assert QuoteCheck().run('Her song "Love or Lust," was in Deep Cover.', ptb) == []
    assert QuoteCheck().run('Her song "Love or Lies" was in Deep Cover.', ptb) != []
    # words must match whole: "Lust" is not in "Lustre"
    assert QuoteCheck().run('Her song "Love or Lust" was a hit.', ["Love or Lustre"]) != []


def test_mitigation_quotes_of_csv_escaped_text() -> None:
    # a claim escaped as a CSV field: the wrapping quotes are no quotation
    claim = '"Jewell is best known for her song ""Love or Lust,"" featured in a film."'
    assert find_quotes(claim) == ["Love or Lust,"]
    assert find_quotes('"""Dog"" is his nickname."') == ["Dog"]
    assert find_quotes('"He voiced ""What\'s New, Scooby-Doo?""".') == ["What's New, Scooby-Doo?"]
    assert find_quotes('He said "no" and "ok".') == []  # under 3 characters, paired right
    assert find_quotes('He said "never" and "always".') == ["never", "always"]
    # escaped without the wrapping pair: every quote doubled
    assert find_quotes('A song called ""Vivere"" by Carlo Buti.') == ["Vivere"]
    # a literal empty quotation among single quotes is not an escape: pairs stay as written
    assert find_quotes('Films include "Chariots of Fire", "" and "The Shooting Party".') == [
        "Chariots of Fire", "The Shooting Party"]


def test_mitigation_allowlist_rules_from_json(tmp_path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"rules": [{
        "name": "allowed_channels", "terms": ["email", "phone", "fax", "chat"],
        "allowed": ["email", "phone"], "synonyms": {"e-mail": "email", "live chat": "chat"},
        "severity": "HIGH"}]}))
    (rule,) = load_rules(path)
    assert rule.run("Write an e-mail or call our phone line.", []) == []
    found = rule.run("Reach us by live chat or fax.", [])
    assert sorted(f.value for f in found) == ["fax", "live chat"]
    with pytest.raises(ValueError, match="not in its terms"):
        AllowlistRule("r", ["a"], ["b"])
    (tmp_path / "bad.json").write_text('{"rules": [{"name": "x"}]}')
    with pytest.raises(ValueError, match=r"rules\[0\] is malformed"):
        load_rules(tmp_path / "bad.json")
    assert load_rules(path)[0].severity.value == "HIGH"


@pytest.mark.parametrize(("rule", "match"), [
    ({"terms": "email, phone, fax", "allowed": ["email"]},  # a string is not a list
     r"terms must be a list of non-empty strings, got 'email, phone, fax'"),
    ({"terms": ["email", "phone", ""], "allowed": ["email"]},  # "" would flag every claim
     r"terms must be a list of non-empty strings"),
    ({"terms": [1, 2], "allowed": []}, r"terms must be a list of non-empty strings"),
    ({"terms": ["email"], "allowed": "email"}, r"allowed must be a list of non-empty strings"),
    ({"terms": ["email"], "allowed": [], "synonyms": ["telefax"]},
     r"synonyms must map non-empty strings to terms, got \['telefax'\]"),
    ({"terms": ["email", "fax"], "allowed": [], "synonyms": {"telefax": "telex"}},
     r"synonyms point at \['telex'\], which are not in its terms"),
    ({"terms": ["email"], "allowed": [], "severity": "urgent"},
     r"severity must be one of HIGH, MEDIUM, LOW, got 'urgent'"),
    ({"terms": [], "allowed": []}, "terms must name at least one term"),
])
def test_mitigation_allowlist_rule_file_errors_name_the_rule(tmp_path, rule, match) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"rules": [{"name": "channels", **rule}]}))
    with pytest.raises(ValueError, match=rf"rules\[0\] is malformed: rule 'channels': {match}"):
        load_rules(path)
    # a lower-case severity is read as the upper-case one
    path.write_text(json.dumps({"rules": [{"name": "channels", "terms": ["fax"],
                                           "allowed": [], "severity": "medium"}]}))
    assert load_rules(path)[0].severity.value == "MEDIUM"


def test_mitigation_values_normalise() -> None:
    assert [n.value for n in find_numbers("$1.2 billion and 1,200,000,000")] == [1.2e9, 1.2e9]
    assert [d.key for d in find_dates("20 July 1969, July 20, 1969 and 1969-07-20")] == [
        (1969, 7, 20)] * 3
    assert [(d.year, d.decade) for d in find_dates("the 1990s, the 2000's, 2004, 1994s")] == [
        (1990, True), (2000, True), (2004, False)]
    assert [n.value for n in find_ordinals("The Second season, the twentieth.")] == [2.0, 20.0]


def test_mitigation_draft_markers_give_way_to_the_answers_numbering() -> None:
    draft = "The Eiffel Tower was built in 1899 [1]. It is 330 metres tall [1, 2]."
    built = draft.index("The Eiffel")
    tall = draft.index("It is")
    done = Evidence("The Eiffel Tower was completed in 1889.", "wiki/eiffel", (0, 39))
    verdicts = [
        ClaimVerdict(Claim("The Eiffel Tower was built in 1899.", (built, tall - 1)),
                     Status.CONTRADICTORY, evidence=(done,)),
        ClaimVerdict(Claim("The Eiffel Tower is 330 metres tall.", (tall, len(draft))),
                     Status.SUPPORTED, evidence=(E_TALL,)),
    ]
    ans = Mitigator("balanced").mitigate(draft, verdicts)
    assert [e.action for e in ans.edits] == ["corrected", "cited"]
    assert ans.body == "The Eiffel Tower was built in 1889 [1]. It is 330 metres tall [1]."
    hedged = Mitigator("balanced").mitigate(draft, [
        ClaimVerdict(verdicts[1].claim, Status.INSUFFICIENT_INFO, evidence=(E_TALL,))])
    assert hedged.body.endswith("It is suggested that the Eiffel Tower is 330 metres tall, "
                                "but this could not be verified.")


def test_mitigation_reference_quotes_every_cited_sentence_of_a_source() -> None:
    ans = Mitigator("balanced").mitigate(DRAFT, VERDICTS)
    eiffel = ans.references[0]
    assert eiffel.source_id == "wiki/eiffel"
    # claim 1 cites the construction sentence, the corrected claim 2 the height sentence
    assert "1887 to 1889" in eiffel.excerpt and "330 metres" in eiffel.excerpt
    assert eiffel.spans == (E_BUILT.span, E_TALL.span)
    assert eiffel.to_dict()["spans"] == [list(E_BUILT.span), list(E_TALL.span)]
    # the same sentence cited twice is quoted once
    twice = Mitigator("balanced").mitigate(DRAFT, [VERDICTS[0], _v(
        "It is 300 metres tall.", "It was built in 1889.", Status.SUPPORTED, E_BUILT)])
    assert twice.references[0].excerpt.count("1887 to 1889") == 1


@pytest.mark.parametrize("draft", ["The tower is 300 metres tall. The tower is old.",
                                   "Intro.\n\nThe tower is 300 metres tall. The tower is old."])
def test_mitigation_removed_sentence_leaves_no_leading_space(draft: str) -> None:
    s = draft.index("The tower is 300")
    claim = "The tower is 300 metres tall."
    v = ClaimVerdict(Claim(claim, (s, s + len(claim))), Status.INSUFFICIENT_INFO)
    ans = Mitigator("strict").mitigate(draft, [v])
    assert ans.body == draft[:s] + "The tower is old."


def test_mitigation_number_after_a_possessive_or_quarter_is_a_quantity() -> None:
    # part of a name: MEDIUM; a quantity after "Apple's" or "During": HIGH
    for claim, severity in (("Pitch Perfect 2 is a film.", Severity.MEDIUM),
                            ("Apple's 5 stores opened.", Severity.HIGH),
                            ("During 3 weeks it rained.", Severity.HIGH)):
        (f,) = NumberCheck().run(claim, ["Nothing here."])
        assert f.severity == severity, claim
