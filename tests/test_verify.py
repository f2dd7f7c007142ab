from __future__ import annotations

import math
import time

import numpy as np
import pytest
from conftest import make_tiny_classifier
from test_pairing import HashEncoder

from rag.decompose import SpacyDecomposer
from rag.pairing import EvidencePairer
from verifier import Verifier
from verifier.alignment import AlignmentDetector
from verifier.nli import NLIDetector
from verifier.types import Claim, ClaimEvidence, Evidence, Generation, Passage, Status
from verifier.uncertainty import UncertaintyDetector
from verifier.verify import Report, all_features


class KeywordNLI:
    """Fake detector: the claim's last word in the premise entails ('not' there contradicts)."""

    labels = ("entailment", "neutral", "contradiction")

    def __init__(self):
        self.calls = 0

    def predict(self, pairs):
        self.calls += 1
        out = []
        for prem, hyp in pairs:
            last = hyp.strip(". ").split()[-1].lower()
            if " not " in f" {prem.lower()} " and last in prem.lower():
                out.append([0.05, 0.05, 0.9])
            elif last in prem.lower():
                out.append([0.9, 0.05, 0.05])
            else:
                out.append([0.1, 0.8, 0.1])
        return np.array(out, dtype=np.float32)


def _verifier(**kw):
    kw.setdefault("meta", None)
    return Verifier(KeywordNLI(), decomposer=SpacyDecomposer(model="not_installed"),
                    pairer=EvidencePairer(encoder=HashEncoder(), top_k=2),
                    alignment=AlignmentDetector(HashEncoder()), alignment_classifier=None, **kw)


def test_verify_statuses_and_evidence_spans() -> None:
    ev = [Evidence("Paris is in France. Berlin is not in Spain.", "doc", (0, 43))]
    rep = _verifier().verify("Paris is in France. Berlin is in Spain. Rome has pasta.",
                             evidence=ev)
    assert [v.status for v in rep.verdicts] == [Status.SUPPORTED, Status.CONTRADICTORY,
                                                Status.INSUFFICIENT_INFO]
    top = rep.verdicts[0].evidence[0]
    assert top.content == "Paris is in France." and top.span == (0, 19)
    probs = rep.verdicts[0].probabilities
    assert abs(sum(probs.values()) - 1) < 1e-5
    assert set(rep.timings) >= {"decompose", "pair", "nli", "alignment", "uncertainty",
                                "detectors", "meta"}
    assert rep.counts() == {"Supported": 1, "Contradictory": 1, "Insufficient_Info": 1}


def test_verify_pairs_and_errors() -> None:
    v = _verifier()
    out = v.verify_pairs(["Paris is in France.", Claim("Rome has pasta.")],
                         ["France has Paris as capital: France.", ["a", "b"]])
    assert [x.status for x in out] == [Status.SUPPORTED, Status.INSUFFICIENT_INFO]
    with pytest.raises(ValueError, match="claims has 1 items but evidences has 2"):
        v.verify_pairs(["x"], ["a", "b"])
    with pytest.raises(ValueError, match="exactly one of evidence= or retriever="):
        v.verify("Paris is in France.")
    with pytest.raises(ValueError, match="support_threshold must be a number in"):
        Verifier(KeywordNLI(), support_threshold=0, meta=None)


@pytest.mark.parametrize(("call", "exc", "match"), [
    (lambda v: v.verify_pairs([None], ["Paris is in France."]), TypeError,
     r"claims\[0\] must be a non-empty str or a Claim, got None"),
    (lambda v: v.verify_pairs("ab", ["P q.", "R s."]), TypeError,
     "claims must be a list .*got str 'ab'"),
    (lambda v: v.verify_pairs(["Paris is big."], [None]), TypeError,
     r"evidences\[0\]: evidence\[0\] must be an Evidence, Passage or str, got NoneType"),
    (lambda v: v.verify(None, evidence="x"), TypeError,
     "draft must be a non-empty str or Generation, got NoneType None"),
    (lambda v: v.verify("Paris is big.", evidence="x", top_k=0), ValueError,
     "top_k must be an int > 0, got 0"),
    (lambda v: v.verify("Paris is big.", evidence="x", question=123), TypeError,
     "question must be a str or None, got 123"),
    # AttributeError "'object' object has no attribute 'retrieve'" before
    (lambda v: v.verify("Paris is big.", retriever=object()), TypeError,
     r"retriever must have a retrieve\(query, \*, top_k\) method, got <object object"),
    (lambda v: v.verify("Paris is big.", retriever=type("R", (), {"retrieve": 3})()),
     TypeError, "retriever must have a retrieve"),
])
def test_verify_input_errors_name_the_parameter_and_value(call, exc, match) -> None:
    with pytest.raises(exc, match=match):
        call(_verifier())


@pytest.mark.parametrize(("kw", "match"), [
    ({"top_k_evidence": True}, "top_k_evidence must be an int > 0, got True"),
    ({"parallel": "no"}, "parallel must be True, False or None, got 'no'"),
    ({"support_threshold": "abc"}, "support_threshold must be a number in .*got 'abc'"),
    ({"contradiction_threshold": None}, "contradiction_threshold must be a number in"),
])
def test_verifier_settings_errors_name_the_parameter(kw, match) -> None:
    with pytest.raises(ValueError, match=match):
        _verifier(**kw)


def test_verify_pairs_takes_a_passage() -> None:
    out = _verifier().verify_pairs(["Paris is in France."],
                                   [Passage("Paris is in France.", "atlas")])
    assert out[0].status == Status.SUPPORTED and out[0].evidence[0].source_id == "atlas"


def test_verify_with_retriever() -> None:
    from rag.retrieval import BM25Retriever
    from verifier.types import Passage

    r = BM25Retriever().index([Passage("Paris is in France.", "p"),
                               Passage("Cats are mammals.", "c")])
    rep = _verifier().verify("Paris is in France.", retriever=r)
    assert rep.verdicts[0].status == Status.SUPPORTED
    assert rep.verdicts[0].evidence[0].source_id == "p"


def test_verify_verbatim_claim_is_supported_whatever_the_model_says() -> None:
    class Contrarian(KeywordNLI):
        def predict(self, pairs):
            return np.array([[0.1, 0.1, 0.8]] * len(pairs), dtype=np.float32)

    v = Verifier(Contrarian(), decomposer=SpacyDecomposer(model="not_installed"),
                 pairer=EvidencePairer(encoder=HashEncoder(), top_k=2), meta=None,
                 alignment=AlignmentDetector(HashEncoder()), alignment_classifier=None)
    out = v.verify_pairs(["The tower is 330 metres tall."],
                         ["Built in 1889. The Tower is 330 metres  tall. It is iron."])
    assert out[0].status == Status.SUPPORTED and out[0].scores["match.exact"] == 1.0
    assert abs(sum(out[0].probabilities.values()) - 1) < 1e-6
    # inside a longer word or number is not a verbatim quote: "$5" is not in "$50"
    out = v.verify_pairs(["The ticket price was $5.", "She was born in Bath.",
                          "It rose 10 percent."],
                         ["The ticket price was $50.", "She was born in Bathurst.",
                          "It rose 10.5 percent."])
    assert [o.scores["match.exact"] for o in out] == [0.0, 0.0, 0.0]
    assert all(o.status == Status.CONTRADICTORY for o in out)
    # a claim of punctuation only quotes nothing (its empty pattern matched between any two
    # non-word characters of the evidence: "..." was Supported against "iron -- and steel")
    out = v.verify_pairs(["...", "?!"], ["It is iron -- and steel."] * 2)
    assert [(o.scores["match.exact"], o.status) for o in out] == [(0.0, Status.CONTRADICTORY)] * 2
    # quoted inside a sentence, a claim may be reported or denied: the model decides (it was
    # Supported "whatever the model says")
    out = v.verify_pairs(["Vaccines cause autism."], ["The claim that vaccines cause autism "
                                                      "has been debunked by many studies."])
    assert out[0].scores["match.exact"] == 1.0 and out[0].status == Status.CONTRADICTORY


def test_unrelated_second_evidence_does_not_outvote_the_best_paired_sentence() -> None:
    # KeywordNLI: "not ... X" contradicts a claim ending in X. The best-paired sentence is
    # neutral, a lower-ranked one contradicts; a lower-ranked one that entails decides.
    v = _verifier(top_k_evidence=2)
    c = Claim("The team plays in Ohio.")
    neutral = Evidence("The team was founded long ago.", "a", (0, 30))
    contra = Evidence("Cats do not live in Ohio.", "b", (0, 25))
    entail = Evidence("Its home is Ohio.", "c", (0, 17))
    out = v.verify_claims([ClaimEvidence(c, (neutral, contra)),
                           ClaimEvidence(c, (neutral, entail)),
                           ClaimEvidence(c, (contra, neutral))])
    assert [o.status for o in out] == [Status.INSUFFICIENT_INFO, Status.SUPPORTED,
                                       Status.CONTRADICTORY]
    assert out[0].evidence[0] == neutral and out[1].evidence[0] == entail
    assert out[0].scores["nli.max_contradiction"] == pytest.approx(0.9)


def test_claim_with_only_unrelated_evidence_is_insufficient_not_contradicted() -> None:
    class SnliLike(KeywordNLI):  # reads anything it does not entail as a contradiction
        def predict(self, pairs):
            return np.array([[0.9, 0.05, 0.05] if h.rstrip(".") in p else [0.05, 0.05, 0.9]
                             for p, h in pairs], dtype=np.float32)

    v = Verifier(SnliLike(), decomposer=SpacyDecomposer(model="not_installed"),
                 pairer=EvidencePairer(encoder=HashEncoder(), dense_weight=0.0, top_k=2),
                 alignment=AlignmentDetector(HashEncoder()), alignment_classifier=None,
                 meta=None)
    doc = "Paris is in France. The Louvre is a museum."
    rep = v.verify("Paris is in France. Quokkas eat leaves.", evidence=[doc])
    assert [r.status for r in rep.verdicts] == [Status.SUPPORTED, Status.INSUFFICIENT_INFO]
    assert rep.verdicts[1].evidence == ()
    assert [e.content for e in rep.verdicts[0].evidence] == ["Paris is in France."]


def test_min_evidence_score_reaches_the_default_pairer() -> None:
    v = Verifier(KeywordNLI(), decomposer=SpacyDecomposer(model="not_installed"), meta=None,
                 alignment_classifier=None, min_evidence_score=0.4)
    assert v.pairer.min_score == 0.4 and v.pairer.top_k == v.top_k_evidence
    assert v.pairer.encoder is v.embedding_cache  # one cache for pairing and alignment
    assert Verifier(KeywordNLI(), meta=None, alignment_classifier=None).pairer.min_score == 0.15
    for bad in (-0.5, 2, "x"):
        with pytest.raises(ValueError, match="min_evidence_score must be in \\[0, 1\\], got"):
            Verifier(KeywordNLI(), meta=None, alignment_classifier=None,
                     min_evidence_score=bad)  # type: ignore[arg-type]


def test_verify_takes_one_string_as_one_passage() -> None:
    text = "Paris is in France. Berlin is not in Spain."
    one = _verifier().verify("Paris is in France.", evidence=text)
    listed = _verifier().verify("Paris is in France.", evidence=[text])
    assert one.verdicts[0].status == listed.verdicts[0].status == Status.SUPPORTED
    assert one.verdicts[0].evidence == listed.verdicts[0].evidence
    assert one.verdicts[0].evidence[0].source_id == "evidence-1"
    with pytest.raises(TypeError, match="evidence must be a sequence"):
        _verifier().verify("Paris is in France.", evidence=42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"evidence\[0\] is empty"):
        _verifier().verify("Paris is in France.", evidence=" ")


def test_verify_context_is_the_passage_whose_text_holds_the_sentence() -> None:
    from verifier.verify import _context

    lyon = Evidence("Lyon is in the south of France.", "wiki", (0, 31))
    paris = Evidence("Paris is the capital. It has 2 million people.", "wiki", (0, 46))
    sentence = Evidence("Paris is the capital.", "wiki", (0, 21))
    # both passages span (0, 21) of source "wiki" (given without document offsets): the
    # smaller one is not the one that holds the sentence
    assert _context(sentence, [lyon, paris]) == paris.content
    assert _context(sentence, [lyon]) == sentence.content  # none holds it: the sentence alone
    doc = "Intro. Paris is the capital. It has 2 million people."
    part = Evidence(doc[7:], "wiki", (7, len(doc)))
    assert _context(Evidence("Paris is the capital.", "wiki", (7, 28)), [part]) == doc[7:]


def test_cited_sentence_is_the_one_that_supports_the_claim_within_its_passage() -> None:
    # both sentences are read inside the passage (same NLI row); the one cited is the one
    # that entails the claim read alone, not the one the pairer ranked first
    passage = "The Eiffel Tower is a landmark in Paris. It was completed in 1889."
    nli = KeywordNLI()
    v = Verifier(nli, decomposer=SpacyDecomposer(model="not_installed"),
                 pairer=EvidencePairer(encoder=HashEncoder(), top_k=2, min_score=0.0),
                 alignment=AlignmentDetector(HashEncoder()), alignment_classifier=None,
                 meta=None, top_k_evidence=2)
    for span in ((0, len(passage)), (0, 0)):  # (0, 0): a passage without document offsets
        rep = v.verify("The Eiffel Tower in Paris was completed in 1889.",
                       evidence=[Evidence(passage, "doc", span)])
        (verdict,) = rep.verdicts
        assert verdict.status == Status.SUPPORTED
        assert verdict.evidence[0].content == "It was completed in 1889."
        assert verdict.evidence[0].span == (41, 66)
        assert passage[slice(*verdict.evidence[0].span)] == verdict.evidence[0].content


def test_verify_pairs_scores_every_evidence_text_it_is_given() -> None:
    # the caller's pairing is authoritative: a supporting 4th text (top_k_evidence is 3) is
    # read, and the verdict does not depend on the order of the caller's list
    v = _verifier()
    assert v.top_k_evidence == 3
    evs = ["The sky is blue.", "Grass is green.", "Snow is white.", "Paris is big."]
    first, reversed_ = (v.verify_pairs(["Paris is big."], [e])[0] for e in (evs, evs[::-1]))
    assert first.status == reversed_.status == Status.SUPPORTED
    assert first.scores["nli.units"] == reversed_.scores["nli.units"] == 4.0
    assert first.probabilities == reversed_.probabilities
    assert first.evidence[0].content == "Paris is big." and len(first.evidence) == 4
    # evidence the verifier ranks itself (a pairer's ranking) is still cut to top_k_evidence
    ranked = ClaimEvidence(Claim("Paris is big."),
                           tuple(Evidence(t, f"d{i}") for i, t in enumerate(evs)))
    (cut,) = v.verify_claims([ranked])
    assert cut.scores["nli.units"] == 3.0 and cut.status == Status.INSUFFICIENT_INFO


def test_verify_reads_a_str_draft_like_a_generation_for_uncertainty() -> None:
    class Forcing:
        calls = 0

        def score(self, prompt, text):
            self.calls += 1
            return Generation(text, ("x",), (-1.5,), ((0, len(text)),))

    gen = Forcing()
    v = _verifier(uncertainty=UncertaintyDetector(gen))
    as_str = v.verify("Paris is big.", evidence=["Paris is big."], prompt="Describe Paris.")
    as_gen = v.verify(Generation("Paris is big."), evidence=["Paris is big."],
                      prompt="Describe Paris.")
    assert gen.calls == 2  # teacher forcing ran for the str draft too
    assert as_str.verdicts[0].scores == as_gen.verdicts[0].scores
    assert as_str.verdicts[0].scores["unc.mean_surprisal"] == 1.5
    # the default detector (no generator): nothing to read, every unc.* feature but the NLI
    # entropy is missing for a str draft and for a Generation without log-probs alike
    plain = _verifier()
    for draft in ("Paris is big.", Generation("Paris is big.")):
        scores = plain.verify(draft, evidence=["Paris is big."]).verdicts[0].scores
        assert {k for k in scores if k.startswith("unc.")} == {"unc.nli_entropy"}


@pytest.fixture(scope="module")
def short_window_nli(tmp_path_factory: pytest.TempPathFactory) -> NLIDetector:
    folder = make_tiny_classifier(tmp_path_factory.mktemp("nli64"),
                                  {0: "entailment", 1: "neutral", 2: "contradiction"},
                                  max_position_embeddings=64)
    return NLIDetector(str(folder), max_length=64, dtype="float32")


def _real_nli_verifier(nli: NLIDetector) -> Verifier:
    return Verifier(nli, decomposer=SpacyDecomposer(model="not_installed"),
                    pairer=EvidencePairer(encoder=HashEncoder(), top_k=2, min_score=0.0),
                    alignment=AlignmentDetector(HashEncoder()), meta=None,
                    alignment_classifier=None)


def test_verify_errors_name_the_claim_or_evidence_the_model_cannot_read(
        short_window_nli: NLIDetector) -> None:
    v = _real_nli_verifier(short_window_nli)
    long_claim = "the old city " * 20
    # 5 (premise, claim) pairs, 4 of them distinct: the NLI model says pairs[3] (of the
    # de-duplicated pairs); the error names claims[3] and shows it
    with pytest.raises(ValueError, match=r"^claims\[3\] 'the old city the old city .* cannot "
                                         r"be scored: its NLI pair has a hypothesis of 60 tok"):
        v.verify_pairs(["paris is big .", "rome is old .", "paris is big .", long_claim],
                       [["paris is big .", "paris is a city ."], "rome is old .",
                        "paris is big .", "paris is big ."])
    # a premise this tokenizer reads as nothing (a private-use character)
    with pytest.raises(ValueError, match=r"^evidences\[1\]\[1\] '\\ue000' cannot be scored: "
                                         r"its NLI pair has a premise with no tokens$"):
        v.verify_pairs(["paris is big .", "rome is old ."],
                       ["paris is big .", ["rome is old .", "\ue000"]])
    with pytest.raises(ValueError, match=r"^evidence\[1\] '\\ue000' cannot be scored"):
        v.verify("paris is big . rome is old .", evidence=["paris is big .", "\ue000"])
    # read sentence by sentence, a too-long sentence still names its claim
    by_sentence = _real_nli_verifier(NLIDetector(short_window_nli.model_name_or_path,
                                                 max_length=64, dtype="float32",
                                                 hypothesis_sentences=True))
    with pytest.raises(ValueError, match=r"^claims\[1\] 'rome is old \. the old city"):
        by_sentence.verify_pairs(["paris is big .", "rome is old . " + long_claim + "."],
                                 ["paris is big .", "paris is big ."])


@pytest.mark.parametrize("blank", ["\u200b", " \u200b\ufeff ", "\u200d\u0301", "\ufffd\ufffd"])
def test_evidence_of_invisible_characters_is_empty_like_whitespace(blank: str) -> None:
    v = _verifier()
    with pytest.raises(ValueError, match=r"^evidences\[1\]: evidence\[1\] is empty \(only "
                                         r"whitespace or invisible characters\)"):
        v.verify_pairs(["Paris is big.", "Rome is old."],
                       ["Paris is big.", ["Rome is old.", blank]])
    with pytest.raises(ValueError, match=r"^evidence\[1\] is empty"):
        v.verify("Paris is big. Rome is old.", evidence=["Paris is big.", blank])
    with pytest.raises(ValueError, match=r"^evidence\[0\] is empty"):
        v.verify("Paris is big.", evidence=[Evidence(blank, "doc")])
    # a ValueError (bad input, not a wrong type): a batch run makes it an error record,
    # where a TypeError stopped a --mode ensemble run with its whole chunk
    with pytest.raises(ValueError, match=r"^claims\[0\] is empty \(only whitespace or "
                                         r"invisible characters\)"):
        v.verify_pairs([blank], ["Paris is big."])
    with pytest.raises(ValueError, match="draft must be a non-empty str"):
        v.verify(blank, evidence=["Paris is big."])


class _UnusedPairer:
    """A pairer verify_pairs never calls (it is given the evidence)."""

    def pair(self, claims: object, passages: object) -> list:
        raise AssertionError("verify_pairs must not pair")


def test_float32_verdicts_do_not_depend_on_batch_size(tiny_nli_model) -> None:
    # bf16 (the auto dtype on some CPUs) moves probabilities in the third decimal with the
    # batch a pair lands in (documented); float32 must not
    claims = ["paris is in france .", "the city is old .", "berlin is the capital of germany .",
              "a man and a dog .", "the river seine is in paris and it is big ."]
    long_premise = " ".join(f"the {w} city is old and big ." for w in
                            ("paris", "london", "berlin", "north", "south", "east") * 4)
    evid = ["paris is the capital of france .", [long_premise, "the city was born ."],
            "berlin is in germany .", "the dog is red .", ["the seine is a river .", "paris ."]]
    out = {}
    for bs in (1, 3, 64):
        v = Verifier(NLIDetector(str(tiny_nli_model), dtype="float32", batch_size=bs),
                     decomposer=SpacyDecomposer(model="not_installed"), pairer=_UnusedPairer(),
                     alignment=AlignmentDetector(HashEncoder()), alignment_classifier=None)
        out[bs] = v.verify_pairs(claims, evid)  # the shipped meta-classifier decides
    for bs in (3, 64):
        for a, b in zip(out[1], out[bs], strict=True):
            assert a.status == b.status
            assert a.probabilities == pytest.approx(b.probabilities, abs=1e-5)
            for k, x in a.scores.items():
                assert math.isclose(x, b.scores[k], abs_tol=1e-5), k


def test_verify_counts_name_and_term_substitutions_as_a_feature() -> None:
    v = _verifier()
    (swapped, same) = v.verify_pairs(
        ["Fist of Legend was directed by John Woo.",
         "Fist of Legend was directed by Gordon Chan."],
        ["Fist of Legend is a film directed by Gordon Chan."] * 2)
    assert swapped.scores["checks.substitution"] == 1.0
    assert same.scores["checks.substitution"] == 0.0
    assert "checks.substitution" in all_features()
    # a swapped kinship, compass or nationality term counts too
    (term,) = v.verify_pairs(["Ares is the nephew of Zeus."], ["He is the son of Zeus ."])
    assert term.scores["checks.substitution"] == 1.0


def test_verify_statuses_agree_with_their_probabilities() -> None:
    # an opinion is Insufficient_Info, and so are its probabilities; a claim the evidence
    # quotes is Supported at the threshold, not a float32 rounding under it
    v = _verifier(support_threshold=0.7)
    (opinion,) = v.verify_pairs([Claim("Paris is in France.", verifiable=False)],
                                ["Paris is in France."])
    assert opinion.status == Status.INSUFFICIENT_INFO
    assert opinion.probabilities == {"Supported": 0.0, "Contradictory": 0.0,
                                     "Insufficient_Info": 1.0}
    (quoted,) = v.verify_pairs(["Berlin is not in Spain."], ["Berlin is not in Spain."])
    assert quoted.status == Status.SUPPORTED
    assert quoted.probabilities["Supported"] >= 0.7


def test_report_round_trips_and_checks_its_fields() -> None:
    import json

    rep = _verifier().verify("Paris is in France.", evidence=["Paris is in France."])
    data = json.loads(json.dumps(rep.to_dict(), allow_nan=False))
    assert data["schema_version"] == "1"
    assert Report.from_dict(data) == rep
    with pytest.raises(ValueError, match="schema_version '2' is not this version's '1'"):
        Report.from_dict({**data, "schema_version": "2"})
    assert Report.from_dict({**data, "schema_version": 1}) == rep  # the number, re-typed
    with pytest.raises(ValueError, match=r"verdicts\[0\]\.claim\.span \(0, 19\) is past the "
                                         r"end of the draft \(6 characters\)"):
        Report("Paris.", rep.verdicts)  # accepted, then refused by the Mitigator
    with pytest.raises(ValueError, match=r"unknown field\(s\) for Report: \['extra'\]"):
        Report.from_dict({**data, "extra": 1})
    with pytest.raises(TypeError, match=r"verdicts\[0\] must be a ClaimVerdict, got str"):
        Report("d", ("not a verdict",))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="draft must be a str, got NoneType"):
        Report(None, ())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"timings\['x'\] must be seconds >= 0, got 'y'"):
        Report("d", (), {"x": "y"})  # type: ignore[dict-item]


def test_verify_pairs_time_grows_linearly_with_the_number_of_pairs(monkeypatch) -> None:
    """Each claim's rows are found once, not by scanning every unit of the call (which made
    8,000 FEVER pairs spend 8 s there: what a GPU job scoring many thousands would feel)."""
    v = _verifier()
    monkeypatch.setattr(v, "_run_alignment", lambda paired: [{} for _ in paired])

    def seconds(n: int) -> float:
        claims = [f"Claim {i} is about topic{i}." for i in range(n)]
        evs = [[f"Evidence {i} mentions topic{i}.", f"Other text {i}."] for i in range(n)]
        best = math.inf
        for _ in range(3):
            t0 = time.perf_counter()
            verdicts = v.verify_pairs(claims, evs)
            best = min(best, time.perf_counter() - t0)
        assert [x.status for x in verdicts[:2]] == [Status.SUPPORTED] * 2
        return best

    small, large = seconds(300), seconds(3000)  # 10 times the pairs
    # linear: about 10 times the time (measured 8-12); scanning every unit: 30-40 times
    assert large < 18 * small, (small, large)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"nli": "models/nli-minilm-l6"},
     r"nli must have a predict\(\) method, got 'models/nli-minilm-l6'; for a model id or "
     r"path pass NLIDetector\('models/nli-minilm-l6'\)"),
    ({"decomposer": "spacy"}, r"decomposer must have a decompose\(\) method, got 'spacy'"),
    ({"pairer": 3}, r"pairer must have a pair\(\) method, got 3"),
    ({"alignment": "yes"}, r"alignment must have a features\(\) method, got 'yes'"),
    ({"uncertainty": 1}, r"uncertainty must have a features\(\) method, got 1"),
])
def test_verifier_refuses_components_it_cannot_call(kwargs: dict, message: str) -> None:
    # accepted before, they failed at the first verify() with an AttributeError
    with pytest.raises(TypeError, match=message):
        Verifier(**{"meta": None, "alignment_classifier": None, **kwargs})


def test_verifier_names_the_classifier_file_it_cannot_read(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match=r"^meta: .*embeded"):
        Verifier(KeywordNLI(), meta="embeded", alignment_classifier=None)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"^alignment_classifier: "):
        Verifier(KeywordNLI(), meta=None, alignment_classifier=tmp_path / "bad.json")
    # False turns the side detectors off, as documented
    assert Verifier(KeywordNLI(), meta=None, alignment_classifier=None, alignment=False,
                    uncertainty=False).alignment is None


def test_the_default_embedding_model_follows_the_nli_device() -> None:
    for device in ("cpu", None):
        v = Verifier(NLIDetector(device=device), meta=None, alignment_classifier=None)
        assert v.embedding_cache.encoder.device == device  # made lazily, nothing loaded


class RecordingNLI(KeywordNLI):
    """Records the premises it reads; an SNLI-like model: a premise that does not entail
    the claim (:meth:`entails`) is read as a contradiction."""

    def __init__(self):
        super().__init__()
        self.premises: list[str] = []

    @staticmethod
    def entails(p: str, h: str) -> bool:
        raise NotImplementedError

    def predict(self, pairs):
        self.premises += [p for p, _ in pairs]
        return np.array([[0.6, 0.3, 0.1] if self.entails(p, h) else [0.05, 0.05, 0.9]
                         for p, h in pairs], dtype=np.float32)


def test_long_passage_is_read_around_the_evidence_sentence() -> None:
    # the model reads an unrelated sentence as a contradiction: a sentence that states the
    # claim, read inside a whole long article, lost to the article's other chunks
    class SnliLike(RecordingNLI):
        @staticmethod
        def entails(p: str, h: str) -> bool:
            return h.rstrip(".").split()[-1] in p and "Lyon" not in p

    filler = " ".join(f"Lyon has {k} bridges over its river." for k in range(40))
    article = f"Paris is in France. It hosted the Olympics in 2024. {filler}"
    nli = SnliLike()
    v = Verifier(nli, decomposer=SpacyDecomposer(model="not_installed"),
                 pairer=EvidencePairer(encoder=HashEncoder(), dense_weight=0.0, top_k=1),
                 alignment=AlignmentDetector(HashEncoder()), alignment_classifier=None,
                 meta=None, context_chars=60)
    rep = v.verify("The city hosted the Olympics in 2024.", evidence=[article])
    assert rep.verdicts[0].status == Status.SUPPORTED
    assert nli.premises[0] == "Paris is in France. It hosted the Olympics in 2024."
    # None: the whole passage, as before
    whole = Verifier(SnliLike(), decomposer=SpacyDecomposer(model="not_installed"),
                     pairer=EvidencePairer(encoder=HashEncoder(), dense_weight=0.0, top_k=1),
                     alignment=AlignmentDetector(HashEncoder()), alignment_classifier=None,
                     meta=None, context_chars=None)
    assert whole.verify("The city hosted the Olympics in 2024.", evidence=[article]).verdicts[
        0].status == Status.CONTRADICTORY
    for bad in (0, -5, 2.5, "400", True):
        with pytest.raises(ValueError, match="context_chars must be an int > 0 or None, got"):
            Verifier(KeywordNLI(), meta=None, alignment_classifier=None,
                     context_chars=bad)  # type: ignore[arg-type]


def test_a_sentence_without_full_stops_is_read_in_pieces() -> None:
    # one "sentence" of 30,000 characters (a transcript, its stops replaced by commas) was
    # one evidence unit: the NLI model read all of it, in ~75 chunks, and the chunk it read
    # as a contradiction outweighed the one that states the claim (an audit's 100,000
    # characters: 9 of 9 claims Contradictory, the NLI step 100 times slower)
    class Recording(RecordingNLI):
        @staticmethod
        def entails(p: str, h: str) -> bool:
            return "Olympics in 2024" in p

    filler = ", ".join(f"Lyon has {k} bridges over its river" for k in range(800))
    text = f"{filler}, the city hosted the Olympics in 2024, {filler}."
    assert len(text) > 30_000 and ". " not in text

    def verifier(nli: Recording, **pairer: object) -> Verifier:
        return Verifier(nli, decomposer=SpacyDecomposer(model="not_installed"),
                        pairer=EvidencePairer(encoder=HashEncoder(), dense_weight=0.0,
                                              top_k=1, **pairer),  # type: ignore[arg-type]
                        alignment=AlignmentDetector(HashEncoder()), alignment_classifier=None,
                        meta=None)

    nli = Recording()
    rep = verifier(nli).verify("The city hosted the Olympics in 2024.", evidence=[text])
    assert rep.verdicts[0].status == Status.SUPPORTED
    assert nli.premises and max(map(len, nli.premises)) <= 400
    ev = rep.verdicts[0].evidence[0]
    assert text[ev.span[0]:ev.span[1]] == ev.content and "Olympics in 2024" in ev.content
    # pieces off (max_sentence_chars=None): the model reads the whole text, as before
    whole = Recording()
    verifier(whole, max_sentence_chars=None).verify("The city hosted the Olympics in 2024.",
                                                    evidence=[text])
    assert max(map(len, whole.premises)) == len(text)


def test_verify_warns_once_when_log_probs_come_without_token_offsets(caplog) -> None:
    # the claims' log-prob features were all NaN, silently
    draft = "Paris is big. Rome is old."
    tokens = ("Paris", " is", " big.", " Rome", " is", " old.")
    lps = (-0.1, -0.2, -3.0, -0.5, -0.1, -0.2)
    v = _verifier()
    with caplog.at_level("WARNING", logger="verifier.verify"):
        rep = v.verify(Generation(draft, tokens, lps), evidence=["Paris is big."])
    warned = [r for r in caplog.records if "no token_offsets" in r.getMessage()]
    assert len(warned) == 1  # once per call, not once per claim
    assert "2 claim(s)" in warned[0].getMessage()
    assert all("unc.mean_surprisal" not in x.scores for x in rep.verdicts)
    caplog.clear()
    offsets = ((0, 5), (5, 8), (8, 13), (13, 18), (18, 21), (21, 26))
    with caplog.at_level("WARNING", logger="verifier.verify"):
        rep = v.verify(Generation(draft, tokens, lps, offsets), evidence=["Paris is big."])
    assert not [r for r in caplog.records if "no token_offsets" in r.getMessage()]
    assert rep.verdicts[0].scores["unc.max_surprisal"] == 3.0
    with caplog.at_level("WARNING", logger="verifier.verify"):
        v.verify(Generation(draft), evidence=["Paris is big."])  # no log-probs: nothing lost
    assert not [r for r in caplog.records if "no token_offsets" in r.getMessage()]


def test_verify_status_may_differ_from_the_most_probable_one_by_design() -> None:
    # documented (Verifier, ClaimVerdict): the shipped cut on p(Supported) is 0.41, so a
    # balanced verdict can be Supported while p(Contradictory) is higher
    p = {"Supported": 0.45, "Contradictory": 0.5, "Insufficient_Info": 0.05}
    v = Verifier(KeywordNLI(), meta="embedded")
    assert v.meta.support_threshold_ == pytest.approx(0.41)
    assert v.decide(p) == Status.SUPPORTED
    assert Verifier(KeywordNLI(), meta="embedded", strictness="lenient").decide(
        {"Supported": 0.35, "Contradictory": 0.58, "Insufficient_Info": 0.07}) == Status.SUPPORTED
    assert Verifier(KeywordNLI(), meta="embedded", strictness="strict").decide(p) == \
        Status.CONTRADICTORY
    # without a learned cut, balanced mode says the most probable status
    assert _verifier().decide(p) == Status.CONTRADICTORY


def test_a_repeated_evidence_string_is_one_source() -> None:
    # a passage retrieved twice, given as plain strings: the copies filled the top-k evidence
    # slots (top_k=2 here), and the other passage, which decides, was never read
    claim = "The tower is in Paris."
    other = "The tower is in the city."  # closer to the claim's words: paired first
    decides = "Paris holds it."
    once = _verifier().verify(claim, evidence=[other, decides]).verdicts[0]
    twice = _verifier().verify(claim, evidence=[other, other, other, decides]).verdicts[0]
    assert sorted(e.content for e in once.evidence) == sorted([other, decides])
    assert once.status == twice.status == Status.SUPPORTED
    assert [e.content for e in twice.evidence] == [e.content for e in once.evidence]
    assert sorted(e.source_id for e in twice.evidence) == ["evidence-1", "evidence-4"]


def test_a_plain_string_is_not_named_as_a_given_source() -> None:
    # a plain string at index 1 was named "evidence-2" next to an Evidence of that id: two
    # texts cited as one source
    named = Evidence("Berlin is the capital of Germany.", "evidence-2", (0, 33))
    rep = _verifier().verify("Paris is in France.", evidence=[named, "Paris is in France."])
    (ev,) = [e for v in rep.verdicts for e in v.evidence if e.content.startswith("Paris")]
    assert ev.source_id == "evidence-2-2"


@pytest.mark.parametrize(("call", "exc", "match"), [
    (lambda v: v.verify_claims([("Paris is in France.", ["Paris is in France."])]),
     TypeError, r"paired\[0\] must be a ClaimEvidence, got tuple"),
    (lambda v: v.verify_claims("Paris"), TypeError, "paired must be a sequence of ClaimEvidence"),
    (lambda v: v.verify_claims(
        [ClaimEvidence(Claim("Paris is in France."), (Evidence("Paris is in France.", "d"),))],
        passages=[Passage("Paris is in France.", "d")]),
     TypeError, r"passages\[0\] must be an Evidence, got Passage"),
    # half of an emoji (a stream cut inside a character): named, not a tokenizer's error
    (lambda v: v.verify("Paris \ud83d is in France.", evidence=["Paris is in France."]),
     ValueError, "draft holds a lone surrogate '\\\\ud83d' at position 6"),
    (lambda v: v.verify("Paris is in France.", evidence=["x", "Paris \udc00 is in France."]),
     ValueError, r"evidence\[1\] holds a lone surrogate"),
    (lambda v: v.verify_pairs(["Paris \ud800 is in France."], ["Paris is in France."]),
     ValueError, r"claims\[0\] holds a lone surrogate"),
    (lambda v: v.verify_pairs(["Paris is in France."], ["Paris \ud800 is in France."]),
     ValueError, r"evidences\[0\]: evidence\[0\] holds a lone surrogate"),
])
def test_verify_claims_and_odd_text_errors_name_the_input(call, exc, match) -> None:
    with pytest.raises(exc, match=match):
        call(_verifier())


@pytest.mark.parametrize(("returned", "match"), [
    (None, r"retriever.retrieve\('Paris is in France.', top_k=5\) must return Evidence "
           r"objects, got NoneType"),
    (["Paris is in France."], r"retriever.retrieve\(.*\)\[0\] must be an Evidence, got str"),
])
def test_verify_names_a_retriever_that_returns_no_evidence(returned, match) -> None:
    class _Retriever:
        def retrieve(self, query, *, top_k):
            return returned

    with pytest.raises(TypeError, match=match):
        _verifier().verify("Paris is in France.", retriever=_Retriever())


def test_nli_names_a_lone_surrogate_in_a_pair() -> None:
    from verifier.nli import PairInputError, _validate_pairs

    with pytest.raises(PairInputError, match=r"pairs\[1\] hypothesis holds a lone surrogate"):
        _validate_pairs([("a", "b"), ("a", "b \ud800")])


def test_verifier_refuses_a_classifier_or_detector_it_cannot_use() -> None:
    # each failed only at the first verdict, with an error that did not name the parameter
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    X = np.random.default_rng(0).random((30, 2))
    statuses = np.array([s.value for s in Status] * 10)
    with pytest.raises(TypeError, match="meta must be fitted on named feature columns"):
        Verifier(KeywordNLI(), meta=LogisticRegression().fit(X, statuses))
    frame = pd.DataFrame(X, columns=["nli.entailment", "nli.neutral"])
    with pytest.raises(ValueError, match=r"alignment_classifier's classes_ must hold the "
                                         r"statuses .* missing \['Supported'"):
        Verifier(KeywordNLI(), meta=None, alignment_classifier=LogisticRegression().fit(
            frame, np.array(["SUPPORTS", "REFUTES", "NEI"] * 10)))
    with pytest.raises(TypeError, match=r"nli must be an instance, got the class NLIDetector"):
        Verifier(NLIDetector)  # type: ignore[arg-type]
    fitted = LogisticRegression().fit(frame, statuses)  # usable: accepted
    assert Verifier(KeywordNLI(), meta=fitted, alignment_classifier=None).meta is fitted


def test_readme_strictness_cuts_are_the_shipped_ones() -> None:
    # the README quoted the cuts of an earlier fit (0.32 and 0.62 for a cut of 0.43, when
    # they were 0.33 and 0.63)
    import re
    from pathlib import Path

    from verifier.embedded import embedded_meta_path
    from verifier.meta import StatusClassifier
    from verifier.verify import support_cut

    meta = StatusClassifier.load(embedded_meta_path("ensemble"))
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    found = re.search(r"`strictness` moves the cut \(`lenient` ([\d.]+), `strict`\s+([\d.]+)",
                      readme)
    assert found is not None
    assert (float(found[1]), float(found[2])) == (
        round(support_cut(meta, "lenient") or 0, 2), round(support_cut(meta, "strict") or 0, 2))


def test_strictness_without_a_meta_classifier_is_said_to_do_nothing(caplog) -> None:
    with caplog.at_level("WARNING", logger="verifier.verify"):
        _verifier(strictness="strict")
    assert "strictness='strict' has no effect with meta=None" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="verifier.verify"):
        _verifier()
    assert "strictness" not in caplog.text


def test_a_claim_stated_verbatim_is_supported_whatever_the_meta_classifier_says() -> None:
    # the threshold rule's safeguard holds with a meta-classifier too: a long evidence text
    # whose unrelated part reads as a contradiction outvoted the sentence stating the claim
    class _SaysContradictory:
        feature_names_in_ = np.array(["nli.entailment"])
        classes_ = np.array([s.value for s in Status])
        support_threshold_ = 0.43

        def predict_proba(self, X):
            return np.tile([0.05, 0.9, 0.05], (len(X), 1))

    v = _verifier(meta=_SaysContradictory())
    stated, other = v.verify_pairs(["Paris is in France.", "Lyon is in France."],
                                   ["Rome is old. Paris is in France. Berlin is not big."] * 2)
    assert stated.status == Status.SUPPORTED and other.status == Status.CONTRADICTORY
    assert stated.probabilities["Supported"] == pytest.approx(0.43)
    assert sum(stated.probabilities.values()) == pytest.approx(1.0)
    assert stated.probabilities["Contradictory"] > stated.probabilities["Insufficient_Info"]
