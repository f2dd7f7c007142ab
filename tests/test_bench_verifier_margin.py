"""The paired bootstrap behind ``benchmarks/bench_verifier.py``'s margin interval, and the
Wilson interval ``benchmarks/bench_mitigation.py`` prints."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import f1_score

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_verifier import bootstrap_margin, gold_statuses, supported_auroc  # noqa: E402


def test_gold_statuses_read_each_sets_scheme() -> None:
    three = [{"status": s} for s in ("Supported", "Contradictory", "Insufficient_Info")]
    gold, is_three = gold_statuses(three)
    assert is_three and gold.tolist() == ["Supported", "Contradictory", "Insufficient_Info"]
    two = [{"status": s} for s in ("Supported", "Not_Supported", "Contradictory")]
    gold, is_three = gold_statuses(two)
    assert not is_three and gold.tolist() == ["Supported", "Not_Supported", "Not_Supported"]


def test_supported_auroc_ranks_by_each_score_and_needs_both_classes() -> None:
    def row(status: str, e: float, c: float) -> dict:
        return {"status": status, "features": {"nli.entailment": e, "nli.contradiction": c}}

    # the NLI row ranks the one supported claim last (0.5 - 0.4 is the lowest difference),
    # the ensemble ranks it first
    rows = [row("Supported", 0.5, 0.4), row("Contradictory", 0.6, 0.1),
            row("Insufficient_Info", 0.3, 0.1)]
    assert supported_auroc(rows, np.array([0.9, 0.2, 0.1])) == {"ensemble": 1.0, "nli": 0.0}
    # one class only: no ranking to measure
    assert supported_auroc(rows[:1], np.array([0.9])) == {"ensemble": None, "nli": None}
    with pytest.raises(ValueError, match="p_supported has 2 items but rows has 3"):
        supported_auroc(rows, np.array([0.9, 0.2]))


def test_equal_predictions_give_a_zero_interval_and_never_ahead() -> None:
    gold = np.array(["Supported", "Not_Supported"] * 40, dtype=object)
    pred = np.array(["Supported"] * 80, dtype=object)
    out = bootstrap_margin({"a": (gold, pred, pred.copy())}, 30)
    assert (out["low"], out["high"], out["share_not_ahead"]) == (0.0, 0.0, 1.0)


def test_interval_brackets_the_margin_and_is_seeded() -> None:
    rng = np.random.default_rng(1)
    gold = rng.choice(["S", "N"], 300).astype(object)
    good = np.where(rng.random(300) < 0.9, gold, np.where(gold == "S", "N", "S")).astype(object)
    poor = np.where(rng.random(300) < 0.6, gold, np.where(gold == "S", "N", "S")).astype(object)
    out = bootstrap_margin({"x": (gold, good, poor), "y": (gold, poor, poor)}, 200)
    # the mean over sets of the margin on all rows: x gains ~30 points, y none
    f1 = {k: f1_score(gold, p, average="macro") for k, p in (("good", good), ("poor", poor))}
    margin = 100 * (f1["good"] - f1["poor"]) / 2
    assert 10 < margin < 20
    # brackets it (a sum over sets, or the first set alone, would be ~twice as far)
    assert out["low"] < margin < out["high"] and out["high"] - out["low"] < margin / 2
    assert out["share_not_ahead"] == 0.0
    assert bootstrap_margin({"x": (gold, good, poor)}, 50) == \
        bootstrap_margin({"x": (gold, good, poor)}, 50)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_resamples_are_refused(bad: object) -> None:
    g = np.array(["S", "N"], dtype=object)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_margin({"x": (g, g, g)}, bad)  # type: ignore[arg-type]


def test_resamples_are_paired() -> None:
    # a = b but right on 15 rows b gets wrong: every paired resample has a >= b, while the
    # margin (~4 points) is smaller than either score's own resampling noise
    rng = np.random.default_rng(2)
    gold = rng.choice(["S", "N"], 400).astype(object)
    b = np.where(rng.random(400) < 0.7, gold, np.where(gold == "S", "N", "S")).astype(object)
    a = b.copy()
    wrong = np.flatnonzero(a != gold)[:15]
    a[wrong] = gold[wrong]
    out = bootstrap_margin({"x": (gold, a, b)}, 200)
    assert out["low"] > 0 and out["share_not_ahead"] == 0.0



@pytest.mark.parametrize("folder", ["benchmarks", "models/recipes"])
def test_doctests_of_scripts(folder: str) -> None:
    """The scripts outside the packages are not collected by ``--doctest-modules``; their
    examples run here."""
    import doctest
    import importlib

    root = Path(__file__).resolve().parents[1] / folder
    sys.path.insert(0, str(root))
    try:
        with_examples = [p for p in sorted(root.glob("*.py")) if ">>> " in p.read_text()]
        for path in with_examples:
            result = doctest.testmod(importlib.import_module(path.stem))
            assert result.attempted > 0 and result.failed == 0, (path, result)
    finally:
        sys.path.remove(str(root))
    if folder == "benchmarks":
        assert with_examples, "bench_verifier.py's example is expected here"


def test_wilson_interval_brackets_the_share_and_narrows_with_n() -> None:
    from _common import wilson_interval

    lo, hi = wilson_interval(182, 200)
    assert lo < 182 / 200 < hi
    assert (round(lo, 3), round(hi, 3)) == (0.862, 0.942)  # the formula worked by hand
    lo5, hi5 = wilson_interval(910, 1000)
    assert lo < lo5 < 0.91 < hi5 < hi
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    assert 0.0 < wilson_interval(0, 10)[1] < 0.35  # none of 10 does not mean never
    with pytest.raises(ValueError, match="successes=11"):
        wilson_interval(11, 10)
    with pytest.raises(ValueError, match="n=0"):
        wilson_interval(0, 0)


@pytest.mark.parametrize("bad", ["/tmp/x", "../x", "sub/x", "x.json", "", "..", "."])
def test_results_names_are_bare_file_names(bad: str) -> None:
    """A path given where a results name is expected is refused before the run (argparse)
    and before anything is written (write_result), naming the value."""
    import argparse

    from _common import RESULTS, result_name, write_result

    before = sorted(p.name for p in RESULTS.glob("*.json")) if RESULTS.exists() else []
    with pytest.raises(argparse.ArgumentTypeError, match="bare file name"):
        result_name(bad)
    with pytest.raises(ValueError, match=repr(bad).replace(".", "[.]")):
        write_result(bad, {"x": 1})
    assert (sorted(p.name for p in RESULTS.glob("*.json")) if RESULTS.exists() else []) == before
    assert result_name("nli_v05") == "nli_v05"


def test_ece_noise_floor_shrinks_with_rows_and_flags_miscalibration() -> None:
    from bench_verifier import ece, ece_noise_floor

    rng = np.random.default_rng(3)
    small, large = rng.uniform(0.5, 1, 200), rng.uniform(0.5, 1, 5000)
    floor_small, floor_large = ece_noise_floor(small, 300), ece_noise_floor(large, 300)
    assert 0 < floor_large < floor_small < 0.1
    assert ece_noise_floor(small, 300) == floor_small  # seeded
    # calibrated rows mostly stay under the floor; over-confident ones do not
    calibrated = (rng.random(5000) < large).astype(float)
    assert ece(large, calibrated) <= floor_large
    overconfident = (rng.random(5000) < large - 0.1).astype(float)
    assert ece(large, overconfident) > 2 * floor_large


@pytest.mark.parametrize("bad", [np.array([]), np.array([0.5, 1.2]), np.ones((2, 2))])
def test_ece_noise_floor_refuses_bad_confidences(bad: np.ndarray) -> None:
    from bench_verifier import ece_noise_floor

    with pytest.raises(ValueError, match="conf must be"):
        ece_noise_floor(bad, 10)


def test_changed_rows_counts_moved_features_and_their_largest_change(tmp_path) -> None:
    import json

    from compare_feature_caches import changed_rows

    def write(path: Path, rows: list[tuple[str, str, dict | None]]) -> Path:
        path.write_text("".join(json.dumps({"dataset": d, "id": i, "input": "x", "features": f})
                                + "\n" for d, i, f in rows), encoding="utf-8")
        return path

    old = write(tmp_path / "old.jsonl", [
        ("a", "1", {"cos": 0.5, "n": 1.0}), ("a", "2", {"cos": 0.2, "n": None}),
        ("b", "3", {"cos": 0.7, "n": 2.0}), ("b", "4", None), ("b", "5", {"cos": 0.1})])
    new = write(tmp_path / "new.jsonl", [
        ("a", "1", {"cos": 0.503, "n": 1.0}), ("a", "2", {"cos": 0.199, "n": 3.0}),
        ("b", "3", {"cos": 0.7, "n": 2.0 + 1e-12}), ("b", "4", None), ("c", "6", {"cos": 0.0})])
    features, moved, alone, largest = changed_rows(old, new)
    assert moved == {"a": 2}
    assert features["a"] == {"cos": 2, "n": 1}
    assert largest == pytest.approx({"cos": 0.003})  # "n" only appeared: no change to measure
    assert alone == 2  # ("b", "5") and ("c", "6")


def _nli_rows(seed: int, n: int, three: bool) -> list[dict]:
    rng = np.random.default_rng(seed)
    statuses = ["Supported", "Contradictory"] + (["Insufficient_Info"] if three else [])
    rows = []
    for i in range(n):
        s = statuses[i % len(statuses)]
        e, c = rng.uniform(0, 0.6, 2)
        e += 0.4 * (s == "Supported")
        c += 0.3 * (s == "Contradictory")
        rows.append({"status": s, "features": {"nli.entailment": float(e),
                                               "nli.neutral": float(max(0.0, 1 - e - c)),
                                               "nli.contradiction": float(c)}})
    return rows


def test_nli_cuts_are_the_best_pair_of_the_verifiers_own_rule() -> None:
    """The NLI row was decided at the 0.5 defaults while the ensemble's cut was learnt on
    the train splits: its cuts are now learnt as the ensemble's is, by the same criterion,
    and they decide as Verifier(meta=None, ...) with them does."""
    from bench_verifier import collapse, nli_rule, tune_nli_cuts

    from verifier.verify import Verifier

    sets = {"two": _nli_rows(0, 120, False), "three": _nli_rows(1, 150, True)}
    grid = np.round(np.arange(0.1, 0.91, 0.1), 2)
    cuts = tune_nli_cuts(sets, grid)

    def score(te: float, tc: float) -> float:
        v = Verifier(meta=None, alignment_classifier=None, support_threshold=te,
                     contradiction_threshold=tc)
        out = []
        for rows in sets.values():
            gold, three = gold_statuses(rows)
            pred = collapse(nli_rule(rows, v), three)
            out.append(f1_score(gold, pred, labels=sorted(set(gold.tolist())),
                                average="macro", zero_division=0))
        return 100 * float(np.mean(out))

    best = max(score(te, tc) for te in grid for tc in grid)
    assert cuts["train_mean_macro_f1"] == pytest.approx(best, abs=0.01)
    assert score(cuts["support"], cuts["contradiction"]) == pytest.approx(best, abs=1e-9)
    assert best > score(0.5, 0.5)
    with pytest.raises(ValueError, match="no set has rows of two statuses"):
        tune_nli_cuts({"one": [r for r in sets["two"] if r["status"] == "Supported"]})


def test_decided_status_ece_reads_the_status_the_verifier_gives() -> None:
    """The reported ECE took the most probable label at 0.5 while the verifier decides at
    its learned cut: the decided status's probability is measured too."""
    from bench_verifier import confidences, decided_confidences

    p = np.array([[0.30, 0.25, 0.45], [0.10, 0.10, 0.80], [0.50, 0.20, 0.30]])
    decided = np.array(["Supported", "Supported", "Contradictory"], dtype=object)
    pred, conf = decided_confidences(p, decided, False)
    assert pred.tolist() == ["Supported", "Supported", "Not_Supported"]
    assert conf.tolist() == pytest.approx([0.45, 0.80, 0.70])
    top, top_conf = confidences(p, False)  # the first row's most probable: not supported
    assert top[0] == "Not_Supported" and top_conf[0] == pytest.approx(0.55)
    pred3, conf3 = decided_confidences(p, decided, True)
    assert pred3.tolist() == decided.tolist() and conf3.tolist() == pytest.approx(
        [0.45, 0.80, 0.50])  # STATUSES order: Contradictory first


def test_eval_rows_a_training_row_repeats_are_found() -> None:
    """194 FEVER eval rows are FEVER-Symmetric train rows (the same claim and evidence
    sentence), on which the classifiers were fitted."""
    from bench_verifier import seen_in_training

    from verifier.datasets import Example

    train = [Example("t", "Savages was exclusively a German film .",
                     "Savages is a 2012 American crime thriller film .", "REFUTES",
                     "fever-sym", "train")]
    evals = [Example("4", "Savages was exclusively a German film.",
                     "It rained . Savages is a 2012 American crime thriller film .", "REFUTES",
                     "fever", "eval"),
             Example("5", "Savages was exclusively a German film.", "It rained .", "REFUTES",
                     "fever", "eval"),
             Example("6", "Savages is a film.", "Savages is a 2012 American crime thriller "
                     "film .", "SUPPORTS", "fever", "eval")]
    assert seen_in_training(evals, train).tolist() == [True, False, False]
    assert seen_in_training(evals, []).tolist() == [False, False, False]
