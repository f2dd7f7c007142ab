from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from verifier.batch import (
    CLASSES,
    THRESHOLDS_FILE,
    THRESHOLDS_FORMAT,
    EvalConfig,
    FieldMap,
    compute_metrics,
    decide,
    probabilities_for_scheme,
    read_rows,
    run_eval,
    stored_threshold,
)

GOOD = [
    {"id": "a", "claim": "paris is in france .", "evidence": "paris is the capital of france .",
     "label": "SUPPORTS"},
    {"id": "b", "claim": "london is in germany .", "evidence": ["london is in england .",
                                                               "berlin is in germany ."],
     "label": "REFUTES"},
    {"id": "c", "claim": "the dog is red .", "evidence": "a man and a dog .",
     "label": "NOT ENOUGH INFO"},
]


def _write_messy(path: Path) -> None:
    lines = [json.dumps(GOOD[0]).encode(),
             b"{not json",
             json.dumps({"id": "x", "evidence": "e", "label": "SUPPORTS"}).encode(),
             json.dumps({"id": "y", "claim": "  ", "evidence": "e", "label": "SUPPORTS"}).encode(),
             json.dumps({"id": "z", "claim": "c", "evidence": "e", "label": "MAYBE"}).encode(),
             b'{"id": "u", "claim": "caf\xe9", "evidence": "e", "label": "SUPPORTS"}',
             json.dumps(GOOD[1]).encode(),
             json.dumps(GOOD[2]).encode()]
    path.write_bytes(b"\n".join(lines) + b"\n")


def _fake_scorer(pairs):
    # Deterministic stand-in for the model: depends only on the texts.
    out = []
    for p, h in pairs:
        r = np.random.default_rng(abs(hash((p, h))) % (2**32))
        x = r.random(3) + 0.1
        out.append(x / x.sum())
    return np.array(out)


def test_batch_malformed_lines_go_to_errors_with_line_numbers(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    _write_messy(src)
    cfg = EvalConfig([src], tmp_path / "out", scheme="3class", plots=False)
    metrics = run_eval(cfg, scorer=_fake_scorer)
    preds = [json.loads(x) for x in (tmp_path / "out/predictions.jsonl").read_text().splitlines()]
    errs = [json.loads(x) for x in (tmp_path / "out/errors.jsonl").read_text().splitlines()]
    assert [p["line"] for p in preds] == [1, 7, 8]
    assert {e["line"]: e["reason"].split(":")[0] for e in errs} == {
        2: "bad JSON", 3: "missing claim field 'claim'", 4: "empty claim in field 'claim'",
        5: "unknown label 'MAYBE'", 6: "not UTF-8"}
    assert len(preds) + len(errs) == 8
    assert metrics["n"] == 3 and metrics["n_errors"] == 5


def test_batch_reads_csv_tsv_and_json(tmp_path) -> None:
    (tmp_path / "a.csv").write_text('id,claim,evidence,label\n1,"c, d",e,SUPPORTS\n2,x\n')
    rows = list(read_rows(tmp_path / "a.csv"))
    assert rows[0].record == {"id": "1", "claim": "c, d", "evidence": "e", "label": "SUPPORTS"}
    assert rows[1].error and "fields" in rows[1].error
    (tmp_path / "a.json").write_text(json.dumps(GOOD))
    assert [r.record["id"] for r in read_rows(tmp_path / "a.json")] == ["a", "b", "c"]
    (tmp_path / "a.tsv").write_text("claim\tevidence\tlabel\nc\te\trefutes\n")
    assert list(read_rows(tmp_path / "a.tsv"))[0].record["label"] == "refutes"
    with pytest.raises(ValueError, match="cannot tell the format"):
        list(read_rows(tmp_path / "a.txt"))


def test_batch_config_errors_name_the_value(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(GOOD[0]) + "\n")
    with pytest.raises(ValueError, match="scheme must be one of"):
        EvalConfig([src], tmp_path / "o", scheme="4class")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="batch_size must be a positive int or 'auto', got 0"):
        EvalConfig([src], tmp_path / "o", batch_size=0)
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        EvalConfig([tmp_path / "nope.jsonl"], tmp_path / "o")
    with pytest.raises(TypeError, match="hypothesis_sentences must be None or a bool, got 'on'"):
        EvalConfig([src], tmp_path / "o", hypothesis_sentences="on")  # type: ignore[arg-type]


def test_batch_output_dir_with_other_arguments_is_refused(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(g) + "\n" for g in GOOD))
    run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    with pytest.raises(ValueError, match="holds a run with other arguments"):
        run_eval(EvalConfig([src], tmp_path / "o", chunk_rows=7, plots=False),
                 scorer=_fake_scorer)


def test_batch_metrics_known_values() -> None:
    classes = ("SUPPORTS", "REFUTES")
    gold = ["SUPPORTS", "SUPPORTS", "REFUTES", "REFUTES"]
    pred = ["SUPPORTS", "REFUTES", "REFUTES", "REFUTES"]
    probs = np.array([[0.9, 0.1], [0.4, 0.6], [0.2, 0.8], [0.3, 0.7]])
    m = compute_metrics(gold, pred, probs, classes)
    assert m["accuracy"] == 0.75
    assert m["balanced_accuracy"] == 0.75
    assert m["confusion_matrix"]["matrix"] == [[1, 1], [0, 2]]
    assert m["auroc"] == 1.0
    assert 0 <= m["ece"] <= 1


def test_batch_scheme_probabilities() -> None:
    nli = np.array([[0.6, 0.3, 0.1]])
    np.testing.assert_allclose(probabilities_for_scheme(nli, "supports-refutes"),
                               [[6 / 7, 1 / 7]])
    np.testing.assert_allclose(probabilities_for_scheme(nli, "supported-not"), [[0.6, 0.4]])
    np.testing.assert_allclose(probabilities_for_scheme(nli, "3class"), [[0.6, 0.1, 0.3]])


def _eval_cmd(src: Path, out: Path, model: Path) -> list[str]:
    return [sys.executable, "-m", "verifier", "eval", str(src), "--output-dir", str(out),
            "--model", str(model), "--dtype", "float32", "--chunk-rows", "20",
            "--batch-size", "8", "--device", "cpu", "--no-plots"]


def test_batch_kill_9_and_resume_gives_identical_metrics(tmp_path, tiny_nli_model) -> None:
    src = tmp_path / "in.jsonl"
    rows = []
    for i in range(400):
        g = dict(GOOD[i % 3])
        g["id"] = str(i)
        g["claim"] = g["claim"] + " " + "the " * (i % 7)
        rows.append(json.dumps(g))
    rows[37] = "{broken"
    src.write_text("\n".join(rows) + "\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    full = tmp_path / "full"
    subprocess.run(_eval_cmd(src, full, tiny_nli_model), check=True, env=env,
                   capture_output=True)
    killed = tmp_path / "killed"
    proc = subprocess.Popen(_eval_cmd(src, killed, tiny_nli_model), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    state = killed / "state.json"
    while time.time() < deadline:
        if state.exists() and json.loads(state.read_text() or "{}").get("rows_done", 0) >= 60:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = json.loads(state.read_text())
    assert not done["done"], "the run finished before it could be killed"
    subprocess.run(_eval_cmd(src, killed, tiny_nli_model), check=True, env=env,
                   capture_output=True)
    assert (killed / "metrics.json").read_bytes() == (full / "metrics.json").read_bytes()
    assert (killed / "predictions.jsonl").read_bytes() == (full / "predictions.jsonl").read_bytes()
    n_out = sum(1 for _ in (killed / "predictions.jsonl").open()) + sum(
        1 for _ in (killed / "errors.jsonl").open())
    assert n_out == 400


def test_batch_ray_engine_matches_local(tmp_path, tiny_nli_model) -> None:
    pytest.importorskip("ray")
    import ray

    src = tmp_path / "in.jsonl"
    rows = [{**g, "id": f"{i}-{g['id']}"} for i in range(4) for g in GOOD]
    rows[5]["claim"] = "paris is in france . " * 300  # too long for the window: an error row
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    common = {"model": str(tiny_nli_model), "dtype": "float32", "device": "cpu",
              "batch_size": 4, "max_length": 128, "plots": False}
    local = run_eval(EvalConfig([src], tmp_path / "local", **common))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        # chunks of 8 rows: the actors (and their models) made once serve every chunk
        from verifier.batch_ray import RayScorer

        cfg = EvalConfig([src], tmp_path / "ray", engine="ray", ray_actors=2, chunk_rows=8,
                         **common)
        scorer = RayScorer(cfg)
        remote = run_eval(cfg, scorer=scorer)
        actors = scorer._actors
        assert actors is not None and len(actors) == 2
        scorer([("Paris is in France.", "Paris is in France.")])
        assert scorer._actors is actors
    finally:
        ray.shutdown()
    a = [json.loads(x) for x in (tmp_path / "local/predictions.jsonl").read_text().splitlines()]
    b = [json.loads(x) for x in (tmp_path / "ray/predictions.jsonl").read_text().splitlines()]
    assert [x["predicted"] for x in a] == [x["predicted"] for x in b]
    for x, y in zip(a, b, strict=True):
        for k in x["scores"]:
            assert abs(x["scores"][k] - y["scores"][k]) < 1e-4
    assert local["accuracy"] == remote["accuracy"]
    errs = [_lines(tmp_path / d / "errors.jsonl") for d in ("local", "ray")]
    assert [(e["line"], e["reason"]) for e in errs[0]] == [(e["line"], e["reason"])
                                                          for e in errs[1]]
    assert [e["line"] for e in errs[1]] == [6] and len(b) == len(rows) - 1


def test_batch_field_mapping_list_evidence(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"c": "x", "e1": "a", "e2": ["b", "c"], "l": "supported"}) + "\n")
    seen = []

    def scorer(pairs):
        seen.extend(pairs)
        return np.array([[0.8, 0.1, 0.1]] * len(pairs))

    run_eval(EvalConfig([src], tmp_path / "o", fields=FieldMap("c", "e1,e2", "l", None),
                        scheme="supported-not", plots=False), scorer=scorer)
    assert seen == [("a b c", "x")]


def test_batch_ensemble_mode_records_detector_scores(tmp_path, tiny_nli_model) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(g) + "\n" for g in GOOD) + json.dumps(
        {"claim": "paris is big .", "evidence": "paris is big .", "label": "SUPPORTS"}) + "\n")
    run_eval(EvalConfig([src], tmp_path / "o", mode="ensemble", model=str(tiny_nli_model),
                        device="cpu", dtype="float32", plots=False))
    preds = [json.loads(x) for x in (tmp_path / "o/predictions.jsonl").read_text().splitlines()]
    assert len(preds) == 4
    assert {"nli.entailment", "checks.findings", "match.exact"} <= set(preds[0]["scores"])
    assert preds[3]["scores"]["match.exact"] == 1.0 and preds[3]["predicted"] == "SUPPORTS"
    with pytest.raises(ValueError, match="local engine only"):
        EvalConfig([src], tmp_path / "p", mode="ensemble", engine="ray")


@pytest.mark.parametrize("scheme", ["3class", "supports-refutes", "supported-not"])
def test_batch_ensemble_predictions_are_the_verifiers_statuses(tmp_path, scheme) -> None:
    # probabilities where the most probable status is not the verifier's status: p(Supported)
    # reaches the meta-classifier's cut (0.41) below p(Contradictory); and a tie of the others
    rows = [[0.45, 0.05, 0.50], [0.30, 0.35, 0.35], [0.10, 0.20, 0.70], [0.37, 0.62, 0.01]]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"claim": f"claim {k} .", "evidence": "e .",
                                       "label": "SUPPORTS"}) + "\n" for k in range(4)))

    def scorer(pairs):  # (Supported, Insufficient_Info, Contradictory) rows, as the ensemble
        return np.array([rows[int(h.split()[1])] for _, h in pairs]), [{}] * len(pairs)

    m = run_eval(EvalConfig([src], tmp_path / scheme, mode="ensemble", scheme=scheme,
                            plots=False), scorer=scorer)
    pred = [json.loads(x)["predicted"] for x in (tmp_path / scheme / "predictions.jsonl").open()]
    # Verifier.decide: Supported iff p(Supported) >= 0.41, else Contradictory iff it is the
    # more probable of the other two (argmax said Contradictory, Insufficient, ...)
    statuses = ["Supported", "Insufficient_Info", "Contradictory", "Insufficient_Info"]
    if scheme == "3class":
        assert pred == [{"Supported": "SUPPORTS", "Contradictory": "REFUTES",
                         "Insufficient_Info": "NOT ENOUGH INFO"}[s] for s in statuses]
    else:
        assert pred == [CLASSES[scheme][0] if s == "Supported" else CLASSES[scheme][1]
                        for s in statuses]
    assert m["threshold"] == _shipped_cut()


def _thresholds_file(folder: Path, **overrides) -> Path:
    doc = {"format": THRESHOLDS_FORMAT,
           "schemes": {"supported-not": {"threshold": 0.3, "sets": ["frank"]},
                       "supports-refutes": {"threshold": 0.6, "sets": ["fever"]}},
           "presets": {"frank": {"threshold": 0.2, "scheme": "supported-not"}}}
    doc.update(overrides)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / THRESHOLDS_FILE).write_text(json.dumps(doc))
    return folder


def test_decide_applies_the_cut_on_two_class_schemes_only() -> None:
    p2 = np.array([[0.25, 0.75], [0.5, 0.5], [0.9, 0.1]])
    assert decide(p2, "supported-not") == ["NOT_SUPPORTED", "SUPPORTS", "SUPPORTS"]
    assert decide(p2, "supported-not", 0.2) == ["SUPPORTS"] * 3
    assert decide(p2, "supports-refutes", 0.6) == ["REFUTES", "REFUTES", "SUPPORTS"]
    p3 = np.array([[0.2, 0.5, 0.3]])
    assert decide(p3, "3class", None) == ["REFUTES"]


def test_stored_threshold_prefers_the_presets_own_cut(tmp_path) -> None:
    model = _thresholds_file(tmp_path / "m")
    cut, source = stored_threshold(str(model), "supported-not", "frank")
    assert cut == 0.2 and "preset frank" in source
    assert stored_threshold(str(model), "supported-not", "wice")[0] == 0.3
    assert stored_threshold(str(model), "supported-not")[0] == 0.3
    # a preset cut tuned for another scheme is not used
    assert stored_threshold(str(model), "supports-refutes", "frank")[0] == 0.6
    assert stored_threshold(str(model), "3class", "frank") is None
    assert stored_threshold(str(tmp_path / "no-file"), "supported-not") is None
    assert stored_threshold("org/hub-model-id", "supported-not") is None


def test_stored_threshold_bad_files_are_errors(tmp_path) -> None:
    with pytest.raises(ValueError, match="is not a thresholds file"):
        stored_threshold(str(_thresholds_file(tmp_path / "a", format="other")), "supported-not")
    bad = _thresholds_file(tmp_path / "b", schemes={"supported-not": {"threshold": 1.5}})
    with pytest.raises(ValueError, match=r"schemes.supported-not.threshold must be a number "
                                         r"strictly between 0 and 1, got 1.5"):
        stored_threshold(str(bad), "supported-not")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / THRESHOLDS_FILE).write_text("{oops")
    with pytest.raises(ValueError, match="cannot read the thresholds file"):
        stored_threshold(str(tmp_path / "c"), "supported-not")


def test_run_eval_threshold_decides_and_is_recorded(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in GOOD))
    model = _thresholds_file(tmp_path / "m")

    def scorer(pairs):  # p(e) = 0.25 for every pair
        return np.tile([0.25, 0.5, 0.25], (len(pairs), 1))

    def run(name: str, **kw):
        cfg = EvalConfig([src], tmp_path / name, scheme="supported-not", plots=False,
                         model=str(model), **kw)
        m = run_eval(cfg, scorer=scorer)
        preds = [json.loads(x) for x in (tmp_path / name / "predictions.jsonl").open()]
        return m, [p["predicted"] for p in preds]

    m, pred = run("default")
    assert pred == ["NOT_SUPPORTED"] * 3 and m["threshold"] == 0.3
    assert "scheme supported-not" in m["threshold_source"]
    m, pred = run("preset", preset="frank")
    assert pred == ["SUPPORTS"] * 3 and m["threshold"] == 0.2
    m, pred = run("given", threshold=0.25)
    assert pred == ["SUPPORTS"] * 3 and m["threshold_source"] == "argument"
    assert m["ece"] == pytest.approx(abs(0.25 - 1 / 3), abs=1e-6)  # conf = p(decided class)
    m, pred = run("ensemble", mode="ensemble")  # the verifier's cut, as its statuses
    assert m["threshold"] == _shipped_cut() and "meta-classifier" in m["threshold_source"]
    # the resolved cut is part of the run: another cut in the same folder is refused
    cfg = EvalConfig([src], tmp_path / "given", scheme="supported-not", plots=False,
                     model=str(model), threshold=0.4)
    with pytest.raises(ValueError, match="holds a run with other arguments"):
        run_eval(cfg, scorer=scorer)


@pytest.mark.parametrize("kw, match", [
    ({"threshold": 1.0, "scheme": "supported-not"}, "threshold must be a number strictly "
                                                    "between 0 and 1, got 1.0"),
    ({"threshold": True, "scheme": "supported-not"}, "threshold must be a number"),
    ({"threshold": 0.4, "scheme": "3class"}, "threshold applies to the 2-class schemes"),
    ({"preset": "nope"}, "unknown preset 'nope'"),
])
def test_eval_config_threshold_errors(tmp_path, kw, match) -> None:
    (tmp_path / "in.jsonl").write_text(json.dumps(GOOD[0]) + "\n")
    with pytest.raises(ValueError, match=match):
        EvalConfig([tmp_path / "in.jsonl"], tmp_path / "out", **kw)


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_batch_claim_too_long_for_the_window_is_one_error_row(tmp_path, tiny_nli_model) -> None:
    src = tmp_path / "in.jsonl"
    long_claim = "paris is in france . " * 300
    src.write_text("".join(json.dumps(r) + "\n" for r in (
        GOOD[0], {**GOOD[1], "claim": long_claim}, GOOD[2])))
    cfg = EvalConfig([src], tmp_path / "o", model=str(tiny_nli_model), device="cpu",
                     dtype="float32", max_length=128, plots=False)
    metrics = run_eval(cfg)
    preds, errs = _lines(tmp_path / "o/predictions.jsonl"), _lines(tmp_path / "o/errors.jsonl")
    assert [p["line"] for p in preds] == [1, 3]
    assert [(e["line"], e["source"]) for e in errs] == [(2, str(src))]
    assert errs[0]["reason"].startswith("cannot score: the pair has a hypothesis of ")
    assert "pairs[" not in errs[0]["reason"] and long_claim in errs[0]["raw"]
    assert metrics["n"] == 2 and metrics["n_errors"] == 1
    state = json.loads((tmp_path / "o/state.json").read_text())
    assert state["done"] and state["rows_done"] == 3 and state["pairs_scored"] == 2


def test_batch_bad_input_in_a_chunk_isolates_rows_and_resumes(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    rows = [{**GOOD[i % 3], "id": str(i), "claim": f"claim {i} ."} for i in range(23)]
    for i in (4, 5, 17):
        rows[i]["claim"] = f"BAD {i}"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    calls: list[int] = []

    def scorer(pairs):
        calls.append(len(pairs))
        for k, (_, h) in enumerate(pairs):
            if h.startswith("BAD"):
                raise ValueError(f"pairs[{k}] is bad")
        return _fake_scorer(pairs)

    cfg = EvalConfig([src], tmp_path / "o", chunk_rows=10, plots=False)
    run_eval(cfg, scorer=scorer)
    preds, errs = _lines(tmp_path / "o/predictions.jsonl"), _lines(tmp_path / "o/errors.jsonl")
    assert [e["line"] for e in errs] == [5, 6, 18]
    assert errs[0]["reason"] == "cannot score: the pair is bad"
    assert [p["line"] for p in preds] == [i + 1 for i in range(23) if i not in (4, 5, 17)]
    assert len(calls) < 3 * 23  # halves, not one call per row
    # a run stopped by another error after its first chunk resumes to the same bytes
    def crashing(pairs):
        if any(not h.startswith("BAD") and int(h.split()[1]) >= 10 for _, h in pairs):
            raise RuntimeError("a bug, not bad input")  # propagates: not taken for bad rows
        return scorer(pairs)

    with pytest.raises(RuntimeError, match="a bug"):
        run_eval(EvalConfig([src], tmp_path / "r", chunk_rows=10, plots=False),
                 scorer=crashing)
    assert json.loads((tmp_path / "r/state.json").read_text())["rows_done"] == 10
    run_eval(EvalConfig([src], tmp_path / "r", chunk_rows=10, plots=False), scorer=scorer)
    for name in ("predictions.jsonl", "errors.jsonl", "metrics.json"):
        assert (tmp_path / "r" / name).read_bytes() == (tmp_path / "o" / name).read_bytes()


def test_batch_arithmetic_error_of_a_row_is_its_error_record(tmp_path) -> None:
    # a value in one row's text that overflows a computation ("1e400") spoils that row only
    src = tmp_path / "in.jsonl"
    rows = [{**GOOD[i % 3], "id": str(i), "claim": f"claim {i} ."} for i in range(5)]
    rows[2]["claim"] = "HUGE 1e400"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def scorer(pairs):
        if any(h.startswith("HUGE") for _, h in pairs):
            raise OverflowError(34, "Numerical result out of range")
        return _fake_scorer(pairs)

    run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=scorer)
    preds, errs = _lines(tmp_path / "o/predictions.jsonl"), _lines(tmp_path / "o/errors.jsonl")
    assert [e["line"] for e in errs] == [3] and errs[0]["reason"].startswith("cannot score")
    assert [p["line"] for p in preds] == [1, 2, 4, 5]


def test_batch_input_inside_the_output_folder_is_refused(tmp_path) -> None:
    # an input named as one of the run's own files was truncated before it was read
    out = tmp_path / "o"
    out.mkdir()
    for name in ("predictions.jsonl", "errors.jsonl", "metrics.json"):
        src = out / name
        src.write_text(json.dumps(GOOD[0]) + "\n")
        with pytest.raises(ValueError, match=f"input .*{name}.* is one of the files the run "
                                             "writes in output_dir"):
            EvalConfig([src], out, plots=False)
        assert src.read_text() == json.dumps(GOOD[0]) + "\n"
    with pytest.raises(ValueError, match="inputs name a folder, not a file"):
        EvalConfig([tmp_path], tmp_path / "p")
    # an input of the same name elsewhere is fine
    (tmp_path / "predictions.jsonl").write_text(json.dumps(GOOD[0]) + "\n")
    EvalConfig([tmp_path / "predictions.jsonl"], out, plots=False)


def test_batch_csv_bad_byte_spoils_its_row_only(tmp_path) -> None:
    lines = [b"id,claim,evidence,label"]
    lines += [f"{i},claim {i} .,evidence {i} .,SUPPORTS".encode() for i in range(1, 1001)]
    lines[500] = b"500,caf\xe9 500,evidence 500 .,SUPPORTS"  # file line 501
    lines[700] = b'700,"a claim\nover two lines",evidence,SUPPORTS'  # file lines 701-702
    src = tmp_path / "in.csv"
    src.write_bytes(b"\n".join(lines) + b"\n")
    rows = list(read_rows(src))
    assert len(rows) == 1000
    bad = [r for r in rows if r.error]
    assert [(r.line, r.error) for r in bad] == [(501, "not UTF-8: byte 0xe9 on line 501")]
    assert bad[0].raw == "500,caf\ufffd 500,evidence 500 .,SUPPORTS"
    assert rows[699].line == 701 and rows[699].record["claim"] == "a claim\nover two lines"
    assert rows[700].line == 703 and rows[700].record["id"] == "701"
    run_eval(EvalConfig([src], tmp_path / "o", scheme="supported-not", plots=False),
             scorer=_fake_scorer)
    preds, errs = _lines(tmp_path / "o/predictions.jsonl"), _lines(tmp_path / "o/errors.jsonl")
    assert len(preds) == 999 and [e["line"] for e in errs] == [501]
    # a bad byte in a small file is an error row too, not the end of the run
    (tmp_path / "t.tsv").write_bytes(b"claim\tevidence\tlabel\nc\xe9\te\tSUPPORTS\nc\te\tx\n")
    assert [r.error for r in read_rows(tmp_path / "t.tsv")] == [
        "not UTF-8: byte 0xe9 on line 2", None]


def test_batch_utf8_bom_is_dropped(tmp_path) -> None:
    bom = b"\xef\xbb\xbf"
    (tmp_path / "a.csv").write_bytes(bom + b"claim,evidence,label\r\nc,e,SUPPORTS\r\n")
    (tmp_path / "a.jsonl").write_bytes(bom + json.dumps(GOOD[0]).encode() + b"\n")
    (tmp_path / "a.json").write_bytes(bom + json.dumps(GOOD).encode())
    assert [r.record for r in read_rows(tmp_path / "a.csv")] == [
        {"claim": "c", "evidence": "e", "label": "SUPPORTS"}]
    assert [r.record for r in read_rows(tmp_path / "a.jsonl")] == [GOOD[0]]
    assert [r.record for r in read_rows(tmp_path / "a.json")] == GOOD


def test_batch_no_usable_row_names_the_fields_the_rows_have(tmp_path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("Claim,evidence,label\nc,e,SUPPORTS\nd,e,REFUTES\n")
    with pytest.raises(ValueError, match=r"no input row could be used: all 2 .*in.csv:2: "
                                         r"missing claim field 'claim'; the rows have the "
                                         r"fields 'Claim', 'evidence', 'label'"):
        run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    assert len(_lines(tmp_path / "o/errors.jsonl")) == 2  # the outputs are written first
    assert (tmp_path / "o/metrics.json").exists()


def test_batch_bad_json_file_is_an_error_row_and_the_run_goes_on(tmp_path) -> None:
    good = tmp_path / "ok.jsonl"
    good.write_text(json.dumps(GOOD[0]) + "\n")
    bad = tmp_path / "bad.json"
    bad.write_text('[{"claim": "a", "evidence": "b", "label": "SUPPORTS"},\n {"claim": x}]')
    (tmp_path / "obj.json").write_text(json.dumps(GOOD[0], indent=2))  # not JSON Lines
    metrics = run_eval(EvalConfig([good, bad, tmp_path / "obj.json"], tmp_path / "o",
                                  plots=False), scorer=_fake_scorer)
    assert metrics["n"] == 1 and metrics["n_errors"] == 2
    errs = _lines(tmp_path / "o/errors.jsonl")
    assert (errs[0]["source"], errs[0]["line"], errs[0]["raw"]) == (str(bad), 2,
                                                                   ' {"claim": x}]')
    assert errs[0]["reason"].startswith("bad JSON: Expecting value: line 2 column 12")
    assert "the whole .json file was skipped" in errs[0]["reason"]
    assert errs[1]["source"] == str(tmp_path / "obj.json")
    assert "must hold an array of objects, got a JSON object" in errs[1]["reason"]


def test_batch_null_id_and_non_string_claim(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({**GOOD[0], "id": None}) + "\n"
                   + json.dumps({**GOOD[1], "claim": 123}) + "\n"
                   + json.dumps({**GOOD[2], "evidence": {"a": 1}}) + "\n")
    run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    assert [p["id"] for p in _lines(tmp_path / "o/predictions.jsonl")] == ["in.jsonl:1"]
    assert [e["reason"] for e in _lines(tmp_path / "o/errors.jsonl")] == [
        "claim field 'claim' must be a string, got a number (123)",
        "evidence field 'evidence' must be a string or a list of strings, got an object "
        "({'a': 1})"]


def test_batch_lone_surrogate_is_an_error_row_and_the_run_goes_on(tmp_path,
                                                                  tiny_nli_model) -> None:
    # valid JSON, not text: the tokenizer refused the claim (TypeError) and the id could not
    # be written as UTF-8, each ending the run and every resume of it
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(GOOD[0]) + "\n"
                   + '{"id": "x\\ud800", "claim": "the dog is red .", "evidence": "a dog .", '
                     '"label": "REFUTES"}\n'
                   + '{"id": "3", "claim": "the cat \\udc00 is red .", "evidence": "a dog .", '
                     '"label": "REFUTES"}\n'
                   + '{"id": "4", "claim": "a cat .", "evidence": ["ok .", "\\udfff"], '
                     '"label": "REFUTES"}\n'
                   + json.dumps(GOOD[2]) + "\n")
    cfg = EvalConfig([src], tmp_path / "o", model=str(tiny_nli_model), device="cpu",
                     dtype="float32", max_length=128, plots=False)
    metrics = run_eval(cfg)
    assert metrics["n"] == 2 and metrics["n_errors"] == 3
    preds, errs = _lines(tmp_path / "o/predictions.jsonl"), _lines(tmp_path / "o/errors.jsonl")
    assert [p["line"] for p in preds] == [1, 5]
    assert [(e["line"], e["reason"]) for e in errs] == [
        (2, "not valid Unicode: id field 'id' holds a lone surrogate U+D800 (a JSON escape "
            "such as \\ud800) at character 1"),
        (3, "not valid Unicode: claim field 'claim' holds a lone surrogate U+DC00 (a JSON "
            "escape such as \\ud800) at character 8"),
        (4, "not valid Unicode: evidence field 'evidence' (item 1) holds a lone surrogate "
            "U+DFFF (a JSON escape such as \\ud800) at character 0")]
    # a .json array keeps the row's text as parsed: still written, as a JSON escape
    arr = tmp_path / "in.json"
    arr.write_text('[{"id": "x\\ud800", "claim": "c", "evidence": "e", "label": "SUPPORTS"}, '
                   + json.dumps(GOOD[0]) + "]")
    metrics = run_eval(EvalConfig([arr], tmp_path / "a", plots=False), scorer=_fake_scorer)
    assert metrics["n"] == 1 and metrics["n_errors"] == 1
    err = _lines(tmp_path / "a/errors.jsonl")[0]
    assert err["line"] == 1 and err["reason"].startswith("not valid Unicode: id field 'id'")
    assert json.loads(err["raw"])["id"] == "x\ud800"


def test_batch_second_run_into_the_same_output_dir_fails_fast(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(g) + "\n" for g in GOOD))
    cfg = EvalConfig([src], tmp_path / "o", chunk_rows=1, plots=False)
    seen: list[str] = []

    def scorer(pairs):  # a second run starts while the first is scoring
        if not seen:
            with pytest.raises(BlockingIOError) as exc:
                run_eval(cfg, scorer=_fake_scorer)
            seen.append(str(exc.value))
        return _fake_scorer(pairs)

    metrics = run_eval(cfg, scorer=scorer)
    assert seen == [f"output_dir {str(tmp_path / 'o')!r} is in use by another run (it holds "
                    f"the lock on {str(tmp_path / 'o' / '.lock')!r}); wait for it to end, or "
                    f"use another output_dir"]
    assert metrics["n"] == 3 and len(_lines(tmp_path / "o/predictions.jsonl")) == 3
    assert run_eval(cfg, scorer=_fake_scorer)["n"] == 3  # the lock is released at the end


def test_batch_lock_in_another_process_refuses_the_run(tmp_path) -> None:
    pytest.importorskip("fcntl")
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(GOOD[0]) + "\n")
    (tmp_path / "o").mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
         "fcntl.flock(f, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(60)",
         str(tmp_path / "o" / ".lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        with pytest.raises(BlockingIOError, match="is in use by another run"):
            run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
        assert not (tmp_path / "o" / "predictions.jsonl").exists()
    finally:
        holder.kill()
        holder.wait()
    assert run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)["n"] == 1


def test_batch_csv_field_over_the_csv_default_limit_is_read_whole(tmp_path) -> None:
    import csv

    big = "word " * 30000  # 150,000 characters: over csv's default limit of 131,072
    src = tmp_path / "in.csv"
    src.write_text(f'id,claim,evidence,label\n1,the claim,"{big}\nTable:\n'
                   f'q3,revenue rose,revenue fell,REFUTES\nend of document",SUPPORTS\n'
                   f'2,c2,e2,SUPPORTS\n')
    limit = csv.field_size_limit()
    rows = list(read_rows(src))
    assert [(r.line, r.error) for r in rows] == [(2, None), (6, None)]
    assert rows[0].record["evidence"].endswith("REFUTES\nend of document")
    assert len(rows[0].record["evidence"]) > 150000
    assert csv.field_size_limit() == limit  # process-global: restored
    metrics = run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    assert metrics["n"] == 2 and metrics["n_errors"] == 0


def test_batch_resume_refuses_an_output_deleted_or_shortened(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(g) + "\n" for g in GOOD) + "{bad\n")
    cfg = EvalConfig([src], tmp_path / "o", chunk_rows=2, plots=False)
    run_eval(cfg, scorer=_fake_scorer)
    pred = tmp_path / "o" / "predictions.jsonl"
    size = pred.stat().st_size
    pred.unlink()  # truncate() padded it with NUL bytes and counted its rows as done
    with pytest.raises(ValueError, match=rf"cannot be resumed: predictions.jsonl holds 0 bytes, "
                                         rf"fewer than the {size} its state.json counts.*"
                                         rf"delete the folder, or use another output_dir"):
        run_eval(cfg, scorer=_fake_scorer)
    assert not pred.exists()
    cfg = EvalConfig([src], tmp_path / "e", chunk_rows=2, plots=False)
    run_eval(cfg, scorer=_fake_scorer)
    errs = tmp_path / "e" / "errors.jsonl"
    errs.write_bytes(errs.read_bytes()[:-5])
    with pytest.raises(ValueError, match="cannot be resumed: errors.jsonl holds"):
        run_eval(cfg, scorer=_fake_scorer)


def test_batch_csv_header_repeating_a_column_is_an_error(tmp_path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("id,claim,evidence,evidence,label\n1,c,first part,second part,SUPPORTS\n")
    why = ("the header (line 1) repeats the column name 'evidence' (columns 3 and 4); "
           "rename one")
    assert [(r.line, r.record, r.error) for r in read_rows(src)] == [(1, None, why),
                                                                      (2, None, why)]
    with pytest.raises(ValueError, match=r"in.csv:1: the header \(line 1\) repeats the "
                                         r"column name 'evidence'"):
        run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    (tmp_path / "in.tsv").write_text("a\tb\ta\tc\ta\n1\t2\t3\t4\t5\n")
    assert list(read_rows(tmp_path / "in.tsv"))[1].error == (
        "the header (line 1) repeats the column name 'a' (columns 1, 3 and 5); rename one")


def test_batch_empty_input_is_an_error(tmp_path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "header.csv").write_text("id,claim,evidence,label\n")
    with pytest.raises(ValueError, match=r"no input row could be used: the inputs hold no row "
                                         r"at all \('.*empty.jsonl'\)"):
        run_eval(EvalConfig([tmp_path / "empty.jsonl"], tmp_path / "o", plots=False),
                 scorer=_fake_scorer)
    assert (tmp_path / "o" / "metrics.json").exists()  # the outputs are written first
    with pytest.raises(ValueError, match="hold no row at all .*a CSV/TSV file needs a header "
                                         "line and a row under it"):
        run_eval(EvalConfig([tmp_path / "header.csv"], tmp_path / "h", plots=False),
                 scorer=_fake_scorer)


def test_batch_id_field_missing_from_the_first_row_is_an_error(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("{oops\n" + json.dumps({k: v for k, v in GOOD[0].items() if k != "id"})
                   + "\n")
    with pytest.raises(ValueError, match=r"id field 'idd' \(--id-field, FieldMap.id\) is not "
                                         r"in the first row, .*in.jsonl:2, whose fields are "
                                         r"'claim', 'evidence', 'label'"):
        run_eval(EvalConfig([src], tmp_path / "o", fields=FieldMap(id="idd"), plots=False),
                 scorer=_fake_scorer)
    assert not (tmp_path / "o" / "predictions.jsonl").exists()
    # the default 'id' may be absent: rows are then named FILE:LINE
    run_eval(EvalConfig([src], tmp_path / "d", plots=False), scorer=_fake_scorer)
    assert [p["id"] for p in _lines(tmp_path / "d/predictions.jsonl")] == ["in.jsonl:2"]


def test_batch_tsv_reads_fields_quoted_as_csv_writes_them_and_keeps_stray_quotes(
        tmp_path) -> None:
    import csv

    src = tmp_path / "written.tsv"
    with src.open("w", newline="", encoding="utf-8") as fh:  # as csv and pandas.to_csv write
        w = csv.writer(fh, delimiter="\t")
        w.writerow(["id", "claim", "evidence", "label"])
        w.writerow(["1", 'He said "no" to the deal.', "He refused the deal.", "SUPPORTS"])
        w.writerow(["2", "Line one\nline two", "a\ttab", "SUPPORTS"])
        w.writerow(["3", '"Quoted" at the start', "e", "REFUTES"])
    assert [(r.line, r.record) for r in read_rows(src)] == [
        (2, {"id": "1", "claim": 'He said "no" to the deal.', "evidence": "He refused the deal.",
             "label": "SUPPORTS"}),
        (3, {"id": "2", "claim": "Line one\nline two", "evidence": "a\ttab", "label": "SUPPORTS"}),
        (5, {"id": "3", "claim": '"Quoted" at the start', "evidence": "e", "label": "REFUTES"})]
    # a plain tab-separated file (FEVER-style) with quotes as text: read as it was
    plain = tmp_path / "plain.tsv"
    plain.write_text('id\tclaim\tevidence\tlabel\n'
                     '1\t"Van Gogh" bundles exist.\tHe said "no".\tSUPPORTS\n'
                     '2\t"unclosed quote\tev\tREFUTES\n'
                     '3\tx"\tev"\tSUPPORTS\n'
                     '4\tok\tok\tREFUTES\n')
    assert [(r.line, r.record["claim"], r.record["evidence"]) for r in read_rows(plain)] == [
        (2, '"Van Gogh" bundles exist.', 'He said "no".'), (3, '"unclosed quote', "ev"),
        (4, 'x"', 'ev"'), (5, "ok", "ok")]


def test_batch_csv_blank_lines_before_the_header(tmp_path) -> None:
    src = tmp_path / "in.csv"
    src.write_text("\n\r\nid,claim,evidence,label\n1,c,e,SUPPORTS\n")
    rows = list(read_rows(src))
    assert [(r.line, r.error) for r in rows] == [
        (1, "empty line (before the header)"), (2, "empty line (before the header)"), (4, None)]
    assert rows[2].record == {"id": "1", "claim": "c", "evidence": "e", "label": "SUPPORTS"}


def test_batch_csv_stray_quote_is_an_error_and_the_rows_after_it_are_read(tmp_path,
                                                                         caplog) -> None:
    import csv

    src = tmp_path / "in.csv"
    src.write_text('id,claim,evidence,label\n'
                   '1,"paris is in france,paris is the capital,SUPPORTS\n'
                   '2,london is in germany,london is in england,REFUTES\n'
                   '3,"the dog" is red,a man and a dog,REFUTES\n'
                   '4,ok,ok,SUPPORTS\n')
    with caplog.at_level("WARNING", logger="verifier.batch"):
        rows = list(read_rows(src))
    # the lines with a quote are errors; line 3, a row of its own, is read (it was an error)
    assert [(r.line, r.record is None) for r in rows] == [(2, True), (3, False), (4, True),
                                                          (5, False)]
    assert all("a quote opened on line 2 ran to line 4" in rows[k].error for k in (0, 2))
    assert rows[1].record == {"id": "2", "claim": "london is in germany",
                              "evidence": "london is in england", "label": "REFUTES"}
    assert "line 2 opens a quote that runs to line 4" in caplog.text
    # a quote never closed: every row after it was an error record, and the run exited 0
    src.write_text('id,claim,evidence,label\n1,"Paris is big,a city,NOT ENOUGH INFO\n'
                   + "".join(f"{i},c{i},e{i},SUPPORTS\n" for i in range(2, 9)))
    rows = list(read_rows(src))
    assert [r.line for r in rows if r.record is None] == [2]
    assert [r.record["id"] for r in rows if r.record] == [str(i) for i in range(2, 9)]
    # a quote closed on a later line, csv's record has the wrong number of fields, and each
    # line it joined has the header's: each line holds a quote, each is an error
    src.write_text('id,claim,evidence,label\n1,"abc,def,ghi\nx",y,z,REFUTES\n3,ok,ok,REFUTES\n')
    rows = list(read_rows(src))
    assert [(r.line, r.record is None) for r in rows] == [(2, True), (3, True), (4, False)]
    assert "a quote opened on line 2 ran to line 3" in rows[0].error
    # the quote closes before a comma and csv parses a row of the header's width: that is what
    # csv.writer writes for the field "abc,def,SUPPORTS\n2,x", so it is one row, as csv and
    # pandas read it (a warning says that each line would be a row too)
    src.write_text('id,claim,evidence,label\n1,"abc,def,SUPPORTS\n2,x",y,REFUTES\n')
    with caplog.at_level("WARNING", logger="verifier.batch"):
        assert [(r.line, r.record) for r in read_rows(src)] == [
            (2, {"id": "1", "claim": "abc,def,SUPPORTS\n2,x", "evidence": "y",
                 "label": "REFUTES"})]
    assert "lines 2-3 are read as one row" in caplog.text
    # a field csv quoted over two lines is one row, as written
    with src.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "claim", "evidence", "label"])
        w.writerow(["1", "line one\nline two", 'He said "no".', "SUPPORTS"])
    assert [(r.line, r.record) for r in read_rows(src)] == [
        (2, {"id": "1", "claim": "line one\nline two", "evidence": 'He said "no".',
             "label": "SUPPORTS"})]


def test_batch_json_lines_python_cannot_parse_are_error_rows(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(GOOD[0]) + "\n" + '{"claim": ' + "[" * 100_000 + "\n"
                   + '{"claim": ' + "9" * 5000 + "}\n" + json.dumps(GOOD[1]) + "\n")
    rows = list(read_rows(src))
    assert [(r.line, r.record is None) for r in rows] == [(1, False), (2, True), (3, True),
                                                          (4, False)]
    assert rows[1].error == "bad JSON: nested too deeply to parse"
    assert rows[2].error.startswith("bad JSON: Exceeds the limit")
    whole = tmp_path / "in.json"
    whole.write_text("[" * 100_000)
    assert [(r.line, r.error) for r in read_rows(whole)] == [
        (1, "bad JSON: nested too deeply to parse; the whole .json file was skipped (it is "
            "parsed as one array, or as JSON Lines when its first line is a JSON object)")]


def test_batch_json_lines_saved_as_json_are_read_line_by_line(tmp_path) -> None:
    """A JSON Lines file named *.json was one error record for the whole file ('bad JSON:
    Extra data ...; the whole .json file was skipped'): every row lost to the metrics."""
    src = tmp_path / "data.json"
    src.write_bytes(b"\xef\xbb\xbf\n" + json.dumps(GOOD[0]).encode() + b"\r\n{bad\n\n"
                    + json.dumps(GOOD[1]).encode() + b"\n[1]\n"
                    + json.dumps(GOOD[2]).encode())
    rows = list(read_rows(src))
    assert [(r.line, r.error and r.error[:12]) for r in rows] == [
        (1, "empty line"), (2, None), (3, "bad JSON: Ex"), (4, "empty line"), (5, None),
        (6, "a JSON line "), (7, None)]
    assert [r.record["id"] for r in rows if r.record] == ["a", "b", "c"]
    m = run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    assert (m["n"], m["n_errors"]) == (3, 4)
    one = tmp_path / "one.json"  # JSON Lines of one line: one row, as with two
    one.write_text(json.dumps(GOOD[0]) + "\n")
    assert [r.record for r in read_rows(one)] == [GOOD[0]]
    # an array, and a file that is neither an array nor JSON Lines, as before
    arr = tmp_path / "arr.json"
    arr.write_text(json.dumps(GOOD, indent=1))
    assert [r.record for r in read_rows(arr)] == GOOD
    broken = tmp_path / "broken.json"
    broken.write_text("[\n" + json.dumps(GOOD[0]) + "\n" + json.dumps(GOOD[1]) + "\n]\n")
    rows = list(read_rows(broken))
    assert len(rows) == 1 and rows[0].line == 3 and rows[0].error.startswith(
        "bad JSON: Expecting ',' delimiter: line 3 column 1")


def test_batch_one_file_given_twice_is_refused(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(g) + "\n" for g in GOOD))
    again = tmp_path / "sub" / ".." / "in.jsonl"
    (tmp_path / "sub").mkdir()
    with pytest.raises(ValueError, match="inputs name one file twice: .*in.jsonl.*sub/../in"):
        EvalConfig([src, again], tmp_path / "o")


def test_batch_resume_refusal_names_what_changed_and_bad_state(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(g) + "\n" for g in GOOD))
    run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    with pytest.raises(ValueError, match=r"other arguments or inputs \(chunk_rows: \d+ then, "
                                         r"7 now\)"):
        run_eval(EvalConfig([src], tmp_path / "o", chunk_rows=7, plots=False),
                 scorer=_fake_scorer)
    (tmp_path / "o" / "state.json").write_text("")
    with pytest.raises(ValueError, match=r"state.json' cannot be read \(Expecting value"):
        run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    (tmp_path / "o" / "state.json").write_text(json.dumps({"version": 1}))
    with pytest.raises(ValueError, match=r"holds a run of state version 1, this version "
                                         r"writes 2: it cannot be resumed"):
        run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    # no state.json, results in the folder: a fresh run wrote over them, unsaid
    (tmp_path / "o" / "state.json").unlink()
    before = (tmp_path / "o" / "predictions.jsonl").read_bytes()
    with pytest.raises(ValueError, match=r"holds predictions\.jsonl \(\d+ bytes\), .*but no "
                                         r"state\.json .*they are not written over"):
        run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    assert (tmp_path / "o" / "predictions.jsonl").read_bytes() == before
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "errors.jsonl").write_text("notes\n")
    with pytest.raises(ValueError, match=r"holds errors\.jsonl \(6 bytes\) but no state"):
        run_eval(EvalConfig([src], tmp_path / "mine", plots=False), scorer=_fake_scorer)
    (tmp_path / "mine" / "errors.jsonl").write_text("")  # empty: nothing to lose
    run_eval(EvalConfig([src], tmp_path / "mine", plots=False), scorer=_fake_scorer)


def test_batch_utf16_input_is_refused_and_invisible_claims_are_errors(tmp_path) -> None:
    src = tmp_path / "in.tsv"
    src.write_bytes("id\tclaim\tevidence\tlabel\n1\tc\te\tSUPPORTS\n".encode("utf-16"))
    with pytest.raises(ValueError, match="in.tsv' is UTF-16 or UTF-32 text .*iconv"):
        EvalConfig([src], tmp_path / "o")
    src = tmp_path / "in.jsonl"
    rows = [{"claim": "\u200b\u200b", "evidence": "e", "label": "SUPPORTS"},
            {"claim": "\u0000", "evidence": "e", "label": "SUPPORTS"},
            {"claim": "c", "evidence": "\u200b", "label": "SUPPORTS"}, GOOD[0]]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    metrics = run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    assert metrics["n"] == 1 and metrics["n_errors"] == 3
    reasons = [e["reason"] for e in _lines(tmp_path / "o/errors.jsonl")]
    assert reasons[0].startswith("empty claim in field 'claim'")
    assert reasons[1].startswith("empty claim in field 'claim'")
    assert reasons[2].startswith("empty evidence in field 'evidence'")


def test_batch_csv_multiline_quoted_field_with_commas_is_one_row(tmp_path) -> None:
    import csv

    src = tmp_path / "in.csv"
    with src.open("w", newline="", encoding="utf-8") as fh:  # as csv and pandas write it
        w = csv.writer(fh)
        w.writerow(["claim", "evidence", "label"])
        # each line of the quoted field has the header's number of commas
        w.writerow(["Paris is big", "Paris, the capital.\nIt has 2 million, people", "SUPPORTS"])
        w.writerow(["Berlin is small", "Berlin is big", "REFUTES"])
    rows = list(read_rows(src))
    assert [(r.line, r.error) for r in rows] == [(2, None), (4, None)]
    assert rows[0].record["evidence"] == "Paris, the capital.\nIt has 2 million, people"
    m = run_eval(EvalConfig([src], tmp_path / "o", scheme="supports-refutes", plots=False),
                 scorer=_fake_scorer)
    assert (m["n"], m["n_errors"]) == (2, 0)


def test_batch_ids_missing_empty_or_repeated_are_error_records(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    rows = [{**GOOD[0], "uid": "a"}, {**GOOD[1]}, {**GOOD[2], "uid": ""},
            {**GOOD[0], "uid": "b"}, {**GOOD[1], "uid": "a"}, {**GOOD[2], "uid": "c"}]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def run(out: str, **kw):
        m = run_eval(EvalConfig([src], tmp_path / out, fields=FieldMap(id="uid"), plots=False,
                                **kw), scorer=_fake_scorer)
        return m, _lines(tmp_path / out / "predictions.jsonl"), _lines(
            tmp_path / out / "errors.jsonl")

    m, preds, errs = run("o")
    assert [(p["id"], p["line"]) for p in preds] == [("a", 1), ("b", 4), ("c", 6)]
    assert [(e["line"], e["reason"]) for e in errs] == [
        (2, "missing id field 'uid' (--id-field, FieldMap.id): every row needs an id"),
        (3, "empty id in field 'uid'"),
        (5, f"duplicate id 'a' (id field 'uid'): the row on {src}:1 has it already")]
    assert (m["n"], m["n_errors"]) == (3, 3)
    # stopped after its first three rows and resumed, the run still finds that row 5 repeats
    # row 1's id: the same bytes as a run in one go
    calls: list[int] = []

    def crashing(pairs):
        calls.append(len(pairs))
        if len(calls) == 2:  # row 4, after rows 1-3 are committed
            raise RuntimeError("killed")
        return _fake_scorer(pairs)

    with pytest.raises(RuntimeError, match="killed"):
        run_eval(EvalConfig([src], tmp_path / "r", fields=FieldMap(id="uid"), chunk_rows=1,
                            plots=False), scorer=crashing)
    assert json.loads((tmp_path / "r" / "state.json").read_text())["rows_done"] == 3
    run_eval(EvalConfig([src], tmp_path / "r", fields=FieldMap(id="uid"), chunk_rows=1,
                        plots=False), scorer=_fake_scorer)
    run("c", chunk_rows=1)
    for name in ("predictions.jsonl", "errors.jsonl"):
        assert (tmp_path / "r" / name).read_bytes() == (tmp_path / "c" / name).read_bytes()
    # an empty id cell is an error with the default id field too
    csv_src = tmp_path / "ids.csv"
    csv_src.write_text("id,claim,evidence,label\n,c,e,SUPPORTS\n7,a,b,SUPPORTS\n7,c,d,REFUTES\n")
    run_eval(EvalConfig([csv_src], tmp_path / "d", scheme="supports-refutes", plots=False),
             scorer=_fake_scorer)
    assert [p["id"] for p in _lines(tmp_path / "d/predictions.jsonl")] == ["7"]
    assert [(e["line"], e["reason"]) for e in _lines(tmp_path / "d/errors.jsonl")] == [
        (2, "empty id in field 'id'"),
        (4, f"duplicate id '7' (id field 'id'): the row on {csv_src}:3 has it already")]


def test_batch_fallback_ids_of_inputs_sharing_a_base_name_use_their_paths(tmp_path) -> None:
    paths = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        paths.append(tmp_path / folder / "x.jsonl")
        paths[-1].write_text("".join(json.dumps({k: v for k, v in g.items() if k != "id"})
                                     + "\n" for g in GOOD[:2]))
    (tmp_path / "y.jsonl").write_text(json.dumps(GOOD[2] | {"id": None}) + "\n")
    m = run_eval(EvalConfig([*paths, tmp_path / "y.jsonl"], tmp_path / "o", plots=False),
                 scorer=_fake_scorer)
    assert m["n_errors"] == 0
    assert [p["id"] for p in _lines(tmp_path / "o/predictions.jsonl")] == [
        f"{paths[0]}:1", f"{paths[0]}:2", f"{paths[1]}:1", f"{paths[1]}:2", "y.jsonl:1"]


def test_batch_scorer_rows_that_are_not_probabilities_are_error_records(tmp_path) -> None:
    from verifier.errors import ConfigurationError

    src = tmp_path / "in.jsonl"
    rows = [{**GOOD[i % 3], "id": str(i), "claim": f"claim {i} ."} for i in range(8)]
    rows[2]["claim"], rows[5]["claim"], rows[6]["claim"] = "NAN", "BIG", "SUM"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))

    calls = []

    def scorer(pairs):
        calls.append(len(pairs))
        out = _fake_scorer(pairs)
        for k, (_, h) in enumerate(pairs):
            out[k] = {"NAN": [np.nan, 0.5, 0.5], "BIG": [1.5, -0.25, -0.25],
                      "SUM": [0.5, 0.5, 0.5]}.get(h, out[k])
        return out

    m = run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=scorer)
    assert calls == [8]  # the bad rows are known from the one call: nothing scored again
    text = (tmp_path / "o/predictions.jsonl").read_text()
    assert "NaN" not in text  # every line is valid JSON
    errs = _lines(tmp_path / "o/errors.jsonl")
    assert [e["line"] for e in errs] == [3, 6, 7]
    assert errs[0]["reason"] == ("cannot score: the scorer returned the probabilities "
                                 "[nan, 0.5, 0.5] for the pair: a value that is not finite")
    assert "a value outside [0, 1]" in errs[1]["reason"]
    assert "a sum of 1.5, not 1" in errs[2]["reason"]
    assert (m["n"], m["n_errors"]) == (5, 3) and "accuracy" in m
    # a wrong shape is the scorer's bug, not a bad pair: it stops the run
    with pytest.raises(ConfigurationError, match=r"an \(n, 3\) array .* for n = 8 pairs, got "
                                                 r"shape \(8, 2\)"):
        run_eval(EvalConfig([src], tmp_path / "w", plots=False),
                 scorer=lambda pairs: np.full((len(pairs), 2), 0.5))


def test_stored_threshold_sections_that_are_not_objects_are_errors(tmp_path, capsys) -> None:
    from verifier.cli import main

    for key, value in (("schemes", []), ("presets", "frank"), ("schemes", None)):
        folder = _thresholds_file(tmp_path / f"{key}-{value}", **{key: value})
        with pytest.raises(ValueError, match=rf"thresholds.json': {key} must be a JSON object, "
                                             rf"got an? (array|string|null)"):
            stored_threshold(str(folder), "supported-not", "frank")
    folder = _thresholds_file(tmp_path / "entry", schemes={"supported-not": 0.3})
    with pytest.raises(ValueError, match="schemes.supported-not must be a JSON object, got a "
                                         "number"):
        stored_threshold(str(folder), "supported-not")
    folder = _thresholds_file(tmp_path / "sets",
                              schemes={"supported-not": {"threshold": 0.3, "sets": "frank"}})
    with pytest.raises(ValueError, match="schemes.supported-not.sets must be a list"):
        stored_threshold(str(folder), "supported-not")
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(GOOD[0]) + "\n")
    assert main(["eval", str(src), "--output-dir", str(tmp_path / "o"), "--scheme",
                 "supported-not", "--model", str(tmp_path / "schemes-[]"), "--no-plots"]) == 2
    assert "thresholds.json': schemes must be a JSON object, got an array" in \
        capsys.readouterr().err


def test_batch_jsonl_with_cr_line_endings_is_read_line_by_line(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"\r".join(json.dumps(g).encode() for g in GOOD) + b"\r\r"
                    + json.dumps(GOOD[0] | {"id": "d"}).encode() + b"\r\n{bad\n")
    rows = list(read_rows(src))
    assert [(r.line, r.error) for r in rows[:5]] == [(1, None), (2, None), (3, None),
                                                     (4, "empty line"), (5, None)]
    assert rows[5].line == 6 and rows[5].error.startswith("bad JSON")
    assert [r.record["id"] for r in rows if r.record] == ["a", "b", "c", "d"]


def test_batch_3class_refuses_two_class_synonyms_as_ambiguous(tmp_path) -> None:
    from verifier.batch import gold_for_scheme

    for raw in (1, 0, "1", "true", True, "Yes", "no", "false"):
        with pytest.raises(ValueError, match=rf"label {re.escape(repr(raw))} is ambiguous in "
                                             r"scheme '3class'"):
            gold_for_scheme(raw, "3class")
    assert gold_for_scheme("e", "3class") == "SUPPORTS"
    assert gold_for_scheme("true", "supported-not") == "SUPPORTS"  # 2-class schemes keep them
    assert gold_for_scheme("no", "supported-not") == "NOT_SUPPORTED"
    # and in supports-refutes no / false are the other class (they were error rows, and the
    # metrics were read from the supported half alone)
    assert [gold_for_scheme(x, "supports-refutes") for x in ("yes", "No", False)] == [
        "SUPPORTS", "REFUTES", "REFUTES"]
    with pytest.raises(ValueError, match="neither SUPPORTS nor REFUTES"):
        gold_for_scheme("not_supported", "supports-refutes")
    src = tmp_path / "nli.jsonl"  # integer-labelled NLI data: 0 entailment, 1 neutral
    src.write_text("".join(json.dumps({**GOOD[0], "id": str(i), "label": i}) + "\n"
                           for i in range(3)))
    with pytest.raises(ValueError, match="no input row could be used"):
        run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    assert [e["reason"][:40] for e in _lines(tmp_path / "o/errors.jsonl")] == [
        "label 0 is ambiguous in scheme '3class' ", "label 1 is ambiguous in scheme '3class' ",
        "label 2 is ambiguous in scheme '3class' "]


def test_batch_class_numbers_are_read_only_through_a_label_map(tmp_path) -> None:
    """MNLI-numbered labels (0 entailment, 1 neutral, 2 contradiction) under a 2-class scheme
    were read as binary: 1 (neutral) became SUPPORTS, 0 (entailment) NOT_SUPPORTED / REFUTES,
    and the metrics were computed on those wrong gold labels."""
    from verifier.batch import gold_for_scheme

    src = tmp_path / "nli.jsonl"
    src.write_text("".join(json.dumps({**GOOD[0], "id": str(i), "label": lab}) + "\n"
                           for i, lab in enumerate([0, 1, 2, "0", "1", "2"])))
    for scheme in ("supported-not", "supports-refutes", "3class"):
        out = tmp_path / scheme
        with pytest.raises(ValueError, match="no input row could be used"):
            run_eval(EvalConfig([src], out, scheme=scheme, plots=False), scorer=_fake_scorer)
        reasons = [e["reason"] for e in _lines(out / "errors.jsonl")]
        assert len(reasons) == 6 and not (out / "predictions.jsonl").read_text()
        assert reasons[1].startswith(f"label 1 is ambiguous in scheme {scheme!r} (field "
                                     f"'label'): a class number")
        assert all("--label-map" in r for r in reasons)
    nli = {"0": "entailment", "1": "neutral", "2": "contradiction"}
    m = run_eval(EvalConfig([src], tmp_path / "m", scheme="supported-not", plots=False,
                            label_map=nli), scorer=_fake_scorer)
    assert [p["gold"] for p in _lines(tmp_path / "m/predictions.jsonl")] == [
        "SUPPORTS", "NOT_SUPPORTED", "NOT_SUPPORTED"] * 2
    assert (m["n"], m["n_errors"]) == (6, 0)
    m = run_eval(EvalConfig([src], tmp_path / "r", scheme="supports-refutes", plots=False,
                            label_map=nli), scorer=_fake_scorer)
    assert [p["gold"] for p in _lines(tmp_path / "r/predictions.jsonl")] == [
        "SUPPORTS", "REFUTES"] * 2
    assert [e["reason"] for e in _lines(tmp_path / "r/errors.jsonl")] == [  # neutral
        "label 1 is neither SUPPORTS nor REFUTES", "label '1' is neither SUPPORTS nor REFUTES"]
    assert gold_for_scheme(1.0, "3class", label_map={"1.0": "c"}) == "REFUTES"
    with pytest.raises(ValueError, match=r"label 2\.0 has no entry in the label map"):
        gold_for_scheme(2.0, "3class", label_map={"1": "c"})
    for bad, match in (({"0": "maybe"}, "maps '0' to 'maybe', which is no label: unknown "
                                        "label 'maybe'"),
                       ({"0": "1"}, "maps '0' to '1', which is no label: label '1' is "
                                    "ambiguous"),
                       ({" ": "e"}, "must map non-empty strings to label names, got ' '"),
                       ({"A": "e", "a": "c"}, "gives the raw label 'a' twice"),
                       ({}, "must map raw labels to labels, got {}")):
        with pytest.raises(ValueError, match=re.escape(
                f"label_map (--label-map, EvalConfig.label_map) {match}")):
            EvalConfig([src], tmp_path / "x", label_map=bad)


def test_batch_unscored_pairs_rows_that_are_not_probabilities_are_error_records(
        tmp_path) -> None:
    """A scorer that isolates its failed pairs (UnscoredPairs, as the Ray actors do) gets its
    other rows checked too: a NaN there was written into predictions.jsonl as invalid JSON."""
    from verifier.batch import UnscoredPairs

    src = tmp_path / "in.jsonl"
    rows = [{**GOOD[i % 3], "id": str(i), "claim": f"claim {i} ."} for i in range(4)]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def scorer(pairs):
        out = _fake_scorer(pairs)
        out[1] = [np.nan, 0.5, 0.5]
        raise UnscoredPairs(out, {0: "cannot score: too long"})

    m = run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=scorer)
    assert "NaN" not in (tmp_path / "o/predictions.jsonl").read_text()
    errs = _lines(tmp_path / "o/errors.jsonl")
    assert [(e["line"], e["reason"]) for e in errs] == [
        (1, "cannot score: too long"),
        (2, "cannot score: the scorer returned the probabilities [nan, 0.5, 0.5] for the "
            "pair: a value that is not finite")]
    assert (m["n"], m["n_errors"]) == (2, 2)


def test_batch_json_array_bad_byte_or_repeated_key_spoils_its_item_only(tmp_path) -> None:
    src = tmp_path / "a.json"
    src.write_bytes(b'[{"claim": "a", "evidence": "e", "label": "SUPPORTS"},\n'
                    b' {"claim": "b\xff", "evidence": "e", "label": "SUPPORTS"},\n'
                    b' {"claim": "c", "claim": "d", "evidence": "e", "label": "SUPPORTS"},\n'
                    b' {"claim": "x", "evidence": "e", "label": "REFUTES"}]')
    metrics = run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    assert metrics["n"] == 2 and metrics["n_errors"] == 2
    errs = {e["line"]: e["reason"] for e in _lines(tmp_path / "o/errors.jsonl")}
    assert errs == {2: "not UTF-8: byte 0xff in array item 2",
                    3: "key 'claim' given more than once (one value would be lost)"}


def test_batch_jsonl_repeated_key_is_an_error_row(tmp_path) -> None:
    src = tmp_path / "a.jsonl"
    src.write_text('{"claim": "a", "claim": "b", "evidence": "e", "label": "SUPPORTS"}\n'
                   + json.dumps(GOOD[0]) + "\n")
    metrics = run_eval(EvalConfig([src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    assert metrics["n"] == 1 and metrics["n_errors"] == 1
    (err,) = _lines(tmp_path / "o/errors.jsonl")
    assert (err["line"], err["reason"]) == (
        1, "key 'claim' given more than once (one value would be lost)")


def test_batch_json_parse_error_quotes_the_line_json_counts(tmp_path) -> None:
    # U+2028 inside a string is a line break to str.splitlines, not to the JSON parser
    src = tmp_path / "a.json"
    src.write_text('[{"claim": "a\u2028b", "evidence": "e", "label": "SUPPORTS"},\n'
                   ' {"claim": "c", "evidence": "e", "label": "SUPPORTS"},,\n {"claim": "x"}]',
                   encoding="utf-8")
    good = tmp_path / "ok.jsonl"
    good.write_text(json.dumps(GOOD[0]) + "\n")
    run_eval(EvalConfig([good, src], tmp_path / "o", plots=False), scorer=_fake_scorer)
    (err,) = _lines(tmp_path / "o/errors.jsonl")
    assert (err["line"], err["raw"]) == (
        2, ' {"claim": "c", "evidence": "e", "label": "SUPPORTS"},,')


@pytest.mark.parametrize(("field", "value"), [("chunk_rows", 2.5), ("chunk_rows", True),
                                              ("chunk_rows", "8"), ("limit", 2.5),
                                              ("limit", True)])
def test_batch_config_counts_must_be_ints(tmp_path, field: str, value) -> None:
    (tmp_path / "a.jsonl").write_text(json.dumps(GOOD[0]) + "\n")
    with pytest.raises(ValueError, match=rf"{field} must be an int .*got {value!r}"):
        EvalConfig([tmp_path / "a.jsonl"], tmp_path / "o", **{field: value})


@pytest.mark.parametrize("value", [True, 2.0, "8"])
def test_batch_config_batch_size_must_be_an_int_or_auto(tmp_path, value) -> None:
    (tmp_path / "a.jsonl").write_text(json.dumps(GOOD[0]) + "\n")
    with pytest.raises(ValueError, match=rf"batch_size must be a positive int or 'auto', "
                                         rf"got {re.escape(repr(value))}"):
        EvalConfig([tmp_path / "a.jsonl"], tmp_path / "o", batch_size=value)
    cfg = EvalConfig([tmp_path / "a.jsonl"], tmp_path / "o", batch_size=np.int64(8),
                     chunk_rows=np.int64(4))
    assert type(cfg.batch_size) is int and type(cfg.chunk_rows) is int


def test_eval_config_takes_one_path_as_a_list_of_one(tmp_path) -> None:
    # a str was read character by character ("input file not found: '/'"), a Path not at all
    path = tmp_path / "in.jsonl"
    path.write_text('{"claim": "a", "evidence": "b", "label": "SUPPORTS"}\n')
    for one in (str(path), path):
        assert EvalConfig(one, tmp_path / "out").inputs == [path]  # type: ignore[arg-type]


def test_batch_class_numbers_written_as_floats_match_the_label_map(tmp_path) -> None:
    """Labels 1.0, "1.0" and "01" (a spreadsheet's or pandas' floats) did not match
    --label-map 1=..., and the error told the user to pass the --label-map they had passed."""
    src = tmp_path / "nums.jsonl"
    src.write_text("".join(json.dumps({**GOOD[0], "id": str(i), "label": lab}) + "\n"
                           for i, lab in enumerate([1.0, "1.0", "01", 0, "-0", 2])))
    m = run_eval(EvalConfig([src], tmp_path / "o", scheme="supported-not", plots=False,
                            label_map={"1": "SUPPORTS", "0": "NOT_SUPPORTED"}),
                 scorer=_fake_scorer)
    assert [p["gold"] for p in _lines(tmp_path / "o/predictions.jsonl")] == [
        "SUPPORTS"] * 3 + ["NOT_SUPPORTED"] * 2
    assert (m["n"], m["n_errors"]) == (5, 1)
    (err,) = _lines(tmp_path / "o/errors.jsonl")
    assert err["reason"] == ("label 2 (field 'label') has no entry in the label map "
                             "(--label-map, EvalConfig.label_map), which maps '1', '0'; add "
                             "2=LABEL")
    # the map's own keys are read alike: "01" and "1" are one raw label
    with pytest.raises(ValueError, match="gives the raw label '1' twice"):
        EvalConfig([src], tmp_path / "x", label_map={"1": "SUPPORTS", "01": "REFUTES"})


def test_batch_json_array_rows_name_their_file_line_and_item(tmp_path) -> None:
    """A .json array's rows were numbered by item and called "line" (and FILE:LINE ids):
    in a pretty-printed file, "line 2" was the second item, on line 7."""
    rows = [{k: v for k, v in g.items() if k != "id"} for g in GOOD]
    rows[1]["label"] = "MAYBE"
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(rows, indent=2))  # items start on lines 2, 7, 15
    starts = [n for n, text in enumerate(pretty.read_text().split("\n"), start=1)
              if text == "  {"]
    assert [r.line for r in read_rows(pretty)] == starts
    assert [r.item for r in read_rows(pretty)] == [1, 2, 3]
    run_eval(EvalConfig([pretty], tmp_path / "p", plots=False), scorer=_fake_scorer)
    preds, errs = _lines(tmp_path / "p/predictions.jsonl"), _lines(tmp_path / "p/errors.jsonl")
    assert [(p["line"], p["item"], p["id"]) for p in preds] == [
        (starts[0], 1, "pretty.json:1"), (starts[2], 3, "pretty.json:3")]
    assert [(e["line"], e["item"], e["reason"]) for e in errs] == [
        (starts[1], 2, "unknown label 'MAYBE'")]
    # a compact array is one line: its items are told apart by their number
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(rows))
    run_eval(EvalConfig([compact], tmp_path / "c", plots=False), scorer=_fake_scorer)
    assert [(p["line"], p["item"], p["id"]) for p in _lines(tmp_path / "c/predictions.jsonl")
            ] == [(1, 1, "compact.json:1"), (1, 3, "compact.json:3")]
    # JSON Lines (and CSV/TSV) records are as before: no item
    lines = tmp_path / "rows.jsonl"
    lines.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run_eval(EvalConfig([lines], tmp_path / "j", plots=False), scorer=_fake_scorer)
    assert [sorted(p) for p in _lines(tmp_path / "j/predictions.jsonl")][0] == [
        "gold", "id", "line", "predicted", "probabilities", "scores", "source"]
    assert "item" not in _lines(tmp_path / "j/errors.jsonl")[0]


@pytest.mark.parametrize("claim", ["\ufffd\ufffd\ufffd", "\u0301\u20dd"])
def test_batch_ensemble_claim_a_decoding_error_left_is_an_error_record(
        tmp_path, tiny_nli_model, claim) -> None:
    # such a claim passed the row check and stopped a --mode ensemble run (a TypeError from
    # the verifier) with its whole chunk unwritten, again on every rerun
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(g) + "\n" for g in GOOD[:2]) + json.dumps(
        {"claim": claim, "evidence": "paris is big .", "label": "SUPPORTS"}) + "\n")
    run_eval(EvalConfig([src], tmp_path / "o", mode="ensemble", model=str(tiny_nli_model),
                        device="cpu", dtype="float32", plots=False))
    preds = (tmp_path / "o/predictions.jsonl").read_text().splitlines()
    errors = [json.loads(x) for x in (tmp_path / "o/errors.jsonl").read_text().splitlines()]
    assert len(preds) == 2 and [e["line"] for e in errors] == [3]
    assert "empty claim" in errors[0]["reason"]


def _shipped_cut() -> float:
    """The shipped ensemble's learned cut on p(Supported) (``support_threshold``)."""
    from verifier.embedded import embedded_meta_path
    from verifier.meta import StatusClassifier

    return float(StatusClassifier.load(embedded_meta_path("ensemble")).support_threshold_)


def test_batch_metrics_with_an_absent_class_raise_no_warning() -> None:
    # sklearn's UserWarnings ("y_pred contains classes not in y_true", "A single label was
    # found") reached the user's stderr on every such run
    import warnings

    classes = list(CLASSES["3class"])
    probs = np.tile([0.6, 0.3, 0.1], (3, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = compute_metrics([classes[0]] * 3, [classes[0], classes[1], classes[0]], probs,
                            classes)
        one = compute_metrics([classes[0]] * 2, [classes[0]] * 2, probs[:2], classes)
    assert m["balanced_accuracy"] == pytest.approx(2 / 3)
    assert m["confusion_matrix"]["matrix"][0] == [2, 1, 0]
    assert one["balanced_accuracy"] == 1.0


def test_batch_ray_engine_refuses_a_missing_model_and_missing_gpus(tmp_path,
                                                                   monkeypatch) -> None:
    # a missing model folder: ~200 lines of ActorDiedError traceback, exit 1; GPUs per actor
    # that no node has: the run waited for ever
    import verifier.batch_ray
    from verifier.errors import ConfigurationError, ModelLoadError

    class FakeRay:
        def is_initialized(self):
            return True

        def cluster_resources(self):
            return {"CPU": 2.0}

    fake = FakeRay()
    monkeypatch.setattr(verifier.batch_ray, "require", lambda name, extra: fake)
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(g) + "\n" for g in GOOD))
    with pytest.raises(ModelLoadError, match="no such folder: /nonexistent/model"):
        verifier.batch_ray.RayScorer(EvalConfig([src], tmp_path / "o", engine="ray",
                                                model="/nonexistent/model"))
    with pytest.raises(ConfigurationError, match=r"ray_gpus_per_actor \(--ray-gpus-per-actor"
                                                 r"\) is 1, but the Ray cluster has 0 GPUs"):
        verifier.batch_ray.RayScorer(EvalConfig([src], tmp_path / "o", engine="ray",
                                                ray_gpus_per_actor=1))


def test_batch_max_length_is_checked_before_the_output_folder_is_made(tmp_path) -> None:
    # "max_length must be an int >= 32" came from the model, the folder already made, and
    # the option unnamed
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(g) + "\n" for g in GOOD))
    for bad in (5, 31.5, "64"):
        with pytest.raises(ValueError, match=rf"max_length \(--max-length\) must be an int >= "
                                             rf"32, got {bad!r}"):
            EvalConfig([src], tmp_path / "o", max_length=bad)  # type: ignore[arg-type]
    assert not (tmp_path / "o").exists()
