"""Chunk long documents into passages that keep character offsets back to the source."""

from __future__ import annotations

from verifier.checking import is_int
from verifier.text import strip_span, trimmed_sentence_spans
from verifier.types import Passage


def chunk_document(
    text: str,
    source_id: str,
    *,
    max_chars: int = 800,
    overlap: int = 1,
    metadata: dict | None = None,
) -> list[Passage]:
    """Split ``text`` into sentence-aligned passages of at most ``max_chars`` characters.

    Each passage's ``metadata["doc_span"]`` is ``(start, end)`` with
    ``passage.text == text[start:end]`` (no surrounding whitespace) and ``metadata["chunk"]``
    its 0-based position. Consecutive passages share ``overlap`` sentences. A sentence longer
    than ``max_chars`` becomes pieces cut at whitespace (or hard-cut when it has none), so no
    text is dropped: the passages cover every non-blank character of ``text``.

    Args:
        text: The document.
        source_id: Its identifier (copied to every passage).
        max_chars: Target passage size in characters (> 0).
        overlap: Sentences repeated at the start of the next passage (>= 0).
        metadata: Extra metadata copied into every passage.

    Returns:
        The passages in document order (one passage for a short document).

    Example:
        >>> [p.text for p in chunk_document("A b. C d.", "doc", max_chars=5)]
        ['A b.', 'C d.']
    """
    if not is_int(max_chars) or max_chars <= 0:
        raise ValueError(f"max_chars must be a positive int, got {max_chars!r}")
    if not is_int(overlap) or overlap < 0:
        raise ValueError(f"overlap must be an int >= 0, got {overlap!r}")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if not text.strip():
        raise ValueError(f"document {source_id!r} is empty")
    units: list[tuple[int, int]] = []
    for s, e in trimmed_sentence_spans(text):
        while e - s > max_chars:
            # Cut at the last whitespace that keeps the piece within max_chars, else hard-cut.
            cut = s + max_chars
            while cut > s and not text[cut].isspace():
                cut -= 1
            if cut == s:
                cut = s + max_chars
            ps, pe = strip_span(text, s, cut)
            if pe > ps:
                units.append((ps, pe))
            s, e = strip_span(text, cut, e)
        if e > s:
            units.append((s, e))
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(units):
        j = i + 1
        while j < len(units) and units[j][1] - units[i][0] <= max_chars:
            j += 1
        spans.append((units[i][0], units[j - 1][1]))
        if j >= len(units):
            break
        # Back up ``overlap`` units, but never so far that unit j (new text) no longer fits:
        # a passage must not be a mere subset of the previous one.
        nxt = max(j - overlap, i + 1)
        while nxt < j and units[j][1] - units[nxt][0] > max_chars:
            nxt += 1
        i = nxt
    meta = dict(metadata or {})
    return [
        Passage(text[s:e], source_id, {**meta, "doc_span": (s, e), "chunk": k})
        for k, (s, e) in enumerate(spans)
    ]
