"""Pair each claim with its best evidence sentences among the retrieved passages.

Retrieved passages are chunks with a span into their document; they are split into sentences
(offsets kept), and every claim is scored against every sentence by dense cosine similarity
plus lexical overlap. The result is sentence-level :class:`~verifier.types.Evidence` whose
``span`` indexes the ORIGINAL document: ``document[start:end] == content``.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from verifier.checking import is_int, is_real
from verifier.registry import register
from verifier.text import is_blank, sentence_pieces, trimmed_sentence_spans
from verifier.types import Claim, ClaimEvidence, Evidence

logger = logging.getLogger(__name__)


@runtime_checkable
class Encoder(Protocol):
    """Anything with ``encode(texts) -> (n, dim)`` unit-norm embeddings (a DenseRetriever)."""

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``."""
        ...


class CachedEncoder:
    """An :class:`Encoder` that remembers the embeddings of recent texts.

    The verifier embeds the same claims and sentences twice (to pair them, then for the
    alignment cosines); sharing one ``CachedEncoder`` embeds each text once. Thread-safe.

    A text keeps the embedding of the first batch it was embedded in. Under a half-precision
    encoder (the embedded model's ``auto`` dtype is bf16 on hardware that runs it natively)
    that embedding can differ in about the third decimal with the other texts of that batch,
    so a cosine can depend on what was embedded before; wrap
    ``DenseRetriever(dtype="float32")`` for embeddings that do not depend on batching.

    Args:
        encoder: The encoder to wrap, or a zero-argument callable that makes it on first use
            (``None``: the embedded MiniLM, created on first use).
        max_items: Texts remembered (least recently used ones are forgotten); > 0.

    Example:
        >>> class Count:
        ...     calls = 0
        ...     def encode(self, texts):
        ...         self.calls += len(texts)
        ...         return np.ones((len(texts), 2), dtype=np.float32)
        >>> inner = Count()
        >>> enc = CachedEncoder(inner)
        >>> _ = enc.encode(["a", "b"]); _ = enc.encode(["b", "c"])
        >>> inner.calls
        3
    """

    def __init__(self, encoder: Encoder | Callable[[], Encoder] | None = None, *,
                 max_items: int = 20_000) -> None:
        if not is_int(max_items) or max_items <= 0:
            raise ValueError(f"max_items must be an int > 0, got {max_items!r}")
        self._inner: Encoder | None = None
        self._factory: Callable[[], Encoder] | None = None
        if callable(getattr(encoder, "encode", None)):
            self._inner = encoder  # type: ignore[assignment]  # has encode(): an Encoder
        elif callable(encoder):
            self._factory = encoder
        elif encoder is not None:
            raise TypeError(f"encoder must have an encode() method or be a factory, got "
                            f"{encoder!r}")
        self.max_items = int(max_items)
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.RLock()

    @property
    def encoder(self) -> Encoder:
        """The wrapped encoder (made on first use)."""
        with self._lock:
            if self._inner is None and self._factory is not None:
                self._inner, self._factory = self._factory(), None
            elif self._inner is None:
                from rag.retrieval import DenseRetriever

                self._inner = DenseRetriever()
            return self._inner

    def clear(self) -> None:
        """Forget every cached embedding."""
        with self._lock:
            self._cache.clear()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts`` (cached ones are not recomputed)."""
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of str, got str")
        texts = list(texts)
        with self._lock:  # held while encoding: the model is busy anyway
            encoder = self.encoder
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            if missing:
                fresh = np.asarray(encoder.encode(missing), dtype=np.float32)
                for t, e in zip(missing, fresh, strict=True):
                    self._cache[t] = e
            rows = []
            for t in texts:
                self._cache.move_to_end(t)
                rows.append(self._cache[t])
            while len(self._cache) > self.max_items:
                self._cache.popitem(last=False)
        if not rows:
            return np.asarray(encoder.encode([]), dtype=np.float32)
        return np.stack(rows)


def _locate(ev: Evidence, documents: Mapping[str, str] | None) -> tuple[str, int]:
    """The passage text and its offset in the document, checked against ``documents``."""
    if documents is None or ev.source_id not in documents:  # unchecked: its own span
        return ev.content, ev.span[0]
    doc = documents[ev.source_id]
    start, end = ev.span
    if doc[start:end] == ev.content:
        return ev.content, start
    at = doc.find(ev.content)  # a span into another text (e.g. a chunk): find the content
    if at < 0:
        raise ValueError(f"evidence from {ev.source_id!r} at span {ev.span} is not in that "
                         f"document: {ev.content[:80]!r}")
    logger.debug("evidence span %s of %r relocated to %d", ev.span, ev.source_id, at)
    return ev.content, at


#: The most characters of a sentence kept as one evidence unit (:func:`split_evidence`): a
#: longer one is cut into pieces. The longest sentence of FEVER's, HealthVer's and SciFact's
#: evidence is about 800 characters; text longer without a full stop is a list, a
#: transcript or text whose stops were lost, and read whole it would be one unit the
#: embedding model reads the first 256 tokens of and the NLI model reads in many chunks.
MAX_SENTENCE_CHARS = 1000
#: The most characters of a piece of such a sentence: about one of the embedded NLI model's
#: 96-token chunks, as much as the verifier reads an evidence sentence in
#: (``verifier.verify.CONTEXT_CHARS``), so that no unrelated part of the piece outweighs
#: the part that states a claim.
PIECE_CHARS = 400


def split_evidence(evidences: Sequence[Evidence], *,
                   documents: Mapping[str, str] | None = None,
                   max_chars: int | None = MAX_SENTENCE_CHARS) -> list[Evidence]:
    """Split passage-level evidence into sentence-level evidence with document spans.

    A passage's ``span`` gives its offset in the document, so each sentence's span is
    ``(passage_start + s, passage_start + e)``. With ``documents`` (source id -> original
    text), each passage is checked against its document (and found in it when its span does
    not match); a passage of a source ``documents`` lacks keeps its own span, unchecked.
    Duplicate sentences (same source, span and text, e.g. from overlapping chunks) are kept
    once; two different texts of one source are both kept even when their spans agree
    (passages given without real spans all start at 0). Each sentence keeps its passage's
    score and rank. A sentence longer than ``max_chars`` is cut into pieces of at most
    ``min(max_chars, PIECE_CHARS)`` characters, each ending at a clause boundary where one
    is (:func:`verifier.text.sentence_pieces`).

    Args:
        evidences: Retrieved passages.
        documents: Original documents by ``source_id`` (optional).
        max_chars: Most characters of a sentence kept as one unit (``None``: a sentence is
            one unit however long).

    Returns:
        Sentences in passage order.

    Raises:
        ValueError: A passage is not found in its document, or ``max_chars`` is not an
            int > 0 or ``None``.

    Example:
        >>> doc = "Intro. Paris is in France. Berlin is in Germany."
        >>> [(e.content, e.span) for e in split_evidence([Evidence(doc[7:48], "d", (7, 48))])]
        [('Paris is in France.', (7, 26)), ('Berlin is in Germany.', (27, 48))]
    """
    check_max_chars(max_chars)
    out: list[Evidence] = []
    seen: set[tuple[str, int, int, str]] = set()
    for ev in evidences:
        if not isinstance(ev, Evidence):
            raise TypeError(f"evidences must hold Evidence objects, got {type(ev).__name__}")
        content, base = _locate(ev, documents)
        for s, e in _units(content, max_chars):
            key = (ev.source_id, base + s, base + e, content[s:e])
            if key in seen or is_blank(content[s:e]):  # a line of a zero-width space: no text
                continue
            seen.add(key)
            out.append(Evidence(content[s:e], ev.source_id, (base + s, base + e), ev.score,
                                ev.rank))
    return out


def check_max_chars(value: object, name: str = "max_chars") -> int | None:
    """``value`` as an int > 0 or ``None``, else a ``ValueError`` naming ``name``."""
    if value is None:
        return None
    if not is_int(value) or value <= 0:
        raise ValueError(f"{name} must be an int > 0 or None, got {value!r}")
    return int(value)


def _units(text: str, max_chars: int | None) -> list[tuple[int, int]]:
    """Sentence spans of ``text``, a sentence over ``max_chars`` cut into pieces."""
    spans = trimmed_sentence_spans(text)
    if max_chars is None:
        return spans
    piece = min(max_chars, PIECE_CHARS)
    return [p for s, e in spans
            for p in ([(s, e)] if e - s <= max_chars else sentence_pieces(text, s, e, piece))]


#: The default least score of an evidence sentence (see :class:`EvidencePairer`).
MIN_SCORE = 0.15


def check_min_score(value: object, name: str = "min_score") -> float:
    """``value`` as a float in [0, 1], else a ``ValueError`` naming ``name`` and the value."""
    if not is_real(value) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value!r}")
    return float(value)


def _content_tokens(text: str) -> set[str]:
    from rag.retrieval import tokenize

    return set(tokenize(text))


@register("pairer.hybrid.v1")
class EvidencePairer:
    """For each claim, the top-k evidence sentences by dense + lexical similarity.

    ``score = dense_weight * cosine + (1 - dense_weight) * overlap``, where overlap is the
    share of the claim's content words (BM25 tokens: lower-case, stop-words removed) found in
    the sentence. Ties keep passage order.

    Only sentences whose score reaches ``min_score`` are evidence: an NLI model trained on
    SNLI-style data reads a sentence about something else as a *contradiction* of the claim
    (the embedded one gives 78% of the second-ranked sentences taken from another claim's
    document p(contradiction) > 0.5: ``pairing_tuning.json``), so an unrelated sentence must
    not be handed to the verifier as evidence. A claim none of whose sentences reach it gets
    no evidence, and the verifier says ``Insufficient_Info``: nothing retrieved is about it.

    Args:
        model_name_or_path: Sentence-transformers model (``None``: the embedded MiniLM);
            ignored when ``encoder`` is given. Loaded on first use.
        encoder: An object with ``encode(texts)`` to reuse (e.g. the retriever's dense part).
        top_k: Sentences kept per claim.
        dense_weight: Weight of the cosine similarity in [0, 1] (0: lexical only, no model).
        min_score: Least score of an evidence sentence, in [0, 1] (0: no floor, the top
            ``top_k`` whatever their score, negative cosines included). The default 0.15
            was chosen on FEVER's ``train`` split turned into 5-claim drafts
            (``models/recipes/tune_pairing.py`` -> ``pairing_tuning.json``): it keeps 87% of
            the sentences ranked after the best that come from the claim's own evidence and
            12% of those from other claims'.
        device: Torch device for the default encoder (``None``: auto).
        batch_size: Texts per encoding batch for the default encoder.
        max_sentence_chars: Most characters of a sentence kept as one evidence unit: a
            longer one is cut into pieces at clause boundaries (:func:`split_evidence`;
            ``None``: never cut).

    Example:
        >>> pairer = EvidencePairer(top_k=1)  # doctest: +SKIP
        >>> pairer.pair([Claim("Paris is in France.")], [Evidence("Paris is in France.", "d1",
        ...             (0, 19))])[0].evidence[0].span  # doctest: +SKIP
        (0, 19)
    """

    def __init__(self, model_name_or_path: str | None = None, *, encoder: Encoder | None = None,
                 top_k: int = 3, dense_weight: float = 0.5, min_score: float = MIN_SCORE,
                 device: str | None = None, batch_size: int = 64,
                 max_sentence_chars: int | None = MAX_SENTENCE_CHARS) -> None:
        if not is_int(top_k) or top_k <= 0:
            raise ValueError(f"top_k must be an int > 0, got {top_k!r}")
        if not is_int(batch_size) or batch_size <= 0:
            raise ValueError(f"batch_size must be an int > 0, got {batch_size!r}")
        if encoder is not None and not callable(getattr(encoder, "encode", None)):
            raise TypeError(f"encoder must have an encode() method, got {encoder!r}")
        self.model_name_or_path = model_name_or_path
        self.top_k = int(top_k)
        self.dense_weight = check_min_score(dense_weight, "dense_weight")
        self.min_score = check_min_score(min_score)
        self.device = device
        self.batch_size = int(batch_size)
        self.max_sentence_chars = check_max_chars(max_sentence_chars, "max_sentence_chars")
        self._encoder = encoder

    @property
    def encoder(self) -> Encoder:
        """The sentence encoder (the default one is created on first use)."""
        if self._encoder is None:
            from rag.retrieval import DenseRetriever

            self._encoder = DenseRetriever(self.model_name_or_path, device=self.device,
                                           batch_size=self.batch_size)
        return self._encoder

    def to_dict(self) -> dict[str, Any]:
        """Configuration (a given ``encoder`` object is not serialised)."""
        keys = ("model_name_or_path", "top_k", "dense_weight", "min_score", "device",
                "batch_size", "max_sentence_chars")
        return {"type": "pairer.hybrid.v1", "init_parameters": {k: getattr(self, k)
                                                                 for k in keys}}

    def pair(self, claims: Sequence[Claim], evidences: Sequence[Evidence], *,
             documents: Mapping[str, str] | None = None) -> list[ClaimEvidence]:
        """Return one :class:`ClaimEvidence` per claim, in claim order (best sentence first).

        Args:
            claims: The claims to support.
            evidences: Retrieved passages (each with a span into its document).
            documents: Original documents by ``source_id``, to check the spans (optional;
            evidence of a source it lacks keeps its own span, unchecked).

        Returns:
            ``len(claims)`` items; each holds up to ``top_k`` sentence-level evidences with
            ``score`` (the pairing score) and ``rank`` (0 = best). Without evidence, each claim
            gets an empty tuple. Every sentence scores at least ``min_score`` (a claim
            with none that does gets an empty tuple).
        """
        for c in claims:
            if not isinstance(c, Claim):
                raise TypeError(f"claims must hold Claim objects, got {type(c).__name__}")
        sentences = split_evidence(evidences, documents=documents,
                                   max_chars=self.max_sentence_chars)
        if not claims:
            return []
        if not sentences:
            return [ClaimEvidence(c, ()) for c in claims]
        if self.dense_weight > 0:
            emb = np.asarray(self.encoder.encode([c.text for c in claims]
                                                 + [s.content for s in sentences]),
                             dtype=np.float32)
            cos = emb[: len(claims)] @ emb[len(claims):].T  # (n_claims, n_sentences)
        else:
            cos = np.zeros((len(claims), len(sentences)), dtype=np.float32)
        sent_tokens = [_content_tokens(s.content) for s in sentences]
        out = []
        for ci, claim in enumerate(claims):
            ct = _content_tokens(claim.text)
            lex = np.array([len(ct & st) / len(ct) if ct else 0.0 for st in sent_tokens])
            score = self.dense_weight * cos[ci] + (1 - self.dense_weight) * lex
            top = [j for j in np.argsort(-score, kind="stable")[: self.top_k]
                   if self.min_score == 0 or score[j] >= self.min_score]  # (cosines can be < 0)
            out.append(ClaimEvidence(claim, tuple(
                Evidence(sentences[j].content, sentences[j].source_id, sentences[j].span,
                         float(score[j]), r) for r, j in enumerate(top))))
        return out


@functools.lru_cache(maxsize=2)
def _shared_pairer(model_name_or_path: str | None, top_k: int, min_score: float
                   ) -> EvidencePairer:
    return EvidencePairer(model_name_or_path, top_k=top_k, min_score=min_score)


def pair_claims(claims: Sequence[Claim], evidences: Sequence[Evidence], *,
                documents: Mapping[str, str] | None = None, top_k: int = 3,
                embedding_model: str | Encoder | None = None,
                min_score: float = MIN_SCORE) -> list[ClaimEvidence]:
    """Best evidence sentences per claim: :meth:`EvidencePairer.pair` in one call.

    Args:
        claims: The claims.
        evidences: Retrieved passages (``source_id`` + span into the document).
        documents: Original documents by ``source_id``, to check the spans (optional;
            evidence of a source it lacks keeps its own span, unchecked).
        top_k: Sentences kept per claim.
        embedding_model: A sentence-transformers id or path (``None``: the embedded MiniLM;
            loaded once and reused by later calls), or an object with ``encode(texts)``.
        min_score: Least score of an evidence sentence (see :class:`EvidencePairer`).

    Returns:
        One :class:`ClaimEvidence` per claim, best sentence first; every evidence of a source
        in ``documents`` satisfies ``documents[source_id][span[0]:span[1]] == content``.
    """
    if embedding_model is None or isinstance(embedding_model, str):
        if not is_int(top_k) or top_k <= 0:
            raise ValueError(f"top_k must be an int > 0, got {top_k!r}")
        pairer = _shared_pairer(embedding_model, top_k, check_min_score(min_score))
    else:
        pairer = EvidencePairer(encoder=embedding_model, top_k=top_k, min_score=min_score)
    return pairer.pair(claims, evidences, documents=documents)
