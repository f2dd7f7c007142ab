"""Deterministic hallucination checks: plug-in rules with a name, type, severity and suggestion.

Each check looks at one claim and its evidence texts and returns :class:`Finding` objects.
Numbers and dates are compared after normalisation (``"$1.2 billion"`` equals
``"1,200,000,000 dollars"``; ``"20 July 1969"`` equals ``"July 20, 1969"``), so other
formats of the same value raise no alarm.
"""

from __future__ import annotations

import datetime
import difflib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from mitigation.terms import term_substitutions
from mitigation.values import (
    _ERA_RANGE_JOIN,
    _MONTHS,
    ERA_AFTER_YEAR,
    ERA_WORDS,
    MONTH_NAMES,
    NAME_PARTICLES,
    Date,
    Number,
    bound_words,
    comparable,
    date_in,
    dimension,
    find_dates,
    find_name_starts,
    find_numbers,
    find_ordinals,
    find_quotes,
    half_step,
    in_other_currency,
    in_unit_of,
    money_span,
    money_text,
    number_bound,
    number_in,
    part_of_name,
    quantity_span,
    quantity_text,
    range_end,
    unit_span,
    year_in_name,
)
from verifier.text import fold, trimmed_sentence_spans


class Severity(str, Enum):
    """How serious a finding is."""

    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"


@dataclass(frozen=True)
class Finding:
    """One problem a check found in a claim.

    Attributes:
        check: Name of the check.
        type: What kind of problem (``number_not_in_evidence``...).
        severity: HIGH, MEDIUM or LOW.
        message: What was found.
        suggestion: What to do about it.
        value: The offending value as written in the claim.
        evidence_value: The value the evidence gives instead, when one was found.
    """

    check: str
    type: str
    severity: Severity
    message: str
    suggestion: str = ""
    value: str | None = None
    evidence_value: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict."""
        d = asdict(self)
        d["severity"] = self.severity.value
        return d


@runtime_checkable
class Check(Protocol):
    """A deterministic rule: ``run(claim, evidence) -> list[Finding]``."""

    name: str

    def run(self, claim: str, evidence: Sequence[str]) -> list[Finding]:
        """Findings for ``claim`` against its evidence texts."""
        ...


class NumberCheck:
    """Numbers in the claim that no evidence text gives (HIGH).

    With a unit word next to the number, the evidence's value for the same unit is reported
    as a contradiction, when the pairing is unambiguous: the claim gives one number for that
    unit and the evidence one value ("100 metres wide" against "330 metres tall and 125
    metres wide" is not paired with either, nor "2 years" with "18 months ... 3 years");
    otherwise the evidence's one value of the quantity in another unit next to the same
    content word ("lasts 1 year" against "lasts 6 months", :func:`_other_unit`); an amount of
    money or a percent by the same rule, with the evidence's one other amount of that
    currency, or percent, next to the same word ("earned $5 million" against "earned $7
    million", :func:`_other_amount`). A year of an era given as a bound ("built before 2500
    BC") is met or broken by the evidence's one year of an era (:func:`_era_bounded`). Ordinal
    words in the evidence count ("season 2" is in "the second season"). A number that is
    part of a name ("Pitch Perfect 2", "the Hundred Years' War", "Game of Thrones (season
    7)") is an identifier, not a quantity: missing, it is MEDIUM, as a missing name is
    (:class:`EntityCheck`).

    An ordinal word of the claim ("finished third") is compared only with the evidence's
    ordinal words next to the same word ("finished second"): "first" or "second" is often no
    checkable value ("at first", "a second time"). It is contradicted (HIGH) when those give
    one other value and the evidence gives the claim's value nowhere.
    """

    name = "number"

    def run(self, claim: str, evidence: Sequence[str]) -> list[Finding]:
        """Flag claim numbers missing from the evidence."""
        found = [(e, find_numbers(e)) for e in evidence]
        ordinals = [(e, find_ordinals(e)) for e in evidence]
        # every number the evidence writes, years too: a claim's "1,500" is given by an
        # evidence "1500", which alone reads as a year
        ev_numbers = [n for (e, ords) in ordinals
                      for n in (*find_numbers(e, skip_years=False), *ords)]
        claim_numbers = [(n, _unit_after(claim, n.span[1]), part_of_name(claim, n))
                         for n in find_numbers(claim)]
        # units of the quantities the claim asserts (a number in a name is no quantity), as
        # words and as what they measure
        quantity_units = [unit for _, unit, named in claim_numbers if not named]
        dimensions = [dimension(n) for n, _, named in claim_numbers if not named]
        ordinal_findings = self._ordinals(claim, ordinals, ev_numbers)
        contradicted = {start for _, start in ordinal_findings}  # "2nd" against "third"
        out = []
        for n, unit, named in claim_numbers:
            if n.span[0] in contradicted:
                continue  # a digit ordinal, reported as one below
            bound = None if named else bound_words(claim, n)  # ("max", where "under" starts)
            flipped = _bound_flipped(claim, n, bound, unit, found) if bound else None
            if flipped:
                out.append(flipped)
                continue
            # a year of an era given as a bound: "built before 2500 BC"
            era = None if named or bound else _era_bound(claim, n)
            if number_in(n, ev_numbers) or (not bound and not era
                                             and _rounds(claim, n, ev_numbers)):
                continue  # a bound is no rounding: "more than 5 billion" against 4.54 billion
            if era:
                out.extend(_era_bounded(claim, n, era, evidence))
                continue
            if bound and _bound_met(n, bound[0], unit, found, _lead_word(claim, bound[1])):
                continue  # "over 4.5 million copies" against "4.7 million copies"
            if named:
                out.append(Finding(self.name, "number_not_in_evidence", Severity.MEDIUM,
                                   f"the number {n.text!r}, part of a name, is not in the "
                                   "evidence", "check the name against a source", n.text))
                continue
            money = next(((e, m) for e, ns in found if (m := in_other_currency(n, ns))), None)
            if money:  # "$5 million" against "5 million euros"
                out.append(_value_contradiction(money_text(claim, n), money_text(*money),
                                                _uncorrectable(claim, n, *money)))
                continue
            given = [(e, m, number_bound(e, m)) for e, ns in found for m in ns
                     # the same word, not two units
                     if unit and _unit_after(e, m.span[1]) == unit
                     and not (m.unit and n.unit and m.unit != n.unit)
                     and not _titled_unit(e, m)]  # not "12 Years a Slave"
            values = [m for _, m, _ in given]
            # the value to put in: an exact one, or a bound of the claim's kind ("fewer than
            # 300" corrects no "500"; "over 250 people" corrects "over 15 people")
            usable = [(e, m, theirs) for e, m, theirs in given
                      if theirs is None or (bound is not None and theirs == bound[0])]
            if (usable and quantity_units.count(unit) == 1 and not _titled_unit(claim, n)
                    and all(number_in(m, values[:1]) for m in values)
                    # nor another value of the quantity in another unit: "2 years" against
                    # "18 months ... 3 years"
                    and all(number_in(m, values[:1]) for _, m in _measures(n, found))):
                ev_text, ev_number, ev_bound = usable[0]
                # a bound that an exact value breaks goes with it: "over 10 million" -> "4.7
                # million"
                said = claim[bound[1]: n.span[1]] if bound and ev_bound is None else n.text
                out.append(_value_contradiction(f"{said} {unit}", f"{ev_number.text} {unit}",
                                                _uncorrectable(claim, n, ev_text, ev_number),
                                                value=said, evidence_value=ev_number.text))
            elif not bound and (measured := _other_unit(
                    claim, n, found, dimensions.count(dimension(n)))):
                out.append(measured)
            elif not bound and (amount := _other_amount(
                    claim, n, found, [m for m, _, named in claim_numbers if not named])):
                out.append(amount)
            else:
                out.append(_not_in_evidence(n))
        return out + [f for f, _ in ordinal_findings]

    def _ordinals(self, claim: str, ordinals: Sequence[tuple[str, list[Number]]],
                  ev_numbers: list[Number]) -> list[tuple[Finding, int]]:
        """Claim ordinals that the evidence's ordinals in the same context contradict.

        ``ordinals``: each evidence text with its ordinals. Returns each finding with where
        the claim's ordinal starts.
        """
        out = []
        ev_ordinals = [(o, _context(e, o.span)) for e, ords in ordinals for o in ords]
        for o in find_ordinals(claim):
            where = _context(claim, o.span)
            if not where or number_in(o, ev_numbers):
                continue
            given = [m for m, ctx in ev_ordinals if ctx & where]
            if not given or len({m.value for m in given}) > 1:
                continue
            other = given[0].text.lower()
            other = other[:1].upper() + other[1:] if o.text[:1].isupper() else other
            out.append((Finding(self.name, "value_contradiction", Severity.HIGH,
                                f"the claim says {o.text}, the evidence {given[0].text}",
                                f"use the evidence's value: {other}", o.text, other),
                        o.span[0]))
        return out


def _other_unit(claim: str, n: Number, found: Sequence[tuple[str, list[Number]]],
                claim_count: int) -> Finding | None:
    """A contradiction when the evidence gives ``n``'s quantity in another unit, another value.

    "5 km" against "3,000 m", "1 year" against "6 months", "the race is 5 km" against "the
    race is 5 miles": only when the claim gives one quantity of that dimension
    (``claim_count``), the evidence one value of it (:func:`_measures`), however often and
    in whatever units it writes it, neither of them may be millions ("1.5m"), and a content
    word next to the two is the same ("lasts 1 year" and "lasts 6 months"; not "1.2 km
    long" and "300 m wide", nor the "17-year-old" and "for 6 years": a hyphenated
    quantity has no context; a conversion in brackets is looked past: "330 metres (1,083 ft)
    tall" has "tall" after both). The correction is the evidence's quantity with its unit,
    in the claim's unit where the evidence gives that one ("1,000 feet tall" against "330
    metres (1,083 ft) tall" becomes "1,083 ft"). ``found``: each evidence text with its
    numbers.
    """
    if dimension(n) is None or claim_count != 1 or _millions_too(n) or _titled_unit(claim, n):
        return None
    given = _measures(n, found)
    if not given or any(_millions_too(m) for _, m in given) \
            or not all(number_in(m, [given[0][1]]) for _, m in given):
        return None
    where = _context(claim, quantity_span(claim, n))
    in_claims_unit = sorted(given, key=lambda tm: tm[1].unit != n.unit)  # stable
    text, m = next(((t, m) for t, m in in_claims_unit
                    if where & _context(t, quantity_span(t, m))), (None, None))
    if text is None or m is None:
        return None
    return _value_contradiction(quantity_text(claim, n), quantity_text(text, m),
                                _uncorrectable(claim, n, text, m))


def _not_in_evidence(n: Number) -> Finding:
    """The number check's HIGH finding that the evidence gives no value ``n``."""
    return Finding(NumberCheck.name, MISSING_NUMBER, Severity.HIGH,
                   f"the number {n.text!r} is not in the evidence",
                   "remove the number or cite a source that gives it", n.text)


def _value_contradiction(said: str, other: str, why_not: str | None = None, *,
                         value: str | None = None, evidence_value: str | None = None
                         ) -> Finding:
    """The number check's HIGH finding: the evidence gives ``other`` where the claim says ``said``.

    ``other`` is the suggested correction (``evidence_value``, default ``other``, the
    finding's), unless putting it into the claim would assert what the evidence does not
    (``why_not`` says why, see :func:`_uncorrectable`): then the finding offers no
    correction. ``value``: the claim's value (default ``said``).
    """
    value = said if value is None else value
    if why_not:
        return Finding(NumberCheck.name, "value_contradiction", Severity.HIGH,
                       f"the claim says {said}, the evidence {other}, {why_not}",
                       "check the value against a source", value)
    return Finding(NumberCheck.name, "value_contradiction", Severity.HIGH,
                   f"the claim says {said}, the evidence {other}",
                   f"use the evidence's value: {other}", value,
                   other if evidence_value is None else evidence_value)


#: Words that say which way a value changed ("rose 5%", "a 5% fall"): +1 up, -1 down.
_CHANGE_WORDS: dict[str, int] = {
    **dict.fromkeys(
        "increase increased increases increasing rise rises rose risen rising grow grows grew "
        "grown growing growth gain gains gained gaining up climb climbs climbed climbing jump "
        "jumps jumped jumping surge surges surged surging soar soars soared soaring raise "
        "raises raised raising boost boosts boosted boosting higher expand expands expanded "
        "expanding expansion upturn".split(), 1),
    **dict.fromkeys(
        "decrease decreased decreases decreasing fall falls fell fallen falling decline "
        "declines declined declining drop drops dropped dropping down reduce reduces reduced "
        "reducing reduction cut cuts cutting lower lowered lowering shrink shrinks shrank "
        "shrunk shrinking plunge plunges plunged plunging slump slumps slumped slumping lose "
        "loses lost losing loss losses dip dips dipped sink sinks sank sunk downturn"
        .split(), -1),
}
#: Words between a change word and its value ("rose by about 5%", "fell some 7%").
_CHANGE_FILLERS = frozenset(
    "by of about around nearly almost some roughly approximately just only a an the more "
    "less than over under at least most".split())
#: A word, or what ends a clause or starts another value (the look for a change word stops).
_CHANGE_TOKEN = re.compile(r"[A-Za-z]+|[\d.,;:!?()]")


def change_direction(text: str, span: tuple[int, int]) -> int:
    """Which way the value at ``text[span]`` is said to have changed: +1 up, -1 down, 0 none.

    The nearest change word (:data:`_CHANGE_WORDS`, in lower case: not a name's, "Knocked
    Up") among the five words before the value, with only such words as "by" or "about"
    between them and one word for what changed before "by" ("sales rose 5%", "were up 5%",
    "increased mortality by 50%"), or else among the three words after it, before any
    such word as "of" ("a 5% fall", "a $5 million loss"; not "5% of people grew"); in
    the same clause, with no other number between. A value a change went to or from is a
    level, no change ("rose to 7%", "fell from 9%"; "up to 5%" is a bound).

    >>> change_direction("Mortality increased by 50% in 2020.", (23, 26))
    1
    >>> change_direction("It had a 7% fall in sales.", (9, 11))
    -1
    >>> change_direction("Sales rose 5% to 7% in May.", (17, 19))  # 7%: the 5% is between
    0
    """
    s, e = span
    before = _CHANGE_TOKEN.findall(text[max(0, s - 80): s])[-5:][::-1]  # nearest first
    for i, token in enumerate(before):
        # "rose to 7%", "fell from 9%": the value is a level the change went to or from
        # (and "up to 5%" a bound); a capitalised word is a name's ("Knocked Up")
        if not token.isalpha() or token.lower() in ("to", "from"):
            break
        if token.islower() and (way := _CHANGE_WORDS.get(token, 0)):
            return way
        # another word: what changed, before "by" ("increased mortality by 50%"), or else
        # the value is what some other verb tells ("expand by building over 80 stores")
        if token.lower() not in _CHANGE_FILLERS and not (i and before[i - 1] == "by"):
            break
    after = _CHANGE_TOKEN.findall(text[e: e + 60])[:4]
    for i, token in enumerate(after[:3]):  # "a 5% fall"; not "$1.65 billion, up 2.7%"
        if not token.isalpha() or token.lower() in _NO_CONTEXT:  # "5% of people grew"
            break
        if token.islower() and (way := _CHANGE_WORDS.get(token, 0)):
            return 0 if after[i + 1: i + 2] and after[i + 1].isdigit() else way
    return 0


def _uncorrectable(claim: str, n: Number, text: str, m: Number) -> str | None:
    """Why the evidence's value ``m`` (of ``text``) must not replace the claim's ``n``, if so.

    - The two are not changes the same way (:func:`change_direction`): "sales rose 5%" against
      "sales fell 7%" is not mended by "rose 7%", nor "unemployment was 5%" against
      "unemployment rose 2%" by "was 2%".
    - One of them is part of a name, glued to a word by a hyphen: "covid-19" against
      "SARS-CoV-2 infection" is no "covid-2".
    - The claim's value is one end of a range: "from 25,000 to 5,000 years ago" against
      "25,000 years ago" is no "from 25,000 to 25,000", nor "13,000 to 40,000 members" against
      "30,000 to 35,000 members" "13,000 to 35,000".
    - The evidence's value is paired by its unit word, and its sentence gives another value
      with the unit left out after the word the claim's value follows, which the paired one
      does not follow: "won 3 Oscars" against "nominated for 11 Oscars and won 5" is no "won
      11 Oscars".
    """
    mine, theirs = change_direction(claim, n.span), change_direction(text, m.span)
    if mine != theirs:
        return ("a change the other way" if mine and theirs
                else "the evidence's a change, the claim's a level" if theirs
                else "the claim's a change, the evidence's a level")
    if _HYPHENATED_NAME.search(claim, 0, n.span[0]) or _HYPHENATED_NAME.search(
            text, 0, m.span[0]):
        return "part of a name"
    if range_end(claim, n, find_numbers(claim)):
        return "one end of a range"
    if _unit_after(text, m.span[1]) and _elided_unit(claim, n, text, m):
        return "and another value after the claim's words"
    return None


def _elided_unit(claim: str, n: Number, text: str, m: Number) -> bool:
    """Whether ``m``'s sentence gives another value after ``n``'s word in ``claim``.

    That is a number of ``text`` with no unit of its own after the content word that ``n``
    follows in ``claim``, which ``m`` does not follow ("won 3 Oscars" against "nominated for
    11 Oscars and won 5").
    """
    lead = _lead_word(claim, n.span[0])
    if lead is None or _lead_word(text, m.span[0]) == lead:
        return False
    a, b = next(((a, b) for a, b in trimmed_sentence_spans(text) if a <= m.span[0] < b),
                (0, len(text)))
    return any(o.span != m.span and a <= o.span[0] < b and not o.unit
               and not _unit_after(text, o.span[1]) and _lead_word(text, o.span[0]) == lead
               for o in find_numbers(text))


#: A number glued to the word before it by a hyphen ("covid-19", "SARS-CoV-2", "F-16"): a
#: name's, not a value to correct (searched up to where the number starts).
_HYPHENATED_NAME = re.compile(r"[A-Za-z]-$")


def _era_bound(claim: str, n: Number) -> DateBound | None:
    """The bound that ``claim`` gives number ``n`` as, when ``n`` is a year with its era.

    "before 2500 BC", "after 79 AD" (:func:`date_bound`); ``None`` for a year without an
    era (years from 1000 to 2099 are the date check's, era or not).
    """
    if n.percent or n.currency or not _era_year(claim, n):
        return None
    return date_bound(claim, n)


def _era_year(text: str, n: Number, after: Number | None = None) -> bool:
    """Whether ``n`` of ``text`` is a year with its era ("2560 BC", "AD 79").

    Or the first year of a range whose second year (``after``, the number after ``n``) has
    one: "2589 -- 2566 BC".
    """
    if n.percent or n.currency:
        return False
    return _era_span(text, n) is not None or bool(
        after is not None and _ERA_RANGE_JOIN.fullmatch(text, n.span[1], after.span[0])
        and ERA_AFTER_YEAR.match(text, after.span[1]))


def _era_span(text: str, n: Number) -> tuple[int, int] | None:
    """Where ``text`` writes year ``n`` with its era ("2560 BC", "AD 79"), or ``None``."""
    after = ERA_AFTER_YEAR.match(text, n.span[1])
    before = _ERA_BEFORE_YEAR.search(text, max(0, n.span[0] - 6), n.span[0])
    if not (after or before):
        return None
    return before.start() if before else n.span[0], after.end() if after else n.span[1]


#: An era written before a year: "AD 79", "A.D. 14".
_ERA_BEFORE_YEAR = re.compile(r"\b(?:AD|A\.D\.)[ \u00a0]?$")


def _era_bounded(claim: str, n: Number, bound: DateBound, evidence: Sequence[str]
                 ) -> list[Finding]:
    """The findings for the claim's year ``n`` of an era, given as a ``bound``.

    :meth:`DateCheck._bounded`'s rule for the years outside the date check's (a BC year is
    negative, so it counts backwards): "built before 2500 BC" is met by the evidence's one
    exact year of an era, "2560 BC" (no finding), and broken by "2400 BC" (a contradiction,
    HIGH, with no correction: "before 2400 BC" would be no truer). With no such year, or
    several, or the evidence's one given as a bound itself, the year is not in the evidence.
    """
    years = [(text, m) for text in evidence for numbers in [find_numbers(text, skip_years=False)]
             for k, m in enumerate(numbers)
             if _era_year(text, m, numbers[k + 1] if k + 1 < len(numbers) else None)]
    said = _era_text(claim, n)
    if len({m.value for _, m in years}) != 1 or any(
            date_bound(text, m) or number_bound(text, m) for text, m in years):
        return [_not_in_evidence(n)]
    text, m = years[0]
    if _holds(bound, (m.value > n.value) - (m.value < n.value)):
        return []
    other = _era_text(text, m)
    return [Finding(NumberCheck.name, "value_contradiction", Severity.HIGH,
                    f"the claim says {bound} {said}, the evidence {other}",
                    "check the claim's dates against a source", said)]


def _era_text(text: str, n: Number) -> str:
    """Year ``n`` as ``text`` writes it with its era, if it has one ("2560 BC", "AD 79")."""
    start, end = _era_span(text, n) or n.span
    return text[start:end].strip()


def _other_amount(claim: str, n: Number, found: Sequence[tuple[str, list[Number]]],
                  claim_numbers: Sequence[Number]) -> Finding | None:
    """A contradiction when the evidence gives another amount of ``n``'s money or percent.

    "earned $5 million" against "earned $7 million", "unemployment was 5%" against
    "unemployment was 7%": :func:`_other_unit`'s rule for an amount of one currency or a
    percent. Only when the claim gives one value of that kind (``claim_numbers``: its
    numbers that are quantities), the evidence one value of it (however often it writes it;
    none of its values of that kind a bound, a range or a fraction, "two thirds"), and a
    content word next to the two is the same, or the nearest one before them ("unemployment
    was 5%" and "unemployment was 7%"; not "a budget of $5 million" and "grossed $7
    million"). The correction is the evidence's amount as it writes it ("$7 million", "7
    million dollars", "7%"). ``found``: each evidence text with its numbers.
    """
    kind = _amount_kind(n)
    if kind is None or not _plain_amount(claim, n, claim_numbers) \
            or sum(_amount_kind(m) == kind for m in claim_numbers) != 1:
        return None
    given = [(text, m) for text, numbers in found for m in numbers if _amount_kind(m) == kind]
    if not given or not all(_plain_amount(text, m, numbers)
                            for text, numbers in found for m in numbers
                            if _amount_kind(m) == kind) \
            or not all(number_in(m, [given[0][1]]) for _, m in given):
        return None
    where = _amount_context(claim, n)
    text, m = next(((t, m) for t, m in given if where & _amount_context(t, m)), (None, None))
    if text is None or m is None:
        return None
    return _value_contradiction(money_text(claim, n), money_text(text, m),
                                _uncorrectable(claim, n, text, m))


def _amount_kind(n: Number) -> str | None:
    """What an amount is of: ``"%"`` for a percent, its currency's sign, else ``None``."""
    return "%" if n.percent else n.currency


def _plain_amount(text: str, n: Number, numbers: Sequence[Number]) -> bool:
    """Whether ``n`` of ``text`` (``numbers``: all of its numbers) is one exact amount.

    Not a bound ("over $5 million"), a fraction ("two thirds"), a span of values, an end of
    a range ("5-7%", "between $5 million and 7 million"), nor the first part of a number
    whose thousands a tokeniser split off ("£500, 000").
    """
    return not (n.fraction or n.high is not None or number_bound(text, n) is not None
                or _SPLIT_THOUSANDS.match(text, n.span[1]) or range_end(text, n, numbers))


#: The thousands of a number split off by a tokeniser's space: ", 000" of "£500, 000".
_SPLIT_THOUSANDS = re.compile(r",\s+\d{3}(?![\d.,]\d)")


def _amount_context(text: str, n: Number) -> set[tuple[str, str]]:
    """:func:`_context` of an amount with its currency word, and the nearest word before it.

    The nearest content word (:func:`_lead_word`): "unemployment" in "unemployment was 5%".
    """
    span = money_span(text, n)
    lead = _lead_word(text, span[0])
    return _context(text, span) | ({("before", lead)} if lead else set())


def _measures(n: Number, found: Sequence[tuple[str, list[Number]]]
              ) -> list[tuple[str, Number]]:
    """The evidence's values of ``n``'s dimension, each with its text (none without a unit).

    Not a bound ("over 5 km"), a number under a capitalised unit word, as in a name ("12
    Years a Slave", a "30-Day Guarantee"), nor a temperature against a difference of them
    ("reached 45 °C" against "rose by 5 °C").
    """
    dim = dimension(n)
    if dim is None:
        return []
    delta = "Δ" in (n.unit or "")
    return [(text, m) for text, numbers in found for m in numbers
            if dimension(m) == dim and ("Δ" in (m.unit or "")) == delta
            and number_bound(text, m) is None and not _titled_unit(text, m)]


def _titled_unit(text: str, n: Number) -> bool:
    """Whether ``n``'s unit word is capitalised as in a title ("12 Years a Slave", "30-Day").

    Not a unit that is written capitalised: "°C", "K", "Fahrenheit".
    """
    span = unit_span(text, n)
    word = text[span[0]: span[1]].lstrip(" -\u00a0") if span else ""
    return word[:1].isupper() and not word.startswith(("K", "Celsius", "Fahrenheit",
                                                        "Centigrade", "Kelvin"))


def _millions_too(n: Number) -> bool:
    """Whether ``n``'s "m" stuck to its digits may be millions as well as metres ("1.5m")."""
    return n.alternative is not None and n.text[-2:-1].isdigit()


def _bound_flipped(claim: str, n: Number, mine: tuple[Literal["min", "max"], int],
                   unit: str | None, found: Sequence[tuple[str, list[Number]]]
                   ) -> Finding | None:
    """A contradiction when the evidence bounds the claim's bounded number the other way.

    "grossed under $873 million" against "grossed over $873 million": the same value, the
    same unit word after it (or none on one side), opposite bounds. Only when every such
    mention of the value in the evidence is bounded the other way: an exact "1.6 million
    copies" or a bound the same way leaves the claim alone. The correction swaps the bound's
    words. ``mine``: the claim's bound (:func:`~mitigation.values.bound_words`); ``found``:
    each evidence text with its numbers.
    """
    flipped = []
    for text, numbers in found:
        for m in numbers:
            other_unit = _unit_after(text, m.span[1])
            if not number_in(n, [m]) or (unit and other_unit and unit != other_unit):
                continue
            theirs = bound_words(text, m)
            if theirs is None or theirs[0] == mine[0]:
                return None
            flipped.append(" ".join(text[theirs[1]: m.span[0]].split()))
    if not flipped:
        return None
    said = claim[mine[1]: n.span[1]]
    words = flipped[0][:1].upper() + flipped[0][1:] if said[:1].isupper() else flipped[0]
    return Finding(NumberCheck.name, "value_contradiction", Severity.HIGH,
                   f"the claim says {said}, the evidence {flipped[0]} {n.text}",
                   f"use the evidence's bound: {words} {n.text}", said, f"{words} {n.text}")


def _bound_met(n: Number, bound: Literal["min", "max"] | None, unit: str | None,
               found: Sequence[tuple[str, list[Number]]], lead: str | None = None) -> bool:
    """Whether an exact evidence number of the same kind as the claim's bound ``n`` meets it.

    The same kind: both percents or neither, no two different currency symbols, and the
    same unit word after each (a bound with none, "orders over $150", is left alone: what it
    counts is unknown; but a percent's kind is known: "over half of" is met by "55 percent
    of") or units of one dimension ("over 5 km" is met by "5,400 m", compared in the
    claim's unit), or the same content word before each where one of them has no unit word
    (``lead``, :func:`_lead_word` before the claim's bound: "a population of more than
    600,000 residents" is met by "a population of 662,577."). Only within ten times the
    bound (a bound rounds a value: "over 4.5 million copies" is given by "4.7 million
    copies", "over 1.6 thousand copies" is not by "1.6 million copies"), unless the bound is
    written with one significant figure, a floor or ceiling stated in round terms: "over a
    million viewers" is met by "14.3 million viewers". An evidence number that is a bound
    itself meets nothing: "gatherings over 15 people" is not given by "gatherings over 250
    people", a threshold of another value. ``found``: each evidence text with its numbers.
    """
    if bound is None or n.value <= 0 or (unit is None and not n.percent and lead is None):
        return False
    for text, numbers in found:
        for m in numbers:
            if m.percent != n.percent or (n.currency and m.currency and
                                          n.currency != m.currency) \
                    or number_bound(text, m) is not None:
                continue
            theirs = _unit_after(text, m.span[1])
            same_lead = lead is not None and (theirs is None or unit is None) \
                and _lead_word(text, m.span[0]) == lead
            if same_lead or (theirs == unit and (unit is not None or n.percent)):
                value: float | None = m.value
            elif unit is None and not n.percent:
                continue
            else:  # in another unit, "over 5 km" is met by "5,400 m"
                value = in_unit_of(m, n)
            if value is None:
                continue
            # the claim's bound rounds the evidence's value: "over 4.5 million" for 4.7
            # million, not "over 1,600" for 1.6 million (nor "over £100" for £100,000)
            low, high = (n.value, 10 * n.value) if bound == "min" else (n.value / 10, n.value)
            if _one_figure(n.value):  # "over a million", "under 500": any value beyond
                low, high = (low, math.inf) if bound == "min" else (0.0, high)
            if low <= value <= high:
                return True
    return False


#: Words that make a number approximate: "about 300" rounds to the hundred.
_APPROXIMATE = re.compile(r"(?:\b(?:about|around|approximately|roughly|nearly|almost|some|"
                          r"circa|approx\.?|an estimated|estimated)|~|≈)\s*[$€£]?\s*$",
                          re.IGNORECASE)


def _rounds(claim: str, n: Number, numbers: Sequence[Number]) -> bool:
    """Whether an evidence number, rounded as the claim writes ``n``, is ``n``.

    The claim's precision is its last written digit ("2.1 million": a hundred thousand;
    "23%": one percent; "8,849 m": one metre), or with a word that makes it approximate
    ("about", "roughly", "~") its last digit that is not a trailing zero ("about 300":
    a hundred). So "2.1 million residents" is given by "2,102,650 residents", "23%" by
    "23.4%", "about 1,200 people" by "1,213 people"; not "300 m" by "330 m", nor "$2
    billion" by "$1.9 billion"; a value of one significant figure only when approximate
    ("1%" is not given by "0.97%", which may be another quantity). The same unit of measure
    or none; percent and currency as :func:`~mitigation.values.comparable` says; under 5 % from
    the value (10 % when approximate). A bound is not rounded (the caller's).

    >>> t = "Paris has approximately 2.1 million residents."
    >>> _rounds(t, find_numbers(t)[0], find_numbers("It had 2,102,650 residents."))
    True
    >>> t = "The tower is 300 m tall."
    >>> _rounds(t, find_numbers(t)[0], find_numbers("The tower is 330 m tall."))
    False
    """
    if not re.search(r"\d", n.text) or n.value <= 0 or not math.isfinite(n.value) \
            or n.hour is not None or n.high is not None or n.fraction:
        return False
    approximate = bool(_APPROXIMATE.search(claim, 0, n.span[0]))
    if not approximate and _one_figure(n.value):
        return False  # "1%", "$3 billion": one figure rounds too much to pair by value alone
    # the place of the last written digit ("2.1 million": a hundred thousand); approximate,
    # of the last one that is not a trailing zero ("about 300": a hundred)
    step = 2 * half_step(n, zeros=approximate)
    for m in numbers:
        if not comparable(n, m) or m.unit != n.unit:
            continue
        if not (m.value > 0 and math.isfinite(m.value) and m.value != n.value
                and abs(m.value - n.value) < (0.1 if approximate else 0.05) * n.value):
            continue
        q = m.value / step  # a half rounds either way: 2.45 million is "2.4" or "2.5 million"
        if any(math.isclose(k * step, n.value, rel_tol=1e-9)
               for k in (math.floor(q + 0.5), math.ceil(q - 0.5))):
            return True
    return False


def _one_figure(value: float) -> bool:
    """Whether ``value`` has one significant figure (1, 500, 600,000, a million, 0.2).

    >>> [_one_figure(v) for v in (1e6, 600_000, 0.2, 1_600, 4.5e6, 14)]
    [True, True, True, False, False, False]
    """
    if value <= 0 or not math.isfinite(value):
        return False
    lead = value / 10 ** math.floor(math.log10(value))
    return math.isclose(lead, round(lead), rel_tol=1e-9)


_LEAD_TOKEN = re.compile(r"[A-Za-z]+|\d")


def _lead_word(text: str, pos: int) -> str | None:
    """The nearest content word among the three words before ``pos``, else ``None``.

    "population" in "with a population of "; ``None`` too when a number comes first.

    >>> _lead_word("It had a population of more than 600,000.", 23)
    'population'
    >>> _lead_word("In 2010, over 500 people came.", 9) is None
    True
    """
    for token in reversed(_LEAD_TOKEN.findall(text[max(0, pos - 60): pos])[-3:]):
        if token.isdigit():
            return None
        if token.lower() not in _NO_CONTEXT:
            return token.lower()
    return None


#: Words that tell nothing of what an ordinal counts ("the", "his", "was"), or make it an
#: idiom ("second time", "first hand").
_NO_CONTEXT = frozenset(
    "a an the and or but nor of in on at to for by with as from per into than then also "
    "is was were are be been being has had have do did his her its their our my your he she "
    "it they we i you this that these those who which what when where time times hand half "
    "nature glance sight person".split())


def _context(text: str, span: tuple[int, int]) -> set[tuple[str, str]]:
    """The content words right before and after ``text[span]`` (none in a compound word).

    The word after looks past a short aside in brackets and out of the brackets around
    ``text[span]``: "tall" is after both quantities of "330 metres (1,083 ft) tall".
    """
    s, e = span
    if text[s - 1:s] == "-" or text[e:e + 1] == "-":  # "second-hand", "first-time"
        return set()
    out = set()
    after = re.match(r"(?:\s*\([^()]{1,40}\))?\)?\s+([A-Za-z]+)", text[e:])
    before = re.search(r"([A-Za-z]+)\s+$", text[:s])
    for side, m in (("after", after), ("before", before)):
        if m and m.group(1).lower() not in _NO_CONTEXT:
            out.add((side, m.group(1).lower()))
    return out


#: A weekday right before a date: "Monday, " in "on Monday, June 6, 2016".
_WEEKDAY_BEFORE = re.compile(
    r"\b(Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day(,?\s+)(?:the\s+)?$")


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _weekday(d: Date) -> str | None:
    """The weekday of a date given to the day ("Tuesday"), else ``None``."""
    if d.month is None or d.day is None or d.ambiguous or d.decade or d.century:
        return None
    try:
        return _WEEKDAYS[datetime.date(d.year, d.month, d.day).weekday()]
    except ValueError:
        return None


class DateCheck:
    """Dates in the claim that no evidence date agrees with.

    MEDIUM; HIGH (a contradiction) when the evidence gives exactly one date as precise as
    the claim's (:func:`_distinct_dates`; of the claim's life event when it names one),
    unless the claim's date is a bare year inside a name ("Blade Runner 2049", "Euro 1996",
    "The Thin Red Line (1998 film)": :func:`~mitigation.values.year_in_name`), which is an
    identifier, not a date the evidence's one date could correct. The evidence's date is
    offered as the correction only when the claim gives one date (years in names aside): of
    "begun in 1887, opened in 1890" against "opened in 1889", which one 1889 corrects is
    unknown; and only when the evidence gives it as no year in a name and no other life
    event's date (:func:`_date_corrects`: "a tour of duty in 1947" is not mended by "( born
    October 13 , 1967 )"). A century ("the 20th century") agrees with each year in it and is
    contradicted only by another century.

    Dates of a life event (birth, conception, death, marriage: the event's word at most
    three words before the date, "born on", "( born", "died in April of"; or a lifespan in
    brackets with days, "( April 15 , 1894 -- September 26 , 1937 )") are compared event by
    event (HIGH): "died on December 14, 1971" is contradicted by "( born December 14 , 1971
    )" when every mention of that date in the evidence is of another event, and "died on
    April 26, 1937" by the lifespan above, whose one death date is another (and corrects it).
    A date of no life event that the evidence gives only as a birth date is no date of the
    claim's event: a day is contradicted ("graduated college on May 14th, 1961" against "(
    born 14 May 1961 )", HIGH), a year not found (MEDIUM: "founded in 1961" may hold). "is
    still alive" or "has not died" is contradicted by any evidence date of death (HIGH).

    A bound the evidence's one date itself breaks is contradicted (HIGH, no correction):
    "developed before the 1960s" against "in the 1960s" ("by 2005" is met by "in 2005").
    """

    name = "date"

    def run(self, claim: str, evidence: Sequence[str]) -> list[Finding]:
        """Flag claim dates missing from the evidence."""
        found = find_dates(claim)
        claim_dates = [(d, year_in_name(claim, d)) for d in found]
        # each claim date's life event; "born before 1900" bounds the event's date: no date
        # of it to compare
        events = [None if named or _DATE_BOUND.search(claim, 0, d.span[0]) else
                  _life_event(claim, d, found) for d, named in claim_dates]
        # each evidence date with its life event (if any) and the bound it is given as
        # ("built before 1890")
        found_in = [(e, find_dates(e)) for e in evidence]
        dated = [(x, _life_event(e, x, ds), date_bound(e, x)) for e, ds in found_in for x in ds]
        ev_dates = [x for x, _, _ in dated]
        # numbers that cannot be read as years ("2,000", "$2000"; a bare 2000 is a date)
        ev_numbers = [n for e in evidence for n in find_numbers(e)]
        asserted = sum(not named for _, named in claim_dates)
        out = []
        alive = _ALIVE.search(claim)
        if alive and any(e == "death" for _, e, _ in dated):
            # "Bea Arthur is still alive" against "( May 13 , 1922 -- April 25 , 2009 )"
            out.append(Finding(self.name, "event_contradiction", Severity.HIGH,
                               f"the claim says {alive.group(0)!r}, the evidence gives a "
                               "date of death", "check whether they are alive",
                               alive.group(0)))
        for (d, named), event in zip(claim_dates, events, strict=True):
            if date_in(d, ev_dates):
                mentions = [(e, b) for x, e, b in dated if date_in(d, [x])]
                others = {e for e, _ in mentions}
                bound = None if named else date_bound(claim, d)
                if event and len(others) == 1 and None not in others and event not in others:
                    out.append(Finding(self.name, "event_contradiction", Severity.HIGH,
                                       f"the claim gives {d.text} as a {event} date, the "
                                       f"evidence as a {others.pop()} date",
                                       "check which event the date belongs to", d.text))
                elif bound in ("before", "after") and all(b is None for _, b in mentions) \
                        and len(_distinct_dates(d, ev_dates)) == 1:
                    # "developed before the 1960s" against the evidence's one date, "in the
                    # 1960s": the bound is broken by the date itself
                    m = _bound_words(claim, d)
                    said = claim[m.start() if m else d.span[0]: d.span[1]]
                    out.append(Finding(self.name, "value_contradiction", Severity.HIGH,
                                       f"the claim says {said!r}, the evidence gives the "
                                       f"date itself ({d.text})", "check the claim's dates "
                                       "against a source", d.text))
                elif event is None and not named and bound is None and others == {"birth"} \
                        and not _LIFE_EVENT_ANYWHERE["birth"].search(claim):
                    # "graduated on September 30th, 1946" against "( September 30 , 1946 --
                    # December 17 , 2009 )": the evidence dates a birth, not the claim's
                    # event; a day cannot be both (HIGH), a year can ("founded in 1946")
                    if d.day is not None:
                        out.append(Finding(self.name, "event_contradiction", Severity.HIGH,
                                           f"the claim gives {d.text} to another event, the "
                                           "evidence as a birth date",
                                           "check which event the date belongs to", d.text))
                    else:
                        out.append(Finding(self.name, "date_not_in_evidence", Severity.MEDIUM,
                                           f"the evidence gives {d.text} only as a birth "
                                           "date", "check the date against a source", d.text))
                continue
            bare_year = d.month is None and not d.span_of_years
            if bare_year and any(n.value == d.year and not n.percent for n in ev_numbers):
                continue  # "2000 delegates" against the evidence's "2,000": a number
            # the evidence's one date of the claim's event, else its one date
            of_event = [x for x, e, _ in dated if event and e == event]
            distinct = _distinct_dates(d, of_event or ev_dates)
            theirs = ([b for x, _, b in dated if x.key == distinct[0].key]
                      if len(distinct) == 1 else [])
            mine = None if named else date_bound(claim, d)
            if named:
                out.append(Finding(self.name, "date_not_in_evidence", Severity.MEDIUM,
                                   f"the year {d.text!r}, part of a name, is not in the "
                                   "evidence", "check the name against a source", d.text))
            elif mine or (theirs and all(theirs)):
                # a bound on either side (every mention of the evidence's date a bound):
                # compared, never offered as a correction ("built after 1900" is not mended
                # by "1890", nor "born in 1900" by "before 1890")
                finding = self._bounded(d, mine, distinct, theirs)
                if finding:
                    out.append(finding)
            elif len(distinct) == 1 and (not d.century or distinct[0].century):
                # a century is contradicted only by a century: "lived in the 21st century"
                # against "born in 1941" is no contradiction
                other = distinct[0]
                # a decade is replaced with its article: "the 1990s" -> "1985"
                value = (claim[d.span[0] - 4: d.span[1]] if d.decade and
                         claim[max(0, d.span[0] - 4): d.span[0]].lower() == "the " else d.text)
                # else which claim date it corrects is unknown
                right = (_same_granularity(d, other, value)
                         if asserted == 1 and _date_corrects(claim, event, other, found_in)
                         else None)
                if right and not d.decade and (day := _WEEKDAY_BEFORE.search(
                        claim, 0, d.span[0])):
                    # the weekday goes with its date: recomputed, else dropped ("on
                    # Monday, June 2016" -> "in July 2016")
                    named_day, start = _weekday(other), day.start()
                    on = claim[max(0, start - 3): start]
                    if named_day:
                        right = f"{named_day}{day.group(2)}{right}"
                    elif on in ("on ", "On "):
                        start, right = start - 3, ("In " if on[0] == "O" else "in ") + right
                    value = claim[start: d.span[1]]
                out.append(Finding(
                    self.name, "value_contradiction", Severity.HIGH,
                    f"the claim says {d.text}, the evidence {other.text}",
                    f"use the evidence's date: {right}" if right
                    else "check the claim's dates against a source",
                    value, right))
            else:
                out.append(self._missing(d))
        return out

    def _missing(self, d: Date) -> Finding:
        return Finding(self.name, "date_not_in_evidence", Severity.MEDIUM,
                       f"the date {d.text!r} is not in the evidence",
                       "check the date against a source", d.text)

    def _bounded(self, d: Date, mine: DateBound | None, distinct: Sequence[Date],
                 theirs: Sequence[DateBound | None]) -> Finding | None:
        """The finding for claim date ``d`` when it or the evidence's date is a bound.

        ``mine``: the claim's bound; ``distinct``: the evidence's dates as precise as ``d``;
        ``theirs``: the bounds of each mention of the one distinct date (``None``: exact).
        A bound met by the other side's exact date is no contradiction: the claim's
        ("built after 1900" against "built in 1905") gives no finding, the evidence's ("born
        in 1885" against "born before 1890") a date not in the evidence (MEDIUM); a bound
        broken is a contradiction (HIGH) with no correction; two bounds are not compared.
        """
        missing = self._missing(d)
        exact = not any(theirs)
        if len(distinct) != 1 or d.span_of_years or distinct[0].span_of_years \
                or (mine is not None and not exact) or (mine is None and len(set(theirs)) != 1):
            return missing  # several dates, spans of years, two bounds, mixed bounds
        other = distinct[0]
        order = _date_order(other, d)  # the evidence's date against the claim's
        if order is None:
            return missing
        if mine is not None:
            held = _holds(mine, order)
        else:
            bound = theirs[0]
            assert bound is not None
            held = _holds(bound, -order)
        if held:
            return None if mine else missing
        said = f"{mine} {d.text}" if mine else d.text
        given = other.text if mine else f"{theirs[0]} {other.text}"
        return Finding(self.name, "value_contradiction", Severity.HIGH,
                       f"the claim says {said}, the evidence {given}",
                       "check the claim's dates against a source", d.text)


#: How a date is given as a bound: "after 1900", "before 1890" and "prior to 1890", "by 1900"
#: (at the latest). "since" and "until" start or end a span, which the date itself gives.
DateBound = Literal["after", "before", "by"]
#: The words before a date that make it a bound or an end of a span (any of them keeps a
#: claim's date from being read as a life event's, :meth:`DateCheck.run`).
_DATE_BOUND = re.compile(r"\b(?:(?P<after>after)|(?P<before>before|prior\s+to)|(?P<by>by)|"
                         r"until|till|since)\s+(?:the\s+)?$", re.I)


def date_bound(text: str, d: Date | Number) -> DateBound | None:
    """Whether ``text`` gives date ``d`` as a bound, from the words right before it.

    Example:
        >>> t = "It was built after 1900 and sold by 1950, in 1952."
        >>> [date_bound(t, d) for d in find_dates(t)]
        ['after', 'by', None]
    """
    m = _bound_words(text, d)
    kind = m.lastgroup if m else None
    return kind if kind in ("after", "before", "by") else None  # type: ignore[return-value]


def _bound_words(text: str, d: Date | Number) -> re.Match[str] | None:
    """The words right before ``d`` in ``text`` that make it a bound or a span's end."""
    return _DATE_BOUND.search(text, max(0, d.span[0] - 20), d.span[0])


def _date_order(a: Date, b: Date) -> int | None:
    """How date ``a`` stands to ``b``: -1 earlier, 0 the same as precise as both go, 1 later.

    ``None`` when they cannot be ordered (a day and a month that may be the other way round).
    """
    if a.year != b.year:
        return -1 if a.year < b.year else 1
    for x, y in ((a.month, b.month), (a.day, b.day)):
        if x is None or y is None:
            return 0
        if a.ambiguous or b.ambiguous:
            return None
        if x != y:
            return -1 if x < y else 1
    return 0


def _holds(bound: DateBound, order: int) -> bool:
    """Whether a date ``order`` (:func:`_date_order`) from a bound's date meets the bound.

    The same date as precise as both give (``order == 0``) meets "by" only: "after 1900" is
    not met by "in 1900".
    """
    return order > 0 if bound == "after" else order < 0 if bound == "before" else order <= 0


def _distinct_dates(d: Date, dates: Sequence[Date]) -> list[Date]:
    """The distinct dates of ``dates`` as precise as the claim's date ``d``.

    A year is compared with years ("November 19 , 2013" and "2013" are one), a month with
    the dates that give a month, a day with those that give a day (each level falls back to
    every date when none is that precise); a decade, a century or a span of years, on either
    side, with whole dates.
    """
    pool = list(dates)
    plain = not any(x.decade or x.century or x.span_of_years for x in (d, *pool))
    if plain and d.month is not None:
        pool = [x for x in pool if (x.day if d.day is not None else x.month) is not None] \
            or pool
    by_year = plain and d.month is None
    return list({(x.year if by_year else x.key): x for x in pool}.values())


_LIFE_EVENT_WORDS: dict[str, str] = {
    "birth": r"born|birth|birthday|birthed|came\s+into\s+the\s+world",
    "conception": r"conceived|conception",
    "death": r"died|dies|death|passed\s+away",
    "marriage": r"married|marries|marriage|wed|weds|wedding",
}
_LIFE_EVENTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (event, re.compile(rf"\b(?:{words})\b(?:\W+\w+){{0,3}}\W*$", re.I))
    for event, words in _LIFE_EVENT_WORDS.items())
#: A life event's word anywhere in a text ("On May 19, 1945, Ian Gillan was born.").
_LIFE_EVENT_ANYWHERE: dict[str, re.Pattern[str]] = {
    event: re.compile(rf"\b(?:{words})\b", re.I) for event, words in _LIFE_EVENT_WORDS.items()}
#: A claim that someone is alive: "is still alive", "are living", "has not died" (not "is
#: living in Paris").
_ALIVE = re.compile(r"\b(?:is|are)\s+(?:still\s+)?(?:alive|living(?!\s+(?:in|on|at|with)\b))"
                    r"|\bha(?:s|ve)(?:\s+not|n't)(?:\s+yet)?\s+died\b", re.I)
#: How far before a lifespan its bracket may open: past a name and its pronunciation, "(
#: -LSB- ˌmɒntəlˈbɑːn -RSB- -LSB- montalˈβan -RSB- ; November 25 , 1920 -- January 14 , 2009 )".
_LIFESPAN_OPEN = 120
#: What joins the two dates of a lifespan: "( April 15 , 1894 -- September 26 , 1937 )".
_LIFESPAN_DASH = re.compile(r"\s*(?:--|-|–|—)\s*")


def _date_corrects(claim: str, event: str | None, other: Date,
                   found_in: Sequence[tuple[str, list[Date]]]) -> bool:
    """Whether the evidence's date ``other`` may correct a claim date of life event ``event``.

    Only where some evidence text writes it not as a year in a name
    (:func:`~mitigation.values.year_in_name`) and not as the date of another life event
    (:func:`_life_event`). A claim date of no life event is corrected by a life event's
    date only when the claim names that event elsewhere ("On May 19, 1945, Ian Gillan was
    born."); a mention whose event is not read ("( born Howard Allen Frances O'Brien ;
    October 4 , 1941 )") may correct any. So "on a tour of duty in 1947" is not mended by
    "( born October 13 , 1967 )" into a tour of duty in 1967, "died in 1998" not by "( born
    16 March 1959 )", nor "the 2017 qualifier" by "a London 2012 Olympian". The
    contradiction stands (the evidence's one date is not the claim's); only the correction
    is withheld. ``found_in``: each evidence text with its dates.
    """
    for text, dates in found_in:
        for x in dates:
            if x.key != other.key or year_in_name(text, x):
                continue
            theirs = _life_event(text, x, dates)
            if theirs is None or theirs == event or (
                    event is None and _LIFE_EVENT_ANYWHERE[theirs].search(claim)):
                return True
    return False


def _life_event(text: str, d: Date, dates: Sequence[Date]) -> str | None:
    """The life event of date ``d`` of ``text`` (``dates``: all of its dates, in order).

    ``"birth"``, ``"conception"``, ``"death"`` or ``"marriage"`` when an event's word is at
    most three words before the date ("born on", "( born", "died in April of"; the nearest
    one); else the first or the second date of a lifespan in brackets, both with a day ("(
    born Colin Emm ; 20 November 1932 -- 2 June 2012 )", the bracket up to
    :data:`_LIFESPAN_OPEN` characters before, "-LRB-" a bracket too; not a run of years, "(
    2000 -- 04 )"); else ``None``.
    """
    before = text[max(0, d.span[0] - 60): d.span[0]]
    # the nearest event word: "born in 1900, died 1950" gives 1950 to death
    hits = [(m.start(), event) for event, pattern in _LIFE_EVENTS
            for m in [pattern.search(before)] if m]
    if hits:
        return max(hits)[1]
    for a, b in zip(dates, dates[1:], strict=False):
        if ((d is a or d is b) and a.day is not None and b.day is not None
                and _LIFESPAN_DASH.fullmatch(text, a.span[1], b.span[0])
                and "(" in _brackets(text[max(0, a.span[0] - _LIFESPAN_OPEN): a.span[0]]
                                     ).rpartition(")")[2]):
            return "birth" if d is a else "death"
    return None


def _brackets(text: str) -> str:
    """``text`` with tokenised brackets written as brackets ("-LRB- born" -> "( born")."""
    return text.replace("-LRB-", "(").replace("-RRB-", ")")


def _same_granularity(d: Date, other: Date, value: str) -> str | None:
    """The evidence's date ``other`` written as precisely as the claim's ``d`` (``value``).

    A claim's year is corrected with a year ("in 1970" -> "in 1969", not "in July 20, 1969"),
    its month and year with a month and year; ``None`` when the evidence is less precise
    than the claim (a year cannot correct "on 20 July 1970") or is a decade where the claim
    gives a year.
    """
    if d.century or other.century:  # "the 19th century" -> "the 18th century" only
        return other.text if d.century and other.century else None
    if d.decade:
        if other.decade:  # "the 1990s" -> "the 1980s"
            return value[:len(value) - len(d.text)] + other.text
        return str(other.year)
    if other.decade:
        return None
    if d.month is None:  # a year, with the era written after it ("1190 BC", "1200 AD")
        era = ERA_AFTER_YEAR.search(other.text) if other.month is None else None
        return f"{abs(other.year)}{era.group(0) if era else ''}" if era or other.year < 0 \
            else str(other.year)
    if other.month is None or (d.day is not None and other.day is None):
        return None
    if d.day is None:
        if other.ambiguous:
            return None  # which month "03/04/2019" means is unknown
        return f"{MONTH_NAMES[other.month - 1]} {other.year}"
    return _written_like(d, other)


def _written_like(d: Date, other: Date) -> str:
    """The evidence's day ``other`` written as the claim writes its day ``d``.

    "the 5th of June 1990" against "6 June 1990" is corrected to "the 6th of June 1990", not
    "the 6 June 1990". ``other.text`` when ``d`` is not written with its day, a month's name
    and its year, each once ("1990-06-05", "5/6/1990"), or when ``other`` is ambiguous.

    Example:
        >>> june_6 = Date(1990, 6, 6, "June 6, 1990", (0, 12))
        >>> _written_like(Date(1990, 6, 5, "5th of June, 1990", (0, 17)), june_6)
        '6th of June, 1990'
        >>> _written_like(Date(1990, 6, 5, "5 Jun. 1990", (0, 11)), june_6)
        '6 Jun. 1990'
    """
    if other.ambiguous or other.day is None or other.month is None or d.month is None:
        return other.text
    month = MONTH_NAMES[d.month - 1]
    parts: dict[str, list[re.Match[str]]] = {"day": [], "month": [], "year": []}
    for m in re.finditer(r"(?P<n>\d+)(?P<th>st|nd|rd|th)?\b|[A-Za-z]+", d.text):
        if m.group("n") and int(m.group("n")) == d.day and len(m.group("n")) <= 2:
            parts["day"].append(m)
        elif m.group("n") and int(m.group("n")) == d.year:
            parts["year"].append(m)
        elif not m.group("n") and len(m.group(0)) >= 3 and \
                month.lower().startswith(m.group(0).lower()):
            parts["month"].append(m)
    if any(len(found) != 1 for found in parts.values()):
        return other.text
    day, name = other.day, MONTH_NAMES[other.month - 1]
    written = parts["month"][0].group(0)
    suffix = ("th" if day % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(
        day % 10, "th")) if parts["day"][0].group("th") else ""
    short = len(written) < len(month)  # "Jun", "Sept.": the month's usual abbreviation
    values = {"day": f"{day}{suffix}", "year": str(other.year),
              "month": name if not short else "Sept" if other.month == 9 and
              written.lower() == "sept" else name[:3]}
    out = d.text
    for key, m in sorted(((k, v[0]) for k, v in parts.items()), key=lambda kv: -kv[1].start()):
        end = m.end()
        if key == "month" and values[key] == name and out[end:end + 1] == ".":
            end += 1  # "May" is no abbreviation: no stop after it ("6 May 1990")
        out = out[:m.start()] + values[key] + out[end:]
    return out


class EntityCheck:
    """Capitalised names in the claim that no evidence text mentions (MEDIUM).

    Where the evidence names another after the same two words ("directed by John Woo"
    against "directed by Gordon Chan"), the finding is an ``entity_substitution`` naming it
    (:func:`_substitute`).

    A unit after a number ("100 degrees Fahrenheit") is the number check's. Dates are the
    date check's: a month name, or a weekday next to a date, is no entity ("3
    March 2019" and "Monday, 3 June 2019" are in "2019-03-03" and "2019-06-03"); a weekday on
    its own ("on Monday") is checked as a name. A month standing alone ("in March") is found
    in an evidence date of that month, too. "May" and "Sun", also names, are read as dates
    only after a word that introduces one ("in May", "on Sun.").
    """

    name = "entity"

    def run(self, claim: str, evidence: Sequence[str]) -> list[Finding]:
        """Flag names missing from the evidence (case-insensitive, word by word)."""
        ev = fold(" ".join(evidence))
        dates = [d.span for d in find_dates(claim)]
        units = [s for n in find_numbers(claim)  # not "Years" of "the Hundred Years' War"
                 if not part_of_name(claim, n) and (s := unit_span(claim, n))]
        eras = [m.span() for m in ERA_AFTER_YEAR.finditer(claim)]  # "753 BCE": a year's
        for a, b in dates + units + eras:  # the date and number checks compare them
            claim = claim[:a] + " " * (b - a) + claim[b:]
        ev_months: set[int] | None = None
        out = []
        for name, start in find_name_starts(claim):
            # accents, apostrophes' shapes and possessives aside ("Apple's", "Beatles'")
            words = [w for w in (re.sub(r"'s?$", "", w) for w in re.findall(r"[\w'-]+",
                                                                          fold(name)))
                     if len(w) > 2]
            if _date_words(claim, start, words):
                if ev_months is None:
                    ev_months = {d.month for e in evidence for d in find_dates(e)
                                 if d.month is not None}
                # a weekday next to a date is the date check's ("Monday, 3 June 2019");
                # a month is in the evidence's words or dates
                dated = _next_to(dates, claim, start, start + len(name))
                words = [w for w in words
                         if (_MONTHS[w] not in ev_months if w in _MONTHS else not dated)]
            # (a word that is not in the text at all needs no pattern compiled)
            if words and not all(w in ev and re.search(rf"\b{re.escape(w)}\b", ev)
                                 for w in words) and not _initials_of(name, evidence):
                found = _substitute(claim, name, start, evidence)
                if found:
                    context, other = found
                    out.append(Finding(self.name, "entity_substitution", Severity.MEDIUM,
                                       f"the claim names {name!r} after {context!r}, the "
                                       f"evidence {other!r}",
                                       "check the name against a source", name, other))
                    continue
                out.append(Finding(self.name, "entity_not_in_evidence", Severity.MEDIUM,
                                   f"{name!r} is not mentioned in the evidence",
                                   "check the name against a source", name))
        return out


_CONTEXT_WORD = re.compile(r"[\w'’-]+")
#: A name after the claim's context words in the evidence: capitalised words.
_FOLLOWING_NAME = r"\W+(?:the\s+)?([A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)"


def _substitute(claim: str, name: str, start: int, evidence: Sequence[str]
                ) -> tuple[str, str] | None:
    """The name the evidence gives where the claim gives ``name`` (at ``start``).

    For a name the evidence lacks: the two words before it in the claim (not both function
    words: "directed by", "set in", "known as") followed in an evidence text by another
    name that the claim does not hold ("directed by John Woo" against "directed by Gordon
    Chan"): those words and that name, else ``None``. Another spelling ("Philip" for
    "Phillip", "Larraín" for "Larrain") is the same name. A hint, not a contradiction
    (MEDIUM): a place may hold another ("operates in Europe" against "operates in
    Belarus").
    """
    left = _CONTEXT_WORD.findall(claim[:start])[-2:]
    if len(left) < 2 or all(w.lower() in _NO_CONTEXT for w in left):
        return None
    pattern = re.compile(r"(?i:\b" + r"\W+".join(map(re.escape, left)) + r")" + _FOLLOWING_NAME)
    lowered, mine = claim.lower(), fold(name)
    for text in evidence:
        for m in pattern.finditer(text):
            other = m.group(1)
            if other in ERA_WORDS:
                continue  # "in 681 BCE": an era, no name after "in 681"
            # another spelling of the same name ("Philip" for "Phillip") is no other name
            if other.lower() not in lowered and \
                    difflib.SequenceMatcher(a=mine, b=fold(other)).ratio() < 0.8:
                return " ".join(left), other
    return None


def _initials_of(name: str, evidence: Sequence[str]) -> bool:
    """Whether ``name`` is an acronym of a name an evidence text gives.

    Two to five capitals, each the first letter of a capitalised word in order, a word that
    may stand inside a name between them (:data:`~mitigation.values.NAME_PARTICLES`, and
    "for", where :func:`~mitigation.values.find_names` splits an institution's name): "NYC"
    is "New York City", "USA" "United States of America", "CDC" "Centers for Disease
    Control".
    """
    if not re.fullmatch(r"[A-Z]{2,5}", name):
        return False
    gap = r"[\w'’-]*\s+(?:(?:" + NAME_PARTICLES + r"|for)\s+)?"
    pattern = re.compile(r"\b" + gap.join(name) + r"[\w'’-]*")
    return any(pattern.search(text) for text in evidence)


def _next_to(spans: Sequence[tuple[int, int]], text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is next to one of ``spans`` (only spaces and commas between)."""
    return any(not text[end:a].strip(" ,") if a >= end else
               b <= start and not text[b:start].strip(" ,") for a, b in spans)


_DATE_WORDS = frozenset(
    [*_MONTHS, "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
     "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun"])
#: Date words that are often names too: a date only after these words.
_NAME_OR_DATE = frozenset({"may", "sun"})
_DATE_INTRO = re.compile(r"\b(?:in|on|of|by|since|until|till|from|to|during|early|late|mid|"
                         r"last|next|this|every|each|before|after|through)\s+$", re.I)


def _date_words(claim: str, start: int, words: list[str]) -> bool:
    """Whether the name phrase at ``start`` of ``claim`` (``words``) names only dates."""
    if not words or not all(w in _DATE_WORDS for w in words):
        return False
    if len(words) > 1 or words[0] not in _NAME_OR_DATE:
        return True
    return bool(_DATE_INTRO.search(claim, 0, start))


class TermCheck:
    """Kinship, compass, nationality and category terms the evidence gives as others.

    MEDIUM, ``term_substitution`` (:func:`mitigation.terms.term_substitutions`):
    "a sister named Micke" against "his brother Micke", "the nephew of Zeus" against "the son
    of Zeus", "southeast of Copenhagen" against "northwest of Copenhagen", "an American
    professional footballer" against "an Italian professional footballer", "Pearl Jam is a
    song" against "Pearl Jam is an American rock band". A hint, like a
    name substitution: the evidence may speak of someone or something else.

    The evidence's term is offered as the correction of a contradicted claim, but not for a
    category (the claim's other words go with its own: "a coloring book" is no "coloring
    television series") nor in a claim that says "only", "solely" or "exclusively" (swapping
    the term leaves that in place: "produced only German language films" is not mended into
    "only English language films").
    """

    name = "term"

    def run(self, claim: str, evidence: Sequence[str]) -> list[Finding]:
        """Flag the claim's terms the evidence swaps."""
        exclusive = bool(_EXCLUSIVE.search(claim))
        return [Finding(self.name, "term_substitution", Severity.MEDIUM,
                        f"the claim says {s.claim_term!r} ({s.tie}), the evidence "
                        f"{s.evidence_term!r}", f"check the {s.kind} against a source",
                        s.claim_term,
                        None if exclusive or s.kind == "category" else s.evidence_term)
                for s in term_substitutions(claim, evidence)]


#: Words that make a claim say something is the only one: no one term swapped mends it.
_EXCLUSIVE = re.compile(r"\b(?:only|solely|exclusively|strictly|entirely|purely|"
                        r"rather\s+than|instead\s+of)\b", re.I)


class QuoteCheck:
    """Quoted strings whose words do not appear in the evidence in the same order.

    Compared word by word, case-insensitively: spacing, punctuation and quote styles do not
    count (``"Love or Lust,"`` is in tokenised text such as ```` `` Love or Lust , '' ````).
    """

    name = "quote"

    def run(self, claim: str, evidence: Sequence[str]) -> list[Finding]:
        """Flag quotes missing from the evidence."""
        ev = f" {_words(' '.join(evidence))} "
        return [Finding(self.name, "quote_not_in_evidence", Severity.HIGH,
                        f"the quote {q!r} is not in the evidence",
                        "quote the source verbatim or paraphrase without quotation marks", q)
                for q in find_quotes(claim) if f" {_words(q)} " not in ev]


@dataclass(frozen=True)
class AllowlistRule:
    """A domain owner's rule: a claim may mention only the allowed terms of a category.

    Attributes:
        name: Rule name (e.g. ``allowed_channels``).
        terms: Every term of the category that the rule looks for.
        allowed: The terms that are allowed.
        synonyms: Other words for a term (``{"e-mail": "email"}``).
        severity: Severity of a violation.
        suggestion: What to tell the writer.

    Example:
        >>> rule = AllowlistRule("channels", ["email", "phone", "fax"], ["email", "phone"])
        >>> [f.value for f in rule.run("Contact us by fax.", [])]
        ['fax']
    """

    name: str
    terms: Sequence[str]
    allowed: Sequence[str]
    synonyms: dict[str, str] = field(default_factory=dict)
    severity: Severity = Severity.HIGH
    suggestion: str = ""
    #: (pattern, word, term) of every term and synonym, longest word first (built once).
    _patterns: tuple[tuple[re.Pattern[str], str, str], ...] = field(
        init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"an allowlist rule needs a name (a non-empty str), got "
                             f"{self.name!r}")

        def checked(param: str, value: Any) -> tuple[str, ...]:
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not all(
                    isinstance(w, str) and w.strip() for w in value):
                raise ValueError(f"rule {self.name!r}: {param} must be a list of non-empty "
                                 f"strings, got {value!r}")
            return tuple(value)

        terms, allowed = checked("terms", self.terms), checked("allowed", self.allowed)
        if not terms:
            raise ValueError(f"rule {self.name!r}: terms must name at least one term")
        unknown = set(allowed) - set(terms)
        if unknown:
            raise ValueError(f"rule {self.name!r}: allowed terms {sorted(unknown)} are not in "
                             "its terms")
        if not isinstance(self.synonyms, dict) or not all(
                isinstance(k, str) and k.strip() and isinstance(v, str)
                for k, v in self.synonyms.items()):
            raise ValueError(f"rule {self.name!r}: synonyms must map non-empty strings to "
                             f"terms, got {self.synonyms!r}")
        stray = sorted(v for v in self.synonyms.values() if v not in terms)
        if stray:
            raise ValueError(f"rule {self.name!r}: synonyms point at {stray}, which are not in "
                             "its terms")
        seen: dict[str, str] = {}
        for t in terms:  # terms are matched whatever their case
            if t.lower() in seen and seen[t.lower()] != t:
                raise ValueError(f"rule {self.name!r}: terms {seen[t.lower()]!r} and {t!r} "
                                 "differ only in case (terms match whatever their case)")
            seen[t.lower()] = t
        shadow = sorted(k for k in self.synonyms if k.lower() in seen
                        and seen[k.lower()] != self.synonyms[k])
        if shadow:
            raise ValueError(f"rule {self.name!r}: synonyms {shadow} are terms of their own; a "
                             "synonym may not stand for another term")
        if not isinstance(self.suggestion, str):
            raise ValueError(f"rule {self.name!r}: suggestion must be a str, got "
                             f"{self.suggestion!r}")
        try:
            severity = Severity(self.severity.upper() if isinstance(self.severity, str)
                                else self.severity)
        except ValueError:
            raise ValueError(f"rule {self.name!r}: severity must be one of "
                             f"{', '.join(s.value for s in Severity)}, got "
                             f"{self.severity!r}") from None
        object.__setattr__(self, "terms", terms)
        object.__setattr__(self, "allowed", allowed)
        object.__setattr__(self, "synonyms", dict(self.synonyms))
        object.__setattr__(self, "severity", severity)
        words = {**{t.lower(): t for t in terms},
                 **{k.lower(): v for k, v in self.synonyms.items()}}
        object.__setattr__(self, "_patterns", tuple(
            (re.compile(rf"(?<!\w){re.escape(word)}(?!\w)"), word, term)
            for word, term in sorted(words.items(), key=lambda kv: -len(kv[0]))))

    def run(self, claim: str, evidence: Sequence[str]) -> list[Finding]:
        """Flag terms of the category that are not allowed.

        Terms and synonyms are matched longest first, and the text a match takes is not
        matched again: "Pro" is not found in an allowed "Pro Max", nor "mail" in "e-mail".
        """
        low = claim.lower()
        out, seen = [], set()
        for pattern, word, term in self._patterns:
            # the words a longer term took are no shorter term's (NUL is no word character)
            low, hits = pattern.subn(lambda m: "\0" * len(m.group(0)), low)
            if not hits:
                continue
            if term in self.allowed or term in seen:
                continue
            seen.add(term)
            out.append(Finding(self.name, "not_allowed", self.severity,
                               f"{word!r} ({term}) is not allowed by rule {self.name!r}; "
                               f"allowed: {', '.join(self.allowed)}",
                               self.suggestion or f"mention only {', '.join(self.allowed)}",
                               word))
        return out


def load_rules(path: str | Path) -> list[AllowlistRule]:
    """Read allowlist rules from a JSON (or, with PyYAML installed, YAML) file.

    The file holds ``{"rules": [{"name", "terms", "allowed", "synonyms"?, "severity"?,
    "suggestion"?}, ...]}``.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() in (".yaml", ".yml"):
        from verifier.errors import require

        yaml = require("yaml", package="pyyaml")
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValueError(f"{str(path)!r} is not valid YAML: {exc}") from exc
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{str(path)!r} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        raise ValueError(f"{str(path)!r} must hold an object with a 'rules' list")
    rules = []
    for i, r in enumerate(data["rules"]):
        if not isinstance(r, dict):
            raise ValueError(f"{str(path)!r}: rules[{i}] must be an object, got {r!r}")
        try:
            rules.append(AllowlistRule(**r))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{str(path)!r}: rules[{i}] is malformed: {exc}") from exc
    return rules


#: The finding types that say the evidence gives something else in the claim's place: a
#: name (:class:`EntityCheck`) or a kinship, compass, nationality or category term
#: (:class:`TermCheck`).
SUBSTITUTIONS = frozenset({"entity_substitution", "term_substitution"})
#: The number check's finding that the evidence gives no value of the claim's (HIGH): no
#: contradiction, so the mitigator's balanced mode lets a supported claim with it stand.
MISSING_NUMBER = "number_not_in_evidence"

DEFAULT_CHECKS: tuple[Check, ...] = (NumberCheck(), DateCheck(), EntityCheck(), TermCheck(),
                                     QuoteCheck())


def run_checks(claim: str, evidence: Sequence[str],
               checks: Sequence[Check] = DEFAULT_CHECKS) -> list[Finding]:
    """Run every check on one claim; findings in check order."""
    return [f for c in checks for f in c.run(claim, evidence)]


_UNIT = re.compile(r"\s*(?:%|[a-zA-Z]+)")
_WORD = re.compile(r"\w+")


def _words(text: str) -> str:
    return " ".join(_WORD.findall(fold(text)))


def _unit_after(text: str, pos: int) -> str | None:
    """The word after a number: its unit ("metres", "copies").

    After an ordinal's suffix, the word after that ("20th President": "president", not "th").
    """
    m = _UNIT.match(text, pos)
    if not m:
        return None
    word = m.group(0).strip().lower()
    if word in ("st", "nd", "rd", "th") and m.group(0) == word:
        return _unit_after(text, m.end())
    return word if word not in ("and", "or", "to", "the", "of", "in", "by", "a") else None
