"""Input handling of the RAG subcommands (``index``, ``ask``, ``verify``)."""

from __future__ import annotations

import pytest

from verifier.cli import main
from verifier.cli_rag import load_documents


def test_load_documents_names_a_file_that_is_not_utf8(tmp_path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ok.txt").write_text("Paris is in France.")
    (tmp_path / "docs" / "latin1.txt").write_bytes("Café de Flore.".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.txt: not UTF-8 text"):
        load_documents(tmp_path / "docs")
    (tmp_path / "d.jsonl").write_bytes(b'{"text": "ok"}\n{"text": "caf\xe9"}\n')
    with pytest.raises(ValueError, match=r"d\.jsonl:2: not UTF-8 text"):
        load_documents(tmp_path / "d.jsonl")


def test_load_documents_jsonl_without_ids_and_with_a_bom(tmp_path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('\ufeff{"text": "Paris is in France."}\n\n{"text": "Berlin is in '
                    'Germany."}\n{"id": 7, "text": "Rome is in Italy."}\n', encoding="utf-8")
    docs = load_documents(path)
    assert [d.source_id for d in docs] == ["d.jsonl:1", "d.jsonl:3", "7"]


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
