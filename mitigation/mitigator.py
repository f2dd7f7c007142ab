"""Rule-based mitigation of a draft from its claim verdicts.

Supported claims get a citation, contradicted ones are corrected from the evidence or flagged,
unverifiable ones are hedged or dropped by strictness, and a reference list closes the answer.
Text outside the claims that change is kept byte for byte.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from mitigation.checks import DEFAULT_CHECKS, Check, Finding, Severity, run_checks
from mitigation.values import _FUNCTION_WORDS, find_names
from verifier.text import trimmed_sentence_spans
from verifier.types import ClaimVerdict, Evidence, Status

Strictness = Literal["lenient", "balanced", "strict"]
Action = Literal["cited", "kept", "corrected", "warned", "hedged", "removed"]
SCHEMA_VERSION = "1"

_CITE = re.compile(r"\s*\[\d+(?:\s*,\s*\d+)*\]")
_CONNECT_BEFORE = re.compile(r"(?:\s*,)?\s*(?:\band\b|\bbut\b|\bwhile\b|\bwhereas\b|;)?\s*$")
_CONNECT_AFTER = re.compile(r"^\s*(?:,\s*)?(?:(?:and|but|while|whereas)\b|;)?\s*")
_WORD = re.compile(r"[\w'’.,$%-]+")


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
    """

    claim: str
    status: Status
    action: Action
    reason: str
    span: tuple[int, int]
    replacement: str | None = None
    findings: tuple[Finding, ...] = ()
    evidence: tuple[Evidence, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict."""
        return {"claim": self.claim, "status": self.status.value, "action": self.action,
                "reason": self.reason, "span": list(self.span), "replacement": self.replacement,
                "findings": [f.to_dict() for f in self.findings],
                "evidence": [e.to_dict() for e in self.evidence]}


@dataclass(frozen=True)
class Reference:
    """One numbered source of the answer.

    Attributes:
        number: The ``[n]`` the answer cites it by.
        source_id: The source.
        excerpt: The cited evidence in context; when several claims cite different
            sentences of one source, their excerpts joined by `` … `` (each cited sentence
            is quoted).
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
        lines = ["## Answer", "", self.body, ""]
        lines += [f"Grounding score: {self.grounding_score:.2f} · hallucination score: "
                  f"{self.hallucination_score:.2f} · strictness: {self.strictness}", ""]
        if self.references:
            lines += ["## References", ""]
            lines += [f"{r.number}. `{r.source_id}` {list(r.span)}: “{r.excerpt}”"
                      for r in self.references]
            lines.append("")
        lines += ["## Claims", "", "| # | claim | status | action | reason |",
                  "|---|---|---|---|---|"]
        for i, e in enumerate(self.edits, start=1):
            claim = e.claim.replace("|", "\\|")
            lines.append(f"| {i} | {claim} | {e.status.value} | {e.action} | "
                         f"{e.reason.replace('|', '/')} |")
        return "\n".join(lines) + "\n"


def _hedge(claim: str) -> str:
    body = _CITE.sub("", claim).strip().rstrip(".!")
    first = body.split(" ", 1)[0]
    names = " ".join(find_names(body))
    if first and first[0].isupper() and first not in names.split():
        body = first[0].lower() + body[1:]
    return f"It is suggested that {body}, but this could not be verified."


def _warning(claim: str) -> str:
    return (f"Note: a statement that the sources contradict was removed "
            f"(“{_CITE.sub('', claim).strip().rstrip('.')}”).")


def correct_claim(text: str, evidence: Sequence[str], findings: Sequence[Finding] = ()
                  ) -> tuple[str, str] | None:
    """Correct a contradicted claim from its evidence, when the evidence gives the right value.

    Tries, in order: a value contradiction found by the deterministic checks (number or date);
    then a single-substitution alignment with an evidence sentence (the claim equals the
    sentence except for one short run of words holding a name or a number).

    Returns:
        ``(corrected text, reason)`` or ``None`` when no safe correction exists.
    """
    for f in findings:
        if f.type == "value_contradiction" and f.value and f.evidence_value and f.value in text:
            return (text.replace(f.value, f.evidence_value, 1),
                    f"{f.value!r} corrected to {f.evidence_value!r} from the evidence")
    ctoks = [(m.group(0), m.span()) for m in _WORD.finditer(text)]
    words = [t.lower().strip(".,") for t, _ in ctoks]
    best: tuple[str, str] | None = None
    for ev in evidence:
        etoks = [m.group(0) for m in _WORD.finditer(ev)]
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
        new_words = etoks[j1:j2]

        def valued(ws: list[str]) -> bool:  # holds a name or a number, not just a pronoun
            return any((w[:1].isupper() and w.strip(".,") not in _FUNCTION_WORDS)
                       or any(ch.isdigit() for ch in w) for w in ws)

        if not (valued(old) and valued(new_words)):
            continue
        start, end = ctoks[i1][1][0], ctoks[i2 - 1][1][1]
        trail = re.search(r"[.,]+$", text[start:end])
        if trail:
            end -= len(trail.group(0))
        new = " ".join(etoks[j1:j2]).rstrip(".,")
        best = (text[:start] + new + text[end:],
                f"{text[start:end]!r} corrected to {new!r} from the evidence")
        break
    return best


class Mitigator:
    """Rewrite a draft from its claim verdicts.

    Args:
        strictness: ``lenient`` and ``balanced`` correct or flag contradicted claims and hedge
            unverifiable ones; ``strict`` removes both. (Balanced and lenient differ only in
            that lenient keeps supported claims that the deterministic checks flag HIGH;
            balanced hedges them.)
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
        if not isinstance(max_citations, int) or max_citations < 0:
            raise ValueError(f"max_citations must be an int >= 0, got {max_citations!r}")
        self.strictness: Strictness = strictness
        self.max_citations = max_citations
        self.excerpt_chars = excerpt_chars
        self.checks = tuple(checks)

    def to_dict(self) -> dict[str, Any]:
        """Configuration (the checks are the defaults)."""
        return {"type": "mitigator.rules.v1",
                "init_parameters": {"strictness": self.strictness,
                                    "max_citations": self.max_citations,
                                    "excerpt_chars": self.excerpt_chars}}

    def _excerpt(self, ev: Any, documents: Mapping[str, str] | None) -> str:
        text, pre, post = ev.content, "", ""
        doc = documents.get(ev.source_id) if documents else None
        if doc is not None and ev.span != (0, 0) and doc[ev.span[0]:ev.span[1]] == ev.content:
            s, e = ev.span
            pad = max(0, (self.excerpt_chars - (e - s)) // 2)
            a, b = max(0, s - pad), min(len(doc), e + pad)
            text, pre, post = doc[a:b], "…" if a > 0 else "", "…" if b < len(doc) else ""
        text = " ".join(text.split())
        if len(text) > self.excerpt_chars:
            text = text[: self.excerpt_chars].rsplit(" ", 1)[0]
            post = "…"
        return pre + text + post

    # ------------------------------------------------------------------ decisions
    def _decide(self, v: ClaimVerdict, original: str) -> tuple[Action, str, str | None, tuple]:
        claim = v.claim
        ev_texts = [e.content for e in v.evidence]
        findings = tuple(run_checks(claim.text, ev_texts, self.checks)) if claim.verifiable \
            else ()
        if not claim.verifiable:
            return "kept", f"not verifiable ({claim.type.value}); left as written", None, ()
        if v.status == Status.SUPPORTED:
            high = [f for f in findings if f.severity == Severity.HIGH]
            if high and self.strictness == "strict":
                return "removed", "supported overall, but " + high[0].message, None, findings
            if high and self.strictness == "balanced":
                return "hedged", "supported overall, but " + high[0].message, None, findings
            return "cited", "supported by the evidence", None, findings
        if v.status == Status.CONTRADICTORY:
            if self.strictness == "strict":
                return "removed", "contradicted by the evidence (strict mode)", None, findings
            # Correct the draft's own words first, so the rest of the sentence stays as written.
            fixed = correct_claim(original, ev_texts, findings) or correct_claim(
                claim.text, ev_texts, findings)
            if fixed is not None:
                return "corrected", fixed[1], fixed[0], findings
            return "warned", "contradicted by the evidence; no safe correction", None, findings
        if self.strictness == "strict":
            return "removed", "could not be verified (strict mode)", None, findings
        return "hedged", "could not be verified from the evidence", None, findings

    # ------------------------------------------------------------------ rewriting
    def mitigate(self, draft: str, verdicts: Sequence[ClaimVerdict], *,
                 documents: Mapping[str, str] | None = None) -> MitigatedAnswer:
        """Rewrite ``draft`` from ``verdicts`` (claim spans must index ``draft``).

        Args:
            draft: The draft answer.
            verdicts: One verdict per claim; claim spans must not overlap.
            documents: Full source texts by ``source_id``, for reference excerpts around the
                evidence span (else the evidence text itself is the excerpt).
        """
        if not isinstance(draft, str):
            raise TypeError(f"draft must be a str, got {type(draft).__name__}")
        order = sorted(range(len(verdicts)), key=lambda i: verdicts[i].claim.span)
        for a, b in zip(order, order[1:], strict=False):
            if verdicts[a].claim.span[1] > verdicts[b].claim.span[0]:
                raise ValueError(f"verdicts[{a}] and verdicts[{b}] have overlapping claim spans "
                                 f"{verdicts[a].claim.span} and {verdicts[b].claim.span}")
        for i, v in enumerate(verdicts):
            if v.claim.span[1] > len(draft) or v.claim.span == (0, 0):
                raise ValueError(f"verdicts[{i}].claim.span {v.claim.span} does not index the "
                                 f"draft of length {len(draft)}")
        numbers: dict[str, int] = {}
        refs: list[Reference] = []

        def cite(v: ClaimVerdict) -> int | None:
            if not v.evidence:
                return None
            ev = v.evidence[0]
            if ev.source_id not in numbers:
                if len(numbers) >= self.max_citations:
                    return None
                numbers[ev.source_id] = len(numbers) + 1
                refs.append(Reference(numbers[ev.source_id], ev.source_id,
                                      self._excerpt(ev, documents), ev.span, (ev.span,)))
                return numbers[ev.source_id]
            n = numbers[ev.source_id]
            ref = refs[n - 1]
            if ev.span not in ref.spans and " ".join(ev.content.split()) not in ref.excerpt:
                # another sentence of the same source: quote it too
                refs[n - 1] = replace(ref, excerpt=f"{ref.excerpt} … "
                                      f"{self._excerpt(ev, documents)}",
                                      spans=(*ref.spans, ev.span))
            return n

        decisions = {i: self._decide(verdicts[i], draft[slice(*verdicts[i].claim.span)])
                     for i in order}
        edits: dict[int, Edit] = {}
        out: list[str] = []
        pos = 0
        sentences = trimmed_sentence_spans(draft) or [(0, len(draft))]
        dropped = False  # the last sentence written was removed whole

        def gap(text: str) -> str:
            # after a sentence removed at the start of the draft or of a paragraph, the
            # space that separated it from the next one would open the line
            if dropped:
                written = "".join(out)
                if not written.strip() or written.endswith("\n"):
                    return text.lstrip(" \t")
            return text

        for s_start, s_end in sentences:
            inside = [i for i in order if s_start <= verdicts[i].claim.span[0] < s_end]
            if not inside:
                continue
            s_end = max(s_end, max(verdicts[i].claim.span[1] for i in inside))
            out.append(gap(draft[pos:s_start]))
            new_sentence, appended = self._rewrite_sentence(
                draft, s_start, s_end, inside, verdicts, decisions, cite, edits)
            dropped = False
            if new_sentence.strip():
                out.append(new_sentence)
                out.extend(" " + a for a in appended)
            elif appended:
                out.append(" ".join(appended))
            else:
                dropped = True
                if out and out[-1].endswith(" "):
                    out[-1] = out[-1][:-1]  # a whole sentence removed: one separating space
            pos = s_end
        out.append(gap(draft[pos:]))
        body = "".join(out)
        if not body.strip() and verdicts:
            body = "No statement of the draft could be verified."
        text = body
        if refs:
            text = body.rstrip() + "\n\nReferences:\n" + "\n".join(
                f"[{r.number}] {r.source_id}: “{r.excerpt}”" for r in refs)
        ordered = tuple(edits[i] for i in order)
        g, h = _scores(ordered)
        return MitigatedAnswer(text, body, tuple(refs), ordered, g, h, self.strictness, draft)

    def _rewrite_sentence(self, draft: str, s_start: int, s_end: int, inside: list[int],
                          verdicts: Sequence[ClaimVerdict], decisions: dict, cite: Any,
                          edits: dict[int, Edit]) -> tuple[str, list[str]]:
        sentence = draft[s_start:s_end]
        appended: list[str] = []
        pieces: list[tuple[int, int, str]] = []  # (start, end, replacement) relative
        whole = len(inside) == 1 and _covers(sentence, verdicts[inside[0]].claim.span, s_start)
        for i in inside:
            v = verdicts[i]
            action, reason, replacement, findings = decisions[i]
            a, b = v.claim.span[0] - s_start, v.claim.span[1] - s_start
            original = sentence[a:b]
            new: str | None = None
            if action in ("cited", "corrected"):
                # the draft's own [n] markers give way to this answer's numbering
                base = _CITE.sub("", replacement if action == "corrected" else original)
                n = cite(v)
                if n is None and action == "cited":
                    action, reason = "kept", reason + "; no citation (cap reached or no source)"
                new = _insert_citation(base, n) if n is not None else base
                pieces.append((a, b, new))
            elif action == "kept":
                new = None
            else:
                sentence_text = {"warned": _warning, "hedged": _hedge}.get(action)
                if whole:
                    new = sentence_text(v.claim.text) if sentence_text else ""
                    pieces.append((0, len(sentence), new))
                else:
                    pieces.append((a, b, ""))
                    if sentence_text:
                        new = sentence_text(v.claim.text)
                        appended.append(new)
            edits[i] = Edit(v.claim.text, v.status, action, reason, v.claim.span,
                            new if action != "removed" else None, findings, v.evidence[:3])
        return _apply(sentence, pieces), appended


def _covers(sentence: str, span: tuple[int, int], offset: int) -> bool:
    a, b = span[0] - offset, span[1] - offset
    return not sentence[:a].strip() and not re.sub(r"[\s.!?\"')\]\d\[,]", "", sentence[b:])


def _insert_citation(text: str, n: int) -> str:
    m = re.search(r"[.!?;:,]+[\"”')]*$", text)
    if m:
        return f"{text[:m.start()].rstrip()} [{n}]{text[m.start():]}"
    return f"{text.rstrip()} [{n}]"


def _apply(sentence: str, pieces: list[tuple[int, int, str]]) -> str:
    """Apply replacements; an empty replacement removes a clause with its connector."""
    out = sentence
    for a, b, new in sorted(pieces, reverse=True):
        if (a, b) == (0, len(sentence)):
            return new
        if new:
            out = out[:a] + new + out[b:]
            continue
        before, after = out[:a], out[b:]
        tail = re.match(r"^[.!?]+", after.strip())
        end_punct = tail.group(0) if tail else ""
        if before.strip():
            before = _CONNECT_BEFORE.sub("", before)
            rest = after.strip()
            rest = rest[len(end_punct):] if end_punct else rest
            out = before + (" " + rest.lstrip() if rest.strip() else "") + (end_punct or "")
        else:
            after = _CONNECT_AFTER.sub("", after)
            out = before + (after[:1].upper() + after[1:] if after else "")
    if out.strip() and not re.search(r"[.!?][\"”')\]]*\s*$", out) and \
            re.search(r"[.!?]\s*$", sentence):
        out = out.rstrip() + sentence.rstrip()[-1]
    return out


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

