"""Hypotheses of several sentences scored sentence by sentence (``hypothesis_sentences``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import make_tiny_classifier

from verifier.errors import ModelLoadError
from verifier.nli import (
    ChunkScores,
    NLIDetector,
    SentenceScores,
    aggregate_sentences,
    hypothesis_sentences,
)

NLI3 = {0: "entailment", 1: "neutral", 2: "contradiction"}
PREMISE = "berlin is in germany . it has a million people . the city is old and big ."
SUMMARY = "berlin is in germany . the city is small . it has no people ."


def _with_config(folder: Path, **keys: object) -> Path:
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**cfg, **keys}))
    return folder


@pytest.mark.parametrize(("text", "expected"), [
    ("One sentence without a stop", ["One sentence without a stop"]),
    ("The U.S. Army left the city. It rained all day.",
     ["The U.S. Army left the city.", "It rained all day."]),
    ("No. The vote failed in the end.", ["No. The vote failed in the end."]),
    ("The vote failed in the end. Not so.", ["The vote failed in the end. Not so."]),
    ("  First claim here.\n\nSecond claim here!  ", ["First claim here.", "Second claim here!"]),
    ("Yes. No.", ["Yes. No."]),
    ("Miracle at St. Anna is set in Italy.", ["Miracle at St. Anna is set in Italy."]),
    ("In 1930, Albert S. Ruddy is born.", ["In 1930, Albert S. Ruddy is born."]),
    ("West Ham United F.C. is not a football club.",
     ["West Ham United F.C. is not a football club."]),
    ("Juventus F.C . has long worn a striped home uniform .",
     ["Juventus F.C . has long worn a striped home uniform ."]),
    ("the club was founded in 1895 . it is old and big .",
     ["the club was founded in 1895 .", "it is old and big ."]),
    ("the u.s. army left st. louis in may . it rained all day .",
     ["the u.s. army left st. louis in may .", "it rained all day ."]),
    ("The club was founded in 1895. 40 players joined it.",
     ["The club was founded in 1895.", "40 players joined it."]),
    # "no." ends a sentence unless a number follows ("No. 5")
    ("The court said no. The law was passed in 1990.",
     ["The court said no.", "The law was passed in 1990."]),
    ("The song reached No. 5 in the charts. It sold well in May.",
     ["The song reached No. 5 in the charts.", "It sold well in May."]),
    # a closing curly quote after the full stop ends the sentence too
    ("He said “we won the cup.” The team left the city.",
     ["He said “we won the cup.”", "The team left the city."]),
])
def test_nli_hypothesis_sentences_join_short_pieces(text: str, expected: list[str]) -> None:
    spans = hypothesis_sentences(text)
    assert [text[s:e] for s, e in spans] == expected
    assert all(s < e for s, e in spans)
    assert all(e1 <= s2 for (_, e1), (s2, _) in zip(spans, spans[1:], strict=False))


def test_nli_aggregate_sentences_is_the_mean_row() -> None:
    rows = np.array([[0.9, 0.1, 0.0], [0.1, 0.2, 0.7], [0.5, 0.5, 0.0]], dtype=np.float32)
    out = aggregate_sentences(rows)
    assert out.dtype == np.float32 and out.shape == (3,)
    np.testing.assert_allclose(out, rows.mean(0), atol=1e-7)
    assert out.sum() == pytest.approx(1.0)
    for bad in (np.zeros((0, 3)), np.zeros(3), np.zeros((2, 2))):
        with pytest.raises(ValueError, match=r"sentence_probs must have shape \(m >= 1, 3\)"):
            aggregate_sentences(bad)


def test_nli_predict_sentences_scores_each_sentence(tiny_nli_model: Path) -> None:
    det = NLIDetector(str(tiny_nli_model), dtype="float32")
    pairs = [(PREMISE, SUMMARY), (PREMISE, "berlin is small .")]
    out = det.predict_sentences(pairs)
    assert [type(s) for s in out] == [SentenceScores, SentenceScores]
    multi, single = out
    sents = [SUMMARY[s:e] for s, e in multi.sentence_spans]
    assert sents == ["berlin is in germany .", "the city is small .", "it has no people ."]
    # each sentence scored on its own, as predict_chunks scores it; the row is their mean
    alone = det.predict_chunks([(PREMISE, s) for s in sents])
    for got, want in zip(multi.sentences, alone, strict=True):
        assert isinstance(got, ChunkScores)
        np.testing.assert_allclose(got.probabilities, want.probabilities, atol=1e-6)
    np.testing.assert_allclose(
        multi.probabilities, np.mean([a.probabilities for a in alone], axis=0), atol=1e-6)
    # a one-sentence hypothesis is scored as it is: the same row as predict_chunks
    assert single.sentence_spans == ((0, len("berlin is small .")),)
    np.testing.assert_allclose(single.probabilities,
                               det.predict_chunks([pairs[1]])[0].probabilities, atol=1e-7)
    assert json.loads(json.dumps(multi.to_dict()))["sentence_spans"][1] == [23, 42]


def _confident_classifier(folder: Path) -> Path:
    """A tiny checkpoint whose head is scaled up, so that its rows are far from uniform."""
    import torch
    from transformers import AutoModelForSequenceClassification

    make_tiny_classifier(folder, NLI3)
    model = AutoModelForSequenceClassification.from_pretrained(folder)
    with torch.no_grad():
        model.classifier.weight.mul_(200.0)
    model.save_pretrained(folder)
    return folder


def test_nli_predict_follows_hypothesis_sentences(tmp_path: Path) -> None:
    folder = _confident_classifier(tmp_path / "m")
    pairs = [(PREMISE, SUMMARY), (PREMISE, "berlin is small ."), (PREMISE, SUMMARY)]
    whole = np.stack([c.probabilities for c in NLIDetector(
        str(folder), dtype="float32").predict_chunks(pairs)])
    by_sentence = np.stack([s.probabilities for s in NLIDetector(
        str(folder), dtype="float32").predict_sentences(pairs)])
    assert np.abs(whole[0] - by_sentence[0]).max() > 1e-4  # the two readings differ
    off = NLIDetector(str(folder), dtype="float32")
    assert off.resolved_hypothesis_sentences is False  # no config key: off
    np.testing.assert_allclose(off.predict(pairs), whole, atol=1e-6)
    on = NLIDetector(str(folder), dtype="float32", hypothesis_sentences=True)
    np.testing.assert_allclose(on.predict(pairs), by_sentence, atol=1e-6)
    # the checkpoint's config.json recommends; the argument overrides it
    _with_config(folder, hypothesis_sentences=True)
    np.testing.assert_allclose(NLIDetector(str(folder), dtype="float32").predict(pairs),
                               by_sentence, atol=1e-6)
    forced_off = NLIDetector(str(folder), dtype="float32", hypothesis_sentences=False)
    np.testing.assert_allclose(forced_off.predict(pairs), whole, atol=1e-6)
    assert on.to_dict()["init_parameters"]["hypothesis_sentences"] is True


def test_nli_hypothesis_sentences_validated(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="hypothesis_sentences must be None or a bool, got 'yes'"):
        NLIDetector(hypothesis_sentences="yes")  # type: ignore[arg-type]
    folder = _with_config(make_tiny_classifier(tmp_path / "m", NLI3), hypothesis_sentences=1)
    with pytest.raises(ModelLoadError,
                       match="config's hypothesis_sentences must be true or false, got 1"):
        NLIDetector(str(folder)).warm_up()


def test_nli_sentence_errors_name_the_pair_and_sentence(tmp_path: Path) -> None:
    folder = make_tiny_classifier(tmp_path / "m", NLI3, max_position_embeddings=64)
    det = NLIDetector(str(folder), max_length=64, hypothesis_sentences=True)
    long_sentence = "the old city " * 20 + "."
    with pytest.raises(ValueError, match=r"^pairs\[1\] \(hypothesis sentence 1\) has a "
                                         r"hypothesis of \d+ tokens"):
        det.predict([(PREMISE, "berlin is small ."),
                     (PREMISE * 3, "berlin is in germany . the" + long_sentence)])
    with pytest.raises(ValueError, match=r"^pairs\[0\] has an empty hypothesis$"):
        det.predict([(PREMISE, " ")])
    assert det.predict([]).shape == (0, 3)
    assert det.predict_sentences([]) == []


def test_nli_sentence_scores_validated() -> None:
    c = ChunkScores(np.array([0.7, 0.2, 0.1]), ((0, 9),), np.array([[0.7, 0.2, 0.1]]), 0)
    with pytest.raises(ValueError, match=r"probabilities must have shape \(3,\)"):
        SentenceScores(np.zeros(2), ((0, 3),), (c,))
    with pytest.raises(ValueError, match="one ChunkScores per sentence span"):
        SentenceScores(c.probabilities, ((0, 3), (4, 8)), (c,))
    s = SentenceScores(c.probabilities, ((0, 3),), (c,))
    assert not s.probabilities.flags.writeable


def test_nli_predict_scores_are_the_scores_behind_predict(tiny_nli_model: Path) -> None:
    """predict_scores reads a hypothesis as predict does (sentence by sentence, or whole) and
    keeps the scores behind each row; no pairs load no model."""
    pairs = [("Paris is in France. It is big.", "Paris is in France. It has museums."),
             ("Berlin is in Germany.", "Berlin is big.")]
    for reads, kind in ((True, SentenceScores), (False, ChunkScores)):
        det = NLIDetector(str(tiny_nli_model), dtype="float32", hypothesis_sentences=reads)
        scores = det.predict_scores(pairs)
        assert [type(s) for s in scores] == [kind, kind]
        np.testing.assert_allclose(np.stack([s.probabilities for s in scores]),
                                   det.predict(pairs), atol=1e-6)
    idle = NLIDetector("/nonexistent/model")
    assert list(idle.predict_scores([])) == []
    assert idle.predict([]).shape == (0, 3)
