from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from verifier.meta import NOT_SUPPORTED, MetaClassifier, StatusClassifier, balanced_weights

CLASSES = np.array(["Contradictory", "Insufficient_Info", "Supported"])


def _data(n: int = 600, seed: int = 0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.normal(0, 1, (n, 4))
    X[:, 0] += 2.0 * (y == 2)  # entailment-like
    X[:, 1] += 2.0 * (y == 0)  # contradiction-like
    X[rng.random(n) < 0.2, 3] = np.nan  # a detector that is sometimes off
    return X, CLASSES[y]


def _ece(p: np.ndarray, y: np.ndarray, classes: np.ndarray) -> float:
    conf, pred = p.max(1), classes[p.argmax(1)]
    bins = np.linspace(0, 1, 11)
    e = 0.0
    for lo, hi in zip(bins[:-1], bins[1:], strict=True):
        m = (conf > lo) & (conf <= hi)
        if m.any():
            e += m.mean() * abs((pred[m] == y[m]).mean() - conf[m].mean())
    return e


def test_meta_fit_predict_and_json_round_trip(tmp_path) -> None:
    X, y = _data()
    m = MetaClassifier(["e", "c", "x", "maybe_missing"]).fit(X, y)
    p = m.predict_proba(X)
    assert p.shape == (600, 3) and np.allclose(p.sum(1), 1)
    assert (m.predict(X) == y).mean() > 0.7
    m.save(tmp_path / "meta.json")
    again = MetaClassifier.load(tmp_path / "meta.json")
    np.testing.assert_allclose(again.predict_proba(X), p)
    assert again.get_params() == m.get_params()
    assert "pickle" not in (tmp_path / "meta.json").read_text()


def test_meta_calibration_lowers_ece_on_held_out_data() -> None:
    X, y = _data(3000, seed=1)
    Xt, yt = _data(3000, seed=2)
    X[:, :2] *= 4  # over-confident raw scores
    Xt[:, :2] *= 4
    raw = MetaClassifier(calibration="none", C=100).fit(X, y)
    cal = MetaClassifier(calibration="isotonic", C=100).fit(X, y)
    assert _ece(cal.predict_proba(Xt), yt, cal.classes_) <= _ece(raw.predict_proba(Xt), yt,
                                                                 raw.classes_) + 0.005
    assert _ece(cal.predict_proba(Xt), yt, cal.classes_) < 0.05


def test_meta_errors() -> None:
    with pytest.raises(NotFittedError):
        MetaClassifier().predict_proba([[0.0]])
    X, y = _data(60)
    with pytest.raises(ValueError, match="feature_names has 2 names but X has 4 columns"):
        MetaClassifier(["a", "b"]).fit(X, y)
    with pytest.raises(ValueError, match="calibration must be"):
        MetaClassifier(calibration="platt").fit(X, y)  # type: ignore[arg-type]
    m = MetaClassifier(calibration="sigmoid").fit(X, y)
    with pytest.raises(ValueError, match="X has 2 columns, the model was fitted on 4"):
        m.predict_proba(X[:, :2])
    with pytest.raises(ValueError, match="not a meta-classifier file"):
        MetaClassifier.from_json('{"format": "other"}')


def test_collect_features_creates_cache_folder_and_resumes(tmp_path) -> None:
    from types import SimpleNamespace

    from verifier.datasets import Example
    from verifier.training import collect_features

    calls: list[list[str]] = []

    class FakeVerifier:
        def verify_pairs(self, claims, evidences):
            calls.append(list(claims))
            return [SimpleNamespace(scores={"nli.entailment": 0.5 + len(c) / 100,
                                            "unc.entropy": float("nan")}) for c in claims]

    ex = [Example(f"id{i}", f"claim {i}", "evidence", "SUPPORTS", "toy", "eval")
          for i in range(5)]
    cache = tmp_path / "not" / "yet" / "there.jsonl"
    rows = collect_features(FakeVerifier(), ex[:3], batch_size=2, cache=cache)
    assert cache.is_file() and [r["id"] for r in rows] == ["id0", "id1", "id2"]
    assert rows[0]["features"]["unc.entropy"] is None  # NaN stored as JSON null
    calls.clear()
    rows = collect_features(FakeVerifier(), ex, batch_size=2, cache=cache)
    assert calls == [["claim 3", "claim 4"]]  # cached rows are not verified again
    assert [r["id"] for r in rows] == [f"id{i}" for i in range(5)]
    assert len(cache.read_text(encoding="utf-8").splitlines()) == 5
    # a row whose text changed since it was cached is computed again, and only that one
    calls.clear()
    ex[1] = Example("id1", "claim 1, unescaped", "evidence", "SUPPORTS", "toy", "eval")
    rows = collect_features(FakeVerifier(), ex, batch_size=2, cache=cache)
    assert calls == [["claim 1, unescaped"]]
    assert rows[1]["features"]["nli.entailment"] == 0.5 + len("claim 1, unescaped") / 100
    calls.clear()
    assert collect_features(FakeVerifier(), ex, cache=cache) == rows and calls == []
    # a label (or meta) changed since: taken from the examples, the features kept
    ex[2] = Example("id2", "claim 2", "evidence", "REFUTES", "toy", "eval", {"k": 1})
    rows = collect_features(FakeVerifier(), ex, cache=cache)
    assert calls == [] and (rows[2]["label"], rows[2]["status"], rows[2]["meta"]) == (
        "REFUTES", "Contradictory", {"k": 1})
    # another verifier (here: another NLI setting) computes every row again
    other = FakeVerifier()
    other.nli = SimpleNamespace(to_dict=lambda: {"init_parameters": {"chunk_tokens": 64}},
                                model_name_or_path=None)
    collect_features(other, ex, cache=cache)
    assert calls == [[e.claim for e in ex]]
    # a row cut off by an interrupted run is dropped, and the cache goes on
    calls.clear()
    cache.write_bytes(cache.read_bytes() + b'{"id": "id9", "dat')
    assert [r["features"] for r in collect_features(other, ex, cache=cache)] == \
        [r["features"] for r in collect_features(other, ex)] and len(calls) == 1
    assert cache.read_bytes().endswith(b"}\n")
    with pytest.raises(ValueError, match="batch_size must be an int >= 1, got 0"):
        collect_features(other, ex, batch_size=0)


def test_sample_weight_is_integer_repetition_and_balances_groups() -> None:
    X, y = _data(300, seed=3)
    w = np.where(np.arange(300) % 3 == 0, 2.0, 1.0)
    rep = np.repeat(np.arange(300), w.astype(int))
    # nearly unregularised, so the features' standardisation (unweighted) does not matter
    weighted = MetaClassifier(calibration="none", C=1e4).fit(X, y, sample_weight=w)
    repeated = MetaClassifier(calibration="none", C=1e4).fit(X[rep], y[rep])
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X), atol=2e-3)
    plain = MetaClassifier(calibration="none", C=1e4).fit(X, y)
    assert np.abs(weighted.predict_proba(X) - plain.predict_proba(X)).max() > 0.01
    # a group with 9x the rows gets the same total weight as the small one
    g = np.array(["big"] * 270 + ["small"] * 30)
    bw = balanced_weights(g)
    assert bw[g == "big"].sum() == pytest.approx(bw[g == "small"].sum())
    assert bw.mean() == pytest.approx(1.0)
    cal = MetaClassifier(calibration="isotonic").fit(X, y, groups=g, sample_weight=bw)
    assert np.allclose(cal.predict_proba(X).sum(1), 1)


def test_status_classifier_sample_weight_moves_the_refute_prior() -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(0, 1, (200, 2))
    y = np.array(["Supported"] * 100 + ["Contradictory"] * 50 + ["Insufficient_Info"] * 50)
    w = np.r_[np.ones(100), np.full(50, 3.0), np.ones(50)]
    assert StatusClassifier().fit(X, y).refute_prior_ == pytest.approx(0.5)
    assert StatusClassifier().fit(X, y, sample_weight=w).refute_prior_ == pytest.approx(0.75)


@pytest.mark.parametrize("bad, match", [
    (np.ones(5), r"sample_weight must have shape \(60,\), got \(5,\)"),
    (np.r_[-1.0, np.ones(59)], "sample_weight must be finite and >= 0"),
    (np.r_[np.nan, np.ones(59)], "sample_weight must be finite and >= 0"),
    (np.zeros(60), "at least one weight > 0"),
])
def test_sample_weight_errors(bad: np.ndarray, match: str) -> None:
    X, y = _data(60)
    with pytest.raises(ValueError, match=match):
        MetaClassifier().fit(X, y, sample_weight=bad)
    with pytest.raises(ValueError, match=match):
        StatusClassifier().fit(X, np.where(y == "Supported", y, NOT_SUPPORTED),
                               sample_weight=bad)
    with pytest.raises(ValueError, match="groups must be a non-empty 1-D"):
        balanced_weights([])


def test_pipeline_features_checks_claims_with_and_without_their_document(tmp_path) -> None:
    from types import SimpleNamespace

    from verifier.datasets import Example
    from verifier.training import PIPELINE_SET, pipeline_features
    from verifier.types import ClaimEvidence

    seen: list[tuple[str, list[str]]] = []

    class Pairer:  # evidence: the passages sharing the claim's first word
        def pair(self, claims, passages):
            word = claims[0].text.split()[0]
            return [ClaimEvidence(claims[0], tuple(p for p in passages
                                                   if word in p.content.split()))]

    class FakeVerifier:
        pairer = Pairer()

        def verify_claims(self, paired, passages):
            seen.append((paired[0].claim.text, [p.content for p in passages]))
            return [SimpleNamespace(scores={"nli.units": float(len(paired[0].evidence))})]

    def ex(i: str, claim: str, doc: str, label: str, group: str) -> Example:
        return Example(i, claim, doc, label, "fever", "train", {"group": group})

    examples = [ex("a", "alpha won.", "alpha lost in 1990.", "REFUTES", "g1"),
                ex("b", "beta won.", "beta won in 1991.", "SUPPORTS", "g1"),  # a's group
                ex("c", "gamma won.", "gamma won; alpha too.", "SUPPORTS", "g3"),
                ex("d", "delta won.", "delta won.", "NOT ENOUGH INFO", "g4"),  # not a claim
                ex("e", "eps won.", "eps won.", "SUPPORTS", "g5")]
    cache = tmp_path / "pipeline.jsonl"
    rows, owners = pipeline_features(FakeVerifier(), examples, distractors=2, cache=cache)
    by_id = {r["id"]: r for r in rows}
    # "a" against c and e (b shares its evidence group; d is no claim), with and without
    # its own document; c's document mentions alpha
    assert seen[0][0] == "alpha won."
    assert set(seen[0][1]) == {"alpha lost in 1990.", "gamma won; alpha too.", "eps won."}
    assert set(seen[1][1]) == {"gamma won; alpha too.", "eps won."}
    assert by_id["a:with"]["status"] == "Contradictory"
    assert by_id["a:without"]["status"] == "Insufficient_Info"  # evidence, none about it
    assert by_id["b:with"]["status"] == "Supported" and "b:without" not in by_id  # none found
    assert not any(r["id"].startswith("d:") for r in rows)  # NEI examples are not claims
    assert {r["dataset"] for r in rows} == {PIPELINE_SET}
    assert [o.id for o in owners] == [r["id"].split(":")[0] for r in rows]
    assert len(seen) == len(rows)  # a case without evidence is not verified
    # cached: nothing verified again, same rows
    first = list(seen)
    seen.clear()
    again, _ = pipeline_features(FakeVerifier(), examples, distractors=2, cache=cache)
    assert seen == [] and again == rows
    # a changed document: the rows that read it are checked again, the others reused
    examples[2] = ex("c", "gamma won.", "gamma won; alpha did too.", "SUPPORTS", "g3")
    again, _ = pipeline_features(FakeVerifier(), examples, distractors=2, cache=cache)
    assert len(seen) == sum("gamma won; alpha too." in docs for _, docs in first) < len(first)
    assert all("gamma won; alpha did too." in docs for _, docs in seen)
    assert [r["id"] for r in again] == [r["id"] for r in rows]
    # another verifier (here: another NLI setting) checks every claim again
    seen.clear()
    other = FakeVerifier()
    other.nli = SimpleNamespace(to_dict=lambda: {"init_parameters": {"chunk_tokens": 64}},
                                model_name_or_path=None)
    pipeline_features(other, examples, distractors=2, cache=cache)
    assert len(seen) == len(rows)
    with pytest.raises(ValueError, match="distractors must be an int >= 1, got 0"):
        pipeline_features(FakeVerifier(), examples, distractors=0)
    # one evidence group only: nothing else to check a claim against, only the "with" rows
    seen.clear()
    alone, _ = pipeline_features(FakeVerifier(), examples[:2])
    assert [r["id"] for r in alone] == ["a:with", "b:with"] and len(seen) == 2


def _xor(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 3))
    y = np.where((X[:, 0] > 0) == (X[:, 1] > 0), "Contradictory", "Insufficient_Info")
    return X, y


def test_boosting_learns_an_interaction_the_logistic_stage_cannot() -> None:
    X, y = _xor(1200, seed=3)
    Xt, yt = _xor(1200, seed=4)
    lin = MetaClassifier(calibration="none").fit(X, y)
    trees = MetaClassifier(calibration="none", estimator="boosting").fit(X, y)
    assert (lin.predict(Xt) == yt).mean() < 0.65
    assert (trees.predict(Xt) == yt).mean() > 0.9
    assert not hasattr(trees, "coef_") and trees.trees_["feature"].shape[0] == 100


@pytest.mark.parametrize("data", ["binary", "three_class"])
def test_boosting_json_reproduces_scikit_learn_scores(tmp_path, data: str) -> None:
    from sklearn.ensemble import GradientBoostingClassifier

    X, y = _xor(600, seed=5) if data == "binary" else _data(600, seed=5)
    m = MetaClassifier(calibration="sigmoid", estimator="boosting", n_estimators=30).fit(X, y)
    Z = m._prepare(X, fit=False)
    ref = GradientBoostingClassifier(n_estimators=30, max_leaf_nodes=15, min_samples_leaf=40,
                                     learning_rate=0.1, random_state=0).fit(Z, y)
    np.testing.assert_allclose(m._raw_proba(Z), ref.predict_proba(Z), atol=1e-9)
    m.save(tmp_path / "b.json")
    back = MetaClassifier.load(tmp_path / "b.json")
    np.testing.assert_allclose(back.predict_proba(X), m.predict_proba(X))
    assert back.get_params() == m.get_params()
    # refitting as a logistic regression drops the trees (and the other way round)
    m.set_params(estimator="logistic").fit(X, y)
    assert hasattr(m, "coef_") and not hasattr(m, "trees_")
    assert '"trees"' not in m.to_json()


def test_status_classifier_with_a_boosted_refute_stage(tmp_path) -> None:
    X, y = _xor(900, seed=6)
    y = y.astype(object)
    X[:300, 2] += 4.0  # a supported block, separable by a linear stage one
    y[:300] = "Supported"
    m = StatusClassifier(["a", "b", "c"], refute_estimator="boosting").fit(X, y)
    assert m.support_.estimator == "logistic" and m.refute_.estimator == "boosting"
    Xt, yt = _xor(600, seed=7)
    assert (m.predict(Xt) == yt).mean() > 0.85
    m.save(tmp_path / "s.json")
    back = StatusClassifier.load(tmp_path / "s.json")
    np.testing.assert_allclose(back.predict_proba(Xt), m.predict_proba(Xt))
    assert back.get_params()["refute_estimator"] == "boosting"


def test_status_classifier_with_a_boosted_support_stage(tmp_path) -> None:
    """The shipped ensemble's shape: boosted trees for stage one, logistic for stage two."""
    X, xor = _xor(900, seed=8)
    y = np.where(X[:, 2] > 0, "Contradictory", "Insufficient_Info").astype(object)
    y[xor == "Contradictory"] = "Supported"  # Supported is the xor: no line draws it
    kw = {"refute_estimator": "logistic", "calibration": "sigmoid"}
    trees = StatusClassifier(["a", "b", "c"], estimator="boosting", **kw).fit(X, y)
    line = StatusClassifier(["a", "b", "c"], estimator="logistic", **kw).fit(X, y)
    assert trees.support_.estimator == "boosting" and trees.refute_.estimator == "logistic"
    Xt, xt = _xor(600, seed=9)
    sup = xt == "Contradictory"
    assert ((trees.predict(Xt) == "Supported") == sup).mean() > 0.85
    assert ((line.predict(Xt) == "Supported") == sup).mean() < 0.7
    trees.save(tmp_path / "s.json")
    back = StatusClassifier.load(tmp_path / "s.json")
    np.testing.assert_allclose(back.predict_proba(Xt), trees.predict_proba(Xt))
    assert back.get_params()["estimator"] == "boosting"
    assert back.support_threshold_ == trees.support_threshold_


def test_files_written_before_the_estimator_option_still_load() -> None:
    import json

    X, y = _data()
    m = StatusClassifier(["e", "c", "x", "maybe_missing"]).fit(X, y)
    d = json.loads(m.to_json())
    for part in (d, d["support"], d["refute"]):
        for key in ("estimator", "refute_estimator", "n_estimators", "learning_rate",
                    "max_leaf_nodes", "min_samples_leaf"):
            part["params"].pop(key, None)
    old = StatusClassifier.from_json(json.dumps(d))
    np.testing.assert_allclose(old.predict_proba(X), m.predict_proba(X))


def test_unknown_estimator_is_named() -> None:
    X, y = _data()
    with pytest.raises(ValueError, match="estimator.*'forest'"):
        MetaClassifier(estimator="forest").fit(X, y)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="estimator.*'trees'"):
        StatusClassifier(refute_estimator="trees").fit(X, y)  # type: ignore[arg-type]


def test_a_failed_fit_leaves_the_classifier_unfitted() -> None:
    m = MetaClassifier(["a", "b"])
    with pytest.raises(ValueError, match="at least two classes"):
        m.fit(np.zeros((4, 2)), ["Supported"] * 4)
    with pytest.raises(NotFittedError):  # not an AttributeError half-way through
        m.predict_proba([[0.0, 0.0]])
    with pytest.raises(NotFittedError):
        m.to_json()


def _corrupt(d: dict, stage: str, edit: object) -> str:
    import copy
    import json

    d = copy.deepcopy(d)
    edit(d[stage] if stage else d)  # type: ignore[operator]
    return json.dumps(d)


@pytest.mark.parametrize(("stage", "edit", "match"), [
    ("support", lambda s: s.update(mean=s["mean"][:1]), "mean must hold"),
    ("support", lambda s: s.update(scale=s["scale"][:-1]), "scale must hold"),
    ("support", lambda s: s["classes"].reverse(), "sorted order"),
    ("refute", lambda s: s["coef"][0].__setitem__(0, float("nan")), "finite"),
    ("refute", lambda s: s.update(coef=[row[:-1] for row in s["coef"]]), "coef / intercept"),
    # the shipped ensemble's stage one is boosted trees
    ("support", lambda s: s["trees"]["value"][0].__setitem__(0, float("nan")), "out of range"),
    ("support", lambda s: s["trees"]["feature"][0].__setitem__(0, 10_000), "out of range"),
    ("support", lambda s: s["trees"]["left"].pop(), "inconsistent shapes"),
    ("support", lambda s: s.pop("fill"), "lacks the field 'fill'"),
    ("support", lambda s: s["calibrators"].pop(), "1 calibrators for 2 classes"),
    ("support", lambda s: s["calibrators"][0].update(kind="magic"), "unknown calibrator"),
    # the shipped calibrators are sigmoids: they must map probabilities to probabilities
    ("support", lambda s: s["calibrators"][0].update(a="steep"),
     r"'support': .*calibrators\[0\]: sigmoid calibrator's a must be numbers, got 'steep'"),
    ("refute", lambda s: s["calibrators"][1].update(b=[1.0, 2.0]),
     r"'refute': .*calibrators\[1\]: sigmoid calibrator's b must be one number"),
    ("support", lambda s: s["calibrators"][1].pop("b"), "sigmoid calibrator lacks the field 'b'"),
    ("support", lambda s: s["calibrators"].__setitem__(0, {"kind": "constant", "value": 7.0}),
     r"calibrators\[0\]: constant calibrator's value must be in \[0, 1\], got 7.0"),
    # a child index that wraps (-1 of an inner node), loops back, or a NaN split
    ("support", lambda s: s["trees"]["right"][0].__setitem__(0, -1), "out of range"),
    ("support", lambda s: s["trees"]["left"][0].__setitem__(0, 0), "out of range"),
    ("support", lambda s: s["trees"]["threshold"][0].__setitem__(0, float("nan")),
     "out of range"),
    ("support", lambda s: s["params"].update(learning_rate=-0.1),
     "learning_rate must be a finite number > 0, got -0.1"),
    ("refute", lambda s: s["feature_names"].reverse(), "different feature names"),
    ("", lambda d: d.update(support_threshold=7.0), "support_threshold must be in"),
    ("", lambda d: d.pop("refute_prior"), "lacks the field 'refute_prior'"),
    ("", lambda d: d.pop("refute"), "lacks the field 'refute'"),
])
def test_status_classifier_file_that_does_not_fit_together_is_refused(stage, edit,
                                                                     match) -> None:
    import json

    from verifier.embedded import embedded_meta_path

    d = json.loads(embedded_meta_path("ensemble").read_text(encoding="utf-8"))
    StatusClassifier.from_json(json.dumps(d))  # the shipped file itself loads
    with pytest.raises(ValueError, match=match):
        StatusClassifier.from_json(_corrupt(d, stage, edit))


def test_meta_params_given_as_arrays_are_saved_as_lists(tmp_path) -> None:
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 2)), np.array(["a", "b"] * 30)
    m = MetaClassifier(feature_names=np.array(["f0", "f1"]), cv=2).fit(X, y)
    again = MetaClassifier.from_json(m.to_json())
    assert again.get_params()["feature_names"] == ["f0", "f1"]
    assert np.allclose(again.predict_proba(X), m.predict_proba(X))


def test_status_classifier_file_errors_are_value_errors() -> None:
    import json

    X, y = _data()
    good = json.loads(StatusClassifier(["e", "c", "x", "maybe_missing"]).fit(X, y).to_json())
    with pytest.raises(ValueError, match="not a status-classifier file .*'list'"):
        StatusClassifier.from_json("[]")
    for change, match in (({"refute_prior": None}, "malformed field"),
                          ({"params": {**good["params"], "bogus": 1}}, "malformed field.*bogus")):
        with pytest.raises(ValueError, match=match):
            StatusClassifier.from_json(json.dumps({**good, **change}))


def _isotonic_status_file() -> dict:
    import json

    X, y = _data(300)
    return json.loads(StatusClassifier(["e", "c", "x", "m"], calibration="isotonic")
                      .fit(X, y).to_json())


@pytest.mark.parametrize(("edit", "match"), [
    (lambda c: c.update(y=c["y"][:-1]), "isotonic x and y must be lists of one length >= 1"),
    (lambda c: c.update(x=[], y=[]), r"isotonic x and y must be .*shapes \(0,\) and \(0,\)"),
    (lambda c: c.update(x=c["x"][::-1]), "isotonic x must be non-decreasing"),
    (lambda c: c.update(y=[5.0] * len(c["y"])), r"isotonic y must be probabilities in \[0, 1\]"),
    (lambda c: c.update(x=[[0.1, 0.2]] * len(c["x"])), "isotonic x and y must be lists"),
    (lambda c: c.update(x=["a"] * len(c["x"])), "isotonic calibrator's x must be numbers"),
    (lambda c: c.update(y=[float("inf")] * len(c["y"])), "isotonic calibrator needs finite x, y"),
])
def test_corrupt_isotonic_calibrator_is_refused_at_load(edit, match) -> None:
    import json

    d = _isotonic_status_file()
    assert d["support"]["calibrators"][0]["kind"] == "isotonic"
    edit(d["support"]["calibrators"][0])
    with pytest.raises(ValueError, match=r"'support': meta-classifier file: calibrators\[0\]: "
                                         + match):
        StatusClassifier.from_json(json.dumps(d))


def test_corrupt_file_error_names_the_file(tmp_path) -> None:
    import json

    d = _isotonic_status_file()
    StatusClassifier.from_json(json.dumps(d))  # loads as written
    d["refute"]["calibrators"][0]["x"].reverse()
    path = tmp_path / "meta.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(ValueError, match=r"meta\.json': .*'refute': .*isotonic x must be "
                                         r"non-decreasing"):
        StatusClassifier.load(path)
    path.write_text(json.dumps(d["refute"]), encoding="utf-8")
    with pytest.raises(ValueError, match=r"meta\.json': meta-classifier file: calibrators\[0\]"):
        MetaClassifier.load(path)


def test_feature_signature_ignores_record_files_not_weights(tmp_path) -> None:
    """Editing a model card or a training log must not invalidate feature caches (it did: a
    README edit made train_meta.py recompute every cached row); weights or settings must."""
    from verifier.embedded import folder_fingerprint
    from verifier.training import RECORD_FILES

    (tmp_path / "config.json").write_text('{"a": 1}')
    (tmp_path / "model.safetensors").write_bytes(b"\x00\x01")
    (tmp_path / "README.md").write_text("# card\n")
    (tmp_path / "training_log.json").write_text("{}")
    before = folder_fingerprint(tmp_path, skip=RECORD_FILES)
    saved = folder_fingerprint(tmp_path)  # what indexes record: every file, as before
    (tmp_path / "README.md").write_text("# card, edited\n")
    (tmp_path / "training_log.json").write_text('{"epochs": 2}')
    (tmp_path / "chunk_tuning.json").write_text("{}")
    assert folder_fingerprint(tmp_path, skip=RECORD_FILES) == before
    assert folder_fingerprint(tmp_path) != saved
    (tmp_path / "config.json").write_text('{"a": 2}')
    assert folder_fingerprint(tmp_path, skip=RECORD_FILES) != before
    (tmp_path / "config.json").write_text('{"a": 1}')
    (tmp_path / "model.safetensors").write_bytes(b"\x00\x02")
    assert folder_fingerprint(tmp_path, skip=RECORD_FILES) != before


def test_code_fingerprint_reads_code_not_docstrings_comments_or_layout(tmp_path) -> None:
    """A docstring edit under verifier/ made every feature cache stale (about 35 minutes of
    features to compute again); code edits still must."""
    from verifier.training import code_fingerprint

    f = tmp_path / "m.py"

    def fingerprint(text: str) -> bytes:
        f.write_text(text, encoding="utf-8")
        return code_fingerprint(f)

    base = fingerprint('"""Module."""\nX = "a"\n\n\nclass C:\n    """Old."""\n\n'
                       '    def f(self):\n        """Old."""\n        return X  # one\n')
    assert fingerprint('"""Module, edited."""\nX = "a"\n\nclass C:\n    """New."""\n'
                       '    def f(self):\n        """New words."""\n\n'
                       '        return (X)  # two\n') == base
    assert fingerprint("X = 'a'\nclass C:\n    def f(self):\n        return X\n") == base
    # a string that is no docstring, a value, a name: code
    assert fingerprint('"""Module."""\nX = "b"\n\nclass C:\n    """Old."""\n'
                       '    def f(self):\n        """Old."""\n        return X\n') != base
    assert fingerprint('"""Module."""\nX = "a"\n\nclass C:\n    """Old."""\n'
                       '    def f(self):\n        """Old."""\n        return X + X\n') != base
    assert fingerprint('"""Module."""\nX = "a"\n\nclass C:\n    """Old."""\n'
                       '    def f(self):\n        "Old."\n        "Kept: a second string."\n'
                       '        return X\n') != base
    # a body that is only a docstring still parses to a body
    assert fingerprint('def g():\n    """Only this."""\n') == fingerprint("def g():\n    pass\n")
    # a file that does not parse: its bytes
    assert fingerprint("def (:\n") == b"def (:\n"


def test_status_classifier_breaks_ties_as_the_verifier_decides() -> None:
    """A 2-class fit has no stage two: p(Contradictory) == p(Insufficient_Info) for every
    row. Its unsupported rows are Insufficient_Info, as Verifier.decide makes them, not
    Contradictory."""
    from verifier import Verifier

    rng = np.random.default_rng(7)
    X = np.r_[rng.normal(2, 0.5, (60, 2)), rng.normal(-2, 0.5, (60, 2))]
    y = np.array(["Supported"] * 60 + ["Not_Supported"] * 60)
    model = StatusClassifier(["a", "b"], calibration="none").fit(X, y)
    assert model.refute_ is None
    p = model.predict_proba([[-2.0, -2.0]])[0]
    assert p[0] == p[1]
    assert str(model.predict([[-2.0, -2.0]])[0]) == "Insufficient_Info"
    decided = Verifier(meta=model).decide(
        dict(zip(model.classes_.tolist(), p.tolist(), strict=True)))
    assert decided.value == "Insufficient_Info"


def test_status_classifier_reads_a_dataframe_by_its_column_names() -> None:
    pd = pytest.importorskip("pandas")
    X, y = _data(300)
    df = pd.DataFrame(X, columns=["nli.e", "nli.c", "x", "maybe_missing"])
    m = StatusClassifier().fit(df, y)
    assert m.feature_names_in_.tolist() == ["nli.e", "nli.c", "x", "maybe_missing"]
    assert m.n_features_in_ == 4 and m.support_.n_features_in_ == 4
    assert StatusClassifier.from_json(m.to_json()).n_features_in_ == 4
    # columns in another order are put back in order; other columns are named
    np.testing.assert_allclose(m.predict_proba(df[df.columns[::-1]]), m.predict_proba(X))
    with pytest.raises(ValueError, match=r"missing \['maybe_missing'\], unexpected \['other'\]"):
        m.predict_proba(df.rename(columns={"maybe_missing": "other"}))
    # names given and a DataFrame of them in another order: read by name, not position
    named = StatusClassifier(["nli.e", "nli.c", "x", "maybe_missing"]).fit(df[df.columns[::-1]], y)
    np.testing.assert_allclose(named.predict_proba(X), m.predict_proba(X))
    meta = MetaClassifier().fit(df, y)
    assert meta.feature_names_in_.tolist() == list(df.columns) and meta.n_features_in_ == 4


def test_status_classifier_without_insufficient_info_rows_predicts_contradictory() -> None:
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(0, 1, (50, 2)), rng.normal(4, 1, (50, 2))]
    m = StatusClassifier(["a", "b"]).fit(X, ["Supported"] * 50 + ["Contradictory"] * 50)
    assert m.refute_ is None and m.refute_prior_ == 1.0
    assert m.predict([[4.0, 4.0]]).tolist() == ["Contradictory"]
    m = StatusClassifier(["a", "b"]).fit(X, ["Supported"] * 50 + ["Insufficient_Info"] * 50)
    assert m.refute_ is None and m.refute_prior_ == 0.0
    # the rows that weigh nothing say nothing: Insufficient_Info alone, then none at all
    y = ["Supported"] * 50 + ["Contradictory"] * 25 + ["Insufficient_Info"] * 25
    w = np.r_[np.ones(50), np.zeros(25), np.ones(25)]
    assert StatusClassifier(["a", "b"]).fit(X, y, sample_weight=w).refute_prior_ == 0.0
    w[75:] = 0.0
    assert StatusClassifier(["a", "b"]).fit(X, y, sample_weight=w).refute_prior_ == 0.5


def test_a_failed_status_fit_names_the_stage_and_keeps_the_fit_before(monkeypatch) -> None:
    X, y = _data(300)
    m = StatusClassifier(["e", "c", "x", "m"]).fit(X, y)
    before, support, refute = m.predict_proba(X), m.support_, m.refute_
    fit, calls = MetaClassifier.fit, []

    def stage_two_fails(self, *args, **kwargs):
        calls.append(self)
        if len(calls) == 2:
            raise RuntimeError("stage two failed")
        return fit(self, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(MetaClassifier, "fit", stage_two_fails)
        with pytest.raises(RuntimeError, match="stage two failed"):
            m.fit(X * 10, y)
    assert m.support_ is support and m.refute_ is refute  # not a new stage one, an old two
    np.testing.assert_array_equal(m.predict_proba(X), before)
    few = np.r_[y[y == "Supported"][:20], ["Contradictory"] * 2, ["Insufficient_Info"] * 20]
    with pytest.raises(ValueError, match=r"stage two \(Contradictory vs Insufficient_Info\): "
                                         r"calibration with cv=3 folds needs at least 3 rows "
                                         r"of each class, got \{'Contradictory': 2, "
                                         r"'Insufficient_Info': 20\}"):
        m.fit(X[: len(few)] * 10, few)
    assert m.support_ is support and m.refute_ is refute
    np.testing.assert_array_equal(m.predict_proba(X), before)
    fresh = StatusClassifier(["e", "c", "x", "m"])
    with pytest.raises(ValueError, match=r"stage one \(Supported vs the rest\): .*got "
                                         r"\{'Not_Supported': 2, 'Supported': 2\}"):
        fresh.fit(X[:4], ["Supported", "Supported", NOT_SUPPORTED, NOT_SUPPORTED])
    with pytest.raises(ValueError, match="stage two"):
        fresh.fit(X[: len(few)], few)
    with pytest.raises(NotFittedError):  # not an AttributeError of a half-fitted model
        fresh.predict(X)
    with pytest.raises(ValueError, match="cv must be an int >= 2 .*got 1"):
        MetaClassifier(cv=1).fit(X, y)
    meta = MetaClassifier(["e", "c", "x", "m"]).fit(X, y)
    coef, fill = meta.coef_, meta.fill_
    with pytest.raises(ValueError, match="y: calibration with cv=3 folds"):
        meta.fit(X[:5] + 1.0, y[:5])
    assert meta.coef_ is coef and meta.fill_ is fill  # not the failed fit's medians


def test_support_threshold_weighs_rows_and_skips_one_class_groups() -> None:
    from verifier.meta import _best_threshold

    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.95, 400)
    pos = rng.random(400) < p  # calibrated-looking
    # a group of negatives only: nothing predicted positive scores its macro-F1 1.0
    q = np.r_[p, rng.uniform(0.05, 0.7, 200)]
    qpos = np.r_[pos, np.zeros(200, bool)]
    groups = np.array(["a"] * 400 + ["b"] * 200, dtype=object)
    assert _best_threshold(q, qpos, groups) == _best_threshold(p, pos, None)
    # rows of weight 0 count as rows left out
    w = np.r_[np.ones(400), np.zeros(200)]
    assert _best_threshold(q, qpos, None, w) == _best_threshold(p, pos, None)
    assert _best_threshold(q, qpos, None) != _best_threshold(p, pos, None)


def test_numpy_scalar_params_are_saved(tmp_path) -> None:
    X, y = _data(300)
    m = StatusClassifier(["e", "c", "x", "m"], cv=np.int64(3), C=np.float32(0.5)).fit(X, y)
    m.save(tmp_path / "s.json")
    back = StatusClassifier.load(tmp_path / "s.json")
    assert back.cv == 3 and type(back.cv) is int
    np.testing.assert_allclose(back.predict_proba(X), m.predict_proba(X))
    assert MetaClassifier.from_json(MetaClassifier(cv=np.int64(2)).fit(X, y).to_json()).cv == 2


def test_collect_features_refuses_two_examples_of_one_key() -> None:
    from types import SimpleNamespace

    from verifier.datasets import Example
    from verifier.training import collect_features

    class Fake:
        def verify_pairs(self, claims, evidences):
            return [SimpleNamespace(scores={"nli.entailment": len(c) / 100}) for c in claims]

    ex = [Example("q1", "short", "evidence A", "SUPPORTS", "toy", "eval"),
          Example("q1", "a much longer claim", "evidence B", "REFUTES", "toy", "eval")]
    with pytest.raises(ValueError, match=r"share the dataset and id \('toy', 'q1'\)"):
        collect_features(Fake(), ex)
    # the same example twice is one row, given twice
    rows = collect_features(Fake(), [ex[0], ex[0]])
    assert rows[0]["features"] == rows[1]["features"] == {"nli.entailment": 0.05}


def _sigmoid_status_file() -> dict:
    import json

    X, y = _data(300)
    return json.loads(StatusClassifier(["e", "c", "x", "m"], calibration="sigmoid")
                      .fit(X, y).to_json())


@pytest.mark.parametrize(("edit", "match"), [
    (lambda d: d["support"].update(calibrators=[]),
     r"'support': meta-classifier file: calibrators is empty, but params.calibration is "
     r"'sigmoid'"),
    (lambda d: d["refute"].update(missing_cols=[i + 0.5 for i in d["refute"]["missing_cols"]]),
     r"'refute': meta-classifier file: missing_cols must be column indices \(integers\), "
     r"got \[3.5\]"),
    (lambda d: d.update(refute_prior="0.5"), "refute_prior must be a number, got '0.5'"),
    (lambda d: d.update(support_threshold="0.4"),
     "support_threshold must be a number, got '0.4'"),
])
def test_damaged_status_file_is_refused_at_load(tmp_path, edit, match) -> None:
    import json

    d = _sigmoid_status_file()
    assert d["refute"]["missing_cols"] == [3]
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    StatusClassifier.load(path)  # loads as written
    edit(d)
    path.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(ValueError, match=r"damaged\.json': .*" + match):
        StatusClassifier.load(path)


def test_boosted_trees_of_no_nodes_are_refused_at_load() -> None:
    import json

    from verifier.embedded import embedded_meta_path

    d = json.loads(embedded_meta_path("ensemble").read_text(encoding="utf-8"))
    trees = d["support"]["trees"]  # the shipped ensemble's stage one is boosted trees
    for k in trees:
        if k != "klass":
            trees[k] = [[] for _ in trees[k]]
    with pytest.raises(ValueError, match=r"'support': .*trees must hold at least one tree of "
                                         r"one node, got arrays of shape \(\d+, 0\)"):
        StatusClassifier.from_json(json.dumps(d))
