"""A self-correcting answer loop: verify, then regenerate or rewrite the query, within bounds.

``SelfCorrectingPipeline.run(question)`` retrieves, grades the passages' relevance, generates,
verifies (grounding score), checks that the answer addresses the question, and routes:

- not grounded -> regenerate from the same passages (at most ``max_regenerations`` times),
  the prompt naming the claims the verifier could not support;
- no relevant passage at all -> rewrite the query and retrieve again (a draft from no
  passages cannot be grounded);
- grounded but not useful -> rewrite the query with the generator, guided by the verifier's
  feedback, and retrieve again (at most ``max_query_rewrites`` times);
- grounded and useful -> finish, approved.

When a bound is spent the best answer so far (a useful draft before a not useful one, then
the better grounded) is returned, mitigated, with ``approved=False``. A draft that was never
verified against a passage (none was relevant, the verifier failed every time, or it found
no claim in the draft to check) is mitigated with no evidence: its claims are hedged or
dropped as the mitigator's strictness says, never returned as written. An approved answer
is always the approved draft, with its own grounding score.

A rewritten query is the generator's reply when it reads as a search query (one line, one
sentence, at most :data:`MAX_QUERY_WORDS` words or twice the question's, and not a sentence
of the draft); otherwise the question with the draft's first content words.
An error inside a grader or the verifier counts as "not relevant" / "not grounded" /
"not useful", is logged and is recorded in the trace; the loop never exceeds its bounds.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from rag.decompose import strip_citations
from rag.generation import DEFAULT_INSTRUCTION, Generator, build_prompt, trim_echo
from rag.pairing import check_min_score
from rag.retrieval import tokenize
from verifier.checking import is_int
from verifier.text import trimmed_sentence_spans
from verifier.types import Claim, ClaimVerdict, Evidence, Status

logger = logging.getLogger(__name__)

_REFUSAL = re.compile(
    r"\b(i (do not|don't|cannot|can't) (know|answer|find|say|help)|no (information|answer)|"
    r"not (enough|sufficient) information|the passages do not (contain|say|mention)|"
    r"unable to (answer|determine|find)|i'm not sure|i am not sure)\b", re.I)


class RelevanceGrader(Protocol):
    """Grades passages: ``grade(question, passages) -> list[bool]``."""

    def grade(self, question: str, passages: Sequence[Evidence]) -> list[bool]:
        """One flag per passage."""
        ...


class UsefulnessGrader(Protocol):
    """Grades an answer: ``grade(question, answer) -> bool`` (does it address the question)."""

    def grade(self, question: str, answer: str) -> bool:
        """True when the answer addresses the question."""
        ...


class LexicalRelevanceGrader:
    """Relevance by shared content words (BM25 tokeniser; cheap, no model).

    A passage is relevant when it holds at least ``min_overlap`` of the question's words.

    Raises:
        ValueError: ``min_overlap`` is not a number in [0, 1].
    """

    def __init__(self, min_overlap: float = 0.2) -> None:
        self.min_overlap = check_min_score(min_overlap, "min_overlap")

    def grade(self, question: str, passages: Sequence[Evidence]) -> list[bool]:
        """One flag per passage."""
        q = set(tokenize(question))
        if not q:
            return [True] * len(passages)
        return [len(q & set(tokenize(p.content))) / len(q) >= self.min_overlap for p in passages]


#: A question that asks for a quantity or a year ("How tall ...?", "In what year ...?").
_ASKS_NUMBER = re.compile(
    r"^\W*(?:how (?:tall|high|long|far|big|large|many|much|old|deep|wide|heavy|fast)"
    r"|(?:in )?what (?:year|percentage|number|height|length|age))\b", re.I)
#: A number, written in digits or words, or a month: what such a question is answered by.
_NUMBER_WORD = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
    r"forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion|dozen|half|"
    r"january|february|march|april|june|july|august|september|october|november|"
    r"december)\b", re.I)


class DefaultUsefulnessGrader:
    """Usefulness: no refusal, shared words, the kind of answer asked for, no contradiction.

    The answer is useful when it is not a refusal ("I don't know"), holds enough of the
    question's content words, gives a number when the question asks for a quantity or a
    year ("How tall is the Eiffel Tower?" is not answered by "The Eiffel Tower is in Paris
    [1].", which shares two of its three content words) and, when an NLI detector is given,
    is not judged to contradict the question.

    Args:
        nli: Optional NLI detector; the answer is the premise, the question the hypothesis.
        min_overlap: Share of the question's content words the answer must contain, in
            [0, 1].
        max_contradiction: Above this p(contradiction) the answer is judged not useful, in
            [0, 1].
        answer_kind: Require a number for a question that asks for one.

    Raises:
        ValueError: ``min_overlap`` or ``max_contradiction`` is not a number in [0, 1].
    """

    def __init__(self, nli: Any = None, *, min_overlap: float = 0.2,
                 max_contradiction: float = 0.9, answer_kind: bool = True) -> None:
        # both are shares in [0, 1]: min_overlap=5 would never approve an answer, and a
        # string would fail only at the first grade()
        self.nli = nli
        self.min_overlap = check_min_score(min_overlap, "min_overlap")
        self.max_contradiction = check_min_score(max_contradiction, "max_contradiction")
        self.answer_kind = bool(answer_kind)

    def grade(self, question: str, answer: str) -> bool:
        """True when the answer addresses the question."""
        if not answer.strip() or _REFUSAL.search(answer):
            return False
        if self.answer_kind and _ASKS_NUMBER.search(question) and not _NUMBER_WORD.search(
                strip_citations(answer)):  # "[1]" is no number given
            return False
        q = set(tokenize(question))
        if q and len(q & set(tokenize(answer))) / len(q) < self.min_overlap:
            return False
        if self.nli is not None:
            p = self.nli.predict([(answer, question)])[0]
            if p[2] > self.max_contradiction:
                return False
        return True


@dataclass(frozen=True)
class IterationTrace:
    """One pass of the loop."""

    iteration: int
    query: str
    passages: tuple[dict[str, Any], ...]
    draft: str
    statuses: tuple[str, ...]
    grounding_score: float | None
    useful: bool | None
    decision: str
    reason: str
    timings: dict[str, float] = field(default_factory=dict)
    errors: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict."""
        return {"iteration": self.iteration, "query": self.query,
                "passages": list(self.passages), "draft": self.draft,
                "statuses": list(self.statuses), "grounding_score": self.grounding_score,
                "useful": self.useful, "decision": self.decision, "reason": self.reason,
                "timings": dict(self.timings), "errors": list(self.errors)}


@dataclass(frozen=True)
class Answer:
    """The loop's result.

    Attributes:
        question: The question.
        text: Final text with citations and references (mitigated).
        grounding_score: Grounding score of the returned answer.
        sources: ``source_id`` of each cited reference, in citation order.
        approved: True when the answer was grounded and useful within the bounds.
        trace: Every iteration.
    """

    question: str
    text: str
    grounding_score: float
    sources: tuple[str, ...]
    approved: bool
    trace: tuple[IterationTrace, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict."""
        return {"question": self.question, "text": self.text,
                "grounding_score": self.grounding_score, "sources": list(self.sources),
                "approved": self.approved, "trace": [t.to_dict() for t in self.trace]}

    def to_json(self) -> str:
        """The answer and its trace as JSON."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)


class SelfCorrectingPipeline:
    """Retrieve, generate, verify, and correct course within bounds.

    Args:
        retriever: Anything with ``retrieve(query, *, top_k)``.
        generator: Writes drafts and rewrites queries.
        verifier: A :class:`~verifier.verify.Verifier` (``verify(draft, evidence=...)``).
        mitigator: A :class:`~mitigation.mitigator.Mitigator`.
        max_regenerations: Extra drafts from the same passages when not grounded.
        max_query_rewrites: Query rewrites when grounded but not useful.
        min_grounding: Grounding score at or above which a draft is grounded.
        top_k: Passages retrieved per query.
        relevance_grader: Drops irrelevant passages (default: lexical overlap).
        usefulness_grader: Judges whether the answer addresses the question.
        fallback_retriever: Called when fewer than half the passages are relevant; its
            passages are graded too, and added (new ones only) up to ``top_k`` in all.
        on_event: Callback receiving each progress event (a dict) as it happens.
    """

    def __init__(self, retriever: Any, generator: Generator, verifier: Any, mitigator: Any, *,
                 max_regenerations: int = 2, max_query_rewrites: int = 3,
                 min_grounding: float = 0.8, top_k: int = 5,
                 relevance_grader: RelevanceGrader | None = None,
                 usefulness_grader: UsefulnessGrader | None = None,
                 fallback_retriever: Any = None,
                 on_event: Callable[[dict[str, Any]], None] | None = None) -> None:
        for name, val in (("max_regenerations", max_regenerations),
                          ("max_query_rewrites", max_query_rewrites)):
            if not is_int(val) or val < 0:
                raise ValueError(f"{name} must be an int >= 0, got {val!r}")
        if not is_int(top_k) or top_k <= 0:
            raise ValueError(f"top_k must be an int > 0, got {top_k!r}")
        min_grounding = check_min_score(min_grounding, "min_grounding")
        self.retriever, self.generator = retriever, generator
        self.verifier, self.mitigator = verifier, mitigator
        self.max_regenerations = int(max_regenerations)
        self.max_query_rewrites = int(max_query_rewrites)
        self.min_grounding, self.top_k = min_grounding, int(top_k)
        self.relevance_grader = relevance_grader or LexicalRelevanceGrader()
        self.usefulness_grader = usefulness_grader or DefaultUsefulnessGrader()
        self.fallback_retriever = fallback_retriever
        self.on_event = on_event

    @property
    def max_iterations(self) -> int:
        """Upper bound on iterations: one first pass plus every allowed retry."""
        return 1 + self.max_regenerations + self.max_query_rewrites

    def run(self, question: str) -> Answer:
        """Run the loop to its end and return the :class:`Answer`."""
        answer = None
        for event in self.stream(question):
            if event["type"] == "answer":
                answer = event["answer"]
        assert answer is not None
        return answer

    def stream(self, question: str) -> Iterator[dict[str, Any]]:
        """Yield progress events as they happen, the answer last.

        Events: ``retrieved``, ``drafted``, ``verified``, ``decision`` per iteration, then
        ``{"type": "answer", "answer": Answer}``.
        """
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"question must be a non-empty str, got {question!r:.80}")
        query, regens, rewrites = question, 0, 0
        trace: list[IterationTrace] = []
        # best answer so far, ranked by (useful, grounding): a useful one beats a better-grounded
        # one. An approved draft always ranks first: an earlier useful draft grounded as well
        # would have been approved and ended the loop
        best: tuple[tuple[bool, float], Any, list[Evidence]] | None = None
        kept: list[Evidence] = []
        retrieve = True
        feedback: list[str] = []  # claims of the last draft the verifier could not support
        for it in range(1, self.max_iterations + 1):
            used_query = query
            timings: dict[str, float] = {}
            errors: list[str] = []
            if retrieve:
                t0 = time.perf_counter()
                kept = self._retrieve(question, query, errors)
                timings["retrieve"] = time.perf_counter() - t0
                yield self._emit({"type": "retrieved", "iteration": it, "query": query,
                                  "passages": [p.source_id for p in kept]})
            t0 = time.perf_counter()
            prompt = build_prompt(question, kept, instruction=regenerate_instruction(feedback))
            draft = trim_echo(self.generator.generate(prompt)[0], prompt).text
            timings["generate"] = time.perf_counter() - t0
            yield self._emit({"type": "drafted", "iteration": it, "draft": draft})
            t0 = time.perf_counter()
            grounding, statuses, mitigated, unsupported = self._verify(draft, kept, errors)
            timings["verify"] = time.perf_counter() - t0
            useful = self._useful(question, draft, errors)
            yield self._emit({"type": "verified", "iteration": it, "grounding_score": grounding,
                              "useful": useful})
            grounded = grounding is not None and grounding >= self.min_grounding
            key = (bool(useful), grounding or 0.0)
            if mitigated is not None and (best is None or key > best[0]):
                best = (key, mitigated, kept)
            if grounded and useful:
                decision, reason = "approve", "grounded and useful"
            elif not kept and rewrites < self.max_query_rewrites:
                # nothing relevant was retrieved: another draft from no passages cannot be
                # grounded, so look again with a rewritten query
                rewrites += 1
                feedback = []
                query = self._rewrite(question, query, draft, statuses, errors,
                                      no_passage=True)
                decision, reason, retrieve = "rewrite", "no relevant passage; new query: " \
                    f"{query!r}", True
            elif not kept:  # no rewrite left: a draft from no passages cannot be grounded
                decision, reason = "stop", "no relevant passage and no query rewrite left"
            elif not grounded and regens < self.max_regenerations:
                regens += 1
                decision, reason, retrieve = "regenerate", _why(grounding, useful), False
                feedback = unsupported
            elif grounded and not useful and rewrites < self.max_query_rewrites:
                rewrites += 1
                feedback = []
                query = self._rewrite(question, query, draft, statuses, errors)
                decision, reason, retrieve = "rewrite", "grounded but does not address the " \
                    f"question; new query: {query!r}", True
            else:
                decision, reason = "stop", "bounds spent: " + _why(grounding, useful)
            trace.append(IterationTrace(
                it, used_query,
                tuple({"source_id": p.source_id, "span": list(p.span)} for p in kept), draft,
                tuple(statuses), grounding, useful, decision, reason,
                {k: round(v, 4) for k, v in timings.items()}, tuple(errors)))
            yield self._emit({"type": "decision", "iteration": it, "decision": decision,
                              "reason": reason})
            if decision in ("approve", "stop"):
                break
        approved = trace[-1].decision == "approve"
        if best is not None:
            final = best[1]
        else:  # no draft was verified against a passage: the last useful one (else the last),
            # mitigated with no evidence, never as written
            final = self._mitigate_unverified(
                next((t.draft for t in reversed(trace) if t.useful), trace[-1].draft))
        text, score = final.text, final.grounding_score
        sources = tuple(r.source_id for r in final.references)
        answer = Answer(question, text, score, sources, approved, tuple(trace))
        yield self._emit({"type": "answer", "answer": answer})

    # ------------------------------------------------------------------ steps
    def _emit(self, event: dict[str, Any]) -> dict[str, Any]:
        if self.on_event is not None:
            self.on_event(event)
        return event

    def _retrieve(self, question: str, query: str, errors: list[str]) -> list[Evidence]:
        passages = list(self.retriever.retrieve(query, top_k=self.top_k))
        try:
            flags = list(self.relevance_grader.grade(question, passages))
            if len(flags) != len(passages):
                raise ValueError(f"relevance grader gave {len(flags)} flags for "
                                 f"{len(passages)} passages")
        except Exception as exc:  # conservative: an erring grader keeps nothing it can't vouch
            logger.warning("relevance grader failed: %s", exc)
            errors.append(f"relevance grader: {exc}")
            flags = [False] * len(passages)
        kept = [p for p, ok in zip(passages, flags, strict=True) if ok]
        if len(kept) * 2 < len(passages) and self.fallback_retriever is not None:
            # graded like the first ones, without the passages already kept, up to top_k
            seen = {(p.source_id, p.span, p.content) for p in kept}
            extra = [p for p in self.fallback_retriever.retrieve(query, top_k=self.top_k)
                     if (p.source_id, p.span, p.content) not in seen]
            try:
                ok = list(self.relevance_grader.grade(question, extra)) if extra else []
                if len(ok) != len(extra):
                    raise ValueError(f"relevance grader gave {len(ok)} flags for "
                                     f"{len(extra)} passages")
            except Exception as exc:  # conservative, as above
                logger.warning("relevance grader failed on the fallback's passages: %s", exc)
                errors.append(f"relevance grader (fallback): {exc}")
                ok = [False] * len(extra)
            for p, good in zip(extra, ok, strict=True):
                key = (p.source_id, p.span, p.content)
                if good and key not in seen and len(kept) < self.top_k:
                    seen.add(key)
                    kept.append(p)
        return kept

    def _verify(self, draft: str, kept: list[Evidence], errors: list[str]
                ) -> tuple[float | None, list[str], Any, list[str]]:
        """Grounding score, claim statuses, mitigated answer, claims not supported."""
        try:
            if not kept:
                raise ValueError("no relevant passage to verify against")
            report = self.verifier.verify(draft, evidence=kept)
            if not any(v.claim.verifiable for v in report.verdicts):
                # nothing was checked: no grounding to speak of (the mitigator's score of an
                # answer with no claim is 1.0, and "Wages fell and prices rose." once gave
                # no claim and was approved as written)
                raise ValueError("the draft has no claim the verifier could check")
            mitigated = self.mitigator.mitigate(draft, report.verdicts)
            unsupported = [v.claim.text for v in report.verdicts  # not "I hope this helps!"
                           if v.claim.verifiable and v.status.value != "Supported"]
            return (mitigated.grounding_score, [v.status.value for v in report.verdicts],
                    mitigated, unsupported)
        except Exception as exc:  # conservative: counts as not grounded
            logger.warning("verification failed: %s", exc)
            errors.append(f"verifier: {exc}")
            return None, [], None, []

    def _mitigate_unverified(self, draft: str) -> Any:
        """``draft`` mitigated with no evidence: every claim Insufficient_Info.

        The verifier splits the draft into claims (with ``evidence=[]`` it finds none for
        them); if it fails, the whole draft is one claim. A draft in which it finds no claim
        (a refusal, "I don't know.") has nothing to hedge and is returned as written: it was
        made one claim, and came back as "It is suggested that I don't know, but this could
        not be verified."
        """
        try:
            verdicts = self.verifier.verify(draft, evidence=[]).verdicts
        except Exception as exc:  # the draft is still not returned as written
            logger.warning("verification of the unverified draft failed (%s): it is "
                           "mitigated as one claim", exc)
            verdicts = []
        else:
            if not any(v.claim.verifiable for v in verdicts) and _REFUSAL.search(draft):
                return self.mitigator.mitigate(draft, verdicts)
        if not verdicts and draft.strip():
            a, b = len(draft) - len(draft.lstrip()), len(draft.rstrip())
            verdicts = [ClaimVerdict(Claim(draft[a:b], (a, b)), Status.INSUFFICIENT_INFO)]
        return self.mitigator.mitigate(draft, verdicts)

    def _useful(self, question: str, draft: str, errors: list[str]) -> bool:
        try:
            return bool(self.usefulness_grader.grade(question, draft))
        except Exception as exc:  # conservative: counts as not useful
            logger.warning("usefulness grader failed: %s", exc)
            errors.append(f"usefulness grader: {exc}")
            return False

    def _rewrite(self, question: str, query: str, draft: str, statuses: list[str],
                 errors: list[str], *, no_passage: bool = False) -> str:
        if no_passage:  # the draft came from no passage: not shown, lest it be copied
            prompt = (f"No relevant passage was found for the query below. Write a better "
                      f"search query for the question. Reply with the query only.\n\n"
                      f"Question: {question}\nPrevious query: {query}\n\nQuery:")
        else:
            prompt = (f"The answer below does not address the question. Write a better "
                      f"search query for the question. Reply with the query only.\n\n"
                      f"Question: {question}\nPrevious query: {query}\nAnswer: {draft}\n"
                      f"Claim statuses: {', '.join(statuses) or 'none'}\n\nQuery:")
        try:
            text = self.generator.generate(prompt)[0].text.strip()
        except Exception as exc:  # the loop goes on with the old query; said and recorded
            logger.warning("query rewrite failed: %s", exc)
            errors.append(f"query rewrite: {exc}")
            text = ""
        line = next((ln.strip(" \"'") for ln in text.splitlines() if ln.strip()), "")
        if line and not _reads_as_query(line, question, draft):
            logger.info("the generator's query rewrite is not a search query, not used: %r",
                        line[:200])
            line = ""
        if not line or line.lower() == query.lower():
            line = f"{question} {' '.join(tokenize(draft)[:5])}".strip()
        return line


#: Words in a rewritten query, at most (or twice the question's words, if more).
MAX_QUERY_WORDS = 16


def _reads_as_query(line: str, question: str, draft: str) -> bool:
    """True when a rewrite reads as a search query, not an answer.

    One sentence, at most :data:`MAX_QUERY_WORDS` words (or twice the question's), and not a
    sentence of the draft (a model asked for a query often repeats its answer).

    Example:
        >>> _reads_as_query("capital of France", "What is the capital?", "Paris.")
        True
        >>> _reads_as_query("Paris is big. It is old.", "Where is Paris?", "Paris.")
        False
        >>> _reads_as_query("Paris is big.", "Where is Paris?", "Paris is big. It is old.")
        False
        >>> _reads_as_query("population of Washington D.C. in 2020", "Where?", "Paris.")
        True
    """
    if len(trimmed_sentence_spans(line)) > 1:  # "U.S. capital history" is one sentence
        return False
    if len(line.split()) > max(MAX_QUERY_WORDS, 2 * len(question.split())):
        return False
    def norm(text: str) -> str:  # without [n] markers: "... tall [1]." repeats "... tall."
        return " ".join(strip_citations(text).split()).casefold()

    return norm(line) not in {norm(draft[a:b]) for a, b in trimmed_sentence_spans(draft)}


#: Claims of the previous draft quoted in a regeneration prompt, at most.
MAX_FEEDBACK_CLAIMS = 5


def regenerate_instruction(unsupported: Sequence[str]) -> str:
    """The closing instruction of a draft's prompt, with the verifier's feedback if any.

    A regeneration reuses the passages; naming the claims the verifier could not support
    changes the prompt, so a greedy generator does not write the same draft again.

    Example:
        >>> regenerate_instruction([]) == DEFAULT_INSTRUCTION
        True
        >>> "Paris is in Spain." in regenerate_instruction(["Paris is in Spain."])
        True
    """
    if not unsupported:
        return DEFAULT_INSTRUCTION
    quoted = "; ".join(f'"{" ".join(c.split())}"' for c in unsupported[:MAX_FEEDBACK_CLAIMS])
    return (f"{DEFAULT_INSTRUCTION}\nA previous answer said things the passages do not "
            f"support: {quoted}. Do not repeat them; state only what the passages say.")


def _why(grounding: float | None, useful: bool | None) -> str:
    g = "verification failed" if grounding is None else f"grounding {grounding:.2f}"
    return f"{g}, {'useful' if useful else 'not useful'}"

