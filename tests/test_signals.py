from __future__ import annotations

import math
import re

import numpy as np
import pytest

from verifier.alignment import FEATURES, alignment_features, feature_matrix
from verifier.types import Claim, Evidence, Generation
from verifier.uncertainty import UncertaintyDetector, nli_entropy


def test_alignment_features_cover_values_in_other_formats() -> None:
    ev = [Evidence("The deal was worth 1,200,000,000 dollars, signed on 20 July 1969.", "d",
                   (0, 0), 0.8, 0)]
    f = alignment_features("The deal was worth $1.2 billion and was signed on July 20, 1969.",
                           ev)
    assert f["align.number_coverage"] == 1.0 and f["align.number_conflict"] == 0.0
    assert f["align.date_coverage"] == 1.0 and f["align.best_score"] == 0.8
    assert math.isnan(f["align.quote_coverage"]) and math.isnan(f["align.cosine"])


def test_alignment_features_flag_conflicts_and_negation() -> None:
    ev = [Evidence("The tower is not 300 metres tall; it is 330 metres tall.", "d")]
    f = alignment_features("The tower is 300 metres tall.", ev)
    assert f["align.negation_mismatch"] == 1.0
    f = alignment_features("The tower is 310 metres tall.", [Evidence("It is 330 metres.", "d")])
    assert f["align.number_conflict"] == 1.0 and f["align.number_coverage"] == 0.0
    empty = alignment_features("x", [])
    assert empty["align.evidence_count"] == 0 and math.isnan(empty["align.claim_recall"])
    X = feature_matrix([f, {}])
    assert X.shape == (2, len(FEATURES)) and np.isnan(X[1]).all()


@pytest.mark.parametrize(("claim", "evidence", "conflict"), [
    # the evidence's date is another life event's: a conflict, as another value is
    ("Elizabeth Olsen died in 1989.", "Elizabeth Olsen (born February 16, 1989) is an actress.",
     1.0),
    ("Bessie Smith died on April 26, 1937.",
     "Bessie Smith ( April 15 , 1894 -- September 26 , 1937 ) was a blues singer .", 1.0),
    # the same event and date, or a date the evidence lacks: no conflict
    ("Bessie Smith was born on April 15, 1894.",
     "Bessie Smith ( April 15 , 1894 -- September 26 , 1937 ) was a blues singer .", 0.0),
    ("The film came out in 1989.", "Olsen (born February 16, 1989) is an American actress.", 0.0),
])
def test_alignment_date_conflict_counts_life_events(claim: str, evidence: str,
                                                    conflict: float) -> None:
    f = alignment_features(claim, [Evidence(evidence, "d")])
    assert f["align.date_conflict"] == conflict


def test_uncertainty_from_logprobs_and_missing() -> None:
    g = Generation("Paris is big. Rome is old.", ("Paris", " is", " big.", " Rome", " is old."),
                   (-0.1, -0.2, -3.0, -0.5, -0.4), ((0, 5), (5, 8), (8, 13), (13, 18), (18, 26)))
    claims = [Claim("Paris is big.", (0, 13)), Claim("Rome is old.", (14, 26))]
    f = UncertaintyDetector().features(g, claims, nli_probs=np.array([[1, 0, 0], [1 / 3] * 3]))
    assert f[0]["unc.max_surprisal"] == pytest.approx(3.0)
    assert f[1]["unc.tokens"] == 2 and f[1]["unc.nli_entropy"] == pytest.approx(math.log(3))
    no_lp = UncertaintyDetector().features(Generation("Paris is big."), claims[:1])
    # no log-probs: every log-prob feature is missing, the token count too (as for a str
    # draft), not a count of 0 the meta-classifier would read as "no tokens"
    assert all(math.isnan(no_lp[0][k]) for k in ("unc.mean_surprisal", "unc.tokens"))
    assert nli_entropy([1.0, 0.0, 0.0]) < 1e-9


def test_uncertainty_teacher_forcing_and_self_consistency() -> None:
    class Gen:
        def score(self, prompt, text):
            return Generation(text, ("a", "b"), (-1.0, -2.0))

        def generate(self, prompt, *, n=1):
            return [Generation("Paris is big."), Generation("Paris is small.")][:n]

    class NLI:
        def predict(self, pairs):
            return np.array([[0.9, 0.05, 0.05] if "big" in p else [0.1, 0.1, 0.8]
                             for p, _ in pairs])

    det = UncertaintyDetector(Gen(), NLI(), samples=2)
    f = det.features(Generation("Paris is big."), [Claim("Paris is big.", (0, 13))],
                     prompt="q")
    assert f[0]["unc.mean_surprisal"] == 1.5 and f[0]["unc.self_consistency"] == 0.5
    with pytest.raises(ValueError, match="needs a generator and an nli"):
        UncertaintyDetector(samples=3)


def test_uncertainty_leaves_out_empty_samples(caplog: pytest.LogCaptureFixture) -> None:
    class Gen:
        def __init__(self, texts):
            self.texts = texts

        def score(self, prompt, text):
            return Generation(text)

        def generate(self, prompt, *, n=1):
            return [Generation(t) for t in self.texts[:n]]

    class NLI:  # like NLIDetector: an empty premise is an error
        calls = 0

        def predict(self, pairs):
            self.calls += 1
            assert all(p.strip("\u200b ") for p, _ in pairs), pairs
            return np.array([[0.9, 0.05, 0.05] if "big" in p else [0.1, 0.1, 0.8]
                             for p, _ in pairs])

    claim = [Claim("Paris is big.", (0, 13))]
    nli = NLI()
    det = UncertaintyDetector(Gen(["Paris is big.", "", "Paris is small.", " \u200b"]), nli,
                              samples=4)
    with caplog.at_level("WARNING", logger="verifier.uncertainty"):
        f = det.features(Generation("Paris is big."), claim, prompt="q")
    assert f[0]["unc.self_consistency"] == 0.5  # 1 of the 2 samples with text
    assert "2 of 4 sampled drafts are empty" in caplog.text
    nli.calls = 0
    f = UncertaintyDetector(Gen(["", "  "]), nli, samples=2).features(
        Generation("Paris is big."), claim, prompt="q")
    assert math.isnan(f[0]["unc.self_consistency"]) and nli.calls == 0
    f = UncertaintyDetector(Gen([]), nli, samples=2).features(  # a generator that gave none
        Generation("Paris is big."), claim, prompt="q")
    assert math.isnan(f[0]["unc.self_consistency"]) and nli.calls == 0


def test_entity_coverage_ignores_accents_and_apostrophe_shapes() -> None:
    def coverage(claim: str, evidence: str) -> float:
        return alignment_features(claim, [Evidence(evidence, "d")])["align.entity_coverage"]

    assert coverage("Sao Paulo hosts O’Brien.", "São Paulo hosts O'Brien.") == 1.0
    assert coverage("Sao Paulo hosts O’Brien.", "Rio hosts Smith.") == 0.0


def test_uncertainty_teacher_forces_the_draft_once_and_reads_each_claim_in_context() -> None:
    # each claim's text scored alone lost the sentences before it and scored the decomposer's
    # rewording ("The city has ..." for "It has ..."), not the draft's tokens
    draft = "Paris is big. It has museums."
    calls = []

    class Gen:
        def score(self, prompt, text):
            calls.append(text)
            words = [(m.start(), m.end()) for m in re.finditer(r"\S+\s*", text)]
            return Generation(text, tuple(text[a:b] for a, b in words),
                              tuple(-float(k + 1) for k in range(len(words))), tuple(words))

    det = UncertaintyDetector(Gen())
    f = det.features(Generation(draft), [Claim("Paris is big.", (0, 13)),
                                         Claim("Paris has museums.", (14, 29))], prompt="q")
    assert calls == [draft]  # once, the draft as written
    assert [x["unc.tokens"] for x in f] == [3.0, 3.0]
    assert f[1]["unc.min_logprob"] == -6.0 and f[1]["unc.mean_surprisal"] == 5.0
    # log-probs it cannot place in the draft (tokens that do not join to its text, as a
    # server's split characters give): each claim's rewording was scored alone instead
    calls.clear()
    unplaced = Generation(draft, ("Paris", "is"), (-1.0, -2.0))
    assert unplaced.token_offsets is None
    g = det.features(unplaced, [Claim("Paris is big.", (0, 13)),
                                Claim("Paris has museums.", (14, 29))], prompt="q")
    assert calls == [draft] and g == f


def test_uncertainty_names_nli_probs_of_the_wrong_shape() -> None:
    det = UncertaintyDetector()
    claims = [Claim("Paris is big.", (0, 13)), Claim("Rome is old.", (14, 26))]
    for bad in (np.ones((1, 3)), np.ones((2, 2))):
        with pytest.raises(ValueError, match=r"nli_probs must have shape \(2, 3\)"):
            det.features(Generation("Paris is big. Rome is old."), claims, nli_probs=bad)
    assert UncertaintyDetector(samples=np.int64(0)).samples == 0
    with pytest.raises(ValueError, match="samples must be an int >= 0, got True"):
        UncertaintyDetector(samples=True)


def test_uncertainty_refuses_self_consistency_from_a_greedy_generator() -> None:
    from rag.generation import HFGenerator, OpenAICompatibleGenerator

    class NLI:
        def predict(self, pairs):
            return np.ones((len(pairs), 3)) / 3

    for gen in (HFGenerator(), OpenAICompatibleGenerator("m")):  # both greedy by default
        with pytest.raises(ValueError, match=r"self-consistency \(samples=3\) needs a "
                                             r"generator that samples, got \w+Generator with "
                                             r"temperature=0"):
            UncertaintyDetector(gen, NLI(), samples=3)
    assert UncertaintyDetector(HFGenerator(temperature=0.7), NLI(), samples=3).samples == 3
    # a StaticGenerator returns its one draft as every "sample" (it has no temperature):
    # self-consistency was 1.0 for any claim, a false one too
    from rag.generation import StaticGenerator

    with pytest.raises(ValueError, match=r"self-consistency \(samples=3\) needs a generator "
                                         r"that samples, got StaticGenerator"):
        UncertaintyDetector(StaticGenerator("Paris is in Spain."), NLI(), samples=3)
    assert UncertaintyDetector(StaticGenerator("x."), NLI(), samples=0).samples == 0
    assert UncertaintyDetector(HFGenerator(), NLI(), samples=0).samples == 0


def test_uncertainty_generator_without_score_gives_nan_not_an_error(
        caplog: pytest.LogCaptureFixture) -> None:
    from rag.generation import OpenAICompatibleGenerator

    with caplog.at_level("WARNING", logger="verifier.uncertainty"):
        det = UncertaintyDetector(OpenAICompatibleGenerator("m", base_url="http://127.0.0.1:1"))
    assert "has no score(): no teacher forcing" in caplog.text
    f = det.features(Generation("Paris is big."), [Claim("Paris is big.", (0, 13))],
                     prompt="Where is Paris?")
    assert math.isnan(f[0]["unc.mean_surprisal"]) and math.isnan(f[0]["unc.tokens"])


# a contraction is a negation ("isn't": no word boundary before its "n't"); a name is found
# whole in one passage ("Oman" is not in "a woman", nor "New York" across two passages); a
# date's month is no name (covered by the date features when written "1990-07-04")
@pytest.mark.parametrize(("claim", "evidence", "coverage", "negation"), [
    ("Paris isn't big.", ["Paris is big."], 1.0, 1.0),
    ("Paris wasn’t founded by Romans.", ["Paris was founded by Romans."], 1.0, 1.0),
    ("Paris doesn't have a port.", ["Paris doesn't have a port."], 1.0, 0.0),
    ("Oman signed the treaty.", ["A woman signed the treaty."], 0.0, 0.0),
    ("Niger won the match.", ["Nigeria won the match."], 0.0, 0.0),
    ("New York is large.", ["It is New", "York City is large."], 0.0, 0.0),
    ("São Paulo is big.", ["Sao Paulo is big."], 1.0, 0.0),
    ("Paris hosted it on 4 July 1990.", ["Paris hosted it on 1990-07-04."], 1.0, 0.0),
])
def test_alignment_negation_and_entity_coverage(claim, evidence, coverage, negation) -> None:
    f = alignment_features(claim, [Evidence(e, f"d{i}") for i, e in enumerate(evidence)])
    assert (f["align.entity_coverage"], f["align.negation_mismatch"]) == (coverage, negation)


def test_uncertainty_generator_that_fails_gives_nan_and_one_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    class Down:
        temperature = 0.7

        def score(self, prompt, text):
            raise ConnectionError("server down")

        def generate(self, prompt, *, n=1):
            raise ConnectionError("server down")

    class NLI:
        def predict(self, pairs):
            return np.ones((len(pairs), 3)) / 3

    claims = [Claim("Paris is big.", (0, 13)), Claim("Rome is old.", (14, 26))]
    det = UncertaintyDetector(Down(), NLI(), samples=2)
    with caplog.at_level("WARNING", logger="verifier.uncertainty"):
        f = det.features(Generation("Paris is big. Rome is old."), claims, prompt="q")
    assert all(math.isnan(v) for row in f for v in row.values())
    assert caplog.text.count("score() failed (ConnectionError: server down)") == 1
    assert caplog.text.count("generate() failed (ConnectionError: server down)") == 1
    # log-probs of the draft are kept when only the sampling fails
    g = Generation("Paris is big.", ("Paris", " is", " big."), (-0.1, -0.2, -3.0),
                   ((0, 5), (5, 8), (8, 13)))
    f = det.features(g, claims[:1], prompt="q")
    assert f[0]["unc.max_surprisal"] == pytest.approx(3.0)
    assert math.isnan(f[0]["unc.self_consistency"])


def test_uncertainty_self_consistency_without_a_prompt_warns_once(
        caplog: pytest.LogCaptureFixture) -> None:
    class Gen:
        temperature = 0.7

        def generate(self, prompt, *, n=1):
            return [Generation("Paris is big.")] * n

    class NLI:
        def predict(self, pairs):
            return np.ones((len(pairs), 3)) / 3

    det = UncertaintyDetector(Gen(), NLI(), samples=2, teacher_forcing=False)
    claim = [Claim("Paris is big.", (0, 13))]
    with caplog.at_level("WARNING", logger="verifier.uncertainty"):
        for _ in range(3):
            f = det.features(Generation("Paris is big."), claim)
            assert math.isnan(f[0]["unc.self_consistency"])
    assert caplog.text.count("self-consistency (samples=2) needs the prompt") == 1


def test_claim_token_logprobs_leave_out_the_line_break_before_a_claim() -> None:
    # "\n\nRome is old.": the newline token before an ASCII word holds none of its bytes,
    # but was read as the claim's first token (5 tokens for its 4)
    from verifier.uncertainty import claim_token_logprobs

    text = "Paris is big.\n\nRome is old."
    toks = ["Paris", " is", " big", ".", "\n", "\n", "Rome", " is", " old", "."]
    offsets, pos = [], 0
    for t in toks:
        offsets.append((pos, pos + len(t)))
        pos += len(t)
    lps = [-0.1 * (i + 1) for i in range(len(toks))]
    g = Generation(text, tuple(toks), tuple(lps), tuple(offsets))
    start = text.index("Rome")
    assert claim_token_logprobs(g, Claim("Rome is old.", (start, len(text)))) == lps[6:]
    # a character split over tokens keeps the space token with its first bytes
    split = Generation(" 東京", (" ", "東", "京"), (-1.0, -2.0, -3.0), ((0, 1), (1, 2), (2, 3)))
    assert claim_token_logprobs(split, Claim("東京", (1, 3))) == [-1.0, -2.0, -3.0]
