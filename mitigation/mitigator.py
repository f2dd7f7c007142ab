"""Rule-based mitigation of a draft from its claim verdicts.

Supported claims get a citation, contradicted ones are corrected from the evidence or flagged,
unverifiable ones are hedged or dropped by strictness, and a reference list closes the answer.
Text outside the claims that change is kept byte for byte.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from mitigation.checks import (
    DEFAULT_CHECKS,
    MISSING_NUMBER,
    SUBSTITUTIONS,
    Check,
    Finding,
    Severity,
    run_checks,
)
from mitigation.values import (
    _FUNCTION_WORDS,
    SENTENCE_WORDS,
    find_name_starts,
    find_numbers,
)
from verifier.checking import is_int
from verifier.registry import register
from verifier.text import (
    CITATION_MARK,
    CJK,
    FOOTNOTE_REF,
    HEADING,
    LABELLED_VALUE,
    LINE_LABEL,
    LIST_ITEM,
    abbreviation_stop,
    fold,
    indefinite_article,
    phrase_pattern,
    strip_span,
    trimmed_sentence_spans,
)
from verifier.types import ClaimVerdict, Evidence, Status, check_sequence_of

Strictness = Literal["lenient", "balanced", "strict"]
Action = Literal["cited", "kept", "corrected", "warned", "hedged", "removed"]
SCHEMA_VERSION = "1"

_CITE = re.compile(rf"\s*{CITATION_MARK}")
#: The conjunctions that open a clause of its own.
_CONJUNCTIONS = r"(?:and|but|or|so|yet|while|whereas)\b"
#: The subordinators of a clause that states a fact: without that clause, they go too ("The
#: tower is tall because." is no sentence). Not "if" or "unless": their clause is no claim.
_SUBORDINATORS = (r"(?:(?:even\s+)?though|although|because|since|when|whenever|after|"
                  r"before|once)\b")
#: What joins a clause to the one before or after it: a comma, a conjunction ("&" too) or a
#: subordinator, a semicolon, a colon or a dash ("—", "–", or a hyphen with a space before it).
_CONNECT_BEFORE = re.compile(
    rf"(?:\s*,)?\s*(?:\b{_CONJUNCTIONS}|\b{_SUBORDINATORS}|[&;:—–]|(?<=\s)-)?\s*$", re.I)
_CONNECT_AFTER = re.compile(
    rf"^\s*(?:,\s*)?(?:{_CONJUNCTIONS}|{_SUBORDINATORS}|[&;:—–]|-(?=\s))?\s*", re.I)
#: What opens a list item or a labelled line before its statement: a marker, a label, or
#: both ("- ", "2. ", "- **Size:** ", "Size: "). It is no part of a claim: a hedge or a
#: warning keeps it, the removal of the item's only statement takes it.
_ITEM_START = re.compile(rf"{LIST_ITEM.pattern}(?:{LINE_LABEL.pattern})?|\s*{LINE_LABEL.pattern}")
#: A sentence's lead-in that names its source ("According to the report, "): it stays for
#: the clauses after a removed one.
_ATTRIBUTION = re.compile(r"\s*(?:according to|as reported (?:by|in)|as stated (?:by|in))\b"
                          r"[^,.;:]*,\s*", re.I)
#: A sentence's lead-in that is only a subordinator ("Although ", "When ").
_LEAD_SUBORDINATOR = re.compile(rf"\s*{_SUBORDINATORS}\s*", re.I)
#: A word of a claim or an evidence text, as the correction aligns them: with its currency
#: sign ("$5", "€6"); an en dash joins a range ("1990–1995"), a slash a date ("05/03/1950",
#: which was mended to "3 May/1950").
_WORD = re.compile(r"[\w'’.,$€£¥₹%–/-]+")
#: Markdown punctuation that would format text taken from the draft or the evidence.
_MD_SPECIAL = re.compile(r"[\\`*_\[\]|~]")
#: A Markdown heading line ("## Paris").
_HEADING_LINE = re.compile(rf"^{HEADING}$", re.M)
#: The draft's own ``[n]`` markers right after a claim (they go with the claim's edit).
_MARKERS = re.compile(rf"(?:[ \t]*{CITATION_MARK})+")
#: The draft's own ``[n]`` markers right before a claim, at the start of its sentence.
_LEAD_MARKERS = re.compile(rf"(?:{CITATION_MARK}[ \t]*)+\Z")
#: A fenced code block (CommonMark): a line of three or more backticks or tildes, to a line
#: of at least as many of the same (or the end of the text).
_FENCED_BLOCK = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[^\n]*\n(?:.*?\n)??[ \t]{0,3}\1[`~]*[ \t]*$"
                           r"|^[ \t]{0,3}(`{3,}|~{3,})[^\n]*\n.*\Z", re.M | re.S)
#: A draft's own list of sources at its end, after its last claim: lines that open with a
#: citation number ("[1] https://...", "[2] (b.md) ..."), with the heading before them if
#: any ("References:", "**Sources**"). The answer lists its own sources under its numbers.
_REFERENCE_BLOCK = re.compile(
    r"(?:\n[ \t]*(?:#+[ \t]*)?(?:\*\*)?(?:References|Sources|Citations|Bibliography)"
    r"(?:\*\*)?:?(?:\*\*)?[ \t]*(?=\n))?(?:\n[ \t]*\[\d+\][^\n]*)+\s*\Z", re.IGNORECASE)
#: Sentence-initial words that a hedge lowercases ("However," -> "however,"). Any other
#: capitalised first word ("I", "U.S.", "Apple's", "Einstein,", "About a Boy") may be a name
#: and stays. The words shared with the checks' name rule come from ``SENTENCE_WORDS``.
_LOWER_FIRST = (SENTENCE_WORDS - {"I"}) | {
    "According", "Although", "Because", "Many", "Most", "Several", "Both", "All", "No", "Not",
    "Yes", "Our", "My", "Your", "Thus", "Therefore", "Moreover", "Furthermore", "Today",
    "Among", "Such", "Other", "Another", "Overall", "Once", "Though", "Instead", "Meanwhile",
    "Later", "Finally", "So", "Yet"}


@dataclass(frozen=True)
class Edit:
    """What mitigation did with one claim.

    Attributes:
        claim: The claim text.
        status: Its verdict.
        action: ``cited``, ``kept``, ``corrected``, ``warned``, ``hedged`` or ``removed``.
        reason: Why.
        span: The claim's span in the draft.
        replacement: The text that replaced it (``None`` when kept or removed).
        findings: Deterministic-check findings on the claim.
        evidence: The claim's evidence (at most three; a correction's source first).
        body_span: Where the claim's final text (its replacement, its kept words or its
            hedge or warning) lies in the answer's body; ``None`` when removed.
    """

    claim: str
    status: Status
    action: Action
    reason: str
    span: tuple[int, int]
    replacement: str | None = None
    findings: tuple[Finding, ...] = ()
    evidence: tuple[Evidence, ...] = ()
    body_span: tuple[int, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict."""
        return {"claim": self.claim, "status": self.status.value, "action": self.action,
                "reason": self.reason, "span": list(self.span), "replacement": self.replacement,
                "findings": [f.to_dict() for f in self.findings],
                "evidence": [e.to_dict() for e in self.evidence],
                "body_span": list(self.body_span) if self.body_span is not None else None}


@dataclass(frozen=True)
class Reference:
    """One numbered source of the answer.

    Attributes:
        number: The ``[n]`` the answer cites it by.
        source_id: The source.
        excerpt: The cited evidence in context: about ``excerpt_chars`` of the source around
            each cited sentence, in whole words; when several claims cite sentences of one
            source, their windows in source order, those that overlap or nearly merged and
            the others joined by `` … `` (each cited sentence is quoted once).
        span: The first cited evidence span in the source.
        spans: Every cited evidence span in the source, in citation order.
    """

    number: int
    source_id: str
    excerpt: str
    span: tuple[int, int]
    spans: tuple[tuple[int, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict."""
        return {"number": self.number, "source_id": self.source_id, "excerpt": self.excerpt,
                "span": list(self.span),
                "spans": [list(sp) for sp in (self.spans or (self.span,))]}


@dataclass(frozen=True)
class MitigatedAnswer:
    """The final answer and how it was made.

    Attributes:
        text: Final text with ``[n]`` citations, followed by the reference list.
        body: Final text without the reference list.
        references: Numbered sources (one per ``source_id``).
        edits: One edit per claim, in draft order.
        grounding_score: ``(verified + 0.5 * partially verified - unverified) / claims``,
            clamped to [0, 1], over verifiable claims (1.0 when there are none). Verified:
            ``Supported`` with no HIGH check finding; partially: ``Supported`` with one;
            unverified: ``Contradictory`` or ``Insufficient_Info``, whatever mitigation
            then did with it (a corrected claim was still wrong in the draft).
        hallucination_score: ``(contradicted + 0.5 * unverifiable) / claims`` over verifiable
            claims, clamped to [0, 1].
        strictness: The mode used.
    """

    text: str
    body: str
    references: tuple[Reference, ...]
    edits: tuple[Edit, ...]
    grounding_score: float
    hallucination_score: float
    strictness: Strictness
    draft: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Stable JSON report (``schema_version`` tells its version)."""
        return {"schema_version": SCHEMA_VERSION, "strictness": self.strictness,
                "draft": self.draft, "text": self.text, "body": self.body,
                "grounding_score": self.grounding_score,
                "hallucination_score": self.hallucination_score,
                "references": [r.to_dict() for r in self.references],
                "edits": [e.to_dict() for e in self.edits], **self.extra}

    def to_html(self) -> str:
        """A self-contained HTML page (see :func:`mitigation.report.to_html`)."""
        from mitigation.report import to_html

        return to_html(self)

    def to_markdown(self) -> str:
        """A Markdown report: answer, scores, references, edits."""
        def esc(text: str) -> str:
            # raw HTML, emphasis and links in the draft or evidence must not pass through
            return _MD_SPECIAL.sub(r"\\\g<0>", html.escape(text, quote=False))

        def cell(text: str) -> str:  # one table cell: one line
            return " ".join(esc(text).split())

        def code(text: str) -> str:  # a code span shows its text as is (no escapes inside)
            text = " ".join(text.split())  # on one line: a line break would end the item
            fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
            pad = " " if text.startswith("`") or text.endswith("`") else ""
            return f"{fence}{pad}{text}{pad}{fence}"

        def prose(text: str) -> str:
            # a "* " list item stays one, as a "- " one does (a "*" before a space is no
            # emphasis)
            out = re.sub(r"^([ \t]*)\\\*(?=[ \t])", r"\1*", esc(text), flags=re.M)
            # a table of the answer stays a table: its rows' pipes as written (its cells'
            # other marks escaped); "\| City \|" was text run into one paragraph
            return re.sub(r"^[ \t]*\\\|.*\\\|[ \t]*$",
                          lambda m: m.group(0).replace("\\|", "|"), out, flags=re.M)

        # a fenced code block of the answer is shown as written: escaped, its code changed
        pos, parts = 0, []
        for m in _FENCED_BLOCK.finditer(self.body):
            parts += [prose(self.body[pos:m.start()]), m.group(0)]
            pos = m.end()
        body = "".join([*parts, prose(self.body[pos:])])
        lines = ["## Answer", "", body, ""]
        lines += [f"Grounding score: {self.grounding_score:.2f} · hallucination score: "
                  f"{self.hallucination_score:.2f} · strictness: {self.strictness}", ""]
        if self.references:
            lines += ["## References", ""]
            lines += [f"{r.number}. {code(r.source_id)} {list(r.span)}: “{cell(r.excerpt)}”"
                      for r in self.references]
            lines.append("")
        lines += ["## Claims", "", "| # | claim | status | action | reason |",
                  "|---|---|---|---|---|"]
        for i, e in enumerate(self.edits, start=1):
            lines.append(f"| {i} | {cell(e.claim)} | {e.status.value} | {e.action} | "
                         f"{cell(e.reason)} |")
        return "\n".join(lines) + "\n"


def _opens_sentence(draft: str, at: int) -> bool:
    """Whether ``draft[at:]`` starts a sentence.

    At the start, after a line break or a list item's marker ("- ", "2. "), or after a
    sentence's stop and a space.
    """
    before = draft[:at].rstrip(" \t")
    line = draft.rfind("\n", 0, at) + 1
    return not before or before.endswith("\n") or bool(
        LIST_ITEM.fullmatch(draft, line, at)) or (
        before != draft[:at] and bool(re.search(r"[.!?][\"'”’)\]]*$", before)))


def _body(claim: str) -> str:
    """The claim without citation markers or its final punctuation (``.!:;,``, "。", "।").

    An abbreviation keeps its stop ("the U.S.", "etc.").
    """
    # (and without Markdown footnote references after its stop: "Paris is old.[^1]")
    text = re.sub(rf"(?:{FOOTNOTE_REF})+$", "", _CITE.sub("", claim).strip()).rstrip()
    body = text.rstrip(".!:;,。！：；，।॥۔…")
    if text[len(body):].startswith(".") and _abbreviation_before(body):
        return body + "."
    # a comma inside the closing quote is the sentence's, which goes on: 'called "Heat,"'
    return re.sub(r",([\"”’'])$", r"\1", body)


def _abbreviation_before(text: str) -> bool:
    """Whether a full stop right after ``text`` would be an abbreviation's ("the U.S", "etc").

    :func:`verifier.text.abbreviation_stop`'s rule, whatever follows; one letter ("Plan B")
    is no abbreviation here.
    """
    words = text.split()
    return bool(words) and len(words[-1].lstrip("(\"'“‘")) > 1 and \
        abbreviation_stop(text + ".", "", read_case=False)


def _is_question(claim: str) -> bool:
    """Whether the claim is a question ("Is Paris big?"): it asserts nothing to hedge."""
    text = _CITE.sub("", claim).strip()
    # a question in quotes is one when the quote is the whole claim ("“Is Paris big?”"), not
    # a statement that ends quoting one ('The minister asked "why?"')
    return bool(re.search(r"[?？؟][)\]]*$", text)
                or re.fullmatch(r"[\"“'‘«(\[].*[?？؟][\"”'’»)\]]*", text, re.S))


def _first_letter(text: str, upper: bool) -> str:
    """``text`` with its first letter in upper or lower case, when that is still one letter.

    "ﬁ".upper() is "FI" and "İ".lower() two characters: such a letter stays as it is, so
    that every span after it stays where it is.

    Example:
        >>> _first_letter("paris", True), _first_letter("\ufb01ne", True)
        ('Paris', '\ufb01ne')
    """
    head = text[:1].upper() if upper else text[:1].lower()
    return head + text[1:] if len(head) == 1 else text


def _lower_first(text: str, context: str = "") -> str:
    """``text`` with its first word in lower case when that is an ordinary word.

    "The", not "I", an acronym or a name; or a capitalised word that ``context`` (the draft
    and the claim's evidence) writes in lower case and never capitalised inside a sentence
    (:func:`_ordinary`), unless a capitalised word or "&" follows within three words: the
    start of a longer name ("Pirates of the Caribbean", "Palo Alto", "Johnson & Johnson").
    """
    first, *rest = text.split()[:4] or [""]
    word = re.sub(r"['’](?:s|re|ll|d|ve)$", "", first.rstrip(",;:"))
    if word in _LOWER_FIRST or (_ordinary(word, context) and not any(
            w[:1].isupper() or w == "&" for w in rest)):
        return _first_letter(text, False)
    return text


def _function_words_only(words: Sequence[str]) -> bool:
    """Whether every word is a function word, in any case ("the", "The").

    :data:`_FUNCTION_WORDS` holds them capitalised: a lower-case "the" was never found there.
    """
    return all(w.capitalize() in _FUNCTION_WORDS for w in words)


def _ordinary(word: str, context: str) -> bool:
    """Whether capitalised ``word`` is an ordinary word by ``context``'s spelling of it.

    It is when ``context`` writes it in lower case ("pure water boils") and nowhere
    capitalised after a word or comma inside a sentence ("a meal at Subway" makes "Subway" a
    name, whatever "subway" elsewhere).

    Example:
        >>> _ordinary("Water", "Pure water boils at 100 degrees.")
        True
        >>> _ordinary("Apple", "Apple sells phones; an apple is a fruit; he joined Apple.")
        False
        >>> _ordinary("Paris", "Paris is in France.")
        False
        >>> _ordinary("Nike", "Shop online at nike.com or https://example.org/wiki/nike today.")
        False
    """
    if not (word[:1].isupper() and word[1:].islower() and word.isalpha()) or not context:
        return False
    lower = re.escape(word.lower())
    # not inside a web address or a path ("nike.com", ".../wiki/paris": a name's spelling)
    return bool(re.search(rf"(?<![\w'’./@-]){lower}(?![\w'’/-]|\.\w)", context)) and not re.search(
        rf"(?<=[a-z,;]\s){re.escape(word)}(?![\w'’-])", context)


def _hedge(claim: str, context: str = "") -> str:
    """The hedge sentence of ``claim``; ``context``: see :func:`_lower_first`.

    A value under a label is marked instead: "Height: 300 metres (this could not be
    verified)."
    """
    body = _body(claim)
    if LABELLED_VALUE.fullmatch(body):  # "It is suggested that" cannot open it
        return f"{body} (this could not be verified)."
    return f"It is suggested that {_lower_first(body, context)}, but this could not be verified."


def _context_of(draft: str, verdict: ClaimVerdict) -> str:
    """What tells an ordinary word from a name for a claim: the draft and its evidence."""
    return "\n".join((draft, *(e.content for e in verdict.evidence)))


def _warning(claim: str) -> str:
    return f"Note: a statement that the sources contradict was removed (“{_body(claim)}”)."


def _correct(text: str, evidence: Sequence[str], findings: Sequence[Finding] = ()
             ) -> tuple[str, str, int] | None:
    """:func:`correct_claim`, also telling which evidence text gave the value."""
    # every value the checks found contradicted, each where the claim writes it once: a
    # correction of one that leaves another would assert, with a citation, what is still
    # wrong ("300 metres (984 ft)" against "330 metres (1,083 ft)")
    fixes: dict[tuple[int, int], str] = {}
    reasons: list[str] = []
    source: int | None = None
    whole = True
    for f in findings:
        # a contradicted value, or a kinship, compass or nationality term the evidence swaps
        # ("the nephew of Zeus" -> "the son of Zeus"); a name substitution is mended by the
        # alignment below, which reads the whole name
        if f.type not in ("value_contradiction", "term_substitution") or not f.value:
            continue
        hits = list(phrase_pattern(f.value).finditer(text))
        span = hits[0].span() if len(hits) == 1 else None
        if span is None or not f.evidence_value or (
                span not in fixes and any(a < span[1] and span[0] < b for a, b in fixes)):
            whole = False  # the checks pair a value only when the pairing is unambiguous
            continue
        if span in fixes:
            continue  # the same value found by two checks
        fixes[span] = _fit_value(f.evidence_value, text, span[0])
        reasons.append(f"{f.value!r} corrected to {fixes[span]!r}")
        if source is None:
            right = phrase_pattern(f.evidence_value)
            source = next((k for k, e in enumerate(evidence) if right.search(e)), 0)
    if len(set(fixes.values())) < len(fixes):
        whole = False  # two values of the claim made one: which one it corrects is unknown
    for f in findings:  # a value the evidence lacks that no fix replaces stays wrong
        if (fixes and f.type == "number_not_in_evidence" and f.severity is Severity.HIGH
                and f.value and any(not any(a <= m.start() and m.end() <= b for a, b in fixes)
                                    for m in phrase_pattern(f.value).finditer(text))):
            whole = False  # ("300 m (984 ft)" against "330 m (1,083 ft)": 984 alone fixed)
    if fixes and whole and _about_another(text, evidence[source or 0], findings,
                                           list(fixes.values())):
        whole = False
    if fixes and whole:
        out = text
        for (a, b), value in sorted(fixes.items(), reverse=True):
            out = _article_before(out[:a], value) + value + out[b:]
        return out, ", ".join(reasons) + " from the evidence", source or 0
    ctoks = [(m.group(0), m.span()) for m in _WORD.finditer(text)]
    words = [t.lower().strip(".,") for t, _ in ctoks]
    best: tuple[str, str, int] | None = None
    for k, ev in enumerate(evidence):
        ematches = list(_WORD.finditer(ev))
        etoks = [m.group(0) for m in ematches]
        ewords = [t.lower().strip(".,") for t in etoks]
        sm = difflib.SequenceMatcher(a=words, b=ewords, autojunk=False)
        ops = [op for op in sm.get_opcodes() if op[0] != "equal"]
        blocks = sum(b.size for b in sm.get_matching_blocks())
        if blocks < 0.6 * len(words):
            continue
        # Ignore evidence words before/after the aligned part of the claim.
        inner = [op for op in ops if op[1] < len(words) and op[2] > 0 or op[0] == "replace"]
        inner = [op for op in inner if not (op[0] == "insert" and (op[1] == 0 or
                                                                    op[1] == len(words)))]
        if len(inner) != 1 or inner[0][0] != "replace":
            continue
        _, i1, i2, j1, j2 = inner[0]
        if i2 - i1 > 4 or j2 - j1 > 4:
            continue
        old = [ctoks[i][0] for i in range(i1, i2)]
        start, end = ctoks[i1][1][0], ctoks[i2 - 1][1][1]
        # not a name the evidence gives elsewhere ("Biden was born in 1961" against "Obama
        # was born in 1961 and Biden in 1942" is no "Obama was born in 1961"), nor the name
        # the claim opens with, what it is about ("Curie died in 1955" against "Einstein
        # died in 1955")
        opens = _function_words_only(words[:i1])
        if _is_name(old) and (opens or _named_elsewhere(
                text[start:end], ev, ematches[j1].start(), ematches[j2 - 1].end())):
            continue
        # the evidence's own characters ("AT&T", "Johnson & Johnson"), up to a bracket or a
        # quote: "is Sydney" against "is Canberra (since 1913)" takes "Canberra"
        # (the gap read with a token's character on each side: a colon between digits)
        last = next((j - 1 for j in range(j1 + 1, j2)
                     if _BREAK.search(ev[ematches[j - 1].end() - 1: ematches[j].start() + 1])),
                    j2 - 1)
        new_words = etoks[j1:last + 1]
        if not (_valued(old) and _valued(new_words)):
            continue
        trail = re.search(r"[.,]+$", text[start:end])
        if trail:
            end -= len(trail.group(0))
        raw = ev[ematches[j1].start(): ematches[last].end()]
        value = raw.rstrip(".,")
        if raw[len(value):].startswith(".") and _abbreviation_before(value) \
                and not text[end:].startswith("."):
            value += "."  # an abbreviation's stop ("the U.S. in 1990"), none doubled at the end
        new = _fit_value(value, text, start)
        best = (text[:start] + new + text[end:],
                f"{text[start:end]!r} corrected to {new!r} from the evidence", k)
        break
    return best


#: What ends a replacement taken from the evidence: a bracket, a quote, a line or a clause
#: (a colon between digits is a clock time's: "16:00").
_BREAK = re.compile(r"[()\[\]{}\"“”«»;!?\n]|(?<!\d):|:(?!\d)")


def _about_another(claim: str, evidence: str, findings: Sequence[Finding],
                   fixes: Sequence[str] = ()) -> bool:
    """Whether ``evidence`` may give its value for another thing than ``claim``'s.

    The checks found a name of the claim that the evidence lacks, and the evidence names
    another, sharing no word with the claim, in its place: the claim opens with the name (its
    subject) and the evidence's sentence that gives a value put in (one of ``fixes``) opens
    with another, followed by the same word ("Mount Everest is 8,849 m high" against "K2 is
    8,611 m high"); or the claim's two words before the name (a number standing for any)
    are followed in the evidence by another ("released in 2005 by Warner Bros." against
    "released in 2006 by Universal Pictures": correcting the year would cite what is still
    wrong). A sentence that opens with a pronoun ("It is 330 metres tall") or with the
    claim's name in other words ("Timothy Roth" for "Tim Roth") is about the claim's thing.

    Example:
        >>> f = Finding("entity", "entity_not_in_evidence", Severity.MEDIUM, "", "",
        ...             "Mount Everest")
        >>> _about_another("Mount Everest is 8,849 m high.", "K2 is 8,611 m high.", [f],
        ...                ["8,611"])
        True
        >>> _about_another("Mount Everest is 8,849 m high.", "It is 8,611 m high.", [f],
        ...                ["8,611"])
        False
    """
    missing = [f.value for f in findings
               if f.type in ("entity_not_in_evidence", "entity_substitution") and f.value]
    if not missing:
        return False
    mine = set(_NAME_WORD.findall(fold(" ".join([claim, *fixes]))))

    def another(name: str) -> bool:
        return not set(_NAME_WORD.findall(fold(name))) & mine

    opening = _opening_name(claim)
    if opening is not None and any(m in opening[0] or opening[0] in m for m in missing):
        for a, b in trimmed_sentence_spans(evidence) or [(0, len(evidence))]:
            sentence = evidence[a:b]
            theirs = _opening_name(sentence)
            if theirs is not None and theirs[1] == opening[1] and another(theirs[0]) and any(
                    phrase_pattern(v).search(sentence) for v in fixes):
                return True
    for name in missing:
        at = claim.find(name)
        words = _NAME_WORD.findall(claim[:max(at, 0)])[-2:]
        if len(words) < 2 or _function_words_only(words):
            continue
        context = r"\s+".join(r"\d[\d,.]*" if w.isdigit() else re.escape(w) for w in words)
        pattern = rf"\b{context}\W+(?:the\s+)?{_CAPITALISED_RUN}"
        if any(another(m.group(1)) for m in re.finditer(pattern, evidence, re.I)):
            return True
    return False


#: Capitalised words in a row: a name (its first letter matched case-sensitively).
_CAPITALISED_RUN = r"((?-i:[A-Z])[\w'’-]*(?:\s+(?-i:[A-Z])[\w'’-]*)*)"


def _opening_name(text: str) -> tuple[str, str] | None:
    """The name ``text`` opens with, and the word after it in lower case (``None``: none).

    Only function words may come before the name ("The Amazon").
    """
    for name, start in find_name_starts(text)[:1]:
        if _function_words_only(_NAME_WORD.findall(text[:start])):
            after = _NAME_WORD.findall(text[start + len(name):])
            return name, after[0].lower() if after else ""
    return None


_NAME_WORD = re.compile(r"\w+")


def _named_elsewhere(name: str, evidence: str, start: int, end: int) -> bool:
    """Whether ``evidence`` writes ``name`` (a claim's) outside ``evidence[start:end]``."""
    pattern = phrase_pattern(name.strip(".,"))
    return any(m.end() <= start or m.start() >= end for m in pattern.finditer(evidence))


def _capitalised(words: Sequence[str]) -> bool:
    """Whether ``words`` hold a capitalised word that is no function word ("The")."""
    return any(w[:1].isupper() and w.strip(".,") not in _FUNCTION_WORDS for w in words)


def _numbered(words: Sequence[str]) -> bool:
    """Whether ``words`` hold a digit."""
    return any(ch.isdigit() for w in words for ch in w)


def _valued(words: Sequence[str]) -> bool:
    """Whether ``words`` hold a name or a number, not just a pronoun."""
    return _capitalised(words) or _numbered(words)


def _is_name(words: Sequence[str]) -> bool:
    """Whether ``words`` (a claim's) are a name: capitalised words, no number."""
    return _capitalised(words) and not _numbered(words)


#: An indefinite article at the end of a text.
_ARTICLE = re.compile(r"(?<![\w-])(an?)(\s+)$", re.I)


def _article_before(text: str, word: str) -> str:
    """``text`` (what comes before ``word``) with a final "a" or "an" that fits ``word``.

    Example:
        >>> _article_before("He is an ", "British actor")
        'He is a '
        >>> _article_before("He is a ", "Italian actor")
        'He is an '
        >>> _article_before("She is a ", "Ukrainian singer")
        'She is a '
        >>> _article_before("It is a ", "5-mile walk")
        'It is a '
    """
    m = _ARTICLE.search(text)
    if not m or not word[:1].isalpha():
        return text
    article = indefinite_article(word)
    if m.group(1)[0].isupper():
        article = article.capitalize()
    return text[:m.start()] + article + m.group(2)


def _fit_value(value: str, text: str, start: int) -> str:
    """An evidence value as it goes into ``text`` in place of the words at ``start``.

    Tokenised spacing is closed up ("June 5 , 2003" -> "June 5, 2003"); the case of the
    first letter follows the words replaced: capital for a capital ("Three people" ->
    "Five people"), and a number word or an ordinary word that opened the evidence's
    sentence goes lower case inside the claim's ("In total, 300 people" -> "In total, five
    hundred people"). A name keeps its capital.

    Example:
        >>> _fit_value("Five hundred", "In total, 300 people died.", 10)
        'five hundred'
        >>> _fit_value("five", "Three people died.", 0)
        'Five'
        >>> _fit_value("June 5 , 2003", "It opened on June 1, 2003.", 13)
        'June 5, 2003'
    """
    value = re.sub(r"([(\[])\s+", r"\1", re.sub(r"\s+([,.;:!?%)\]])", r"\1", value))
    before = text[:start].rstrip(" \"'“‘([")
    # the sentence's first word: the claim's, unless a clause of it starts in lower case
    if before.endswith((".", "!", "?")) or (not before and not text[start:start + 1].islower()):
        return _first_letter(value, True)
    numbers = find_numbers(value)
    if value[:1].isalpha() and numbers and numbers[0].span[0] == 0:  # a number word
        return _first_letter(value, False)
    return _lower_first(value)  # an ordinary word, not a name


def correct_claim(text: str, evidence: Sequence[str], findings: Sequence[Finding] = ()
                  ) -> tuple[str, str] | None:
    """Correct a contradicted claim from its evidence, when the evidence gives the right value.

    Tries, in order: a value contradiction found by the deterministic checks (number or date),
    used only when it is unambiguous (the claim holds one value of that kind, written once as
    a whole token); then a single-substitution alignment with an evidence sentence (the claim
    equals the sentence except for one short run of words holding a name or a number).

    Returns:
        ``(corrected text, reason)`` or ``None`` when no safe correction exists.
    """
    fixed = _correct(text, evidence, findings)
    return fixed[:2] if fixed is not None else None


@register("mitigator.rules.v1")
class Mitigator:
    """Rewrite a draft from its claim verdicts.

    Args:
        strictness: ``lenient`` and ``balanced`` correct or flag contradicted claims and hedge
            unverifiable ones; ``strict`` removes both. (Balanced and lenient differ only in
            that lenient keeps supported claims that the deterministic checks flag HIGH or
            as a likely substitution of a name or term
            (:data:`~mitigation.checks.SUBSTITUTIONS`); balanced hedges them, but for a
            number the evidence does not give (:data:`~mitigation.checks.MISSING_NUMBER`),
            and strict removes them all.)
        max_citations: At most this many numbered sources (by ``source_id``).
        excerpt_chars: Length of a reference's excerpt around the evidence span.
        checks: Deterministic checks run on every verifiable claim.

    Example:
        >>> from verifier.types import Claim, Evidence
        >>> v = ClaimVerdict(Claim("Paris is in France.", (0, 19)), Status.SUPPORTED,
        ...                  evidence=(Evidence("Paris is in France.", "wiki"),))
        >>> Mitigator().mitigate("Paris is in France.", [v]).body
        'Paris is in France [1].'
    """

    def __init__(self, strictness: Strictness = "balanced", *, max_citations: int = 20,
                 excerpt_chars: int = 150, checks: Sequence[Check] = DEFAULT_CHECKS) -> None:
        if strictness not in ("lenient", "balanced", "strict"):
            raise ValueError(
                f"strictness must be 'lenient', 'balanced' or 'strict', got {strictness!r}")
        if not is_int(max_citations) or max_citations < 0:
            raise ValueError(f"max_citations must be an int >= 0, got {max_citations!r}")
        if not is_int(excerpt_chars) or excerpt_chars < 20:
            raise ValueError(f"excerpt_chars must be an int >= 20, got {excerpt_chars!r}")
        self.strictness: Strictness = strictness
        self.max_citations = int(max_citations)
        self.excerpt_chars = int(excerpt_chars)
        self.checks = check_sequence_of("checks", checks, Check, "Check objects",
                                        "a Check (a name and a run(claim, evidence) method)")

    def to_dict(self) -> dict[str, Any]:
        """Configuration, rebuilt by :func:`verifier.registry.from_config`.

        Raises:
            ValueError: The checks are not the defaults: they are objects, which the
                configuration cannot hold (a rebuilt mitigator would run other checks).
        """
        if tuple(self.checks) != tuple(DEFAULT_CHECKS):
            raise ValueError("to_dict: this Mitigator's checks are not the default ones, and "
                             "a configuration holds no check objects; build it again with "
                             "Mitigator(..., checks=...)")
        return {"type": "mitigator.rules.v1",
                "init_parameters": {"strictness": self.strictness,
                                    "max_citations": self.max_citations,
                                    "excerpt_chars": self.excerpt_chars}}

    def _excerpt(self, cited: Sequence[Evidence], documents: Mapping[str, str] | None) -> str:
        """The excerpt of one source's reference from the evidence cited from it."""
        doc = documents.get(cited[0].source_id) if documents else None
        windows: list[tuple[int, int]] = []
        loose: list[Evidence] = []  # evidence not found in the document: quoted as it is
        for ev in cited:
            s, e = ev.span
            if doc is not None and ev.span != (0, 0) and doc[s:e] == ev.content:
                windows.append(self._window(doc, s, e))
            elif all(x.content != ev.content for x in loose):
                loose.append(ev)
        if all(ev.span != (0, 0) for ev in loose):  # spans into one source: its order
            loose.sort(key=lambda ev: ev.span)
        parts: list[str] = []
        if doc is not None and windows:
            merged: list[list[int]] = []
            for a, b in sorted(windows):
                # windows that overlap, or nearly (a gap of a few words), read as one
                if merged and a <= merged[-1][1] + self.excerpt_chars // 3:
                    merged[-1][1] = max(merged[-1][1], b)
                else:
                    merged.append([a, b])
            pieces = [" ".join(doc[a:b].split()) for a, b in merged]
            parts.append(("…" if merged[0][0] > 0 else "") + " … ".join(pieces)
                         + ("…" if merged[-1][1] < len(doc) else ""))
        quoted = ""
        for k, ev in enumerate(loose):  # sentences next to each other read as one text
            touching = k > 0 and loose[k - 1].span != (0, 0) and \
                0 <= ev.span[0] - loose[k - 1].span[1] <= 1
            quoted += (" " if touching else " … " if k else "") + self._capped(ev.content)
        return " … ".join(parts + ([quoted] if quoted else []))

    def _window(self, doc: str, s: int, e: int) -> tuple[int, int]:
        """About ``excerpt_chars`` of ``doc`` around ``[s, e)``, cut between words.

        When ``[s, e)`` is longer, its start.
        """
        clipped = e > s + self.excerpt_chars
        e = min(e, s + self.excerpt_chars)
        pad = max(0, (self.excerpt_chars - (e - s)) // 2)
        a, b = max(0, s - pad), min(len(doc), e + pad)
        if a > 0 and not doc[a - 1].isspace():  # start at the next word
            m = re.search(r"\s", doc[a:s])
            a = a + m.end() if m else s
        if b < len(doc) and not doc[b].isspace():  # end after the last whole word
            # of the padding, or of the span itself where the cap cuts into it
            m = re.search(r"\s\S*$", doc[s:b] if clipped else doc[e:b])
            b = (s if clipped else e) + m.start() if m else e
        return a, b

    def _own_source_values(self, claim: str, evidence: Sequence[Evidence],
                           findings: tuple) -> tuple:
        """``findings``, with a value the best evidence's own source contradicts kept so.

        The checks read every evidence text together, and another source's value of the
        quantity in another unit made a claim's wrong value one the evidence may give
        otherwise: "Mount Everest is 8,848 metres high." against "... 8,849 metres high."
        and, from a note about the Amazon, "It is about 6,400 km long." was cited as
        supported. When the best evidence's source alone contradicts a value, its findings
        stand for that value.
        """
        source = evidence[0].source_id
        own = [e.content for e in evidence if e.source_id == source]
        if len(own) == len(evidence):
            return findings
        mine = tuple(run_checks(claim, own, self.checks))
        said = {f.value for f in mine if f.type == "value_contradiction"} - {
            f.value for f in findings if f.type == "value_contradiction"} - {None}
        if not said:
            return findings
        return tuple(f for f in findings if f.value not in said) + tuple(
            f for f in mine if f.value in said)

    def _capped(self, text: str) -> str:
        text = " ".join(text.split())
        if len(text) > self.excerpt_chars:
            text = text[: self.excerpt_chars].rsplit(" ", 1)[0] + "…"
        return text

    # ------------------------------------------------------------------ decisions
    def _decide(self, v: ClaimVerdict, original: str
                ) -> tuple[Action, str, str | None, tuple, int]:
        """``(action, reason, replacement, findings, index of the evidence to cite)``."""
        claim = v.claim
        ev_texts = [e.content for e in v.evidence]
        findings = tuple(run_checks(claim.text, ev_texts, self.checks)) if claim.verifiable \
            else ()
        if claim.verifiable and v.evidence:
            findings = self._own_source_values(claim.text, v.evidence, findings)
        if not claim.verifiable:
            return "kept", f"not verifiable ({claim.type.value}); left as written", None, (), 0
        if v.status == Status.SUPPORTED:
            # a HIGH finding, or a likely name substitution ("directed by Phillip D'Antoni"
            # where the evidence has "directed by Peter Yates"): MEDIUM, as a name may be
            # missing for other reasons, but one the evidence names another in its place.
            # A number the evidence does not give overrules only in strict mode: the
            # meta-classifier has weighed it (``checks.high``), and a count or a span is
            # often the evidence's list counted or its dates reckoned ("directed by two
            # men", "a governor for four years")
            flagged = [f for f in findings if f.severity == Severity.HIGH
                       or f.type in SUBSTITUTIONS]
            if flagged and self.strictness == "strict":
                return ("removed", "supported overall, but " + flagged[0].message, None,
                        findings, 0)
            flagged = [f for f in flagged if f.type != MISSING_NUMBER]
            if flagged and self.strictness == "balanced":
                return self._hedged(claim.text, "supported overall, but " + flagged[0].message,
                                    findings)
            return "cited", "supported by the evidence", None, findings, 0
        if v.status == Status.CONTRADICTORY:
            if self.strictness == "strict":
                return "removed", "contradicted by the evidence (strict mode)", None, findings, 0
            # Correct the draft's own words first, so the rest of the sentence stays as written
            # (without its own [n] markers, which are no words to align and give way anyway).
            fixed = _correct(_CITE.sub("", original), ev_texts, findings) or _correct(
                claim.text, ev_texts, findings)
            if fixed is not None:
                return "corrected", fixed[1], fixed[0], findings, fixed[2]
            return ("warned", "contradicted by the evidence; no safe correction", None, findings,
                    0)
        if self.strictness == "strict":
            return "removed", "could not be verified (strict mode)", None, findings, 0
        return self._hedged(claim.text, "could not be verified from the evidence", findings)

    @staticmethod
    def _hedged(text: str, reason: str, findings: tuple
                ) -> tuple[Action, str, str | None, tuple, int]:
        """Hedge the claim; a question, which asserts nothing, stays as written."""
        if _is_question(text):
            return "kept", reason + "; a question, left as written", None, findings, 0
        return "hedged", reason, None, findings, 0

    # ------------------------------------------------------------------ rewriting
    def mitigate(self, draft: str, verdicts: Sequence[ClaimVerdict], *,
                 documents: Mapping[str, str] | None = None) -> MitigatedAnswer:
        """Rewrite ``draft`` from ``verdicts`` (claim spans must index ``draft``).

        Args:
            draft: The draft answer.
            verdicts: One verdict per claim; claim spans must not overlap. Whitespace at
                either end of a span is ignored.
            documents: Full source texts by ``source_id``, for reference excerpts around the
                evidence span (else the evidence text itself is the excerpt).
        """
        if not isinstance(draft, str):
            raise TypeError(f"draft must be a str, got {type(draft).__name__}")
        verdicts = check_sequence_of("verdicts", verdicts, ClaimVerdict)
        if documents is not None:
            if not isinstance(documents, Mapping):
                raise TypeError(f"documents must be a mapping of source_id to text (or None), "
                                f"got {type(documents).__name__}")
            for key, doc in documents.items():
                if not isinstance(doc, str):
                    raise TypeError(f"documents[{key!r}] must be a str, got "
                                    f"{type(doc).__name__}")
        stripped = []
        for i, v in enumerate(verdicts):
            if v.claim.span[1] > len(draft) or v.claim.span == (0, 0):
                raise ValueError(f"verdicts[{i}].claim.span {v.claim.span} does not index the "
                                 f"draft of length {len(draft)}")
            span = strip_span(draft, *v.claim.span)
            if span[0] >= span[1]:
                raise ValueError(f"verdicts[{i}].claim.span {v.claim.span} of claim "
                                 f"{v.claim.text!r} holds only whitespace of the draft")
            stripped.append(v if span == v.claim.span else
                            replace(v, claim=replace(v.claim, span=span)))
        verdicts = stripped
        order = sorted(range(len(verdicts)), key=lambda i: verdicts[i].claim.span)
        for a, b in zip(order, order[1:], strict=False):
            if verdicts[a].claim.span[1] > verdicts[b].claim.span[0]:
                raise ValueError(f"verdicts[{a}] and verdicts[{b}] have overlapping claim spans "
                                 f"{verdicts[a].claim.span} and {verdicts[b].claim.span}")
        numbers: dict[str, int] = {}
        refs: list[Reference] = []
        cited: dict[str, list[Evidence]] = {}  # the evidence cited from each source

        def cite(v: ClaimVerdict, k: int = 0) -> int | None:
            if not v.evidence:
                return None
            ev = v.evidence[k]
            if ev.source_id not in numbers:
                if len(numbers) >= self.max_citations:
                    return None
                numbers[ev.source_id] = len(numbers) + 1
                cited[ev.source_id] = [ev]
                refs.append(Reference(numbers[ev.source_id], ev.source_id,
                                      self._excerpt([ev], documents), ev.span, (ev.span,)))
                return numbers[ev.source_id]
            n = numbers[ev.source_id]
            ref = refs[n - 1]
            if any(c.span == ev.span and c.content == ev.content for c in cited[ev.source_id]):
                return n  # cited already
            # another sentence of the same source: its span is listed, and it is quoted
            # unless the excerpt quotes it already
            cited[ev.source_id].append(ev)
            excerpt = ref.excerpt
            if " ".join(ev.content.split()) not in excerpt:
                excerpt = self._excerpt(cited[ev.source_id], documents)
            refs[n - 1] = replace(ref, excerpt=excerpt, spans=(*ref.spans, ev.span))
            return n

        decisions = {i: self._decide(verdicts[i], draft[slice(*verdicts[i].claim.span)])
                     for i in order}
        actions = {i: d[0] for i, d in decisions.items()}  # each claim's action
        # What each edit rewrites: the claim, with the draft's own [n] markers right after it
        # (they give way to the answer's numbers, whatever is done with the claim: kept, a
        # claim's "[2]" would point at the answer's second source).
        spans: dict[int, tuple[int, int]] = {}
        prev_end = 0
        for k, i in enumerate(order):
            a, b = verdicts[i].claim.span
            limit = verdicts[order[k + 1]].claim.span[0] if k + 1 < len(order) else len(draft)
            m = _MARKERS.match(draft, b, limit)
            # and those that open its sentence ("[2] Paris is ...": the answer read "[2] Paris
            # is the capital of France [1].", citing a source it does not list)
            lead = _LEAD_MARKERS.search(draft, prev_end, a)
            if lead and _opens_sentence(draft, lead.start()):
                a = lead.start()
            spans[i] = (a, m.end() if m else b)
            prev_end = spans[i][1]
        edits: dict[int, Edit] = {}
        located: dict[int, tuple[int, int]] = {}  # where each edit's text lies in the body
        out: list[str] = []
        pos = 0
        claim_spans = [spans[i] for i in order]
        sentences = _merge_sentences(_split_at_claim_ends(draft, _with_list_markers(
            draft, trimmed_sentence_spans(draft) or [(0, len(draft))]), claim_spans),
            claim_spans)
        held: str | None = None  # the whitespace before a sentence removed whole
        removed: list[tuple[int, int]] = []  # the draft's sentences removed whole

        def gap(text: str, *, last: bool = False) -> str:
            # of the whitespace before and after a removed sentence, one run stays: the one
            # with more line breaks (a paragraph break outlives the sentence), none at the
            # start or the end of the draft
            nonlocal held
            if held is None:
                return text
            after = text[: len(text) - len(text.lstrip())]
            rest = text[len(after):]
            # (between two sentences too: a paragraph break before a sentence removed
            # whole was lost, and the next paragraph joined the one before it, or a heading)
            sep = after if (last and not rest) or held.count("\n") <= after.count("\n") \
                else held
            if not "".join(out).strip():
                sep = ""
            held = None
            return sep + rest

        for s_start, s_end in sentences:
            inside = [i for i in order if s_start <= spans[i][0] < s_end]
            if not inside:
                continue
            out.append(gap(draft[pos:s_start]))
            new_sentence, appended, where, hedges = self._rewrite_sentence(
                draft, s_start, s_end, inside, verdicts, spans, decisions, cite, edits)
            at = sum(len(x) for x in out)
            starts: list[int] = []  # where each appended text starts in the body
            if new_sentence.strip():
                out.append(new_sentence)
                located.update({i: (at + s, at + e) for i, (s, e) in where.items()})
                at += len(new_sentence)
                for extra in appended:
                    starts.append(at + 1)
                    out.append(" " + extra)
                    at += 1 + len(extra)
            elif appended:
                for extra in appended:
                    starts.append(at + (1 if starts else 0))
                    at = starts[-1] + len(extra)
                out.append(" ".join(appended))
            elif (marker := LIST_ITEM.match(draft, s_start, s_end)) and _item_goes_on(
                    draft, s_end, spans, actions):
                # the first sentence of a list item goes, the item's next ones stay: so does
                # its marker ("- Oslo is cold. It has a port." -> "- It has a port [1].")
                out.append(draft[s_start:marker.end()].rstrip())
            else:  # removed whole: the whitespace before it waits for the next gap
                removed.append((s_start, s_end))
                written = "".join(out)
                out[:] = [written.rstrip()]
                held = written[len(out[0]):]
            located.update({i: (starts[j], starts[j] + len(appended[j]))
                            for i, j in hedges.items()})
            pos = s_end
        tail = draft[pos:]
        if refs:  # the draft's own list of sources: its numbers are not the answer's
            tail, dropped = _REFERENCE_BLOCK.subn("", tail)
            tail = tail.rstrip() if dropped else tail
        out.append(gap(tail, last=True))
        body, located = _renumber(draft, "".join(out), located, removed)
        if verdicts and not _HEADING_LINE.sub("", body).strip():
            # nothing left but headings ("# Cities\n\n## Paris") is nothing left
            body = "No statement of the draft could be verified."
            located = {}
        text = body
        if refs:
            text = body.rstrip() + "\n\nReferences:\n" + "\n".join(
                f"[{r.number}] {r.source_id}: “{r.excerpt}”" for r in refs)
        ordered = tuple(replace(edits[i], body_span=located.get(i)) for i in order)
        g, h = _scores(ordered)
        return MitigatedAnswer(text, body, tuple(refs), ordered, g, h, self.strictness, draft)

    def _rewrite_sentence(self, draft: str, s_start: int, s_end: int, inside: list[int],
                          verdicts: Sequence[ClaimVerdict], spans: dict[int, tuple[int, int]],
                          decisions: dict, cite: Any, edits: dict[int, Edit]
                          ) -> tuple[str, list[str], dict[int, tuple[int, int]], dict[int, int]]:
        """Rewrite one sentence (or sentences merged by a claim across them).

        Returns:
            The new sentence, the texts to append after it, where each claim's final text
            lies in the new sentence, and which appended text each hedged or warned claim got.
        """
        sentence = draft[s_start:s_end]
        appended: list[str] = []
        pieces: list[tuple[int, int, str]] = []  # (start, end, replacement) relative
        hedges: dict[int, int] = {}
        # the claim is the sentence (its list marker aside): it is replaced or removed whole
        lead = _lead(sentence, spans[inside[0]], s_start) if len(inside) == 1 else None
        if lead is None and len(inside) == 1:
            lead = _dangling(sentence, spans[inside[0]], s_start)
        whole = lead is not None
        for i in inside:
            v = verdicts[i]
            action, reason, replacement, findings, source = decisions[i]
            a, b = spans[i][0] - s_start, spans[i][1] - s_start
            original = sentence[a:b]
            new: str | None = None
            if action in ("cited", "corrected"):
                # the draft's own [n] markers give way to this answer's numbering
                # (a marker that opened the sentence leaves no space: "[2] Paris ...")
                base = _CITE.sub("", replacement if action == "corrected" else original).lstrip()
                if action == "corrected" and original[:1].islower():
                    # the claim's own sentence in place of a clause: "and the museum was
                    # designed by ...", not "and The museum ..."
                    base = _lower_first(base, _context_of(draft, v))
                if action == "corrected" and base.endswith(".") and not _CLAIM_END.search(
                        _CITE.sub("", original).rstrip()) and not _abbreviation_before(
                        base[:-1]):
                    base = base[:-1]  # nor its full stop inside the sentence ("...[1]., and")
                n = cite(v, source)
                if n is None and action == "cited":
                    action, reason = "kept", reason + "; no citation (cap reached or no source)"
                new = _insert_citation(base, n) if n is not None else base
                pieces.append((a, b, new))
            elif action == "kept":
                # unchanged but for the draft's own markers; a piece to follow where it goes
                pieces.append((a, b, _CITE.sub("", original).lstrip()
                               if _CITE.search(original) else original))
            else:
                said = (_warning(v.claim.text) if action == "warned" else
                        _hedge(v.claim.text, _context_of(draft, v)) if action == "hedged"
                        else "")
                if lead is not None:  # whole: a hedge or warning keeps the list marker; a
                    # removal drops it
                    new = said
                    pieces.append((lead if new else 0, len(sentence), new))
                else:
                    pieces.append((a, b, ""))
                    if said:
                        new = said
                        hedges[i] = len(appended)
                        appended.append(new)
            # a correction's source first, then the rest in order
            evidence = (v.evidence[source], *v.evidence[:source],
                        *v.evidence[source + 1:])[:3] if v.evidence else ()
            edits[i] = Edit(v.claim.text, v.status, action, reason, v.claim.span,
                            new if action != "removed" else None, findings, evidence)
        if len(pieces) > 1 and not pieces[0][2] and not whole:
            # the sentence's first clause goes: the next claim may need its subject back
            # ("... was born in 1879 and died in 1955." -> "Einstein died in 1955.")
            # ("..., but they prevent measles." -> "Vaccines prevent measles.")
            (a0, b0, _), (a1, b1, new1) = pieces[:2]
            i1 = inside[1]
            claim1, own1 = verdicts[i1].claim.text, sentence[a1:b1]
            subject = _subject(claim1, own1)
            pronoun, antecedent = (0, "") if subject else _antecedent(claim1, own1)
            if (subject or antecedent) and new1[:1].islower() \
                    and edits[i1].action in ("cited", "corrected", "kept") \
                    and not re.search(r"[(\[]\s*$", sentence[:a0]) \
                    and _CONNECT_AFTER.fullmatch(sentence[b0:a1]):
                # (a lead-in before the first clause goes with it); its edit's text is set
                # below
                pieces[1] = (a1, b1, subject + new1 if subject else antecedent + new1[pronoun:])
        marker = _ITEM_START.match(sentence, 0, pieces[0][0])  # no claim is a label
        lead_in = _LEAD_SUBORDINATOR.fullmatch(sentence, marker.end() if marker else 0,
                                               pieces[0][0])
        if lead_in and len(pieces) > 1 and pieces[0][2] and not pieces[1][2] and not whole \
                and not sentence[pieces[0][1]:pieces[1][0]].strip(" ,"):
            # the main clause after a leading subordinate one goes, and so does its
            # subordinator: "Although it is small, Monaco has ..." -> "Monaco is small.", not
            # "Although it is small."
            (a0, b0, new0), i0 = pieces[0], inside[0]
            pronoun, antecedent = _antecedent(verdicts[i0].claim.text, sentence[a0:b0])
            pieces[0] = (lead_in.start(), b0, antecedent + new0[pronoun:] if antecedent
                         else _first_letter(new0, True))
        text, where = _apply(sentence, pieces)  # one piece per claim, in ``inside`` order
        for k, (s, e) in where.items():  # as written: capitalised at the sentence's start
            i = inside[k]
            if edits[i].replacement is not None or (
                    edits[i].action == "kept" and text[s:e] != sentence[pieces[k][0]:
                                                                         pieces[k][1]]):
                edits[i] = replace(edits[i], replacement=text[s:e])
        return text, appended, {inside[k]: sp for k, sp in where.items()}, hedges


_CLAIM_END = re.compile(r"[.!?][\"”’')\]]*$")


def _split_at_claim_ends(draft: str, sentences: list[tuple[int, int]],
                         spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Split a sentence where a claim ends in a full stop and the next claim starts.

    The decomposer may end a sentence where the splitter does not ("... in the U.S. It
    sells tools."); the claims say where it ends, so that a hedge stays in its place.
    """
    out: list[tuple[int, int]] = []
    for s, e in sentences:
        for _, b in spans:
            if s < b < e and _CLAIM_END.search(draft, s, b) and any(
                    b <= a2 < e and not draft[b:a2].strip() for a2, _ in spans):
                nxt = b + len(draft[b:e]) - len(draft[b:e].lstrip())
                out.append((s, b))
                s = nxt
        out.append((s, e))
    return out


#: A numbered list item's number at the start of a line: "2. ", "  10) ".
_NUMBERED = re.compile(r"^([ \t]*)(\d{1,3})([.)])[ \t]", re.M)


def _renumber(draft: str, body: str, located: dict[int, tuple[int, int]],
              removed: Sequence[tuple[int, int]]) -> tuple[str, dict[int, tuple[int, int]]]:
    """Number a list's items one after another again once some were removed whole.

    A list is a run of the draft's numbered lines of one indent and marker, each number one
    more than the last ("1. ... 2. ... 3."; a draft that skips numbers keeps them). Its items
    left in ``body`` are numbered from its first number: "1. ... 3. ..." -> "1. ... 2. ...".
    ``removed``: the draft spans removed whole. Each number left in the body stands for the
    draft's numbers not removed, in order; where they do not pair one to one, nothing is
    renumbered. ``located`` (each edit's span in the body) is shifted to match.
    """
    if not removed:
        return body, located
    left: list[tuple[re.Match[str], int]] = []  # the draft's items left, their new numbers
    prev: re.Match[str] | None = None
    first = kept = 0
    for m in _NUMBERED.finditer(draft):
        if prev is None or (prev.group(1), prev.group(3)) != (m.group(1), m.group(3)) or \
                int(m.group(2)) != int(prev.group(2)) + 1:  # another list starts
            first, kept = int(m.group(2)), 0
        if not any(a <= m.start(2) < b for a, b in removed):
            left.append((m, first + kept))
            kept += 1
        prev = m
    shown = list(_NUMBERED.finditer(body))
    # the mitigator writes no number of its own: each number left is its draft item's
    if len(shown) != len(left) or any(a.group(2) != b.group(2)
                                      for a, (b, _) in zip(shown, left, strict=True)):
        return body, located
    changes = [(m.start(2), m.end(2), str(n)) for m, (_, n) in zip(shown, left, strict=True)
               if m.group(2) != str(n)]
    for a, b, number in sorted(changes, reverse=True):
        body = body[:a] + number + body[b:]
        delta = len(number) - (b - a)
        located = {i: (s + delta if s >= b else s, e + delta if e >= b else e)
                   for i, (s, e) in located.items()}
    return body, located


def _with_list_markers(draft: str, sentences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join a numbered list item's marker to the sentence it numbers.

    The splitter reads "2." as a sentence of its own.
    """
    out: list[tuple[int, int]] = []
    for s, e in sentences:
        if out and LIST_ITEM.fullmatch(draft[out[-1][0]:s]) and \
                "\n" not in draft[out[-1][1]:s]:
            out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def _item_goes_on(draft: str, end: int, spans: Mapping[int, tuple[int, int]],
                  actions: Mapping[int, Action]) -> bool:
    """Whether the draft's line goes on after ``end`` with text the answer keeps.

    That is a claim not removed, or words no claim holds (not a mere connective).
    """
    line_end = draft.find("\n", end)
    line_end = len(draft) if line_end < 0 else line_end
    rest = draft[end:line_end]
    for i, (a, b) in spans.items():
        if end <= a < line_end:
            if actions[i] != "removed":
                return True
            rest = rest[:a - end] + " " * (min(b, line_end) - a) + rest[min(b, line_end) - end:]
    return bool(re.search(r"\w", re.sub(rf"\b{_CONJUNCTIONS}", "", rest, flags=re.I)))


def _merge_sentences(sentences: list[tuple[int, int]], spans: list[tuple[int, int]]
                     ) -> list[tuple[int, int]]:
    """Join the sentences that one claim span runs across ("Paris is big. It" + "has ...")."""
    merged: list[tuple[int, int]] = []
    for s, e in sentences:
        if merged and any(a < merged[-1][1] and b > s for a, b in spans):
            merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged


def _lead(sentence: str, span: tuple[int, int], offset: int) -> int | None:
    """Where the claim's own text starts when ``span`` covers its whole sentence.

    That is after the sentence's list-item marker ("- ", "2. "), which is no part of the
    claim, if any; ``None`` when the sentence holds more than the claim (and closing marks).
    """
    a, b = span[0] - offset, span[1] - offset
    if re.sub(r"[\s.!?\"')\]\d\[,]", "", sentence[b:]):
        return None
    if not sentence[:a].strip():
        return 0
    return a if _ITEM_START.fullmatch(sentence, 0, a) else None


def _dangling(sentence: str, span: tuple[int, int], offset: int) -> int | None:
    """Where the sentence starts, after its list-item marker, when the rest needs the claim.

    ``None`` when what the sentence holds besides the claim stands on its own. It does not
    when it is a lead-in before the claim, ending in a comma or "that" ("According to the
    report, ", "In 2020, ", "He thinks that "), or a tail after it that opens with a comma and
    no connective of a clause of its own (", according to the report."). Removing or hedging
    the claim then rewrites the whole sentence: removing only the claim would leave "In
    2020." behind. "I like Paris, and Rome is big." keeps its first clause.
    """
    a, b = span[0] - offset, span[1] - offset
    marker = _ITEM_START.match(sentence, 0, a)
    start = marker.end() if marker else 0
    before, after = sentence[start:a], sentence[b:]
    closing = not re.sub(r"[\s.!?\"')\]\d\[,]", "", after)  # only closing marks follow
    if before.strip() and closing:
        return start if re.search(r"(?:,|\bthat)\s*$", before, re.I) else None
    if not before.strip() and not closing:
        return start if re.match(rf"\s*,(?!\s*{_CONJUNCTIONS})", after) else None
    return None


def _subject(claim: str, original: str) -> str:
    """What the claim's text adds before the draft's words of it, when that is a subject.

    The decomposer writes a clause without its subject as a whole claim ("died in 1955" is
    "Einstein died in 1955."): "Einstein " here; ``""`` when the claim does not end with the
    draft's words or adds no capitalised word before them.
    """
    text, own = _body(claim), _body(original)
    if not own or len(text) <= len(own) or not text.endswith(own):
        return ""
    subject = text[: len(text) - len(own)]
    return subject if subject[:1].isupper() and subject[-1].isspace() else ""


#: Pronouns the decomposer replaces with their antecedent in a claim's text.
_PRONOUN = re.compile(r"(?:it|he|she|they|this|that)\b", re.I)


def _antecedent(claim: str, original: str) -> tuple[int, str]:
    """The claim's words for the pronoun the draft's clause opens with.

    The decomposer writes "they prevent measles" as "Vaccines prevent measles.": ``(4,
    "Vaccines")``, the pronoun's length and what stands for it; ``(0, "")`` otherwise.

    Example:
        >>> _antecedent("Vaccines prevent measles.", "they prevent measles.")
        (4, 'Vaccines')
        >>> _antecedent("The tower is tall.", "it was built in 1889.")
        (0, '')
    """
    m = _PRONOUN.match(original)
    if not m:
        return 0, ""
    text, rest = _body(claim), _body(original[m.end():]).lstrip()
    if not rest or not text.endswith(" " + rest):
        return 0, ""
    words = text[: len(text) - len(rest)].rstrip()
    return (m.end(), words) if words[:1].isupper() else (0, "")


def _insert_citation(text: str, n: int) -> str:
    """``text`` with ``[n]`` before its final punctuation.

    After a closing quotation mark, not inside the quote; after an abbreviation's stop,
    which is part of the claim's words ("in the U.S. [1]", not "in the U.S [1].").
    """
    # (a Markdown footnote reference after the stop stays after it: "France [1].[^2]")
    m = re.search(rf"[.!?;:,。！？；：，।॥؟۔…]+[\"”')」』]*(?=(?:{FOOTNOTE_REF})*$)", text)
    if m and not re.search(r"[\"”'’」』]$", m.group(0)):
        cut = m.start()
        if text[cut] == "." and _abbreviation_before(text[:cut]):
            cut += 1
        head = text[:cut].rstrip()
        # no space between Chinese or Japanese text and its marker: "首都[1]。"
        space = "" if head and CJK.match(head[-1]) else " "
        return f"{head}{space}[{n}]{text[cut:]}"
    return f"{text.rstrip()} [{n}]"


def _apply(sentence: str, pieces: list[tuple[int, int, str]]
           ) -> tuple[str, dict[int, tuple[int, int]]]:
    """Apply replacements; an empty replacement removes a clause with its connector.

    Returns:
        The new sentence, and where each non-empty replacement lies in it (by piece index).
    """
    out = sentence
    where: dict[int, tuple[int, int]] = {}

    def shift(by: int) -> None:
        for k, (s, e) in where.items():
            where[k] = (s + by, e + by)

    first = min(p[0] for p in pieces)
    k0 = next(k for k, p in enumerate(pieces) if p[0] == first)
    lead = _ATTRIBUTION.match(sentence, first, pieces[k0][1])
    if lead and not pieces[k0][2] and lead.end() < pieces[k0][1] and len(pieces) > 1:
        # the decomposer's first claim holds the sentence's attribution ("According to the
        # report, the tower is gold"): removed, it leaves the attribution to the clauses
        # after it, as a claim span that starts after the attribution does
        pieces = [*pieces]
        pieces[k0] = (lead.end(), pieces[k0][1], "")
        first = lead.end()
    for k in sorted(range(len(pieces)), key=lambda k: pieces[k], reverse=True):
        a, b, new = pieces[k]
        if (a, b) == (0, len(sentence)):
            return new, ({k: (0, len(new))} if new else {})
        if new:
            out = out[:a] + new + out[b:]
            shift(len(new) - (b - a))
            where[k] = (a, a + len(new))
            continue
        before, after = out[:a], out[b:]
        opener = re.search(r"\s*([(\[])\s*$", before)
        closer = re.match(r"\s*([)\]])", after)
        if opener and closer and "([".index(opener.group(1)) == ")]".index(closer.group(1)):
            # the clause filled the brackets: they go with it ("big (Rome is old)." -> "big.")
            before, after, b = before[:opener.start()], after[closer.end():], b + closer.end()
            opener = None
        tail = re.match(r"^[.!?]+", after.strip())
        end_punct = tail.group(0) if tail else ""
        # a list item's "- " or "1. ", or a label, is no clause before; a claim is no label
        marker = _ITEM_START.match(before, 0, first)
        start = marker.end() if marker else 0
        # an attribution before the first clause stays for what follows ("According to the
        # report, Paris is big and Rome is old." -> "According to the report, Rome is old.")
        attribution = not opener and a == first and bool(_ATTRIBUTION.fullmatch(before, start))
        if not opener and a == first and not attribution and (
                _LEAD_SUBORDINATOR.fullmatch(before, start) or
                re.search(r"(?:,|\bthat)\s*$", before, re.I)):
            # no claim before the clause, only a lead-in, which goes with it ("In 2020, the
            # museum was built and it opened ..." -> "It opened ...", "When the war ended,
            # the city ..." -> "The city ...")
            before = before[:start]
        if before[start:].strip() and not opener and not attribution:
            connector = _CONNECT_BEFORE.search(before)
            before = before[:connector.start()] if connector else before
            rest = after.strip()
            rest = rest[len(end_punct):] if end_punct else rest
            kept = rest.lstrip()
            if connector and connector.group(0).strip() == "," and kept.startswith(","):
                # a clause set off by commas goes with both ("Paris, which is old, is big.")
                kept = kept[1:].lstrip()
            skipped = len(after) - len(after.lstrip()) + len(end_punct) + len(rest) - len(kept)
            # no space before punctuation ("Paris [1], and ...", not "Paris [1] , and ...")
            sep = "" if not kept or re.match(r"[,;:.!?)\]]", kept) else " "
            out = before + sep + kept + (end_punct or "")
            shift(len(before) + len(sep) - (b + skipped))
        else:  # the clause began the sentence (after an attribution), or a bracket ("big
            # (Rome is old, and ...)")
            rest = _CONNECT_AFTER.sub("", after)
            out = before + (rest if opener or attribution else _first_letter(rest, True))
            shift(len(before) - (b + len(after) - len(rest)))
    marker = _ITEM_START.match(out, 0, first)
    if not re.search(r"\w", out[marker.end() if marker else 0:]):
        return "", {}  # every clause went: no stop or dash stays behind
    # a comma inside a closing quote was the sentence's, which now ends there: 'is called
    # "Heat" [1].', not '"Heat," [1].'
    comma = re.search(rf",[\"”’](?:\s*{CITATION_MARK})?[.!?]?\s*$", out)
    if comma:
        at = comma.start()
        out = out[:at] + out[at + 1:]
        where = {k: (s - (s > at), e - (e > at)) for k, (s, e) in where.items()}
    # a stop ends the sentence, unless one does already ("in the U.S. [1]")
    if out.strip() and not re.search(rf"[.!?][\"”')\]]*(?:\s*{CITATION_MARK})?"
                                     rf"(?:{FOOTNOTE_REF})*\s*$", out) \
            and (stop := re.search(rf"([.!?])(?:{FOOTNOTE_REF})*\s*$", sentence)):
        out = out.rstrip() + stop.group(1)
    return out, where


def _scores(edits: Sequence[Edit]) -> tuple[float, float]:
    counted = [e for e in edits if not e.reason.startswith("not verifiable")]
    if not counted:
        return 1.0, 0.0
    verified = sum(e.status == Status.SUPPORTED and not any(
        f.severity == Severity.HIGH for f in e.findings) for e in counted)
    partial = sum(e.status == Status.SUPPORTED and any(
        f.severity == Severity.HIGH for f in e.findings) for e in counted)
    contradicted = sum(e.status == Status.CONTRADICTORY for e in counted)
    unknown = sum(e.status == Status.INSUFFICIENT_INFO for e in counted)
    n = len(counted)
    g = (verified + 0.5 * partial - (contradicted + unknown)) / n
    h = (contradicted + 0.5 * unknown) / n
    return round(min(1.0, max(0.0, g)), 4), round(min(1.0, max(0.0, h)), 4)

