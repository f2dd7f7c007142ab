"""The ensemble path: alignment detector, status classifier, meta decision, parallel run."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from test_pairing import HashEncoder
from test_verify import KeywordNLI

from verifier.alignment import FEATURES, AlignmentDetector, alignment_features, top_sentences
from verifier.meta import NOT_SUPPORTED, StatusClassifier
from verifier.types import Claim, ClaimEvidence, Evidence, Generation, Status
from verifier.verify import DERIVED_FEATURES, Verifier, all_features, derive_features


def _data(n: int = 60, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal((3, 0), 0.5, (n, 2)), rng.normal((0, 3), 0.5, (n, 2)),
              rng.normal((0, -3), 0.5, (n, 2)), rng.normal((-1, 0), 0.5, (n, 2))]
    y = (["Supported"] * n + ["Contradictory"] * n + ["Insufficient_Info"] * n
         + [NOT_SUPPORTED] * n)
    return X, y


def test_status_classifier_learns_three_statuses_from_mixed_labels() -> None:
    X, y = _data()
    m = StatusClassifier(["a", "b"]).fit(X, y)
    assert m.predict([[3, 0], [0, 3], [0, -3]]).tolist() == ["Supported", "Contradictory",
                                                              "Insufficient_Info"]
    p = m.predict_proba(X)
    assert p.shape == (len(X), 3) and np.allclose(p.sum(axis=1), 1)
    # Not_Supported rows only teach stage one: they are never called Supported.
    assert (m.predict(X[-60:]) != "Supported").mean() > 0.9


def test_status_classifier_json_round_trip_and_errors(tmp_path) -> None:
    X, y = _data()
    m = StatusClassifier(["a", "b"], calibration="sigmoid").fit(X, y)
    m.save(tmp_path / "m.json")
    back = StatusClassifier.load(tmp_path / "m.json")
    assert np.allclose(back.predict_proba(X), m.predict_proba(X))
    assert back.support_threshold_ == m.support_threshold_
    assert 0.05 <= m.support_threshold_ <= 0.95
    assert json.loads((tmp_path / "m.json").read_text())["format"].startswith("nli-verifier")
    with pytest.raises(ValueError, match="unknown labels"):
        StatusClassifier().fit(X, ["Maybe"] * len(X))
    with pytest.raises(FileNotFoundError, match="no status-classifier file"):
        StatusClassifier.load(tmp_path / "none.json")
    # Only 2-class rows: contradicted and unverifiable share the rest.
    two = StatusClassifier(["a", "b"]).fit(X[:120], ["Supported"] * 60 + [NOT_SUPPORTED] * 60)
    p = two.predict_proba([[-1.0, 0.0]])[0]
    assert p[0] == pytest.approx(p[1]) and p[2] < 0.5


def test_alignment_features_cover_values_in_other_formats() -> None:
    ev = [Evidence("The company was founded in 1998. It earned $1.2 billion in 2020.", "d")]
    f = alignment_features("The company earned 1,200,000,000 dollars.", ev)
    assert f["align.number_coverage"] == 1.0 and f["align.number_conflict"] == 0.0
    g = alignment_features("The company earned $3 billion in 2020.", ev)
    assert g["align.number_coverage"] == 0.0  # $3 billion is not in the evidence
    assert math.isnan(f["align.date_coverage"])  # the claim has no date
    assert set(f) == set(FEATURES)
    empty = alignment_features("Anything.", [])
    assert empty["align.evidence_count"] == 0.0 and math.isnan(empty["align.claim_recall"])


def test_alignment_detector_picks_best_sentences_and_batches_cosines() -> None:
    ev = [Evidence("Cats purr. Paris is the capital of France. Dogs bark.", "d")]
    assert top_sentences("Paris is the capital of France.", ev, k=1) == [
        "Paris is the capital of France."]
    calls = []

    class Counting(HashEncoder):
        def encode(self, texts):
            calls.append(len(texts))
            return super().encode(texts)

    det = AlignmentDetector(Counting(), max_sentences=2)
    rows = det.features(["Paris is the capital of France.", "Dogs bark."], [ev, ev])
    assert len(calls) == 1  # one batch for every claim and sentence
    assert rows[0]["align.cosine"] == pytest.approx(1.0, abs=1e-5)
    assert AlignmentDetector(embeddings=False).features(["x y."], [ev])[0]["align.cosine"] \
        != AlignmentDetector(embeddings=False).features(["x y."], [ev])[0]["align.cosine"]
    with pytest.raises(ValueError, match="max_sentences"):
        AlignmentDetector(max_sentences=0)
    with pytest.raises(ValueError, match="claims has 1 items but evidence has 2"):
        det.features(["a"], [ev, ev])


def _meta_on(names: list[str]) -> StatusClassifier:
    """A classifier that follows nli.entailment / nli.contradiction."""
    rng = np.random.default_rng(1)
    e = rng.uniform(0, 1, 300)
    c = rng.uniform(0, 1, 300) * (1 - e)
    X = np.zeros((300, len(names)))
    X[:, names.index("nli.entailment")] = e
    X[:, names.index("nli.contradiction")] = c
    y = np.where(e > 0.5, "Supported", np.where(c > 0.25, "Contradictory",
                                                "Insufficient_Info"))
    return StatusClassifier(names).fit(X, y)


def _ens(**kw) -> Verifier:
    names = ["nli.entailment", "nli.contradiction", "align.claim_recall"]
    return Verifier(KeywordNLI(), meta=_meta_on(names), alignment_classifier=None,
                    alignment=AlignmentDetector(HashEncoder()), **kw)


def test_verifier_with_meta_classifier_decides_by_strictness() -> None:
    v = _ens()
    out = v.verify_pairs(["Paris is in France.", "Berlin is in Spain.", "Rome has pasta."],
                         ["Paris is in France.", "Berlin is not in Spain.", "Cats."])
    assert [o.status for o in out] == [Status.SUPPORTED, Status.CONTRADICTORY,
                                       Status.INSUFFICIENT_INFO]
    assert all(abs(sum(o.probabilities.values()) - 1) < 1e-6 for o in out)
    assert {"nli.entailment", "align.claim_recall", "unc.nli_entropy"} <= set(out[0].scores)
    p = {"Supported": 0.6, "Contradictory": 0.3, "Insufficient_Info": 0.1}
    assert _ens(strictness="balanced").decide(p) == Status.SUPPORTED
    assert _ens(strictness="strict").decide(p) == Status.CONTRADICTORY
    q = {"Supported": 0.4, "Contradictory": 0.25, "Insufficient_Info": 0.35}
    assert _ens(strictness="lenient").decide(q) == Status.SUPPORTED
    with pytest.raises(ValueError, match="strictness must be one of"):
        _ens(strictness="paranoid")
    with pytest.raises(TypeError, match="meta must be"):
        Verifier(KeywordNLI(), meta=3, alignment_classifier=None)


def test_parallel_and_sequential_runs_agree_and_time_each_detector() -> None:
    paired = [ClaimEvidence(Claim(c), (Evidence(e, f"e{i}", (0, len(e))),)) for i, (c, e) in
              enumerate([("Paris is in France.", "Paris is in France."),
                         ("Berlin is in Spain.", "Berlin is not in Spain.")])]
    t: dict[str, float] = {}
    a = _ens(parallel=True).verify_claims(paired, timings=t)
    b = _ens(parallel=False).verify_claims(paired)
    assert [x.to_dict() for x in a] == [x.to_dict() for x in b]
    assert {"nli", "alignment", "uncertainty", "detectors", "meta"} <= set(t)


def test_uncertainty_features_reach_the_scores_when_the_draft_has_logprobs() -> None:
    from rag.decompose import SpacyDecomposer
    from rag.pairing import EvidencePairer

    v = Verifier(KeywordNLI(), decomposer=SpacyDecomposer(model="not_installed"),
                 pairer=EvidencePairer(encoder=HashEncoder(), top_k=1), meta=None,
                 alignment=False, alignment_classifier=None)
    g = Generation("Paris is in France.", ("Paris", " is", " in", " France."),
                   (-0.1, -0.2, -0.1, -2.5), ((0, 5), (5, 8), (8, 11), (11, 19)))
    rep = v.verify(g, evidence=["Paris is in France."])
    s = rep.verdicts[0].scores
    assert s["unc.max_surprisal"] == pytest.approx(2.5)
    assert "align.claim_recall" not in s  # alignment turned off: its features are missing
    plain = v.verify("Paris is in France.", evidence=["Paris is in France."])
    assert "unc.max_surprisal" not in plain.verdicts[0].scores


def test_feature_names_are_unique_and_grouped_by_detector() -> None:
    names = all_features()
    assert len(names) == len(set(names))
    assert {n.split(".")[0] for n in names} == {"nli", "align", "checks", "match", "unc", "x"}


def test_derived_features_are_log_odds_and_products_and_keep_missing_values() -> None:
    f = {"nli.entailment": 0.9, "nli.contradiction": 0.05, "nli.neutral": 0.05,
         "align.cosine": 0.5, "align.claim_recall": math.nan, "align.claim_tokens": 3.0}
    d = derive_features(f)
    assert set(d) == set(DERIVED_FEATURES)
    assert d["nli.logit_entailment"] == pytest.approx(math.log(9))
    assert d["x.entailment_cosine"] == pytest.approx(0.45)
    assert math.isnan(d["x.entailment_recall"])  # a missing input stays missing
    assert math.isnan(d["nli.logit_mean_entailment"])  # absent key -> NaN, no KeyError
    assert d["align.log_claim_tokens"] == pytest.approx(math.log(4))
    assert math.isfinite(derive_features({"nli.entailment": 1.0})["nli.logit_entailment"])
    # the entailment slope of claims read sentence by sentence: 0 for one sentence
    assert math.isnan(d["x.entailment_multi_sentence"])  # nli.sentences unknown
    one = derive_features({**f, "nli.sentences": 1.0})["x.entailment_multi_sentence"]
    three = derive_features({**f, "nli.sentences": 3.0})["x.entailment_multi_sentence"]
    assert one == 0.0 and three == pytest.approx(math.log(9))


def test_verdict_scores_carry_the_derived_features() -> None:
    paired = [ClaimEvidence(Claim("Paris is in France."),
                            (Evidence("Paris is in France.", "e", (0, 19)),))]
    s = _ens(parallel=False).verify_claims(paired)[0].scores
    assert s["x.entailment_recall"] == pytest.approx(s["nli.entailment"] * s["align.claim_recall"])
    assert s["nli.sentences"] == 1.0  # a detector that does not read sentences: 1


def test_nli_sentences_feature_follows_the_detector(tiny_nli_model) -> None:
    from verifier.nli import NLIDetector

    claim = "Paris is in France. It has two million people. St. Louis is not."
    ev = [Evidence("Paris is in France and has two million people.", "e", (0, 46))]
    for reads, want in ((True, 3.0), (False, 1.0)):
        det = NLIDetector(str(tiny_nli_model), hypothesis_sentences=reads)
        v = Verifier(det, meta=None, alignment_classifier=None,
                     alignment=AlignmentDetector(HashEncoder()))
        s = v.verify_pairs([claim], [ev])[0].scores
        assert s["nli.sentences"] == want
        assert s["x.entailment_multi_sentence"] == pytest.approx(
            s["nli.logit_entailment"] if want > 1 else 0.0)


def test_nli_detail_features_read_the_scores_behind_the_row(tiny_nli_model) -> None:
    """The least entailment and most contradiction over a claim's sentences, the best
    chunk's entailment and contradiction and the chunk count, from the detector's own
    per-sentence and per-chunk scores; NaN for a detector with ``predict`` only."""
    from verifier.nli import NLIDetector
    from verifier.verify import NLI_DETAIL_FEATURES

    claim = "Paris is in France. It has two million people. St. Louis is not."
    text = " ".join(["Paris is in France and has two million people."] * 12)
    ev = [Evidence(text, "e", (0, len(text)))]
    for reads in (True, False):
        det = NLIDetector(str(tiny_nli_model), hypothesis_sentences=reads, chunk_tokens=24)
        v = Verifier(det, meta=None, alignment_classifier=None,
                     alignment=AlignmentDetector(HashEncoder()))
        s = v.verify_pairs([claim], [ev])[0].scores
        if reads:
            got = det.predict_sentences([(text, claim)])[0]
            parts = got.sentences
        else:
            got = det.predict_chunks([(text, claim)])[0]
            parts = (got,)
        rows = np.stack([p.probabilities for p in parts])
        assert s["nli.entailment"] == pytest.approx(float(got.probabilities[0]))
        assert s["nli.min_sentence_entailment"] == pytest.approx(rows[:, 0].min())
        assert s["nli.max_sentence_contradiction"] == pytest.approx(rows[:, 2].max())
        assert s["nli.chunk_max_entailment"] == pytest.approx(
            np.mean([p.chunk_probabilities[:, 0].max() for p in parts]))
        assert s["nli.chunk_max_contradiction"] == pytest.approx(
            np.mean([p.chunk_probabilities[:, 2].max() for p in parts]))
        assert s["nli.chunks"] == len(parts[0].chunk_spans) > 1
        if reads:  # three sentences: the least entailment is under their mean
            assert len(parts) == 3
            assert s["nli.min_sentence_entailment"] < s["nli.entailment"]
    s = _ens(parallel=False).verify_pairs([claim], [ev])[0].scores  # predict only
    assert not any(n in s and not math.isnan(s[n]) for n in NLI_DETAIL_FEATURES)
    assert not math.isnan(s["nli.entailment"])


class _Counting:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts):
        self.seen += list(texts)
        return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)


def test_cached_encoder_embeds_each_text_once_and_forgets_the_oldest() -> None:
    from rag.pairing import CachedEncoder

    inner = _Counting()
    enc = CachedEncoder(inner, max_items=2)
    a = enc.encode(["aa", "b", "aa"])
    assert inner.seen == ["aa", "b"]  # duplicates in one call are embedded once
    np.testing.assert_array_equal(a, [[2, 1], [1, 1], [2, 1]])
    enc.encode(["b", "ccc"])  # "aa" is now the least recently used: forgotten
    enc.encode(["aa"])
    assert inner.seen == ["aa", "b", "ccc", "aa"]
    enc.clear()
    enc.encode(["b"])
    assert inner.seen[-1] == "b"
    assert enc.encode([]).shape[0] == 0
    with pytest.raises(ValueError, match="max_items"):
        CachedEncoder(inner, max_items=0)
    with pytest.raises(TypeError, match="texts"):
        enc.encode("aa")


def test_cached_encoder_makes_its_encoder_from_a_factory_once() -> None:
    from rag.pairing import CachedEncoder

    made: list[_Counting] = []

    def factory() -> _Counting:
        made.append(_Counting())
        return made[-1]

    enc = CachedEncoder(factory)
    assert not made  # lazy
    enc.encode(["x"])
    enc.encode(["y"])
    assert len(made) == 1 and made[0].seen == ["x", "y"]


def test_default_verifier_shares_one_embedding_cache() -> None:
    v = Verifier(KeywordNLI(), meta=None, alignment_classifier=None)
    assert v.embedding_cache is not None
    assert v.pairer.encoder is v.embedding_cache
    assert v.alignment.encoder is v.embedding_cache


@pytest.mark.slow
def test_fresh_default_verifier_loads_its_models_in_threads_safely() -> None:
    """Loading the NLI model and MiniLM at once in two threads once left mixed dtypes."""
    import torch

    v = Verifier()
    rep = v.verify("The tower was completed in 1889. It is 300 metres tall.",
                   evidence=["The tower was completed in 1889 and is 330 metres tall."])
    dtypes = {p.dtype for p in v.nli._state().model.parameters()}
    assert len(dtypes) == 1, dtypes
    assert rep.verdicts[0].status == Status.SUPPORTED
    assert {"nli", "alignment", "meta"} <= set(rep.timings)
    assert torch.get_default_dtype() == torch.float32


def test_status_classifier_decides_supported_at_its_learned_cut() -> None:
    X, y = _data()
    m = StatusClassifier(["a", "b"]).fit(X, y)
    row = np.array([[1.5, 0.0]])  # between Supported (3, 0) and Not_Supported (-1, 0)
    s = float(m.predict_proba(row)[0, 2])
    assert 0.02 < s < 0.98
    m.support_threshold_ = s - 0.01
    assert m.predict(row)[0] == "Supported"
    m.support_threshold_ = s + 0.01
    assert m.predict(row)[0] != "Supported"


def test_group_calibration_holds_sets_out_and_falls_back_when_a_class_would_vanish() -> None:
    X, y = _data()
    # "Insufficient_Info" rows all come from one group: leaving it out would leave stage two
    # with one class, so its folds fall back to stratified ones instead of failing.
    groups = np.where(np.asarray(y) == "Insufficient_Info", "g3",
                      np.where(np.arange(len(y)) % 2 == 0, "g1", "g2"))
    m = StatusClassifier(["a", "b"], calibration="sigmoid").fit(X, y, groups=groups)
    assert m.predict([[3, 0], [0, 3], [0, -3]]).tolist() == ["Supported", "Contradictory",
                                                              "Insufficient_Info"]
    with pytest.raises(ValueError, match="groups has 3 items"):
        StatusClassifier(["a", "b"]).fit(X, y, groups=["g"] * 3)


def test_verifier_strictness_moves_the_learned_cut() -> None:
    class Fixed:
        classes_ = np.asarray(["Contradictory", "Insufficient_Info", "Supported"])
        feature_names_in_ = np.asarray(["nli.entailment"], dtype=object)
        support_threshold_ = 0.3

        def predict_proba(self, X):
            return np.tile([0.30, 0.37, 0.33], (len(X), 1))

    # Supported is not the most probable status, yet above the learned cut of 0.3
    probs = {"Contradictory": 0.30, "Insufficient_Info": 0.37, "Supported": 0.33}
    got = {st: Verifier(KeywordNLI(), meta=Fixed(), alignment_classifier=None,
                        strictness=st).decide(probs)
           for st in ("lenient", "balanced", "strict")}
    assert got == {"lenient": Status.SUPPORTED, "balanced": Status.SUPPORTED,
                   "strict": Status.INSUFFICIENT_INFO}  # strict needs 0.3 + 0.2


@pytest.mark.slow
def test_default_verifier_reads_unrelated_evidence_as_insufficient_info() -> None:
    """The shipped classifiers learnt from claims checked against other claims' documents
    (``pipeline_features``): a sentence about something else is not a contradiction, even
    with the pairer's relevance floor off."""
    v = Verifier(min_evidence_score=0.0)
    draft = ("Paris is the capital of France. "
             "Quokkas are small marsupials that eat leaves of the moon.")
    rep = v.verify(draft, evidence=["Paris is the capital of France. The Seine flows through "
                                    "Paris."])
    assert [r.status for r in rep.verdicts] == [Status.SUPPORTED, Status.INSUFFICIENT_INFO]
    assert rep.verdicts[1].evidence  # no floor: it was given evidence, and not believed
    assert rep.verdicts[1].scores["nli.units"] >= 1
