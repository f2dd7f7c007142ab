"""Extract and normalise the checkable values of a text: numbers, dates, quotes, names.

``"$1.2 billion"``, ``"1,200,000,000 dollars"`` and ``"1.2bn USD"`` all give the number
1.2e9; ``"20 July 1969"``, ``"July 20, 1969"``, ``"1969-07-20"`` and ``"07/20/1969"`` give
the date (1969, 7, 20).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import product
from typing import Literal, ParamSpec, TypeVar

from verifier.text import csv_unescaped, trimmed_sentence_spans

_P = ParamSpec("_P")
_T = TypeVar("_T")


def _memoised(fn: Callable[_P, list[_T]]) -> Callable[_P, list[_T]]:
    """``fn`` remembering its last 2,048 results.

    A claim's checks, then the alignment features of a batch of claims, parse the same claim
    and evidence texts several times each; a memory of 2,048 texts (those of a few hundred
    claims) catches most of it without holding on to a whole batch job's inputs (checks and
    alignment of 800 FEVER pairs: 1.1 s with 2,048 or 4,096, 1.6 s with 1,024, 2.3 s with
    none). Every call gets its own list (of frozen values), so a caller may change it.
    """
    cached = functools.lru_cache(maxsize=2048)(lambda *a, **k: tuple(fn(*a, **k)))

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> list[_T]:
        return list(cached(*args, **kwargs))  # type: ignore[arg-type]  # str and bool

    wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
    wrapper.cache_info = cached.cache_info  # type: ignore[attr-defined]
    return wrapper


_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "dozen": 12,
}
_SCALE = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "mln": 1e6,
          "billion": 1e9, "bn": 1e9, "b": 1e9, "trillion": 1e12, "tn": 1e12}
#: The months' names, January first.
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")
_MONTHS = {m.lower(): i for i, m in enumerate(MONTH_NAMES, start=1)}
_MONTHS.update({k[:3]: v for k, v in list(_MONTHS.items())})
_MONTHS["sept"] = 9

#: What marks a number's percent ("5%", "5 percent", "5 per cent", "5-percent").
_PCT = r"(?P<pct>\s?%|[\s-]?per\s?cent\b)"
_NUM = re.compile(
    # a minus sign, not a hyphen inside a word or a range ("COVID-19", "10-20")
    r"(?<![\w.])(?:(?P<sign>[-\u2212]|minus\s)(?=[$€£]\s?\d|\d))?"
    # thousands grouped by commas or by spaces ("53,879", "53 879", "1 200 000"; at most
    # four groups after the first: a run of 3-digit numbers, "rooms 101 102", still reads
    # as one number, but never as one of hundreds of digits)
    r"(?P<cur>[$€£¥₹])?\s?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|"
    r"\d{1,3}(?:[ \u00a0\u202f]\d{3}){1,4}(?![\d.,]\d)|"
    # by stops in two groups or more ("1.000.000", a single "1.000" is a decimal), or by
    # apostrophes ("10'000", as in Switzerland)
    r"\d{1,3}(?:\.\d{3}){2,}(?![\d.]\d)|\d{1,3}(?:['’]\d{3})+(?![\d'’]\d)|\d+(?:\.\d+)?|"
    # a decimal without its zero (".5%"), not a part of "2.0.5" (the look-behind above)
    r"\.\d+(?![\d.]))"
    # a mixed number: "2½", "2 and a half" (million)
    r"(?P<frac>[½¼¾⅓⅔]|\s+and\s+a\s+half\b)?"
    # (a letter and a stop before a letter is an abbreviation: "753 B.C.", "60 m.p.h.")
    r"(?:[\s-]?(?P<scale>thousand|million|billion|trillion|bn|mln|mn|tn|k|m|b)\b"
    r"(?!\.[^\W\d_]))?"
    + _PCT + "?", re.I)
#: The value of a fraction sign or of "and a half" after a whole number.
_MIXED = {"½": 0.5, "¼": 0.25, "¾": 0.75, "⅓": 1 / 3, "⅔": 2 / 3}
#: A currency written as a word or a code next to a number ("5 million euros", "USD 5m",
#: "US$5"), as its sign.
_CURRENCY_AFTER = re.compile(
    r"\s?(?:(?P<usd>(?:US\s)?dollars?|USD)|(?P<eur>euros?|EUR)|(?P<gbp>(?:pounds?\s)?sterling|GBP)"
    r"|(?P<jpy>yen|JPY)|(?P<inr>rupees?|INR))\b", re.I)
_CURRENCY_BEFORE = re.compile(r"(?:(?P<usd>USD|US\$)|(?P<eur>EUR)|(?P<gbp>GBP)|(?P<jpy>JPY)"
                              r"|(?P<inr>INR))\s?$")
_CURRENCY_SIGNS = {"usd": "$", "eur": "€", "gbp": "£", "jpy": "¥", "inr": "₹"}
#: A number in scientific notation: "1.2e6", "1.2 × 10^6", "3x10⁻⁴", "10^9". With an "e",
#: one digit or a decimal point before it ("1e6", "1.2E8"): "10E8" is more often a name.
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SCI = re.compile(
    r"(?<![\w.])(?:(?P<m>\d+(?:\.\d+)?)\s?[×xX*·]\s?(?=10)"
    r"|(?P<me>\d(?:\.\d+)?|\d+\.\d+)[eE](?P<e>[-+\u2212]?\d{1,3})(?![\w.])"
    r"|(?=10(?:\^|\*\*|[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺])))"
    r"(?:10(?:\s?(?:\^|\*\*)\s?(?P<e2>[-+\u2212]?\d{1,3})|(?P<e3>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3}))"
    r"(?![\w.]))?")
#: A fraction of a whole, as a percent: "two thirds", "three-quarters", "a third of", "half
#: of", "3/4 of". A singular one ("a third", "one quarter") only before "of" ("a third term"
#: counts, not divides); "half of" not after an ordinal ("the second half of 2019").
_FRACTION_NUMERATORS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
                        "six": 6, "seven": 7, "eight": 8, "nine": 9}
_DENOMINATORS = {"half": 2, "halves": 2, "third": 3, "quarter": 4, "fourth": 4, "fifth": 5,
                 "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10}
_FRACTION = re.compile(
    r"\b(?:(?P<n>two|three|four|five|six|seven|eight|nine)[\s-](?P<dp>halves|thirds|quarters|"
    r"fourths|fifths|sixths|sevenths|eighths|ninths|tenths)\b"
    r"(?!\s+of\s+an?\s+(?:hundred|thousand|million|billion|trillion)\b)"
    r"|(?P<n1>one)-(?P<d1>half|third|quarter|fourth|fifth|sixth|seventh|eighth|ninth|tenth)\b"
    r"|(?P<n2>an?|one)\s(?P<d2>half|third|quarter|fourth|fifth|sixth|seventh|eighth|ninth|"
    r"tenth)(?=\s+of\b(?!\s+an?\s+(?:hundred|thousand|million|billion|trillion)\b))"
    r"|(?<!first\s)(?<!second\s)(?<!other\s)(?<!latter\s)(?<!former\s)"
    r"(?P<half>half)(?=\s+of\b)"
    r"|(?<![\w./-])(?P<a>\d{1,2})/(?P<b>\d{1,2})(?=\s+of\b))", re.I)
#: An age given as a decade of life: "in her 30s", "their early twenties", "his late teens".
_AGE_DECADE = re.compile(
    r"\b(?:his|her|their|my|your|our|its)\s+(?:(?P<part>early|mid|late)[\s-]+)?"
    r"(?:(?P<d>[1-9])0['’]?s|(?P<w>teens|twenties|thirties|forties|fifties|sixties|seventies|"
    r"eighties|nineties))\b", re.I)
#: The years of a decade of life that "early", "mid" and "late" give (generously: they
#: overlap).
_DECADE_PART = {None: (0, 9), "early": (0, 4), "mid": (3, 7), "late": (6, 9)}
#: A clock time ("4:00 p.m.", "15:00", "3 pm", "9 a.m."): one number, the minutes after
#: midnight (:func:`find_numbers`), not an hour and a minute count.
_TIME = re.compile(r"(?<![\w.:])(?P<h>\d{1,2})(?::(?P<min>\d{2}))(?::\d{2})?"
                   r"(?:\s?(?P<ap>[ap])(?:\.m\.|\.?\s?m\b))?(?![\w:])"
                   r"|(?<![\w.:])(?P<h2>\d{1,2})\s?(?P<ap2>[ap])(?:\.m\.|\.?\s?m\b)", re.I)
#: What joins the two ends of a range ("10-20%", "10 to 20 percent").
_RANGE_JOIN = re.compile(r"\s*(?:[-–—]|to|and)\s*")
#: A count noun after "1.2m" or "5b": the letter is a scale ("1.2m users"), not metres.
_COUNT_NOUN = re.compile(
    r"\s*(?:users|people|persons|views|viewers|subscribers|customers|visitors|downloads|"
    r"copies|residents|inhabitants|followers|members|listeners|readers|fans|players|"
    r"passengers|employees|workers|jobs|votes|voters|shares|units|streams|tourists|"
    r"students|patients|cases|deaths|dollars|euros|pounds|yen|barrels)\b", re.I)
_SCALE_WORDS = {w: _SCALE[w] for w in ("thousand", "million", "billion", "trillion")}
_UNIT_WORDS = "|".join(sorted(_WORDS, key=len, reverse=True))
_ANY_WORDS = "|".join(sorted([*_WORDS, *_SCALE_WORDS], key=len, reverse=True))
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20, "thirtieth": 30, "fortieth": 40, "fiftieth": 50,
    "sixtieth": 60, "seventieth": 70, "eightieth": 80, "ninetieth": 90, "hundredth": 100,
}
_TENS = "|".join(w for w, v in _WORDS.items() if v in range(20, 100, 10))
_UNIT_ORDINALS = "|".join(w for w, v in _ORDINALS.items() if v < 10)
#: What follows the tens of a compound ordinal ("twenty-first", "twenty-first-century",
#: "thirty second"; in "twenty first-time buyers" the number is 20).
_ORDINAL_TAIL = r"(?:-(?:" + _UNIT_ORDINALS + r")\b|\s(?:" + _UNIT_ORDINALS + r")\b(?!-))"
_WORDNUM = re.compile(
    # "two thousand five hundred", "a million", "half a million", "a quarter of a million";
    # "two and a half"; a scale word begins a
    # number only after "a" ("a thousand"): "several million" gives no number
    r"\b(?P<w>(?:(?:half\s+|(?:an?|one|three)\s+quarters?\s+of\s+)?"
    r"an?\s+(?:hundred|dozen|thousand|million|billion|trillion)|"
    + _UNIT_WORDS + r")(?:[\s-](?:and\s)?(?:" + _ANY_WORDS + r")|\s+and\s+a\s+half)*)\b"
    # not the tens of an ordinal ("twenty-first" is 21st, not 20)
    r"(?!" + _ORDINAL_TAIL + r")" + _PCT + "?", re.I)
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATE_DMY = re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{_MONTH_RE})\.?"
                       rf"(?:\s?,)?\s+(?P<y>\d{{4}})\b", re.I)
_DATE_MDY = re.compile(rf"\b(?P<m>{_MONTH_RE})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:\s?,)?\s+"
                       rf"(?P<y>\d{{4}})\b", re.I)
#: A decade in two digits after "the" ("the 90s", "the early '80s") or an apostrophe ("'90s
#: music"): "the 00s" and "the 10s" are this century's, the others the last one's. "In her 30s"
#: is an age, no date (:data:`_AGE_DECADE`).
_SHORT_DECADE = re.compile(r"\bthe\s+(?:(?:early|mid|late)[\s-]+)?['’]?(?P<d>\d)0['’]?s\b"
                           r"|(?<![\w'’])['’](?P<d2>\d)0['’]?s\b", re.I)
_DATE_ISO = re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b")
#: A numeric date, day and month in either order: "07/20/1969", "20.07.1969", "3/4/2019".
_DATE_NUMERIC = re.compile(r"(?<![\w.,/-])(?P<a>\d{1,2})(?P<sep>[/.])(?P<b>\d{1,2})(?P=sep)"
                           r"(?P<y>\d{4})(?![\w/-]|[.,]\d)")
#: A range of years with the second one cut to two digits: "2019-20", "1998–99", "2019/20".
_YEAR_RANGE = re.compile(r"\b(?P<y>1[0-9]\d\d|20\d\d)[-–/](?P<yy>\d\d)(?![\w-]|[.,/]\d)")
_MONTH_YEAR = re.compile(rf"\b(?P<m>{_MONTH_RE})\.?\s+(?P<y>\d{{4}})\b", re.I)
_YEAR = re.compile(r"\b(?P<y>1[0-9]\d\d|20\d\d)\b")
#: An era that counts down, written after a year ("44 BC", "753 BCE", "300 B.C.").
_BCE = r"(?:BCE?|B\.C\.(?:E\.)?)"
#: That era after a year: the year is read as negative, so that "300 BC" is not given by
#: "300 AD".
_BEFORE_COMMON_ERA = re.compile(rf"[ \u00a0]?{_BCE}(?!\w)")
#: What joins the years of a range that one era after the second counts down ("221 to 206
#: BC", "1200 -- 1100 BC").
_ERA_RANGE_JOIN = re.compile(r"\s*(?:-{1,2}|[–—]|to|and|until)\s*")
#: An era written after a year ("44 BC", "79 AD", "753 B.C."): a date's, not a name.
ERA_AFTER_YEAR = re.compile(rf"(?<=\d)[ \u00a0]?(?:{_BCE}|CE|AD|A\.D\.)(?!\w)")
#: The eras as words (a name after "in 681" is no era: "BCE").
ERA_WORDS = frozenset({"BC", "BCE", "CE", "AD"})
_YEAR_OR_DECADE = re.compile(r"\b(?P<y>1[0-9]\d\d|20\d\d)(?P<dec>['’]?s)?\b")
#: An ordinal word, compound ones included ("twenty-first", "thirty second").
_ORDINAL_WORDS = (r"(?:(?P<tens>" + _TENS + r")(?=" + _ORDINAL_TAIL + r")[\s-])?"
                  r"(?P<unit>" + "|".join(_ORDINALS) + r")")
_ORDINAL = re.compile(r"\b" + _ORDINAL_WORDS + r"\b", re.I)
#: An ordinal in digits ("3rd", "21st", "4th"), and a month next to one ("July 4th", "4th of
#: July": a day, no ordinal).
_DIGIT_ORDINAL = re.compile(r"(?<![\w.,])(?P<n>\d{1,3})(?:st|nd|rd|th)\b", re.I)
_NEXT_TO_MONTH = re.compile(rf"\b(?:{_MONTH_RE})\.?\s+$", re.I)
_MONTH_AFTER = re.compile(rf"\s+(?:of\s+)?(?:{_MONTH_RE})\b", re.I)
#: A century: "the 20th century", "nineteenth-century", "the twenty-first century" (not
#: one "BC" or "BCE", whose years count down; "Century" capitalised is a name's).
_CENTURY = re.compile(r"\b(?:(?P<n>\d{1,2})(?:st|nd|rd|th)|" + _ORDINAL_WORDS
                      + r")[\s-](?P<word>centur(?:y|ies))\b(?!\s*(?:BCE?\b|B\.C))", re.I)
_DECADE_WORDS = {(w[:-1] + "ies" if w.endswith("y") else w + "s"): v
                 for w, v in _WORDS.items() if v in range(10, 100, 10)}
#: A decade in words: "the nineteen nineties", "the twenty-tens".
_DECADE_IN_WORDS = re.compile(r"\b(?P<c>nineteen|twenty)[\s-]?(?P<d>"
                              + "|".join(_DECADE_WORDS) + r")\b", re.I)
_QUOTE = re.compile(r"[\"“]([^\"”]*)[\"”]")
#: Text whose straight double quotes all come doubled (escaped).
_ALL_DOUBLED = re.compile(r'(?:[^"]|"")*')
#: Lower-case words that may stand between a name's capitalised words ("Bank of America",
#: "Vincent van Gogh"), as a regex alternation.
NAME_PARTICLES = "of|de|da|von|van|the|and"
_NAME = re.compile(r"\b(?:[A-Z][\w'’-]*(?:\s+(?:" + NAME_PARTICLES + r")\s+|\s+)?)*[A-Z][\w'’-]*")
_POSSESSIVE = re.compile(r"['’]s$")
_FUNCTION_WORDS = {"The", "A", "An", "It", "He", "She", "They", "This", "That", "These",
                   "Those", "In", "On", "At", "By", "For", "From", "With", "And", "But", "Or",
                   "As", "Its", "His", "Her", "Their", "There", "Here", "We", "I", "You",
                   "However", "Also", "After", "Before", "When", "While", "Since", "If"}


@dataclass(frozen=True)
class Number:
    """A normalised number found in a text."""

    value: float
    text: str
    span: tuple[int, int]
    percent: bool = False
    currency: str | None = None
    #: Another reading of the same text: "1.5m" is 1.5 metres or 1.5 million.
    alternative: float | None = None
    #: A clock time's hour as written ("7 pm": 7; its value is the minutes after midnight):
    #: a bare number the hour ("let's make it 7") gives the time.
    hour: int | None = None
    #: The top of the range of values the text covers, from ``value`` up: "in her 30s" is 30
    #: to 39 (``None``: one value).
    high: float | None = None
    #: A fraction of a whole ("two thirds", "half of"), given as a percent (``value`` 66.67,
    #: ``percent`` true): it agrees with a percent rounded to a whole one ("67%").
    fraction: bool = False
    #: The unit of measure written after it, a key of the units table: "km" for "5 km",
    #: "5-km" and "five kilometres"; a temperature difference's is "Δ°C" ("rose by 2 °C")
    #: (``None``: no unit, or a word that is none).
    unit: str | None = None
    #: A quantity written in two units, "5 feet 11 inches": ``text`` runs to the second number
    #: ("5 feet 11"; with its unit where the number takes it: "6 ft 2 in", "5 km 300 m"),
    #: ``value`` and ``unit`` are the second unit's (71 inches), and the second number's
    #: digits give its precision.
    compound: bool = False

    def readings(self) -> tuple[float, ...]:
        """The value, and the other reading where there is one."""
        return (self.value,) if self.alternative is None else (self.value, self.alternative)


def _close(a: float, b: float) -> bool:
    if not (math.isfinite(a) and math.isfinite(b)):  # "10^500" is only itself
        return a == b
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def _words_value(words: str) -> float | None:
    """The value of number words: "two thousand five hundred" is 2500, "half a million" 5e5."""
    total, current, factor = 0.0, 0.0, 1.0
    for w in re.split(r"[\s-]+", words.lower()):
        if w in ("and", "a", "an", "of"):  # "one hundred and fifty", "a million"
            continue
        if w in ("quarter", "quarters"):  # "three quarters of a million"
            factor, current = max(current, 1) / 4, 0.0
            continue
        if w == "half":
            if current or total:  # "two and a half (million)"
                current += 0.5
            else:  # "half a million"
                factor = 0.5
            continue
        scale = _SCALE_WORDS.get(w)
        if scale is not None:
            if current == 0 and total:  # "a thousand million"
                total *= scale
            else:  # each scale word closes a group: "two thousand five hundred"
                total += max(current, 1) * scale
            current = 0.0
            continue
        v = _WORDS.get(w)
        if v is None:
            return None
        if w in ("hundred", "dozen"):  # multipliers: "two dozen" is 24
            current = max(current, 1) * v
        else:
            current += v
    return (total + current) * factor


@_memoised
def find_numbers(text: str, *, skip_years: bool = True) -> list[Number]:
    """Numbers in ``text``, normalised (scale words, thousands separators, number words).

    A minus sign ("-5", "\u22125", "minus 5") makes a number negative; a hyphen inside a
    word or a range ("COVID-19", "10-20") does not. Years (1000-2099 standing alone) are
    left to :func:`find_dates` when ``skip_years``.

    Example:
        >>> [n.value for n in find_numbers("It cost $1.2 billion, or 1,200,000,000 dollars.")]
        [1200000000.0, 1200000000.0]
        >>> [n.value for n in find_numbers("It fell to -5 from two thousand five hundred.")]
        [-5.0, 2500.0]
    """
    out: list[Number] = []
    value: float
    alternative: float | None
    date_spans = [d.span for d in find_dates(text)] if skip_years else []
    # read whole before the numbers inside them: ages, fractions, scientific notation
    out.extend([*_age_decades(text), *_fractions(text), *_scientific(text)])
    taken = [n.span for n in out]  # values read whole; numbers inside them are not read
    for t in _TIME.finditer(text):
        hour, minute = int(t.group("h") or t.group("h2")), int(t.group("min") or 0)
        half = (t.group("ap") or t.group("ap2") or "").lower()
        if hour > 24 or minute > 59 or (half and not 1 <= hour <= 12):
            continue  # no clock time: its numbers are read one by one
        taken.append(t.span())
        if half:
            value, alternative = (hour % 12 + (12 if half == "p" else 0)) * 60 + minute, None
        elif 1 <= hour <= 12:  # "4:00": morning or afternoon
            value, alternative = hour * 60 + minute, (hour % 12 + 12) * 60 + minute
        else:
            value, alternative = hour % 24 * 60 + minute, None
        out.append(Number(float(value), t.group(0).strip(), t.span(), alternative=alternative,
                          hour=hour))
    for m in _NUM.finditer(text):
        raw = m.group("num")
        grouped = raw.count(".") > 1  # "1.000.000": stops group thousands
        value = float(re.sub(r"[,\s'’.]" if grouped else r"[,\s'’]", "", raw))
        if m.group("frac"):
            value += _MIXED.get(m.group("frac"), 0.5)
        given = m.group("scale") or ""
        scale = given.lower()
        alternative = None
        if scale in ("m", "b") and not m.group("cur") and not (
                m.start("scale") == m.end("num") and (
                    given.isupper() or _COUNT_NOUN.match(text, m.end("scale")))):
            # "5 m" is metres, not millions; "200M", "1.2B" and "1.2m users" are scales;
            # "1.5m" alone may be either
            scale = ""
            alternative = value * _SCALE[given.lower()] * (-1 if m.group("sign") else 1)
        if scale:
            value *= _SCALE[scale]
        if m.group("sign") or (not m.group("cur") and not m.group("pct") and not scale
                               and _BEFORE_COMMON_ERA.match(text, m.end())):
            value = -value
        s, e = m.span()
        if skip_years and any(ds <= s and e <= de for ds, de in date_spans):
            continue
        if any(ts < e and s < te for ts, te in taken):
            continue  # part of a clock time or of a value above, read whole
        if skip_years and not scale and not m.group("cur") and not m.group("pct") and \
                not m.group("sign") and _YEAR.fullmatch(raw) and not m.group("frac"):
            continue
        out.append(Number(value, m.group(0).strip(), (s, e), bool(m.group("pct")),
                          m.group("cur") or _currency_word(text, m.start("num"), e),
                          alternative))
    for m in _WORDNUM.finditer(text):
        v = _words_value(m.group("w"))
        if v is None:
            continue
        if skip_years and any(ds <= m.start() and m.end() <= de for ds, de in date_spans):
            continue  # "nineteen" of "the nineteen nineties"
        if any(ts < m.end() and m.start() < te for ts, te in taken):
            continue  # "two" of "two thirds"
        if v == 1 and m.group("w").lower() == "one":
            continue  # "one" is mostly a pronoun
        out.append(Number(v, m.group(0), m.span(), bool(m.group("pct")),
                          _currency_word(text, m.start(), m.end())))
    out.sort(key=lambda n: n.span)
    out = [replace(n, unit=_temperature_unit(text, n, unit)) if (unit := _unit_of(text, n))
           else n for n in out]
    for k in range(len(out) - 1, 0, -1):  # a range's ends are of one kind
        a, b = out[k - 1], out[k]
        if not _RANGE_JOIN.fullmatch(text, a.span[1], b.span[0]):
            continue
        if b.percent and not a.percent:  # "10-20%"
            out[k - 1] = replace(a, percent=True)
        elif b.unit and a.unit is None and _may_have_unit(a):  # "5-10 km", "20 to 25 °C"
            out[k - 1] = replace(a, unit=b.unit)
    for k in range(len(out) - 1, 0, -1):
        a, b = out[k - 1], out[k]
        if _BEFORE_COMMON_ERA.match(text, b.span[1]) and _counts_down(
                text, a.span, a.value, b.span[0], b.value):  # "221 to 206 BC"
            out[k - 1] = replace(a, value=-a.value)
    return _compounds(text, out)


def _temperature_unit(text: str, n: Number, unit: str | None) -> str | None:
    """``unit``, or its difference ("Δ°C") where the words around ``n`` make it one."""
    if unit not in ("°C", "°F", "K"):
        return unit
    written = _UNIT_AFTER.match(text, n.span[1])
    end = written.end() if written else n.span[1]
    if _TEMP_DIFF_BEFORE.search(text, max(0, n.span[0] - 40), n.span[0]) \
            or _TEMP_DIFF_AFTER.match(text, end):
        return "Δ" + unit
    return unit


def _compounds(text: str, numbers: list[Number]) -> list[Number]:
    """``numbers`` with each quantity written in two units read as one: "5 feet 11 inches".

    The first part is a whole number of a larger unit of the same dimension, the second less
    than one of it; they stand side by side ("6 ft 2 in", "1 hour 30 minutes"), times also
    with a comma or "and" between ("2 years and 3 months"). Temperatures are never so read.
    """
    out = list(numbers)
    for k in range(len(out) - 1, 0, -1):
        a, b = out[k - 1], out[k]
        unit, end = b.unit, b.span[1]
        if a.unit == "ft" and unit is None and _may_have_unit(b) \
                and (inch := _INCHES.match(text, end)):
            unit, end = "inch", inch.end()  # "6 ft 2 in": the span takes the "in"
        written = _UNIT_AFTER.match(text, a.span[1])
        # "3 m 50 cm": the number took its "m"
        after = written.end() if written else a.span[1] if a.unit == "m" else None
        if a.unit is None or unit is None or after is None:
            continue
        (dim_a, f_a, _), (dim_b, f_b, _) = _UNITS[a.unit], _UNITS[unit]
        join = _COMPOUND_JOIN_TIME if dim_a == "time" else _COMPOUND_JOIN
        if (dim_a != dim_b or dim_a == "temperature" or not f_b < f_a
                or not join.fullmatch(text, after, b.span[0])
                or a.value < 1 or not float(a.value).is_integer() or not 0 <= b.value * f_b < f_a):
            continue
        out[k - 1: k + 1] = [Number(a.value * f_a / f_b + b.value, text[a.span[0]: end],
                                    (a.span[0], end), unit=unit, compound=True)]
    return out


def _currency_match(text: str, start: int, end: int) -> re.Match[str] | None:
    """The currency around a number: a word after ``end`` or a code before ``start``.

    "5 million euros", "USD 5".
    """
    return _CURRENCY_AFTER.match(text, end) or _CURRENCY_BEFORE.search(
        text, max(0, start - 5), start)


def _currency_word(text: str, start: int, end: int) -> str | None:
    """The sign of the currency a word or code names around a number, else ``None``."""
    m = _currency_match(text, start, end)
    return next(sign for key, sign in _CURRENCY_SIGNS.items() if m.group(key)) if m else None


def money_span(text: str, n: Number) -> tuple[int, int]:
    """Where ``text`` writes ``n`` with the currency word or code around it ("USD 40")."""
    m = _currency_match(text, *n.span) if n.currency else None
    start, end = (min(m.start(), n.span[0]), max(m.end(), n.span[1])) if m else n.span
    return end - len(text[start:end].lstrip()), end  # a number read with its space


def money_text(text: str, n: Number) -> str:
    """``n``'s text with the currency word or code around it ("5 million euros", "USD 40")."""
    start, end = money_span(text, n)
    return text[start:end]


#: Units of measure: key -> (dimension, factor to the dimension's base unit, offset added
#: after the factor). Base units: metre, square metre, kilogram, litre, metre a second,
#: kelvin, second.
_UNITS: dict[str, tuple[str, float, float]] = {
    "mm": ("length", 1e-3, 0.0), "cm": ("length", 1e-2, 0.0), "m": ("length", 1.0, 0.0),
    "km": ("length", 1e3, 0.0), "inch": ("length", 0.0254, 0.0), "ft": ("length", 0.3048, 0.0),
    "yd": ("length", 0.9144, 0.0), "mi": ("length", 1609.344, 0.0),
    "m²": ("area", 1.0, 0.0), "km²": ("area", 1e6, 0.0), "mi²": ("area", 2_589_988.110336, 0.0),
    "ft²": ("area", 0.09290304, 0.0), "ha": ("area", 1e4, 0.0), "acre": ("area", 4046.8564224, 0.0),
    "µg": ("mass", 1e-9, 0.0), "mg": ("mass", 1e-6, 0.0), "g": ("mass", 1e-3, 0.0),
    "kg": ("mass", 1.0, 0.0), "tonne": ("mass", 1e3, 0.0), "lb": ("mass", 0.45359237, 0.0),
    "oz": ("mass", 0.028349523125, 0.0),
    "ml": ("volume", 1e-3, 0.0), "l": ("volume", 1.0, 0.0),
    "km/h": ("speed", 1 / 3.6, 0.0), "mph": ("speed", 0.44704, 0.0),
    "m/s": ("speed", 1.0, 0.0), "knot": ("speed", 1852 / 3600, 0.0),
    "°C": ("temperature", 1.0, 273.15), "°F": ("temperature", 5 / 9, 273.15 - 160 / 9),
    "K": ("temperature", 1.0, 0.0),
    # a difference of temperatures ("rose by 1.5 °C" is "2.7 °F"): no offsets (in_unit_of)
    "Δ°C": ("temperature", 1.0, 0.0), "Δ°F": ("temperature", 5 / 9, 0.0),
    "ΔK": ("temperature", 1.0, 0.0),
    "s": ("time", 1.0, 0.0), "min": ("time", 60.0, 0.0), "h": ("time", 3600.0, 0.0),
    "day": ("time", 86_400.0, 0.0), "week": ("time", 604_800.0, 0.0),
    # months and years as the Gregorian calendar's average: "18 months" is "1.5 years"
    "month": ("time", 2_629_746.0, 0.0), "year": ("time", 31_556_952.0, 0.0),
    "fortnight": ("time", 1_209_600.0, 0.0), "decade": ("time", 315_569_520.0, 0.0),
    "century": ("time", 3_155_695_200.0, 0.0),
}
#: Unit words (read in any case, singular or plural) -> unit key.
_UNIT_NAMES: dict[str, str] = {
    "millimetre": "mm", "millimeter": "mm", "centimetre": "cm", "centimeter": "cm",
    "metre": "m", "meter": "m", "kilometre": "km", "kilometer": "km", "inch": "inch",
    "foot": "ft", "yard": "yd", "mile": "mi", "square metre": "m²", "square meter": "m²",
    "square kilometre": "km²", "square kilometer": "km²", "square mile": "mi²",
    "square foot": "ft²", "hectare": "ha", "acre": "acre", "milligram": "mg",
    "milligramme": "mg", "gram": "g", "gramme": "g", "kilogram": "kg", "kilogramme": "kg",
    "kilo": "kg", "tonne": "tonne", "metric ton": "tonne", "pound": "lb", "ounce": "oz",
    "millilitre": "ml", "milliliter": "ml", "litre": "l", "liter": "l",
    "kilometre per hour": "km/h", "kilometer per hour": "km/h", "mile per hour": "mph",
    "metre per second": "m/s", "meter per second": "m/s", "knot": "knot",
    "degree celsius": "°C", "degree centigrade": "°C", "degree fahrenheit": "°F",
    "kelvin": "K", "second": "s", "minute": "min", "hour": "h", "day": "day", "week": "week",
    "month": "month", "year": "year", "fortnight": "fortnight", "decade": "decade",
    "century": "century", "microgram": "µg",
}
#: Unit symbols (read only as written: "5 G" is no gram) -> unit key. Left out as ambiguous:
#: "in" (inches), "t", "l", "h", "s"; "m" is read by :func:`_unit_of` (the number parser
#: takes it as a scale too). Left out of the words: "ton" (short or long), "gallon" (US or
#: imperial).
_UNIT_SYMBOLS: dict[str, str] = {
    "mm": "mm", "cm": "cm", "km": "km", "kms": "km", "ft": "ft", "yd": "yd", "yds": "yd",
    "mi": "mi", "m²": "m²", "m2": "m²", "sq m": "m²", "km²": "km²", "km2": "km²",
    "sq km": "km²", "sq mi": "mi²", "mi²": "mi²", "sq ft": "ft²", "ft²": "ft²", "ha": "ha",
    "mg": "mg", "g": "g", "kg": "kg", "kgs": "kg", "lb": "lb", "lbs": "lb", "oz": "oz",
    "ml": "ml", "mL": "ml", "km/h": "km/h", "kph": "km/h", "kmh": "km/h", "mph": "mph",
    "kn": "knot", "°C": "°C", "° C": "°C", "ºC": "°C", "°F": "°F", "° F": "°F",
    "ºF": "°F", "º C": "°C", "º F": "°F", "℃": "°C", "℉": "°F", "°c": "°C", "°f": "°F",
    "deg C": "°C", "deg F": "°F", "sec": "s", "secs": "s", "min": "min", "mins": "min",
    "hr": "h", "hrs": "h", "sq. m": "m²", "sq. km": "km²", "sq. mi": "mi²", "sq. ft": "ft²",
    "sq miles": "mi²", "sq mile": "mi²", "sq. miles": "mi²", "mcg": "µg", "µg": "µg",
    "μg": "µg",
}


def _plural(words: str) -> str:
    """The plural of a unit word: "feet", "inches", "degrees celsius", "miles per hour"."""
    if words.startswith("degree "):
        return "degrees " + words[7:]
    head, per, tail = words.partition(" per ")
    last = head.rsplit(" ", 1)[-1]
    plural = {"foot": "feet", "inch": "inches", "kelvin": "kelvin",
              "century": "centuries"}.get(last, last + "s")
    return head[: len(head) - len(last)] + plural + per + tail


_UNIT_FORMS = {**_UNIT_NAMES, **{_plural(w): k for w, k in _UNIT_NAMES.items()}}
#: A rate's time after a unit: "km per hour", "miles an hour" (no length).
_RATE = r"\s*(?:per|an?)\s+(?:hours?|hr|h|seconds?|sec|s)\b"
#: A unit right after a number ("5 km", "5-km", "5km", "300 metres", "212 °F").
_UNIT_AFTER = re.compile(
    r"[\s\u00a0-]?(?:(?P<sym>" + "|".join(re.escape(s) for s in sorted(
        _UNIT_SYMBOLS, key=len, reverse=True))
    + r")|(?i:(?P<word>" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(
        _UNIT_FORMS, key=len, reverse=True)) + r")))(?![\w²³/])(?!" + _RATE + ")")
#: After a number's "m": a rate ("5m/s", "5 m per second") or a unit ("5m tonnes").
_AFTER_SCALE_M = re.compile(r"/|" + _RATE)
#: Words that make the temperature before them a difference: "1.5 °C warmer", "2 °F above
#: average", "2 °C more than" (not "below zero", "above which", "60 °C more bacteria").
_TEMP_DIFF_AFTER = re.compile(
    r"\s*(?:warmer|cooler|hotter|colder|higher|lower|(?:more|less)\s+than|of\s+(?:warming|"
    r"cooling|heating)|rise|increase|drop|decrease|difference|change|"
    r"(?:above|below)(?!\s+(?:zero|freezing|which|that)))\b", re.I)
#: Words that make the temperature after them a difference: a verb of change ("rose 1.5
#: °C", "has warmed by 1.1 °C"; not "sterilised by 121 °C steam", "rose to 40 °C") or a
#: noun of one ("a rise of about 2 °F").
_TEMP_DIFF_BEFORE = re.compile(
    r"\b(?:(?:r[io]s|fell|fall|increas|decreas|warm|cool|heat|drop|climb|jump|grew|grow|"
    r"went\s+(?:up|down)|gone\s+(?:up|down)|go(?:es)?\s+(?:up|down))\w*(?:\s+by)?"
    r"|(?:rise|increase|drop|fall|decline|warming|cooling|change|difference|gain)\s+of)"
    r"\s+(?:(?:about|around|roughly|nearly|almost|some|over|under|only|just|another|"
    r"(?:more|less)\s+than|up\s+to|at\s+(?:least|most)|a\s+further)\s+)?$", re.I)
#: Between the two parts of a quantity in two units: "5 feet 11 inches", "2 years, 3
#: months", "1 hour and 30 minutes" (a comma or "and" only between times).
_COMPOUND_JOIN = re.compile(r"\s*")
_COMPOUND_JOIN_TIME = re.compile(r"\s*,?\s*(?:and\s+)?")
#: Inches after a number of feet, written "in" or '"' ("6 ft 2 in", "6 ft 2\""): "in" is no
#: unit of its own (a preposition: "5 ft 8 in the 1990s", "6 feet 4 in 1990" are none).
_INCHES = re.compile(r"\s*(?:in\b\.?(?!\s+(?:the|a|an|his|her|their|its|[A-Z\d]))|\")")
#: The digits of a number as written, and their decimals.
_WRITTEN_DIGITS = re.compile(r"\d+(?:[,\u00a0\u202f ]\d{3})*(?:\.(?P<dec>\d+))?")


def _may_have_unit(n: Number) -> bool:
    """A percent, a currency, a clock time, an age decade or a fraction has no unit."""
    return not (n.percent or n.currency or n.hour is not None or n.high is not None
                or n.fraction)


def _unit_of(text: str, n: Number) -> str | None:
    """The key of the unit written right after ``n`` in ``text``, else ``None``.

    "1.5m" and "5,000 m" read their "m" as metres (millions stay the other reading), "10
    m/s" as metres a second; "5m tonnes" and "2.5m years" are millions of the unit after
    them (no unit is read). A length before a rate ("60 miles an hour", "100 km per
    hour") is no unit either: speeds so written are compared as bare numbers.
    """
    if not _may_have_unit(n):
        return None
    if n.alternative is not None and n.text[-1:] == "m":
        if text.startswith("/s", n.span[1]):
            return "m/s"  # "10 m/s": the number took its "m"
        if _UNIT_AFTER.match(text, n.span[1]) or _AFTER_SCALE_M.match(text, n.span[1]):
            return None  # "5m tonnes", "2.5m years": millions of another unit
        return "m"
    m = _UNIT_AFTER.match(text, n.span[1])
    if not m:
        return None
    if m.group("sym"):
        return _UNIT_SYMBOLS[m.group("sym")]
    return _UNIT_FORMS[" ".join(m.group("word").lower().split())]


def unit_span(text: str, n: Number) -> tuple[int, int] | None:
    """Where ``n``'s unit is written after it in ``text`` ("degrees Fahrenheit"), else ``None``."""
    m = _UNIT_AFTER.match(text, n.span[1]) if n.unit else None
    return m.span() if m else None


def half_step(n: Number, *, zeros: bool = False) -> float:
    """Half the place of ``n``'s last written digit, in ``n``'s unit.

    "12" 0.5, "3.1" 0.05, "1.2 million" 50,000, "1½" 0.5; 0.5 for a number in words.
    ``zeros``: trailing zeros are rounded too ("3,000" 500; not a compound's second number:
    "5 feet 10" is 70 inches to the inch).
    """
    found = list(_WRITTEN_DIGITS.finditer(n.text))
    if not found:
        return 0.5
    m = found[-1] if n.compound else found[0]  # "5 feet 11": the inches
    digits = re.sub(r"[,\s]", "", m.group(0))
    raw = float(digits)
    places = -len(m.group("dec") or "")
    if zeros and not m.group("dec") and raw and not n.compound:  # "3,000": thousands
        places = len(digits) - len(digits.rstrip("0"))
    step = 0.5 * 10.0 ** places
    ratio = abs(n.value) / raw if raw else 1.0
    return step * ratio if ratio >= 1000 else step  # "1.2 million", not "1½"


def dimension(n: Number) -> str | None:
    """What ``n``'s unit measures ("length", "time"...), ``None`` without a unit."""
    return _UNITS[n.unit][0] if n.unit else None


def quantity_span(text: str, n: Number) -> tuple[int, int]:
    """Where ``text`` writes ``n`` with its unit: "5 km", "212 °F", "5 feet 11 inches"."""
    unit = unit_span(text, n)
    end = unit[1] if unit else n.span[1]
    return end - len(text[n.span[0]:end].lstrip()), end  # a number read with its space


def quantity_text(text: str, n: Number) -> str:
    """``n`` as ``text`` writes it with its unit (:func:`quantity_span`)."""
    start, end = quantity_span(text, n)
    return text[start:end]


def in_unit_of(m: Number, n: Number) -> float | None:
    """``m``'s value in ``n``'s unit, or ``None`` unless both have units of one dimension.

    Example:
        >>> round(in_unit_of(find_numbers("212 °F")[0], find_numbers("100 °C")[0]), 6)
        100.0
    """
    if n.unit is None or m.unit is None:
        return None
    dim_n, f_n, o_n = _UNITS[n.unit]
    dim_m, f_m, o_m = _UNITS[m.unit]
    if dim_n != dim_m:
        return None
    if "Δ" in n.unit + m.unit:  # a difference has no zero point: "2.7 °F" is 1.5 °C of it
        o_n = o_m = 0.0
    return (m.value * f_m + o_m - o_n) / f_n


def same_measure(n: Number, m: Number) -> bool | None:
    """Whether two numbers with units of one dimension give the same quantity.

    ``None`` when either has no unit or their units measure different things. The values
    agree when they differ by less than half the last written digit of the less precise
    of them ("12 miles" is 19.3 km: "20 km" agrees, "22 km" does not; "1 year" and "6
    months", half a year apart, do not), or less than 0.5 %. A round number rounds its
    trailing zeros too, by at most 5 % ("100 km" is "60 miles", "10,000 feet" "3,000 m"),
    except temperatures; never by a fifth or more ("1 year" is no "8 months").

    Example:
        >>> km = find_numbers("5 km")[0]
        >>> same_measure(km, find_numbers("a 5,000 m run")[0])
        True
        >>> same_measure(km, find_numbers("5 miles")[0])
        False
    """
    converted = in_unit_of(m, n)
    if converted is None:
        return None
    dim, f_n, _ = _UNITS[n.unit]  # type: ignore[index]
    to_n = _UNITS[m.unit][1] / f_n  # type: ignore[index]  # m's steps in n's unit
    big = max(abs(n.value), abs(converted))
    tolerance = max(half_step(n), half_step(m) * to_n)
    if dim != "temperature":
        rounded = max(half_step(n, zeros=True), half_step(m, zeros=True) * to_n)
        tolerance = min(max(tolerance, min(rounded, 0.05 * big)), 0.2 * big)
    return abs(n.value - converted) < max(tolerance, 0.005 * big)


def _age_decades(text: str) -> list[Number]:
    """Ages as decades of life: "in her 30s" is 30 to 39, "his early twenties" 20 to 24."""
    out = []
    for m in _AGE_DECADE.finditer(text):
        if m.group("d"):
            base = 10 * int(m.group("d"))
        else:
            word = m.group("w").lower()
            base = 10 if word == "teens" else _DECADE_WORDS[word]
        low, high = _DECADE_PART[m.group("part") and m.group("part").lower()]
        if base == 10:  # the teens are 13 to 19
            low = max(low, 3)
        start = m.start("part") if m.group("part") else m.start("d") if m.group("d") \
            else m.start("w")
        out.append(Number(float(base + low), text[start: m.end()], (start, m.end()),
                          high=float(base + high)))
    return out


def _fractions(text: str) -> list[Number]:
    """Fractions of a whole as percents: "two thirds" is 66.67 %, "half of" 50 %."""
    out = []
    for m in _FRACTION.finditer(text):
        if m.group("a"):
            num, den = int(m.group("a")), int(m.group("b"))
            if not 0 < num < den:
                continue
        elif m.group("half"):
            num, den = 1, 2
        else:
            word = (m.group("n") or m.group("n1") or m.group("n2")).lower()
            num = _FRACTION_NUMERATORS[word]
            den_word = (m.group("dp") or m.group("d1") or m.group("d2")).lower()
            den = _DENOMINATORS[den_word.removesuffix("s") if den_word != "halves"
                                else den_word]
            if num >= den:
                continue  # "three halves"
        out.append(Number(100 * num / den, m.group(0), m.span(), percent=True, fraction=True))
    return out


def _scientific(text: str) -> list[Number]:
    """Numbers in scientific notation: "1.2e6", "1.2 × 10^6", "10⁹"."""
    out = []
    for m in _SCI.finditer(text):
        power = m.group("e") or m.group("e2") or m.group("e3")
        if power is None:
            continue
        power = power.translate(_SUPERSCRIPT).replace("\u2212", "-")
        mantissa = float(m.group("m") or m.group("me") or 1)
        try:
            value = mantissa * 10.0 ** int(power)
        except OverflowError:  # "10^500": beyond a float
            value = math.inf if mantissa > 0 else -math.inf
        out.append(Number(value, m.group(0), m.span()))
    return out


@dataclass(frozen=True)
class Date:
    """A normalised date: ``(year, month or None, day or None)``.

    ``decade`` marks a decade ("the 1990s", "2000's", "the nineteen nineties"): ``year`` is
    its first year. A year ending in 00 ("the 1800s") may name its century as well, so it
    spans a hundred years (:attr:`years`). ``century`` marks a century ("the 20th century",
    "nineteenth-century"): ``year`` is its hundred's first year (1900 for the 20th), and it
    spans 1900-2000 (both ways of counting a century).
    """

    year: int
    month: int | None
    day: int | None
    text: str
    span: tuple[int, int]
    decade: bool = False
    #: Day and month may be the other way round: "03/04/2019" is 4 March or 3 April.
    ambiguous: bool = False
    century: bool = False

    @property
    def key(self) -> tuple[int, int | None, int | None]:
        """``(year, month, day)``."""
        return (self.year, self.month, self.day)

    @property
    def readings(self) -> tuple[tuple[int | None, int | None], ...]:
        """The ``(month, day)`` pairs the date may mean: two when :attr:`ambiguous`."""
        if self.ambiguous:
            return ((self.month, self.day), (self.day, self.month))
        return ((self.month, self.day),)

    @property
    def span_of_years(self) -> bool:
        """Whether the date is a decade or a century, not one year (or day)."""
        return self.decade or self.century

    @property
    def years(self) -> range:
        """The years the date covers.

        One; ten for a decade; a hundred for "the 1800s"; 101 for a century (the 20th: 1900
        to 2000).
        """
        if self.century:
            return range(self.year, self.year + 101)
        if not self.decade:
            return range(self.year, self.year + 1)
        return range(self.year, self.year + (100 if self.year % 100 == 0 else 10))


@_memoised
def find_dates(text: str) -> list[Date]:
    """Dates in ``text``: full dates, month + year, bare years, ranges, decades, centuries.

    Full dates are written with a month name, as ISO dates or with numbers only ("07/20/1969",
    "20.07.1969"; when day and month could be either way round, "03/04/2019", the date is
    :attr:`Date.ambiguous`). A range of years cut short ("2019-20") gives both years.

    Example:
        >>> [d.key for d in find_dates("Landed on July 20, 1969; left in 1970.")]
        [(1969, 7, 20), (1970, None, None)]
        >>> [(d.year, d.decade) for d in find_dates("It was formed in the 2000's.")]
        [(2000, True)]
        >>> [d.key for d in find_dates("The 1999-00 season; 07/20/1969.")]
        [(1999, None, None), (2000, None, None), (1969, 7, 20)]
        >>> [(d.year, d.century) for d in find_dates("A 20th-century film of the 1990s")]
        [(1900, True), (1990, False)]
        >>> [(d.year, d.decade) for d in find_dates("A hit of the '80s, as in the early 90s.")]
        [(1980, True), (1990, True)]
    """
    found: list[Date] = []
    taken: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return all(span[1] <= s or span[0] >= e for s, e in taken)

    for m in _CENTURY.finditer(text):
        n = int(m.group("n")) if m.group("n") else _ordinal_value(m)
        # "20th Century Fox", "the Twentieth Century Limited": a name, not a date
        if 1 <= n <= 21 and not m.group("word")[0].isupper():
            found.append(Date((n - 1) * 100, None, None, m.group(0), m.span(), century=True))
            taken.append(m.span())
    for m in _DECADE_IN_WORDS.finditer(text):
        year = (1900 if m.group("c").lower() == "nineteen" else 2000) \
            + _DECADE_WORDS[m.group("d").lower()]
        found.append(Date(year, None, None, m.group(0), m.span(), decade=True))
        taken.append(m.span())
    for m in _SHORT_DECADE.finditer(text):  # "the '90s", "the early 80s": the 1990s, 1980s
        d = int(m.group("d") or m.group("d2"))
        year = (2000 if d < 2 else 1900) + 10 * d
        found.append(Date(year, None, None, m.group(0), m.span(), decade=True))
        taken.append(m.span())
    for rx in (_DATE_ISO, _DATE_DMY, _DATE_MDY):
        for m in rx.finditer(text):
            if not free(m.span()):
                continue
            mon = m.group("m")
            month = int(mon) if mon.isdigit() else _MONTHS[mon.lower().rstrip(".")]
            found.append(Date(int(m.group("y")), month, int(m.group("d")), m.group(0), m.span()))
            taken.append(m.span())
    for m in _DATE_NUMERIC.finditer(text):
        a, b = int(m.group("a")), int(m.group("b"))
        # "/" reads month first (07/20/1969), "." day first (20.07.1969), unless only the
        # other way is a date
        month, day = (a, b) if m.group("sep") == "/" else (b, a)
        if month > 12 or day > 31:
            month, day = day, month
        if not (1 <= month <= 12 and 1 <= day <= 31) or not free(m.span()):
            continue
        found.append(Date(int(m.group("y")), month, day, m.group(0), m.span(),
                          ambiguous=day <= 12 and day != month))
        taken.append(m.span())
    for m in _MONTH_YEAR.finditer(text):
        if free(m.span()):
            found.append(Date(int(m.group("y")), _MONTHS[m.group("m").lower().rstrip(".")], None,
                              m.group(0), m.span()))
            taken.append(m.span())
    for m in _YEAR_RANGE.finditer(text):
        start = int(m.group("y"))
        end = start - start % 100 + int(m.group("yy"))
        end += 100 if end <= start else 0  # "1999-00"
        if end - start > 30 or not free(m.span()):
            continue  # "2019-03" is no range
        found.append(Date(start, None, None, m.group("y"), m.span("y")))
        found.append(Date(end, None, None, m.group("yy"), m.span("yy")))
        taken.append(m.span())
    for m in _YEAR_OR_DECADE.finditer(text):
        year, decade = int(m.group("y")), bool(m.group("dec"))
        if decade and year % 10:
            continue  # "1994s" is no decade
        if free(m.span()) and not re.match(r"[.,]?\d", text[m.end():m.end() + 2]):
            era = None if decade else ERA_AFTER_YEAR.match(text, m.end())
            year = -year if era and _BEFORE_COMMON_ERA.fullmatch(era.group(0)) else year
            end = era.end() if era else m.end()  # the era is the date's: "1200 BC"
            found.append(Date(year, None, None, text[m.start():end], (m.start(), end),
                              decade=decade))
            taken.append(m.span())
    found.sort(key=lambda d: d.span)
    for k in range(len(found) - 1, 0, -1):
        one, two = found[k - 1], found[k]
        if not any(d.month or d.decade or d.century for d in (one, two)) and _counts_down(
                text, one.span, one.year, two.span[0], two.year):  # "1200 -- 1100 BC"
            found[k - 1] = replace(one, year=-one.year)
    return found


def _counts_down(text: str, a_span: tuple[int, int], a: float, b_start: int, b: float
                 ) -> bool:
    """Whether year ``a`` is the first of a range whose era, after year ``b``, counts down.

    "221 to 206 BC": 221 is a year before the common era, too. ``b`` is read as such a
    year already (negative), and ``a`` has no era of its own and is the greater number (a
    range before the common era counts down).
    """
    return b < 0 < a and a > -b and not ERA_AFTER_YEAR.match(text, a_span[1]) and \
        bool(_ERA_RANGE_JOIN.fullmatch(text, a_span[1], b_start))


@_memoised
def find_ordinals(text: str) -> list[Number]:
    """Ordinal words as numbers ("second" -> 2), so "season 2" is found in "the second season".

    The evidence's ordinals count as its numbers (:class:`mitigation.checks.NumberCheck`);
    in a claim, "first" or "second" is seldom a checkable value, and the check compares a
    claim's ordinal only with the evidence's ordinals in the same context.

    Digits with a suffix ("3rd") are ordinals too, except a century's ("the 21st century", a
    date) and a day's next to a month ("July 4th"); a fraction's word ("a third of") is none.

    Example:
        >>> [n.value for n in find_ordinals("The second season aired first in 2007.")]
        [2.0, 1.0]
        >>> [n.value for n in find_ordinals("the twenty-first century")]
        [21.0]
        >>> [n.text for n in find_ordinals("His 3rd album sold a third of the 2nd's copies.")]
        ['3rd', '2nd']
    """
    fractions = [n.span for n in _fractions(text)]
    centuries = [m.span() for m in _CENTURY.finditer(text)]
    out = [Number(float(_ordinal_value(m)), m.group(0), m.span())
           for m in _ORDINAL.finditer(text)
           if not any(s <= m.start() and m.end() <= e for s, e in fractions)]
    for m in _DIGIT_ORDINAL.finditer(text):
        if any(s <= m.start() and m.end() <= e for s, e in centuries) or \
                _NEXT_TO_MONTH.search(text[max(0, m.start() - 12): m.start()]) or \
                _MONTH_AFTER.match(text, m.end()):
            continue
        out.append(Number(float(m.group("n")), m.group(0), m.span()))
    return sorted(out, key=lambda n: n.span)



def _ordinal_value(m: re.Match[str]) -> int:
    """The number of an :data:`_ORDINAL_WORDS` match: "twenty-first" is 21."""
    return _ORDINALS[m.group("unit").lower()] + (
        _WORDS[m.group("tens").lower()] if m.group("tens") else 0)


def find_quotes(text: str) -> list[str]:
    """Quoted strings (straight or curly double quotes, 3+ characters).

    Escaped text is unescaped first: a CSV field (wrapped in double quotes, inner ones
    doubled) loses the wrapping pair, so it is not read as a quotation, and text whose
    double quotes all come doubled has them single. Text with any single straight quote
    stays as it is (``""`` there is an empty quotation).

    Example:
        >>> find_quotes('"Her song ""Love or Lust"" was a hit."')
        ['Love or Lust']
    """
    if '""' in text:
        field = csv_unescaped(text.strip())
        if field != text.strip():
            text = field
        elif _ALL_DOUBLED.fullmatch(text):
            text = text.replace('""', '"')
    # pair every quote mark first, so a short quotation does not shift the pairs after it
    return [q for m in _QUOTE.finditer(text) if len(q := m.group(1)) >= 3]


def find_names(text: str) -> list[str]:
    """Capitalised name phrases, without sentence-initial function words or a possessive "'s".

    Example:
        >>> find_names("The Eiffel Tower is in Paris. Damon Albarn's band formed.")
        ['Eiffel Tower', 'Paris', 'Damon Albarn']
    """
    return [name for name, _ in find_name_starts(text)]


def find_name_starts(text: str) -> list[tuple[str, int]]:
    """:func:`find_names` with where each name starts in ``text``.

    A word alone that opens a sentence and often does ("Several", "Most", "Nearly", "Two")
    is no name.

    Example:
        >>> find_name_starts("In Paris, Damon Albarn sang.")
        [('Paris', 3), ('Damon Albarn', 10)]
        >>> find_name_starts("Several people came. Most Haunted aired.")
        [('Most Haunted', 21)]
        >>> find_name_starts("Additionally, Paris hosts the Louvre.")
        [('Paris', 14), ('Louvre', 30)]
    """
    out = []
    openings: set[int] | None = None  # where sentences open, read once when needed
    for m in _NAME.finditer(text):
        words = m.group(0).split()
        start = m.start()
        while words and words[0] in _FUNCTION_WORDS:
            start = text.index(words[1], start + len(words[0])) if len(words) > 1 else start
            words = words[1:]
        # an adverb that opens a sentence with a comma ("Additionally,", "Notably,")
        adverb = words == [m.group(0)] and bool(_OPENING_ADVERB.fullmatch(words[0])) and \
            text[m.end():m.end() + 1] == ","
        if words == [m.group(0)] and (words[0] in _OPENERS or adverb):
            if openings is None:
                openings = {s + len(text[s:e]) - len(text[s:e].lstrip(_OPENING_MARKS))
                            for s, e in trimmed_sentence_spans(text)}
            if start in openings:
                continue
        if words:
            words[-1] = _POSSESSIVE.sub("", words[-1]) or words[-1]
            out.append((" ".join(words), start))
    return out


#: An adverb by its ending, not a name ("Additionally", "Notably"; not "Kelly", "Italy").
_OPENING_ADVERB = re.compile(
    r"[A-Z][a-z]{2,}(?:ally|ously|ively|ently|antly|ately|ably|ibly|edly|ingly|fully|arly)")
_WORD_BEFORE = re.compile(r"(?<![\w'’-])([A-Za-z][\w'’-]*)\s+$")
#: Capitalised words that open ordinary sentences, not names: the function words and the
#: prepositions and adverbs that both rules below treat alike.
SENTENCE_WORDS = frozenset(_FUNCTION_WORDS | {
    "During", "Until", "Between", "Through", "Of", "To", "Under", "Over", "Like", "Unlike",
    "Despite", "Then", "Now", "Only", "Some", "Each", "Every"})
#: Words before a number that do not make it part of a name ("During 2019", "About 40", "FY
#: 2020"). Not the hedge's list (``mitigation.mitigator``): several often begin a title ("About
#: a Boy", "Into the Wild"), which a hedge must not lowercase; and "All", "Today" or "No" are
#: left out here, since a number after them may name something ("All 4", "No 10").
_NOT_NAME_WORDS = SENTENCE_WORDS | {
    "Throughout", "Around", "About", "Circa", "Within", "Following", "Including", "Against",
    "Upon", "Into", "Than", "Nearly", "Almost", "Approximately", "Roughly", "Exactly", "Fiscal",
    "FY"}
#: Words that open ordinary sentences on their own ("Several people came", "Two films were
#: made", "Nearly 500 came"): a name only with more capitalised words ("Most Haunted").
_OPENERS = _NOT_NAME_WORDS | {
    "Many", "Most", "Half", "Several", "All", "Both", "Few", "Fewer", "More", "Less", "No", "Not",
    "Neither", "Either", "Another", "Other", "Such", "Much", "Very", "Once", "Later",
    "Earlier", "Today", "Yesterday", "Currently", "Originally", "Initially", "Eventually",
    "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten", "Eleven",
    "Twelve", "Twenty", "Thirty", "Forty", "Fifty", "Hundreds", "Thousands", "Millions",
    "Dozens"}
#: Marks before a sentence's first word: opening quotes and brackets.
_OPENING_MARKS = "\"“‘'(["
#: A title's disambiguating qualifier with a number: "Game of Thrones (season 7)", "The Thin
#: Red Line (1998 film)", "Skins (series 3)".
_TITLE_QUALIFIER = re.compile(
    r"\((?:\d{1,4}\s+)?(?:[A-Za-z]+\s+)?(?:season|series|film|movie|album|song|single|novel|"
    r"book|episode|game|miniseries|musical|play|opera|soundtrack|tour|volume|comics?|"
    r"magazine|franchise|documentary|sitcom)(?:\s+\d{1,4})?\)", re.I)
#: What a title's qualifier follows: a word, or a quoted title's closing quote.
_TITLE_END = re.compile(r"(?:(?<![\w'’-])([A-Za-z][\w'’-]*)|[\"”’])\s*$")


def in_title_qualifier(text: str, start: int) -> bool:
    """Whether ``text[start:]`` is a number inside a title's qualifier ("X (season 7)").

    The qualifier is a parenthesis right after a capitalised word of a name (not an ordinary
    sentence word such as "However") or a quoted title, holding one number and a kind of
    work ("season", "film", "TV series", ...): the number names which work, it is not a
    quantity or date the claim asserts. "(born 1990)" or "(about 40 people)" are not
    qualifiers.

    Example:
        >>> t = "Game of Thrones (season 7) aired in (about 7) weeks."
        >>> in_title_qualifier(t, t.index("7")), in_title_qualifier(t, t.rindex("7"))
        (True, False)
    """
    for m in _TITLE_QUALIFIER.finditer(text):
        if m.start() < start < m.end():
            if len(re.findall(r"\d+", m.group(0))) != 1:
                return False
            w = _TITLE_END.search(text, 0, m.start())  # what comes right before "("
            if not w:
                return False
            word = w.group(1)
            return word is None or (word[0].isupper() and word not in _NOT_NAME_WORDS)
    return False


def follows_name_word(text: str, start: int) -> bool:
    """Whether ``text[start:]`` comes right after a capitalised word of a name.

    Not after a sentence-initial function word or preposition ("In", "The", "During"), a
    possessive ("Rio's"), a word with digits ("Q3", "4Q") or a month.

    Example:
        >>> t = "Blade Runner 2049 came out in 2017."
        >>> follows_name_word(t, t.index("2049")), follows_name_word(t, t.index("2017"))
        (True, False)
    """
    m = _WORD_BEFORE.search(text, 0, start)
    if not m:
        return False
    word = m.group(1)
    return (word[0].isupper() and word not in _NOT_NAME_WORDS
            and not re.search(r"['’]s$|\d", word)
            and word.lower().rstrip(".") not in _MONTHS)


def part_of_name(text: str, n: Number) -> bool:
    """Whether number ``n`` of ``text`` is part of a capitalised name, not a quantity.

    A bare integer right after a capitalised word ("Pitch Perfect 2", "Apollo 11"; not a
    sentence-initial function word or a month) or in a title's qualifier ("Game of Thrones
    (season 7)", :func:`in_title_qualifier`), or a capitalised number word inside a
    sentence ("the Hundred Years' War"), or number words with a capitalised word after the
    first ("Two and a Half Men"), or an integer that is all of a quotation ('the film "300"').

    Example:
        >>> [part_of_name(t, find_numbers(t)[0]) for t in ("Pitch Perfect 2 is a film.",
        ...                                                 "In 2 weeks it sold 5 copies.")]
        [True, False]
    """
    start = n.span[0]
    if n.text[:1].isdigit():
        if n.currency or n.percent or not n.text.isdigit():
            return False
        return _in_name_at(text, start)
    if any(w[:1].isupper() for w in n.text.split()[1:]):
        return True  # "Two and a Half Men", "One Hundred Years of Solitude"
    before = text[:start].rstrip()
    return n.text[:1].isupper() and bool(before) and before[-1] not in ".!?:;\"“(—-"


def year_in_name(text: str, d: Date) -> bool:
    """Whether date ``d`` of ``text`` is a bare year inside a name, not a date.

    The rule of :func:`part_of_name` for integers: "Blade Runner 2049", "The Thin Red Line
    (1998 film)", a year that is all of a quotation ('the novel "1984"').

    Example:
        >>> t = "Blade Runner 2049 came out in 2017."
        >>> [year_in_name(t, d) for d in find_dates(t)]
        [True, False]
    """
    return d.month is None and not d.span_of_years and _in_name_at(text, d.span[0])


def _in_name_at(text: str, start: int) -> bool:
    return (follows_name_word(text, start) or in_title_qualifier(text, start)
            or _quoted_alone(text, start))


#: A number that is all of a quotation: a title ("1984", “1999”), not a value.
_QUOTED_NUMBER = re.compile(r"[\"“‘'][0-9]+[\"”’']")


def _quoted_alone(text: str, start: int) -> bool:
    """Whether the integer at ``text[start]`` is all a quotation holds ('the novel "1984"').

    Example:
        >>> t = 'The novel "1984" came out in 1949.'
        >>> _quoted_alone(t, t.index("1984")), _quoted_alone(t, t.index("1949"))
        (True, False)
    """
    return start > 0 and bool(_QUOTED_NUMBER.match(text, start - 1))


_AT_LEAST = re.compile(r"(?:\b(?:more|greater|higher|larger|no\s+(?:fewer|less))\s+than|"
                       r"\b(?:over|above|exceeding|at\s+least|in\s+excess\s+of|upwards\s+of))"
                       r"\s+$", re.I)
_AT_MOST = re.compile(r"(?:\b(?:less|fewer|lower|smaller|no\s+more)\s+than|"
                      r"\b(?:under|below|at\s+most|up\s+to))\s+$", re.I)
_BOUNDS: tuple[tuple[Literal["min", "max"], re.Pattern[str]], ...] = (
    ("min", _AT_LEAST), ("max", _AT_MOST))


def range_end(text: str, n: Number, numbers: Sequence[Number]) -> bool:
    """Whether ``n`` of ``text`` is one end of a range of numbers.

    A number next to it is joined to it by "-", "to" or "and" ("5-7%", "from 25,000 to
    5,000", "between 2,400 and 2,600"). ``numbers``: all of ``text``'s numbers, in order
    (:func:`find_numbers`).

    Example:
        >>> t = "It fell from 25,000 to 5,000 in 12 years."
        >>> [range_end(t, n, find_numbers(t)) for n in find_numbers(t)]
        [True, True, False]
    """
    return any(n in (a, b) and _RANGE_JOIN.fullmatch(text, a.span[1], b.span[0])
               for a, b in zip(numbers, numbers[1:], strict=False))


def number_bound(text: str, n: Number) -> Literal["min", "max"] | None:
    """Whether ``text`` gives number ``n`` as a bound, from the words right before it.

    ``"min"`` ("over 50 years", "more than $5 million", "at least 3"), ``"max"`` ("under
    10", "fewer than 5 people", "up to 20"), else ``None``.

    Example:
        >>> t = "It sold over 1.6 million copies in under 3 years."
        >>> [number_bound(t, n) for n in find_numbers(t)]
        ['min', 'max']
    """
    found = bound_words(text, n)
    return found[0] if found else None


def bound_words(text: str, n: Number) -> tuple[Literal["min", "max"], int] | None:
    """:func:`number_bound` and where its words start in ``text`` (``None``: no bound).

    Example:
        >>> t = "It grossed under $873 million."
        >>> kind, start = bound_words(t, find_numbers(t)[0])
        >>> kind, t[start:]
        ('max', 'under $873 million.')
    """
    offset = max(0, n.span[0] - 40)
    before = text[offset: n.span[0]]
    for kind, pattern in _BOUNDS:
        m = pattern.search(before)
        if m:
            return kind, offset + m.start()
    return None


def _same_value(n: Number, m: Number) -> bool:
    """One reading of each agrees.

    Numbers with different units agree when they measure the same quantity ("5 km" and
    "5,000 m": :func:`same_measure`); a clock time and a bare number agree on the hour; a
    range ("in her 30s") agrees with a value or a range it overlaps; a fraction ("two
    thirds", 66.67 %) with a percent that rounds it ("67%").
    """
    if n.unit and m.unit and n.unit != m.unit:  # "5 km" and "5,000 m", not "5 miles"
        return bool(same_measure(n, m))
    if n.hour is not None and m.hour is None:
        return _close(n.hour, m.value)
    if m.hour is not None and n.hour is None:
        return _close(m.hour, n.value)
    if n.high is not None or m.high is not None:
        n_high = n.value if n.high is None else n.high
        m_high = m.value if m.high is None else m.high
        return n.value <= m_high and m.value <= n_high
    if n.fraction != m.fraction:
        return any(abs(a - b) < 0.5 for a in n.readings() for b in m.readings())
    return any(_close(a, b) for a in n.readings() for b in m.readings())


def number_in(n: Number, numbers: list[Number]) -> bool:
    """Whether ``n``'s value is among ``numbers`` (tolerant to float rounding).

    A percent ("5%") is given only by a percent ("5 percent", or a fraction: "three
    quarters"), and a currency only by the same one or none ("$5" is in "5 dollars", not in
    "€5" nor "5 euros"); a number without a percent is given by either.

    Example:
        >>> n = find_numbers("a rate of 5%")[0]
        >>> number_in(n, find_numbers("5 branches, 7%")), number_in(n, find_numbers("5 pc."))
        (False, False)
        >>> number_in(n, find_numbers("five per cent"))
        True
    """
    return any(_same_value(n, m) and comparable(n, m) for m in numbers)


def comparable(n: Number, m: Number) -> bool:
    """Whether evidence number ``m`` may give claim number ``n`` (:func:`number_in`'s rule).

    A percent only by a percent; a currency by the same one or none.
    """
    return (m.percent or not n.percent) and not (
        n.currency is not None and m.currency is not None and n.currency != m.currency)


def in_other_currency(n: Number, numbers: list[Number]) -> Number | None:
    """The first of ``numbers`` with ``n``'s value in another currency, else ``None``.

    "€5 million" and "5 million euros" for "$5 million"; none for a number without a currency.

    Example:
        >>> n = find_numbers("worth $5 million")[0]
        >>> in_other_currency(n, find_numbers("worth 5 million euros")).currency
        '€'
    """
    if not n.currency:
        return None
    return next((m for m in numbers if m.currency and m.currency != n.currency
                 and m.percent == n.percent and _same_value(n, m)), None)


def date_in(d: Date, dates: list[Date]) -> bool:
    """Whether ``d`` agrees with a date in ``dates``.

    A year matches a full date of that year; month and day must match where both give them
    (either reading of an :attr:`Date.ambiguous` date will do); a decade or a century matches
    each date in it and each span it overlaps (:attr:`Date.years`).

    Example:
        >>> date_in(find_dates("in the 20th century")[0], find_dates("born in 1985"))
        True
    """
    for o in dates:
        if d.span_of_years or o.span_of_years:
            # a decade agrees with each year in it ("the 2000s" and 2004), and overlapping
            # spans agree ("the 1800s" and "the 1850s", "the 19th century" and "the 1860s");
            # two centuries agree only when they are the same one (their spans share a year)
            if d.century and o.century:
                if d.year == o.year:
                    return True
                continue
            if max(d.years.start, o.years.start) < min(d.years.stop, o.years.stop):
                return True
            continue
        if o.year != d.year:
            continue
        for (month, day), (o_month, o_day) in product(d.readings, o.readings):
            # an ambiguous date agrees with a date that either of its readings gives
            if (month is None or o_month is None or month == o_month) and \
                    (day is None or o_day is None or day == o_day):
                return True
    return False


def clear_caches() -> None:
    """Forget every remembered parse, for timings that must parse their texts afresh."""
    for parse in (find_numbers, find_dates, find_ordinals):
        parse.cache_clear()  # type: ignore[union-attr]  # set by _memoised
