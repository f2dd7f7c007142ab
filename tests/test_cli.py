from __future__ import annotations

import json
import re

import pytest

from verifier.cli import main
from verifier.cli_rag import load_documents


def test_cli_decompose_json(capsys) -> None:
    assert main(["decompose", "Paris is in France. I think it is lovely.", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["verifiable"] for c in out] == [True, False]
    assert out[0]["span"] == [0, 19]


def test_cli_bad_input_exits_2_with_message(tmp_path, capsys) -> None:
    assert main(["index", str(tmp_path / "missing"), "--out", str(tmp_path / "idx")]) == 2
    err = capsys.readouterr().err
    assert "verifier index: error: DOCS must be a folder" in err
    (tmp_path / "in.jsonl").write_text('{"claim": "a", "evidence": "b", "label": "SUPPORTS"}\n')
    assert main(["eval", str(tmp_path / "in.jsonl"), "--output-dir", str(tmp_path / "o"),
                 "--batch-size", "many"]) == 2
    assert "--batch-size must be an int or 'auto', got 'many'" in capsys.readouterr().err
    for bad, msg in (("1.5", "must be strictly between 0 and 1, got '1.5'"),
                     ("half", "must be 'auto' or a number between 0 and 1, got 'half'")):
        assert main(["eval", str(tmp_path / "in.jsonl"), "--output-dir", str(tmp_path / "o"),
                     "--threshold", bad]) == 2
        assert f"argument --threshold: {msg}" in capsys.readouterr().err
    assert main(["eval", str(tmp_path / "in.jsonl"), "--output-dir", str(tmp_path / "o"),
                 "--threshold", "0.4"]) == 2  # 3-class scheme: argmax
    assert "threshold applies to the 2-class schemes" in capsys.readouterr().err
    # an empty field name is an error, not the default field
    for option in ("--claim-field", "--label-field", "--id-field", "--evidence-field"):
        assert main(["eval", str(tmp_path / "in.jsonl"), "--output-dir",
                     str(tmp_path / "o"), f"{option}="]) == 2
        assert f"{option} must name a field, got ''" in capsys.readouterr().err


def test_cli_load_documents_folder_and_jsonl(tmp_path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Paris is in France.")
    (tmp_path / "docs" / "b.md").write_text("Berlin is in Germany.")
    assert [d.source_id for d in load_documents(tmp_path / "docs")] == ["a.txt", "b.md"]
    (tmp_path / "d.jsonl").write_text('{"id": "x", "text": "hello there", "year": 1}\n\n')
    docs = load_documents(tmp_path / "d.jsonl")
    assert docs[0].source_id == "x" and docs[0].metadata == {"year": 1}
    (tmp_path / "bad.jsonl").write_text('{"id": "x"}\n')
    with pytest.raises(ValueError, match="bad.jsonl:1: not a document line"):
        load_documents(tmp_path / "bad.jsonl")


def test_cli_eval_end_to_end_with_tiny_model(tmp_path, tiny_nli_model, capsys) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text('{"claim": "paris is in france", "evidence": "paris is the capital of '
                   'france", "label": "SUPPORTS"}\n{"oops"\n')
    assert main(["eval", str(src), "--output-dir", str(tmp_path / "o"), "--model",
                 str(tiny_nli_model), "--device", "cpu", "--progress", "off"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n"] == 1 and summary["n_errors"] == 1
    assert (tmp_path / "o" / "confusion_matrix.png").stat().st_size > 1000
    assert (tmp_path / "o" / "reliability.png").exists()
    run = json.loads((tmp_path / "o" / "run.json").read_text())
    assert run["pairs_per_second"] > 0 and run["peak_memory_mb"] > 0
    assert summary["threshold"] is None and summary["threshold_source"] == "argmax (3-class)"
    assert main(["eval", str(src), "--output-dir", str(tmp_path / "o2"), "--model",
                 str(tiny_nli_model), "--progress", "off", "--no-plots", "--scheme",
                 "supported-not", "--threshold", "0.01"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["threshold"] == 0.01 and summary["threshold_source"] == "argument"
    assert summary["accuracy"] == 1.0  # p(e) of any pair is above 0.01: SUPPORTS


def test_cli_eval_hypothesis_sentences_reaches_the_detector(tmp_path, tiny_nli_model, capsys,
                                                            monkeypatch) -> None:
    from verifier import batch

    seen: list[bool | None] = []

    class Spy(batch._LocalScorer):
        def __init__(self, cfg: batch.EvalConfig) -> None:
            super().__init__(cfg)
            seen.append(self.detector.hypothesis_sentences)

    monkeypatch.setattr(batch, "_LocalScorer", Spy)
    src = tmp_path / "in.jsonl"
    src.write_text('{"claim": "Paris is in France. It is big.", "evidence": "paris is the '
                   'capital of france", "label": "SUPPORTS"}\n')
    for flag, want in (("auto", None), ("on", True), ("off", False)):
        assert main(["eval", str(src), "--output-dir", str(tmp_path / flag), "--model",
                     str(tiny_nli_model), "--progress", "off", "--no-plots",
                     "--hypothesis-sentences", flag]) == 0
        assert seen[-1] is want
        capsys.readouterr()
    assert main(["eval", str(src), "--output-dir", str(tmp_path / "x"),
                 "--hypothesis-sentences", "yes"]) == 2
    assert "argument --hypothesis-sentences: invalid choice: 'yes'" in capsys.readouterr().err


def test_cli_eval_exits_2_when_no_row_is_usable_naming_the_fields(tmp_path, tiny_nli_model,
                                                                   capsys) -> None:
    src = tmp_path / "in.csv"
    src.write_bytes(b"\xef\xbb\xbfclaim,proof,label\r\nc,e,SUPPORTS\r\n")  # Excel: BOM, CRLF
    args = ["--model", str(tiny_nli_model), "--device", "cpu", "--progress", "off", "--no-plots"]
    assert main(["eval", str(src), "--output-dir", str(tmp_path / "o"), *args]) == 2
    err = capsys.readouterr().err
    assert "verifier eval: error: no input row could be used: all 1 are in" in err
    assert "missing evidence field 'proof'" not in err  # the default field is 'evidence'
    assert "missing evidence field 'evidence'; the rows have the fields 'claim', 'proof', " \
           "'label'" in err
    assert (tmp_path / "o" / "errors.jsonl").read_text().count("\n") == 1
    assert main(["eval", str(src), "--output-dir", str(tmp_path / "o2"), "--evidence-field",
                 "proof", *args]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 1
    assert main(["eval", "--help"]) == 0
    assert "Exit status 2, after writing the outputs, when no row" in " ".join(
        capsys.readouterr().out.split())


def test_cli_index_then_ask_with_own_draft(tmp_path, tiny_embedding_model, capsys,
                                          monkeypatch) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text('{"id": "paris", "text": "Paris is the capital of France. The Seine flows '
                    'through Paris."}\n{"id": "berlin", "text": "Berlin is in Germany."}\n')
    idx = tmp_path / "idx"
    assert main(["index", str(docs), "--out", str(idx), "--embedding-model",
                 str(tiny_embedding_model), "--device", "cpu"]) == 0
    capsys.readouterr()
    assert main(["ask", "What is the capital of France?", "--index", str(idx), "--draft",
                 "Paris is the capital of France [1].", "--json", "--device", "cpu"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["draft"]["text"] == "Paris is the capital of France [1]."
    claim = res["claims"][0]
    assert claim["claim"]["text"] == "Paris is the capital of France."
    best = claim["evidence"][0]
    assert best["source_id"] == "paris" and best["span"] == [0, 31]
    # plain output: draft, claims, evidence with source id + span + text
    import sys

    import verifier.cli_rag

    # _print_result binds sys.stdout as a default at import time; point it at capsys
    monkeypatch.setattr(verifier.cli_rag._print_result, "__defaults__", (sys.stdout,))
    assert main(["ask", "What is the capital of France?", "--index", str(idx), "--draft",
                 "Paris is the capital of France [1]. Berlin is in Germany.", "--top-k", "2",
                 "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "Paris is the capital of France [1]. Berlin is in Germany." in out
    assert "paris [0, 31]" in out and "berlin [0, 21]" in out
    assert main(["ask", "q", "--index", str(idx), "--draft", "x y z", "--top-k", "0"]) == 2
    assert "argument --top-k: must be a whole number >= 1, got '0'" in capsys.readouterr().err
    assert main(["ask", "q", "--index", str(tmp_path / "nope"), "--draft", "x y z"]) == 2
    assert "verifier ask: error:" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_verify_writes_html_and_json(tmp_path, capsys) -> None:
    from verifier.demo import corpus_path

    draft = tmp_path / "draft.txt"
    draft.write_text("The Eiffel Tower was constructed from 1887 to 1889. "
                     "Marie Curie was born in Warsaw in 1867.")
    out = tmp_path / "r.html"
    assert main(["verify", "--draft", str(draft), "--docs", str(corpus_path()), "--format",
                 "html", "--out", str(out)]) == 0
    page = out.read_text()
    assert page.count('class="claim supported"') >= 2
    assert main(["verify", "--draft", str(draft), "--docs", str(corpus_path())]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["schema_version"] == "1" and [e["status"] for e in rep["edits"]] == [
        "Supported", "Supported"]
    assert {r["source_id"] for r in rep["references"]} == {"eiffel-tower", "marie-curie"}


def test_cli_decompose_reads_stdin_and_prints_spans(monkeypatch, capsys) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("Paris is in France [2]. You should go."))
    assert main(["decompose", "-"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("Paris is in France.") and lines[0].startswith("[0, ")
    assert "[recommendation] (not verifiable) You should go." in lines[1]


def test_cli_text_that_is_not_utf8_is_an_error_naming_where(monkeypatch, capsys) -> None:
    import io

    class Stdin(io.TextIOWrapper):  # the locale's decoder lets bad bytes through
        pass

    monkeypatch.setattr("sys.stdin", Stdin(io.BytesIO(b"The caf\xe9 is open."),
                                           encoding="utf-8", errors="surrogateescape"))
    assert main(["decompose", "-"]) == 2
    assert "TEXT -: stdin is not UTF-8 text" in capsys.readouterr().err
    # an argument with undecodable bytes (as Python hands them over: lone surrogates)
    assert main(["decompose", "The caf\udce9 is open."]) == 2
    assert "--text 'The caf\\udce9 is open.': not UTF-8 text" in capsys.readouterr().err


def test_cli_usage_errors_return_2(capsys) -> None:
    assert main([]) == 2
    assert "usage: verifier" in capsys.readouterr().err
    assert main(["ask"]) == 2
    assert "the following arguments are required" in capsys.readouterr().err
    assert main(["--help"]) == 0
    assert "decompose" in capsys.readouterr().out


def test_cli_subcommand_modules_are_pluggable(monkeypatch, capsys) -> None:
    import argparse
    import sys
    import types

    import verifier.cli as cli

    def add_subparser(sub: argparse._SubParsersAction) -> None:
        p = sub.add_parser("hello", help="say hello")
        p.add_argument("name")
        p.set_defaults(func=lambda args: print(f"hello {args.name}") or 0)
        p = sub.add_parser("eval", help="a plug-in eval")
        p.set_defaults(func=lambda args: 7)

    fake = types.ModuleType("fake_cli_plugin")
    fake.add_subparser = add_subparser  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_cli_plugin", fake)
    monkeypatch.setattr(cli, "_SUBCOMMAND_MODULES",
                        ("verifier.cli_rag", "verifier.no_such_module", "fake_cli_plugin"))
    assert main(["hello", "you"]) == 0
    assert capsys.readouterr().out == "hello you\n"
    assert main(["eval"]) == 7  # the plug-in's eval replaces the built-in one
    assert main(["decompose", "Paris is in France."]) == 0  # core commands still there


@pytest.mark.parametrize("strictness", ["lenient", "strict"])
def test_cli_verify_passes_strictness_to_verifier_and_mitigator(
        tmp_path, monkeypatch, capsys, strictness) -> None:
    from types import SimpleNamespace

    import rag.retrieval
    import verifier.nli
    import verifier.verify

    seen: dict[str, object] = {}

    class StubRetriever:
        documents: dict[str, str] = {}

        def __init__(self, *a, **k) -> None:
            pass

        def index(self, docs):
            return self

    class StubVerifier:
        def __init__(self, nli=None, **kwargs) -> None:
            seen.update(kwargs, nli=nli)

        def verify(self, draft, **kwargs):
            return SimpleNamespace(verdicts=[], timings={})

    monkeypatch.setattr(rag.retrieval, "HybridRetriever", StubRetriever)
    monkeypatch.setattr(verifier.verify, "Verifier", StubVerifier)
    monkeypatch.setattr(verifier.nli, "NLIDetector",
                        lambda *a, **k: SimpleNamespace(device=k.get("device")))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Paris is in France.")
    (tmp_path / "d.txt").write_text("Paris is in France.")
    assert main(["verify", "--draft", str(tmp_path / "d.txt"), "--docs", str(tmp_path / "docs"),
                 "--strictness", strictness, "--device", "cpu"]) == 0
    assert seen["strictness"] == strictness and seen["nli"].device == "cpu"
    assert seen["min_evidence_score"] == 0.15  # the default floor
    assert json.loads(capsys.readouterr().out)["strictness"] == strictness
    assert main(["verify", "--draft", str(tmp_path / "d.txt"), "--docs", str(tmp_path / "docs"),
                 "--min-evidence-score", "0"]) == 0
    assert seen["min_evidence_score"] == 0.0
    capsys.readouterr()
    for bad in ("1.5", "x"):
        assert main(["verify", "--draft", str(tmp_path / "d.txt"), "--docs",
                     str(tmp_path / "docs"), "--min-evidence-score", bad]) == 2
        assert "argument --min-evidence-score: must be" in capsys.readouterr().err


def test_cli_eval_exits_2_on_an_input_without_rows(tmp_path, tiny_nli_model, capsys) -> None:
    args = ["--model", str(tiny_nli_model), "--device", "cpu", "--progress", "off", "--no-plots"]
    for name, text in (("empty.jsonl", ""), ("header.csv", "id,claim,evidence,label\n")):
        (tmp_path / name).write_text(text)
        assert main(["eval", str(tmp_path / name), "--output-dir", str(tmp_path / name[:5]),
                     *args]) == 2
        assert "verifier eval: error: no input row could be used: the inputs hold no row at " \
               "all" in capsys.readouterr().err


def test_cli_eval_id_field_the_rows_lack_exits_2(tmp_path, capsys) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text('{"claim": "a", "evidence": "b", "label": "SUPPORTS"}\n')
    assert main(["eval", str(src), "--output-dir", str(tmp_path / "o"), "--id-field", "id"]) == 2
    assert "verifier eval: error: id field 'id' (--id-field, FieldMap.id) is not in the first " \
           "row" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_cli_eval_exits_2_when_another_run_holds_the_output_dir(tmp_path, capsys) -> None:
    fcntl = pytest.importorskip("fcntl")
    src = tmp_path / "in.jsonl"
    src.write_text('{"claim": "a", "evidence": "b", "label": "SUPPORTS"}\n')
    (tmp_path / "o").mkdir()
    with (tmp_path / "o" / ".lock").open("a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        assert main(["eval", str(src), "--output-dir", str(tmp_path / "o"), "--no-plots"]) == 2
    assert f"verifier eval: error: output_dir {str(tmp_path / 'o')!r} is in use by another " \
           f"run" in capsys.readouterr().err


def _fixed_scorer(pairs):
    import numpy as np

    return np.tile([0.7, 0.2, 0.1], (len(pairs), 1))


def test_cli_eval_label_map_names_class_numbers(tmp_path, monkeypatch, capsys) -> None:
    """Integer NLI labels under a 2-class scheme were read as binary (1, neutral, as
    SUPPORTS); they are error records unless --label-map (or the preset) says what they mean."""
    import verifier.batch

    monkeypatch.setattr(verifier.batch, "_LocalScorer", lambda cfg: _fixed_scorer)
    src = tmp_path / "nli.jsonl"
    src.write_text("".join(json.dumps({"id": str(i), "claim": "c", "evidence": "e",
                                       "label": i % 3}) + "\n" for i in range(3)))
    base = ["eval", str(src), "--scheme", "supported-not", "--no-plots", "--progress", "off"]
    assert main([*base, "--output-dir", str(tmp_path / "a")]) == 2
    assert "label 0 is ambiguous in scheme 'supported-not' (field 'label'): a class number" \
        in capsys.readouterr().err
    assert main([*base, "--output-dir", str(tmp_path / "b"), "--label-map",
                 "0=entailment, 1=neutral ,2=contradiction"]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 3
    golds = [json.loads(x)["gold"] for x in (tmp_path / "b/predictions.jsonl").open()]
    assert golds == ["SUPPORTS", "NOT_SUPPORTED", "NOT_SUPPORTED"]
    for bad in ("0", "0=e,", "=e", ""):
        assert main([*base, "--output-dir", str(tmp_path / "c"), "--label-map", bad]) == 2
        assert f"argument --label-map: must be RAW=LABEL pairs separated by commas, e.g. " \
               f"0=entailment,1=neutral,2=contradiction; got {bad!r}" in capsys.readouterr().err
    assert main([*base, "--output-dir", str(tmp_path / "c"), "--label-map", "0=maybe"]) == 2
    assert "label_map (--label-map, EvalConfig.label_map) maps '0' to 'maybe', which is no " \
           "label" in capsys.readouterr().err
    # a preset's own files read directly: its table says what its numbers mean
    summ = tmp_path / "summedits_x.json"
    summ.write_text(json.dumps([{"id": "a", "summary": "s", "doc": "d", "label": 1},
                                {"id": "b", "summary": "s", "doc": "d", "label": 0}]))
    assert main(["eval", str(summ), "--preset", "summedits", "--output-dir",
                 str(tmp_path / "s"), "--no-plots", "--progress", "off"]) == 0
    capsys.readouterr()
    golds = [json.loads(x)["gold"] for x in (tmp_path / "s/predictions.jsonl").open()]
    assert golds == ["SUPPORTS", "NOT_SUPPORTED"]


def test_cli_eval_refuses_an_output_dir_that_is_no_folder(tmp_path, monkeypatch,
                                                          capsys) -> None:
    """--output-dir "" wrote the outputs into the current folder (Path("") is "."), "  " into
    a folder named by two spaces, and a file gave '[Errno 17] File exists: ...'."""
    from verifier.batch import EvalConfig

    monkeypatch.chdir(tmp_path)
    src = tmp_path / "in.jsonl"
    src.write_text('{"claim": "a", "evidence": "b", "label": "SUPPORTS"}\n')
    under = str(src / "x")  # "[Errno 20] Not a directory", the option unnamed
    for bad, msg in (("", "must name a folder, got ''"), ("  ", "must name a folder, got '  '"),
                     (str(src), f"must name a folder, got the file {str(src)!r}"),
                     (under, f"must name a folder, got {under!r}, under the file "
                             f"{str(src)!r}")):
        assert main(["eval", str(src), "--output-dir", bad, "--no-plots"]) == 2
        assert f"argument --output-dir: {msg}" in capsys.readouterr().err
        assert main(["eval", "--preset", "fever", "--output-dir", bad]) == 2  # before inputs/
        capsys.readouterr()
        with pytest.raises(ValueError, match=re.escape(f"output_dir (--output-dir) {msg}")):
            EvalConfig([src], bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]
    # an empty name among the evidence fields: refused, not a 'missing field' every row
    assert main(["eval", str(src), "--output-dir", str(tmp_path / "o"),
                 "--evidence-field", "evidence,"]) == 2
    assert "fields.evidence (--evidence-field, FieldMap.evidence) names an empty field: " \
           "'evidence,'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_cli_eval_label_map_refuses_a_raw_label_given_twice(tmp_path, capsys) -> None:
    """--label-map SUPPORTS=REFUTES,SUPPORTS=SUPPORTS kept the last mapping only, silently."""
    src = tmp_path / "in.jsonl"
    src.write_text('{"claim": "a", "evidence": "b", "label": "SUPPORTS"}\n')
    for text, raw in (("SUPPORTS=REFUTES,SUPPORTS=SUPPORTS", "SUPPORTS"),
                      ("supports=REFUTES, SUPPORTS =SUPPORTS", "SUPPORTS"),
                      ("1=SUPPORTS,01=REFUTES", "01")):
        assert main(["eval", str(src), "--output-dir", str(tmp_path / "o"), "--no-plots",
                     "--label-map", text]) == 2
        assert f"argument --label-map: gives the raw label {raw!r} twice" in \
            capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_cli_eval_averitec_preset_scores_question_answer_evidence(tmp_path, monkeypatch,
                                                                  capsys) -> None:
    """The averitec preset scored each claim against the annotators' justification, which
    often states the verdict ("... so the claim is refuted"): a label leak."""
    import numpy as np

    import verifier.batch

    (tmp_path / "data" / "averitec").mkdir(parents=True)
    (tmp_path / "data" / "averitec" / "dev.json").write_text(json.dumps([
        {"claim": "The moon is made of cheese.", "label": "Refuted",
         "justification": "The answers show the moon is rock, so the claim is refuted.",
         "questions": [{"question": "What is the moon made of?",
                        "answers": [{"answer": "Rock and dust."}]}]}]))
    monkeypatch.setenv("NLI_VERIFIER_DATA", str(tmp_path / "data"))
    scored: list[tuple[str, str]] = []

    def scorer(pairs):
        scored.extend(pairs)
        return np.tile([0.2, 0.2, 0.6], (len(pairs), 1))

    monkeypatch.setattr(verifier.batch, "_LocalScorer", lambda cfg: scorer)
    assert main(["eval", "--preset", "averitec", "--output-dir", str(tmp_path / "o"),
                 "--no-plots", "--progress", "off"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == 1.0
    assert scored == [("What is the moon made of? Rock and dust.",
                       "The moon is made of cheese.")]
    (pred,) = [json.loads(x) for x in (tmp_path / "o/predictions.jsonl").open()]
    assert (pred["gold"], pred["line"]) == ("REFUTES", 1)
    assert pred["source"] == str(tmp_path / "data" / "averitec" / "dev.json")


def test_cli_eval_warns_when_a_presets_own_file_is_read_whole(tmp_path, monkeypatch,
                                                               caplog) -> None:
    # the file holds the preset's train split too, which the shipped models learnt from: its
    # scores were reported as they come, higher than on unseen data, unsaid
    import verifier.batch

    monkeypatch.setenv("NLI_VERIFIER_DATA", str(tmp_path / "data"))
    own = tmp_path / "data" / "fever-dev" / "fever_dev_rte_claim_evidence.jsonl"
    own.parent.mkdir(parents=True)
    own.write_text(json.dumps({"idx": 1, "claim": "c", "evidence": "e",
                               "label": "SUPPORTS"}) + "\n")
    other = tmp_path / "mine.jsonl"
    other.write_bytes(own.read_bytes())
    monkeypatch.setattr(verifier.batch, "_LocalScorer", lambda cfg: _fixed_scorer)
    for src, out, warned in ((own, "o1", True), (other, "o2", False)):
        caplog.clear()
        with caplog.at_level("WARNING", logger="verifier.cli"):
            assert main(["eval", str(src), "--preset", "fever", "--output-dir",
                         str(tmp_path / out), "--no-plots", "--progress", "off"]) == 0
        assert ("holds its train split" in caplog.text) is warned


def test_cli_eval_id_field_none_numbers_rows_with_a_preset(tmp_path, monkeypatch,
                                                           capsys) -> None:
    # with --preset the id field could not be turned off (--id-field "" was refused), and the
    # message said to "leave the id field out"
    import verifier.batch

    monkeypatch.setattr(verifier.batch, "_LocalScorer", lambda cfg: _fixed_scorer)
    src = tmp_path / "noid.jsonl"
    src.write_text("".join(json.dumps({"claim": "c", "evidence": "e", "label": "SUPPORTS"})
                           + "\n" for _ in range(2)))
    base = ["eval", str(src), "--preset", "fever-sym", "--no-plots", "--progress", "off"]
    assert main([*base, "--output-dir", str(tmp_path / "a")]) == 2
    assert "or give --id-field none to number rows FILE:LINE" in capsys.readouterr().err
    assert main([*base, "--output-dir", str(tmp_path / "b"), "--id-field", "none"]) == 0
    ids = [json.loads(x)["id"] for x in (tmp_path / "b/predictions.jsonl").open()]
    assert ids == ["noid.jsonl:1", "noid.jsonl:2"]


def test_cli_eval_split_all_is_refused_for_a_preset_without_a_train_split(tmp_path,
                                                                          capsys) -> None:
    # scifact's default file is its dev split: '--split all' scored it as the eval split,
    # unsaid (209 rows, not the 773 of train and dev)
    assert main(["eval", "--preset", "scifact", "--split", "all", "--output-dir",
                 str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "--split all: the scifact preset's files hold its eval split only" in err
    assert "covidfact, fever, frank, summedits" in err and not (tmp_path / "o").exists()
