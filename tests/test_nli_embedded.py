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


#: A passage of four paragraphs about Lyon (written for this test): the statements in its
#: last paragraph, read inside the whole passage, lost to its other chunks.
LYON = (
    "Lyon is a city in east-central France, at the confluence of the rivers Rhône and Saône. "
    "It is the third-largest city of the country, with about 520,000 residents in the city "
    "proper and more than two million in its metropolitan area. The city is known for its "
    "cuisine, its silk industry in past centuries and its historical and architectural "
    "landmarks; part of the city is registered as a UNESCO World Heritage Site.\n"
    "The old town lies at the foot of the Fourvière hill, where a basilica overlooks the city. "
    "Traboules, covered passageways through buildings, link the streets of the old town and "
    "of the Croix-Rousse hill. The Presqu'île, between the two rivers, holds the Place "
    "Bellecour, one of the largest open squares in Europe, and the city hall.\n"
    "The economy of the city rests on banking, chemical and pharmaceutical industries, "
    "software and video games, and biotechnology. The headquarters of Interpol are in the "
    "city, as are those of several large companies. Lyon Part-Dieu is one of the busiest "
    "railway stations of the country, and the Saint-Exupéry airport serves the region.\n"
    "The football club Olympique Lyonnais plays in a stadium of 59,000 seats in Décines-"
    "Charpieu, east of the city. The Festival of Lights is held each year in December, when "
    "residents put candles on their windowsills. The city hosted the Summit of the G7 in "
    "1996 and the final of the Europa League in 2018.")


def test_embedded_verifier_reads_a_text_without_full_stops_in_pieces() -> None:
    # the whole text was one evidence unit, read by the NLI model in all its chunks
    import re

    from verifier import Status, Verifier

    text = ", ".join([re.sub(r"\.\s+", ", ", LYON.replace("\n", " ")).rstrip(".")] * 3)
    assert len(text) > 4000 and ". " not in text
    draft = "Interpol has its headquarters in Lyon. The Festival of Lights is held in December."
    rep = Verifier().verify(draft, evidence=[text])
    assert [v.status for v in rep.verdicts] == [Status.SUPPORTED] * 2
    assert all(0 < len(e.content) <= 400 for v in rep.verdicts for e in v.evidence)


def test_embedded_verifier_reads_evidence_sentences_with_their_neighbours() -> None:
    # the NLI model read each sentence inside the whole passage, and the chunk that most
    # contradicts a claim, however unrelated, outweighed the one that states it
    from verifier import Status, Verifier

    draft = ("Lyon hosted the final of the Europa League in 2018. Lyon hosted the Summit of the "
             "G7 in 1996.")
    windows = Verifier().verify(draft, evidence=[LYON])
    assert [v.status for v in windows.verdicts] == [Status.SUPPORTED] * 2
    whole = Verifier(context_chars=None).verify(draft, evidence=[LYON])  # the reading before
    assert Status.CONTRADICTORY in [v.status for v in whole.verdicts]
