"""Small text utilities shared by the stages (no heavy imports)."""

from __future__ import annotations

import re

# Latin full stops end a sentence before whitespace; CJK ones (。！？) end it anyway, as
# CJK text puts no space between sentences.
_SENT_END = re.compile(r"[.!?][\"')\]”’»]*\s+|[。！？][\"')\]」』”’]*\s*|\n\s*\n|\n")


#: A text stored as a CSV field: wrapped in double quotes, the ones inside doubled (a full
#: stop may follow the closing quote).
_CSV_FIELD = re.compile(r'"(?P<body>(?:[^"]|"")*)"(?P<tail>\.?)')


def csv_unescaped(text: str) -> str:
    """``text`` without its CSV escaping when it is a whole escaped field, else unchanged.

    Example:
        >>> print(csv_unescaped('"His nickname is not ""Champ""."'))
        His nickname is not "Champ".
        >>> print(csv_unescaped('He said "no" twice.'))
        He said "no" twice.
    """
    m = _CSV_FIELD.fullmatch(text)
    if m is None or '""' not in m.group("body"):
        return text
    return m.group("body").replace('""', '"') + m.group("tail")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Split ``text`` into sentence spans that tile it completely (trailing whitespace kept).

    Example:
        >>> sentence_spans("One. Two!")
        [(0, 5), (5, 9)]
        >>> sentence_spans("巴黎是首都。柏林是首都！")
        [(0, 6), (6, 12)]
        >>> sentence_spans("He said “we won.” They left.")
        [(0, 18), (18, 28)]
    """
    spans, start = [], 0
    for m in _SENT_END.finditer(text):
        end = m.end()
        if end > start:
            spans.append((start, end))
            start = end
    if start < len(text):
        spans.append((start, len(text)))
    return spans or [(0, len(text))]


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``(start, end)`` so that ``text[start:end]`` has no surrounding whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def trimmed_sentence_spans(text: str) -> list[tuple[int, int]]:
    """Sentence spans without surrounding whitespace; empty sentences dropped."""
    out = []
    for s, e in sentence_spans(text):
        s, e = strip_span(text, s, e)
        if e > s:
            out.append((s, e))
    return out
