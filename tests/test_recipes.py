"""The training recipes in ``models/recipes`` (scripts, not an import package)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import make_tiny_classifier

RECIPES = Path(__file__).resolve().parents[1] / "models" / "recipes"


def _recipe(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"recipe_{name}", RECIPES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _train_tiny_bf16(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str
                     ) -> tuple[dict, dict]:
    """A tiny checkpoint stored in bf16, trained one epoch at lr 1e-5 by ``train_nli.py
    train`` (``extra`` flags added): its tensors before and after."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForSequenceClassification

    base = make_tiny_classifier(tmp_path / "base", {0: "entailment", 1: "neutral",
                                                    2: "contradiction"})
    AutoModelForSequenceClassification.from_pretrained(base).to(torch.bfloat16).save_pretrained(
        base)
    before = load_file(base / "model.safetensors")
    assert before["classifier.weight"].dtype == torch.bfloat16
    rows = [("the dog is in the city", "a dog is in a city", "entailment"),
            ("the cat was born in paris", "the cat was born in london", "contradiction"),
            ("the man has a red car", "the man is old", "neutral"),
            ("paris is the capital of france", "paris is a city", "entailment")] * 2
    train = tmp_path / "train.jsonl"
    train.write_text("".join(json.dumps({"premise": p, "hypothesis": h, "label": lab}) + "\n"
                             for p, h, lab in rows))
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", [
        "train_nli.py", "train", "--base", str(base), "--train", str(train), "--out", str(out),
        "--epochs", "1", "--lr", "1e-5", "--batch-size", "4", "--warmup", "0",
        "--save-dtype", "float32", "--device", "cpu", "--log-every", "1000", *extra])
    _recipe("train_nli").main()
    return before, load_file(out / "model.safetensors")


def _share_changed(before: dict, after: dict, prefix: str) -> float:
    changed = total = 0
    for name, w in before.items():
        if name in after and name.startswith(prefix):
            changed += int((after[name].float() != w.float()).sum())
            total += w.numel()
    assert total > 0
    return changed / total


def test_train_nli_trains_fp32_master_weights_from_a_bf16_checkpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkpoint stored in bf16 (as the recipe saves every stage) must still be trained
    in fp32: AdamW steps of lr 1e-5 on bf16 weights of magnitude ~0.02 round to nothing."""
    before, after = _train_tiny_bf16(tmp_path, monkeypatch)
    # bf16 master weights left 18 % of these changed; fp32 ones change all but a few
    assert _share_changed(before, after, "bert.encoder.") > 0.9
    assert _share_changed(before, after, "bert.embeddings.word_embeddings.") > 0


def test_train_nli_freeze_embeddings_keeps_the_word_embeddings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--freeze-embeddings (the CPU recipe of v0.4) trains everything but the word
    embeddings, which stay as the base stored them."""
    before, after = _train_tiny_bf16(tmp_path, monkeypatch, "--freeze-embeddings")
    assert _share_changed(before, after, "bert.embeddings.word_embeddings.") == 0
    assert _share_changed(before, after, "bert.encoder.") > 0.9
    assert _share_changed(before, after, "bert.embeddings.position_embeddings.") > 0


def test_mix_weights_interpolates_every_float_tensor(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from safetensors.torch import load_file

    labels = {0: "entailment", 1: "neutral", 2: "contradiction"}
    a = make_tiny_classifier(tmp_path / "a", labels, seed=1)
    b = make_tiny_classifier(tmp_path / "b", labels, seed=2)
    out = tmp_path / "mix"
    monkeypatch.setattr(sys, "argv", ["mix_weights.py", "--a", str(a), "--b", str(b),
                                      "--alpha", "0.25", "--out", str(out)])
    _recipe("mix_weights").main()
    wa, wb, wm = (load_file(d / "model.safetensors") for d in (a, b, out))
    assert wm.keys() == wb.keys()
    for k, w in wm.items():
        if w.is_floating_point():
            assert (w - (0.75 * wa[k] + 0.25 * wb[k])).abs().max() < 1e-6, k
    assert (out / "config.json").read_text() == (b / "config.json").read_text()
    monkeypatch.setattr(sys, "argv", ["mix_weights.py", "--a", str(a), "--b", str(b),
                                      "--alpha", "1.5", "--out", str(out)])
    with pytest.raises(SystemExit):
        _recipe("mix_weights").main()


def _interaction_rows(n: int = 900) -> tuple:
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (n, 3))
    groups = np.where(np.arange(n) % 2, "a", "b").astype(object)
    return X, (X[:, 0] > 0) == (X[:, 1] > 0), groups, np.arange(n) % 5


def test_train_meta_chooses_the_stage_two_estimator_by_cross_validation() -> None:
    import numpy as np

    tm = _recipe("train_meta")
    X, inter, groups, folds = _interaction_rows()
    # stage one is linear (feature 2); stage two is an interaction of features 0 and 1,
    # which a logistic regression cannot draw and boosted trees can
    y = np.where(inter, "Contradictory", "Insufficient_Info").astype(object)
    y[X[:, 2] > 0.4] = "Supported"
    chosen, record = tm.choose_estimator(
        "refute", ["x0", "x1", "x2"], X, y, groups, folds, "none", np.ones(len(y), bool),
        {"C": 0.1, "calibration": "sigmoid", "cv": 3})
    cv = record["cv_macro_f1"]
    assert chosen == "boosting" == record["chosen"]
    assert cv["boosting"]["mean"] > cv["logistic"]["mean"] + 10
    assert record["cv_lead"] > 10 and len(record["cv_lead_per_fold"]) == 5


def test_train_meta_chooses_the_stage_one_estimator_by_cross_validation() -> None:
    import numpy as np

    tm = _recipe("train_meta")
    X, inter, groups, folds = _interaction_rows()
    params = {"C": 0.1, "calibration": "sigmoid", "cv": 3, "refute_estimator": "logistic"}
    # Supported is the interaction; the rest splits on feature 2 (linear)
    y = np.where(X[:, 2] > 0, "Contradictory", "Insufficient_Info").astype(object)
    y[inter] = "Supported"
    chosen, record = tm.choose_estimator("support", ["x0", "x1", "x2"], X, y, groups, folds,
                                         "none", np.ones(len(y), bool), params)
    assert chosen == "boosting" == record["chosen"]
    assert record["cv_macro_f1"]["boosting"]["mean"] > \
        record["cv_macro_f1"]["logistic"]["mean"] + 10
    # Supported linear in feature 2: the tie rule or the regression's fit keeps logistic
    y = np.where(inter, "Contradictory", "Insufficient_Info").astype(object)
    y[X[:, 2] > 0.4] = "Supported"
    _, record = tm.choose_estimator("support", ["x0", "x1", "x2"], X, y, groups, folds,
                                    "none", np.ones(len(y), bool), params)
    assert abs(record["cv_lead"]) < 5
    with pytest.raises(ValueError, match="stage must be one of"):
        tm.choose_estimator("both", ["x0", "x1", "x2"], X, y, groups, folds, "none",
                            np.ones(len(y), bool), params)


def test_train_nli_feeds_the_segment_ids_the_detector_feeds(tmp_path: Path) -> None:
    """Training batches carry the tokenizer's token_type_ids (hypothesis = segment 1), as
    NLIDetector passes them at inference; --no-token-types leaves them out (all segment 0,
    the runs up to NLI v0.3)."""
    import argparse

    import torch
    from transformers import AutoTokenizer

    tn = _recipe("train_nli")
    base = make_tiny_classifier(tmp_path / "base", {0: "entailment", 1: "neutral",
                                                    2: "contradiction"})
    tok = AutoTokenizer.from_pretrained(base)
    prem, hyp = ["the dog is in the city", "a cat"], ["a dog is outside", "the cat was born"]
    enc = tn.tokenize(tok, prem, hyp, 64)
    batch = tn.collate(tok, enc, "cpu", tn.uses_token_types(tok, argparse.Namespace(
        token_types=True)))
    for i, (p, h) in enumerate(zip(prem, hyp, strict=True)):
        ref = tok(p, h)
        n = len(ref["input_ids"])
        assert batch["input_ids"][i, :n].tolist() == ref["input_ids"]
        assert batch["token_type_ids"][i, :n].tolist() == ref["token_type_ids"]
        assert 1 in ref["token_type_ids"]  # the hypothesis is segment 1
        assert int(batch["attention_mask"][i].sum()) == n
    assert torch.all(batch["token_type_ids"][batch["attention_mask"] == 0] == 0)
    off = tn.collate(tok, enc, "cpu", tn.uses_token_types(tok, argparse.Namespace(
        token_types=False)))
    assert "token_type_ids" not in off
    assert torch.equal(off["input_ids"], batch["input_ids"])


def test_unrelated_pairs_take_no_sentence_about_the_claim() -> None:
    import random

    from verifier.datasets import Example

    prep = _recipe("prepare_nli_data")

    def ex(i: str, claim: str, evidence: str, group: str) -> Example:
        return Example(i, claim, evidence, "SUPPORTS", "fever", "train", {"group": group})

    examples = [
        ex("a", "Paris is the capital of France.",
           "Paris is the capital and largest city of France. It lies on the Seine river.", "g1"),
        ex("b", "Paris has many museums.",  # same subject, other group: never a partner
           "Paris is the capital of fashion and the home of many museums.", "g2"),
        ex("c", "The Nile flows north.",
           "The Nile flows north through eleven countries to the sea.", "g3"),
        ex("d", "The capital of Kenya is a large city.",
           "Nairobi is the capital and the largest city of Kenya today.", "g4"),
    ]
    rows = prep.unrelated_pairs(examples, random.Random(0))
    by_claim = {r["hypothesis"]: r for r in rows}
    assert all(r["label"] is None for r in rows)  # distillation only: no gold label
    paris = by_claim["Paris is the capital of France."]["premise"]
    # not its own evidence, nor a sentence naming Paris or France; of the rest, the one
    # sharing most words ("capital", "the", "is", "of", ...)
    assert paris == "Nairobi is the capital and the largest city of Kenya today."
    for r in rows:
        own = next(e for e in examples if e.claim == r["hypothesis"])
        assert r["premise"] not in own.evidence_text


class _FixedNLI:
    """Stands in for NLIDetector: labels in a non-default order, scores given per claim."""

    labels = ("contradiction", "entailment", "neutral")

    def __init__(self, e_minus_c: dict[str, float]) -> None:
        self.e_minus_c = e_minus_c

    def predict(self, pairs: list[tuple[str, str]]) -> np.ndarray:
        out = []
        for _, claim in pairs:
            d = self.e_minus_c[claim]
            e, c = (0.5 + d / 2, 0.5 - d / 2)
            out.append([c, e, 0.0])  # columns in ``labels`` order
        return np.asarray(out)


def test_compare_holdout_auroc_reads_the_label_order() -> None:
    from verifier.datasets import NEI, REFUTES, SUPPORTS, Example

    mod = _recipe("compare_holdout")
    rows = [Example("1", "a", "ev", SUPPORTS, "fever", "train"),
            Example("2", "b", "ev", REFUTES, "fever", "train"),
            Example("3", "c", "ev", NEI, "healthver", "train")]
    right = _FixedNLI({"a": 0.8, "b": -0.6, "c": 0.0})
    assert mod.auroc(right, rows) == 1.0
    # read in the default column order (e, n, c), these scores would rank a first
    assert mod.auroc(_FixedNLI({"a": -0.8, "b": 0.6, "c": 0.0}), rows) == 0.0
    assert mod.auroc(_FixedNLI({"a": 0.3, "b": 0.6, "c": 0.0}), rows) == 0.5


def _pipeline_row(label: str, case: str, e: float, n: float, c: float) -> dict:
    return {"label": label, "meta": {"case": case},
            "features": {"nli.entailment": e, "nli.neutral": n, "nli.contradiction": c}}


def test_compare_holdout_pipeline_scores() -> None:
    from verifier.datasets import NEI, REFUTES, SUPPORTS

    mod = _recipe("compare_holdout")
    rows = [_pipeline_row(SUPPORTS, "with", 0.7, 0.2, 0.1),
            _pipeline_row(REFUTES, "with", 0.2, 0.1, 0.7),
            _pipeline_row(SUPPORTS, "with", 0.1, 0.1, 0.8),  # misread: ranked below a refuted
            _pipeline_row(NEI, "without", 0.1, 0.3, 0.6),
            _pipeline_row(NEI, "without", 0.1, 0.6, 0.3),
            _pipeline_row(NEI, "without", 0.2, 0.3, 0.5),
            _pipeline_row(NEI, "without", 0.5, 0.3, 0.2)]
    # supported scores 0.6 and -0.7 against refuted -0.5: one pair of two ranked right
    assert mod.pipeline_scores(rows) == {"pipeline_auroc": 50.0,
                                         "unrelated_contradiction": 50.0,
                                         "rows_with_own": 3, "rows_others_only": 4}
    with pytest.raises(ValueError, match="with and without"):
        mod.pipeline_scores([r for r in rows if r["meta"]["case"] == "with"])


def test_pack_weights_round_trips_within_half_a_step(tmp_path: Path) -> None:
    """``pack_weights.py``: parts under the size cap, big 2-D weights int8 per row (error at
    most half a step of their row), small ones exact, dropped prefixes gone, and the unpacked
    folder loads and scores as the original within that error."""
    import torch
    from safetensors.torch import load_file
    from transformers import AutoModelForSequenceClassification

    pw = _recipe("pack_weights")
    base = make_tiny_classifier(tmp_path / "base", {0: "entailment", 1: "neutral",
                                                    2: "contradiction"})
    orig = load_file(base / "model.safetensors")
    files = pw.pack(base, tmp_path / "packed", max_mib=0.02, min_side=16,
                    drop=("classifier.",))
    assert len(files) > 1
    assert all(f.stat().st_size <= 0.02 * 2**20 + 8192 for f in files)  # + header
    out = tmp_path / "unpacked"
    restored = load_file(pw.unpack(tmp_path / "packed", out))
    kept = {k for k, t in orig.items() if t.is_floating_point()
            and not k.startswith("classifier.")}
    assert set(restored) == kept
    big = [k for k in kept if orig[k].ndim == 2 and min(orig[k].shape) >= 16]
    assert big
    for k in kept:
        w, r = orig[k].float(), restored[k]
        if k in big:
            step = w.abs().amax(1, keepdim=True) / 127.0
            assert bool(((r - w).abs() <= step / 2 + 1e-7).all()), k
            assert not torch.equal(r, w), k  # really quantized
        else:
            assert torch.equal(r, w), k
    a = AutoModelForSequenceClassification.from_pretrained(base).eval()
    b = AutoModelForSequenceClassification.from_pretrained(out).eval()
    assert (out / "config.json").exists() and (out / "tokenizer.json").exists()
    # the head was dropped, so b's is freshly initialised: compare the encoders
    ids = torch.tensor([[2, 5, 9, 11, 3]])
    with torch.no_grad():
        ha = a.base_model(input_ids=ids).last_hidden_state
        hb = b.base_model(input_ids=ids).last_hidden_state
    assert torch.nn.functional.cosine_similarity(ha.flatten(), hb.flatten(), dim=0) > 0.99


def test_pack_weights_refuses_a_small_cap_missing_parts_and_a_used_folder(tmp_path: Path) -> None:
    pw = _recipe("pack_weights")
    base = make_tiny_classifier(tmp_path / "base", {0: "entailment", 1: "neutral",
                                                    2: "contradiction"})
    with pytest.raises(ValueError, match="max_mib"):
        pw.pack(base, tmp_path / "p", max_mib=1e-4, min_side=16, drop=())
    with pytest.raises(ValueError, match="max_mib"):
        pw.pack(base, tmp_path / "p", max_mib=0, min_side=16, drop=())
    with pytest.raises(FileNotFoundError, match="parts="):
        pw.unpack(tmp_path / "nothing", tmp_path / "u")
    # a second pack into the same folder would leave the first one's extra parts for
    # unpack to read
    pw.pack(base, tmp_path / "twice", max_mib=0.02, min_side=16, drop=())
    with pytest.raises(FileExistsError, match="already holds packed parts"):
        pw.pack(base, tmp_path / "twice", max_mib=1.0, min_side=16, drop=())


def _tiny_causal_lm() -> object:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
    return LlamaForCausalLM(cfg).eval()


def test_claim_logprobs_batched_equal_each_pair_read_alone() -> None:
    import torch

    cs = _recipe("compare_stage_one")
    model = _tiny_causal_lm()
    seqs = [([3, 4, 5, 6, 7, 8], [9, 10]), ([11], [12, 13, 14]), ([15, 16, 17], [18]),
            ([2, 3], [4, 5, 6, 7])]
    got = cs.claim_logprobs(model, seqs, batch_size=3)  # padded on the right, by length
    for (prompt, cont), lp in zip(seqs, got, strict=True):
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([prompt + cont])).logits[0]
        want = torch.log_softmax(logits, -1)[torch.arange(len(prompt) - 1,
                                                          len(prompt) + len(cont) - 1),
                                             torch.tensor(cont)].numpy()
        assert lp.shape == (len(cont),)
        np.testing.assert_allclose(lp, want, atol=1e-4)


def test_lm_gain_features_and_inputs() -> None:
    from verifier.datasets import Example

    cs = _recipe("compare_stage_one")
    f = cs.gain_features(np.array([-1.0, -2.0]), np.array([-3.0, -1.0]))
    assert f == {"lm.gain_mean": 0.5, "lm.gain_min": -1.0, "lm.conditioned_mean": -1.5,
                 "lm.unconditioned_mean": -2.0}

    def tok(text: str, add_special_tokens: bool = False) -> dict:
        return {"input_ids": [ord(c) for c in text]}

    e = Example("1", "Paris is in France " * 10, "Paris is a city in France. It is big.",
                "SUPPORTS", "fever", "eval")
    cond, bare, claim = cs.lm_inputs(tok, e)
    assert bare == [ord(c) for c in "Claim:"]
    assert len(claim) == cs.LM_CLAIM_TOKENS and claim[0] == ord(" ")
    assert "".join(map(chr, cond)).startswith("Evidence: ") and "France" in "".join(map(chr, cond))
    assert "".join(map(chr, cond)).endswith("\nClaim:")
    for claim, evidence in (("Paris.", " "), (" ", "Paris is big.")):
        assert cs.lm_inputs(tok, Example("2", claim, evidence, "SUPPORTS", "fever", "eval")) \
            is None


def test_lm_gain_reads_its_cache_without_loading_the_model(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    import rag.generation
    from verifier.datasets import Example

    cs = _recipe("compare_stage_one")
    examples = [Example(str(i), f"claim {i}", f"evidence {i}.", "SUPPORTS", "fever", "eval")
                for i in range(2)]
    cache = tmp_path / "lm.jsonl"
    values = [dict.fromkeys(cs.LM_FEATURES, 0.25), dict.fromkeys(cs.LM_FEATURES, None)]
    cache.write_text("".join(json.dumps({"key": cs._lm_key(e), "features": v}) + "\n"
                             for e, v in zip(examples, values, strict=True)))

    def no_model(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was loaded for cached examples")

    monkeypatch.setattr(rag.generation, "HFGenerator", no_model)
    got = cs.lm_gain(examples, cache=cache)
    assert got[0] == dict.fromkeys(cs.LM_FEATURES, 0.25)
    assert all(np.isnan(v) for v in got[1].values())


def test_compare_calibration_platt_is_the_shipped_sigmoid() -> None:
    from verifier.meta import _apply_calibrator, _fit_calibrator

    cc = _recipe("compare_calibration")
    rng = np.random.default_rng(0)
    s = rng.uniform(0.01, 0.99, 400)
    t = (rng.uniform(size=400) < s ** 0.5).astype(float)
    X = np.column_stack([rng.normal(size=400), rng.uniform(1, 5, 400)])
    want = _apply_calibrator(_fit_calibrator(s, t, "sigmoid"), s)
    np.testing.assert_allclose(cc.fit_platt([s], t, [1.0], X)(s, X), want, atol=1e-6)
    # two halves of the same scores are the scores once
    np.testing.assert_allclose(cc.fit_platt([s, s], t, [0.5, 0.5], X)(s, X), want, atol=1e-6)
    # a covariate that sets the rows apart moves their probabilities apart
    u = np.where(np.arange(400) % 2 == 0, 1.0, -1.0)
    t2 = np.where(u > 0, 1.0, t)
    both = cc.fit_platt([s], t2, [1.0], X, lambda Xm: np.where(
        np.arange(len(Xm)) % 2 == 0, 1.0, -1.0))(s, X)
    assert both[u > 0].mean() > 0.95 > both[u < 0].mean()
    with pytest.raises(ValueError, match="kind must be"):
        cc.covariate(["align.log_evidence_tokens"], "length")


def _tiny_status_classifier() -> object:
    from verifier.meta import StatusClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = np.where(X[:, 0] > 0.3, "Supported",
                 np.where(X[:, 1] > 0, "Contradictory", "Insufficient_Info")).astype(object)
    return StatusClassifier(["a", "b"], C=1.0, calibration="sigmoid", cv=3,
                            estimator="logistic").fit(X, y)


def test_compare_calibration_swaps_stage_one_calibration_only() -> None:
    cc = _recipe("compare_calibration")
    model = _tiny_status_classifier()
    X = np.random.default_rng(1).normal(size=(50, 2))
    before = model.predict_proba(X)
    own = model.support_.predict_proba(X)[:, list(model.support_.classes_).index("Supported")]
    same = cc.with_calibration(model, lambda raw, Xm: own, model.support_threshold_)
    np.testing.assert_allclose(same.predict_proba(X), before, atol=1e-12)
    flat = cc.with_calibration(model, lambda raw, Xm: np.full(len(Xm), 0.9), 0.95)
    p = flat.predict_proba(X)
    np.testing.assert_allclose(p[:, 2], 0.9)
    # stage two splits the rest as fitted
    q = model.refute_.predict_proba(X)[:, list(model.refute_.classes_).index("Contradictory")]
    np.testing.assert_allclose(p[:, 0], 0.1 * q, atol=1e-12)
    assert "Supported" not in set(flat.predict(X).tolist())  # its cut, 0.95, is not reached
    np.testing.assert_allclose(model.predict_proba(X), before)  # the model is left as it is


def test_compare_calibration_scores_a_set_as_the_benchmark() -> None:
    cc = _recipe("compare_calibration")
    model = _tiny_status_classifier()
    rows = [{"status": s, "features": {"a": 0.0, "b": 0.0}}
            for s in ("Supported", "Supported", "Not_Supported", "Not_Supported")]
    s = np.array([0.8, 0.4, 0.6, 0.1])
    fixed = cc.with_calibration(model, lambda raw, Xm: s, 0.5)
    # cut 0.5: rows 1 and 4 right, rows 2 and 3 wrong -> macro-F1 0.5
    got = cc.score_set(fixed, rows)
    assert got["macro_f1"] == 50.0
    # supported vs rest: confidences 0.8, 0.6, 0.6, 0.9 against accuracy 0.5
    assert got["gap"] == pytest.approx((0.8 + 0.6 + 0.6 + 0.9) / 4 - 0.5, abs=1e-4)
    assert cc.score_set(cc.with_calibration(model, lambda raw, Xm: s, 0.35), rows)[
        "macro_f1"] > got["macro_f1"]


def _permuted_copy(base: Path, out: Path, id2label: dict[int, str]) -> Path:
    """``base`` saved with its head's rows in ``id2label``'s order: the same model."""
    import shutil

    import torch
    from transformers import AutoModelForSequenceClassification

    model = AutoModelForSequenceClassification.from_pretrained(base)
    old = {name: i for i, name in model.config.id2label.items()}
    order = [old[id2label[i]] for i in range(len(id2label))]
    with torch.no_grad():
        model.classifier.weight.copy_(model.classifier.weight[order].clone())
        model.classifier.bias.copy_(model.classifier.bias[order].clone())
    model.config.id2label = dict(id2label)
    model.config.label2id = {v: k for k, v in id2label.items()}
    model.save_pretrained(out)
    for f in base.iterdir():  # the tokenizer
        if not (out / f.name).exists():
            shutil.copy(f, out / f.name)
    return out


def test_train_nli_reads_a_checkpoints_label_order(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Its columns were taken as entailment, neutral, contradiction whatever the model's
    id2label said: accuracies, teacher logits and a fine-tuned head came out wrong."""
    from safetensors.torch import load_file

    std = make_tiny_classifier(tmp_path / "std", {0: "entailment", 1: "neutral",
                                                  2: "contradiction"})
    perm = _permuted_copy(std, tmp_path / "perm", {0: "contradiction", 1: "entailment",
                                                   2: "neutral"})
    rows = [("the dog is in the city", "a dog is in a city", "entailment"),
            ("the cat was born in paris", "the cat was born in london", "contradiction"),
            ("the man has a red car", "the man is old", "neutral")] * 3
    data = tmp_path / "eval_x.jsonl"
    data.write_text("".join(json.dumps({"premise": p, "hypothesis": h, "label": lab}) + "\n"
                            for p, h, lab in rows))
    tn = _recipe("train_nli")

    def run(*argv: str) -> None:
        monkeypatch.setattr(sys, "argv", ["train_nli.py", *argv, "--device", "cpu"])
        tn.main()

    logits = {}
    for name, model in (("std", std), ("perm", perm)):
        run("logits", "--base", str(model), "--train", str(data),
            "--logits-out", str(tmp_path / f"{name}.npy"))
        logits[name] = np.load(tmp_path / f"{name}.npy")
    np.testing.assert_allclose(logits["perm"], logits["std"], atol=1e-5)
    for model in (std, perm):
        run("eval", "--base", str(model), "--eval", str(data))
    # the fine-tuned head keeps its classes (lr too small to move it)
    for name, model in (("std", std), ("perm", perm)):
        run("train", "--base", str(model), "--train", str(data), "--out",
            str(tmp_path / f"out_{name}"), "--epochs", "1", "--lr", "1e-12", "--batch-size",
            "4", "--save-dtype", "float32", "--log-every", "1000")
    a, b = (load_file(tmp_path / f"out_{n}" / "model.safetensors") for n in ("std", "perm"))
    np.testing.assert_allclose(b["classifier.weight"].numpy(), a["classifier.weight"].numpy(),
                               atol=1e-6)


def test_train_nli_scores_a_file_without_neutral_rows_as_two_classes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the recipe's deciding file, dev2_fever_sym.jsonl, was scored by the 3-class argmax:
    # a "neutral" argmax counted as wrong on data that has no neutral class
    import torch
    from transformers import AutoModelForSequenceClassification

    base = make_tiny_classifier(tmp_path / "m", {0: "entailment", 1: "neutral",
                                                 2: "contradiction"})
    model = AutoModelForSequenceClassification.from_pretrained(base)
    with torch.no_grad():  # always 0.45 / 0.50 / 0.05: neutral first, entailment second
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.log(torch.tensor([0.45, 0.50, 0.05])))
    model.save_pretrained(base)
    data = tmp_path / "dev2_x.jsonl"
    data.write_text(json.dumps({"premise": "a dog", "hypothesis": "a dog",
                                "label": "entailment"}) + "\n")
    monkeypatch.setattr(sys, "argv", ["train_nli.py", "eval", "--base", str(base), "--eval",
                                      str(data), "--device", "cpu"])
    _recipe("train_nli").main()
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == {"dev2_x": 1.0}


@pytest.mark.parametrize(("recipe", "argv", "message"), [
    ("train_nli", ["train", "--temperature", "0"], "--temperature: must be a number > 0"),
    ("train_nli", ["train", "--alpha", "1.5"], "--alpha: must be a number in [0, 1]"),
    ("train_nli", ["train", "--batch-size", "0"], "--batch-size: must be a whole number >= 1"),
    ("train_nli", ["train", "--limit", "-3"], "--limit: must be a whole number >= 0"),
    ("prepare_nli_data", ["--out", "x", "--replay", "-1"],
     "--replay: must be a whole number >= 0"),
    ("train_meta", ["--cv", "1"], "--cv: must be a whole number >= 2"),
    ("train_meta", ["--C", "0"], "--C: must be a number > 0"),
    ("train_meta", ["--pipeline-claims", "-1"], "--pipeline-claims: must be a whole number >= 0"),
])
def test_recipes_refuse_option_values_before_any_work(
        recipe: str, argv: list[str], message: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A negative count sliced from the end or meant "all", --temperature 0 saved a NaN
    model, train_meta's --cv 1 failed after the features were collected."""
    base = ["--base", "b", "--train", "t.jsonl", "--out", "o"] if recipe == "train_nli" else []
    monkeypatch.setattr(sys, "argv", [f"{recipe}.py", *argv, *base])
    monkeypatch.chdir(tmp_path)  # a value let through writes here, not into the checkout
    module = _recipe(recipe)
    if hasattr(module, "training_rows"):  # fail at once, not after hours of features
        monkeypatch.setattr(module, "training_rows", lambda *a, **kw: pytest.fail("ran"))
    with pytest.raises(SystemExit) as info:
        module.main()
    assert info.value.code == 2 and message in capsys.readouterr().err


def test_train_meta_leaves_its_folder_as_it_was_when_a_fit_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It wrote each classifier as it was fitted: a failure (or Ctrl-C) left new ones beside
    old ones and an old training log."""
    tm = _recipe("train_meta")
    rng = np.random.default_rng(0)
    names = tm.all_features()
    rows = []
    for i in range(240):
        status = ("Supported", "Contradictory", "Insufficient_Info")[i % 3]
        feats = {f: float(rng.uniform()) for f in names}
        feats["nli.entailment"] = float(rng.uniform(0.5 * (status == "Supported"), 1))
        rows.append({"features": feats, "status": status,
                     "dataset": ("fever", "healthver", "scifact")[i // 80]})
    monkeypatch.setattr(tm, "Verifier", lambda **kw: None)
    monkeypatch.setattr(tm, "training_rows", lambda *a, **kw: (rows, list(range(len(rows)))))
    monkeypatch.setattr(tm, "row_labels", lambda rows, ex: (
        np.array([r["status"] for r in rows], dtype=object),
        np.array([r["dataset"] for r in rows], dtype=object), np.arange(len(rows)) % 2))
    out = tmp_path / "meta"
    out.mkdir()
    for f in ("ensemble.json", "alignment.json", "nli_only.json", "with_uncertainty.json",
              "training_log.json"):
        (out / f).write_text("old\n")
    argv = ["train_meta.py", "--out", str(out), "--cv", "2", "--support-estimator",
            "logistic", "--refute-estimator", "logistic"]
    monkeypatch.setattr(sys, "argv", argv)
    fit = tm.StatusClassifier.fit
    calls = []

    def fails_third(self, *a, **kw):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("stopped")
        return fit(self, *a, **kw)

    monkeypatch.setattr(tm.StatusClassifier, "fit", fails_third)
    with pytest.raises(RuntimeError, match="stopped"):
        tm.main()
    assert {f.name: f.read_text() for f in out.iterdir()} == dict.fromkeys(
        ["ensemble.json", "alignment.json", "nli_only.json", "with_uncertainty.json",
         "training_log.json"], "old\n")
    monkeypatch.setattr(tm.StatusClassifier, "fit", fit)
    tm.main()
    assert sorted(f.name for f in out.iterdir()) == [
        "alignment.json", "ensemble.json", "nli_only.json", "training_log.json",
        "with_uncertainty.json"]
    assert json.loads((out / "training_log.json").read_text())["rows"] == 240
    assert tm.StatusClassifier.load(out / "ensemble.json").support_threshold_ > 0


def test_train_meta_refuses_a_drop_that_empties_a_classifier(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # it failed at that classifier ("Found array with 0 feature(s)"), after the features
    # were collected and the classifiers before it written
    tm = _recipe("train_meta")
    monkeypatch.setattr(tm, "training_rows", lambda *a, **kw: pytest.fail("features read"))
    monkeypatch.setattr(sys, "argv", ["train_meta.py", "--drop", *tm.GROUPS["nli_only"]])
    with pytest.raises(SystemExit) as info:
        tm.main()
    assert info.value.code == 2
    assert "--drop leaves no feature for ['nli_only']" in capsys.readouterr().err
