"""NLI detector: a local cross-encoder scoring (evidence, claim) pairs.

``NLIDetector.predict(pairs)`` returns an ``(n, 3)`` float32 array of probabilities with
columns ``entailment, neutral, contradiction`` (:attr:`NLIDetector.labels`), rows in input
order. Any Hugging Face sequence-classification checkpoint works: the label order is read
from ``config.id2label`` (see :func:`map_labels`), never assumed.

Long evidence is never silently truncated: a premise that does not fit the model window
next to the hypothesis, or that is longer than ``chunk_tokens`` (the embedded model's
``config.json`` sets 96, tuned on long-document train splits), is split into
sentence-aligned chunks (one sentence of overlap) that together cover the whole premise
(see :func:`plan_chunks`); every chunk is scored and the pair's row is aggregated by
:func:`aggregate_chunks`. The per-chunk scores stay available
through :meth:`NLIDetector.predict_chunks`. A hypothesis of several sentences (a summary, a
paragraph) can be scored sentence by sentence, each sentence against every chunk, and the
sentence rows averaged (``hypothesis_sentences``; :meth:`NLIDetector.predict_sentences`,
:func:`aggregate_sentences`): on by default for the embedded model.

Fast path: premises and hypotheses are tokenised once, in bulk, by the fast tokenizer
(truncation off); model inputs are assembled from those token ids, sorted by length and
batched with dynamic padding, and run under ``torch.inference_mode()`` in bf16 where the
hardware runs it natively (GPUs from Ampere on, CPUs with AMX or AVX512-BF16), float16 on
older GPUs, float32 elsewhere (:func:`verifier.embedded.resolve_dtype`).
"""

from __future__ import annotations

import bisect
import logging
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from verifier.checking import is_int, lone_surrogate, surrogate_message
from verifier.embedded import (
    DEFAULT_NLI_MODEL,
    MODEL_LOAD_LOCK,
    embedded_model_dir,
    resolve_device,
    resolve_dtype,
)
from verifier.errors import LabelMappingError, ModelLoadError
from verifier.registry import register
from verifier.text import sentence_spans, trimmed_sentence_spans
from verifier.types import _check_span

logger = logging.getLogger(__name__)

#: Output columns of :meth:`NLIDetector.predict`.
LABELS: tuple[str, str, str] = ("entailment", "neutral", "contradiction")

#: Fewest premise tokens a chunk may hold; a longer hypothesis is an error, not a truncation.
MIN_EVIDENCE_TOKENS = 16

#: A batch holds at most ``batch_size`` inputs and ``batch_size * TOKENS_PER_INPUT`` padded
#: tokens, so long inputs come in smaller batches (see :func:`length_batches`).
TOKENS_PER_INPUT = 64

_DTYPES = (None, "auto", "float32", "bfloat16", "float16")

_SYNONYMS: dict[str, str] = {
    **dict.fromkeys(["entailment", "entailed", "entails", "entail", "supports", "supported",
                     "support", "consistent", "factual", "true"], "entailment"),
    **dict.fromkeys(["neutral", "not_enough_info", "not_enough_information", "nei",
                     "unknown", "not_enough_evidence", "insufficient_info"], "neutral"),
    **dict.fromkeys(["contradiction", "contradicted", "contradicts", "contradictory",
                     "contradict", "refutes", "refuted", "refute", "false"], "contradiction"),
    **dict.fromkeys(["not_entailment", "non_entailment", "not_entailed", "not_supported",
                     "unsupported", "inconsistent", "hallucinated", "hallucination"],
                    "not_entailment"),
}
_GENERIC = re.compile(r"^label_?\d+$")


class PairInputError(ValueError):
    """A pair the model cannot read (bad input, so a ``ValueError``; not a configuration error).

    The message names the pair (``pairs[i]``); the attributes let a caller that built the
    pairs from its own inputs name the input instead (the verifier names ``claims[i]`` or
    ``evidence[j]``).

    Attributes:
        index: The pair's index in the input.
        part: ``"premise"`` or ``"hypothesis"``: which text of the pair is at fault.
        reason: What is wrong, without the pair's name (``"a premise with no tokens"``).
    """

    def __init__(self, message: str, *, index: int, part: Literal["premise", "hypothesis"],
                 reason: str) -> None:
        super().__init__(message)
        self.index, self.part, self.reason = index, part, reason


def _label_key(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower())


@dataclass(frozen=True)
class LabelMap:
    """How a checkpoint's output columns become (entailment, neutral, contradiction).

    Attributes:
        kind: ``"3class"``; ``"2class-entailment"`` (entailment vs not-entailment);
            ``"2class-refutes"`` (supported vs refuted); ``"1logit"`` (one logit,
            ``sigmoid(logit) = p(supported)``).
        index: Checkpoint column of each canonical name the kind needs (``entailment``,
            ``neutral``, ``contradiction``, ``not_entailment``).
    """

    kind: Literal["3class", "2class-entailment", "2class-refutes", "1logit"]
    index: dict[str, int] = field(default_factory=dict)


def map_labels(id2label: Mapping[Any, str] | None, num_labels: int) -> LabelMap:
    """Map a checkpoint's ``id2label`` onto entailment / neutral / contradiction.

    Names are matched case-insensitively (spaces and dashes read as ``_``), with synonyms:
    ``supports``/``supported``/``entailed`` = entailment; ``refutes``/``refuted``/
    ``contradicted`` = contradiction; ``not_enough_info``/``nei`` = neutral;
    ``not_entailment``/``not_supported``/``unsupported`` = not-entailment.
    Rules for checkpoints with fewer classes:

    - entailment + not_entailment: p(not_entailment) goes to *neutral* and contradiction is
      0 (such a model cannot tell "contradicted" from "not supported").
    - entailment (supported) + contradiction (refuted): neutral is 0.
    - one logit (HHEM / MiniCheck style): ``sigmoid(logit)`` is p(entailment), the rest
      goes to neutral, contradiction is 0. Its single name is not needed (``LABEL_0`` is
      fine) but must not name another class.

    Args:
        id2label: The checkpoint's ``config.id2label`` (int or str keys).
        num_labels: The checkpoint's ``config.num_labels``.

    Returns:
        The :class:`LabelMap`.

    Raises:
        LabelMappingError: Generic names (``LABEL_0``...), unknown, repeated or missing
            labels, or an ``id2label`` that does not match ``num_labels``; the message
            names the labels.

    Example:
        >>> map_labels({0: "CONTRADICTION", 1: "entailment", 2: "Neutral"}, 3).index
        {'contradiction': 0, 'entailment': 1, 'neutral': 2}
    """
    raw = {int(k): str(v) for k, v in (id2label or {}).items()}
    shown = [raw[k] for k in sorted(raw)]
    if num_labels == 1:
        canon = _SYNONYMS.get(_label_key(raw[0])) if raw.get(0) is not None else None
        if canon not in (None, "entailment"):
            raise LabelMappingError(
                f"cannot map the checkpoint's labels {shown}: a single-logit head is read as "
                f"p(entailment), but its label names {canon!r}"
            )
        return LabelMap("1logit", {"entailment": 0})
    if sorted(raw) != list(range(num_labels)):
        raise LabelMappingError(
            f"cannot map the checkpoint's labels {shown}: id2label must name each of the "
            f"{num_labels} outputs 0..{num_labels - 1}, got ids {sorted(raw)}"
        )
    generic = [n for n in shown if _GENERIC.match(_label_key(n))]
    if generic:
        raise LabelMappingError(
            f"cannot map the checkpoint's labels {shown}: generic names such as "
            f"{generic[0]!r} do not say which output is entailment; name them in the "
            "checkpoint's config.json or pass id2label={0: 'entailment', ...} to NLIDetector"
        )
    names: dict[str, int] = {}
    for idx, name in sorted(raw.items()):
        canon = _SYNONYMS.get(_label_key(name))
        if canon is None:
            raise LabelMappingError(
                f"cannot map the checkpoint's labels {shown} to entailment/neutral/"
                f"contradiction: unknown label {name!r}"
            )
        if canon in names:
            raise LabelMappingError(
                f"cannot map the checkpoint's labels {shown}: two labels mean {canon!r}"
            )
        names[canon] = idx
    got = set(names)
    if got == {"entailment", "neutral", "contradiction"}:
        return LabelMap("3class", names)
    if got == {"entailment", "not_entailment"}:
        return LabelMap("2class-entailment", names)
    if got == {"entailment", "contradiction"}:
        return LabelMap("2class-refutes", names)
    raise LabelMappingError(
        f"cannot map the checkpoint's labels {shown} to entailment/neutral/contradiction "
        f"(they mean {sorted(got)}; supported sets: entailment/neutral/contradiction, "
        "entailment/not_entailment, entailment/contradiction, or one logit)"
    )


def to_three_columns(logits: np.ndarray, label_map: LabelMap) -> np.ndarray:
    """Turn raw logits ``(n, num_labels)`` into ``(n, 3)`` float32 probabilities.

    Columns are (entailment, neutral, contradiction); rows sum to 1. The rules for 2-class
    and 1-logit checkpoints are those of :func:`map_labels`.
    """
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 2:
        raise ValueError(f"logits must be 2-D (n, num_labels), got shape {logits.shape}")
    out = np.zeros((logits.shape[0], 3), dtype=np.float64)
    if label_map.kind == "1logit":
        p = 0.5 * (1.0 + np.tanh(0.5 * logits[:, 0]))  # sigmoid without overflow
        out[:, 0], out[:, 1] = p, 1.0 - p
        return out.astype(np.float32)
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = z / z.sum(axis=1, keepdims=True)
    idx = label_map.index
    out[:, 0] = probs[:, idx["entailment"]]
    if label_map.kind == "3class":
        out[:, 1] = probs[:, idx["neutral"]]
        out[:, 2] = probs[:, idx["contradiction"]]
    elif label_map.kind == "2class-entailment":
        out[:, 1] = probs[:, idx["not_entailment"]]
    else:
        out[:, 2] = probs[:, idx["contradiction"]]
    return out.astype(np.float32)


def aggregate_chunks(chunk_probs: np.ndarray) -> np.ndarray:
    """Aggregate ``(k, 3)`` per-chunk probabilities into one ``(3,)`` row.

    Rule: the chunk that most entails (max p(entailment)) and the chunk that most
    contradicts (max p(contradiction)) compete, and the row of whichever is the more
    confident is returned whole (a tie goes to entailment). So the returned entailment is
    the max over chunks whenever that chunk wins, the contradiction comes from the most
    contradicting chunk otherwise, and the row always sums to 1. One chunk returns its own
    row. :class:`~verifier.verify.Verifier` applies the same rule across evidence passages.

    Why not "max entailment first": on the FEVER dev pairs whose evidence needs chunking,
    this rule gave 0.853 balanced accuracy against 0.724 for "the max-entailment chunk
    unless no chunk has p(entailment) >= 0.5" and 0.664 for "always the max-entailment
    chunk"; on WiCE, FRANK and SummEdits the three were within 0.01 (embedded model,
    ``benchmarks/results/nli_aggregation_gpu.json``).

    Example:
        >>> chunks = np.array([[0.1, 0.8, 0.1], [0.7, 0.2, 0.1], [0.2, 0.2, 0.6]])
        >>> bool((aggregate_chunks(chunks) == chunks[1].astype(np.float32)).all())
        True
    """
    chunk_probs = np.asarray(chunk_probs, dtype=np.float32)
    if chunk_probs.ndim != 2 or chunk_probs.shape[1] != 3 or chunk_probs.shape[0] == 0:
        raise ValueError(f"chunk_probs must have shape (k >= 1, 3), got {chunk_probs.shape}")
    return chunk_probs[_best_chunk(chunk_probs)]


def _best_chunk(chunk_probs: np.ndarray) -> int:
    ie = int(chunk_probs[:, 0].argmax())
    ic = int(chunk_probs[:, 2].argmax())
    return ie if chunk_probs[ie, 0] >= chunk_probs[ic, 2] else ic


def supports_decision(probs: np.ndarray) -> np.ndarray:
    """SUPPORTS-vs-REFUTES decision for 2-class (FEVER-style) data.

    A pair is SUPPORTS iff p(entailment) > p(contradiction), REFUTES otherwise (ties
    included); the neutral column is ignored, as the data has no third class. A model
    without a contradiction class (entailment / not_entailment, or one logit: its
    contradiction column is all zeros) decides by p(entailment) > 0.5 instead.

    Args:
        probs: ``(n, 3)`` probabilities from :meth:`NLIDetector.predict`.

    Returns:
        ``(n,)`` bool array, True for SUPPORTS.

    Example:
        >>> supports_decision(np.array([[0.2, 0.7, 0.1], [0.3, 0.1, 0.6]])).tolist()
        [True, False]
        >>> supports_decision(np.array([[0.3, 0.7, 0.0], [0.6, 0.4, 0.0]])).tolist()
        [False, True]
    """
    probs = np.asarray(probs)
    if probs.ndim != 2 or probs.shape[1] != 3:
        raise ValueError(f"probs must have shape (n, 3), got {probs.shape}")
    if lacks_contradiction(probs):
        return probs[:, 0] > 0.5
    return probs[:, 0] > probs[:, 2]


def lacks_contradiction(probs: np.ndarray) -> bool:
    """Whether ``(n, 3)`` rows come from a model without a contradiction class.

    An entailment / not_entailment or one-logit head leaves the column all zeros
    (:func:`to_three_columns`).

    Example:
        >>> lacks_contradiction(np.array([[0.3, 0.7, 0.0]])), lacks_contradiction(np.zeros((0, 3)))
        (True, False)
    """
    return len(probs) > 0 and not np.asarray(probs)[:, 2].any()


#: A hypothesis sentence of fewer words is joined to its neighbour.
MIN_SENTENCE_WORDS = 3

def hypothesis_sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans of a hypothesis, for scoring it sentence by sentence.

    Trimmed sentence spans (:func:`verifier.text.trimmed_sentence_spans`) that never end at
    an abbreviation, an initial ("Albert S. Ruddy") or a dotted abbreviation ("West Ham
    United F.C. is"), read case-blind (``read_case=False``): "Inc.", "Jr.", "etc." and a
    month do not end a claim's sentence even before a capital, the rule hypotheses had
    before the shared splitter read case. A piece of fewer than
    :data:`MIN_SENTENCE_WORDS` words is joined to the sentence before it (to the next one
    when it comes first), so "No." never stands alone.

    Example:
        >>> t = "The U.S. Army left St. Louis. It rained all day."
        >>> [t[s:e] for s, e in hypothesis_sentences(t)]
        ['The U.S. Army left St. Louis.', 'It rained all day.']
    """
    spans: list[list[int]] = []
    pending: list[int] | None = None  # a short first piece waiting for the next sentence
    for s, e in trimmed_sentence_spans(text, read_case=False):
        short = len(text[s:e].split()) < MIN_SENTENCE_WORDS
        if pending is not None:
            s, pending = pending[0], None
        elif short and spans:
            spans[-1][1] = e
            continue
        elif short:
            pending = [s, e]
            continue
        spans.append([s, e])
    if pending is not None:
        spans.append(pending)
    return [(s, e) for s, e in spans]


def aggregate_sentences(sentence_probs: np.ndarray) -> np.ndarray:
    """Aggregate ``(m, 3)`` per-sentence probabilities of one hypothesis into one ``(3,)`` row.

    Rule: the mean of the sentence rows (SummaC-ZS style: each sentence is first scored
    against the best chunk of the premise, :func:`aggregate_chunks`). A hypothesis half of
    whose sentences are entailed gets about half the entailment, so decide such rows with a
    tuned cut on p(entailment) rather than by argmax. On the train splits of FRANK and
    SummEdits the mean ranked summaries better (mean AUROC 0.682) than the weakest sentence
    (the minimum, 0.630) and than the whole hypothesis at once (0.636; embedded model,
    ``models/nli-minilm-l6/hypothesis_tuning.json``).

    Example:
        >>> aggregate_sentences(np.array([[0.9, 0.1, 0.0], [0.1, 0.2, 0.7]])).tolist()
        [0.5, 0.15000000596046448, 0.3499999940395355]
    """
    sentence_probs = np.asarray(sentence_probs, dtype=np.float32)
    if (sentence_probs.ndim != 2 or sentence_probs.shape[1] != 3
            or sentence_probs.shape[0] == 0):
        raise ValueError(f"sentence_probs must have shape (m >= 1, 3), got "
                         f"{sentence_probs.shape}")
    return sentence_probs.mean(axis=0, dtype=np.float64).astype(np.float32)


def _word_starts(offsets: Sequence[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    """Token offsets with leading whitespace left out of each token.

    Byte-level BPE tokenizers (RoBERTa, DeBERTa v1) give a token after a space the offset of
    that space; :func:`plan_chunks` places a token by its start, so the first word of a
    sentence would count in the sentence before it.

    Example:
        >>> _word_starts([(0, 2), (2, 5), (5, 5)], "ab cd")
        [(0, 2), (3, 5), (5, 5)]
    """
    out = []
    for s, e in offsets:
        piece = text[s:e]
        out.append((s + len(piece) - len(piece.lstrip()), e))
    return out


def plan_chunks(
    offsets: Sequence[tuple[int, int]],
    sentences: Sequence[tuple[int, int]],
    budget: int,
) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Plan sentence-aligned chunks of a premise that each hold at most ``budget`` tokens.

    Sentences are packed greedily; consecutive chunks share one sentence (when that
    sentence and the next fit together). A sentence longer than ``budget`` tokens is split
    into pieces of at most half a chunk, each cut before a word (inside a word only when one
    word is longer than that), which are then packed like sentences: two neighbouring pieces
    fit in one chunk, so consecutive chunks share a piece and every cut is read whole in
    some chunk. Because the sentences tile the text, the chunks cover all of it: the first
    starts at 0, the last ends where the last sentence ends, and each starts at or before
    the previous one's end.

    Args:
        offsets: ``(start, end)`` character offsets of the premise's tokens, in order
            (from a fast tokenizer, without special tokens).
        sentences: Sentence spans that tile the premise (:func:`verifier.text.sentence_spans`).
        budget: Most premise tokens in a chunk (>= 1).

    Returns:
        One ``((char_start, char_end), (token_start, token_end))`` per chunk.

    Example:
        >>> plan_chunks([(0, 3), (4, 7), (8, 11)], [(0, 4), (4, 8), (8, 11)], 2)
        [((0, 8), (0, 2)), ((4, 11), (1, 3))]
    """
    if budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget}")
    starts = [s for s, _ in offsets]
    half = max(1, budget // 2)

    def word_start(t: int) -> bool:  # whitespace before token t
        return offsets[t][0] > offsets[t - 1][1]

    units: list[tuple[int, int, int, int]] = []  # (char_start, char_end, tok_start, tok_end)
    for s, e in sentences:
        t0, t1 = bisect.bisect_left(starts, s), bisect.bisect_left(starts, e)
        cut_s = s
        if t1 - t0 > budget:  # a sentence longer than a chunk: pieces of half a chunk
            while t1 - t0 > half:
                cut_t = next((t for t in range(t0 + half, t0, -1) if word_start(t)),
                             t0 + half)
                units.append((cut_s, starts[cut_t], t0, cut_t))
                cut_s, t0 = starts[cut_t], cut_t
        units.append((cut_s, e, t0, t1))
    chunks: list[tuple[tuple[int, int], tuple[int, int]]] = []
    i = 0
    while i < len(units):
        j, used = i, 0
        while j < len(units) and used + units[j][3] - units[j][2] <= budget:
            used += units[j][3] - units[j][2]
            j += 1
        last = j - 1  # every unit fits alone, so j > i
        chunks.append(((units[i][0], units[last][1]), (units[i][2], units[last][3])))
        if j >= len(units):
            break
        # One unit of overlap, when it fits next to the next unit and makes progress.
        overlap = units[last][3] - units[last][2] + units[j][3] - units[j][2] <= budget
        i = last if overlap and last > i else j
    return chunks


@dataclass(frozen=True, eq=False)
class ChunkScores:
    """Scores of one (premise, hypothesis) pair and of each chunk of its premise.

    Attributes:
        probabilities: ``(3,)`` float32 aggregated probabilities (entailment, neutral,
            contradiction): the row :meth:`NLIDetector.predict` returns.
        chunk_spans: ``(start, end)`` character offsets of each chunk in the premise; in
            order, overlapping or touching, together covering the whole premise.
        chunk_probabilities: ``(k, 3)`` float32 probabilities of each chunk.
        best_chunk: Index of the chunk whose row :func:`aggregate_chunks` returned.

    Example:
        >>> s = ChunkScores(np.array([0.7, 0.2, 0.1]), ((0, 9),), np.array([[0.7, 0.2, 0.1]]), 0)
        >>> s.to_dict()["chunk_spans"]
        [[0, 9]]
    """

    probabilities: np.ndarray
    chunk_spans: tuple[tuple[int, int], ...]
    chunk_probabilities: np.ndarray
    best_chunk: int

    def __post_init__(self) -> None:
        probs = np.array(self.probabilities, dtype=np.float32)
        chunks = np.array(self.chunk_probabilities, dtype=np.float32)
        if probs.shape != (3,):
            raise ValueError(f"probabilities must have shape (3,), got {probs.shape}")
        if chunks.shape != (len(self.chunk_spans), 3) or not self.chunk_spans:
            raise ValueError(f"chunk_probabilities must have shape ({len(self.chunk_spans)}, "
                             f"3) with at least one chunk, got {chunks.shape}")
        if not isinstance(self.best_chunk, (int, np.integer)) or isinstance(self.best_chunk, bool) \
                or not 0 <= self.best_chunk < len(self.chunk_spans):
            raise ValueError(f"best_chunk must index a chunk, got {self.best_chunk!r}")
        _check_rows("probabilities", probs)
        _check_rows("chunk_probabilities", chunks)
        probs.setflags(write=False)
        chunks.setflags(write=False)
        object.__setattr__(self, "probabilities", probs)
        object.__setattr__(self, "chunk_probabilities", chunks)
        object.__setattr__(self, "chunk_spans", _spans("chunk_spans", self.chunk_spans))
        object.__setattr__(self, "best_chunk", int(self.best_chunk))

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (lists of floats)."""
        return {"probabilities": self.probabilities.tolist(),
                "chunk_spans": [list(s) for s in self.chunk_spans],
                "chunk_probabilities": self.chunk_probabilities.tolist(),
                "best_chunk": self.best_chunk}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChunkScores:
        """Inverse of :meth:`to_dict`."""
        return cls(np.asarray(data["probabilities"]),
                   tuple(tuple(s) for s in data["chunk_spans"]),
                   np.asarray(data["chunk_probabilities"]), data["best_chunk"])


#: Former name of :class:`ChunkScores`.
PairScores = ChunkScores


@dataclass(frozen=True, eq=False)
class SentenceScores:
    """Scores of one (premise, hypothesis) pair scored sentence by sentence.

    Attributes:
        probabilities: ``(3,)`` float32 probabilities of the whole hypothesis
            (:func:`aggregate_sentences` of the sentence rows): the row
            :meth:`NLIDetector.predict` returns when it scores sentences.
        sentence_spans: ``(start, end)`` character offsets of each hypothesis sentence
            (:func:`hypothesis_sentences`); one span covering the hypothesis when it is one
            sentence.
        sentences: One :class:`ChunkScores` per sentence: that sentence against every chunk
            of the premise.

    Example:
        >>> c = ChunkScores(np.array([0.7, 0.2, 0.1]), ((0, 9),), np.array([[0.7, 0.2, 0.1]]), 0)
        >>> SentenceScores(c.probabilities, ((0, 12),), (c,)).to_dict()["sentence_spans"]
        [[0, 12]]
    """

    probabilities: np.ndarray
    sentence_spans: tuple[tuple[int, int], ...]
    sentences: tuple[ChunkScores, ...]

    def __post_init__(self) -> None:
        probs = np.array(self.probabilities, dtype=np.float32)
        if probs.shape != (3,):
            raise ValueError(f"probabilities must have shape (3,), got {probs.shape}")
        if not self.sentences or len(self.sentences) != len(self.sentence_spans):
            raise ValueError(f"sentences must hold one ChunkScores per sentence span "
                             f"({len(self.sentence_spans)}), got {len(self.sentences)}")
        bad = [type(c).__name__ for c in self.sentences if not isinstance(c, ChunkScores)]
        if bad:
            raise TypeError(f"sentences must hold ChunkScores, got {bad[0]}")
        _check_rows("probabilities", probs)
        probs.setflags(write=False)
        object.__setattr__(self, "probabilities", probs)
        object.__setattr__(self, "sentence_spans", _spans("sentence_spans", self.sentence_spans))
        object.__setattr__(self, "sentences", tuple(self.sentences))

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (lists of floats)."""
        return {"probabilities": self.probabilities.tolist(),
                "sentence_spans": [list(s) for s in self.sentence_spans],
                "sentences": [c.to_dict() for c in self.sentences]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SentenceScores:
        """Inverse of :meth:`to_dict`."""
        return cls(np.asarray(data["probabilities"]),
                   tuple(tuple(s) for s in data["sentence_spans"]),
                   tuple(ChunkScores.from_dict(c) for c in data["sentences"]))


def _check_rows(name: str, rows: np.ndarray) -> None:
    """Probabilities must be finite and in [0, 1] (each row need not sum to 1 exactly)."""
    if not np.isfinite(rows).all() or (rows < 0).any() or (rows > 1 + 1e-5).any():
        raise ValueError(f"{name} must be finite probabilities in [0, 1], got {rows.tolist()}")


def _spans(name: str, spans: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """``spans`` (rows of a numpy array too), each checked as a ``verifier.types`` span."""
    return tuple(_check_span(f"{name}[{k}]", tuple(sp) if isinstance(sp, np.ndarray) else sp)
                 for k, sp in enumerate(spans))


@dataclass(frozen=True)
class _PairTemplate:
    """How the tokenizer wraps a pair: ``prefix + A + middle + B + suffix`` (+ type ids)."""

    prefix: tuple[int, ...]
    middle: tuple[int, ...]
    suffix: tuple[int, ...]
    types: tuple[int, int, int, int, int]  # token type of prefix, A, middle, B, suffix

    @property
    def n_special(self) -> int:
        return len(self.prefix) + len(self.middle) + len(self.suffix)

    def build(self, a: Sequence[int], b: Sequence[int]) -> tuple[list[int], list[int]]:
        ids = [*self.prefix, *a, *self.middle, *b, *self.suffix]
        tp, ta, tm, tb, ts = self.types
        types = ([tp] * len(self.prefix) + [ta] * len(a) + [tm] * len(self.middle)
                 + [tb] * len(b) + [ts] * len(self.suffix))
        return ids, types


def _find(seq: Sequence[int], sub: Sequence[int], start: int = 0) -> int:
    for i in range(start, len(seq) - len(sub) + 1):
        if list(seq[i : i + len(sub)]) == list(sub):
            return i
    return -1


def _learn_template(tok: Any) -> tuple[_PairTemplate | None, int]:
    """Learn the pair template from two probe pairs; ``(None, n_special)`` if irregular."""
    probes = [("a b c", "d e"), ("e d", "c b a a")]
    plain = tok([p for p, _ in probes] + [h for _, h in probes], add_special_tokens=False,
                verbose=False)["input_ids"]
    full = tok([p for p, _ in probes], [h for _, h in probes], return_token_type_ids=True,
               verbose=False)
    a, b = plain[0], plain[2]
    ids, types = full["input_ids"][0], full["token_type_ids"][0]
    n_special = len(ids) - len(a) - len(b)
    p = _find(ids, a)
    q = _find(ids, b, p + len(a)) if p >= 0 else -1
    if p < 0 or q < 0 or not a or not b:
        return None, n_special
    segments = [(0, p), (p, p + len(a)), (p + len(a), q), (q, q + len(b)), (q + len(b), len(ids))]
    seg_types = []
    for s, e in segments:
        values = set(types[s:e])
        if len(values) > 1:
            return None, n_special
        seg_types.append(values.pop() if values else 0)
    template = _PairTemplate(tuple(ids[:p]), tuple(ids[p + len(a) : q]),
                             tuple(ids[q + len(b) :]), tuple(seg_types))  # type: ignore[arg-type]
    check = template.build(plain[1], plain[3])
    if check != (list(full["input_ids"][1]), list(full["token_type_ids"][1])):
        return None, n_special
    return template, n_special


@dataclass
class _Loaded:
    model: Any
    tokenizer: Any
    label_map: LabelMap
    device: str
    dtype: str
    window: int
    chunk_tokens: int
    template: _PairTemplate | None
    n_special: int
    input_names: tuple[str, ...]
    pad_id: int
    hypothesis_sentences: bool


def _is_chunk_size(value: Any) -> bool:
    """Whether ``value`` is a usable number of premise tokens per chunk."""
    return is_int(value) and value >= MIN_EVIDENCE_TOKENS


def local_model_path(name: str) -> str:
    """``name`` to load a checkpoint from: a local folder (``~`` expanded) or a Hub id.

    A name that looks like a local path (absolute, starting with ``./``, ``../`` or ``~``,
    or of three or more parts whose parent folder exists: a Hub id is ``org/name``, which
    is left to the Hub even when a folder ``org`` is here) must be an existing folder: the
    Hub would only answer that it is no valid repository id.

    Raises:
        ModelLoadError: It looks like a local path and is no folder; the message names it.

    Example:
        >>> local_model_path("cross-encoder/nli-deberta-v3-small")
        'cross-encoder/nli-deberta-v3-small'
        >>> local_model_path("/nonexistent/model")
        Traceback (most recent call last):
        ...
        verifier.errors.ModelLoadError: could not load the NLI model '/nonexistent/model': \
no such folder: /nonexistent/model
    """
    shown = os.path.expanduser(name)  # "./model" stays "./model" in the message
    path = Path(shown)
    looks_local = (path.is_absolute() or name in (".", "..", "~")
                   or name.startswith(("./", "../", "~/", ".\\", "..\\", "~\\"))
                   or path.exists()
                   or (len(path.parts) > 2 and path.parent.is_dir()))
    if not looks_local:
        return name
    if not path.exists():
        raise ModelLoadError(f"could not load the NLI model {name!r}: no such folder: {shown}")
    if not path.is_dir():
        raise ModelLoadError(f"could not load the NLI model {name!r}: not a folder: {shown}")
    return shown


def check_max_length(value: object, name: str = "max_length") -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a window the model can use.

    An int of at least twice :data:`MIN_EVIDENCE_TOKENS`: room for a hypothesis and a premise.
    """
    least = 2 * MIN_EVIDENCE_TOKENS
    if not is_int(value) or value < least:
        raise ValueError(f"{name} must be an int >= {least}, got {value!r}")


def _can_grow(state: Any, max_length: int) -> bool:
    """Whether a larger ``max_length`` would widen the window (the model allows more)."""
    if state.window < max_length:
        return False
    limit = _position_limit(state.model.config, state.model)
    return limit is None or limit > max_length


def _position_limit(config: Any, model: Any) -> int | None:
    """The longest input the model's absolute positions allow (``None``: not known)."""
    limit = getattr(config, "max_position_embeddings", None)
    if not isinstance(limit, int) or limit <= 2:
        return None
    emb = getattr(getattr(getattr(model, "base_model", None), "embeddings", None),
                  "position_embeddings", None)
    pad = getattr(emb, "padding_idx", None)
    if isinstance(pad, int) and pad >= 0:
        limit -= pad + 1  # positions start after the padding index
    elif getattr(config, "model_type", "") in _PADDED_POSITIONS:
        limit -= 2
    return limit


@register("nli.hf.v1")
class NLIDetector:
    """Cross-encoder NLI detector over (evidence, claim) pairs.

    Args:
        model_name_or_path: Hugging Face id or local folder of a sequence-classification
            checkpoint; ``None`` is the embedded model (``models/nli-minilm-l6``).
        device: ``None`` (auto: cuda, mps, cpu) or a torch device name.
        batch_size: Pairs (chunks) per forward pass.
        max_length: Model window in tokens (capped by the model's position embeddings);
            longer premises are chunked, never truncated.
        chunk_tokens: Most premise tokens in one chunk: a premise longer than this is
            split into sentence-aligned chunks of at most this many tokens even when it
            would fit the window (small models trained on sentence pairs judge short chunks
            better). ``None`` reads the checkpoint's recommendation (``config.json`` key
            ``chunk_tokens``; the embedded model's was tuned on the train splits of
            SummEdits and FRANK, see its model card) and otherwise fills the window;
            ``"window"`` fills the window whatever the checkpoint recommends.
        hypothesis_sentences: Score a hypothesis of several sentences sentence by sentence
            and average the sentence rows (:meth:`predict_sentences`), so that a summary or
            paragraph is judged the way the model was trained, one sentence at a time.
            ``None`` reads the checkpoint's recommendation (``config.json`` key
            ``hypothesis_sentences``; the embedded model's, ``true``, was chosen on the train
            splits of FRANK and SummEdits, see its model card) and is off otherwise.
        dtype: ``None``/``"auto"`` (bf16 on GPUs and on CPUs with AMX/AVX512-BF16, else
            float32), ``"float32"``, ``"bfloat16"`` or ``"float16"``.
        id2label: Names of the checkpoint's outputs, overriding its ``config.id2label``
            (for checkpoints that ship generic ``LABEL_0`` names); ``None`` reads the config.
        trust_remote_code: Let a model repository run its own code (off by default).
        show_progress_bar: ``None`` shows a bar for large inputs on a terminal only.

    Inputs are sorted by length and batched by :func:`length_batches` (at most
    ``batch_size`` inputs and ``batch_size * 64`` padded tokens a batch); torch's thread
    settings are left as they are.

    Determinism: each batch is padded to its longest input, and bf16 / float16 kernels round
    differently for different padded shapes, so under a half-precision dtype (the ``auto``
    default on hardware that runs bf16 natively) a pair's probabilities can differ in about
    the third decimal (up to ~2e-3 measured) with the batch it lands in: with
    ``batch_size`` and with the other pairs of the call. The same pairs in the same call
    give the same result. Pass ``dtype="float32"`` for probabilities that do not depend on
    batching (to ~1e-6), at about half the speed on such CPUs.

    Example:
        >>> det = NLIDetector()  # cheap: nothing is loaded yet
        >>> NLIDetector.labels
        ('entailment', 'neutral', 'contradiction')
        >>> det.predict([("Paris is the capital of France.", "Paris is in France.")])
        ... # doctest: +SKIP
        array([[0.97, 0.02, 0.01]], dtype=float32)
    """

    labels: tuple[str, str, str] = LABELS

    def __init__(
        self,
        model_name_or_path: str | Path | None = None,
        *,
        device: str | None = None,
        batch_size: int = 64,
        max_length: int = 512,
        chunk_tokens: int | Literal["window"] | None = None,
        hypothesis_sentences: bool | None = None,
        dtype: str | None = None,
        id2label: Mapping[int | str, str] | None = None,
        trust_remote_code: bool = False,
        show_progress_bar: bool | None = None,
    ) -> None:
        if not isinstance(model_name_or_path, (str, Path, type(None))):
            raise TypeError("model_name_or_path must be a str, a Path or None, got "
                            f"{type(model_name_or_path).__name__}")
        if isinstance(model_name_or_path, str) and not model_name_or_path.strip():
            # '' loaded the embedded model: NLIDetector(os.environ.get("NLI_MODEL", ""))
            raise ValueError(f"model_name_or_path must name a model (None: the embedded "
                             f"one), got {model_name_or_path!r}")
        if device is not None and (not isinstance(device, str) or not device):
            raise ValueError(f"device must be None or a device name such as 'cpu', got "
                             f"{device!r}")
        if not is_int(batch_size) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        check_max_length(max_length)
        if chunk_tokens not in (None, "window") and not _is_chunk_size(chunk_tokens):
            raise ValueError(f"chunk_tokens must be None, 'window' or an int >= "
                             f"{MIN_EVIDENCE_TOKENS}, got {chunk_tokens!r}")
        if hypothesis_sentences is not None and not isinstance(hypothesis_sentences, bool):
            raise TypeError(f"hypothesis_sentences must be None or a bool, got "
                            f"{hypothesis_sentences!r}")
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {_DTYPES}, got {dtype!r}")
        if id2label is not None:
            if not isinstance(id2label, Mapping) or not id2label:
                raise ValueError(f"id2label must be a non-empty mapping, got {id2label!r}")
            ids: dict[int, str] = {}
            for k, v in id2label.items():
                # an int, or the text of one as JSON writes keys ("0"): not 0.9 read as 0
                if not (is_int(k) or (isinstance(k, str) and k.strip().isdigit())):
                    raise ValueError(f"id2label keys must be ints, got the key {k!r} in "
                                     f"{id2label!r}")
                if int(k) in ids:  # 0 and "0": one of the two names was lost
                    raise ValueError(f"id2label gives the output {int(k)} twice, got "
                                     f"{id2label!r}")
                ids[int(k)] = str(v)
            id2label = {k: v for k, v in ids.items()}  # (typed as the argument)
        if not isinstance(trust_remote_code, bool):
            raise TypeError(f"trust_remote_code must be a bool, got {trust_remote_code!r}")
        if show_progress_bar is not None and not isinstance(show_progress_bar, bool):
            raise TypeError(f"show_progress_bar must be None or a bool, got "
                            f"{show_progress_bar!r}")
        self.model_name_or_path = None if model_name_or_path is None else str(model_name_or_path)
        self.device = device
        self.batch_size = int(batch_size)
        self.max_length = int(max_length)
        self.chunk_tokens = int(chunk_tokens) if is_int(chunk_tokens) else chunk_tokens
        self.hypothesis_sentences = hypothesis_sentences
        self.dtype = dtype
        self.id2label: dict[int, str] | None = id2label  # type: ignore[assignment]
        self.trust_remote_code = trust_remote_code
        self.show_progress_bar = show_progress_bar
        self._model: Any = None
        self._loaded: _Loaded | None = None

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.to_dict()["init_parameters"].items())
        return f"NLIDetector({args})"

    def to_dict(self) -> dict[str, Any]:
        """Serialisable configuration: ``{"type": "nli.hf.v1", "init_parameters": {...}}``."""
        return {
            "type": "nli.hf.v1",
            "init_parameters": {
                "model_name_or_path": self.model_name_or_path,
                "device": self.device,
                "batch_size": self.batch_size,
                "max_length": self.max_length,
                "chunk_tokens": self.chunk_tokens,
                "hypothesis_sentences": self.hypothesis_sentences,
                "dtype": self.dtype,
                "id2label": (None if self.id2label is None
                             else {str(k): v for k, v in self.id2label.items()}),
                "trust_remote_code": self.trust_remote_code,
                "show_progress_bar": self.show_progress_bar,
            },
        }

    # ------------------------------------------------------------------ loading
    def warm_up(self) -> None:
        """Load tokenizer and model once (the first prediction calls it).

        Raises:
            ModelLoadError: The checkpoint or its tokenizer cannot be loaded, or the
                tokenizer is not a fast one (chunking needs character offsets).
            LabelMappingError: Its labels cannot be mapped (see :func:`map_labels`).
        """
        if self._loaded is not None:
            return
        with MODEL_LOAD_LOCK:
            if self._loaded is None:
                self._load()

    def _load(self) -> None:
        import torch
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

        path = (local_model_path(self.model_name_or_path) if self.model_name_or_path
                else str(embedded_model_dir(DEFAULT_NLI_MODEL)))
        device = resolve_device(self.device)
        dtype = resolve_dtype(self.dtype, device)
        remote = self.trust_remote_code
        try:
            config = AutoConfig.from_pretrained(path, trust_remote_code=remote)
        except (OSError, ValueError) as exc:
            raise ModelLoadError(f"could not load the NLI model config {path!r}: {exc}") from exc
        id2label = self.id2label if self.id2label is not None else config.id2label
        label_map = map_labels(id2label, config.num_labels)  # fail before loading weights
        kwargs: dict[str, Any] = {}
        local = Path(path)
        if local.is_dir() and any(local.glob("*.safetensors")):
            kwargs["use_safetensors"] = True
        try:
            tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=remote)
            model = AutoModelForSequenceClassification.from_pretrained(
                path, config=config, trust_remote_code=remote, dtype=getattr(torch, dtype),
                **kwargs)
        except (OSError, ValueError) as exc:
            raise ModelLoadError(f"could not load the NLI model {path!r}: {exc}") from exc
        if not getattr(tokenizer, "is_fast", False):
            raise ModelLoadError(
                f"the tokenizer of {path!r} is not a fast (Rust) tokenizer; chunking long "
                "evidence needs its character offsets: add a tokenizer.json to the folder"
            )
        model.to(device).eval()
        template, n_special = _learn_template(tokenizer)
        if template is None:
            logger.warning("the tokenizer of %s wraps pairs irregularly; chunks are "
                           "re-tokenised as text (slower)", path)
        input_names = tuple(n for n in ("input_ids", "token_type_ids", "attention_mask")
                            if n in tokenizer.model_input_names or n == "input_ids")
        pad_id = tokenizer.pad_token_id
        window = self._window_of(model.config, model)
        self._loaded = _Loaded(model, tokenizer, label_map, device, dtype, window,
                               self._chunk_tokens_of(config, window), template, n_special,
                               input_names, 0 if pad_id is None else int(pad_id),
                               self._hypothesis_sentences_of(config))
        self._model = model
        logger.info("loaded NLI model %s on %s (%s), labels %s, window %d tokens, chunks of "
                    "at most %d premise tokens", path, device, dtype, label_map.kind,
                    window, self._loaded.chunk_tokens)

    def _window_of(self, config: Any, model: Any) -> int:
        """Longest input: ``max_length`` capped by the model's absolute positions.

        RoBERTa-style models number positions from ``padding_idx + 1``, which their position
        embedding declares (read from the loaded model; for a model whose embedding module
        is not found there, a list of such model types stands in).
        """
        limit = _position_limit(config, model)
        return self.max_length if limit is None else min(self.max_length, limit)

    def _chunk_tokens_of(self, config: Any, window: int) -> int:
        """Premise tokens per chunk: the argument, else the checkpoint's, else the window."""
        value = self.chunk_tokens
        if value is None:
            value = getattr(config, "chunk_tokens", None)
            if value is not None and not _is_chunk_size(value):
                raise ModelLoadError(f"the model config's chunk_tokens must be an int >= "
                                     f"{MIN_EVIDENCE_TOKENS}, got {value!r}")
        return window if value is None or value == "window" else min(int(value), window)

    def _hypothesis_sentences_of(self, config: Any) -> bool:
        """Sentence-by-sentence hypotheses: the argument, else the checkpoint's, else off."""
        if self.hypothesis_sentences is not None:
            return self.hypothesis_sentences
        value = getattr(config, "hypothesis_sentences", None)
        if value is not None and not isinstance(value, bool):
            raise ModelLoadError(f"the model config's hypothesis_sentences must be true or "
                                 f"false, got {value!r}")
        return bool(value)

    @property
    def resolved_hypothesis_sentences(self) -> bool:
        """Whether :meth:`predict` scores hypotheses sentence by sentence (loads the model)."""
        return self._state().hypothesis_sentences

    @property
    def resolved_chunk_tokens(self) -> int:
        """Most premise tokens in one chunk, as used (loads the model)."""
        return self._state().chunk_tokens

    def _state(self) -> _Loaded:
        self.warm_up()
        if self._loaded is None:  # pragma: no cover - warm_up either loads or raises
            raise ModelLoadError("the NLI model is not loaded")
        return self._loaded

    @property
    def resolved_dtype(self) -> str:
        """The dtype actually used (loads the model)."""
        return self._state().dtype

    @property
    def resolved_device(self) -> str:
        """The device actually used (loads the model)."""
        return self._state().device

    @property
    def label_map(self) -> LabelMap:
        """How the checkpoint's outputs map to (entailment, neutral, contradiction)."""
        return self._state().label_map

    @property
    def window(self) -> int:
        """Tokens per model input, special tokens included (loads the model)."""
        return self._state().window

    # ------------------------------------------------------------------ prediction
    def predict(self, pairs: Iterable[tuple[str, str]]) -> np.ndarray:
        """Score (premise, hypothesis) pairs.

        Args:
            pairs: ``(premise, hypothesis)`` pairs: the evidence first, the claim second.

        Returns:
            ``(n, 3)`` float32 probabilities, columns :attr:`labels`, rows in input order and
            summing to 1. A premise too long for the window is chunked and its row
            aggregated (:func:`aggregate_chunks`); with ``hypothesis_sentences`` on, a
            hypothesis of several sentences is scored sentence by sentence and its row
            aggregated (:func:`aggregate_sentences`). An empty input gives a ``(0, 3)`` array.

        Raises:
            TypeError: ``pairs`` is not a sequence of pairs of str (the message names the
                index).
            PairInputError: (a ``ValueError``) An empty premise or hypothesis, one with no
                tokens, or a hypothesis too long to leave room for evidence in the window
                (the message names the index; the error's ``index`` and ``part`` say it).
        """
        scores = self.predict_scores(pairs)
        if not scores:
            return np.zeros((0, 3), dtype=np.float32)
        return np.stack([s.probabilities for s in scores]).astype(np.float32, copy=False)

    def predict_scores(self, pairs: Iterable[tuple[str, str]]
                       ) -> Sequence[ChunkScores | SentenceScores]:
        """Score pairs as :meth:`predict` does, keeping the scores behind each row.

        Args:
            pairs: ``(premise, hypothesis)`` pairs, as for :meth:`predict`.

        Returns:
            One score object per pair, in input order, whose ``probabilities`` are
            :meth:`predict`'s row: a :class:`SentenceScores` with ``hypothesis_sentences``
            on (:meth:`predict_sentences`), else a :class:`ChunkScores`
            (:meth:`predict_chunks`).
        """
        checked = _validate_pairs(pairs)
        if not checked:
            return []
        if self._state().hypothesis_sentences:
            return self._sentence_scores(checked)
        return self._chunk_scores(checked)

    def predict_chunks(self, pairs: Iterable[tuple[str, str]]) -> list[ChunkScores]:
        """Score pairs and keep the per-chunk scores.

        Args:
            pairs: ``(premise, hypothesis)`` pairs, as for :meth:`predict`.

        Returns:
            One :class:`ChunkScores` per pair, in input order. The hypothesis is scored
            whole, whatever ``hypothesis_sentences`` says (see :meth:`predict_sentences`).
        """
        return self._chunk_scores(_validate_pairs(pairs))

    def predict_sentences(self, pairs: Iterable[tuple[str, str]]) -> list[SentenceScores]:
        """Score pairs hypothesis sentence by hypothesis sentence.

        Each sentence of a hypothesis (:func:`hypothesis_sentences`) is scored against every
        chunk of the premise, as by :meth:`predict_chunks`; the pair's row is the
        :func:`aggregate_sentences` of the sentence rows. A one-sentence hypothesis is
        scored as it is, so its row equals :meth:`predict_chunks`'.

        Args:
            pairs: ``(premise, hypothesis)`` pairs, as for :meth:`predict`.

        Returns:
            One :class:`SentenceScores` per pair, in input order.
        """
        return self._sentence_scores(_validate_pairs(pairs))

    def _sentence_scores(self, checked: list[tuple[str, str]]) -> list[SentenceScores]:
        """:meth:`predict_sentences` of validated pairs."""
        sub: list[tuple[str, str]] = []
        names: list[str] = []
        spans: list[list[tuple[int, int]]] = []
        for i, (prem, hyp) in enumerate(checked):
            sents = hypothesis_sentences(hyp)
            if len(sents) <= 1:  # one sentence: the hypothesis as it is, named as given
                sents = [(0, len(hyp))]
            sub.extend((prem, hyp[s:e]) for s, e in sents)
            names.extend([f"pairs[{i}]"] if len(sents) == 1 else
                         [f"pairs[{i}] (hypothesis sentence {k})" for k in range(len(sents))])
            spans.append(sents)
        try:
            scored = self._chunk_scores(sub, names)
        except PairInputError as exc:  # index the pair, not the sentence
            owner = [i for i, sents in enumerate(spans) for _ in sents][exc.index]
            raise PairInputError(str(exc), index=owner, part=exc.part,
                                 reason=exc.reason) from None
        out: list[SentenceScores] = []
        k = 0
        for sents in spans:
            rows = scored[k : k + len(sents)]
            k += len(sents)
            probs = aggregate_sentences(np.stack([r.probabilities for r in rows]))
            out.append(SentenceScores(probs, tuple(sents), tuple(rows)))
        return out

    def _chunk_scores(self, checked: list[tuple[str, str]],
                      names: Sequence[str] | None = None) -> list[ChunkScores]:
        """:meth:`predict_chunks` of validated pairs; ``names`` label them in errors."""
        if not checked:
            return []
        state = self._state()
        owners, spans, features = self._plan(checked, state, names)
        probs = self._score(features, state)
        out: list[ChunkScores] = []
        k = 0
        for i in range(len(checked)):
            n = len(spans[i])
            cp = probs[k : k + n]
            k += n
            best = _best_chunk(cp)
            out.append(ChunkScores(cp[best], tuple(spans[i]), cp, best))
        return out

    def _plan(self, pairs: list[tuple[str, str]], state: _Loaded,
              names: Sequence[str] | None = None
              ) -> tuple[list[int], list[list[tuple[int, int]]], list[tuple[list[int], list[int]]]]:
        """Tokenise once and cut premises into chunks: owners, spans and (ids, type ids).

        ``names``: how errors name each pair (default ``pairs[i]``).
        """
        def name(i: int) -> str:
            return names[i] if names is not None else f"pairs[{i}]"

        tok = state.tokenizer
        premises = [p for p, _ in pairs]
        hyps = [h for _, h in pairs]
        p_enc = tok(premises, add_special_tokens=False, truncation=False,
                    return_offsets_mapping=True, return_attention_mask=False,
                    return_token_type_ids=False, verbose=False)
        h_ids = tok(hyps, add_special_tokens=False, truncation=False,
                    return_attention_mask=False, return_token_type_ids=False,
                    verbose=False)["input_ids"]
        owners: list[int] = []
        spans: list[list[tuple[int, int]]] = []
        token_ranges: list[tuple[int, int]] = []
        for i, (prem, ids) in enumerate(zip(premises, p_enc["input_ids"], strict=True)):
            for part, n_tokens in (("premise", len(ids)), ("hypothesis", len(h_ids[i]))):
                if n_tokens == 0:  # e.g. only zero-width characters: nothing to read
                    text = prem if part == "premise" else hyps[i]
                    reason = f"a {part} with no tokens"
                    raise PairInputError(f"{name(i)} has {reason}: {text[:80]!r}", index=i,
                                         part=part, reason=reason)  # type: ignore[arg-type]
            fit = state.window - state.n_special - len(h_ids[i])
            budget = min(fit, state.chunk_tokens)
            if len(ids) <= budget:
                plan = [((0, len(prem)), (0, len(ids)))]
            elif fit < MIN_EVIDENCE_TOKENS:
                reason = (
                    f"a hypothesis of {len(h_ids[i])} tokens: next to "
                    f"{state.n_special} special tokens it leaves {max(fit, 0)} of the "
                    f"{state.window}-token window for the premise (at least "
                    f"{MIN_EVIDENCE_TOKENS} needed); shorten the hypothesis"
                    + (" or raise max_length" if _can_grow(state, self.max_length)
                       else " (the window is the model's longest input)")
                )
                raise PairInputError(f"{name(i)} has {reason}", index=i, part="hypothesis",
                                     reason=reason)
            else:
                plan = plan_chunks(_word_starts(p_enc["offset_mapping"][i], prem),
                                   sentence_spans(prem), budget)
            spans.append([s for s, _ in plan])
            for _, rng in plan:
                owners.append(i)
                token_ranges.append(rng)
        if state.template is not None:
            features = [state.template.build(p_enc["input_ids"][i][a:b], h_ids[i])
                        for i, (a, b) in zip(owners, token_ranges, strict=True)]
        else:  # irregular pair template: tokenise the chunk texts as pairs
            texts = [premises[i][s:e] for i, sp in enumerate(spans) for s, e in sp]
            enc = tok(texts, [hyps[i] for i in owners], truncation=False,
                      return_token_type_ids=True, return_attention_mask=False, verbose=False)
            features = list(zip(enc["input_ids"], enc["token_type_ids"], strict=True))
            too_long = [j for j, (ids, _) in enumerate(features) if len(ids) > state.window]
            if too_long:
                j = too_long[0]
                reason = (f"a premise chunk that re-tokenised to {len(features[j][0])} "
                          f"tokens, over the {state.window}-token window (this tokenizer "
                          "wraps pairs irregularly); split the premise yourself")
                raise PairInputError(f"{name(owners[j])} has {reason}", index=owners[j],
                                     part="premise", reason=reason)
        return owners, spans, features

    def _score(self, features: list[tuple[list[int], list[int]]], state: _Loaded
               ) -> np.ndarray:
        """Run the model over ``(ids, type ids)`` inputs: ``(n, 3)`` probabilities."""
        import torch

        lengths = np.fromiter((len(ids) for ids, _ in features), dtype=np.int64,
                              count=len(features))
        batches: Iterable[np.ndarray] = length_batches(
            lengths, self.batch_size, self.batch_size * TOKENS_PER_INPUT)
        show = self.show_progress_bar
        if show is None:
            show = len(lengths) > 20 * self.batch_size and sys.stderr.isatty()
        if show:
            from tqdm.auto import tqdm

            batches = tqdm(batches, desc="NLI", unit="batch")
        n_labels = state.model.config.num_labels
        logits = np.empty((len(features), n_labels), dtype=np.float32)
        with torch.inference_mode():
            for b in batches:
                width = min(_round8(int(lengths[b].max())), state.window)
                ids = np.full((len(b), width), state.pad_id, dtype=np.int64)
                types = np.zeros((len(b), width), dtype=np.int64)
                mask = np.zeros((len(b), width), dtype=np.int64)
                for r, j in enumerate(b):
                    seq, tt = features[j]
                    ids[r, : len(seq)] = seq
                    types[r, : len(seq)] = tt
                    mask[r, : len(seq)] = 1
                arrays = {"input_ids": ids, "token_type_ids": types, "attention_mask": mask}
                inputs = {k: torch.from_numpy(arrays[k]).to(state.device)
                          for k in state.input_names}
                logits[b] = state.model(**inputs).logits.float().cpu().numpy()
        return to_three_columns(logits, state.label_map)


#: Model types whose positions start after the padding index (used when the loaded model's
#: position embedding does not say).
_PADDED_POSITIONS = ("roberta", "xlm-roberta", "xlm-roberta-xl", "roberta-prelayernorm",
                     "camembert", "mpnet", "longformer", "data2vec-text", "xmod")


def _round8(n: int) -> int:
    # Widths rounded up to a multiple of 8: fewer distinct shapes keep the CPU allocator
    # from fragmenting over long runs (and suit the matmul kernels).
    return -(-n // 8) * 8


def length_batches(lengths: np.ndarray, batch_size: int, max_tokens: int) -> list[np.ndarray]:
    """Group input indices into batches of similar length (dynamic padding).

    Inputs are sorted by length (stable); a batch takes the next inputs while it holds at
    most ``batch_size`` of them and at most ``max_tokens`` padded tokens (inputs x width,
    widths rounded up to a multiple of 8). Long inputs thus come in smaller batches, which
    keeps padding and memory in check; one input longer than ``max_tokens`` is a batch alone.

    Args:
        lengths: ``(n,)`` token count of each input.
        batch_size: Most inputs in a batch.
        max_tokens: Most padded tokens in a batch.

    Returns:
        Index arrays into ``lengths``, shortest inputs first; together a permutation.

    Example:
        >>> [b.tolist() for b in length_batches(np.array([5, 40, 6, 7]), 2, 64)]
        [[0, 2], [3], [1]]
    """
    order = np.argsort(np.asarray(lengths), kind="stable")
    batches: list[np.ndarray] = []
    start = 0
    for k in range(len(order)):
        count = k - start + 1
        if k > start and (count > batch_size
                          or count * _round8(int(lengths[order[k]])) > max_tokens):
            batches.append(order[start:k])
            start = k
    if len(order):
        batches.append(order[start:])
    return batches


def _validate_pairs(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
        raise TypeError(f"pairs must be a sequence of (premise, hypothesis) pairs, got "
                        f"{type(pairs).__name__}")
    out = []
    for i, pair in enumerate(pairs):
        if (isinstance(pair, (str, bytes)) or not isinstance(pair, (Sequence, np.ndarray))
                or len(pair) != 2):
            raise TypeError(f"pairs[{i}] must be a (premise, hypothesis) pair, got {pair!r:.80}")
        prem, hyp = pair
        if not isinstance(prem, str) or not isinstance(hyp, str):
            raise TypeError(f"pairs[{i}] must hold two str, got ({type(prem).__name__}, "
                            f"{type(hyp).__name__})")
        for part, text in (("premise", prem), ("hypothesis", hyp)):
            if not text.strip():
                raise PairInputError(f"pairs[{i}] has an empty {part}", index=i,
                                     part=part, reason=f"an empty {part}")  # type: ignore[arg-type]
            at = lone_surrogate(text)
            if at is not None:
                reason = f"a {part} with a lone surrogate {text[at]!r} at position {at}"
                raise PairInputError(surrogate_message(f"pairs[{i}] {part}", text, at), index=i,
                                     part=part, reason=reason)  # type: ignore[arg-type]
        out.append((prem, hyp))
    return out
