"""The verifier front door: ``Verifier().verify(draft, evidence=... | retriever=...)``.

Today a claim's status comes from the NLI detector over its best evidence sentences, with the
deterministic checks' findings reported alongside; the calibrated ensemble (alignment,
uncertainty, meta-classifier) will replace the decision rule without changing this API.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verifier.nli import NLIDetector, aggregate_chunks
from verifier.types import Claim, ClaimEvidence, ClaimVerdict, Evidence, Passage, Status

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Report:
    """The verification of one draft.

    Attributes:
        draft: The draft text.
        verdicts: One verdict per claim, in draft order.
        timings: Seconds per stage (``decompose``, ``retrieve``, ``pair``, ``nli``, ``checks``).
    """

    draft: str
    verdicts: tuple[ClaimVerdict, ...]
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict."""
        return {"draft": self.draft, "verdicts": [v.to_dict() for v in self.verdicts],
                "timings": dict(self.timings)}

    def counts(self) -> dict[str, int]:
        """How many claims got each status."""
        return {s.value: sum(v.status == s for v in self.verdicts) for s in Status}


def _context(ev: Evidence, passages: Sequence[Evidence] | None) -> str:
    """The passage that holds ``ev`` (smallest one), or ``ev`` itself."""
    best = None
    for p in passages or ():
        if p.source_id == ev.source_id and p.span[0] <= ev.span[0] and ev.span[1] <= p.span[1] \
                and p.span != (0, 0):
            if best is None or p.span[1] - p.span[0] < best.span[1] - best.span[0]:
                best = p
    return best.content if best is not None else ev.content


def _norm(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".!? ")


def _as_evidence(items: Sequence[Evidence | Passage | str]) -> list[Evidence]:
    out = []
    for i, it in enumerate(items):
        if isinstance(it, Evidence):
            out.append(it)
        elif isinstance(it, Passage):
            span = tuple(it.metadata.get("doc_span", (0, len(it.text))))
            out.append(Evidence(it.text, it.source_id, span))  # type: ignore[arg-type]
        elif isinstance(it, str):
            if not it.strip():
                raise ValueError(f"evidence[{i}] is empty")
            out.append(Evidence(it, f"evidence-{i + 1}", (0, len(it))))
        else:
            raise TypeError(f"evidence[{i}] must be an Evidence, Passage or str, got "
                            f"{type(it).__name__}")
    return out


class Verifier:
    """Verify the claims of a draft against evidence.

    Args:
        nli: The NLI detector (default: the embedded model).
        decomposer: Splits drafts into claims (default: spaCy).
        pairer: Finds each claim's evidence sentences (default: embedded MiniLM).
        support_threshold: p(entailment) at or above which a claim is ``Supported``.
        contradiction_threshold: p(contradiction) at or above which it is ``Contradictory``.
        top_k_evidence: Evidence sentences scored per claim.

    Example:
        >>> v = Verifier()  # doctest: +SKIP
        >>> report = v.verify("Paris is the capital of France.",  # doctest: +SKIP
        ...                   evidence=["Paris is the capital and largest city of France."])
        >>> report.verdicts[0].status  # doctest: +SKIP
        <Status.SUPPORTED: 'Supported'>
    """

    def __init__(self, nli: NLIDetector | None = None, *, decomposer: Any = None,
                 pairer: Any = None, support_threshold: float = 0.5,
                 contradiction_threshold: float = 0.5, top_k_evidence: int = 3) -> None:
        for name, val in (("support_threshold", support_threshold),
                          ("contradiction_threshold", contradiction_threshold)):
            if not 0.0 < float(val) <= 1.0:
                raise ValueError(f"{name} must be in (0, 1], got {val!r}")
        if not isinstance(top_k_evidence, int) or top_k_evidence <= 0:
            raise ValueError(f"top_k_evidence must be > 0, got {top_k_evidence!r}")
        self.nli = nli or NLIDetector()
        self._decomposer = decomposer
        self._pairer = pairer
        self.support_threshold = float(support_threshold)
        self.contradiction_threshold = float(contradiction_threshold)
        self.top_k_evidence = top_k_evidence

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

            self._pairer = EvidencePairer(top_k=self.top_k_evidence)
        return self._pairer

    def status_of(self, probs: np.ndarray) -> Status:
        """Decision rule on an aggregated (entailment, neutral, contradiction) row."""
        if probs[0] >= self.support_threshold and probs[0] >= probs[2]:
            return Status.SUPPORTED
        if probs[2] >= self.contradiction_threshold:
            return Status.CONTRADICTORY
        return Status.INSUFFICIENT_INFO

    def verify(self, draft: str, *, evidence: Sequence[Evidence | Passage | str] | None = None,
               retriever: Any = None, question: str | None = None, top_k: int = 5) -> Report:
        """Decompose ``draft``, find each claim's evidence, and decide a status per claim.

        Args:
            draft: The answer to verify.
            evidence: Passages to check against (``Evidence``, ``Passage`` or plain strings).
            retriever: Instead of ``evidence``: anything with ``retrieve(query, *, top_k)``;
                queried with ``question`` (or the draft) and with each claim.
            question: The question the draft answers (for retrieval).
            top_k: Passages retrieved per query.
        """
        if not isinstance(draft, str) or not draft.strip():
            raise ValueError("draft must be a non-empty str")
        if (evidence is None) == (retriever is None):
            raise ValueError("give exactly one of evidence= or retriever=")
        t: dict[str, float] = {}
        t0 = time.perf_counter()
        claims = self.decomposer.decompose(draft)
        t["decompose"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        if retriever is not None:
            passages: list[Evidence] = list(retriever.retrieve(question or draft, top_k=top_k))
            for c in claims:
                passages.extend(retriever.retrieve(c.text, top_k=top_k))
        else:
            passages = _as_evidence(evidence or [])
        t["retrieve"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        paired = self.pairer.pair(claims, passages)
        t["pair"] = time.perf_counter() - t0
        verdicts = self.verify_claims(paired, passages=passages, timings=t)
        return Report(draft, tuple(verdicts), {k: round(v, 4) for k, v in t.items()})

    def verify_claims(self, paired: Sequence[ClaimEvidence], *,
                      passages: Sequence[Evidence] | None = None,
                      timings: dict[str, float] | None = None) -> list[ClaimVerdict]:
        """Verdicts for claims already paired with their evidence sentences (best first).

        Args:
            paired: Claims with their evidence sentences.
            passages: The passages the sentences were taken from. When given, the NLI model
                reads each sentence inside its passage (so "It was built in 1889" keeps what
                "It" is); the verdict still points at the sentence's span.
            timings: A dict to add ``nli`` and ``checks`` seconds to.
        """
        from mitigation.checks import run_checks

        t0 = time.perf_counter()
        units = [(ci, ev) for ci, ce in enumerate(paired)
                 for ev in ce.evidence[: self.top_k_evidence]]
        keys = [(_context(ev, passages), paired[ci].claim.text) for ci, ev in units]
        unique = list(dict.fromkeys(keys))  # sentences of one passage share a premise
        scored = self.nli.predict(unique) if unique else np.zeros((0, 3), dtype=np.float32)
        index = {k: i for i, k in enumerate(unique)}
        probs = scored[[index[k] for k in keys]] if keys else scored
        if timings is not None:
            timings["nli"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        verdicts = []
        for ci, ce in enumerate(paired):
            rows = [k for k, (cj, _) in enumerate(units) if cj == ci]
            if not rows:
                verdicts.append(ClaimVerdict(ce.claim, Status.INSUFFICIENT_INFO,
                                             {s.value: (1.0 if s == Status.INSUFFICIENT_INFO
                                                        else 0.0) for s in Status},
                                             (), {"evidence.count": 0.0}))
                continue
            row = aggregate_chunks(probs[rows])
            best = rows[int(np.flatnonzero((probs[rows] == row).all(axis=1))[0])]
            ev_best = units[best][1]
            order = [ev_best] + [units[k][1] for k in rows if k != best]
            findings = run_checks(ce.claim.text, [e.content for e in order])
            # A claim quoted verbatim (up to case, spacing and final punctuation) by one of its
            # evidence sentences is supported, whatever the model says.
            exact = any(_norm(ce.claim.text) in _norm(e.content) for e in order)
            if exact and row[0] < self.support_threshold:
                row = np.array([max(row[0], self.support_threshold), 0.0, 0.0],
                               dtype=np.float32)
                row[1:] = (1 - row[0]) / 2
            scores = {"nli.entailment": float(row[0]), "nli.neutral": float(row[1]),
                      "nli.contradiction": float(row[2]), "evidence.count": float(len(rows)),
                      "checks.findings": float(len(findings)),
                      "checks.high": float(sum(f.severity.value == "HIGH" for f in findings)),
                      "match.exact": float(exact)}
            status = self.status_of(row) if ce.claim.verifiable else Status.INSUFFICIENT_INFO
            verdicts.append(ClaimVerdict(
                ce.claim, status,
                {Status.SUPPORTED.value: float(row[0]),
                 Status.CONTRADICTORY.value: float(row[2]),
                 Status.INSUFFICIENT_INFO.value: float(row[1])},
                tuple(order), scores))
        if timings is not None:
            timings["checks"] = time.perf_counter() - t0
        return verdicts

    def verify_pairs(self, claims: Sequence[str | Claim],
                     evidences: Sequence[str | Evidence | Sequence[str | Evidence]]
                     ) -> list[ClaimVerdict]:
        """Verdicts for pre-paired input: ``claims[i]`` against ``evidences[i]``.

        ``evidences[i]`` is one evidence text (or ``Evidence``) or a list of them.
        """
        if len(claims) != len(evidences):
            raise ValueError(f"claims has {len(claims)} items but evidences has "
                             f"{len(evidences)}")
        paired = []
        for i, (c, e) in enumerate(zip(claims, evidences, strict=True)):
            claim = c if isinstance(c, Claim) else Claim(str(c))
            items = [e] if isinstance(e, (str, Evidence)) else list(e)
            evs = _as_evidence(items)
            if not evs:
                raise ValueError(f"evidences[{i}] is empty")
            paired.append(ClaimEvidence(claim, tuple(evs)))
        return self.verify_claims(paired)
