"""Contract tests: every registered component is cheap to build and rebuilds from to_dict()."""

from __future__ import annotations

import json

import pytest

from verifier import registry

SAMPLE_ARGS = {
    "generator.openai.v1": {"model": "m", "base_url": "http://127.0.0.1:9/v1"},
    "generator.static.v1": {"text": "Paris is in France."},
    "decomposer.llm.v1": {"generator": {"type": "generator.static.v1",
                                        "init_parameters": {"text": "[]"}}},
}


@pytest.mark.parametrize("name", registry.names())
def test_registry_component_round_trips_through_config(name: str) -> None:
    comp = registry.create(name, **SAMPLE_ARGS.get(name, {}))
    config = comp.to_dict()
    assert config["type"] == name
    json.dumps(config)  # JSON-serialisable
    again = registry.from_config(json.loads(json.dumps(config)))
    assert type(again) is type(comp) and again.to_dict() == config
    # cheap constructors: nothing is loaded before first use
    for attr in ("_model", "_nlp", "_bm25", "_faiss"):
        assert getattr(comp, attr, None) is None


def test_registry_unknown_name_lists_known() -> None:
    with pytest.raises(KeyError, match="unknown component 'nope.v1'; known: .*nli.hf.v1"):
        registry.get("nope.v1")


def test_registry_expected_components_present() -> None:
    assert {"nli.hf.v1", "retriever.bm25.v1", "retriever.dense.v1", "retriever.hybrid.v1",
            "generator.hf.v1", "generator.openai.v1", "generator.static.v1",
            "decomposer.spacy.v1", "decomposer.llm.v1", "pairer.hybrid.v1"} <= set(
                registry.names())


def test_registry_rebuilds_every_builtin_in_a_fresh_process() -> None:
    # in this process a test module may have imported a component's module already; a
    # fresh one has only what the registry imports itself (rag.pairing was missing)
    import subprocess
    import sys

    code = ("import json; from verifier import registry; from rag.pairing import "
            "EvidencePairer; c = json.dumps(EvidencePairer(top_k=2).to_dict()); "
            "print(sorted(registry.names()))")
    fresh = ("import json; from verifier import registry; "
             "print(type(registry.from_config({'type': 'pairer.hybrid.v1', "
             "'init_parameters': {'top_k': 2}})).__name__, sorted(registry.names()))")
    done = subprocess.run([sys.executable, "-c", fresh], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("EvidencePairer ")
    imported = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True).stdout
    assert done.stdout.split(" ", 1)[1] == imported  # the same names either way


def test_registry_import_of_verifier_is_light() -> None:
    import subprocess
    import sys

    code = "import sys, verifier; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def test_registry_reloading_a_module_registers_its_new_definitions(tmp_path, monkeypatch) -> None:
    import importlib
    import sys

    from verifier import registry

    (tmp_path / "reload_me.py").write_text(
        "from verifier.registry import register\n\n\n"
        "@register('test.reload.v1')\nclass Thing:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        mod = importlib.import_module("reload_me")
        first = mod.Thing
        mod = importlib.reload(mod)  # as autoreload does: no "already registered" error
        assert registry.get("test.reload.v1") is mod.Thing is not first
        with pytest.raises(ValueError, match="already registered"):
            registry.register("test.reload.v1")(type("Thing", (), {}))  # another definition
    finally:
        registry._REGISTRY.pop("test.reload.v1", None)
        sys.modules.pop("reload_me", None)


def test_registry_two_local_classes_of_one_name_do_not_replace_each_other() -> None:
    from verifier import registry

    def make() -> type:
        class Local:
            pass
        return Local

    try:
        first = registry.register("test.local.v1")(make())
        with pytest.raises(ValueError, match="already registered"):
            registry.register("test.local.v1")(make())  # same qualname, another class
        assert registry.get("test.local.v1") is first
    finally:
        registry._REGISTRY.pop("test.local.v1", None)


def test_registry_rebuilds_the_mitigator_and_the_llm_decomposers_fallback() -> None:
    # Mitigator.to_dict() named a type the registry did not know; a custom check list and
    # the LLM decomposer's fallback were dropped unsaid, so the rebuilt component differed
    from mitigation.checks import NumberCheck
    from mitigation.mitigator import Mitigator
    from rag.decompose import LLMDecomposer, SpacyDecomposer
    from rag.generation import StaticGenerator
    from verifier.registry import from_config

    m = Mitigator("strict", max_citations=3, excerpt_chars=50)
    again = from_config(m.to_dict())
    assert isinstance(again, Mitigator) and again.to_dict() == m.to_dict()
    with pytest.raises(ValueError, match="checks are not the default ones"):
        Mitigator(checks=[NumberCheck()]).to_dict()
    d = LLMDecomposer(StaticGenerator('["a"]'), fallback=SpacyDecomposer(split_clauses=False))
    rebuilt = from_config(d.to_dict())
    assert rebuilt.fallback.split_clauses is False and rebuilt.to_dict() == d.to_dict()

    class Duck:
        def generate(self, prompt, *, n=1):
            return []

    with pytest.raises(TypeError, match="the generator Duck has no to_dict"):
        LLMDecomposer(Duck()).to_dict()
