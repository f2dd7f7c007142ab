"""Closed classes of terms that exclude each other: kinship, directions, nationalities, kinds.

Kinds are what a thing is said to be: a film, a song, a city. A claim that swaps one of these
words for another of its class while keeping what the word is tied to ("a sister named Micke"
against "his brother Micke", "the nephew of Zeus" against "the son of Zeus", "187 km
southeast of Copenhagen" against "187 km northwest of Copenhagen", "an American professional
footballer" against "an Italian professional footballer", "Pearl Jam is a song" against
"Pearl Jam is an American rock band") reads almost word for word like its evidence, so
lexical alignment and a small NLI model often take it as supported. :func:`term_substitutions`
finds such swaps: the claim's term, the evidence's term in its place, and the words that tie
them to the same thing. :class:`mitigation.checks.TermCheck` reports them.

Terms are compared by what they say, not by spelling: "father" and "parent" agree (a father
is a parent), "northwest" and "west" agree, "English" and "British" agree; "brother" and
"sister", "southeast" and "northwest", "American" and "Italian" do not.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from verifier.text import STOP_WORDS

#: Kinship terms: (relation, gender). Terms of one relation agree unless both give a gender
#: and the genders differ; "parent" agrees with "father" and "mother".
KINSHIP: dict[str, tuple[str, str | None]] = {
    **{w: ("parent", "m") for w in ("father", "fathers")},
    **{w: ("parent", "f") for w in ("mother", "mothers")},
    **{w: ("parent", None) for w in ("parent", "parents")},
    **{w: ("child", "m") for w in ("son", "sons")},
    **{w: ("child", "f") for w in ("daughter", "daughters")},
    **{w: ("child", None) for w in ("child", "children")},
    **{w: ("sibling", "m") for w in ("brother", "brothers")},
    **{w: ("sibling", "f") for w in ("sister", "sisters")},
    **{w: ("sibling", None) for w in ("sibling", "siblings")},
    **{w: ("spouse", "m") for w in ("husband",)},
    **{w: ("spouse", "f") for w in ("wife",)},
    **{w: ("spouse", None) for w in ("spouse",)},
    **{w: ("grandparent", "m") for w in ("grandfather", "grandfathers")},
    **{w: ("grandparent", "f") for w in ("grandmother", "grandmothers")},
    **{w: ("grandparent", None) for w in ("grandparent", "grandparents")},
    **{w: ("grandchild", "m") for w in ("grandson", "grandsons")},
    **{w: ("grandchild", "f") for w in ("granddaughter", "granddaughters")},
    **{w: ("grandchild", None) for w in ("grandchild", "grandchildren")},
    **{w: ("parent's sibling", "m") for w in ("uncle", "uncles")},
    **{w: ("parent's sibling", "f") for w in ("aunt", "aunts")},
    **{w: ("sibling's child", "m") for w in ("nephew", "nephews")},
    **{w: ("sibling's child", "f") for w in ("niece", "nieces")},
    **{w: ("cousin", None) for w in ("cousin", "cousins")},
}

#: Nationalities (adjectives), each with the groups it belongs to: two agree when they share
#: a group ("English" and "British"; "Russian" and "Soviet"). Continental, regional and
#: ethnic words ("European", "African", "Arab", "Jewish") are not listed: they agree with
#: any nationality.
_NATIONALITY_GROUPS: tuple[tuple[str, ...], ...] = (
    ("British", "English", "Scottish", "Welsh", "Irish", "Cornish"),
    ("Soviet", "Russian", "Ukrainian", "Belarusian", "Georgian", "Armenian", "Azerbaijani",
     "Kazakh", "Uzbek", "Latvian", "Lithuanian", "Estonian", "Moldovan", "Kyrgyz", "Tajik",
     "Turkmen"),
    ("Yugoslav", "Serbian", "Croatian", "Slovenian", "Slovene", "Bosnian", "Macedonian",
     "Montenegrin", "Kosovar"),
    ("Czechoslovak", "Czech", "Slovak"),
    ("German", "Prussian", "Bavarian", "Austrian"),
    ("Austro-Hungarian", "Austrian", "Hungarian"),
    ("Chinese", "Taiwanese"),
    ("Belgian", "Flemish"),
    ("Persian", "Iranian"),
    ("Spanish", "Catalan", "Basque"),
    ("French", "Breton", "Corsican"),
    ("Italian", "Sicilian", "Sardinian"),
    ("Dutch",), ("American",), ("Canadian",), ("Mexican",), ("Brazilian",),
    ("Argentine", "Argentinian"), ("Chilean",), ("Colombian",), ("Peruvian",),
    ("Venezuelan",), ("Cuban",), ("Jamaican",), ("Australian",),
    ("New Zealand",), ("Japanese",), ("Korean",), ("Vietnamese",), ("Thai",), ("Filipino",),
    ("Indonesian",), ("Malaysian",), ("Singaporean",), ("Indian",), ("Pakistani",),
    ("Bangladeshi",), ("Sri Lankan",), ("Nepalese", "Nepali"), ("Afghan",), ("Turkish",),
    ("Greek",), ("Egyptian",), ("Israeli",), ("Lebanese",), ("Syrian",), ("Iraqi",),
    ("Saudi",), ("Nigerian",), ("Ghanaian",), ("Kenyan",), ("Ethiopian",),
    ("South African",), ("Moroccan",), ("Algerian",), ("Tunisian",), ("Swedish",),
    ("Norwegian",), ("Danish",), ("Finnish",), ("Icelandic",), ("Polish",), ("Romanian",),
    ("Bulgarian",), ("Albanian",), ("Portuguese",), ("Swiss",), ("Luxembourgish",),
    ("Maltese",), ("Cypriot",), ("Mongolian",),
)
NATIONALITIES: dict[str, frozenset[int]] = {}
for _k, _group in enumerate(_NATIONALITY_GROUPS):
    for _name in _group:
        NATIONALITIES[_name] = NATIONALITIES.get(_name, frozenset()) | {_k}
del _k, _group, _name

#: A compass direction as a word: "north", "south-east", "southeastern", "northerly".
_DIRECTION = re.compile(
    r"\b(?P<dir>(?:north|south)(?:[- ]?(?:east|west))?|east|west)(?P<suffix>ern|erly)?\b")
#: Words that stand between a kinship term and its person: "a sister named Micke", "her
#: parents are Angela and Gavin".
_NAMED = frozenset({"named", "called", "is", "are", "was", "were"})
_WORD = re.compile(r"[^\W\d_][\w'’]*")
#: What may stand between two words of a tie: spaces, a comma, quotes.
_GAP = re.compile(r"[\s,\"“”'`]*")


@dataclass(frozen=True)
class Substitution:
    """A term of the claim that the evidence gives as another of its class.

    ``kind``: ``"kinship"``, ``"direction"``, ``"nationality"`` or ``"category"``;
    ``claim_term`` and ``evidence_term`` as written; ``tie``: the words that tie both to the
    same thing, as the claim writes them ("of Zeus", "Micke", "professional footballer", the
    subject "Pearl Jam").
    """

    kind: str
    claim_term: str
    evidence_term: str
    tie: str


def _swapped(theirs: Iterable[tuple[bool, str]]) -> str | None:
    """The first evidence term that disagrees with the claim's, unless one agrees.

    ``theirs``: each evidence term tied to the same thing, with whether it agrees.
    """
    other = None
    for agrees, term in theirs:
        if agrees:
            return None
        other = other or term
    return other


def _kin_agree(a: str, b: str) -> bool:
    (ra, ga), (rb, gb) = KINSHIP[a], KINSHIP[b]
    return ra == rb and (ga is None or gb is None or ga == gb)


def _compass(word: str) -> frozenset[str]:
    return frozenset(p for p in ("north", "south", "east", "west") if p in word)


def _nationality_agree(a: str, b: str) -> bool:
    return bool(NATIONALITIES[a] & NATIONALITIES[b])


def _words(text: str) -> list[re.Match[str]]:
    return list(_WORD.finditer(text))


def _joined(text: str, a: re.Match[str], b: re.Match[str]) -> bool:
    """Whether only spaces, commas and quotes stand between words ``a`` and ``b``."""
    return _GAP.fullmatch(text, a.end(), b.start()) is not None


def _tie_after(text: str, words: list[re.Match[str]], i: int) -> tuple[str, str, int] | None:
    """The tie of a kinship term at word ``i``, else ``None``.

    ``("of", name, k)`` for "son of (the) Zeus", ``("", name, k)`` for "brother Micke" or "a
    sister named Micke"; ``name`` the run of capitalised words ("George IV"), ``k`` the index
    of its last word.
    """
    j = i + 1
    if j < len(words) and words[j].group(0) in _NAMED and _joined(text, words[i], words[j]):
        j += 1
    if j >= len(words) or not _joined(text, words[j - 1], words[j]):
        return None
    how = ""
    if words[j].group(0) == "of":
        how, j = "of", j + 1
        if j < len(words) and words[j].group(0) == "the" and _joined(text, words[j - 1],
                                                                      words[j]):
            j += 1
        if j >= len(words) or not _joined(text, words[j - 1], words[j]):
            return None
    if not words[j].group(0)[0].isupper():
        return None
    k = j
    while k + 1 < len(words) and words[k + 1].group(0)[0].isupper() and \
            text[words[k].end(): words[k + 1].start()] == " ":
        k += 1
    return how, text[words[j].start(): words[k].end()], k


def _kinship(claim: str, evidence: Sequence[str]) -> Iterator[Substitution]:
    cw = _words(claim)
    tokens: list[tuple[str, list[re.Match[str]]]] | None = None  # read at the first term
    for i, w in enumerate(cw):
        term = w.group(0).lower()
        if term not in KINSHIP or w.group(0)[0].isupper() and i > 0:
            continue
        tie = _tie_after(claim, cw, i)
        if tie is None:
            continue
        how, name, k = tie
        if tokens is None:
            tokens = [(text, _words(text)) for text in evidence]
        # the evidence's kinship terms tied the same way to the same name
        other = _swapped((_kin_agree(term, x.group(0).lower()), x.group(0))
                         for text, ew in tokens for n, x in enumerate(ew)
                         if x.group(0).lower() in KINSHIP
                         and (_tie_after(text, ew, n) or ())[:2] == (how, name))
        if other is not None:
            yield Substitution("kinship", w.group(0), other,
                               claim[cw[i + 1].start(): cw[k].end()] if how else name)


#: What follows a direction it is tied to: "of" and a name ("southeast of Copenhagen"), or,
#: after an adjective, the name ("southern France").
_DIRECTION_TIE = re.compile(r" (of )?((?:the )?[^\W\d_][\w'’-]*)")


def _direction_tie(text: str, m: re.Match[str]) -> tuple[str, str] | None:
    """``("of", name)`` for "southeast of Copenhagen", ``("", name)`` for "southern France"."""
    t = _DIRECTION_TIE.match(text, m.end())
    if t is None or m.group("suffix") == "erly" or bool(t.group(1)) == bool(m.group("suffix")) \
            or not t.group(2).removeprefix("the ")[0].isupper():
        return None
    return ("of" if t.group(1) else ""), t.group(2)


def _directions(claim: str, evidence: Sequence[str]) -> Iterator[Substitution]:
    theirs: list[tuple[re.Match[str], tuple[str, str] | None]] | None = None
    for m in _DIRECTION.finditer(claim):
        tie = _direction_tie(claim, m)
        if tie is None:
            continue
        if theirs is None:  # the evidence's directions, read at the claim's first
            theirs = [(x, _direction_tie(text, x)) for text in evidence
                      for x in _DIRECTION.finditer(text)]
        mine = _compass(m.group("dir"))
        other = _swapped((bool(_compass(x.group("dir")) & mine), x.group(0))
                         for x, t in theirs if t == tie)
        if other is not None:
            how, name = tie
            yield Substitution("direction", m.group(0), other, f"{how} {name}".strip())


_NATIONALITY_NAMES = "|".join(sorted(map(re.escape, NATIONALITIES), key=len, reverse=True))
#: A nationality named in a text, "British" of "British-born" too.
_NATIONALITY_WORD = re.compile(rf"(?<![\w-])({_NATIONALITY_NAMES})\b")
#: A nationality as a word of its own ("Italian", not "Italian-" of "Italian-American") and
#: the lower-case words after it: "Italian professional footballer".
_NATIONALITY = re.compile(rf"(?<![\w-])({_NATIONALITY_NAMES})(?!-)(?P<rest>(?: [a-z][\w-]*)*)")


def _nationality_tie(rest: str) -> str | None:
    """The words a nationality is tied to: up to two words after it, up to a function word."""
    words = []
    for w in rest.split()[:2]:
        if w in STOP_WORDS:
            break
        words.append(w)
    return " ".join(words) or None


def _ties(rest: str, words: str) -> bool:
    """Whether the words after a nationality (``rest``) start with the whole ``words``.

    Up to the end of a word: "actor" ties "actor-director", not "actors".
    """
    after = rest[len(words) + 1:2 + len(words)]
    return rest.startswith(f" {words}") and not (after.isalnum() or after == "_")


def _nationalities(claim: str, evidence: Sequence[str]) -> Iterator[Substitution]:
    theirs: list[tuple[str, list[re.Match[str]], set[str]]] | None = None
    for m in _NATIONALITY.finditer(claim):
        mine, tie = m.group(1), _nationality_tie(m.group("rest"))
        if tie is None:
            continue
        if theirs is None:  # each text's nationalities, with the words after them, and the
            # nationalities it names; read at the claim's first
            theirs = [(text, list(_NATIONALITY.finditer(text)),
                       {x.group(1) for x in _NATIONALITY_WORD.finditer(text)})
                      for text in evidence]
        # the whole tie, else its first word ("American actor known for" has "actor")
        for words in dict.fromkeys((tie, tie.split()[0])):
            hits = [x for _, found, _ in theirs for x in found if _ties(x.group("rest"), words)]
            if hits:
                break
        # a text that names the claim's nationality and ties no other one to the words
        # ("a 2017 British black comedy film" beside another passage's "Canadian film")
        conflicting = {x.string for x in hits}
        if any(text not in conflicting and mine in named for text, _, named in theirs):
            continue
        # "a British-born American actor", "an Italian-American actor": both
        other = _swapped((_nationality_agree(mine, x.group(1)) or any(
            b.group(0) in NATIONALITIES and _nationality_agree(mine, b.group(0))
            for b in _words(x.string[max(0, x.start() - 40): x.start()])[-3:]), x.group(1))
            for x in hits)
        if other is not None:
            yield Substitution("nationality", mine, other, tie)


#: What a thing is said to be, in classes that exclude each other: a film is no television
#: series, a song no album, a city no county. Words of one class agree ("movie" and "film").
_CATEGORY_CLASSES: dict[str, tuple[str, ...]] = {
    "film": ("film", "movie", "motion picture", "documentary"),
    "television series": ("television series", "TV series", "series", "sitcom", "miniseries",
                          "television show", "TV show", "soap opera", "television program",
                          "television programme"),
    "song": ("song", "single"),
    "album": ("album", "studio album", "compilation album", "live album"),
    "extended play": ("EP", "extended play"),
    "band": ("band", "rock band", "duo", "trio"),
    "book": ("novel", "book", "novella"),
    "video game": ("video game",),
    "settlement": ("city", "town", "village", "municipality", "commune", "suburb"),
    "county": ("county",),
    "country": ("country", "nation", "sovereign state"),
    "island": ("island",),
    "river": ("river",),
    "lake": ("lake",),
    "mountain": ("mountain",),
}
CATEGORIES: dict[str, str] = {w: c for c, ws in _CATEGORY_CLASSES.items() for w in ws}
#: Nouns after which a category word is no head noun: "a country music artist", "a film
#: director", "a book series".
_NOT_HEAD = frozenset({
    "music", "director", "directors", "writer", "writers", "producer", "producers", "artist",
    "artists", "singer", "member", "members", "star", "stars", "player", "players",
    "musician", "manager", "council", "club", "hall", "series", "character", "characters",
    "franchise", "adaptation", "score", "soundtrack", "label", "studio", "industry", "company",
    "critic", "festival", "award", "awards", "genre", "version", "role", "state", "house"})
#: "X is a 2013 British drama film": the copula, an article and up to six words before a
#: category word, none of them a word that ends the noun phrase ("a song by", "a town in").
_CATEGORY = re.compile(
    r"\b(?:is|was|are|were)\s+(?:an?|the|one)\s+((?:[\w'’.-]+\s+){0,6}?)("
    + "|".join(sorted(map(re.escape, CATEGORIES), key=len, reverse=True))
    + r")\b(?![-’'])(?!\s+(?:of|" + "|".join(sorted(_NOT_HEAD)) + r")\b)")
_PHRASE_END = re.compile(r"\b(?:of|in|by|for|from|with|that|which|who|and|or|on|at|about|"
                         r"to|as|like)\b|[,;:()\[\]]")
#: Where a sentence starts: the subject of a category is read from there.
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)(?=[A-Z\"“'‘(])")


def _categories(text: str) -> list[tuple[frozenset[str], str, str, str]]:
    """Each "SUBJECT is a ... CATEGORY" of ``text``.

    As (the subject's capitalised words, the category's class, the category word, the
    subject).
    """
    out = []
    starts: list[int] | None = None  # where the text's sentences start, read at need
    for m in _CATEGORY.finditer(text):
        if _PHRASE_END.search(m.group(1)):
            continue
        if starts is None:
            starts = [s.end() for s in _SENTENCE_START.finditer(text)]
        before = bisect.bisect_right(starts, m.start())
        subject = text[starts[before - 1] if before else 0: m.start()].strip()
        names = frozenset(w for w in re.findall(r"[^\W\d_][\w'’-]+", subject) if w[0].isupper())
        if names:
            out.append((names, CATEGORIES[m.group(2)], m.group(2), subject))
    return out


def _category(claim: str, evidence: Sequence[str]) -> Iterator[Substitution]:
    mine = _categories(claim)
    theirs = [c for text in evidence for c in _categories(text)] if mine else []
    for names, kind, word, subject in mine:
        other = _swapped((k == kind, w) for n, k, w, _ in theirs if n & names)
        if other is not None:
            yield Substitution("category", word, other, subject)


def term_substitutions(claim: str, evidence: Sequence[str]) -> list[Substitution]:
    """The claim's kinship, direction, nationality and category terms the evidence swaps.

    Each term of the claim tied to something (a name, "of" a place, the words after a
    nationality, the subject that "is a" film or a city) that some evidence text ties to
    another term of its class, and none to one that agrees.

    Example:
        >>> ev = ["His brother Micke is a retired tennis player."]
        >>> [s.evidence_term for s in term_substitutions("He has a sister named Micke.", ev)]
        ['brother']
        >>> term_substitutions("He has a brother named Micke.", ev)
        []
        >>> ev = ["Aarhus lies 187 km northwest of Copenhagen."]
        >>> term_substitutions("Aarhus is 187 km southeast of Copenhagen.", ev)[0].tie
        'of Copenhagen'
        >>> term_substitutions("Aarhus is west of Copenhagen.", ev)
        []
        >>> ev = ["Pirlo is an Italian professional footballer of an American club."]
        >>> s = term_substitutions("Pirlo is an American professional footballer.", ev)
        >>> s[0].evidence_term
        'Italian'
    """
    return [*_kinship(claim, evidence), *_directions(claim, evidence),
            *_nationalities(claim, evidence), *_category(claim, evidence)]
