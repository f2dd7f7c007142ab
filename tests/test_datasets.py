"""Data-set presets: the FEVER train / eval split and ``verifier eval --split``."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.datasets import _fever_key, _fever_sentences, _fever_sym_keys, data_root, load_preset


def _fever_root(tmp_path: Path, n_groups: int = 40) -> Path:
    """A data root with ``n_groups`` evidence groups of FEVER-style pairs and a FEVER-Sym file."""
    rows, idx = [], 0
    for g in range(n_groups):
        lead = f"Entity{g} is a 19{g:02d} film directed by Person{g} ."
        other = f"Entity{g} was released in country{g} ."
        for claim, ev, lab in (
            (f"Entity{g} is a film.", lead, "SUPPORTS"),
            (f"Entity{g} is a song.", lead, "REFUTES"),
            (f"Entity{g} was released in country{g}.", f"{other} . {lead}", "SUPPORTS"),
        ):
            rows.append({"idx": idx, "claim": claim, "evidence": ev, "label": lab})
            idx += 1
    (tmp_path / "fever-dev").mkdir()
    (tmp_path / "fever-dev" / "fever_dev_rte_claim_evidence.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "fever-symmetric").mkdir()
    # FEVER-Symmetric spells claims with a space before the full stop and -LRB- tokens
    (tmp_path / "fever-symmetric" / "symmetric_v0.2_fever_symmetric_test.jsonl").write_text(
        json.dumps({"claim": "Entity3 is a song .", "evidence": "x -LRB- y -RRB- .",
                    "label": "REFUTES"}) + "\n")
    (tmp_path / "fever-symmetric" / "symmetric_v0.1_fever_symmetric_full.jsonl").write_text(
        json.dumps({"claim": "Unrelated claim .", "label": "SUPPORTS",
                    "evidence_sentence": "Entity5 was released in country5 ."}) + "\n")
    return tmp_path


def test_fever_split_keeps_evidence_groups_whole_and_fever_sym_claims_in_eval(tmp_path) -> None:
    root = _fever_root(tmp_path)
    ex = load_preset("fever", root=root)
    assert len(ex) == 120
    by_entity: dict[str, set[str]] = defaultdict(set)
    for e in ex:
        by_entity[e.claim.split()[0]].add(e.split)
    # the three pairs of an entity share the lead sentence: never on both sides
    assert all(len(s) == 1 for s in by_entity.values())
    # linked to FEVER-Symmetric by a claim (Entity3) or an evidence sentence (Entity5)
    assert by_entity["Entity3"] == {"eval"} and by_entity["Entity5"] == {"eval"}
    n_train = sum(s == {"train"} for s in by_entity.values())
    assert 8 <= n_train <= 32, n_train  # md5 buckets >= 50: about half the groups
    # deterministic
    assert [e.split for e in load_preset("fever", root=root)] == [e.split for e in ex]
    assert len(load_preset("fever", "train", root=root)) == 3 * n_train


def test_fever_claims_stored_as_csv_fields_are_unescaped(tmp_path) -> None:
    root = _fever_root(tmp_path)
    path = root / "fever-dev" / "fever_dev_rte_claim_evidence.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    before = [(e.id, e.split) for e in load_preset("fever", root=root)]
    rows[0]["claim"] = '"Entity0 is called ""the film"" by critics."'
    rows[1]["claim"] = 'Entity0 is a "song" ""remix"".'  # not a whole field: as it is
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ex = load_preset("fever", root=root)
    assert ex[0].claim == 'Entity0 is called "the film" by critics.'
    assert ex[1].claim == 'Entity0 is a "song" ""remix"".'
    assert [(e.id, e.split) for e in ex] == before  # splits do not move


def test_preset_file_errors_name_the_file_and_line(tmp_path) -> None:
    root = _fever_root(tmp_path)
    path = root / "fever-dev" / "fever_dev_rte_claim_evidence.jsonl"
    good = path.read_text().splitlines()
    path.write_text("\n".join([good[0], good[1][:-5], *good[2:]]) + "\n")
    with pytest.raises(ValueError, match=rf"{re.escape(str(path))}:2: bad JSON"):
        load_preset("fever", root=root)
    path.write_text("\n".join([good[0], "[1, 2]", *good[2:]]) + "\n")
    with pytest.raises(ValueError, match=":2: a JSON object is needed, got list"):
        load_preset("fever", root=root)
    rows = [json.loads(line) for line in good]
    del rows[3]["label"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ValueError, match=rf"preset 'fever': {re.escape(str(path))}:4: the row "
                                         r"lacks the field 'label'"):
        load_preset("fever", root=root)


def test_fever_key_normalises_fever_spellings() -> None:
    assert _fever_key("Telemundo -LRB- TV -RRB- is a network .") == _fever_key(
        "Telemundo (TV) is a network.")
    assert _fever_sentences("A b . C d .") == ["ab", "cd"]


def test_cli_eval_preset_scores_the_eval_split_only(tmp_path, tiny_nli_model, monkeypatch,
                                                    capsys) -> None:
    (tmp_path / "data").mkdir()
    root = _fever_root(tmp_path / "data")
    monkeypatch.setenv("NLI_VERIFIER_DATA", str(root))
    n_eval = len(load_preset("fever", "eval", root=root))
    assert 0 < n_eval < 120
    common = ["--model", str(tiny_nli_model), "--device", "cpu", "--progress", "off",
              "--no-plots"]
    assert main(["eval", "--preset", "fever", "--output-dir", str(tmp_path / "o"), *common]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == n_eval
    preds = (tmp_path / "o" / "predictions.jsonl").read_text().splitlines()
    ids = {json.loads(line)["id"] for line in preds}
    assert ids == {e.id for e in load_preset("fever", "eval", root=root)}
    # --split all reads the preset through its loader too: a CSV-escaped claim is unescaped
    path = root / "fever-dev" / "fever_dev_rte_claim_evidence.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["claim"] = '"Entity0 is called ""the film"" by critics."'
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["eval", "--preset", "fever", "--split", "all", "--output-dir",
                 str(tmp_path / "all"), *common]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 120
    scored = (tmp_path / "all" / "inputs" / "fever_all.jsonl").read_text().splitlines()
    assert json.loads(scored[0])["claim"] == 'Entity0 is called "the film" by critics.'


def test_cli_eval_preset_fever_row_with_a_bad_claim_is_an_error_record(
        tmp_path, tiny_nli_model, monkeypatch, capsys) -> None:
    # rows whose evidence has several sentences: the claim must still be checked
    (tmp_path / "data").mkdir()
    root = _fever_root(tmp_path / "data", n_groups=2)
    path = root / "fever-dev" / "fever_dev_rte_claim_evidence.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(_fever_sentences(rows[2]["evidence"])) == 2
    del rows[2]["claim"]
    rows[5]["claim"] = 5
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("NLI_VERIFIER_DATA", str(root))
    assert main(["eval", "--preset", "fever", "--split", "all", "--output-dir",
                 str(tmp_path / "o"), "--model", str(tiny_nli_model), "--device", "cpu",
                 "--progress", "off", "--no-plots"]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 4
    errs = [json.loads(x) for x in (tmp_path / "o/errors.jsonl").read_text().splitlines()]
    assert [(e["source"], e["line"], e["reason"]) for e in errs] == [
        (str(path), 3, "the row lacks the field 'claim'"),
        (str(path), 6, "field 'claim' must be a string, got int (5)")]
    preds = [json.loads(x) for x in (tmp_path / "o/predictions.jsonl").read_text().splitlines()]
    assert [p["line"] for p in preds] == [1, 2, 4, 5]


def _real_fever() -> list:
    try:
        return load_preset("fever")
    except FileNotFoundError as exc:  # pragma: no cover - data lives outside the repository
        pytest.skip(f"FEVER data not available: {exc}")


def test_real_fever_split_has_no_leak_into_eval_or_fever_symmetric() -> None:
    ex = _real_fever()
    train = [e for e in ex if e.split == "train"]
    assert (len(train), len(ex) - len(train)) == (4898, 8434)
    groups: dict[str, set[str]] = defaultdict(set)
    sentence_split: dict[str, set[str]] = defaultdict(set)
    for e in ex:
        groups[e.meta["group"]].add(e.split)
        for s in _fever_sentences(e.evidence_text):
            sentence_split[s].add(e.split)
    assert all(len(s) == 1 for s in groups.values())
    assert all(len(s) == 1 for s in sentence_split.values())  # no evidence sentence on both sides
    sym = _fever_sym_keys(data_root())
    assert not any(_fever_key(e.claim) in sym for e in train)
    assert not any(k in sym for e in train for k in _fever_sentences(e.evidence_text))


def test_write_preset_split_rewrites_only_on_change(tmp_path, monkeypatch) -> None:
    from verifier.batch import write_preset_split

    (tmp_path / "data").mkdir()
    root = _fever_root(tmp_path / "data")
    monkeypatch.setenv("NLI_VERIFIER_DATA", str(root))
    path = write_preset_split("fever", "eval", tmp_path / "inputs")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["id"] for r in rows] == [e.id for e in load_preset("fever", "eval", root=root)]
    assert {r["label"] for r in rows} == {"SUPPORTS", "REFUTES"}
    mtime = path.stat().st_mtime_ns
    assert write_preset_split("fever", "eval", tmp_path / "inputs") == path
    assert path.stat().st_mtime_ns == mtime  # same content: untouched, so a run resumes
    path.write_text("stale\n")
    write_preset_split("fever", "eval", tmp_path / "inputs")
    assert path.read_text().splitlines()[0] == json.dumps(rows[0])


def test_fever_split_refuses_to_run_without_fever_symmetric(tmp_path) -> None:
    root = _fever_root(tmp_path)
    for f in (root / "fever-symmetric").iterdir():
        f.unlink()
    with pytest.raises(FileNotFoundError, match="needs the FEVER-Symmetric files"):
        load_preset("fever", root=root)


def test_cli_eval_split_without_preset_or_with_inputs_is_an_error(tmp_path, capsys) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text('{"claim": "a", "evidence": "b", "label": "SUPPORTS"}\n')
    assert main(["eval", str(src), "--output-dir", str(tmp_path / "o"), "--split", "all"]) == 2
    assert "--split applies to --preset without input files" in capsys.readouterr().err
    assert main(["eval", str(src), "--preset", "fever", "--output-dir", str(tmp_path / "o"),
                 "--split", "eval"]) == 2
    assert "got --split 'eval' with input files" in capsys.readouterr().err


def test_fold_of_keeps_rows_that_share_evidence_together(tmp_path: Path) -> None:
    from verifier.datasets import SUPPORTS, Example
    from verifier.training import fold_of

    root = _fever_root(tmp_path)
    fever = load_preset("fever", root=root)
    by_group: dict[str, set[int]] = defaultdict(set)
    for e in fever:
        by_group[e.meta["group"]].add(fold_of(e))
    assert all(len(f) == 1 for f in by_group.values())
    # without a group: the evidence text decides (a document's summaries stay in one fold)
    doc = "A long meeting transcript."
    rows = [Example(str(i), f"Summary {i}.", doc, SUPPORTS, "summedits", "train")
            for i in range(20)]
    assert len({fold_of(e) for e in rows}) == 1
    others = [Example(str(i), "Summary.", f"Document {i}.", SUPPORTS, "summedits", "train")
              for i in range(40)]
    assert {fold_of(e) for e in others} == set(range(5))
    assert {fold_of(e, folds=3) for e in others} == {0, 1, 2}
    for bad in (1, 0, True, 2.5):
        with pytest.raises(ValueError, match="folds must be an int >= 2, got"):
            fold_of(rows[0], folds=bad)  # type: ignore[arg-type]


def test_nli_holdout_splits_the_nli_training_sets_in_half_by_evidence() -> None:
    from verifier.datasets import NLI_TRAINING_PRESETS, SUPPORTS, Example
    from verifier.training import nli_holdout

    assert set(NLI_TRAINING_PRESETS) == {"fever", "healthver", "covidfact", "scifact"}
    docs = [f"Abstract {i}." for i in range(200)]
    rows = [Example(f"{i}-{j}", f"Claim {j}.", d, SUPPORTS, "healthver", "train")
            for i, d in enumerate(docs) for j in range(3)]
    held = [nli_holdout(e) for e in rows]
    assert 0.35 < sum(held) / len(held) < 0.65  # about half goes to the meta-classifier
    by_doc: dict[str, set[bool]] = defaultdict(set)
    for e, h in zip(rows, held, strict=True):
        by_doc[e.evidence_text].add(h)
    assert all(len(v) == 1 for v in by_doc.values())  # claims on one abstract: one side
    # a set the NLI model is not trained on: every row is out of sample already
    frank = [Example(str(i), "Summary.", d, SUPPORTS, "frank", "train") for i, d in enumerate(docs)]
    assert all(nli_holdout(e) for e in frank)


def test_sample_examples_filters_before_sampling(tmp_path: Path) -> None:
    from verifier import training

    root = _fever_root(tmp_path)
    everything = load_preset("fever", "train", root=root)
    odd = [e for e in everything if int(e.id) % 2]
    assert 0 < len(odd) < len(everything)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(training, "load_preset", lambda name, split: load_preset(name, split, root=root))
        got = training.sample_examples("fever", "train", None, where=lambda e: int(e.id) % 2 == 1)
        assert got == odd
        few = training.sample_examples("fever", "train", 2, where=lambda e: int(e.id) % 2 == 1)
        assert len(few) == 2 and all(e in odd for e in few)


def test_preset_written_whole_goes_through_the_loader(tmp_path, monkeypatch) -> None:
    # `verifier eval --preset fever --split all` reads this file: its claims are unescaped too
    from verifier.batch import write_preset_split

    root = _fever_root(tmp_path)
    path = root / "fever-dev" / "fever_dev_rte_claim_evidence.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["claim"] = '"Entity0 is called ""the film"" by critics."'
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("NLI_VERIFIER_DATA", str(root))
    out = write_preset_split("fever", None, tmp_path / "inputs")
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert out.name == "fever_all.jsonl" and len(written) == len(rows)
    assert written[0]["claim"] == 'Entity0 is called "the film" by critics.'


def test_preset_reports_a_bad_value_as_such_not_as_a_missing_field(tmp_path) -> None:
    (tmp_path / "averitec").mkdir()
    row = {"claim": "Water is wet.", "label": "Supported",
           "questions": [{"question": "Is water wet?", "answers": [{"answer": "Yes."}]}]}
    path = tmp_path / "averitec" / "dev.json"
    path.write_text(json.dumps([row]))
    (ex,) = load_preset("averitec", root=tmp_path)
    assert ex.evidence_text == "Is water wet? Yes."
    # an unknown label is named as a label (with its row), not as a missing field
    path.write_text(json.dumps([{**row, "label": "Mostly True"}]))
    with pytest.raises(ValueError, match=r"preset 'averitec': .*dev.json item 1: unknown label "
                                         r"'Mostly True'"):
        load_preset("averitec", root=tmp_path)
    # a nested row's missing field is one
    path.write_text(json.dumps([{**row, "questions": [{"answers": [{"answer": "Yes."}]}]}]))
    with pytest.raises(ValueError, match="lacks the field 'question'"):
        load_preset("averitec", root=tmp_path)


def test_averitec_conflicting_label_is_not_enough_info() -> None:
    from verifier.datasets import NEI, normalise_label

    # the loader and the batch preset read AVeriTeC's fourth label alike (it was an error row
    # in `verifier eval --preset averitec`)
    assert normalise_label("Conflicting Evidence/Cherrypicking") == NEI


def _frank_root(tmp_path: Path, rows: list) -> Path:
    """A data root with a FRANK file of ``rows`` (dicts are JSON lines, bytes written as is)."""
    (tmp_path / "frank").mkdir(parents=True)
    lines = [r if isinstance(r, bytes) else json.dumps(r).encode() for r in rows]
    (tmp_path / "frank" / "frank_doc_summary_label.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return tmp_path


def _frank_row(i: int, **kw: object) -> dict:
    return {"id": f"r{i}", "summary": "the cat is red .", "document": "a man and a dog .",
            "label": 1, "split": "test", "dataset": "x", **kw}


def test_preset_labels_and_splits_outside_their_tables_are_errors(tmp_path) -> None:
    from verifier.datasets import NOT_SUPPORTED, SUPPORTS

    root = _frank_root(tmp_path / "f", [_frank_row(0), _frank_row(1, label=0, split="val")])
    assert [(e.label, e.split) for e in load_preset("frank", root=root)] == [
        (SUPPORTS, "eval"), (NOT_SUPPORTED, "train")]
    path = root / "frank" / "frank_doc_summary_label.jsonl"
    for bad, match in (({"label": 1.9}, r"field 'label' must be one of \[0, 1\] \(an integer\), "
                                        r"got 1.9"),
                       ({"label": 2}, r"field 'label' must be one of \[0, 1\], got 2"),
                       ({"label": "1"}, r"field 'label' must be one of \[0, 1\] \(an "
                                        r"integer\), got '1'"),
                       ({"label": True}, r"field 'label' must be one of \[0, 1\] \(an "
                                         r"integer\), got True"),
                       ({"split": "Test"}, r"field 'split' must be one of \['test', 'val'\], "
                                           r"got 'Test'")):
        path.write_text(json.dumps(_frank_row(0)) + "\n" + json.dumps(_frank_row(1, **bad)) + "\n")
        with pytest.raises(ValueError, match=rf"preset 'frank': {re.escape(str(path))}:2: {match}"):
            load_preset("frank", root=root)
    # SummEdits: the same tables, its own split names
    (tmp_path / "s" / "summedits").mkdir(parents=True)
    summ = tmp_path / "s" / "summedits" / "summedits_news.json"
    row = {"id": "n0", "summary": "s", "doc": "d", "label": 0, "split": "evaluation"}
    summ.write_text(json.dumps([row, {**row, "id": "n1", "label": 1, "split": "test"}]))
    assert [(e.label, e.split) for e in load_preset("summedits", root=tmp_path / "s")] == [
        (NOT_SUPPORTED, "train"), (SUPPORTS, "eval")]
    summ.write_text(json.dumps([row, {**row, "split": "validation"}]))
    with pytest.raises(ValueError, match=r"summedits_news.json item 2: field 'split' must be one "
                                         r"of \['evaluation', 'test'\], got 'validation'"):
        load_preset("summedits", root=tmp_path / "s")
    # WiCE: its three labels as the data spells them; "Supported" is not read as not supported
    (tmp_path / "w" / "wice-dev").mkdir(parents=True)
    wice = tmp_path / "w" / "wice-dev" / "entailment_retrieval_claim_dev.jsonl"
    labels = ["supported", "partially_supported", "not_supported"]
    wice.write_text("".join(json.dumps({"claim": "c", "evidence": ["e"], "label": lab}) + "\n"
                            for lab in labels))
    assert [e.label for e in load_preset("wice", root=tmp_path / "w")] == [
        SUPPORTS, NOT_SUPPORTED, NOT_SUPPORTED]
    wice.write_text(json.dumps({"claim": "c", "evidence": ["e"], "label": "Supported"}) + "\n")
    with pytest.raises(ValueError, match=r"entailment_retrieval_claim_dev.jsonl:1: field 'label' "
                                         r"must be one of .*, got 'Supported'"):
        load_preset("wice", root=tmp_path / "w")
    # SciFact: entailment / not_entailment only
    (tmp_path / "sf" / "scifact").mkdir(parents=True)
    for name in ("train", "dev"):
        (tmp_path / "sf" / "scifact" / f"{name}.tsv").write_text(
            "index\tsentence1\tsentence2\tentailment\n0\tev\tcl\tnot_entailment\n"
            + ("1\tev\tcl\tENTAILMENT\n" if name == "dev" else ""))
    with pytest.raises(ValueError, match=r"dev.tsv:3: field 'entailment' must be one of "
                                         r"\['entailment', 'not_entailment'\], got 'ENTAILMENT'"):
        load_preset("scifact", root=tmp_path / "sf")


def test_preset_rows_that_cannot_be_read_name_their_file_and_line(tmp_path) -> None:
    from verifier.datasets import load_preset_rows

    root = _frank_root(tmp_path, [_frank_row(0), b"", b"{oops",
                                  b'{"id": "r3", "summary": "caf\xe9"}',
                                  _frank_row(4, split="val", label=7), _frank_row(5)])
    path = str(root / "frank" / "frank_doc_summary_label.jsonl")
    with pytest.raises(ValueError, match=rf"preset 'frank': {re.escape(path)}:2: empty line"):
        load_preset("frank", root=root)
    rows = load_preset_rows("frank", root=root)
    assert [(r.source, r.line, r.split, r.error and r.error[:24]) for r in rows] == [
        (path, 1, "eval", None), (path, 2, None, "empty line"),
        (path, 3, None, "bad JSON: Expecting prop"), (path, 4, None, "not UTF-8: byte 0xe9 on "),
        (path, 5, "train", "field 'label' must be on"), (path, 6, "eval", None)]
    assert rows[3].error == "not UTF-8: byte 0xe9 on line 4"
    # one split: the rows of the other split are left out, those of no known split kept
    assert [r.line for r in load_preset_rows("frank", "eval", root=root)] == [1, 2, 3, 4, 6]


def test_cli_eval_preset_rows_the_loader_cannot_use_are_error_records(
        tmp_path, tiny_nli_model, monkeypatch, capsys) -> None:
    root = _frank_root(tmp_path / "data", [
        _frank_row(0), b"", b"{oops", b'{"id": "r3", "summary": "caf\xe9"}',
        _frank_row(4, label=1.9), _frank_row(5, label=0), _frank_row(6, split="val")])
    monkeypatch.setenv("NLI_VERIFIER_DATA", str(root))
    path = str(root / "frank" / "frank_doc_summary_label.jsonl")
    common = ["--model", str(tiny_nli_model), "--device", "cpu", "--progress", "off",
              "--no-plots"]
    assert main(["eval", "--preset", "frank", "--output-dir", str(tmp_path / "o"), *common]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 2
    preds = [json.loads(x) for x in (tmp_path / "o/predictions.jsonl").read_text().splitlines()]
    errs = [json.loads(x) for x in (tmp_path / "o/errors.jsonl").read_text().splitlines()]
    assert [(p["id"], p["source"], p["line"]) for p in preds] == [("r0", path, 1),
                                                                    ("r5", path, 6)]
    assert [(e["source"], e["line"], e["reason"][:20]) for e in errs] == [
        (path, 2, "empty line"), (path, 3, "bad JSON: Expecting "),
        (path, 4, "not UTF-8: byte 0xe9"), (path, 5, "field 'label' must b")]
    assert errs[1]["raw"] == "{oops"
    # stopped before its last row and resumed: the same bytes as a run in one go
    import numpy as np

    from verifier import batch
    real_run_eval, calls = batch.run_eval, []

    def scorer(pairs):
        calls.append(len(pairs))
        if len(calls) == 2:  # line 6, after lines 1-5 are committed
            raise RuntimeError("killed")
        return np.array([[0.6, 0.3, 0.1]] * len(pairs))

    monkeypatch.setattr(batch, "run_eval", lambda cfg, **kw: real_run_eval(cfg, scorer=scorer,
                                                                           **kw))
    one_row = [*common, "--chunk-rows", "1"]
    with pytest.raises(RuntimeError, match="killed"):
        main(["eval", "--preset", "frank", "--output-dir", str(tmp_path / "r"), *one_row])
    assert json.loads((tmp_path / "r/state.json").read_text())["rows_done"] == 5
    assert len((tmp_path / "r/errors.jsonl").read_text().splitlines()) == 4
    for out in ("r", "c"):
        assert main(["eval", "--preset", "frank", "--output-dir", str(tmp_path / out),
                     *one_row]) == 0
    assert calls == [1, 1, 1, 1, 1]
    for name in ("predictions.jsonl", "errors.jsonl"):
        assert (tmp_path / "r" / name).read_bytes() == (tmp_path / "c" / name).read_bytes()
    monkeypatch.setattr(batch, "run_eval", real_run_eval)
    # --split all: the train row too
    capsys.readouterr()
    assert main(["eval", "--preset", "frank", "--split", "all", "--output-dir",
                 str(tmp_path / "all"), *common]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 3


def test_averitec_a_yes_no_answer_keeps_its_explanation() -> None:
    # "Has Syria complied with the Chemical Weapons Convention? No" was all the evidence
    from verifier.datasets import _averitec_example, _Row

    row = _Row({"claim": "Syria has no chemical weapons.", "label": "Refuted", "questions": [
        {"question": "Has Syria complied?", "answers": [
            {"answer": "No", "answer_type": "Boolean",
             "boolean_explanation": "Chemical weapons remain in its arsenal."},
            {"answer": "In 2013 it joined the convention.", "answer_type": "Extractive"}]}]})
    ex = _averitec_example(row, 0)
    assert ex.evidence == ("Has Syria complied? No. Chemical weapons remain in its arsenal.",
                           "Has Syria complied? In 2013 it joined the convention.")


def test_a_missing_data_folder_says_where_it_was_looked_for(tmp_path, monkeypatch, capsys
                                                           ) -> None:
    # from an installed wheel ../shared/data is inside the venv: the error was a bare
    # "[Errno 2] No such file or directory" that never named NLI_VERIFIER_DATA
    monkeypatch.setenv("NLI_VERIFIER_DATA", str(tmp_path / "none"))
    want = (f"preset 'frank': data file '{tmp_path / 'none'}/frank/"
            "frank_doc_summary_label.jsonl' not found (data folder: $NLI_VERIFIER_DATA=")
    with pytest.raises(FileNotFoundError, match=re.escape(want)):
        load_preset("frank")
    for preset in ("frank", "fever"):  # the CLI reads frank's files as given, fever's loaded
        assert main(["eval", "--preset", preset, "--output-dir", str(tmp_path / preset)]) == 2
        err = capsys.readouterr().err
        assert f"preset '{preset}': data file " in err
        assert "set NLI_VERIFIER_DATA to the folder holding the shared data" in err


def test_scifact_claims_written_as_escaped_csv_fields_are_read_as_text(tmp_path) -> None:
    # the file is read unquoted: '"Mouse models ... ""artificial spermatids."""' kept its
    # escaping (two train claims of the shared data)
    folder = tmp_path / "scifact"
    folder.mkdir()
    head = "index\tsentence1\tsentence2\tentailment\n"
    (folder / "train.tsv").write_text(
        head + '311\tSpermatid-like cells were made.\t"Mouse models can be generated using '
        '""artificial spermatids."""\tentailment\n'
        + '312\tHe said "no" twice.\tHe said "no".\tnot_entailment\n')
    (folder / "dev.tsv").write_text(head)
    ex = load_preset("scifact", root=tmp_path)
    assert [e.claim for e in ex] == ['Mouse models can be generated using "artificial '
                                     'spermatids."', 'He said "no".']
    assert ex[1].evidence == 'He said "no" twice.'
