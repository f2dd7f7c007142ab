"""Frozen dataclasses that cross stage boundaries, and the status enum.

Every type validates itself in ``__post_init__`` and round-trips through
``to_dict``/``from_dict`` (plain JSON-serialisable values).
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, field, fields
from enum import Enum
from functools import partial
from typing import Any, TypeVar

from verifier.checking import is_int, is_real
from verifier.text import indefinite_article

T = TypeVar("T")
E = TypeVar("E", bound=Enum)

Span = tuple[int, int]

#: Largest token log-prob :class:`Generation` accepts: a log-probability is <= 0, and a
#: back-end's rounding may put one just above it (``StaticGenerator`` reads it too).
LOGPROB_TOLERANCE = 1e-4


class Status(str, Enum):
    """Final verdict of a claim."""

    SUPPORTED = "Supported"
    CONTRADICTORY = "Contradictory"
    INSUFFICIENT_INFO = "Insufficient_Info"


class ClaimType(str, Enum):
    """Coarse type of an atomic claim, used for routing checks and hedging."""

    FACT = "fact"
    DATE = "date"
    QUANTITY = "quantity"
    QUOTE = "quote"
    RELATIONSHIP = "relationship"
    ASSESSMENT = "assessment"
    COMPARISON = "comparison"
    PREDICTION = "prediction"
    RECOMMENDATION = "recommendation"
    OPINION = "opinion"
    GENERAL_KNOWLEDGE = "general_knowledge"
    #: A line about the answer itself ("Here are the cities.", "I hope this helps!").
    DISCOURSE = "discourse"


def _check_span(name: str, span: Any, *, text_len: int | None = None) -> Span:
    """``span`` as a ``(start, end)`` pair of Python ints (numpy ints too).

    Anything else raises an error that names ``name`` and the value.
    """
    if not (isinstance(span, (tuple, list)) and len(span) == 2):
        raise ValueError(f"{name} must be a (start, end) pair, got {span!r}")
    start, end = span
    if isinstance(start, bool) or isinstance(end, bool):
        raise TypeError(f"{name} offsets must be ints, got {span!r}")
    try:
        start, end = operator.index(start), operator.index(end)
    except TypeError:
        raise TypeError(f"{name} offsets must be ints, got {span!r}") from None
    if start < 0 or end < start:
        raise ValueError(f"{name} must satisfy 0 <= start <= end, got {span!r}")
    if text_len is not None and end > text_len:
        raise ValueError(f"{name} {(start, end)} ends past the text's length {text_len}")
    return (start, end)


def _check_text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def _check_items(name: str, value: Any) -> tuple[Any, ...]:
    """``value`` as a tuple; a str (a sequence of characters) or a non-iterable is an error."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a sequence (one item per token), got "
                        f"{type(value).__name__} {value!r:.80}")
    return tuple(value)


def check_sequence_of(name: str, value: Any, kind: type, items: str | None = None,
                      item: str | None = None) -> tuple[Any, ...]:
    """``value`` as a tuple of ``kind``; else a ``TypeError`` naming ``name`` (or the item).

    ``items`` / ``item`` name the kind in the messages ("ClaimVerdict", "a ClaimVerdict").
    """
    items = items or kind.__name__
    item = item or f"{indefinite_article(kind.__name__)} {kind.__name__}"
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be a sequence of {items}, got {type(value).__name__} "
                        f"{value!r:.80}")
    for i, x in enumerate(value):
        if not isinstance(x, kind):
            raise TypeError(f"{name}[{i}] must be {item}, got {type(x).__name__} {x!r:.80}")
    return tuple(value)


def _check_scores(name: str, value: Any) -> dict[str, Any]:
    """A copy of the mapping ``value``: the caller's dict changing must not change a verdict."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping, got {type(value).__name__} {value!r:.80}")
    return dict(value)


def _scores_read(value: Any) -> Any:
    """Scores read from JSON: null (a score not computed) is NaN again."""
    if not isinstance(value, Mapping):
        return value  # the constructor names it
    return {k: math.nan if v is None else v for k, v in value.items()}


def _check_keys(cls: type, data: Any) -> None:
    """Raise ``ValueError`` when ``data`` has keys that are not fields of ``cls``.

    ``data`` that is not a mapping is a ``TypeError``.
    """
    if not isinstance(data, Mapping):
        raise TypeError(f"{cls.__name__} data must be a mapping, got {type(data).__name__} "
                        f"{data!r:.80}")
    unknown = set(data) - {f.name for f in fields(cls)}
    if unknown:
        raise ValueError(f"unknown field(s) for {cls.__name__}: {sorted(unknown)}")


def _check_required(cls: type, data: Mapping[str, Any],
                    names: Iterable[str] | None = None) -> None:
    """Raise ``ValueError`` naming the fields of ``names`` that ``data`` lacks.

    ``names``: by default, the fields of ``cls`` without a default value.
    """
    if names is None:
        names = [f.name for f in fields(cls)
                 if f.default is MISSING and f.default_factory is MISSING]
    missing = [n for n in names if n not in data]
    if missing:
        raise ValueError(f"missing field(s) for {cls.__name__}: {missing}")


def check_enum(name: str, kind: type[E], value: Any) -> E:
    """``value`` as a member of the enum ``kind``.

    Anything else is a ``ValueError`` naming ``name``, the allowed values and the value.

    Example:
        >>> check_enum("status", Status, "Supported")
        <Status.SUPPORTED: 'Supported'>
    """
    try:
        return kind(value)
    except ValueError:
        allowed = [m.value for m in kind]
        raise ValueError(f"{name} must be one of {allowed}, got {value!r:.80}") from None


def _read_part(where: str, read: Callable[[], T]) -> T:
    """``read()``; its ``TypeError``/``ValueError`` message is prefixed with ``where``."""
    try:
        return read()
    except (TypeError, ValueError) as exc:
        if type(exc) not in (TypeError, ValueError):
            raise
        raise type(exc)(f"{where}: {exc}") from exc


def _read_list(where: str, value: Any, read: Callable[[Any], T]) -> tuple[T, ...]:
    """Each item of the JSON list ``value`` read by ``read``; errors name ``where[i]``."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{where} must be a list, got {type(value).__name__} {value!r:.80}")
    return tuple(_read_part(f"{where}[{i}]", partial(read, x)) for i, x in enumerate(value))


class _Serialisable:
    """``to_dict``/``from_dict`` for flat frozen dataclasses (tuples become lists)."""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict of the fields."""
        out = asdict(self)  # type: ignore[call-overload]
        for k, v in out.items():
            if isinstance(v, tuple):
                out[k] = list(v)
            elif isinstance(v, Enum):
                out[k] = v.value
        return out

    @classmethod
    def from_dict(cls: type[T], data: dict[str, Any]) -> T:
        """Build an instance from :meth:`to_dict` output; unknown keys are an error.

        A missing field (one without a default) is a ``ValueError`` naming it.
        """
        _check_keys(cls, data)
        _check_required(cls, data)
        return cls(**data)


@dataclass(frozen=True)
class Passage(_Serialisable):
    """A unit of retrievable text.

    Attributes:
        text: The passage text.
        source_id: Identifier of the source document (stable, used for citations).
        metadata: Free JSON-serialisable metadata; ``doc_span`` (start, end) gives the
            passage's character offsets in its source document when it is a chunk.

    Example:
        >>> Passage("Paris is in France.", source_id="wiki:Paris").source_id
        'wiki:Paris'
    """

    text: str
    source_id: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_text("text", self.text)
        if not self.text.strip():
            raise ValueError(f"Passage text must not be empty (source_id={self.source_id!r})")
        if not isinstance(self.source_id, str) or not self.source_id:
            raise ValueError(f"source_id must be a non-empty str, got {self.source_id!r}")
        if not isinstance(self.metadata, dict):
            raise TypeError(f"metadata must be a dict, got {type(self.metadata).__name__}")
        # a copy (of its top level): the caller's dict changing must not change the passage
        object.__setattr__(self, "metadata", dict(self.metadata))
        if "doc_span" in self.metadata:
            start, end = _check_span("metadata['doc_span']", self.metadata["doc_span"])
            if end - start != len(self.text):
                raise ValueError(f"metadata['doc_span'] {(start, end)} has length "
                                 f"{end - start} but text has {len(self.text)}")
            self.metadata["doc_span"] = (start, end)  # Python ints; a list read back too
        for key, value in self.metadata.items():  # an index saves it: refused here, not then
            try:
                json.dumps({key: value})
            except (TypeError, ValueError) as exc:
                raise TypeError(f"metadata[{key!r}] of source_id {self.source_id!r} must be "
                                f"JSON-serialisable, got {type(value).__name__}: {exc}") from exc


@dataclass(frozen=True)
class Evidence(_Serialisable):
    """A piece of evidence: ``content`` is exactly ``passage_text[span[0]:span[1]]``.

    Attributes:
        content: The evidence text.
        source_id: The source document or passage it comes from.
        span: ``(start, end)`` character offsets of ``content`` in the passage.
        score: Retrieval or pairing score (higher is better); ``nan`` when unknown.
        rank: 0-based rank in the list it came from, or ``None``.

    Example:
        >>> p = "Paris is the capital of France. It is large."
        >>> Evidence(p[0:31], "doc1", (0, 31)).content
        'Paris is the capital of France.'
    """

    content: str
    source_id: str
    span: Span = (0, 0)
    score: float = math.nan
    rank: int | None = None

    def __post_init__(self) -> None:
        _check_text("content", self.content)
        if not isinstance(self.source_id, str) or not self.source_id:
            raise ValueError(f"source_id must be a non-empty str, got {self.source_id!r}")
        if not self.content.strip():
            raise ValueError(f"Evidence content must not be empty (source_id="
                             f"{self.source_id!r})")
        if self.rank is not None:
            if not is_int(self.rank) or self.rank < 0:  # numpy's ints too, as in ``span``
                raise ValueError(f"rank must be an int >= 0 or None, got {self.rank!r}")
            object.__setattr__(self, "rank", int(self.rank))
        span = _check_span("span", self.span)
        object.__setattr__(self, "span", span)
        if span != (0, 0) and span[1] - span[0] != len(self.content):
            raise ValueError(
                f"span {span} has length {span[1] - span[0]} but content has {len(self.content)}"
            )
        if not is_real(self.score):
            raise TypeError(f"score must be a number (nan when unknown), got "
                            f"{self.score!r:.80}")
        score = float(self.score)
        if math.isinf(score):
            raise ValueError(f"score must be finite (nan when unknown), got {self.score!r}")
        object.__setattr__(self, "score", score)

    def _key(self) -> tuple[Any, ...]:
        return (self.content, self.source_id, self.span,
                None if math.isnan(self.score) else self.score, self.rank)

    def __eq__(self, other: object) -> bool:
        # an unknown score (nan) equals an unknown score: the generated comparison held two
        # Evidence equal only when they shared one nan object, so a pickled copy (a process
        # pool's, Ray's) was another Evidence, and a set kept both
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict (``nan`` score becomes ``None``)."""
        out = super().to_dict()
        if math.isnan(self.score):
            out["score"] = None
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Evidence:
        """Inverse of :meth:`to_dict`."""
        data = dict(data)
        if data.get("score") is None:
            data["score"] = math.nan
        return super().from_dict.__func__(cls, data)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Claim(_Serialisable):
    """An atomic claim taken from a draft.

    Attributes:
        text: The claim as a stand-alone sentence.
        span: ``(start, end)`` offsets of the source text of the claim in the draft.
        type: Coarse claim type.
        verifiable: False for opinions, hedged statements and other non-checkable text.

    Example:
        >>> Claim("Paris is in France.", (0, 19)).verifiable
        True
    """

    text: str
    span: Span = (0, 0)
    type: ClaimType = ClaimType.FACT
    verifiable: bool = True

    def __post_init__(self) -> None:
        _check_text("text", self.text)
        if not self.text.strip():
            raise ValueError("Claim text must not be empty")
        object.__setattr__(self, "span", _check_span("span", self.span))
        object.__setattr__(self, "type", check_enum("type", ClaimType, self.type))
        if not isinstance(self.verifiable, bool):
            raise TypeError(f"verifiable must be a bool, got {self.verifiable!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Claim:
        """Inverse of :meth:`to_dict` (the constructor checks the span, a list too)."""
        data = dict(data)
        return super().from_dict.__func__(cls, data)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Generation(_Serialisable):
    """A generated (or user-supplied) draft.

    Attributes:
        text: The draft text.
        tokens: The generated tokens as strings, when known (their concatenation is ``text``
            up to tokenizer normalisation).
        token_logprobs: Log-probability of each token, aligned with ``tokens``; ``None``
            when the backend gives none.
        token_offsets: ``(start, end)`` character span of each token in ``text``, when known.
        model: Name of the model that wrote it, if any.
    """

    text: str
    tokens: tuple[str, ...] | None = None
    token_logprobs: tuple[float, ...] | None = None
    token_offsets: tuple[Span, ...] | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        _check_text("text", self.text)
        if self.tokens is not None:
            tokens = _check_items("tokens", self.tokens)
            for i, t in enumerate(tokens):
                if not isinstance(t, str):
                    raise TypeError(f"tokens[{i}] must be a str, got {t!r:.80}")
            object.__setattr__(self, "tokens", tokens)
        if self.token_logprobs is not None:
            lp = _check_items("token_logprobs", self.token_logprobs)
            for i, x in enumerate(lp):
                if not is_real(x):
                    raise TypeError(f"token_logprobs[{i}] must be a number, got {x!r:.80}")
                if not math.isfinite(x) or x > LOGPROB_TOLERANCE:
                    raise ValueError(f"token_logprobs[{i}] must be a finite log-probability "
                                     f"(<= 0), got {x!r}")
            lp = tuple(float(x) for x in lp)
            object.__setattr__(self, "token_logprobs", lp)
            if self.tokens is not None and len(lp) != len(self.tokens):
                raise ValueError(
                    f"token_logprobs has {len(lp)} items but tokens has {len(self.tokens)}"
                )
        if self.token_offsets is not None:
            offs = tuple(_check_span(f"token_offsets[{i}]", s, text_len=len(self.text))
                         for i, s in enumerate(_check_items("token_offsets",
                                                            self.token_offsets)))
            object.__setattr__(self, "token_offsets", offs)
            if self.tokens is not None and len(offs) != len(self.tokens):
                raise ValueError(
                    f"token_offsets has {len(offs)} items but tokens has {len(self.tokens)}"
                )
        if (self.token_logprobs is not None and self.token_offsets is not None
                and len(self.token_logprobs) != len(self.token_offsets)):
            raise ValueError(f"token_offsets has {len(self.token_offsets)} items but "
                             f"token_logprobs has {len(self.token_logprobs)}")

    @property
    def has_logprobs(self) -> bool:
        """Whether per-token log-probs are available."""
        return self.token_logprobs is not None

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Generation:
        """Inverse of :meth:`to_dict`."""
        data = dict(data)  # the constructor checks each offset pair, a list too
        return super().from_dict.__func__(cls, data)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class ClaimEvidence(_Serialisable):
    """A claim paired with its best evidence (top-k, best first)."""

    claim: Claim
    evidence: tuple[Evidence, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.claim, Claim):
            raise TypeError(f"claim must be a Claim, got {type(self.claim).__name__}")
        ev = tuple(self.evidence)
        for i, e in enumerate(ev):
            if not isinstance(e, Evidence):
                raise TypeError(f"evidence[{i}] must be an Evidence, got {type(e).__name__}")
        object.__setattr__(self, "evidence", ev)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict."""
        return {"claim": self.claim.to_dict(), "evidence": [e.to_dict() for e in self.evidence]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimEvidence:
        """Inverse of :meth:`to_dict`; unknown keys are an error."""
        _check_keys(cls, data)
        _check_required(cls, data)
        return cls(
            claim=_read_part("claim", lambda: Claim.from_dict(data["claim"])),
            evidence=_read_list("evidence", data.get("evidence", []), Evidence.from_dict),
        )


@dataclass(frozen=True)
class ClaimVerdict(_Serialisable):
    """The verifier's decision on one claim.

    The status is decided from the probabilities, but it is not always the most probable
    status: with the shipped meta-classifier a claim is ``Supported`` as soon as
    p(Supported) reaches a cut learned on held-out folds (``support_threshold`` in
    ``models/meta/ensemble.json``, 0.41 for the shipped one), even when p(Contradictory)
    is higher, and the verifier's ``strictness`` moves that cut (``lenient`` 0.1 lower,
    ``strict`` 0.2 higher); below it, the status is the more probable of
    ``Contradictory`` and ``Insufficient_Info``. Rank or filter claims by
    ``probabilities``; act on ``status``. See :meth:`~verifier.verify.Verifier.decide`.

    Attributes:
        claim: The claim.
        status: The final status (see above); ``Insufficient_Info``, with all probability
            on it, for a claim that is not verifiable (an opinion).
        probabilities: Probability of each of the three statuses, keyed by
            ``Status.value``, each in [0, 1], summing to 1; or ``{}`` (the default) when
            there are none (a verdict made by hand). Numbers are stored as plain Python
            floats (numpy's too).
        evidence: The evidence the decision rests on, best first.
        scores: Per-detector scores by name (e.g. ``nli.entailment``), plain Python floats;
            ``nan`` is a score not computed (``null`` in :meth:`to_dict`), and an infinity
            is refused.
    """

    claim: Claim
    status: Status
    probabilities: dict[str, float] = field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()
    scores: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.claim, Claim):
            raise TypeError(f"claim must be a Claim, got {type(self.claim).__name__}")
        object.__setattr__(self, "status", check_enum("status", Status, self.status))
        object.__setattr__(self, "evidence", check_sequence_of("evidence", self.evidence,
                                                               Evidence))
        # copies: the caller's dicts changing must not change the (frozen) verdict
        object.__setattr__(self, "probabilities",
                           _check_scores("probabilities", self.probabilities))
        object.__setattr__(self, "scores", _check_scores("scores", self.scores))
        known = {s.value for s in Status}
        bad = set(self.probabilities) - known
        if bad:
            raise ValueError(f"probabilities has unknown status keys {sorted(bad)}")
        for k, p in self.probabilities.items():
            if not is_real(p) or not 0.0 <= p <= 1.0:
                raise ValueError(f"probabilities[{k!r}] must be a number in [0, 1], got {p!r}")
            self.probabilities[k] = float(p)  # a plain float (numpy's is no JSON)
        missing = known - set(self.probabilities)
        if self.probabilities and missing:  # {} is "no probabilities"
            raise ValueError(f"probabilities must give all three statuses {sorted(known)} "
                             f"(or none: {{}}), missing {sorted(missing)}: "
                             f"{self.probabilities!r}")
        total = sum(self.probabilities.values())
        if self.probabilities and abs(total - 1.0) > 1e-3:
            raise ValueError(f"probabilities must sum to 1, got {total!r}: "
                             f"{self.probabilities!r}")
        for k, x in self.scores.items():
            if not is_real(x):
                raise TypeError(f"scores[{k!r}] must be a number, got {x!r:.80}")
            if math.isinf(x):  # NaN is "not computed" (null in JSON); an infinity is no JSON
                raise ValueError(f"scores[{k!r}] must be finite (nan when not computed), "
                                 f"got {x!r}")
            self.scores[k] = float(x)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-serialisable dict."""
        return {
            "claim": self.claim.to_dict(),
            "status": self.status.value,
            "probabilities": dict(self.probabilities),
            "evidence": [e.to_dict() for e in self.evidence],
            # NaN (a score not computed) is no JSON: null
            "scores": {k: None if math.isnan(v) else v for k, v in self.scores.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimVerdict:
        """Inverse of :meth:`to_dict`; unknown keys are an error.

        A missing ``claim`` or ``status``, or a bad value, is an error naming the field
        (``claim: ...``, ``evidence[2]: ...``) and, for ``status``, the allowed values.
        """
        _check_keys(cls, data)
        _check_required(cls, data)
        return cls(
            claim=_read_part("claim", lambda: Claim.from_dict(data["claim"])),
            status=data["status"],
            probabilities=data.get("probabilities", {}),
            evidence=_read_list("evidence", data.get("evidence", []), Evidence.from_dict),
            scores=_scores_read(data.get("scores", {})),
        )
