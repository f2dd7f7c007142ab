from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import make_tiny_classifier

from verifier.nli import ChunkScores, NLIDetector, plan_chunks
from verifier.text import sentence_spans

NLI3 = {0: "entailment", 1: "neutral", 2: "contradiction"}
HYP = "paris is in france ."


def _words(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in re.finditer(r"\S+", text)]


def _assert_covers(spans: list[tuple[int, int]] | tuple[tuple[int, int], ...], n: int) -> None:
    assert spans[0][0] == 0 and spans[-1][1] == n
    for (s1, e1), (s2, e2) in zip(spans, spans[1:], strict=False):
        assert s1 < s2 <= e1 < e2  # moving forward, overlapping or touching: nothing dropped


@pytest.mark.parametrize("seed", range(6))
def test_nli_plan_chunks_covers_text_within_budget(seed: int) -> None:
    rng = random.Random(seed)
    sentences = [" ".join("w" * rng.randint(1, 6) for _ in range(rng.choice([1, 3, 8, 30])))
                 + rng.choice([". ", "! ", ".\n\n"]) for _ in range(rng.randint(1, 25))]
    text = "".join(sentences)
    offsets = _words(text)
    budget = rng.choice([4, 10, 25])
    plan = plan_chunks(offsets, sentence_spans(text), budget)
    _assert_covers([s for s, _ in plan], len(text))
    for (cs, ce), (t0, t1) in plan:
        assert 0 < t1 - t0 <= budget
        # the chunk's tokens are exactly the words inside its span
        assert offsets[t0:t1] == [o for o in offsets if cs <= o[0] < ce]
    tokens = [t for _, rng_ in plan for t in range(*rng_)]
    assert sorted(set(tokens)) == list(range(len(offsets)))  # every token scored


def test_nli_plan_chunks_overlaps_one_sentence_and_splits_long_ones() -> None:
    text = "aa bb. cc dd. ee ff. " + "x " * 9 + "end."
    plan = plan_chunks(_words(text), sentence_spans(text), 4)
    spans = [s for s, _ in plan]
    assert spans[0] == (0, 14) and spans[1] == (7, 21)  # "cc dd." is shared
    long = [(s, e) for s, e in spans if "x" in text[s:e]]
    assert len(long) >= 3  # the 10-token sentence was cut on token boundaries
    for s, e in long:  # pieces start and end on token boundaries
        assert text[s] != " " and (e == len(text) or text[e] != " ")
    _assert_covers(spans, len(text))
    with pytest.raises(ValueError, match="budget must be >= 1, got 0"):
        plan_chunks(_words(text), sentence_spans(text), 0)


@pytest.fixture(scope="module")
def short_window_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_tiny_classifier(tmp_path_factory.mktemp("nli-64"), NLI3,
                                max_position_embeddings=64)


def test_nli_long_premise_is_chunked_and_fully_covered(short_window_model: Path) -> None:
    from transformers import AutoTokenizer

    det = NLIDetector(str(short_window_model), max_length=64, dtype="float32")
    sentences = [f"the city {w} is in france and it has a river ." for w in
                 ["paris", "london", "berlin", "north", "south", "east", "west", "old", "new"]]
    premise = " ".join(sentences) + " " + "water " * 80  # the last "sentence" is over the window
    scores = det.predict_chunks([(premise, HYP)])[0]
    assert isinstance(scores, ChunkScores)
    spans = scores.chunk_spans
    assert len(spans) > 3
    _assert_covers(spans, len(premise))
    # no character of the premise is left out of every chunk
    covered = np.zeros(len(premise), bool)
    for s, e in spans:
        covered[s:e] = True
    assert covered.all()
    # each chunk fits the window next to the hypothesis, special tokens included
    tok = AutoTokenizer.from_pretrained(short_window_model)
    for s, e in spans:
        assert len(tok(premise[s:e], HYP)["input_ids"]) <= 64
    assert scores.chunk_probabilities.shape == (len(spans), 3)
    np.testing.assert_allclose(scores.chunk_probabilities.sum(1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(scores.probabilities,
                                  scores.chunk_probabilities[scores.best_chunk])
    np.testing.assert_allclose(det.predict([(premise, HYP)])[0], scores.probabilities,
                               atol=1e-6)
    # a chunk scores as its own text would: chunks are not truncated views
    alone = det.predict([(premise[s:e], HYP) for s, e in spans])
    np.testing.assert_allclose(alone, scores.chunk_probabilities, atol=1e-4)
    assert scores.to_dict()["chunk_spans"][0] == [0, spans[0][1]]


def test_nli_short_premise_is_one_chunk(short_window_model: Path) -> None:
    det = NLIDetector(str(short_window_model), max_length=64)
    scores = det.predict_chunks([("paris is old .", HYP)])[0]
    assert scores.chunk_spans == ((0, len("paris is old .")),) and scores.best_chunk == 0


def test_nli_chunk_scores_are_validated_and_read_only() -> None:
    s = ChunkScores(np.array([0.6, 0.3, 0.1]), ((0, 5),), np.array([[0.6, 0.3, 0.1]]), 0)
    assert s.probabilities.dtype == np.float32
    with pytest.raises(ValueError, match="read-only"):
        s.probabilities[0] = 1.0
    with pytest.raises(ValueError, match="chunk_probabilities must have shape"):
        ChunkScores(np.zeros(3), ((0, 5), (3, 9)), np.zeros((1, 3)), 0)
    with pytest.raises(ValueError, match="best_chunk must index a chunk, got 2"):
        ChunkScores(np.zeros(3), ((0, 5),), np.zeros((1, 3)), 2)


def _token_count(folder: Path, text: str) -> int:
    from transformers import AutoTokenizer

    return len(AutoTokenizer.from_pretrained(folder)(text, add_special_tokens=False)["input_ids"])


def test_nli_chunk_tokens_caps_chunks_below_the_window(short_window_model: Path) -> None:
    premise = " ".join(f"the city {w} is in france ." for w in
                       ["paris", "london", "berlin", "north", "south", "east"])
    whole = NLIDetector(str(short_window_model), max_length=64, dtype="float32")
    assert whole.predict_chunks([(premise, HYP)])[0].chunk_spans == ((0, len(premise)),)
    assert whole.resolved_chunk_tokens == 64  # no cap: the window
    det = NLIDetector(str(short_window_model), max_length=64, chunk_tokens=16,
                      dtype="float32")
    assert det.resolved_chunk_tokens == 16
    spans = det.predict_chunks([(premise, HYP)])[0].chunk_spans
    assert len(spans) >= 3
    _assert_covers(spans, len(premise))
    assert all(_token_count(short_window_model, premise[s:e]) <= 16 for s, e in spans)
    # a premise within the cap stays one chunk
    assert det.predict_chunks([("paris is old .", HYP)])[0].chunk_spans == ((0, 14),)
    assert det.to_dict()["init_parameters"]["chunk_tokens"] == 16


def test_nli_chunk_tokens_read_from_config_and_validated(tmp_path: Path) -> None:
    import json

    from verifier.errors import ModelLoadError

    folder = make_tiny_classifier(tmp_path / "m", NLI3, max_position_embeddings=64)
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**cfg, "chunk_tokens": 20}))
    assert NLIDetector(str(folder)).resolved_chunk_tokens == 20
    assert NLIDetector(str(folder), chunk_tokens=1000).resolved_chunk_tokens == 64
    assert NLIDetector(str(folder), chunk_tokens="window").resolved_chunk_tokens == 64
    (folder / "config.json").write_text(json.dumps({**cfg, "chunk_tokens": "big"}))
    with pytest.raises(ModelLoadError, match="chunk_tokens must be an int >= 16, got 'big'"):
        NLIDetector(str(folder)).warm_up()
    for bad in (0, 15, 2.5, True, "64"):
        with pytest.raises(ValueError, match=f"chunk_tokens must be None, 'window' or an int "
                           f">= 16, got {re.escape(repr(bad))}"):
            NLIDetector(chunk_tokens=bad)


def test_nli_chunks_place_byte_level_tokens_by_their_word() -> None:
    from verifier.nli import _word_starts

    text = "aa bb. cc dd. ee ff."
    # byte-level BPE offsets (RoBERTa, DeBERTa v1): a token after a space starts at the space
    offsets = [(0, 2), (2, 5), (5, 6), (6, 9), (9, 12), (12, 13), (13, 16), (16, 19), (19, 20)]
    plan = plan_chunks(_word_starts(offsets, text), sentence_spans(text), 3)
    for (cs, ce), (t0, t1) in plan:
        scored = text[offsets[t0][0]:offsets[t1 - 1][1]].strip()
        assert scored == text[cs:ce].strip()  # what is scored is the span reported
    # without the fix the first word of each sentence went to the chunk before
    plan_raw = plan_chunks(offsets, sentence_spans(text), 3)
    assert any(text[offsets[t0][0]:offsets[t1 - 1][1]].strip() != text[cs:ce].strip()
               for (cs, ce), (t0, t1) in plan_raw)


@pytest.mark.parametrize("cls_name", ["RobertaForSequenceClassification",
                                      "RobertaPreLayerNormForSequenceClassification"])
def test_nli_window_leaves_out_the_positions_before_the_padding_index(cls_name) -> None:
    import transformers

    cls = getattr(transformers, cls_name)
    config = cls.config_class(vocab_size=50, hidden_size=8, num_hidden_layers=1,
                              num_attention_heads=2, intermediate_size=16,
                              max_position_embeddings=66, pad_token_id=1, num_labels=3)
    model = cls(config)
    assert NLIDetector(max_length=512)._window_of(config, model) == 64
    assert NLIDetector(max_length=32)._window_of(config, model) == 32


def test_nli_chunk_and_sentence_scores_round_trip_and_reject_bad_values() -> None:
    from verifier.nli import SentenceScores

    c = ChunkScores(np.array([0.7, 0.2, 0.1]), ((0, 9), (5, 12)),
                    np.array([[0.7, 0.2, 0.1], [0.3, 0.3, 0.4]]), 0)
    again = ChunkScores.from_dict(c.to_dict())
    assert again.to_dict() == c.to_dict() and isinstance(again.best_chunk, int)
    s = SentenceScores(c.probabilities, ((0, 12),), (c,))
    assert SentenceScores.from_dict(s.to_dict()).to_dict() == s.to_dict()
    rows = np.array([[0.7, 0.2, 0.1]])
    with pytest.raises(ValueError, match="best_chunk must index a chunk, got 0.5"):
        ChunkScores(rows[0], ((0, 9),), rows, 0.5)
    with pytest.raises(ValueError, match="must be finite probabilities"):
        ChunkScores(np.array([np.nan, 0.2, 0.1]), ((0, 9),), rows, 0)
    with pytest.raises(ValueError, match=r"chunk_spans\[0\] must satisfy 0 <= start <= end"):
        ChunkScores(rows[0], ((9, -3),), rows, 0)
    with pytest.raises(TypeError, match=r"chunk_spans\[0\] offsets must be ints"):
        ChunkScores(rows[0], ((0.5, 2.0),), rows, 0)  # not silently truncated by int()
    with pytest.raises(TypeError, match="sentences must hold ChunkScores, got str"):
        SentenceScores(rows[0], ((0, 1),), ("x",))


def test_nli_plan_chunks_cuts_a_long_sentence_before_words_and_reads_every_cut_whole() -> None:
    # every word is two tokens ("ab" "cd"): a cut must never fall between them
    text = " ".join(f"w{i:02d}x" for i in range(20)) + "."
    offsets = []
    for m in re.finditer(r"\S+", text):
        mid = m.start() + 2
        offsets += [(m.start(), mid), (mid, m.end())]
    budget = 6
    plan = plan_chunks(offsets, sentence_spans(text), budget)
    _assert_covers([s for s, _ in plan], len(text))
    for (cs, ce), (t0, t1) in plan:
        assert t1 - t0 <= budget
        assert cs == 0 or text[cs - 1] == " "  # starts before a word
        assert ce == len(text) or text[ce - 1] == " "  # ends after a word (and its space)
    # each chunk after the first starts inside the one before: no cut is read only split
    for (_, (a0, a1)), (_, (b0, b1)) in zip(plan, plan[1:], strict=False):
        assert a0 < b0 < a1 < b1
