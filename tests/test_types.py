from __future__ import annotations

import json
import math

import numpy as np
import pytest

from verifier.types import Claim, ClaimType, ClaimVerdict, Evidence, Generation, Passage, Status


def test_types_round_trip_through_json() -> None:
    p = Passage("Paris is in France.", "doc1", {"doc_span": [0, 19]})
    e = Evidence("Paris", "doc1", (0, 5), score=0.5, rank=0)
    c = Claim("Paris is in France.", (0, 19), ClaimType.FACT, True)
    g = Generation("Hi there", ("Hi", " there"), (-0.1, -0.2), ((0, 2), (2, 8)), "m")
    v = ClaimVerdict(c, Status.SUPPORTED, {"Supported": 0.9, "Contradictory": 0.0,
                                           "Insufficient_Info": 0.1}, (e,),
                     {"nli.entailment": 0.9})
    for obj in (p, e, c, g, v):
        again = type(obj).from_dict(json.loads(json.dumps(obj.to_dict())))
        assert again == obj


def test_evidence_nan_score_serialises_as_null() -> None:
    e = Evidence("x", "s")
    assert e.to_dict()["score"] is None
    assert math.isnan(Evidence.from_dict(e.to_dict()).score)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"content": "abc", "source_id": "s", "span": (0, 2)}, "span"),
        ({"content": "abc", "source_id": "", "span": (0, 3)}, "source_id"),
        ({"content": "abc", "source_id": "s", "span": (3, 1)}, "start <= end"),
    ],
)
def test_evidence_rejects_bad_values(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Evidence(**kwargs)


def test_passage_and_claim_reject_empty_text() -> None:
    with pytest.raises(ValueError, match="empty"):
        Passage("  ", "doc")
    with pytest.raises(ValueError, match="empty"):
        Claim("")


def test_generation_checks_alignment() -> None:
    with pytest.raises(ValueError, match="token_logprobs has 1 items but tokens has 2"):
        Generation("ab", ("a", "b"), (-1.0,))
    # without tokens, log-probs and offsets still have to pair up (the uncertainty detector
    # zips them)
    with pytest.raises(ValueError, match="token_offsets has 1 items but token_logprobs has 2"):
        Generation("ab", None, (-1.0, -2.0), ((0, 1),))


def test_verdict_rejects_unknown_status_key() -> None:
    with pytest.raises(ValueError, match="unknown status"):
        ClaimVerdict(Claim("x"), Status.SUPPORTED, {"Maybe": 1.0})


def test_from_dict_rejects_unknown_field() -> None:
    with pytest.raises(ValueError, match="unknown field"):
        Passage.from_dict({"text": "a", "source_id": "b", "oops": 1})


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"content": "   "}, "Evidence content must not be empty"),
    ({"rank": -5}, "rank must be an int >= 0 or None, got -5"),
    ({"rank": 1.5}, "rank must be an int >= 0 or None"),
    ({"rank": True}, "rank must be an int >= 0 or None"),
    ({"span": (0, True)}, "offsets must be ints"),
])
def test_evidence_rejects_blank_content_and_bad_rank_or_span(kwargs, match) -> None:
    args = {"content": "A fact.", "source_id": "d", **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        Evidence(**args)


@pytest.mark.parametrize(("kwargs", "err", "match"), [
    ({"claim": {"text": "x"}}, TypeError, "claim must be a Claim, got dict"),
    ({"evidence": ["str"]}, TypeError, r"evidence\[0\] must be an Evidence, got str"),
    ({"probabilities": {"Supported": float("nan")}}, ValueError,
     r"probabilities\['Supported'\] must be a number in \[0, 1\], got nan"),
    ({"probabilities": {"Contradictory": -2.0}}, ValueError, "must be a number in"),
])
def test_verdict_rejects_bad_parts(kwargs, err, match) -> None:
    args = {"claim": Claim("x"), "status": Status.SUPPORTED, **kwargs}
    with pytest.raises(err, match=match):
        ClaimVerdict(**args)


def test_verdict_and_claim_evidence_from_dict_reject_unknown_fields() -> None:
    from verifier.types import ClaimEvidence

    v = ClaimVerdict(Claim("x"), Status.SUPPORTED, {},
                     (Evidence("A fact.", "d"),))
    assert ClaimVerdict.from_dict(v.to_dict()) == v
    with pytest.raises(ValueError, match=r"unknown field\(s\) for ClaimVerdict: \['evidnce'\]"):
        ClaimVerdict.from_dict({**v.to_dict(), "evidnce": []})
    ce = ClaimEvidence(Claim("x"), (Evidence("A fact.", "d"),))
    with pytest.raises(ValueError, match="for ClaimEvidence"):
        ClaimEvidence.from_dict({**ce.to_dict(), "oops": 1})


def test_spans_take_numpy_ints_as_python_ints() -> None:
    import json

    import numpy as np

    from verifier.nli import ChunkScores

    ev = Evidence("A fact.", "d", (np.int64(3), np.int32(10)))
    assert ev.span == (3, 10) and all(type(x) is int for x in ev.span)
    json.dumps(ev.to_dict())  # serialisable
    rows = np.array([[0.7, 0.2, 0.1]])
    c = ChunkScores(rows[0], list(np.array([[0, 9]])), rows, 0)  # rows of a numpy array
    assert c.chunk_spans == ((0, 9),) and type(c.chunk_spans[0][0]) is int
    with pytest.raises(ValueError, match=r"chunk_spans\[0\] must be a \(start, end\) pair"):
        ChunkScores(rows[0], ((0, 9, 12),), rows, 0)


def test_passage_copies_its_metadata_and_checks_doc_span() -> None:
    meta = {"k": [1, 2]}
    p = Passage("Paris is big.", "atlas", meta)
    meta["new"] = 1
    assert p.metadata == {"k": [1, 2]}
    # a pair of Python ints, as Evidence.span: numpy's and a list read back from JSON too
    assert Passage("Paris is big.", "atlas", {"doc_span": [4, 17]}).metadata["doc_span"] == \
        (4, 17)
    p = Passage("Paris is big.", "atlas", {"doc_span": (np.int64(4), np.int64(17))})
    assert Passage.from_dict(json.loads(json.dumps(p.to_dict()))) == p
    with pytest.raises(ValueError, match=r"metadata\['doc_span'\] must be a \(start, end\) "
                                         r"pair, got 5"):
        Passage("Paris is big.", "atlas", {"doc_span": 5})
    with pytest.raises(ValueError, match=r"metadata\['doc_span'\] \(0, 3\) has length 3 but "
                                         r"text has 13"):
        Passage("Paris is big.", "atlas", {"doc_span": (0, 3)})


def test_evidence_score_must_be_a_finite_number_or_nan() -> None:
    import math

    assert math.isnan(Evidence("Paris is big.", "atlas").score)
    with pytest.raises(TypeError, match="score must be a number .*got None"):
        Evidence("Paris is big.", "atlas", score=None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="score must be finite .*got inf"):
        Evidence("Paris is big.", "atlas", score=float("inf"))


@pytest.mark.parametrize(("kwargs", "err", "match"), [
    ({"token_logprobs": (float("nan"), -1.0, -1.0)}, ValueError,
     r"token_logprobs\[0\] must be a finite log-probability \(<= 0\), got nan"),
    ({"token_logprobs": (-1.0, float("-inf"), -1.0)}, ValueError, r"token_logprobs\[1\] .*-inf"),
    ({"token_logprobs": (-1.0, -1.0, 3.0)}, ValueError, r"token_logprobs\[2\] .*got 3\.0"),
    ({"token_logprobs": (-1.0, True, -1.0)}, TypeError,
     r"token_logprobs\[1\] must be a number, got True"),
    ({"token_logprobs": "123", "tokens": None, "token_offsets": None}, TypeError,
     "token_logprobs must be a sequence .*got str '123'"),
    ({"tokens": "abc", "token_logprobs": None, "token_offsets": None}, TypeError,
     "tokens must be a sequence .*got str 'abc'"),
    ({"tokens": ("Paris", 3, " big.")}, TypeError, r"tokens\[1\] must be a str, got 3"),
    ({"token_offsets": ((0, 5), (5, 8), (8, 500))}, ValueError,
     r"token_offsets\[2\] \(8, 500\) ends past the text's length 13"),
])
def test_generation_rejects_bad_tokens_logprobs_and_offsets(kwargs, err, match) -> None:
    args = {"text": "Paris is big.", "tokens": ("Paris", " is", " big."),
            "token_logprobs": (-0.1, -0.2, -3.0), "token_offsets": ((0, 5), (5, 8), (8, 13)),
            **kwargs}
    with pytest.raises(err, match=match):
        Generation(**args)


def test_generation_takes_any_sequence_and_rounding_just_above_zero() -> None:
    import numpy as np

    g = Generation("ab", ["a", "b"], np.array([-0.5, 1e-7]), [[0, 1], [1, 2]])
    assert g.token_logprobs == (-0.5, 1e-7) and all(type(x) is float for x in g.token_logprobs)
    assert g.tokens == ("a", "b") and g.token_offsets == ((0, 1), (1, 2))


@pytest.mark.parametrize("score", ["0.9", True, b"1"])
def test_evidence_score_must_be_a_number_not_a_str_or_bool(score) -> None:
    with pytest.raises(TypeError, match=r"score must be a number \(nan when unknown\), got"):
        Evidence("Paris is big.", "atlas", score=score)


def test_verdict_copies_the_callers_dicts() -> None:
    probs = {"Supported": 0.9, "Contradictory": 0.0, "Insufficient_Info": 0.1}
    scores = {"nli.entailment": 0.9}
    v = ClaimVerdict(Claim("Paris is big."), Status.SUPPORTED, probs, (), scores)
    probs["Supported"], scores["nli.entailment"] = 7.0, -1.0
    assert v.probabilities == {"Supported": 0.9, "Contradictory": 0.0, "Insufficient_Info": 0.1}
    assert v.scores == {"nli.entailment": 0.9}
    with pytest.raises(TypeError, match="probabilities must be a mapping, got list"):
        ClaimVerdict(Claim("x"), Status.SUPPORTED, [("Supported", 1.0)])  # type: ignore[arg-type]


def test_claim_verdict_checks_its_numbers_and_reads_back_what_it_writes() -> None:
    c = Claim("Paris is in France.")
    with pytest.raises(ValueError, match="probabilities must sum to 1, got 2.7"):
        ClaimVerdict(c, Status.SUPPORTED, {"Supported": 0.9, "Contradictory": 0.9,
                                           "Insufficient_Info": 0.9})
    with pytest.raises(TypeError, match=r"scores\['b'\] must be a number, got 'x'"):
        ClaimVerdict(c, Status.SUPPORTED, {}, (), {"b": "x"})
    with pytest.raises(TypeError, match="evidence must be a sequence of Evidence, got NoneType"):
        ClaimVerdict(c, Status.SUPPORTED, {}, None)  # type: ignore[arg-type]
    # a score not computed (NaN) is written as null, and read back as NaN
    v = ClaimVerdict(c, Status.SUPPORTED, {}, (), {"a": math.nan, "b": 0.5})
    text = json.dumps(v.to_dict(), allow_nan=False)
    back = ClaimVerdict.from_dict(json.loads(text))
    assert math.isnan(back.scores["a"]) and back.scores["b"] == 0.5
    # from_dict is as strict as the constructor
    with pytest.raises(TypeError, match="probabilities must be a mapping, got list"):
        ClaimVerdict.from_dict({"claim": {"text": "x"}, "status": "Supported",
                                "probabilities": [["Supported", 1.0]]})


@pytest.mark.parametrize(("make", "match"), [
    (lambda: Claim.from_dict({"text": "x", "span": None}),
     r"span must be a \(start, end\) pair, got None"),
    (lambda: Claim.from_dict({"text": "x", "span": "12"}),
     r"span must be a \(start, end\) pair, got '12'"),
    (lambda: Evidence.from_dict({"content": "x", "source_id": "s", "span": 5}),
     r"span must be a \(start, end\) pair, got 5"),
    (lambda: Generation.from_dict({"text": "ab", "token_offsets": [1]}),
     r"token_offsets\[0\] must be a \(start, end\) pair, got 1"),
])
def test_from_dict_names_a_malformed_span(make, match) -> None:
    with pytest.raises(ValueError, match=match):
        make()


def test_passage_metadata_must_be_json_serialisable() -> None:
    # an index saved it only later, and the failed save had already removed the old index
    import datetime

    from verifier.types import Passage

    with pytest.raises(TypeError, match=r"metadata\['added'\] of source_id 'b' must be "
                                        r"JSON-serialisable, got date"):
        Passage("Berlin is in Germany.", "b", {"added": datetime.date(2024, 1, 1)})
    assert Passage("Berlin.", "b", {"n": 1, "tags": ["x"], "doc_span": (0, 7)}).metadata["n"] == 1


def test_types_verdict_numbers_become_plain_json_floats() -> None:
    # numpy numbers made to_dict() no JSON ("Object of type float32 is not JSON serializable")
    probs = {"Supported": np.float32(0.75), "Contradictory": np.float64(0.25),
             "Insufficient_Info": np.float32(0.0)}
    v = ClaimVerdict(Claim("Paris is big."), Status.SUPPORTED, probs, (),
                     {"nli.entailment": np.float32(0.5), "unc.tokens": np.int64(3),
                      "align.cosine": math.nan})
    assert all(type(x) is float for x in (*v.probabilities.values(), *v.scores.values()))
    text = json.dumps(v.to_dict(), allow_nan=False)
    back = ClaimVerdict.from_dict(json.loads(text))
    assert back.probabilities == v.probabilities and back.scores["unc.tokens"] == 3.0
    assert math.isnan(back.scores["align.cosine"])  # NaN: null, and NaN again
    # an infinity has no JSON form (NaN already stands for "not computed"): refused
    with pytest.raises(ValueError, match=r"scores\['x'\] must be finite \(nan when not "
                                         r"computed\), got -inf"):
        ClaimVerdict(Claim("x"), Status.SUPPORTED, scores={"x": -math.inf})


def test_types_evidence_rank_takes_numpy_ints_as_python_ints() -> None:
    ev = Evidence("A fact.", "d", rank=np.int64(1))
    assert ev.rank == 1 and type(ev.rank) is int
    assert Evidence.from_dict(json.loads(json.dumps(ev.to_dict()))) == ev
    with pytest.raises(ValueError, match="rank must be an int >= 0 or None, got np.int64"):
        Evidence("A fact.", "d", rank=np.int64(-1))


@pytest.mark.parametrize("probs", [{"Supported": 1.0},
                                   {"Supported": 0.5, "Insufficient_Info": 0.5}])
def test_types_verdict_probabilities_give_all_three_statuses_or_none(probs) -> None:
    # {"Supported": 1.0} was accepted, and Verifier.decide then failed with KeyError
    with pytest.raises(ValueError, match=r"probabilities must give all three statuses "
                                         r"\['Contradictory', 'Insufficient_Info', "
                                         r"'Supported'\] \(or none: \{\}\), missing "
                                         r"\['Contradictory'"):
        ClaimVerdict(Claim("x"), Status.SUPPORTED, probs)
    assert ClaimVerdict(Claim("x"), Status.SUPPORTED).probabilities == {}  # none given


@pytest.mark.parametrize(("make", "err", "match"), [
    # a bare KeyError 'claim' before
    (lambda: ClaimVerdict.from_dict({"status": "Supported"}), ValueError,
     r"missing field\(s\) for ClaimVerdict: \['claim'\]"),
    # "'supported' is not a valid Status" before: neither the field nor the allowed values
    (lambda: ClaimVerdict.from_dict({"claim": {"text": "a"}, "status": "supported"}),
     ValueError, r"status must be one of \['Supported', 'Contradictory', "
                 r"'Insufficient_Info'\], got 'supported'"),
    (lambda: ClaimVerdict.from_dict({"claim": {"span": [0, 1]}, "status": "Supported"}),
     ValueError, r"claim: missing field\(s\) for Claim: \['text'\]"),
    (lambda: ClaimVerdict.from_dict({"claim": {"text": "a"}, "status": "Supported",
                                     "evidence": [{"content": "b", "source_id": "s"},
                                                  {"content": "c"}]}),
     ValueError, r"evidence\[1\]: missing field\(s\) for Evidence: \['source_id'\]"),
    (lambda: ClaimVerdict.from_dict({"claim": {"text": "a"}, "status": "Supported",
                                     "evidence": "b"}),
     TypeError, "evidence must be a list, got str"),
    (lambda: ClaimVerdict.from_dict(["claim"]), TypeError,
     "ClaimVerdict data must be a mapping, got list"),
    (lambda: Claim.from_dict({"text": "a", "type": "nonsense"}), ValueError,
     r"type must be one of \['fact', 'date', .*'discourse'\], got 'nonsense'"),
    (lambda: Claim("a", type="Fact"), ValueError, r"type must be one of \['fact'"),
    (lambda: Evidence.from_dict({"content": "abc"}), ValueError,
     r"missing field\(s\) for Evidence: \['source_id'\]"),
    (lambda: Passage.from_dict({"source_id": "s"}), ValueError,
     r"missing field\(s\) for Passage: \['text'\]"),
])
def test_types_from_dict_errors_name_the_field_and_allowed_values(make, err, match) -> None:
    with pytest.raises(err, match=match):
        make()


def test_types_report_from_dict_errors_name_the_verdict_and_field() -> None:
    from verifier.verify import Report

    with pytest.raises(ValueError, match=r"missing field\(s\) for Report: \['draft'\]"):
        Report.from_dict({"verdicts": []})
    bad = {"claim": {"text": "a"}, "status": "bad"}
    good = {"claim": {"text": "a"}, "status": "Supported"}
    with pytest.raises(ValueError, match=r"verdicts\[1\]: status must be one of "
                                         r"\['Supported'.*got 'bad'"):
        Report.from_dict({"draft": "a", "verdicts": [good, bad]})
    with pytest.raises(ValueError, match=r"verdicts\[0\]: missing field\(s\) for "
                                         r"ClaimVerdict: \['claim'\]"):
        Report.from_dict({"draft": "a", "verdicts": [{"status": "Supported"}]})
    with pytest.raises(TypeError, match="verdicts must be a list, got dict"):
        Report.from_dict({"draft": "a", "verdicts": good})
    assert Report.from_dict({"draft": "a", "verdicts": [good]}).verdicts[0].claim.text == "a"


def test_evidence_with_an_unknown_score_equals_its_copies() -> None:
    # the generated __eq__ held two Evidence equal only when they shared one nan object: a
    # pickled copy (a process pool's, Ray's) was unequal, and a set kept both
    import pickle

    ev = Evidence("Paris is in France.", "d", (0, 19))
    copy = pickle.loads(pickle.dumps(ev))
    assert ev == copy and len({ev, copy}) == 1 and hash(ev) == hash(copy)
    assert ev == Evidence.from_dict(ev.to_dict())
    assert ev != Evidence("Paris is in France.", "d", (0, 19), score=0.5)
    assert Evidence("x", "d", score=0.5) == Evidence("x", "d", score=0.5)
    v = ClaimVerdict(Claim("Paris is in France."), Status.SUPPORTED,
                     {"Supported": 0.9, "Contradictory": 0.05, "Insufficient_Info": 0.05},
                     (ev,))
    assert pickle.loads(pickle.dumps(v)) == v
