"""The verifier front door: ``Verifier().verify(draft, evidence=... | retriever=...)``.

Three detectors run side by side on every batch of (claim, evidence) pairs: the NLI detector
over each claim's best evidence (read inside its passage), the evidence-alignment detector
(coverage of names, numbers, dates and quotes, lexical and embedding alignment), and the
uncertainty detector (generator log-probs, self-consistency, NLI entropy). The shipped
calibrated meta-classifier (:class:`~verifier.meta.StatusClassifier`, trained by
``models/recipes/train_meta.py``) turns their named features into ``Supported``,
``Contradictory`` or ``Insufficient_Info`` with probabilities; ``meta=None`` falls back to
thresholds on the NLI probabilities.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rag.pairing import MIN_SCORE, check_min_score
from verifier.checking import check_whole_characters, is_int, is_real
from verifier.nli import (
    ChunkScores,
    NLIDetector,
    PairInputError,
    SentenceScores,
    hypothesis_sentences,
)
from verifier.text import is_blank, phrase_in, trimmed_sentence_spans
from verifier.types import (
    Claim,
    ClaimEvidence,
    ClaimVerdict,
    Evidence,
    Generation,
    Passage,
    Status,
    _check_keys,
    _check_required,
    _read_list,
    check_sequence_of,
)

logger = logging.getLogger(__name__)

#: The version of :meth:`Report.to_dict`'s layout.
REPORT_SCHEMA_VERSION = "1"


@dataclass(frozen=True)
class Report:
    """The verification of one draft.

    Attributes:
        draft: The draft text.
        verdicts: One verdict per claim, in draft order.
        timings: Seconds per stage (``decompose``, ``retrieve``, ``pair``, ``nli``,
            ``alignment``, ``uncertainty``, ``detectors`` for the three together, ``meta``).
    """

    draft: str
    verdicts: tuple[ClaimVerdict, ...]
    timings: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.draft, str):
            raise TypeError(f"draft must be a str, got {type(self.draft).__name__}")
        object.__setattr__(self, "verdicts", check_sequence_of("verdicts", self.verdicts,
                                                               ClaimVerdict))
        for i, v in enumerate(self.verdicts):  # a claim's span is a place in the draft
            if v.claim.span[1] > len(self.draft):
                raise ValueError(f"verdicts[{i}].claim.span {v.claim.span} is past the end of "
                                 f"the draft ({len(self.draft)} characters)")
        if not isinstance(self.timings, Mapping):
            raise TypeError(f"timings must be a mapping, got {type(self.timings).__name__}")
        object.__setattr__(self, "timings", dict(self.timings))  # a copy: the report is frozen
        for k, t in self.timings.items():
            if not isinstance(k, str) or not is_real(t) or not 0 <= t < math.inf:
                raise ValueError(f"timings[{k!r}] must be seconds >= 0, got {t!r}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict; ``schema_version`` tells its layout's version."""
        return {"schema_version": REPORT_SCHEMA_VERSION, "draft": self.draft,
                "verdicts": [v.to_dict() for v in self.verdicts], "timings": dict(self.timings)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Report:
        """Inverse of :meth:`to_dict`; another schema version or an unknown key is an error."""
        if not isinstance(data, Mapping):
            raise TypeError(f"data must be a mapping, got {type(data).__name__}")
        version = data.get("schema_version", REPORT_SCHEMA_VERSION)
        if is_int(version):  # 1 for "1": a hand-written or re-typed report
            version = str(version)
        if version != REPORT_SCHEMA_VERSION:
            raise ValueError(f"schema_version {version!r} is not this version's "
                             f"{REPORT_SCHEMA_VERSION!r}")
        _check_keys(cls, {k: v for k, v in data.items() if k != "schema_version"})
        _check_required(cls, data, ["draft"])
        verdicts = _read_list("verdicts", data.get("verdicts", []), ClaimVerdict.from_dict)
        draft: Any = data["draft"]  # checked by __post_init__
        return cls(draft, verdicts, data.get("timings", {}))

    def counts(self) -> dict[str, int]:
        """How many claims got each status."""
        return {s.value: sum(v.status == s for v in self.verdicts) for s in Status}


def _certain(status: Status) -> dict[str, float]:
    """Probabilities that put all on ``status``."""
    return {s.value: float(s == status) for s in Status}


#: Most characters of a passage the NLI model reads an evidence sentence in
#: (:attr:`Verifier.context_chars`): about one of the embedded model's 96-token chunks.
CONTEXT_CHARS = 400


def _holding(ev: Evidence, passages: Sequence[Evidence] | None) -> tuple[int, int] | None:
    """Which passage holds ``ev`` (the smallest one) and where ``ev`` starts in it.

    A passage holds ``ev`` when it is of the same source, its span covers ``ev``'s and its
    text has ``ev``'s text at that place: passages given without document offsets (each
    spanning ``(0, len)``) share offsets, and only their text tells them apart.
    """
    best: tuple[int, int] | None = None
    for k, p in enumerate(passages or ()):
        # a passage given without document offsets (span (0, 0)) starts at 0
        span = p.span if p.span != (0, 0) else (0, len(p.content))
        if p.source_id == ev.source_id and span[0] <= ev.span[0] and ev.span[1] <= span[1]:
            start = ev.span[0] - span[0]
            if p.content[start: start + len(ev.content)] != ev.content:
                continue
            if best is None or len(p.content) < len((passages or ())[best[0]].content):
                best = (k, start)
    return best


def _context(ev: Evidence, passages: Sequence[Evidence] | None,
             budget: int | None = CONTEXT_CHARS) -> str:
    """The text the NLI model reads ``ev`` in: its sentences around it in its passage.

    ``ev`` itself when no passage holds it (:func:`_holding`); the whole passage when it
    is at most ``budget`` characters long (``None``: always); else ``ev`` with as many of
    the passage's sentences before it (what "It" and "the city" refer to), then after it,
    as fit in ``budget``. A sentence read inside a whole long passage (an article given as
    one evidence text) was judged on every chunk of it, and the chunk that most contradicts
    the claim, however unrelated, could outweigh the one that states it. A piece of a
    sentence longer than ``budget`` (the pairer cuts sentences over
    :data:`rag.pairing.MAX_SENTENCE_CHARS`) is read alone, as a sentence that long is.

    Example:
        >>> doc = "Paris is in France. It hosted the Olympics in 2024. Lyon is old."
        >>> _context(Evidence("It hosted the Olympics in 2024.", "d", (20, 51)),
        ...          [Evidence(doc, "d", (0, len(doc)))], budget=55)
        'Paris is in France. It hosted the Olympics in 2024.'
    """
    found = _holding(ev, passages)
    if found is None:
        return ev.content
    text, start = (passages or ())[found[0]].content, found[1]
    if budget is None or len(text) <= budget:
        return text
    end = start + len(ev.content)
    sentences = trimmed_sentence_spans(text)
    inside = [k for k, (a, b) in enumerate(sentences) if a < end and b > start]
    if not inside:
        return ev.content
    lo, hi = inside[0], inside[-1]
    a, b = min(sentences[lo][0], start), max(sentences[hi][1], end)
    if b - a > budget:  # a piece of a sentence over the budget (rag.pairing.split_evidence)
        return ev.content
    while True:
        if lo > 0 and b - sentences[lo - 1][0] <= budget:
            lo -= 1
            a = sentences[lo][0]
        elif hi + 1 < len(sentences) and sentences[hi + 1][1] - a <= budget:
            hi += 1
            b = sentences[hi][1]
        else:
            return text[a:b]


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".!? ")


def _stated(claim: str, evidence: Sequence[Evidence]) -> bool:
    """Whether an evidence sentence is the claim (:func:`_norm`: case, spacing, final stop).

    Example:
        >>> ev = Evidence("Built 1889. The Tower is 330 metres  tall. It is iron.", "a")
        >>> _stated("The tower is 330 metres tall", [ev])
        True
        >>> _stated("Vaccines cause autism.", [Evidence("The claim that vaccines cause autism "
        ...                                             "has been debunked.", "b")])
        False
    """
    norm = _norm(claim)
    return bool(norm) and any(_norm(e.content[a:b]) == norm for e in evidence
                              for a, b in trimmed_sentence_spans(e.content))


def _as_evidence(items: Sequence[Evidence | Passage | str] | Evidence | Passage | str
                 ) -> list[Evidence]:
    """The caller's evidence as :class:`Evidence`, in order.

    A text that shows nothing (only whitespace or invisible characters such as zero-width
    spaces: no model can read it) is an error naming ``evidence[i]``. A plain string is
    ``evidence-{i + 1}``, unless it repeats an earlier one: then it is that one's (one source,
    read once: copies of a passage retrieved twice filled the top-k evidence slots).
    """
    if isinstance(items, (str, Evidence, Passage)):
        items = [items]  # one passage, not a sequence of characters
    elif not isinstance(items, Sequence):
        raise TypeError(f"evidence must be a sequence of Evidence, Passage or str (or one of "
                        f"them), got {type(items).__name__}")
    out = []
    first: dict[str, int] = {}  # each plain string's first index
    named = {it.source_id for it in items if isinstance(it, (Evidence, Passage))}
    for i, it in enumerate(items):
        if not isinstance(it, (Evidence, Passage, str)):
            raise TypeError(f"evidence[{i}] must be an Evidence, Passage or str, got "
                            f"{type(it).__name__}")
        text = it.content if isinstance(it, Evidence) else it.text \
            if isinstance(it, Passage) else it
        if is_blank(text):
            raise ValueError(f"evidence[{i}] is empty (only whitespace or invisible "
                             f"characters): {text!r:.80}")
        check_whole_characters(f"evidence[{i}]", text)
        if isinstance(it, Evidence):
            out.append(it)
        elif isinstance(it, Passage):
            span = tuple(it.metadata.get("doc_span", (0, len(it.text))))
            out.append(Evidence(it.text, it.source_id, span))
        else:
            out.append(Evidence(it, _plain_name(first.setdefault(it, i), named), (0, len(it))))
    return out


def _plain_name(i: int, taken: set[str]) -> str:
    """The source id of the plain string ``evidence[i]``.

    ``evidence-{i+1}``, unless an Evidence or Passage given with it has that id (two texts
    would be cited as one source); then ``evidence-{i+1}-2``, ``-3``, ...

    Example:
        >>> _plain_name(1, {"evidence-2"})
        'evidence-2-2'
    """
    name = f"evidence-{i + 1}"
    k = 2
    while name in taken:
        name, k = f"evidence-{i + 1}-{k}", k + 1
    return name


def _retrieved(retriever: Any, query: str, top_k: int) -> list[Evidence]:
    """``retriever.retrieve(query, top_k=top_k)`` as a list of :class:`Evidence`.

    Anything else is a ``TypeError`` naming the call and what it gave.
    """
    got = retriever.retrieve(query, top_k=top_k)
    name = f"retriever.retrieve({query!r:.40}, top_k={top_k})"
    if isinstance(got, (str, bytes)) or not isinstance(got, Iterable):
        raise TypeError(f"{name} must return Evidence objects, got {type(got).__name__} "
                        f"{got!r:.80}")
    return list(check_sequence_of(name, list(got), Evidence, item="an Evidence"))


def _holder(ev: Evidence, passages: Sequence[Evidence]) -> int | None:
    """Index of the passage :func:`_context` reads ``ev`` in (``None``: none holds it)."""
    found = _holding(ev, passages)
    return None if found is None else found[0]


@dataclass(frozen=True)
class _Naming:
    """How an input error names a claim and an evidence text, as the caller gave them.

    ``claim(ci)``: the claim ``paired[ci]``; ``evidence(ci, j)``: its ``j``-th evidence.
    """

    claim: Callable[[int], str]
    evidence: Callable[[int, int], str]


#: Features the meta-classifier may use, by detector. ``nli.*``: the NLI detector;
#: ``align.*``, ``checks.*``, ``match.*``: the evidence-alignment detector;
#: ``unc.*``: the uncertainty detector.
NLI_FEATURES: tuple[str, ...] = (
    "nli.entailment", "nli.neutral", "nli.contradiction", "nli.mean_entailment",
    "nli.max_contradiction", "nli.units", "nli.sentences",
)
#: NLI features of the deciding unit read from the scores behind its row, where the detector
#: keeps them (an :class:`~verifier.nli.NLIDetector`; ``NaN`` for a detector with ``predict``
#: only): the least entailment and the most contradiction over the claim's sentences (its
#: row averages them: one refuted sentence of three shows here whole), the entailment and
#: contradiction of the premise's best chunk for each (the row keeps one chunk's, the one
#: that most entails or most contradicts), averaged over the sentences, and how many chunks
#: the premise was read in.
NLI_DETAIL_FEATURES: tuple[str, ...] = (
    "nli.min_sentence_entailment", "nli.max_sentence_contradiction",
    "nli.chunk_max_entailment", "nli.chunk_max_contradiction", "nli.chunks",
)
CHECK_FEATURES: tuple[str, ...] = ("checks.findings", "checks.high", "match.exact",
                                   "checks.substitution")
Strictness = Literal["lenient", "balanced", "strict"]
#: Least p(Supported) for a ``Supported`` status, by strictness, for a meta-classifier
#: without a learned cut (``balanced``: the most probable status).
SUPPORT_MIN: dict[str, float] = {"lenient": 0.35, "balanced": 0.0, "strict": 0.7}
#: With a learned cut ``t`` (the shipped classifiers' ``support_threshold_``, chosen on
#: held-out folds), the least p(Supported) is ``t + SUPPORT_SHIFT[strictness]``.
SUPPORT_SHIFT: dict[str, float] = {"lenient": -0.1, "balanced": 0.0, "strict": 0.2}


def support_cut(meta: Any, strictness: Strictness) -> float | None:
    """The least p(Supported) for ``Supported`` with ``meta``'s learned cut at ``strictness``.

    ``t`` + :data:`SUPPORT_SHIFT` [strictness], kept within [0.05, 0.95], where ``t`` is the
    classifier's ``support_threshold_``; ``None`` when it has none (:meth:`Verifier.decide`
    then uses :data:`SUPPORT_MIN`).
    """
    cut = getattr(meta, "support_threshold_", None)
    if cut is None:
        return None
    return min(max(float(cut) + SUPPORT_SHIFT[strictness], 0.05), 0.95)


#: Features computed from the detectors' own (see :func:`derive_features`): log-odds of the
#: NLI probabilities (a linear model needs them to weigh near-certain rows), NLI x alignment
#: interactions (entailment counts for more when the evidence covers the claim), and log
#: token counts.
DERIVED_FEATURES: tuple[str, ...] = (
    "nli.logit_entailment", "nli.logit_neutral", "nli.logit_contradiction",
    "nli.logit_mean_entailment", "nli.logit_max_contradiction",
    "x.entailment_cosine", "x.entailment_recall", "x.contradiction_recall",
    "x.entailment_multi_sentence",
    "align.log_claim_tokens", "align.log_evidence_tokens",
)


#: Least p(entailment) with which an evidence sentence other than the best-paired one
#: decides a claim (see :func:`best_unit`).
SUPPORT_ANYWHERE = 0.5


def best_unit(unit_probs: np.ndarray) -> int:
    """Which of a claim's evidence units (best-paired first) decides its NLI row.

    The unit that most entails the claim when its p(entailment) reaches
    :data:`SUPPORT_ANYWHERE` (one supporting passage is enough), else the best-paired unit.
    Unlike chunks of one document (:func:`~verifier.nli.aggregate_chunks`), the units come
    from different passages: an unrelated sentence ranked second often reads as a
    "contradiction" to an NLI model, and must not outvote the sentence the claim is about.

    Example:
        >>> best_unit(np.array([[0.2, 0.7, 0.1], [0.1, 0.1, 0.8]]))  # unrelated 2nd unit
        0
        >>> best_unit(np.array([[0.2, 0.7, 0.1], [0.9, 0.05, 0.05]]))
        1
    """
    unit_probs = np.asarray(unit_probs)
    if unit_probs.ndim != 2 or unit_probs.shape[0] == 0:
        raise ValueError(f"unit_probs must have shape (k >= 1, 3), got {unit_probs.shape}")
    i = int(unit_probs[:, 0].argmax())
    return i if unit_probs[i, 0] >= SUPPORT_ANYWHERE else 0


def _nli_detail(scores: ChunkScores | SentenceScores) -> list[float]:
    """:data:`NLI_DETAIL_FEATURES` of one pair from the scores behind its row.

    A hypothesis scored whole counts as one sentence.
    """
    sentences = scores.sentences if isinstance(scores, SentenceScores) else (scores,)
    rows = np.stack([s.probabilities for s in sentences])
    best = np.stack([s.chunk_probabilities.max(axis=0) for s in sentences])
    return [float(rows[:, 0].min()), float(rows[:, 2].max()), float(best[:, 0].mean()),
            float(best[:, 2].mean()), float(len(sentences[0].chunk_spans))]


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def derive_features(f: dict[str, float]) -> dict[str, float]:
    """The :data:`DERIVED_FEATURES` of one claim's detector features (``NaN`` in, ``NaN`` out)."""
    def get(name: str) -> float:
        v = f.get(name)
        return math.nan if v is None else float(v)

    out: dict[str, float] = {}
    for name in ("entailment", "neutral", "contradiction", "mean_entailment",
                 "max_contradiction"):
        v = get(f"nli.{name}")
        out[f"nli.logit_{name}"] = math.nan if math.isnan(v) else _logit(v)
    ent, con = get("nli.entailment"), get("nli.contradiction")
    out["x.entailment_cosine"] = ent * get("align.cosine")
    out["x.entailment_recall"] = ent * get("align.claim_recall")
    out["x.contradiction_recall"] = con * get("align.claim_recall")
    # the NLI row of a claim read sentence by sentence is a mean (less extreme): its own slope
    sents = get("nli.sentences")
    out["x.entailment_multi_sentence"] = (math.nan if math.isnan(sents) else
                                          out["nli.logit_entailment"] * float(sents > 1))
    for name in ("claim_tokens", "evidence_tokens"):
        v = get(f"align.{name}")
        out[f"align.log_{name}"] = math.nan if math.isnan(v) else math.log1p(v)
    return out


def all_features() -> tuple[str, ...]:
    """Every feature name a verdict's ``scores`` can hold, detector by detector."""
    from verifier.alignment import FEATURES as ALIGN
    from verifier.uncertainty import FEATURES as UNC

    return NLI_FEATURES + NLI_DETAIL_FEATURES + ALIGN + CHECK_FEATURES + UNC + DERIVED_FEATURES


def _load_classifier(value: Any, name: str, param: str) -> Any:
    from verifier.meta import StatusClassifier

    if value is None:
        return value
    if hasattr(value, "predict_proba") and not isinstance(value, type):
        # fitted on named feature columns with the three statuses as its classes (it is
        # read by ``feature_names_in_``, and its columns by ``classes_``): else it failed
        # only at the first verdict, with a message that did not name ``param``
        names = getattr(value, "feature_names_in_", None)
        classes = [str(c) for c in getattr(value, "classes_", ())]
        if names is None:
            raise TypeError(f"{param} must be fitted on named feature columns (a pandas "
                            f"DataFrame: it has no feature_names_in_), got {value!r:.80}")
        if missing := [s.value for s in Status if s.value not in classes]:
            raise ValueError(f"{param}'s classes_ must hold the statuses "
                             f"{[s.value for s in Status]}, got {classes}: missing {missing}")
        return value
    if value == "embedded":
        from verifier.embedded import embedded_meta_path

        return StatusClassifier.load(embedded_meta_path(name))
    if isinstance(value, (str, Path)):
        try:
            return StatusClassifier.load(value)
        except FileNotFoundError as exc:
            raise FileNotFoundError(f"{param}: {exc}") from exc
        except ValueError as exc:
            raise ValueError(f"{param}: {exc}") from exc
    raise TypeError(f"{param} must be 'embedded', a path, a fitted classifier or None, got "
                    f"{value!r}")


class Verifier:
    """Verify the claims of a draft against evidence.

    Args:
        nli: The NLI detector, anything with ``predict(pairs)`` (default: the embedded
            model). For a model id or path, pass ``NLIDetector("some/nli-model")``.
        decomposer: Splits drafts into claims, ``decompose(text)`` (default: spaCy).
        pairer: Finds each claim's evidence sentences, ``pair(claims, passages)`` (default:
            embedded MiniLM, on the NLI detector's ``device``).
        alignment: The evidence-alignment detector, ``features(claims, evidence)``
            (default: :class:`AlignmentDetector` with embedding cosines of the embedded
            MiniLM, on the NLI detector's ``device``); ``False`` turns it off (its features
            become ``NaN``).
        uncertainty: An :class:`~verifier.uncertainty.UncertaintyDetector` (default: one that
            reads the draft's log-probs and takes no samples); ``False`` turns it off.
        meta: The calibrated meta-classifier: ``"embedded"`` (the shipped one), a path to a
            :class:`~verifier.meta.StatusClassifier` JSON file, a fitted classifier, or
            ``None`` for the NLI threshold rule.
        alignment_classifier: The evidence-alignment classifier whose probabilities are
            reported as ``align.p_supported`` / ``align.p_contradictory`` (same choices).
        strictness: How sure the meta-classifier must be to say ``Supported``. With a
            learned cut ``t`` (the shipped classifier's ``support_threshold``, 0.41, chosen
            on held-out folds to maximise the macro-F1 of supported vs the rest), the least
            p(Supported) is ``t - 0.1`` (``lenient``), ``t`` (``balanced``) or ``t + 0.2``
            (``strict``), kept within [0.05, 0.95] (:data:`SUPPORT_SHIFT`); without a
            learned cut, see :data:`SUPPORT_MIN`. With ``meta=None`` there is no
            meta-classifier: the threshold rule decides (:meth:`status_of`, set by
            ``support_threshold`` and ``contradiction_threshold``), and a strictness other
            than ``balanced`` is logged as having no effect.
        parallel: Run the detectors in threads side by side (``True``) or one after another
            (``False``). ``None`` (default): side by side when the NLI model runs on a GPU;
            on a CPU one after another, since torch already spreads each detector over every
            core (``benchmarks/bench_verifier.py`` measures both).
        support_threshold: Threshold rule (``meta=None``): least p(entailment) for
            ``Supported``.
        contradiction_threshold: Threshold rule: least p(contradiction) for ``Contradictory``.
        top_k_evidence: Evidence sentences scored per claim, of those the verifier ranks
            itself (:meth:`verify`, and the pairer's ranking given to
            :meth:`verify_claims`); :meth:`verify_pairs` scores all the evidence it is given.
        min_evidence_score: Least pairing score of an evidence sentence, for the default
            pairer (:class:`~rag.pairing.EvidencePairer`'s ``min_score``; 0: no floor).
            A claim no sentence reaches gets no evidence and is ``Insufficient_Info``.
        context_chars: Most characters of its passage an evidence sentence is read in by
            the NLI model (:meth:`verify`, and :meth:`verify_claims` given ``passages``):
            the sentence and its neighbours, those before it first; ``None``: the whole
            passage, however long.

    Status and probabilities: a verdict's ``status`` is decided from its
    ``probabilities`` by :meth:`decide`, and need not be the most probable status: a claim
    whose p(Supported) reaches the cut of ``strictness`` is ``Supported`` even when
    p(Contradictory) is higher (in ``balanced`` mode with the shipped classifier, p(Supported)
    0.45 and p(Contradictory) 0.50 give ``Supported``): the cut, chosen on held-out folds,
    is the one that best separates supported claims from the rest. Use the probabilities
    to rank claims, and ``strictness`` to ask for more certainty.

    Determinism: under the NLI detector's default ``auto`` dtype (bf16 where the hardware
    runs it natively) a verdict's probabilities and NLI features can differ in about the
    third decimal with the other pairs of the call and the detector's ``batch_size`` (see
    :class:`~verifier.nli.NLIDetector`), and so can a status near a threshold. Pass
    ``NLIDetector(dtype="float32")`` for results that do not depend on batching; the
    alignment cosines of the default embedding cache likewise keep a text's embedding from
    the first call that embedded it (see :class:`~rag.pairing.CachedEncoder`).

    Example:
        >>> v = Verifier()  # doctest: +SKIP
        >>> report = v.verify("Paris is the capital of France.",  # doctest: +SKIP
        ...                   evidence=["Paris is the capital and largest city of France."])
        >>> report.verdicts[0].status  # doctest: +SKIP
        <Status.SUPPORTED: 'Supported'>
    """

    def __init__(self, nli: NLIDetector | None = None, *, decomposer: Any = None,
                 pairer: Any = None, alignment: Any = None, uncertainty: Any = None,
                 meta: Any = "embedded", alignment_classifier: Any = "embedded",
                 strictness: Strictness = "balanced", parallel: bool | None = None,
                 support_threshold: float = 0.5, contradiction_threshold: float = 0.5,
                 top_k_evidence: int = 3, min_evidence_score: float = MIN_SCORE,
                 context_chars: int | None = CONTEXT_CHARS) -> None:
        for name, val in (("support_threshold", support_threshold),
                          ("contradiction_threshold", contradiction_threshold)):
            if isinstance(val, bool) or not isinstance(val, (int, float, np.number)) \
                    or not 0.0 < float(val) <= 1.0:
                raise ValueError(f"{name} must be a number in (0, 1], got {val!r}")
        if not is_int(top_k_evidence) or top_k_evidence <= 0:
            raise ValueError(f"top_k_evidence must be an int > 0, got {top_k_evidence!r}")
        if context_chars is not None and (not is_int(context_chars) or context_chars <= 0):
            raise ValueError(f"context_chars must be an int > 0 or None, got {context_chars!r}")
        if parallel is not None and not isinstance(parallel, bool):
            raise ValueError(f"parallel must be True, False or None, got {parallel!r}")
        min_evidence_score = check_min_score(min_evidence_score, "min_evidence_score")
        if strictness not in SUPPORT_MIN:
            raise ValueError(f"strictness must be one of {sorted(SUPPORT_MIN)}, got "
                             f"{strictness!r}")
        for param, value, method in (("nli", nli, "predict"),
                                     ("decomposer", decomposer, "decompose"),
                                     ("pairer", pairer, "pair"),
                                     ("alignment", alignment, "features"),
                                     ("uncertainty", uncertainty, "features")):
            off = value is False and param in ("alignment", "uncertainty")
            if isinstance(value, type):  # the class, not an instance: it failed at first use
                raise TypeError(f"{param} must be an instance, got the class {value.__name__}"
                                f" (call it: {value.__name__}(...))")
            if value is not None and not off and not callable(getattr(value, method, None)):
                hint = (f"; for a model id or path pass NLIDetector({value!r})"
                        if param == "nli" and isinstance(value, (str, Path)) else "")
                raise TypeError(f"{param} must have a {method}() method, got {value!r}{hint}")
        self.nli = nli or NLIDetector()
        self._decomposer = decomposer
        self._pairer = pairer
        #: One embedding cache for the default pairer and alignment detector: both embed the
        #: same claims and evidence sentences.
        self._encoder: Any = None
        self._pool: ThreadPoolExecutor | None = None
        if pairer is None or alignment is None:
            from functools import partial

            from rag.pairing import CachedEncoder
            from rag.retrieval import DenseRetriever

            # the embedding model goes where the NLI model was sent ("cpu", "cuda:1")
            device = getattr(self.nli, "device", None)
            self._encoder = CachedEncoder(partial(
                DenseRetriever, device=device if isinstance(device, str) else None))
        if alignment is None:
            from verifier.alignment import AlignmentDetector

            alignment = AlignmentDetector(self._encoder)
        if uncertainty is None:
            from verifier.uncertainty import UncertaintyDetector

            uncertainty = UncertaintyDetector(samples=0)
        self.alignment = alignment or None
        self.uncertainty = uncertainty or None
        self.meta = _load_classifier(meta, "ensemble", "meta")
        if self.meta is None and strictness != "balanced":
            logger.warning("strictness=%r has no effect with meta=None: the NLI threshold rule "
                           "decides (set support_threshold and contradiction_threshold)",
                           strictness)
        custom = getattr(self.nli, "model_name_or_path", None)
        if meta == "embedded" and custom is not None:
            logger.warning("the shipped meta-classifier was fitted on the features of the "
                           "embedded NLI model; with %s its probabilities are not calibrated "
                           "(refit it with models/recipes/train_meta.py, or pass meta=None)",
                           custom)
        self.alignment_classifier = _load_classifier(alignment_classifier, "alignment",
                                                     "alignment_classifier")
        self.strictness = strictness
        self.parallel = parallel
        self.support_threshold = float(support_threshold)
        self.contradiction_threshold = float(contradiction_threshold)
        self.top_k_evidence = int(top_k_evidence)
        self.min_evidence_score = min_evidence_score
        self.context_chars = None if context_chars is None else int(context_chars)

    def _side_by_side(self) -> bool:
        if self.parallel is not None:
            return self.parallel
        from verifier.embedded import resolve_device

        device = getattr(self.nli, "device", None)
        try:
            return resolve_device(device if isinstance(device, str) else None) != "cpu"
        except ValueError:
            return False

    def _executor(self) -> ThreadPoolExecutor:
        """The thread pool the side detectors run in (made on first use, then kept)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=2,
                                            thread_name_prefix="verifier-detector")
        return self._pool

    @property
    def embedding_cache(self) -> Any:
        """The embedding cache of the default pairer and alignment detector (or ``None``).

        A :class:`~rag.pairing.CachedEncoder`; ``None`` when both were given.
        """
        return self._encoder

    @property
    def decomposer(self) -> Any:
        """The claim decomposer (spaCy by default, created on first use)."""
        if self._decomposer is None:
            from rag.decompose import SpacyDecomposer

            self._decomposer = SpacyDecomposer()
        return self._decomposer

    @property
    def pairer(self) -> Any:
        """The evidence pairer (embedded MiniLM by default, created on first use)."""
        if self._pairer is None:
            from rag.pairing import EvidencePairer

            self._pairer = EvidencePairer(encoder=self._encoder, top_k=self.top_k_evidence,
                                          min_score=self.min_evidence_score)
        return self._pairer

    def status_of(self, probs: np.ndarray) -> Status:
        """Threshold rule on an aggregated (entailment, neutral, contradiction) row."""
        if probs[0] >= self.support_threshold and probs[0] >= probs[2]:
            return Status.SUPPORTED
        if probs[2] >= self.contradiction_threshold:
            return Status.CONTRADICTORY
        return Status.INSUFFICIENT_INFO

    def decide(self, probabilities: dict[str, float]) -> Status:
        """Status from meta-classifier probabilities, at this verifier's strictness.

        (With ``meta=None`` a verdict's status comes from :meth:`status_of` instead, the NLI
        threshold rule.)

        With a learned cut ``t`` (the classifier's ``support_threshold_``, 0.41 for the
        shipped one): ``Supported`` when p(Supported) >= ``t`` + :data:`SUPPORT_SHIFT`
        [strictness] (kept within [0.05, 0.95]), whatever the other two probabilities;
        else ``Contradictory`` when p(Contradictory) > p(Insufficient_Info), else
        ``Insufficient_Info``. Without a learned cut, ``Supported`` needs p(Supported) >=
        :data:`SUPPORT_MIN` [strictness] (in ``balanced`` mode: the most probable status).
        So the status can differ from the most probable status, by design.

        Example:
            >>> p = {"Supported": 0.45, "Contradictory": 0.5, "Insufficient_Info": 0.05}
            >>> Verifier(meta="embedded").decide(p)  # the shipped cut: 0.41
            <Status.SUPPORTED: 'Supported'>
            >>> Verifier(meta="embedded", strictness="strict").decide(p)
            <Status.CONTRADICTORY: 'Contradictory'>
        """
        s = probabilities[Status.SUPPORTED.value]
        c = probabilities[Status.CONTRADICTORY.value]
        i = probabilities[Status.INSUFFICIENT_INFO.value]
        cut = support_cut(self.meta, self.strictness)
        if cut is not None:
            if s >= cut:
                return Status.SUPPORTED
        else:
            floor = SUPPORT_MIN[self.strictness]
            if s >= floor and (floor > 0 or s >= max(c, i)):
                return Status.SUPPORTED
        return Status.CONTRADICTORY if c > i else Status.INSUFFICIENT_INFO

    def verify(self, draft: str | Generation, *,
               evidence: Sequence[Evidence | Passage | str] | Evidence | Passage | str
               | None = None,
               retriever: Any = None, question: str | None = None, top_k: int = 5,
               prompt: str | None = None) -> Report:
        """Decompose ``draft``, find each claim's evidence, and decide a status per claim.

        Args:
            draft: The answer to verify; a :class:`Generation` (with token log-probs and
                the token offsets that match them to the claims; log-probs without offsets
                are unused, and a warning says so) also feeds the uncertainty detector. A
                str is a generation without log-probs: with ``prompt``, an uncertainty
                detector with a generator scores its claims by teacher forcing, as for a
                :class:`Generation`.
            evidence: Passages to check against (``Evidence``, ``Passage`` or plain strings),
                or one of them: a single string is one passage.
            retriever: Instead of ``evidence``: anything with ``retrieve(query, *, top_k)``;
                queried with ``question`` (or the draft) and with each claim.
            question: The question the draft answers (for retrieval).
            top_k: Passages retrieved per query.
            prompt: The prompt that produced the draft (uncertainty: teacher forcing).
        """
        text = draft.text if isinstance(draft, Generation) else draft
        if not isinstance(text, str):
            raise TypeError(f"draft must be a non-empty str or Generation, got "
                            f"{type(draft).__name__} {draft!r:.80}")
        if is_blank(text):
            raise ValueError(f"draft must be a non-empty str or Generation, got {draft!r:.80}")
        check_whole_characters("draft", text)
        if not is_int(top_k) or top_k <= 0:
            raise ValueError(f"top_k must be an int > 0, got {top_k!r}")
        for name, value in (("question", question), ("prompt", prompt)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a str or None, got {value!r:.80}")
        if (evidence is None) == (retriever is None):
            raise ValueError("give exactly one of evidence= or retriever=")
        if retriever is not None and not callable(getattr(retriever, "retrieve", None)):
            raise TypeError(f"retriever must have a retrieve(query, *, top_k) method, got "
                            f"{retriever!r:.80}")
        # a str draft: teacher forcing and sampling need no log-probs
        generation = draft if isinstance(draft, Generation) else Generation(text)
        t: dict[str, float] = {}
        t0 = time.perf_counter()
        claims = self.decomposer.decompose(text)
        t["decompose"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        if retriever is not None:
            passages: list[Evidence] = _retrieved(retriever, question or text, top_k)
            for c in claims:
                passages.extend(_retrieved(retriever, c.text, top_k))
        elif evidence is not None:  # one of the two is given (checked above)
            passages = _as_evidence(evidence)
        t["retrieve"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        paired = self.pairer.pair(claims, passages)
        t["pair"] = time.perf_counter() - t0
        where = "the retrieved passage" if retriever is not None else "evidence"

        def evidence_name(ci: int, j: int) -> str:
            ev = paired[ci].evidence[j]
            k = _holder(ev, passages)
            if k is None:
                return f"the evidence sentence from {ev.source_id!r}"
            return f"{where} {passages[k].source_id!r}" if retriever is not None \
                else f"{where}[{k}]"

        naming = _Naming(lambda ci: f"claim {ci} of the draft", evidence_name)
        verdicts = self._verify_paired(paired, top_k=self.top_k_evidence, passages=passages,
                                       timings=t, generation=generation, prompt=prompt,
                                       naming=naming)
        return Report(text, tuple(verdicts), {k: round(v, 4) for k, v in t.items()})

    # ------------------------------------------------------------------ detectors
    def _run_nli(self, keys: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
        """NLI rows of ``keys`` ``(n, 3)``, and their :data:`NLI_DETAIL_FEATURES` ``(n, 5)``."""
        unique = list(dict.fromkeys(keys))  # sentences of one passage share a premise
        detail = np.full((len(unique), len(NLI_DETAIL_FEATURES)), np.nan)
        try:
            if not unique:
                scored = np.zeros((0, 3), dtype=np.float32)
            elif isinstance(self.nli, NLIDetector):  # the scores behind each row too
                scores = self.nli.predict_scores(unique)
                scored = np.stack([s.probabilities for s in scores])
                detail = np.array([_nli_detail(s) for s in scores])
            else:
                scored = self.nli.predict(unique)
        except PairInputError as exc:  # index ``keys``, not the de-duplicated pairs
            raise PairInputError(str(exc), index=keys.index(unique[exc.index]), part=exc.part,
                                 reason=exc.reason) from None
        index = {k: i for i, k in enumerate(unique)}
        rows = [index[k] for k in keys]
        return scored[rows].astype(np.float32, copy=False), detail[rows]

    def _run_nli_named(self, keys: list[tuple[str, str]], owners: Sequence[int],
                       units: list[tuple[int, Evidence]], paired: Sequence[ClaimEvidence],
                       naming: _Naming) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_run_nli`; a pair the model cannot read is an error naming the caller's input.

        ``owners[k]``: the unit ``keys[k]`` was made from.
        """
        try:
            return self._run_nli(keys)
        except PairInputError as exc:
            ci, ev = units[owners[exc.index]]
            premise, claim = keys[exc.index]
            if exc.part == "hypothesis":
                name, value = naming.claim(ci), claim
            else:
                name, value = naming.evidence(ci, paired[ci].evidence.index(ev)), premise
            raise ValueError(f"{name} {value!r:.80} cannot be scored: its NLI pair has "
                             f"{exc.reason}") from exc

    def _run_alignment(self, paired: Sequence[ClaimEvidence]) -> list[dict[str, float]]:
        from mitigation.checks import SUBSTITUTIONS, run_checks

        evs = [list(ce.evidence) for ce in paired]
        rows: list[dict[str, float]]
        if self.alignment is not None:
            rows = self.alignment.features([ce.claim.text for ce in paired], evs)
        else:
            rows = [{} for _ in paired]
        for ce, ev, row in zip(paired, evs, rows, strict=True):
            findings = run_checks(ce.claim.text, [e.content for e in ev]) if ev else []
            row["checks.findings"] = float(len(findings))
            row["checks.high"] = float(sum(f.severity.value == "HIGH" for f in findings))
            row["checks.substitution"] = float(sum(f.type in SUBSTITUTIONS
                                                   for f in findings))
            norm = _norm(ce.claim.text)
            row["match.exact"] = float(any(phrase_in(norm, _norm(e.content)) for e in ev))
        return rows

    def _run_uncertainty(self, paired: Sequence[ClaimEvidence], generation: Generation | None,
                         prompt: str | None) -> list[dict[str, float]]:
        if self.uncertainty is None or generation is None:
            return [{} for _ in paired]
        if paired and generation.token_logprobs is not None and generation.token_offsets is None:
            logger.warning("the draft's Generation has token_logprobs but no token_offsets: "
                           "its log-probs cannot be matched to the %d claim(s) and are not "
                           "used (their unc.* log-prob features are missing, NaN, unless "
                           "the uncertainty detector teacher-forces them); give "
                           "token_offsets", len(paired))
        return self.uncertainty.features(generation, [ce.claim for ce in paired],
                                         prompt=prompt)

    def verify_claims(self, paired: Sequence[ClaimEvidence], *,
                      passages: Sequence[Evidence] | None = None,
                      timings: dict[str, float] | None = None,
                      generation: Generation | None = None,
                      prompt: str | None = None) -> list[ClaimVerdict]:
        """Verdicts for claims already paired with their evidence sentences (best first).

        Each claim's first ``top_k_evidence`` evidence sentences are scored (a pairer's
        ranking, best first); :meth:`verify_pairs` scores all of them.

        Args:
            paired: Claims with their evidence sentences.
            passages: The passages the sentences were taken from. When given, the NLI model
                reads each sentence inside its passage (so "It was built in 1889" keeps what
                "It" is); the verdict still points at the sentence's span.
            timings: A dict to add per-detector seconds to (``nli``, ``alignment``,
                ``uncertainty``, ``detectors`` for the three together, ``meta``).
            generation: The draft with token log-probs, for the uncertainty detector; its
                ``token_offsets`` tell which tokens are a claim's (without them a warning
                says its log-probs go unused).
            prompt: The prompt that produced it.
        """
        paired = check_sequence_of("paired", paired, ClaimEvidence)
        if passages is not None:
            passages = check_sequence_of("passages", passages, Evidence)

        def evidence_name(ci: int, j: int) -> str:
            k = None if passages is None else _holder(paired[ci].evidence[j], passages)
            return f"paired[{ci}].evidence[{j}]" if k is None else f"passages[{k}]"

        return self._verify_paired(paired, top_k=self.top_k_evidence, passages=passages,
                                   timings=timings, generation=generation, prompt=prompt,
                                   naming=_Naming(lambda ci: f"paired[{ci}].claim",
                                                  evidence_name))

    def _verify_paired(self, paired: Sequence[ClaimEvidence], *, top_k: int | None,
                       naming: _Naming, passages: Sequence[Evidence] | None = None,
                       timings: dict[str, float] | None = None,
                       generation: Generation | None = None,
                       prompt: str | None = None) -> list[ClaimVerdict]:
        """:meth:`verify_claims` of each claim's first ``top_k`` evidence (``None``: all).

        ``naming``: how an input the NLI model cannot read is named in the error.
        """
        if top_k is not None:
            paired = [ce if len(ce.evidence) <= top_k else
                      ClaimEvidence(ce.claim, ce.evidence[:top_k]) for ce in paired]
        units = [(ci, ev) for ci, ce in enumerate(paired) for ev in ce.evidence]
        keys = [(_context(ev, passages, self.context_chars), paired[ci].claim.text)
                for ci, ev in units]
        tasks: dict[str, Callable[[], Any]] = {
            "nli": lambda: self._run_nli_named(keys, range(len(keys)), units, paired, naming),
            "alignment": lambda: self._run_alignment(paired),
            "uncertainty": lambda: self._run_uncertainty(paired, generation, prompt),
        }
        spent: dict[str, float] = {}

        def timed(name: str) -> Any:
            t0 = time.perf_counter()
            try:
                return tasks[name]()
            finally:
                spent[name] = time.perf_counter() - t0

        t0 = time.perf_counter()
        if self._side_by_side() and paired:
            # NLI, the heaviest, runs in this thread (torch's per-thread kernel caches stay
            # warm); the other detectors run beside it in a pool kept across calls.
            futures = {n: self._executor().submit(timed, n) for n in tasks if n != "nli"}
            results = {"nli": timed("nli")}
            results.update({n: f.result() for n, f in futures.items()})
        else:
            results = {n: timed(n) for n in tasks}
        spent["detectors"] = time.perf_counter() - t0
        probs, detail = results["nli"]
        t0 = time.perf_counter()
        alone = self._sentences_alone(paired, units, keys, naming)
        spent["nli"] += time.perf_counter() - t0
        rows_of: list[list[int]] = [[] for _ in paired]  # each claim's units, in order
        for k, (ci, _) in enumerate(units):
            rows_of[ci].append(k)
        features = self._features(paired, rows_of, probs, results["alignment"],
                                  results["uncertainty"], detail)
        t0 = time.perf_counter()
        verdicts = self._decide_all(paired, units, rows_of, probs, features, alone)
        spent["meta"] = time.perf_counter() - t0
        if timings is not None:
            timings.update(spent)
        return verdicts

    def _sentences_alone(self, paired: Sequence[ClaimEvidence],
                         units: list[tuple[int, Evidence]], keys: list[tuple[str, str]],
                         naming: _Naming) -> dict[int, tuple[str, float]]:
        """Which of a claim's sentences from one passage to cite.

        Sentences read inside the same passage get the same NLI row, so the row cannot say
        which of them supports the claim. For units that share their passage with another
        unit of the same claim: ``{unit: (passage, p(entailment) of the sentence read
        alone)}``. The features and the status do not use it; the evidence order does.
        """
        groups: dict[tuple[int, str], list[int]] = {}
        for k, (ci, ev) in enumerate(units):
            if keys[k][0] != ev.content:  # read inside a passage
                groups.setdefault((ci, keys[k][0]), []).append(k)
        tied = [k for g in groups.values() if len(g) > 1 for k in g]
        if not tied:
            return {}
        scores, _ = self._run_nli_named([(units[k][1].content, keys[k][1]) for k in tied],
                                        tied, units, paired, naming)
        return {k: (keys[k][0], float(scores[j, 0])) for j, k in enumerate(tied)}

    def _features(self, paired: Sequence[ClaimEvidence], rows_of: list[list[int]],
                  probs: np.ndarray, align: list[dict[str, float]],
                  unc: list[dict[str, float]], detail: np.ndarray) -> list[dict[str, float]]:
        """Each claim's feature row.

        ``rows_of[ci]``: the rows of ``probs`` (and of ``detail``, the
        :data:`NLI_DETAIL_FEATURES`) of claim ``ci``'s units.
        """
        from verifier.uncertainty import nli_entropy

        # how many sentences the NLI detector read each claim as (1: read whole)
        by_sentence = bool(getattr(self.nli, "resolved_hypothesis_sentences", False))
        out = []
        for ci, rows in enumerate(rows_of):
            f = dict.fromkeys(all_features(), math.nan)
            f["nli.units"] = float(len(rows))
            f["nli.sentences"] = (float(max(1, len(hypothesis_sentences(paired[ci].claim.text))))
                                  if by_sentence else 1.0)
            if rows:
                k = rows[best_unit(probs[rows])]
                row = probs[k]
                f.update(zip(NLI_DETAIL_FEATURES, map(float, detail[k]), strict=True))
                f.update({"nli.entailment": float(row[0]), "nli.neutral": float(row[1]),
                          "nli.contradiction": float(row[2]),
                          "nli.mean_entailment": float(probs[rows, 0].mean()),
                          "nli.max_contradiction": float(probs[rows, 2].max()),
                          "unc.nli_entropy": nli_entropy(row)})
            f.update(align[ci])
            f.update({k: v for k, v in unc[ci].items() if k != "unc.nli_entropy"})
            f.update(derive_features(f))
            out.append(f)
        return out

    def _decide_all(self, paired: Sequence[ClaimEvidence], units: list[tuple[int, Evidence]],
                    rows_of: list[list[int]], probs: np.ndarray,
                    features: list[dict[str, float]],
                    alone: dict[int, tuple[str, float]] | None = None) -> list[ClaimVerdict]:
        def proba(model: Any) -> np.ndarray | None:
            if model is None or not features:
                return None
            names = list(model.feature_names_in_)
            X = np.array([[f.get(n, math.nan) for n in names] for f in features],
                         dtype=np.float64)
            p = model.predict_proba(X)
            cols = [list(model.classes_).index(s.value) for s in Status]
            return p[:, cols]  # columns in Status order

        meta_p, align_p = proba(self.meta), proba(self.alignment_classifier)
        order_s = list(Status)
        verdicts = []
        for ci, ce in enumerate(paired):
            rows = rows_of[ci]
            f = features[ci]
            if align_p is not None:
                f["align.p_supported"] = float(align_p[ci, order_s.index(Status.SUPPORTED)])
                f["align.p_contradictory"] = float(
                    align_p[ci, order_s.index(Status.CONTRADICTORY)])
            scores = {k: v for k, v in f.items() if not (isinstance(v, float) and math.isnan(v))}
            if not rows:
                verdicts.append(ClaimVerdict(ce.claim, Status.INSUFFICIENT_INFO,
                                             _certain(Status.INSUFFICIENT_INFO), (), scores))
                continue
            best = rows[best_unit(probs[rows])]
            row = probs[best]
            if alone and best in alone:  # the passage's sentence that supports the claim best
                passage = alone[best][0]
                best = max((k for k in rows if k in alone and alone[k][0] == passage),
                           key=lambda k: alone[k][1])
            ev_best = units[best][1]
            order = (ev_best, *(units[k][1] for k in rows if k != best))
            if meta_p is not None:
                probabilities = {s.value: float(meta_p[ci, j]) for j, s in enumerate(order_s)}
                status = self.decide(probabilities)
                cut = support_cut(self.meta, self.strictness)
                if status != Status.SUPPORTED and cut is not None and f["match.exact"] and \
                        _stated(ce.claim.text, ce.evidence):
                    # one of its evidence sentences verbatim, as in the threshold rule below:
                    # an unrelated part of a long evidence text read as a contradiction
                    # outvoted it ("The Eiffel Tower is in Paris." against a paragraph that
                    # says so); p(Supported) is reported at the cut, the rest scaled to fit
                    rest = 1.0 - probabilities[Status.SUPPORTED.value]
                    scale = (1.0 - cut) / rest if rest > 0 else 0.0
                    probabilities = {k: cut if k == Status.SUPPORTED.value else v * scale
                                     for k, v in probabilities.items()}
                    status = self.decide(probabilities)
            else:
                if f["match.exact"] and row[0] < self.support_threshold and _stated(
                        ce.claim.text, ce.evidence):
                    # A claim that is one of its evidence sentences verbatim (up to case,
                    # spacing and final punctuation) is supported, whatever the model says;
                    # quoted inside a sentence it may be reported or denied ("The claim that
                    # vaccines cause autism has been debunked"): the model decides.
                    # float64: p(Supported) is reported at the threshold, not just under it
                    row = np.array([self.support_threshold, 0.0, 0.0], dtype=np.float64)
                    row[1:] = (1 - row[0]) / 2
                probabilities = {Status.SUPPORTED.value: float(row[0]),
                                 Status.CONTRADICTORY.value: float(row[2]),
                                 Status.INSUFFICIENT_INFO.value: float(row[1])}
                status = self.status_of(row)
            if not ce.claim.verifiable:  # an opinion: nothing to verify, whatever the scores say
                status = Status.INSUFFICIENT_INFO
                probabilities = _certain(status)
            verdicts.append(ClaimVerdict(ce.claim, status, probabilities, order, scores))
        return verdicts

    def verify_pairs(self, claims: Sequence[str | Claim],
                     evidences: Sequence[str | Evidence | Sequence[str | Evidence]]
                     ) -> list[ClaimVerdict]:
        """Verdicts for pre-paired input: ``claims[i]`` against ``evidences[i]``.

        ``evidences[i]`` is one evidence text (or ``Evidence``) or a list of them. The
        caller's pairing is authoritative: every evidence text given for a claim is scored,
        however many (``top_k_evidence`` caps only the evidence the verifier ranks itself),
        and a claim is supported when any of them supports it (see :func:`best_unit`).

        Raises:
            TypeError, ValueError: A claim or evidence text that is not a non-empty str (or
                ``Claim`` / ``Evidence`` / ``Passage``), that shows nothing (only whitespace
                or invisible characters), or that the NLI model cannot read (a claim too
                long for its window): the message names ``claims[i]`` or
                ``evidences[i][j]`` and the value.
        """
        for name, value in (("claims", claims), ("evidences", evidences)):
            if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
                raise TypeError(f"{name} must be a list (one item per pair), got "
                                f"{type(value).__name__} {value!r:.80}")
        if len(claims) != len(evidences):
            raise ValueError(f"claims has {len(claims)} items but evidences has "
                             f"{len(evidences)}")
        paired, one = [], []  # one[i]: evidences[i] is one text, not a list of them
        for i, (c, e) in enumerate(zip(claims, evidences, strict=True)):
            if isinstance(c, Claim) and not is_blank(c.text):
                claim = c
            elif isinstance(c, str) and not is_blank(c):
                claim = Claim(c)
            elif isinstance(c, (str, Claim)):  # bad input, not a wrong type: a ValueError
                raise ValueError(f"claims[{i}] is empty (only whitespace or invisible "
                                 f"characters): {c!r:.80}")
            else:
                raise TypeError(f"claims[{i}] must be a non-empty str or a Claim, got {c!r:.80}")
            check_whole_characters(f"claims[{i}]", claim.text)
            one.append(isinstance(e, (str, Evidence, Passage)) or not isinstance(e, Sequence))
            items: Any = [e] if one[i] else e  # one piece of evidence, or a list of them
            try:
                evs = _as_evidence(items)
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"evidences[{i}]: {exc}") from exc
            if not evs:
                raise ValueError(f"evidences[{i}] is empty")
            paired.append(ClaimEvidence(claim, tuple(evs)))
        naming = _Naming(lambda ci: f"claims[{ci}]",
                         lambda ci, j: f"evidences[{ci}]" if one[ci] else f"evidences[{ci}][{j}]")
        return self._verify_paired(paired, top_k=None, naming=naming)
