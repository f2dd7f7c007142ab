"""Chunk long documents into passages that keep character offsets back to the source."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from verifier.checking import is_int
from verifier.text import strip_span, trimmed_sentence_spans
from verifier.types import Passage

logger = logging.getLogger(__name__)

#: Counts the tokens of each text (without special tokens): the embedding model's tokenizer.
TokenCounter = Callable[[Sequence[str]], Sequence[int]]


def chunk_document(
    text: str,
    source_id: str,
    *,
    max_chars: int = 800,
    overlap: int = 1,
    metadata: dict | None = None,
    max_tokens: int | None = None,
    count_tokens: TokenCounter | None = None,
) -> list[Passage]:
    """Split ``text`` into sentence-aligned passages of at most ``max_chars`` characters.

    Each passage's ``metadata["doc_span"]`` is ``(start, end)`` with
    ``passage.text == text[start:end]`` (no surrounding whitespace) and ``metadata["chunk"]``
    its 0-based position. Consecutive passages share ``overlap`` sentences. A sentence longer
    than ``max_chars`` becomes pieces cut at whitespace (or hard-cut when it has none), so no
    text is dropped: the passages cover every non-blank character of ``text``.

    With ``max_tokens`` and ``count_tokens`` (an embedding model's tokenizer), a passage
    also holds at most ``max_tokens`` tokens, the same way: fewer sentences, and a sentence
    over the limit cut at whitespace (hard-cut inside a word over it). The model then
    embeds all of every passage; it would silently drop the tokens past its limit.

    Args:
        text: The document.
        source_id: Its identifier (copied to every passage).
        max_chars: Target passage size in characters (> 0).
        overlap: Sentences repeated at the start of the next passage (>= 0).
        metadata: Extra metadata copied into every passage.
        max_tokens: Most tokens in a passage (> 0), counted by ``count_tokens``.
        count_tokens: Token count of each of a list of texts; given with ``max_tokens``.

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
    if (max_tokens is None) != (count_tokens is None):
        raise ValueError("max_tokens and count_tokens go together, got "
                         f"max_tokens={max_tokens!r} and count_tokens={count_tokens!r}")
    if max_tokens is not None and (not is_int(max_tokens) or max_tokens <= 0):
        raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
    if not text.strip():
        raise ValueError(f"document {source_id!r} is empty")

    counter: TokenCounter = count_tokens or (lambda texts: [0] * len(texts))

    def n_tokens(spans: Sequence[tuple[int, int]]) -> list[int]:
        return [int(n) for n in counter([text[a:b] for a, b in spans])]

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
    if max_tokens is not None:
        over = [n > max_tokens for n in n_tokens(units)]
        if any(over):
            logger.debug("document %r: %d sentence(s) over %d tokens cut at whitespace",
                         source_id, sum(over), max_tokens)
            units = [piece for unit, cut in zip(units, over, strict=True)
                     for piece in (_token_pieces(text, *unit, max_tokens, n_tokens) if cut
                                   else [unit])]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(units):
        j = i + 1
        while j < len(units) and units[j][1] - units[i][0] <= max_chars:
            j += 1
        if max_tokens is not None and j - i > 1 and \
                n_tokens([(units[i][0], units[j - 1][1])])[0] > max_tokens:
            # fewer units: the longest run from unit i within the limit (one unit always is)
            runs = n_tokens([(units[i][0], units[k][1]) for k in range(i + 1, j)])
            j = i + 1 + next((k for k, n in enumerate(runs) if n > max_tokens), len(runs))
        spans.append((units[i][0], units[j - 1][1]))
        if j >= len(units):
            break
        # Back up ``overlap`` units, but never so far that unit j (new text) no longer fits:
        # a passage must not be a mere subset of the previous one.
        nxt = max(j - overlap, i + 1)
        while nxt < j and (units[j][1] - units[nxt][0] > max_chars or (
                max_tokens is not None
                and n_tokens([(units[nxt][0], units[j][1])])[0] > max_tokens)):
            nxt += 1
        i = nxt
    meta = dict(metadata or {})
    return [
        Passage(text[s:e], source_id, {**meta, "doc_span": (s, e), "chunk": k})
        for k, (s, e) in enumerate(spans)
    ]


def _token_pieces(text: str, s: int, e: int, max_tokens: int,
                  n_tokens: Callable[[Sequence[tuple[int, int]]], list[int]]
                  ) -> list[tuple[int, int]]:
    """``text[s:e]`` as pieces of at most ``max_tokens`` tokens, cut at whitespace if possible.

    Each piece is the longest prefix of what is left that fits, ending at a word's end (or
    anywhere, when the first word alone is over the limit).
    """
    pieces: list[tuple[int, int]] = []
    while e > s:
        if n_tokens([(s, e)])[0] <= max_tokens:
            pieces.append((s, e))
            break
        word_ends = [k for k in range(s + 1, e) if text[k].isspace() and not text[k - 1].isspace()]
        cut = _longest_fit(s, word_ends, max_tokens, n_tokens)
        if cut is None:  # one word over the limit: cut inside it
            cut = _longest_fit(s, range(s + 1, e), max_tokens, n_tokens) or s + 1
        ps, pe = strip_span(text, s, cut)
        if pe > ps:
            pieces.append((ps, pe))
        s, e = strip_span(text, cut, e)
    return pieces


def _longest_fit(s: int, ends: Sequence[int], max_tokens: int,
                 n_tokens: Callable[[Sequence[tuple[int, int]]], list[int]]) -> int | None:
    """The last of ``ends`` (ascending) with ``text[s:end]`` within ``max_tokens``, or ``None``.

    Binary search: a longer prefix has no fewer tokens.
    """
    lo, hi, best = 0, len(ends) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        if n_tokens([(s, ends[mid])])[0] <= max_tokens:
            best, lo = ends[mid], mid + 1
        else:
            hi = mid - 1
    return best
