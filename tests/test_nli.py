from __future__ import annotations

import numpy as np
import pytest
from conftest import make_tiny_classifier

from verifier.errors import LabelMappingError
from verifier.nli import (
    NLIDetector,
    aggregate_chunks,
    map_labels,
    supports_decision,
    to_three_columns,
)
from verifier.text import sentence_spans

PAIRS = [
    ("paris is the capital of france .", "paris is in france ."),
    ("the river seine is in paris .", "london is big ."),
    ("a man and a dog .", "the dog is red ."),
    ("berlin is in germany . it has a million people .", "berlin is small ."),
]


def test_nli_map_labels_reads_order_and_synonyms() -> None:
    lm = map_labels({0: "CONTRADICTION", 1: "Entailment", 2: "neutral"}, 3)
    assert lm.kind == "3class"
    assert lm.index == {"contradiction": 0, "entailment": 1, "neutral": 2}
    assert map_labels({"0": "supports", "1": "refutes"}, 2).kind == "2class-refutes"
    assert map_labels({0: "not_entailment", 1: "entailment"}, 2).kind == "2class-entailment"
    assert map_labels(None, 1).kind == "1logit"


@pytest.mark.parametrize("labels", [{0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"},
                                    {0: "entailment", 1: "entailment", 2: "neutral"},
                                    {0: "entailment", 1: "neutral"}])
def test_nli_map_labels_rejects_unmappable(labels: dict) -> None:
    with pytest.raises(LabelMappingError, match="cannot map"):
        map_labels(labels, len(labels))


def test_nli_two_class_rules_fill_columns() -> None:
    logits = np.array([[2.0, 0.0]])
    ent = to_three_columns(logits, map_labels({0: "entailment", 1: "not_entailment"}, 2))
    assert ent[0, 2] == 0 and ent[0, 1] > 0 and np.isclose(ent.sum(), 1)
    ref = to_three_columns(logits, map_labels({0: "supported", 1: "refuted"}, 2))
    assert ref[0, 1] == 0 and ref[0, 0] > ref[0, 2]
    one = to_three_columns(np.array([[0.0]]), map_labels(None, 1))
    assert np.allclose(one, [[0.5, 0.5, 0.0]])


def test_nli_permuted_id2label_gives_same_columns(tmp_path, tiny_nli_model) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification

    base = NLIDetector(str(tiny_nli_model), dtype="float32").predict(PAIRS)
    # Same weights, classifier rows permuted and id2label permuted to match.
    perm = [2, 0, 1]
    model = AutoModelForSequenceClassification.from_pretrained(tiny_nli_model)
    names = [model.config.id2label[i] for i in perm]
    with torch.no_grad():
        model.classifier.weight.copy_(model.classifier.weight[perm])
        model.classifier.bias.copy_(model.classifier.bias[perm])
    model.config.id2label = dict(enumerate(names))
    model.config.label2id = {n: i for i, n in enumerate(names)}
    out = tmp_path / "perm"
    model.save_pretrained(out)
    from transformers import AutoTokenizer

    AutoTokenizer.from_pretrained(tiny_nli_model).save_pretrained(out)
    again = NLIDetector(str(out), dtype="float32").predict(PAIRS)
    np.testing.assert_allclose(base, again, atol=1e-5)


def test_nli_predict_shape_order_and_sum(tiny_nli_model) -> None:
    det = NLIDetector(str(tiny_nli_model), dtype="float32", batch_size=2)
    probs = det.predict(PAIRS)
    assert probs.shape == (4, 3) and probs.dtype == np.float32
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-5)
    one_by_one = np.stack([det.predict([p])[0] for p in PAIRS])
    np.testing.assert_allclose(probs, one_by_one, atol=1e-5)


def test_nli_empty_input_and_bad_pairs(tiny_nli_model) -> None:
    det = NLIDetector(str(tiny_nli_model))
    assert det.predict([]).shape == (0, 3)
    with pytest.raises(ValueError, match=r"pairs\[1\] has an empty hypothesis"):
        det.predict([("a b", "c"), ("a", "  ")])
    with pytest.raises(ValueError, match=r"pairs\[0\] has an empty premise"):
        det.predict([("", "c")])
    with pytest.raises(TypeError, match=r"pairs\[0\]"):
        det.predict([("a", 3)])  # type: ignore[list-item]


def test_nli_constructor_validates_arguments() -> None:
    with pytest.raises(ValueError, match="batch_size must be a positive int, got 0"):
        NLIDetector(batch_size=0)
    with pytest.raises(ValueError, match="dtype must be"):
        NLIDetector(dtype="int8")


def test_nli_long_premise_is_chunked_and_covered(tmp_path) -> None:
    folder = make_tiny_classifier(tmp_path / "m", {0: "entailment", 1: "neutral",
                                                  2: "contradiction"}, max_position_embeddings=64)
    det = NLIDetector(str(folder), max_length=64, dtype="float32")
    sentences = [f"the city {w} is in france and it has a river ." for w in
                 ["paris", "london", "berlin", "north", "south", "east", "west", "old", "new"]]
    premise = " ".join(sentences) + " " + "water " * 80  # the last "sentence" is over the window
    scores = det.predict_chunks([(premise, "paris is in france .")])[0]
    spans = scores.chunk_spans
    assert len(spans) > 2
    assert spans[0][0] == 0 and spans[-1][1] == len(premise)
    for (_s1, e1), (s2, _e2) in zip(spans, spans[1:], strict=False):
        assert s2 <= e1  # contiguous or overlapping: no text dropped
    assert scores.chunk_probabilities.shape == (len(spans), 3)
    np.testing.assert_allclose(scores.probabilities,
                               scores.chunk_probabilities[scores.best_chunk])
    row = det.predict([(premise, "paris is in france .")])[0]
    np.testing.assert_allclose(row, scores.probabilities, atol=1e-6)


def test_nli_aggregate_rule() -> None:
    chunks = np.array([[0.1, 0.8, 0.1], [0.7, 0.2, 0.1], [0.1, 0.3, 0.6]], dtype=np.float32)
    np.testing.assert_allclose(aggregate_chunks(chunks), chunks[1])
    chunks[2] = [0.05, 0.05, 0.9]
    np.testing.assert_allclose(aggregate_chunks(chunks), chunks[2])


def test_nli_sentence_spans_tile_text() -> None:
    text = "One. Two! Three?\n\nFour"
    spans = sentence_spans(text)
    assert "".join(text[s:e] for s, e in spans) == text
    assert len(spans) == 4


def test_nli_supports_decision() -> None:
    assert supports_decision(np.array([[0.4, 0.5, 0.1], [0.1, 0.3, 0.6]])).tolist() == [True, False]


def test_nli_bf16_close_to_fp32_on_tiny_model(tiny_nli_model) -> None:
    a = NLIDetector(str(tiny_nli_model), dtype="float32").predict(PAIRS)
    b = NLIDetector(str(tiny_nli_model), dtype="bfloat16").predict(PAIRS)
    np.testing.assert_allclose(a, b, atol=0.03)


def test_nli_to_dict_round_trip() -> None:
    from verifier.registry import from_config

    det = NLIDetector(batch_size=8, max_length=128)
    again = from_config(det.to_dict())
    assert isinstance(again, NLIDetector) and again.to_dict() == det.to_dict()


@pytest.mark.slow
def test_nli_embedded_model_offline_accuracy_and_bf16_agreement() -> None:
    from verifier.datasets import SUPPORTS, load_preset

    ex = load_preset("fever")[::67][:200]
    pairs = [(e.evidence_text, e.claim) for e in ex]
    gold = np.array([e.label == SUPPORTS for e in ex])
    bf16 = NLIDetector(dtype="bfloat16").predict(pairs)
    assert (supports_decision(bf16) == gold).mean() > 0.72
    fp32 = NLIDetector(dtype="float32").predict(pairs[:50])
    assert np.abs(fp32 - bf16[:50]).max() < 0.1
    assert (supports_decision(fp32) == supports_decision(bf16[:50])).mean() >= 0.96
