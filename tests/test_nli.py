from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import make_tiny_classifier

from verifier.errors import LabelMappingError, ModelLoadError
from verifier.nli import (
    NLIDetector,
    PairInputError,
    aggregate_chunks,
    length_batches,
    map_labels,
    supports_decision,
    to_three_columns,
)

PAIRS = [
    ("paris is the capital of france .", "paris is in france ."),
    ("the river seine is in paris .", "london is big ."),
    ("a man and a dog .", "the dog is red ."),
    ("berlin is in germany . it has a million people . the city is old and big .",
     "berlin is small ."),
    ("the band released an album .", "the first album of the band was released in two years ."),
]
NLI3 = {0: "entailment", 1: "neutral", 2: "contradiction"}


def _raw_logits(folder: Path, pairs: list[tuple[str, str]]) -> np.ndarray:
    """Logits of the checkpoint run plainly by transformers, one pair at a time."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder, dtype=torch.float32)
    with torch.inference_mode():
        return np.concatenate([model(**tok(p, h, return_tensors="pt")).logits.numpy()
                               for p, h in pairs])


def _softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max(1, keepdims=True))
    return z / z.sum(1, keepdims=True)


# ---------------------------------------------------------------- label mapping
@pytest.mark.parametrize(("id2label", "index"), [
    ({0: "CONTRADICTION", 1: "Entailment", 2: "neutral"},
     {"contradiction": 0, "entailment": 1, "neutral": 2}),
    ({"0": "supports", "1": "NOT ENOUGH INFO", "2": "refutes"},
     {"entailment": 0, "neutral": 1, "contradiction": 2}),
    ({0: "NEI", 1: "Contradicted", 2: "entailed"},
     {"neutral": 0, "contradiction": 1, "entailment": 2}),
])
def test_nli_map_labels_reads_order_and_synonyms(id2label: dict, index: dict) -> None:
    lm = map_labels(id2label, 3)
    assert lm.kind == "3class" and lm.index == index


def test_nli_map_labels_fewer_classes() -> None:
    assert map_labels({0: "not_entailment", 1: "entailment"}, 2).kind == "2class-entailment"
    assert map_labels({0: "REFUTED", 1: "Supported"}, 2).kind == "2class-refutes"
    assert map_labels({0: "LABEL_0"}, 1).kind == "1logit"
    assert map_labels(None, 1).kind == "1logit"


@pytest.mark.parametrize(("id2label", "match"), [
    ({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, r"\['LABEL_0', 'LABEL_1', 'LABEL_2'\].*generic"),
    ({0: "entailment", 1: "supports", 2: "neutral"}, r"two labels mean 'entailment'"),
    ({0: "entailment", 1: "neutral"}, r"\['entailment', 'neutral'\]"),
    ({0: "entailment", 1: "neutral", 2: "banana"}, r"unknown label 'banana'"),
    ({0: "entailment", 1: "neutral"}, r"id2label must name each of the 3 outputs"),
])
def test_nli_map_labels_rejects_unmappable(id2label: dict, match: str) -> None:
    n = 3 if "outputs" in match else len(id2label)
    with pytest.raises(LabelMappingError, match=match):
        map_labels(id2label, n)


def test_nli_map_labels_rejects_single_logit_named_contradiction() -> None:
    with pytest.raises(LabelMappingError, match="single-logit.*'contradiction'"):
        map_labels({0: "refuted"}, 1)


def test_nli_unmappable_checkpoint_raises_naming_labels(tmp_path: Path) -> None:
    folder = make_tiny_classifier(tmp_path / "m", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    det = NLIDetector(str(folder))
    with pytest.raises(LabelMappingError, match="LABEL_0"):
        det.predict(PAIRS)
    # The caller may name the outputs of such a checkpoint.
    named = NLIDetector(str(folder), id2label={"0": "contradiction", "1": "entailment",
                                               "2": "neutral"}, dtype="float32")
    expected = _softmax(_raw_logits(folder, PAIRS))[:, [1, 2, 0]]
    np.testing.assert_allclose(named.predict(PAIRS), expected, atol=1e-5)


@pytest.mark.parametrize("perm,names", [
    ([2, 0, 1], ("contradiction", "entailment", "neutral")),
    ([1, 2, 0], ("NEUTRAL", "CONTRADICTION", "ENTAILMENT")),
    ([0, 2, 1], ("supports", "refutes", "not_enough_info")),
])
def test_nli_permuted_id2label_and_rows_give_same_columns(
    tmp_path: Path, tiny_nli_model: Path, perm: list[int], names: tuple[str, ...]
) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    base = NLIDetector(str(tiny_nli_model), dtype="float32").predict(PAIRS)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_nli_model)
    index = map_labels(dict(enumerate(names)), 3).index
    assert all(index[NLI3[p]] == k for k, p in enumerate(perm))  # names follow the rows
    with torch.no_grad():  # output row k of the new head = row perm[k] of the old one
        model.classifier.weight.copy_(model.classifier.weight[perm].clone())
        model.classifier.bias.copy_(model.classifier.bias[perm].clone())
    model.config.id2label = dict(enumerate(names))
    model.config.label2id = {n: i for i, n in enumerate(names)}
    out = tmp_path / "perm"
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(tiny_nli_model).save_pretrained(out)
    again = NLIDetector(str(out), dtype="float32").predict(PAIRS)
    np.testing.assert_allclose(base, again, atol=1e-5)
    assert not np.allclose(base, base[:, perm])  # the permutation did change the raw order


def test_nli_two_class_and_single_logit_checkpoints(tmp_path: Path) -> None:
    ent = make_tiny_classifier(tmp_path / "ent", {0: "not_entailment", 1: "entailment"})
    probs = NLIDetector(str(ent), dtype="float32").predict(PAIRS)
    p = _softmax(_raw_logits(ent, PAIRS))
    np.testing.assert_allclose(probs[:, 0], p[:, 1], atol=1e-5)
    np.testing.assert_allclose(probs[:, 1], p[:, 0], atol=1e-5)  # not-entailment -> neutral
    assert (probs[:, 2] == 0).all()

    ref = make_tiny_classifier(tmp_path / "ref", {0: "REFUTES", 1: "SUPPORTS"})
    probs = NLIDetector(str(ref), dtype="float32").predict(PAIRS)
    p = _softmax(_raw_logits(ref, PAIRS))
    np.testing.assert_allclose(probs[:, [0, 2]], p[:, [1, 0]], atol=1e-5)
    assert (probs[:, 1] == 0).all()

    one = make_tiny_classifier(tmp_path / "one", {0: "LABEL_0"})
    probs = NLIDetector(str(one), dtype="float32").predict(PAIRS)
    sig = 1 / (1 + np.exp(-_raw_logits(one, PAIRS)[:, 0]))
    np.testing.assert_allclose(probs[:, 0], sig, atol=1e-5)
    assert (probs[:, 2] == 0).all()
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-6)


def test_nli_to_three_columns_single_logit_is_stable() -> None:
    out = to_three_columns(np.array([[0.0], [1000.0], [-1000.0]]), map_labels(None, 1))
    np.testing.assert_allclose(out, [[0.5, 0.5, 0], [1, 0, 0], [0, 1, 0]], atol=1e-6)


# ---------------------------------------------------------------- prediction
def test_nli_predict_matches_plain_transformers(tiny_nli_model: Path) -> None:
    probs = NLIDetector(str(tiny_nli_model), dtype="float32").predict(PAIRS)
    np.testing.assert_allclose(probs, _softmax(_raw_logits(tiny_nli_model, PAIRS)), atol=1e-5)


def test_nli_predict_order_preserved_under_length_sorting(tmp_path: Path) -> None:
    folder = make_tiny_classifier(tmp_path / "m", NLI3, max_position_embeddings=64)
    det = NLIDetector(str(folder), dtype="float32", batch_size=2, max_length=64)
    long_premise = " ".join(f"the city {w} is old and big ." for w in
                            ["paris", "london", "berlin", "north", "south", "east", "west"] * 2)
    pairs = [*PAIRS[::-1], (long_premise, "paris is old ."), *PAIRS]
    probs = det.predict(iter(pairs))  # any iterable
    assert probs.shape == (len(pairs), 3) and probs.dtype == np.float32
    np.testing.assert_allclose(probs.sum(1), 1.0, atol=1e-5)
    one_by_one = np.stack([det.predict([p])[0] for p in pairs])
    np.testing.assert_allclose(probs, one_by_one, atol=1e-5)
    assert len(det.predict_chunks([pairs[len(PAIRS)]])[0].chunk_spans) > 1


def test_nli_fallback_without_pair_template_gives_same_scores(
    tiny_nli_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from verifier import nli

    fast = NLIDetector(str(tiny_nli_model), dtype="float32").predict(PAIRS)
    monkeypatch.setattr(nli, "_learn_template", lambda tok: (None, 3))
    det = NLIDetector(str(tiny_nli_model), dtype="float32")
    np.testing.assert_allclose(det.predict(PAIRS), fast, atol=1e-5)
    assert det._loaded is not None and det._loaded.template is None


def test_nli_pair_template_rebuilds_tokenizer_pairs(tiny_nli_model: Path) -> None:
    from transformers import AutoTokenizer

    from verifier.nli import _learn_template

    tok = AutoTokenizer.from_pretrained(tiny_nli_model)
    template, n_special = _learn_template(tok)
    assert template is not None and n_special == 3
    for p, h in PAIRS:
        a = tok(p, add_special_tokens=False)["input_ids"]
        b = tok(h, add_special_tokens=False)["input_ids"]
        enc = tok(p, h, return_token_type_ids=True)
        assert template.build(a, b) == (enc["input_ids"], enc["token_type_ids"])


def test_nli_empty_input_and_bad_pairs(tiny_nli_model: Path) -> None:
    det = NLIDetector(str(tiny_nli_model))
    empty = det.predict([])
    assert empty.shape == (0, 3) and empty.dtype == np.float32
    assert det.predict_chunks([]) == []
    with pytest.raises(ValueError, match=r"^pairs\[3\] has an empty hypothesis$"):
        det.predict([*PAIRS[:3], ("a b", "  \n")])
    with pytest.raises(ValueError, match=r"^pairs\[0\] has an empty premise$"):
        det.predict([("", "c")])
    with pytest.raises(ValueError, match=r"^pairs\[1\] has a premise with no tokens: "
                                         r"'\\u200b\\u200b'$"):
        det.predict([("a b", "c"), ("\u200b\u200b", "c")])
    with pytest.raises(TypeError, match=r"pairs\[1\] must hold two str, got \(str, int\)"):
        det.predict([("a", "b"), ("a", 3)])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"pairs\[0\] must be a \(premise, hypothesis\) pair"):
        det.predict([("a", "b", "c")])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="pairs must be a sequence of"):
        det.predict("a premise")  # type: ignore[arg-type]


def test_nli_hypothesis_too_long_raises_naming_index(tmp_path: Path) -> None:
    folder = make_tiny_classifier(tmp_path / "m", NLI3, max_position_embeddings=64)
    det = NLIDetector(str(folder), max_length=64)
    long_hyp = "the old city " * 20
    with pytest.raises(ValueError, match=r"pairs\[1\] has a hypothesis of 60 tokens.*64-token"):
        det.predict([PAIRS[0], ("the city is old . " * 10, long_hyp)])
    # the error says which pair and which of its texts, for callers that name their inputs
    with pytest.raises(PairInputError) as err:
        det.predict([PAIRS[0], PAIRS[1], ("the city is old .", long_hyp)])
    assert (err.value.index, err.value.part) == (2, "hypothesis")
    assert err.value.reason.startswith("a hypothesis of 60 tokens")
    # the model allows 64 positions: raising max_length cannot help, and the hint said it would
    assert err.value.reason.endswith("(the window is the model's longest input)")
    wider = make_tiny_classifier(tmp_path / "w", NLI3, max_position_embeddings=128)
    with pytest.raises(PairInputError) as err:
        NLIDetector(str(wider), max_length=64).predict([("the city is old .", long_hyp)])
    assert err.value.reason.endswith("shorten the hypothesis or raise max_length")
    by_sentence = NLIDetector(str(folder), max_length=64, hypothesis_sentences=True)
    with pytest.raises(PairInputError, match=r"pairs\[1\] \(hypothesis sentence 1\)") as err:
        by_sentence.predict([PAIRS[0], ("the city is old .", "paris is big . " + long_hyp),
                             PAIRS[1]])
    assert (err.value.index, err.value.part) == (1, "hypothesis")  # the pair, not the sentence
    with pytest.raises(PairInputError) as err:
        det.predict([PAIRS[0], ("\u200b", "paris is big .")])
    assert (err.value.index, err.value.part, err.value.reason) == (
        1, "premise", "a premise with no tokens")


def test_nli_constructor_validates_and_is_cheap(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="batch_size must be a positive int, got 0"):
        NLIDetector(batch_size=0)
    with pytest.raises(ValueError, match="max_length must be an int >= 32, got 8"):
        NLIDetector(max_length=8)
    with pytest.raises(ValueError, match="dtype must be one of .*, got 'int8'"):
        NLIDetector(dtype="int8")
    with pytest.raises(ValueError, match="id2label keys must be ints"):
        NLIDetector(id2label={"first": "entailment"})
    with pytest.raises(TypeError, match="trust_remote_code must be a bool"):
        NLIDetector(trust_remote_code="yes")  # type: ignore[arg-type]
    det = NLIDetector(str(tmp_path / "missing"))  # nothing is read before first use
    assert det._model is None
    with pytest.raises(ModelLoadError, match="missing"):
        det.warm_up()


def test_nli_to_dict_round_trip() -> None:
    from verifier.registry import from_config

    det = NLIDetector("some/model", batch_size=8, max_length=128, dtype="float32",
                      id2label={0: "entailment", 1: "not_entailment"})
    config = json.loads(json.dumps(det.to_dict()))
    assert config["type"] == "nli.hf.v1"
    assert config["init_parameters"]["id2label"] == {"0": "entailment", "1": "not_entailment"}
    again = from_config(config)
    assert isinstance(again, NLIDetector) and again.to_dict() == det.to_dict()
    assert "NLIDetector(model_name_or_path='some/model'" in repr(det)


def test_nli_bf16_close_to_fp32_on_tiny_model(tiny_nli_model: Path) -> None:
    fp32 = NLIDetector(str(tiny_nli_model), dtype="float32")
    bf16 = NLIDetector(str(tiny_nli_model), dtype="bfloat16")
    a, b = fp32.predict(PAIRS), bf16.predict(PAIRS)
    assert bf16.resolved_dtype == "bfloat16" and b.dtype == np.float32
    np.testing.assert_allclose(a, b, atol=0.02)


def test_nli_prefers_safetensors_over_pickle(tmp_path: Path) -> None:
    import torch

    folder = make_tiny_classifier(tmp_path / "m", NLI3, seed=0)
    other = make_tiny_classifier(tmp_path / "other", NLI3, seed=1)
    from safetensors.torch import load_file

    torch.save(load_file(other / "model.safetensors"), folder / "pytorch_model.bin")
    probs = NLIDetector(str(folder), dtype="float32").predict(PAIRS)
    np.testing.assert_allclose(probs, _softmax(_raw_logits(tmp_path / "m", PAIRS)), atol=1e-5)
    assert not np.allclose(probs, NLIDetector(str(other), dtype="float32").predict(PAIRS))


def test_nli_never_runs_repository_code_by_default(tmp_path: Path) -> None:
    folder = make_tiny_classifier(tmp_path / "m", NLI3)
    marker = tmp_path / "code-ran"
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"] = {"AutoConfig": "custom.Config",
                          "AutoModelForSequenceClassification": "custom.Model"}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "custom.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
        "from transformers import BertConfig, BertForSequenceClassification\n"
        "class Config(BertConfig):\n    pass\n"
        "class Model(BertForSequenceClassification):\n    config_class = Config\n")
    det = NLIDetector(str(folder))
    try:
        det.predict(PAIRS[:1])
    except ModelLoadError:
        pass  # refusing to load is fine too; running the code is not
    assert not marker.exists()


# ---------------------------------------------------------------- helpers
def test_nli_length_batches_sort_and_cap_padding() -> None:
    rng = np.random.default_rng(0)
    lengths = np.concatenate([rng.integers(10, 60, 300), rng.integers(200, 512, 20)])
    batches = length_batches(lengths, 32, 32 * 64)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(len(lengths)))  # a permutation
    assert (np.diff(lengths[flat]) >= 0).all()  # shortest first
    for b in batches:
        width = -(-int(lengths[b].max()) // 8) * 8
        assert len(b) <= 32 and (len(b) == 1 or len(b) * width <= 32 * 64)
    assert max(len(b) for b in batches) == 32 and len(batches[-1]) <= 4  # long ones: few
    assert length_batches(np.array([], dtype=int), 8, 64) == []


def test_nli_aggregate_rule() -> None:
    chunks = np.array([[0.1, 0.8, 0.1], [0.7, 0.2, 0.1], [0.1, 0.3, 0.6]], dtype=np.float32)
    np.testing.assert_array_equal(aggregate_chunks(chunks), chunks[1])  # entails more surely
    chunks[2] = [0.05, 0.05, 0.9]
    np.testing.assert_array_equal(aggregate_chunks(chunks), chunks[2])  # contradicts more surely
    with pytest.raises(ValueError, match=r"shape \(k >= 1, 3\)"):
        aggregate_chunks(np.zeros((0, 3)))


def test_nli_supports_decision() -> None:
    probs = np.array([[0.4, 0.5, 0.1], [0.1, 0.3, 0.6], [0.3, 0.4, 0.3]])
    assert supports_decision(probs).tolist() == [True, False, False]  # a tie is REFUTES
    with pytest.raises(ValueError, match=r"shape \(n, 3\)"):
        supports_decision(np.zeros((2, 2)))


# ---------------------------------------------------------------- GPU
@pytest.mark.gpu
def test_nli_gpu_bf16_matches_cpu_fp32(tiny_nli_model: Path) -> None:
    gpu = NLIDetector(str(tiny_nli_model), device="cuda")
    cpu = NLIDetector(str(tiny_nli_model), device="cpu", dtype="float32")
    assert gpu.resolved_dtype in ("bfloat16", "float16")
    np.testing.assert_allclose(gpu.predict(PAIRS), cpu.predict(PAIRS), atol=0.02)


@pytest.mark.parametrize(("capability", "expected"), [((7, 5), "float16"),
                                                      ((8, 0), "bfloat16")])
def test_auto_dtype_on_cuda_is_bf16_only_where_it_runs_natively(monkeypatch, capability,
                                                                 expected) -> None:
    import torch

    from verifier.embedded import resolve_dtype

    seen = []
    monkeypatch.setattr(torch.cuda, "get_device_capability",
                        lambda device=None: seen.append(device) or capability)
    assert resolve_dtype(None, "cuda:1") == expected
    assert seen == ["cuda:1"]  # the device asked for, not the current one
    assert resolve_dtype("float32", "cuda:1") == "float32"


def test_cuda_device_without_cuda_is_a_clear_error(monkeypatch) -> None:
    import torch

    from verifier.embedded import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="device 'cuda:0' asked for, but this torch sees no CUDA"):
        resolve_device("cuda:0")
    assert resolve_device("cpu") == "cpu"


@pytest.mark.parametrize("rel", ["abs", "./", "../", "parent"])
def test_nli_missing_local_folder_says_no_such_folder(tmp_path: Path, monkeypatch,
                                                      rel: str) -> None:
    # the Hub's "Repo id must be in the form 'repo_name' or 'namespace/repo_name'" before
    (tmp_path / "models").mkdir()
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    name = {"abs": str(tmp_path / "nonexistent" / "model"), "./": "./nli-model",
            "../": "../models/nli-model", "parent": "../models/nli-model"}[rel]
    if rel == "parent":  # no ./ prefix, three parts (no Hub id): its parent folder exists
        (tmp_path / "models" / "nli").mkdir()
        monkeypatch.chdir(tmp_path)
        name = "models/nli/v2"
    with pytest.raises(ModelLoadError, match=f"could not load the NLI model '{re.escape(name)}'"
                                             f": no such folder: {re.escape(name)}$"):
        NLIDetector(name).warm_up()
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(ModelLoadError, match="not a folder: "):
        NLIDetector(str(tmp_path / "a-file")).warm_up()


def test_nli_local_model_path_expands_home_and_keeps_hub_ids(tmp_path: Path,
                                                            monkeypatch) -> None:
    from verifier.nli import local_model_path

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "nli").mkdir()
    assert local_model_path("~/nli") == str(tmp_path / "nli")
    with pytest.raises(ModelLoadError, match=f"no such folder: {re.escape(str(tmp_path))}/gone"):
        local_model_path("~/gone")
    monkeypatch.chdir(tmp_path)
    assert local_model_path("cross-encoder/nli-deberta-v3-small") == \
        "cross-encoder/nli-deberta-v3-small"
    (tmp_path / "cross-encoder").mkdir()  # a folder named as the Hub id's org: still the Hub
    assert local_model_path("cross-encoder/nli-deberta-v3-small") == \
        "cross-encoder/nli-deberta-v3-small"


def test_mps_device_without_mps_is_a_clear_error(monkeypatch) -> None:
    # torch's "PyTorch is not linked with support for mps devices" at predict time before
    import torch

    from verifier.embedded import resolve_device

    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    for device in ("mps", "mps:0"):
        with pytest.raises(ValueError, match=f"device '{device}' asked for, but this torch "
                                             f"sees no MPS"):
            resolve_device(device)
        with pytest.raises(ValueError, match="sees no MPS"):
            NLIDetector(device=device).warm_up()  # the first predict warms up
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert resolve_device("mps") == "mps"


def test_devices_this_torch_cannot_run_on_are_clear_errors(monkeypatch) -> None:
    # 'meta' passed and failed at predict ("Tensor.item() cannot be called on meta tensors"),
    # 'xpu' at load ("AssertionError: Torch not compiled with XPU enabled")
    import torch

    from verifier.embedded import resolve_device

    with pytest.raises(ValueError, match=r"device 'meta' holds no data \(shapes only\)"):
        resolve_device("meta")
    monkeypatch.setattr(torch.xpu, "is_available", lambda: False)
    with pytest.raises(ValueError, match="device 'xpu:0' asked for, but this torch sees no "
                                         "xpu device"):
        resolve_device("xpu:0")
    with pytest.raises(ValueError, match="sees no xpu device"):
        NLIDetector(device="xpu").warm_up()
    monkeypatch.setattr(torch.xpu, "is_available", lambda: True)
    assert resolve_device("xpu") == "xpu"


def test_nli_refuses_an_empty_model_name() -> None:
    # '' loaded the embedded model: NLIDetector(os.environ.get("NLI_MODEL", ""))
    for name in ("", "  "):
        with pytest.raises(ValueError, match=f"model_name_or_path must name a model \\(None: "
                                             f"the embedded one\\), got '{name}'"):
            NLIDetector(name)


@pytest.mark.parametrize(("id2label", "match"), [
    # 0.9 was read as 0, and "0" next to 0 dropped one of the two names, silently
    ({0.9: "entailment", 1.2: "neutral", 2.5: "contradiction"},
     "keys must be ints, got the key 0.9"),
    ({0: "entailment", "0": "contradiction", 1: "neutral", 2: "contradiction"},
     "gives the output 0 twice"),
])
def test_nli_id2label_keys_are_ints_once_each(id2label, match) -> None:
    with pytest.raises(ValueError, match=match):
        NLIDetector(id2label=id2label)
    assert NLIDetector(id2label={"0": "entailment", "1": "neutral", "2": "contradiction"}
                       ).id2label == {0: "entailment", 1: "neutral", 2: "contradiction"}
