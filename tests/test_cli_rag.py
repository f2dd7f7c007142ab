"""Input handling of the RAG subcommands (``index``, ``ask``, ``verify``)."""

from __future__ import annotations

import re

import pytest

from verifier.cli import main
from verifier.cli_rag import load_documents, read_draft


def test_load_documents_names_a_file_that_is_not_utf8(tmp_path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ok.txt").write_text("Paris is in France.")
    (tmp_path / "docs" / "latin1.txt").write_bytes("Café de Flore.".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.txt: not UTF-8 text"):
        load_documents(tmp_path / "docs")
    (tmp_path / "d.jsonl").write_bytes(b'{"text": "ok"}\n{"text": "caf\xe9"}\n')
    with pytest.raises(ValueError, match=r"d\.jsonl:2: not a document line: not UTF-8"):
        load_documents(tmp_path / "d.jsonl")


def test_load_documents_jsonl_without_ids_and_with_a_bom(tmp_path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('\ufeff{"text": "Paris is in France."}\n\n{"text": "Berlin is in '
                    'Germany."}\n{"id": 7, "text": "Rome is in Italy."}\n', encoding="utf-8")
    docs = load_documents(path)
    assert [d.source_id for d in docs] == ["d.jsonl:1", "d.jsonl:3", "7"]


def test_a_byte_order_mark_is_no_text_in_files_either(tmp_path) -> None:
    # stdin and JSONL dropped it already; a draft file or a .txt/.md document kept it, so the
    # first claim and the references began with an invisible character
    (tmp_path / "draft.txt").write_text("\ufeffThe tower is tall.", encoding="utf-8")
    assert read_draft(str(tmp_path / "draft.txt")) == "The tower is tall."
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("\ufeffParis is in France.", encoding="utf-8")
    assert [d.text for d in load_documents(tmp_path / "docs")] == ["Paris is in France."]


def test_index_refuses_a_chunk_size_under_one_by_its_option(tmp_path, capsys) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Paris is in France.")
    for bad in ("0", "-3", "ten"):
        assert main(["index", str(tmp_path / "docs"), "--out", str(tmp_path / "ix"),
                     "--chunk-chars", bad]) == 2
        assert f"argument --chunk-chars: must be a whole number >= 1, got '{bad}'" in \
            capsys.readouterr().err
    assert not (tmp_path / "ix").exists()


def test_ask_refuses_a_draft_with_self_correct(tmp_path, capsys) -> None:
    assert main(["ask", "q", "--index", str(tmp_path / "none"), "--draft", "Paris is big.",
                 "--self-correct"]) == 2
    assert "--draft and --self-correct exclude each other" in capsys.readouterr().err


def test_ask_passes_min_evidence_score_to_the_pipelines_pairer(tmp_path, capsys,
                                                                monkeypatch) -> None:
    import rag.pipeline
    import rag.retrieval

    seen: list[float] = []

    class Result:
        def to_dict(self) -> dict:
            return {"ok": True}

    def run(self, question, *, draft=None):  # type: ignore[no-untyped-def]
        seen.append(self.pairer.min_score)
        return Result()

    monkeypatch.setattr(rag.retrieval.HybridRetriever, "load",
                        classmethod(lambda cls, path, **kw: object()))
    monkeypatch.setattr(rag.pipeline.RAGPipeline, "run", run)
    assert main(["ask", "q", "--index", str(tmp_path), "--draft", "Paris is big.",
                 "--min-evidence-score", "0.4", "--json"]) == 0
    assert main(["ask", "q", "--index", str(tmp_path), "--draft", "Paris is big.",
                 "--json"]) == 0
    from rag.pairing import MIN_SCORE

    assert seen == [0.4, MIN_SCORE]
    with pytest.raises(ValueError, match="min_evidence_score"):
        rag.pipeline.RAGPipeline(object(), min_evidence_score=2.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(("line", "got"), [('["not", "an", "object"]', "an array"),
                                           ('"just a string"', "a string"), ("7", "a number")])
def test_index_jsonl_line_that_is_not_an_object_exits_2(tmp_path, capsys, line, got) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "d1", "text": "Paris is the capital of France."}\n' + line + "\n")
    with pytest.raises(ValueError, match=rf"docs.jsonl:2: not a document line: a JSON line must "
                                         rf"be an object, got {got}$"):
        load_documents(path)
    assert main(["index", str(path), "--out", str(tmp_path / "idx")]) == 2
    assert f"verifier index: error: {path}:2: not a document line: a JSON line must be an " \
           f"object, got {got}\n" == \
           capsys.readouterr().err


def test_read_draft_text_file_stdin_and_errors(tmp_path, monkeypatch) -> None:
    import io

    long_text = "Paris is the capital of France. " * 20  # 640 bytes: too long for a file name
    assert read_draft(long_text) == long_text
    assert read_draft("a\0b") == "a\0b"
    (tmp_path / "d.txt").write_text("Café.", encoding="utf-8")
    assert read_draft(str(tmp_path / "d.txt")) == "Café."
    monkeypatch.setattr("sys.stdin", io.StringIO("from stdin"))
    assert read_draft("-") == "from stdin"
    (tmp_path / "latin1.txt").write_bytes("Café.".encode("latin-1"))
    with pytest.raises(ValueError, match=rf"--draft '{tmp_path / 'latin1.txt'}': the file is "
                                         rf"not UTF-8 text"):
        read_draft(str(tmp_path / "latin1.txt"))
    # a mistyped path is an error, not a one-word draft
    for typo in ("drafft.txt", "notes/draft", str(tmp_path / "missing.md")):
        with pytest.raises(ValueError, match=rf"--draft '{re.escape(typo)}': no such file"):
            read_draft(typo)
    # a folder (with or without a slash) is not a draft
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    for folder in ("docs", "docs/", str(tmp_path / "docs")):
        with pytest.raises(ValueError, match=rf"--draft '{re.escape(folder)}': is a folder"):
            read_draft(folder)
    assert read_draft("Paris is in France.") == "Paris is in France."
    assert read_draft("The split was 50/50 in 2019.") == "The split was 50/50 in 2019."
    for empty in ("", "  "):  # Path("") is the working folder: the message says "empty"
        with pytest.raises(ValueError, match=rf"--draft '{empty}': empty"):
            read_draft(empty)


def test_ask_and_verify_take_a_long_inline_draft(tmp_path, capsys, monkeypatch) -> None:
    from types import SimpleNamespace

    import rag.pipeline
    import rag.retrieval
    import verifier.nli
    import verifier.verify

    long_text = "Paris is the capital of France. " * 20
    seen: list[str] = []

    class Result:
        def to_dict(self) -> dict:
            return {"ok": True}

    def run(self, question, *, draft=None):  # type: ignore[no-untyped-def]
        seen.append(draft)
        return Result()

    class StubRetriever:
        documents: dict[str, str] = {}

        def __init__(self, *a, **k) -> None:
            pass

        @classmethod
        def load(cls, path, **kw):  # type: ignore[no-untyped-def]
            return cls()

    class StubVerifier:
        def __init__(self, nli=None, **kwargs) -> None:
            pass

        def verify(self, draft, **kwargs):  # type: ignore[no-untyped-def]
            seen.append(draft)
            return SimpleNamespace(verdicts=[], timings={})

    monkeypatch.setattr(rag.retrieval, "HybridRetriever", StubRetriever)
    monkeypatch.setattr(rag.pipeline.RAGPipeline, "run", run)
    monkeypatch.setattr(verifier.verify, "Verifier", StubVerifier)
    monkeypatch.setattr(verifier.nli, "NLIDetector", lambda *a, **k: None)
    assert main(["ask", "q", "--index", str(tmp_path), "--draft", long_text, "--json"]) == 0
    assert main(["verify", "--draft", long_text, "--index", str(tmp_path)]) == 0
    assert seen == [long_text, long_text]
    capsys.readouterr()
    (tmp_path / "latin1.txt").write_bytes("Café.".encode("latin-1"))
    assert main(["verify", "--draft", str(tmp_path / "latin1.txt"), "--index",
                 str(tmp_path)]) == 2
    assert f"verifier verify: error: --draft '{tmp_path / 'latin1.txt'}': the file is not " \
           f"UTF-8 text" in capsys.readouterr().err


def test_load_documents_names_a_file_name_that_is_not_utf8(tmp_path) -> None:
    # it failed only when the report was written, naming neither the file nor the option
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ok.txt").write_text("Paris is in France.")
    (tmp_path / bytes(tmp_path / "docs").decode() / "caf\udce9.txt").write_text("Rome.")
    with pytest.raises(ValueError, match=r"caf\\udce9\.txt' in DOCS .*not UTF-8; rename it"):
        load_documents(tmp_path / "docs")


def test_verify_out_is_checked_first_and_replaced_whole(tmp_path, capsys) -> None:
    from verifier.batch import atomic_write

    assert main(["verify", "--draft", "Paris is big.", "--docs", str(tmp_path),
                 "--out", str(tmp_path / "nodir" / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "its folder does not exist" in err
    report = tmp_path / "r.json"
    report.write_text("the report before")
    atomic_write(report, "new")
    assert report.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["r.json"]
    with pytest.raises(UnicodeEncodeError):
        atomic_write(report, "caf\udce9")  # a name read from a file that is not UTF-8
    assert report.read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_verify_with_an_index_of_another_version_exits_2_naming_it(tmp_path, capsys) -> None:
    import json

    from rag.retrieval import BM25Retriever
    from verifier.types import Passage

    folder = tmp_path / "ix"
    BM25Retriever().index([Passage("Paris is in France.", "d1")]).save(folder)
    mf = folder / "manifest.json"
    manifest = json.loads(mf.read_text())
    mf.write_text(json.dumps({**manifest, "type": "retriever.hybrid.v1", "format_version": 2}))
    assert main(["verify", "--index", str(folder), "--draft", "Paris is in France."]) == 2
    err = capsys.readouterr().err
    assert f"index at '{folder}' has format version 2; this library reads format version 1; " \
           f"rebuild it with `verifier index DOCS --out {folder}`" in err
    mf.write_text(json.dumps({k: v for k, v in manifest.items() if k != "init_parameters"}
                             | {"type": "retriever.hybrid.v1"}))
    assert main(["verify", "--index", str(folder), "--draft", "Paris is in France."]) == 2
    assert "manifest.json has no 'init_parameters'" in capsys.readouterr().err


def test_ask_and_decompose_refuse_empty_text_naming_it(tmp_path, capsys, monkeypatch) -> None:
    import io

    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "blank.md").write_text(" \n\u200b\n")
    index = str(tmp_path / "no-index")  # refused before the index is read
    cases = [
        (["ask", "", "--index", index], "", "question '': empty (give the question"),
        (["ask", "  ", "--index", index, "--self-correct"], "", "question '  ': empty"),
        (["ask", "q", "--index", index, "--draft", "-"], "", "--draft -: stdin holds no text"),
        (["ask", "q", "--index", index, "--draft", "-"], " \n ", "--draft -: stdin holds no"),
        (["ask", "q", "--index", index, "--draft", str(tmp_path / "empty.txt")], "",
         f"--draft '{tmp_path / 'empty.txt'}': the file holds no text"),
        (["ask", "q", "--index", index, "--draft", str(tmp_path / "blank.md")], "",
         f"--draft '{tmp_path / 'blank.md'}': the file holds no text"),
        (["decompose", ""], "", "TEXT '': empty (give the text to split, or - for stdin)"),
        (["decompose", " \t"], "", "TEXT ' \\t': empty"),
        (["decompose", "-"], "", "TEXT -: stdin holds no text"),
        (["decompose", "-"], "\n\n", "TEXT -: stdin holds no text"),
        (["verify", "--draft", "-", "--index", index], "", "--draft -: stdin holds no text"),
    ]
    for argv, stdin, message in cases:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
        assert main(argv) == 2, argv
        captured = capsys.readouterr()
        assert message in captured.err and captured.out == "", (argv, captured.err)


def test_verify_out_that_is_a_folder_is_refused_before_the_work(tmp_path, capsys,
                                                                monkeypatch) -> None:
    """--out DIR did all the work, then failed with a raw OSError; the other --out message
    showed the path as PosixPath('...')."""
    import verifier.cli_rag

    def no_work(value):
        raise AssertionError("the draft was read before --out was checked")

    monkeypatch.setattr(verifier.cli_rag, "read_draft", no_work)
    (tmp_path / "outdir").mkdir()
    assert main(["verify", "--draft", "Paris is big.", "--docs", str(tmp_path),
                 "--out", str(tmp_path / "outdir")]) == 2
    assert f"verifier verify: error: --out {str(tmp_path / 'outdir')!r}: is a folder, not a " \
           f"file" in capsys.readouterr().err
    missing = tmp_path / "nodir" / "r.json"
    assert main(["verify", "--draft", "Paris is big.", "--docs", str(tmp_path),
                 "--out", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"--out {str(missing)!r}: its folder does not exist" in err and "PosixPath" not in err


def test_index_embedding_model_path_that_names_no_folder_is_refused(tmp_path, capsys,
                                                                    monkeypatch) -> None:
    """--embedding-model /nonexistent failed in the hub client ("Repo id must use
    alphanumeric chars"), naming neither the option nor the path."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Paris is in France.")
    monkeypatch.chdir(tmp_path)
    for bad in (str(tmp_path / "nonexistent"), "./nope", "../nope", "models/x/y"):
        assert main(["index", "docs", "--out", "ix", "--embedding-model", bad]) == 2
        assert f"verifier index: error: --embedding-model {bad!r}: no such folder" in \
            capsys.readouterr().err
    assert main(["index", "docs", "--out", "ix", "--embedding-model", "./docs/a.txt"]) == 2
    assert "--embedding-model './docs/a.txt': is a file, not a model folder" in \
        capsys.readouterr().err
    assert not (tmp_path / "ix").exists()
    # a hub id (namespace/name) and a folder that exists are handed on as given
    from verifier.cli_rag import _check_model_path

    for good in ("sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2", "docs",
                 str(tmp_path / "docs"), None):
        assert _check_model_path("--embedding-model", good) == good


def test_load_documents_keeps_line_ends_and_names_skipped_and_repeated(tmp_path,
                                                                         caplog) -> None:
    # a .txt read with newline translation had spans that did not slice the file on disk;
    # blank files were dropped unsaid, and a file of a zero-width space was indexed
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_bytes(b"Paris is big.\r\nBerlin is the capital of Germany.")
    (docs / "blank.txt").write_text("   \n")
    (docs / "zw.md").write_text("\u200b", encoding="utf-8")
    with caplog.at_level("WARNING", logger="verifier.cli_rag"):
        (doc,) = load_documents(docs)
    raw = (docs / "a.txt").read_bytes().decode("utf-8")
    assert doc.text == raw and "\r\n" in doc.text
    assert "2 file(s)" in caplog.text and "blank.txt" in caplog.text and "zw.md" in caplog.text
    path = tmp_path / "dup.jsonl"
    path.write_text('\n{"id": "x", "text": "a"}\n\n{"id": 1, "text": "b"}\n\n'
                    '{"id": "x", "text": "c"}\n{"id": "1", "text": "d"}\n')
    with pytest.raises(ValueError, match=r"dup\.jsonl:6: id 'x' repeats line 2$"):
        load_documents(path)
    path.write_text('{"id": 1, "text": "b"}\n{"id": "1", "text": "d"}\n')
    with pytest.raises(ValueError, match=r"dup\.jsonl:2: id '1' repeats line 1$"):
        load_documents(path)


def test_index_refuses_an_out_that_is_a_file_before_the_work(tmp_path, capsys,
                                                              monkeypatch) -> None:
    import verifier.cli_rag

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Paris is in France.")
    (tmp_path / "afile").write_text("x")
    read: list[object] = []
    monkeypatch.setattr(verifier.cli_rag, "load_documents", lambda p: read.append(p) or [])
    for out in ("afile", "afile/sub"):
        assert main(["index", str(tmp_path / "docs"), "--out", str(tmp_path / out)]) == 2
        assert f"--out '{tmp_path / out}': '{tmp_path / 'afile'}' is a file, not a folder" in \
            capsys.readouterr().err
    assert read == []  # refused before the documents were read


@pytest.mark.parametrize("option", ["--top-k", "--max-new-tokens"])
def test_ask_refuses_counts_under_one_by_their_option(tmp_path, capsys, option) -> None:
    # --max-new-tokens -5 was accepted with --draft; --top-k 0 failed after the index loaded,
    # naming top_k
    for bad in ("0", "-5"):
        assert main(["ask", "q", "--index", str(tmp_path / "none"), "--draft", "Paris is big.",
                     option, bad]) == 2
        assert f"argument {option}: must be a whole number >= 1, got '{bad}'" in \
            capsys.readouterr().err


def test_verify_refuses_a_blank_question_before_the_work(tmp_path, capsys) -> None:
    # " " failed after the models loaded ("query must not be empty"), "" was ignored unsaid
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("Paris is in France.")
    for bad in ("", " "):
        assert main(["verify", "--draft", "Paris is in France.", "--docs",
                     str(tmp_path / "docs"), "--question", bad]) == 2
        assert f"--question holds no text: {bad!r}" in capsys.readouterr().err
