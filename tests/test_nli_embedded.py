"""The embedded NLI model (``models/nli-minilm-l6``): offline, bf16 vs fp32, accuracy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from verifier.nli import NLIDetector, supports_decision

MODEL = Path(__file__).resolve().parents[1] / "models" / "nli-minilm-l6"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (MODEL / "config.json").is_file(),
                       reason=f"embedded NLI weights not present ({MODEL}/config.json missing)"),
]


@pytest.fixture(scope="module")
def fever_sample() -> tuple[list[tuple[str, str]], np.ndarray]:
    from verifier.datasets import SUPPORTS, load_preset

    try:
        examples = load_preset("fever", "eval")  # never pairs the model was trained on
    except FileNotFoundError as exc:  # pragma: no cover - data lives outside the repository
        pytest.skip(f"FEVER data not available: {exc}")
    picked = examples[:: max(1, len(examples) // 200)][:200]  # evenly spaced, both labels
    return ([(e.evidence_text, e.claim) for e in picked],
            np.array([e.label == SUPPORTS for e in picked]))


@pytest.fixture(scope="module")
def bf16_probs(fever_sample: tuple[list[tuple[str, str]], np.ndarray]) -> np.ndarray:
    det = NLIDetector(dtype="bfloat16")  # None: the embedded model, loaded from disk only
    return det.predict(fever_sample[0])


def test_nli_embedded_loads_offline_and_beats_chance(
    fever_sample: tuple[list[tuple[str, str]], np.ndarray], bf16_probs: np.ndarray
) -> None:
    # conftest's autouse fixture blocks every non-loopback socket during this test.
    gold = fever_sample[1]
    assert 0.3 < gold.mean() < 0.7  # a balanced enough sample: chance is ~0.5
    accuracy = float((supports_decision(bf16_probs) == gold).mean())
    assert accuracy > 0.75, f"SUPPORTS-vs-REFUTES accuracy {accuracy:.3f} on 200 FEVER pairs"


def test_nli_embedded_bf16_agrees_with_fp32(
    fever_sample: tuple[list[tuple[str, str]], np.ndarray], bf16_probs: np.ndarray
) -> None:
    # 50 pairs of ordinary length (fp32 is slow on CPU; long premises are tested elsewhere)
    rows = [i for i, (p, _) in enumerate(fever_sample[0]) if len(p) < 600][:50]
    fp32 = NLIDetector(dtype="float32").predict([fever_sample[0][i] for i in rows])
    diff = np.abs(fp32 - bf16_probs[rows])
    assert diff.mean() < 0.02 and diff.max() < 0.15, (diff.mean(), diff.max())
    agree = (fp32.argmax(1) == bf16_probs[rows].argmax(1)).mean()
    assert agree >= 0.94, f"bf16 and fp32 agree on {agree:.0%} of 50 pairs"


def test_nli_embedded_reads_summaries_sentence_by_sentence() -> None:
    det = NLIDetector()
    assert det.resolved_hypothesis_sentences is True  # the embedded config.json says so
    premise = ("The Eiffel Tower was completed in 1889 for the World's Fair. It is 330 metres "
               "tall and stands in Paris.")
    good = "The Eiffel Tower was completed in 1889. It stands in Paris."
    mixed = "The Eiffel Tower was completed in 1889. It stands in London."
    scores = det.predict_sentences([(premise, good), (premise, mixed)])
    assert [len(s.sentence_spans) for s in scores] == [2, 2]
    # the mean rule: one sentence of two contradicted halves the entailment
    assert scores[0].probabilities[0] > 0.8
    assert scores[1].probabilities[0] < scores[0].probabilities[0] - 0.3
    assert scores[1].probabilities[2] > 0.3
    # the mixed summary's first sentence is entailed, its second is not
    first, second = scores[1].sentences
    assert first.probabilities[0] > 0.5 > second.probabilities[0]
    np.testing.assert_allclose(det.predict([(premise, mixed)])[0], scores[1].probabilities,
                               atol=1e-6)
