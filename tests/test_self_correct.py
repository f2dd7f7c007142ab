from __future__ import annotations

import json

import pytest

from mitigation.mitigator import Mitigator
from rag.retrieval import BM25Retriever
from rag.self_correct import DefaultUsefulnessGrader, SelfCorrectingPipeline
from verifier.types import Claim, ClaimType, ClaimVerdict, Evidence, Passage, Status
from verifier.verify import Report

DOCS = [Passage("Paris is the capital of France.", "paris"),
        Passage("Berlin is the capital of Germany.", "berlin")]


class ScriptedGenerator:
    def __init__(self, *texts: str) -> None:
        self.texts, self.prompts = list(texts), []

    def generate(self, prompt: str, *, n: int = 1):
        from verifier.types import Generation

        self.prompts.append(prompt)
        return [Generation(self.texts.pop(0) if len(self.texts) > 1 else self.texts[0])]


class ScriptedVerifier:
    """Supported when the draft contains 'capital', else insufficient."""

    def __init__(self, fail: bool = False) -> None:
        self.fail, self.calls = fail, 0

    def verify(self, draft: str, *, evidence):
        self.calls += 1
        if self.fail:
            raise RuntimeError("verifier exploded")
        status = Status.SUPPORTED if "capital" in draft else Status.INSUFFICIENT_INFO
        v = ClaimVerdict(Claim(draft, (0, len(draft))), status,
                         evidence=(Evidence(evidence[0].content, evidence[0].source_id),))
        return Report(draft, (v,))


class Useful:
    def __init__(self, *answers: bool) -> None:
        self.answers = list(answers)

    def grade(self, question, answer):
        if isinstance(self.answers[0], Exception):
            raise self.answers[0]
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def _pipe(gen, ver=None, useful=None, **kw):
    return SelfCorrectingPipeline(BM25Retriever().index(DOCS), gen, ver or ScriptedVerifier(),
                                  Mitigator(), usefulness_grader=useful or Useful(True), **kw)


Q = "What is the capital of France?"


def test_self_correct_approves_at_once() -> None:
    ans = _pipe(ScriptedGenerator("Paris is the capital of France.")).run(Q)
    assert ans.approved and [t.decision for t in ans.trace] == ["approve"]
    assert ans.sources == ("paris",) and "[1]" in ans.text and ans.grounding_score == 1.0


def test_self_correct_regenerates_then_approves() -> None:
    gen = ScriptedGenerator("Paris is nice.", "Paris is the capital of France.")
    ans = _pipe(gen).run(Q)
    assert [t.decision for t in ans.trace] == ["regenerate", "approve"] and ans.approved
    first, second = gen.prompts
    assert first.split("Question:")[0] == second.split("Question:")[0]  # same passages
    # the regeneration names the claim the verifier could not support (a greedy generator
    # given the same prompt would write the same draft again)
    assert "Paris is nice." not in first and '"Paris is nice."' in second


def test_self_correct_rewrites_query_then_approves() -> None:
    gen = ScriptedGenerator("Paris is the capital of France.", "capital of France Paris",
                            "Paris is the capital of France.")
    ans = _pipe(gen, useful=Useful(False, True)).run(Q)
    assert [t.decision for t in ans.trace] == ["rewrite", "approve"]
    assert ans.trace[1].query == "capital of France Paris" and ans.trace[0].query == Q


def test_self_correct_bounds_spent_returns_best_unapproved() -> None:
    pipe = _pipe(ScriptedGenerator("Paris is nice."), max_regenerations=2, max_query_rewrites=3)
    ans = pipe.run(Q)
    assert not ans.approved and len(ans.trace) == 3
    assert [t.decision for t in ans.trace] == ["regenerate", "regenerate", "stop"]
    assert "could not be verified" in ans.text  # best answer so far, mitigated
    assert len(ans.trace) <= pipe.max_iterations


def test_self_correct_grader_and_verifier_errors_are_conservative() -> None:
    ans = _pipe(ScriptedGenerator("Paris is the capital of France."),
                useful=Useful(RuntimeError("grader down")), max_query_rewrites=1).run(Q)
    assert not ans.approved
    assert "usefulness grader: grader down" in ans.trace[0].errors
    ans = _pipe(ScriptedGenerator("Paris is the capital of France."),
                ScriptedVerifier(fail=True), max_regenerations=1).run(Q)
    assert not ans.approved and ans.trace[0].grounding_score is None
    assert any("verifier exploded" in e for e in ans.trace[0].errors)
    assert [t.decision for t in ans.trace] == ["regenerate", "stop"]


def test_self_correct_events_and_json_trace() -> None:
    events = []
    pipe = _pipe(ScriptedGenerator("Paris is nice.", "Paris is the capital of France."),
                 on_event=events.append)
    ans = pipe.run(Q)
    assert [e["type"] for e in events] == ["retrieved", "drafted", "verified", "decision",
                                           "drafted", "verified", "decision", "answer"]
    data = json.loads(ans.to_json())
    assert data["approved"] and len(data["trace"]) == 2
    with pytest.raises(ValueError, match="max_regenerations must be an int >= 0"):
        _pipe(ScriptedGenerator("x"), max_regenerations=-1)


def test_self_correct_default_usefulness_grader() -> None:
    g = DefaultUsefulnessGrader()
    assert g.grade(Q, "Paris is the capital of France.")
    assert not g.grade(Q, "I don't know.")
    assert not g.grade(Q, "Bananas are yellow.")


class _RejectFirst:
    """Relevance grader: nothing is relevant on the first retrieval, everything after."""

    def __init__(self) -> None:
        self.calls = 0

    def grade(self, question, passages):
        self.calls += 1
        return [self.calls > 1] * len(passages)


def test_self_correct_rewrites_the_query_when_nothing_relevant_was_retrieved() -> None:
    gen = ScriptedGenerator("I do not know.", "capital of France", "Paris is the capital.")
    ans = _pipe(gen, relevance_grader=_RejectFirst()).run(Q)
    assert [t.decision for t in ans.trace] == ["rewrite", "approve"]
    assert ans.trace[0].passages == () and "no relevant passage" in ans.trace[0].reason
    assert ans.trace[1].query == "capital of France" and ans.approved


class _SentenceVerifier:
    """One claim per ". "-separated sentence: supported when it contains 'capital'."""

    def verify(self, draft: str, *, evidence):
        verdicts = []
        for s in (x for x in draft.split(". ") if x):
            a = draft.index(s)
            st = Status.SUPPORTED if "capital" in s else Status.INSUFFICIENT_INFO
            verdicts.append(ClaimVerdict(Claim(s, (a, a + len(s))), st, evidence=(
                Evidence(evidence[0].content, evidence[0].source_id),)))
        return Report(draft, tuple(verdicts))


def test_self_correct_approved_answer_is_the_approved_draft() -> None:
    # draft 1: fully grounded but not useful; draft 2 (after a rewrite): 0.6 grounded, useful
    approved_draft = ("Paris is the capital of France. It is the capital city. The capital is "
                      "Paris. Paris, capital. Paris is big.")
    gen = ScriptedGenerator("Berlin is the capital of Germany.", "capital of France Paris",
                            approved_draft)
    ans = _pipe(gen, _SentenceVerifier(), Useful(False, True), min_grounding=0.5).run(Q)
    assert [t.decision for t in ans.trace] == ["rewrite", "approve"] and ans.approved
    assert "Berlin" not in ans.text and ans.text.startswith("Paris is the capital of France")
    assert ans.grounding_score == ans.trace[-1].grounding_score == 0.6


def test_self_correct_unapproved_prefers_a_useful_draft_then_grounding() -> None:
    # draft 1: not grounded but useful -> regenerate; draft 2: grounded, not useful -> stop
    gen = ScriptedGenerator("Paris is nice.", "Berlin is the capital of Germany.")
    ans = _pipe(gen, useful=Useful(True, False), max_regenerations=1,
                max_query_rewrites=0).run(Q)
    assert [t.decision for t in ans.trace] == ["regenerate", "stop"] and not ans.approved
    assert "Paris is nice" in ans.text and "Berlin" not in ans.text
    assert ans.grounding_score == 0.0


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"top_k": 0}, "top_k must be an int > 0, got 0"),
    ({"top_k": "5"}, "top_k must be an int > 0, got '5'"),
    ({"top_k": True}, "top_k must be an int > 0, got True"),
    ({"max_regenerations": True}, "max_regenerations must be an int >= 0, got True"),
    ({"max_query_rewrites": 1.0}, "max_query_rewrites must be an int >= 0, got 1.0"),
])
def test_self_correct_rejects_bad_bounds(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        SelfCorrectingPipeline(None, None, None, None, **kwargs)


class _FirstOnly:
    """Relevance grader: only a passage about Paris is relevant."""

    def grade(self, question, passages):
        return ["Paris" in p.content for p in passages]


def test_self_correct_fallback_passages_are_new_graded_and_capped() -> None:
    first = BM25Retriever().index([*DOCS, Passage("London is the capital of England.", "uk")])
    more = BM25Retriever().index([*DOCS, Passage("Paris, France lies on the Seine.", "seine"),
                                  Passage("Rome is in Italy.", "rome")])

    def pipe(top_k: int) -> SelfCorrectingPipeline:
        return SelfCorrectingPipeline(first, ScriptedGenerator("x"), ScriptedVerifier(),
                                      Mitigator(), relevance_grader=_FirstOnly(),
                                      fallback_retriever=more, top_k=top_k)

    # the first retrieval keeps "paris" only (1 of 3): the fallback adds its new relevant
    # passage, not "paris" again nor the irrelevant ones
    assert [p.source_id for p in pipe(3)._retrieve(Q, Q, [])] == ["paris", "seine"]
    assert [p.source_id for p in pipe(1)._retrieve(Q, Q, [])] == ["paris"]  # at most top_k


class _Nothing:
    def grade(self, question, passages):
        return [False] * len(passages)


def test_self_correct_stops_when_nothing_relevant_and_no_rewrite_is_left() -> None:
    gen = ScriptedGenerator("I do not know.", "capital of France", "Paris is the capital.")
    ans = _pipe(gen, relevance_grader=_Nothing(), max_query_rewrites=1,
                max_regenerations=3).run(Q)
    assert [t.decision for t in ans.trace] == ["rewrite", "stop"]
    assert ans.trace[-1].reason == "no relevant passage and no query rewrite left"
    assert len(gen.prompts) == 3  # two drafts and one query rewrite, no draft from nothing


class _RewriteFails(ScriptedGenerator):
    def generate(self, prompt: str, *, n: int = 1):
        if prompt.startswith("The answer below does not address the question"):
            raise RuntimeError("backend down")
        return super().generate(prompt, n=n)


def test_self_correct_failed_query_rewrite_is_logged_and_recorded(caplog) -> None:
    # grounded but not useful: the loop asks for a new query, the generator fails, the
    # loop goes on with a query of its own
    gen = _RewriteFails("Paris is the capital of France.")
    with caplog.at_level("WARNING", logger="rag.self_correct"):
        ans = _pipe(gen, useful=Useful(False), max_query_rewrites=1).run(Q)
    assert [t.decision for t in ans.trace] == ["rewrite", "stop"]
    assert ans.trace[1].query.startswith(Q) and ans.trace[1].query != Q
    assert "query rewrite: backend down" in ans.trace[0].errors
    assert "query rewrite failed: backend down" in caplog.text


def test_self_correct_unverified_draft_is_mitigated_not_returned_as_written() -> None:
    # nothing relevant is ever retrieved: no draft can be verified against a passage, and
    # the answer is the draft mitigated with no evidence (hedged, or dropped when strict)
    class _ClaimsNoEvidence:
        def verify(self, draft, *, evidence):
            assert list(evidence) == []
            return Report(draft, (ClaimVerdict(Claim(draft, (0, len(draft))),
                                               Status.INSUFFICIENT_INFO),))

    draft = "Michelangelo painted the Mona Lisa."
    for ver, mit in ((_ClaimsNoEvidence(), Mitigator("balanced")),
                     (ScriptedVerifier(fail=True), Mitigator("balanced"))):
        ans = SelfCorrectingPipeline(
            BM25Retriever().index(DOCS), ScriptedGenerator(draft), ver, mit,
            relevance_grader=_Nothing(), usefulness_grader=Useful(True),
            max_query_rewrites=1).run("Who painted the Mona Lisa?")
        assert [t.decision for t in ans.trace] == ["rewrite", "stop"]
        assert not ans.approved and ans.grounding_score == 0.0 and ans.sources == ()
        assert ans.text != draft and "could not be verified" in ans.text
    ans = SelfCorrectingPipeline(
        BM25Retriever().index(DOCS), ScriptedGenerator(draft), _ClaimsNoEvidence(),
        Mitigator("strict"), relevance_grader=_Nothing(), usefulness_grader=Useful(True),
        max_query_rewrites=0).run("Who painted the Mona Lisa?")
    assert "Michelangelo" not in ans.text and not ans.approved


def test_self_correct_rewritten_query_is_a_query_not_an_answer() -> None:
    # a small model asked for a query answers instead: that answer is not the next query
    answer = ("The Mona Lisa is a masterpiece by Leonardo da Vinci. It was painted by "
              "Michelangelo.")
    gen = ScriptedGenerator("Leonardo painted it.", answer, "Leonardo painted it.",
                            "Leonardo painted it.")
    ans = _pipe(gen, relevance_grader=_Nothing(), max_query_rewrites=1).run(
        "Who painted the Mona Lisa?")
    assert ans.trace[1].query == "Who painted the Mona Lisa? leonardo painted"
    # the prompt asking for it does not show the draft written from no passage
    assert "No relevant passage was found" in gen.prompts[1]
    assert "Leonardo painted it." not in gen.prompts[1]
    # a repeated sentence of the draft is no query either
    gen = ScriptedGenerator("Paris is the capital of France.", "Paris is the capital of France.",
                            "Paris is the capital of France.")
    ans = _pipe(gen, useful=Useful(False), max_query_rewrites=1).run(Q)
    assert ans.trace[1].query == f"{Q} paris capital france"


def test_self_correct_a_draft_with_no_claim_checked_is_not_approved() -> None:
    # the verifier found no claim in the draft: its grounding was the mitigator's 1.0 for no
    # claims, and the draft was approved as written, unchecked
    class _NoClaims:
        def verify(self, draft, *, evidence):
            return Report(draft, ())

    draft = "Wages fell and prices rose."
    ans = SelfCorrectingPipeline(
        BM25Retriever().index(DOCS), ScriptedGenerator(draft), _NoClaims(), Mitigator(),
        usefulness_grader=Useful(True), max_regenerations=1).run(Q)
    assert not ans.approved and [t.decision for t in ans.trace] == ["regenerate", "stop"]
    assert ans.trace[0].grounding_score is None
    assert "no claim the verifier could check" in ans.trace[0].errors[0]
    assert ans.text != draft and "could not be verified" in ans.text


# a grader's settings are shares in [0, 1]: min_overlap=5 never approved an answer, and
# min_overlap="0.2" failed at the first grade() with a bare TypeError
@pytest.mark.parametrize("kwargs, name, value", [
    ({"min_overlap": 5}, "min_overlap", "5"),
    ({"min_overlap": "0.2"}, "min_overlap", "'0.2'"),
    ({"min_overlap": float("nan")}, "min_overlap", "nan"),
    ({"max_contradiction": -0.1}, "max_contradiction", "-0.1"),
    ({"max_contradiction": None}, "max_contradiction", "None"),
])
def test_self_correct_usefulness_grader_rejects_bad_settings(kwargs, name, value) -> None:
    with pytest.raises(ValueError, match=rf"{name} must be in \[0, 1\], got {value}$"):
        DefaultUsefulnessGrader(**kwargs)


@pytest.mark.parametrize("value, shown", [(5, "5"), ("0.2", "'0.2'"), (True, "True")])
def test_self_correct_relevance_grader_rejects_bad_settings(value, shown) -> None:
    from rag.self_correct import LexicalRelevanceGrader

    with pytest.raises(ValueError, match=rf"min_overlap must be in \[0, 1\], got {shown}$"):
        LexicalRelevanceGrader(min_overlap=value)
    assert LexicalRelevanceGrader(min_overlap=1).min_overlap == 1.0


def test_self_correct_a_refusal_is_returned_as_written_not_hedged() -> None:
    # nothing relevant retrieved and the model says it does not know: the refusal was made
    # one claim and came back "It is suggested that I don't know, but this could not be
    # verified."
    class _NoClaims:
        def verify(self, draft, *, evidence):
            return Report(draft, ())

    for draft in ("I don't know.", "I do not know the answer."):
        ans = SelfCorrectingPipeline(
            BM25Retriever().index(DOCS), ScriptedGenerator(draft), _NoClaims(), Mitigator(),
            relevance_grader=_Nothing(), usefulness_grader=Useful(True),
            max_query_rewrites=0).run("What is the boiling point of mercury?")
        assert ans.text == draft and not ans.approved


def test_self_correct_feedback_and_query_rewrites_read_claims_not_markers() -> None:
    from rag.self_correct import _reads_as_query

    # the draft's sentence with its [n] marker was taken for a new query
    assert not _reads_as_query("The Eiffel Tower is 330 metres tall.",
                               "How tall is the Eiffel Tower?",
                               "The Eiffel Tower is 330 metres tall [1].")

    # a line about the answer was quoted to the model as a claim the passages do not support
    class _TwoVerdicts:
        def verify(self, draft, *, evidence):
            a = draft.index("I hope")
            return Report(draft, (
                ClaimVerdict(Claim(draft[:a].strip(), (0, a - 1)), Status.CONTRADICTORY),
                ClaimVerdict(Claim(draft[a:], (a, len(draft)), ClaimType.DISCOURSE, False),
                             Status.INSUFFICIENT_INFO)))

    gen = ScriptedGenerator("Paris is in Spain. I hope this helps!")
    _pipe(gen, ver=_TwoVerdicts(), max_regenerations=1).run(Q)
    assert '"Paris is in Spain."' in gen.prompts[1] and "I hope this helps" not in gen.prompts[1]


@pytest.mark.parametrize(("question", "answer", "useful"), [
    # two of the question's three content words: approved, though it says nothing of height
    ("How tall is the Eiffel Tower?", "The Eiffel Tower is in Paris [1].", False),
    ("How tall is the Eiffel Tower?", "The Eiffel Tower is 330 metres tall [1].", True),
    ("How many people live in Paris?", "About two million people live in Paris.", True),
    ("In what year did the Berlin Wall fall?", "The Berlin Wall fell in November.", True),
    ("Who built the Eiffel Tower?", "Gustave Eiffel built the Eiffel Tower.", True),
])
def test_self_correct_default_grader_wants_a_number_for_a_quantity(question, answer,
                                                                    useful) -> None:
    assert DefaultUsefulnessGrader().grade(question, answer) is useful
    assert DefaultUsefulnessGrader(answer_kind=False).grade(question, answer) is True
