"""Kinship, compass, nationality and category terms swapped for another of their class."""

from __future__ import annotations

import pytest
from test_mitigation_edge_cases import C, _ev, _v

from mitigation.checks import DEFAULT_CHECKS, SUBSTITUTIONS, TermCheck, run_checks
from mitigation.mitigator import Mitigator
from mitigation.terms import NATIONALITIES, term_substitutions


@pytest.mark.parametrize(("claim", "evidence", "found"), [
    # kinship: tied to the same name, directly or by "of"
    ("Henri Kontinen has a sister named Micke.", "His brother Micke is a retired player.",
     [("kinship", "sister", "brother", "Micke")]),
    ("Ares is the nephew of Zeus and Hera.", "He is the son of Zeus and Hera .",
     [("kinship", "nephew", "son", "of Zeus")]),
    ("Her grandparents are Angela Lafever and Gavin Grazer.",
     "He was born to parents Angela Lafever and Gavin Grazer .",
     [("kinship", "grandparents", "parents", "Angela Lafever")]),
    # terms that agree: a father is a parent; the same relation of either gender unknown
    ("Ares is the child of Zeus.", "He is the son of Zeus .", []),
    ("His father is Zeus.", "His parent Zeus ruled.", []),
    # another name, or the name tied another way ("son, George IV" vs "father , George III")
    ("George III was succeeded by his son, George IV.",
     "George IV succeeded his father , George III , in 1820 .", []),
    ("Micke is the sister of Henri.", "His brother Micke is a retired player.", []),
    # one evidence text that agrees is enough
    ("He has a brother named Micke.", "His brother Micke plays. His son Micke too.", []),
    # compass directions tied to the same place
    ("Aarhus is 187 km southeast of Copenhagen.", "It lies 187 km northwest of Copenhagen .",
     [("direction", "southeast", "northwest", "of Copenhagen")]),
    ("It is in southern France.", "It is a town in northern France.",
     [("direction", "southern", "northern", "France")]),
    ("Aarhus is west of Copenhagen.", "It lies 187 km north-west of Copenhagen .", []),
    ("It is east of Berlin.", "It is west of Hamburg.", []),
    ("It is in North Carolina.", "It is in South Carolina.", []),  # names, not directions
    # nationalities tied to the same words
    ("Andrea Pirlo is an American professional footballer.",
     "Andrea Pirlo is an Italian professional footballer who plays for an American club .",
     [("nationality", "American", "Italian", "professional footballer")]),
    ("Psych's protagonist is played by an English actor.",
     "James Roday is an American actor , director and screenwriter .",
     [("nationality", "English", "American", "actor")]),
    # the tie's first word when the whole tie is not there
    ("He is an American actor known for Psych.", "He is a Canadian actor and director.",
     [("nationality", "American", "Canadian", "actor known")]),
    # agreeing nationalities, compounds, and no tie
    ("He is an English actor.", "He is a British actor.", []),
    ("He is a British actor.", "He is a British-born American actor.", []),
    ("He is an American actor.", "He is a British-born American actor.", []),
    ("He is an Italian actor.", "He is an Italian-American actor.", []),
    ("Philomena is American.", "Philomena is a 2013 British drama film.", []),
    ("He is an American actor.", "He is an American actor.", []),
    # what the same subject is said to be, in classes that exclude each other
    ("Camden, New Jersey is a county.", "Camden is a city in Camden County , New Jersey .",
     [("category", "county", "city", "Camden, New Jersey")]),
    ("SpongeBob SquarePants is a movie.",
     "SpongeBob SquarePants is an American animated television series created by Stephen "
     "Hillenburg .", [("category", "movie", "television series", "SpongeBob SquarePants")]),
    ("Pearl Jam is a song.", "Pearl Jam is an American rock band formed in Seattle .",
     [("category", "song", "rock band", "Pearl Jam")]),
    # words of one class, another subject, no head noun, a collective "group of"
    ("Brick Mansions is a movie.", "Brick Mansions is a 2014 action film .", []),
    ("Flaked is a TV series.", "Flaked is an American sitcom .", []),
    ("Brick Mansions is a movie.", "Gotham is an American television series .", []),
    ("Keith Urban is a country music artist.", "Keith Urban is an Australian singer .", []),
    ("The Cyclades are a group of islands.", "The Cyclades are an island group .", []),
    ("Recovery is a film.", "It is a film. Recovery is a studio album .",
     [("category", "film", "studio album", "Recovery")]),
])
def test_term_substitutions(claim: str, evidence: str, found: list) -> None:
    got = [(s.kind, s.claim_term, s.evidence_term, s.tie)
           for s in term_substitutions(claim, [evidence])]
    assert got == found


def test_term_check_reports_a_medium_substitution_with_the_evidence_term() -> None:
    (f,) = TermCheck().run("Ares is the nephew of Zeus.", ["He is the son of Zeus ."])
    assert (f.check, f.type, f.severity.value) == ("term", "term_substitution", "MEDIUM")
    assert (f.value, f.evidence_value) == ("nephew", "son")
    assert f.message == "the claim says 'nephew' (of Zeus), the evidence 'son'"
    assert f.type in SUBSTITUTIONS
    assert any(isinstance(c, TermCheck) for c in DEFAULT_CHECKS)
    assert [x.type for x in run_checks("Ares is the son of Zeus.", ["He is the son of Zeus ."])
            if x.check == "term"] == []


def test_nationalities_that_share_a_group_agree() -> None:
    assert NATIONALITIES["English"] & NATIONALITIES["British"]
    assert NATIONALITIES["Russian"] & NATIONALITIES["Soviet"]
    assert not NATIONALITIES["American"] & NATIONALITIES["Italian"]


def test_a_nationality_another_text_gives_without_a_conflict_is_not_flagged() -> None:
    # the claim's own passage says "British ... film"; another passage's "Canadian film" is
    # about something else
    ev = ["T2 Trainspotting is a 2017 British black comedy drama film .",
          "Goon is a 2011 Canadian film ."]
    assert term_substitutions("T2 Trainspotting is a British film.", ev) == []
    # the same text naming the claim's nationality elsewhere does not agree
    ev = ["Pirlo is an Italian professional footballer who plays for an American club ."]
    assert term_substitutions("Pirlo is an American professional footballer.", ev) != []


@pytest.mark.parametrize(("draft", "evidence", "body"), [
    ("Ares is the nephew of Zeus and Hera.", "He is the son of Zeus and Hera .",
     "Ares is the son of Zeus and Hera [1]."),
    ("Aarhus is 187 km southeast of Copenhagen.", "It is 187 km northwest of Copenhagen .",
     "Aarhus is 187 km northwest of Copenhagen [1]."),
    # the article follows the new word
    ("Andrea Pirlo is a British professional footballer.",
     "Andrea Pirlo is an Italian professional footballer .",
     "Andrea Pirlo is an Italian professional footballer [1]."),
    ("Tim Roth is an English actor.", "Timothy Roth is a Ukrainian actor .",
     "Tim Roth is a Ukrainian actor [1]."),
])
def test_a_contradicted_claim_with_a_swapped_term_is_corrected(draft: str, evidence: str,
                                                               body: str) -> None:
    answer = Mitigator("balanced").mitigate(draft, [_v(draft, draft, C, _ev(evidence))])
    assert answer.edits[0].action == "corrected"
    assert answer.body == body


def test_a_term_written_twice_is_not_corrected() -> None:
    # which "son" the evidence's "father" corrects is unknown: a warning, not a correction
    draft = "His son Tom is the son of Ann."
    answer = Mitigator("balanced").mitigate(
        draft, [_v(draft, draft, C, _ev("His father Tom is the father of Ann ."))])
    assert answer.edits[0].action == "warned"


@pytest.mark.parametrize(("draft", "evidence"), [
    # a category's other words go with it: no "coloring television series"
    ("GLOW is a coloring book.", "GLOW is an American comedy-drama television series ."),
    # "only" stays wrong whatever the term
    ("Louis Malle produced only German language films.",
     "Louis Malle was a French film director who worked in French cinema and English "
     "language films ."),
    ("Tim Roth is solely an English actor.", "Timothy Roth is an American actor ."),
])
def test_a_swapped_term_is_not_offered_where_it_would_not_mend_the_claim(
        draft: str, evidence: str) -> None:
    (f,) = TermCheck().run(draft, [evidence])
    assert f.evidence_value is None
    answer = Mitigator("balanced").mitigate(draft, [_v(draft, draft, C, _ev(evidence))])
    assert answer.edits[0].action == "warned"


def test_names_that_start_with_a_letter_outside_ascii_tie_terms() -> None:
    assert [s.kind for s in term_substitutions("Émile has a sister named Élodie.",
                                               ["His brother Élodie plays."])] == ["kinship"]
    assert [s.kind for s in term_substitutions("It is 5 km north of Évry.",
                                               ["It is 5 km south of Évry."])] == ["direction"]
    assert [s.kind for s in term_substitutions("Ørsted is a film.",
                                               ["Ørsted is a song."])] == ["category"]
    # a place in lower case is no name to tie to
    assert term_substitutions("It is north of the city.", ["It is south of the city."]) == []
