"""Verifier ensemble against its parts, on the evaluation splits of seven data sets.

For each set in :data:`verifier.training.META_SETS` (the whole ``eval`` split unless
``--limit`` samples it; the shipped meta-classifiers were fitted on the ``train`` splits
only) this prints macro-F1 and balanced accuracy of

(a) the NLI detector alone (the embedded model's probabilities, threshold rule: Supported
    when entailment >= one cut and >= contradiction, else Contradictory when contradiction
    >= another; both cuts learnt on the train splits of the table's sets, the rows the
    classifiers were fitted on less the pipeline rows, by the table's criterion, the mean
    per-set macro-F1, :func:`tune_nli_cuts`; ``nli_default`` is the rule at its 0.5
    defaults, ``Verifier(meta=None)``),
(a') the NLI features through a calibrated classifier (``models/meta/nli_only.json``):
     how much comes from calibration alone,
(b) the evidence-alignment classifier alone (``models/meta/alignment.json``),
(c) the ensemble (``models/meta/ensemble.json``, the default ``Verifier``),

an ablation row per detector (the ensemble refitted without NLI = the alignment
classifier, without alignment = ``nli_only``; and with the uncertainty features, which the
shipped ensemble leaves out, see ``models/recipes/train_meta.py``), the expected calibration
error (10 equal-width bins) per set and pooled, of the most probable status's probability
(``ece``, the usual top-label ECE) and of the decided status's (``ece_decided``: the status
the verifier gives, at its learned cut, and the probability it gives it), each with the ECE
that perfectly calibrated probabilities would reach on as many rows in 95 % of samples
(:func:`ece_noise_floor`: a small set's ECE is not 0 even then), a reliability diagram
(PNG), the time of the three detectors run in threads, with the alignment detector in a
worker process, and one after another, and the latency of ``Verifier().verify`` on a
5-claim draft against 10 passages. The ensemble's margin over the NLI detector alone comes
with a paired bootstrap interval (each set's rows resampled, the mean over sets recomputed;
``--bootstrap`` resamples, seeded), and with each set's AUROC for Supported by the ensemble
and by the NLI row (:func:`supported_auroc`): how much of the margin is a better ranking of
the claims rather than a better cut.

Sets whose labels say nothing about "not enough info" (FEVER-Symmetric, COVID-Fact: supports
/ refutes; SciFact, SummEdits, FRANK: supported / not) are scored as Supported vs the rest;
HealthVer is scored on all three statuses. Eval rows that a training row of the classifiers
repeats (the same claim and an evidence sentence of it: FEVER dev rows that FEVER-Symmetric's
train split holds) are left out of every row of the table, and counted.

The NLI cuts need the training rows' features: ``--cache DIR`` keeps them with the eval rows'
(``train.jsonl``, ``pipeline.jsonl``: ``train_meta.py --cache``'s files), or ``--nli-cuts
default`` keeps the rule at 0.5 and reads no training row.

    python benchmarks/bench_verifier.py [--limit N] [--cache DIR] [--nli-cuts train|default]
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from _common import RESULTS, write_result
from sklearn.metrics import balanced_accuracy_score, f1_score, roc_auc_score

from mitigation.values import clear_caches
from verifier.datasets import Example, _fever_key, _fever_sentences
from verifier.embedded import embedded_meta_path
from verifier.meta import StatusClassifier
from verifier.training import META_SETS, collect_features, feature_array, sample_examples
from verifier.verify import Verifier

STATUSES = ["Contradictory", "Insufficient_Info", "Supported"]
#: The shipped classifiers scored, and the ablation each stands for.
MODELS = ("nli_only", "alignment", "ensemble", "with_uncertainty")
ABLATIONS = {"without NLI": "alignment", "without alignment": "nli_only",
             "with uncertainty": "with_uncertainty"}
ROWS = ("nli", "nli_only", "alignment", "ensemble")
#: The cuts :func:`tune_nli_cuts` tries (as ``verifier.meta``'s learned cut).
CUT_GRID = np.round(np.arange(0.05, 0.951, 0.01), 2)

#: A 5-claim draft and 10 passages for the latency figure (2 claims are wrong).
LATENCY_PASSAGES = (
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was completed in "
    "1889 and is 330 metres tall.",
    "Gustave Eiffel's company designed and built the tower for the 1889 World's Fair.",
    "The Louvre is the world's most-visited museum, with 8.7 million visitors in 2023.",
    "Paris is the capital and most populous city of France, with about 2.1 million residents.",
    "The Seine river flows through Paris for 13 kilometres.",
    "Notre-Dame de Paris is a medieval Catholic cathedral; its construction began in 1163.",
    "The Paris Metro opened in 1900 and has 16 lines.",
    "Montmartre is a large hill in Paris's northern 18th arrondissement, 130 m high.",
    "The Arc de Triomphe honours those who fought for France in the Napoleonic Wars.",
    "The Palace of Versailles lies about 20 kilometres west of Paris.",
)
LATENCY_DRAFT = (
    "The Eiffel Tower was completed in 1889. It is 300 metres tall. The Louvre had 8.7 million "
    "visitors in 2023. The Paris Metro opened in 1910. Versailles is about 20 kilometres west "
    "of Paris."
)


def collapse(labels: np.ndarray, three_class: bool) -> np.ndarray:
    """Statuses -> the set's scheme (binary: Supported / Not_Supported)."""
    labels = np.asarray(labels, dtype=object)
    if three_class:
        return labels
    return np.where(labels == "Supported", "Supported", "Not_Supported")


def gold_statuses(rows: Sequence[dict]) -> tuple[np.ndarray, bool]:
    """The rows' gold statuses in their set's scheme (a 2-class set's not-supported rows as
    ``Not_Supported``), and whether the set is 3-class (it has ``Insufficient_Info`` rows)."""
    gold = np.asarray([r["status"] for r in rows], dtype=object)
    three = bool(np.isin(gold, ["Insufficient_Info"]).any())
    return collapse(np.where(gold == "Not_Supported", "Contradictory", gold), three), three


def eval_rows(verifier: Verifier, cache: Path | None, limit: int | None = None
              ) -> dict[str, list[dict]]:
    """Feature rows of each set's eval split (all of it, or a fixed sample of ``limit``),
    from ``cache``'s ``eval.jsonl`` when given (this script's ``--cache`` folder)."""
    return {name: collect_features(verifier, sample_examples(name, "eval", limit),
                                   cache=None if cache is None else cache / "eval.jsonl")
            for name in META_SETS}


def seen_in_training(examples: Sequence[Example], train: Sequence[Example]) -> np.ndarray:
    """Which ``examples`` a training example repeats: the same claim and one of its evidence
    sentences (letters and digits compared, as the FEVER split compares them).

    Example:
        >>> a = Example("1", "Paris is big.", "Paris is big . It rains .", "SUPPORTS", "fever",
        ...             "eval")
        >>> b = Example("9", "paris is big", "It rains .", "SUPPORTS", "fever-sym", "train")
        >>> seen_in_training([a], [b]).tolist()
        [True]
    """
    keys = {(_fever_key(e.claim), k) for e in train for k in _fever_sentences(e.evidence_text)}
    return np.array([any((_fever_key(e.claim), k) in keys
                         for k in _fever_sentences(e.evidence_text)) for e in examples],
                    dtype=bool)


def _macro_f1(gold: np.ndarray, pred: np.ndarray, labels: Sequence[str]) -> float:
    """Macro-F1 over ``labels``, as the table computes it."""
    return float(f1_score(gold, pred, labels=list(labels), average="macro", zero_division=0))


def tune_nli_cuts(rows_by_set: dict[str, list[dict]], grid: np.ndarray = CUT_GRID
                  ) -> dict[str, float]:
    """The NLI threshold rule's cuts that maximise the mean per-set macro-F1 on ``rows_by_set``
    (the classifiers' training rows), each set scored as this benchmark scores it.

    ``support``: Supported when entailment >= it and >= contradiction; ``contradiction``:
    else Contradictory when contradiction >= it, else Insufficient_Info (only 3-class sets
    tell these apart). Ties go to the cuts nearest 0.5, as ``verifier.meta``'s learned cut.
    Rows without NLI features are left out.

    Example:
        >>> rows = [{"status": s, "features": {"nli.entailment": e, "nli.contradiction": c}}
        ...         for s, e, c in (("Supported", 0.3, 0.1), ("Contradictory", 0.2, 0.7),
        ...                         ("Supported", 0.6, 0.3), ("Contradictory", 0.1, 0.2))]
        >>> tune_nli_cuts({"x": rows})["support"]
        0.3
    """
    sets = []
    for rows in rows_by_set.values():
        gold, three = gold_statuses(rows)
        X = feature_array(rows, ["nli.entailment", "nli.contradiction"])
        ok = ~np.isnan(X).any(axis=1)
        if len(set(gold[ok].tolist())) > 1:
            sets.append((gold[ok], sorted(set(gold[ok].tolist())), three, X[ok, 0], X[ok, 1]))
    if not sets:
        raise ValueError("no set has rows of two statuses with NLI features to tune cuts on")
    best: tuple[float, float, float, float] | None = None
    for te in grid:
        two, scored = [], []
        for gold, labels, three, e, c in sets:
            sup = (e >= te) & (e >= c)
            if three:
                scored.append((gold, labels, sup, c))
            else:
                two.append(_macro_f1(gold, np.where(sup, "Supported", "Not_Supported"),
                                     labels))
        for tc in grid if scored else [0.5]:
            f1 = two + [_macro_f1(gold, np.where(sup, "Supported", np.where(
                c >= tc, "Contradictory", "Insufficient_Info")), labels)
                for gold, labels, sup, c in scored]
            key = (float(np.mean(f1)), -abs(te - 0.5) - abs(tc - 0.5), float(te), float(tc))
            if best is None or key[:2] > best[:2]:
                best = key
    assert best is not None
    return {"support": best[2], "contradiction": best[3],
            "train_mean_macro_f1": round(100 * best[0], 2)}


def training_rows(verifier: Verifier, cache: Path | None
                  ) -> tuple[dict[str, list[dict]], list[Example]]:
    """The rows the shipped classifiers were fitted on (``models/recipes/train_meta.py``'s
    recipe: its row limit, its pipeline rows), by set, and their examples."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models" / "recipes"))
    try:
        import train_meta  # a script folder, not a package
    finally:
        sys.path.pop(0)
    rows, examples = train_meta.training_rows(verifier, limit=train_meta.RECIPE["limit"],
                                              cache=cache)
    by_set: dict[str, list[dict]] = {}
    for r in rows:
        by_set.setdefault(r["dataset"], []).append(r)
    return by_set, examples


def confidences(p: np.ndarray, three_class: bool) -> tuple[np.ndarray, np.ndarray]:
    """Most probable label and its probability under the set's scheme (``p`` in STATUSES
    order): what calibration is measured on. Decisions (macro-F1) use each classifier's own
    rule instead (``StatusClassifier.predict``: its learned p(Supported) cut)."""
    if three_class:
        k = p.argmax(axis=1)
        return np.asarray(STATUSES, dtype=object)[k], p[np.arange(len(p)), k]
    s = p[:, 2]
    return np.where(s >= 0.5, "Supported", "Not_Supported").astype(object), np.maximum(s, 1 - s)


def decided_confidences(p: np.ndarray, decided: np.ndarray, three_class: bool
                        ) -> tuple[np.ndarray, np.ndarray]:
    """The decided status (``decided``: ``StatusClassifier.predict``'s, at its learned cut)
    under the set's scheme and the probability the classifier gives it (``p`` in STATUSES
    order; a 2-class set's Not_Supported: 1 - p(Supported)).

    Example:
        >>> p = np.array([[0.3, 0.25, 0.45]])
        >>> decided_confidences(p, np.array(["Supported"], dtype=object), False)[1].tolist()
        [0.45]
    """
    decided = np.asarray(decided, dtype=object)
    if three_class:
        k = np.array([STATUSES.index(d) for d in decided], dtype=int)
        return decided, p[np.arange(len(p)), k]
    sup = decided == "Supported"
    return collapse(decided, False), np.where(sup, p[:, 2], 1 - p[:, 2])


def ece(conf: np.ndarray, correct: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error with equal-width bins."""
    edges = np.linspace(0, 1, bins + 1)
    idx = np.clip(np.digitize(conf, edges[1:-1]), 0, bins - 1)
    total = 0.0
    for b in range(bins):
        m = idx == b
        if m.any():
            total += m.mean() * abs(conf[m].mean() - correct[m].mean())
    return float(total)


def ece_noise_floor(conf: np.ndarray, resamples: int = 1000, bins: int = 10,
                    seed: int = 0) -> float:
    """The 95th percentile of the ECE that perfectly calibrated probabilities would show on
    this many rows (consistency resampling, Bröcker & Smith 2007).

    Each resample draws every row's correctness from its own confidence and measures the
    ECE with :func:`ece`: how far a small set's ECE strays above 0 from sampling alone.

    Example:
        >>> conf = np.full(200, 0.8)
        >>> 0.01 < ece_noise_floor(conf, 200) < 0.1
        True
    """
    if not isinstance(resamples, int) or isinstance(resamples, bool) or resamples < 1:
        raise ValueError(f"resamples must be an int >= 1, got {resamples!r}")
    conf = np.asarray(conf, dtype=float)
    if conf.ndim != 1 or not len(conf) or not np.all((conf >= 0) & (conf <= 1)):
        raise ValueError(f"conf must be a non-empty 1-D array of values in [0, 1], got shape "
                         f"{conf.shape}")
    rng = np.random.default_rng(seed)
    draws = [ece(conf, (rng.random(len(conf)) < conf).astype(float), bins)
             for _ in range(resamples)]
    return float(np.percentile(draws, 95))


def bootstrap_margin(pairs: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]],
                     resamples: int, seed: int = 0) -> dict[str, float]:
    """Paired bootstrap of the mean over sets of macro-F1(a) - macro-F1(b).

    ``pairs``: per set, ``(gold, pred_a, pred_b)``; each resample draws every set's rows with
    replacement (the same rows for both) and recomputes the mean difference. Returns the
    2.5th and 97.5th percentiles and the share of resamples where ``a`` is not ahead. Rows
    are drawn one by one: rows that share evidence (a FEVER group, a SciFact abstract) are
    not independent, so the interval is somewhat narrower than a draw by group would give.

    Example:
        >>> g = np.array(["S", "N"] * 50)
        >>> bootstrap_margin({"x": (g, g, g[::-1])}, 50)["low"]
        100.0
    """
    if not isinstance(resamples, int) or isinstance(resamples, bool) or resamples < 1:
        raise ValueError(f"resamples must be an int >= 1, got {resamples!r}")
    rng = np.random.default_rng(seed)
    labels = {name: sorted(set(gold.tolist())) for name, (gold, _, _) in pairs.items()}
    diffs = np.empty(resamples)
    for i in range(resamples):
        per_set = []
        for name, (gold, a, b) in pairs.items():
            idx = rng.integers(0, len(gold), len(gold))
            per_set.append(100 * (f1_score(gold[idx], a[idx], labels=labels[name],
                                           average="macro", zero_division=0)
                                  - f1_score(gold[idx], b[idx], labels=labels[name],
                                             average="macro", zero_division=0)))
        diffs[i] = np.mean(per_set)
    return {"low": round(float(np.percentile(diffs, 2.5)), 2),
            "high": round(float(np.percentile(diffs, 97.5)), 2),
            "share_not_ahead": round(float((diffs <= 0).mean()), 4), "resamples": resamples}


def nli_rule(rows: list[dict], verifier: Verifier) -> np.ndarray:
    """Statuses of the NLI threshold rule (the verifier with ``meta=None``)."""
    out = []
    for r in rows:
        f = r["features"]
        row = np.array([f["nli.entailment"], f["nli.neutral"], f["nli.contradiction"]])
        out.append(verifier.status_of(row).value)
    return np.asarray(out, dtype=object)


def ranking_auroc(rows: Sequence[dict], scores: npt.ArrayLike) -> float | None:
    """AUROC for ``Supported`` against the rest of ``scores`` (one per row; rows whose score
    is ``NaN`` are left out); ``None`` when the rows left hold one class."""
    s = np.asarray(scores, dtype=np.float64)
    if s.shape != (len(rows),):
        raise ValueError(f"scores must hold one score per row ({len(rows)}), got shape "
                         f"{s.shape}")
    y = np.array([r["status"] == "Supported" for r in rows])
    ok = ~np.isnan(s)
    if y[ok].all() or not y[ok].any():
        return None
    return float(roc_auc_score(y[ok], s[ok]))


def nli_margin(rows: Sequence[dict]) -> np.ndarray:
    """The NLI row's entailment minus contradiction of each row (``NaN`` where missing)."""
    X = feature_array(rows, ["nli.entailment", "nli.contradiction"])
    return X[:, 0] - X[:, 1]


def supported_auroc(rows: list[dict], p_supported: np.ndarray) -> dict[str, float | None]:
    """How well Supported claims are ranked above the rest, cut-free (AUROC): by
    ``p_supported`` (the ensemble's) and by the NLI row's entailment minus contradiction.

    The margin over the NLI threshold rule mixes two things: a better ranking of the claims
    and better cuts. This gives the ranking alone; ``None`` for a set with one class.

    Example:
        >>> rows = [{"status": s, "features": {"nli.entailment": e, "nli.contradiction": 0.1}}
        ...         for s, e in (("Supported", 0.9), ("Contradictory", 0.2), ("Supported", 0.15))]
        >>> supported_auroc(rows, np.array([0.8, 0.1, 0.6]))
        {'ensemble': 1.0, 'nli': 0.5}
    """
    if len(p_supported) != len(rows):
        raise ValueError(f"p_supported has {len(p_supported)} items but rows has {len(rows)}")
    nli = nli_margin(rows)  # both ranked on the rows that have NLI features
    ens = np.where(np.isnan(nli), np.nan, np.asarray(p_supported, dtype=np.float64))
    out = {"ensemble": ranking_auroc(rows, ens), "nli": ranking_auroc(rows, nli)}
    return {k: None if v is None else round(v, 4) for k, v in out.items()}


def model_proba(model: StatusClassifier, rows: list[dict]) -> np.ndarray:
    X = feature_array(rows, list(model.feature_names_in_))
    p = model.predict_proba(X)
    return p[:, [list(model.classes_).index(s) for s in STATUSES]]


_WORKER: Verifier | None = None


def _worker_start() -> None:
    global _WORKER
    _WORKER = Verifier(meta=None, alignment_classifier=None)


def _worker_alignment(paired: Sequence) -> list[dict[str, float]]:
    assert _WORKER is not None
    return _WORKER._run_alignment(paired)


def time_parallel(verifier: Verifier, rows: list, repeats: int) -> dict[str, float]:
    """Seconds of ``verify_pairs`` with the detectors in threads, with the alignment
    detector in a worker process (its own models; NLI in this one, side by side), and one
    after another; the modes interleaved, median over ``repeats``."""
    claims = [e.claim for e in rows]
    evid = [e.evidence_text for e in rows]
    verifier.verify_pairs(claims[:8], evid[:8])  # warm-up
    out: dict[str, list[float]] = {"threads": [], "processes": [], "sequential": []}
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_worker_start) as pool:
        def in_worker(paired: Sequence) -> list[dict[str, float]]:
            return pool.submit(_worker_alignment, list(paired)).result()

        pool.submit(_worker_alignment, []).result()  # starts the worker
        for _ in range(repeats + 1):  # the first round warms the worker's models up
            for mode in out:
                verifier.parallel = mode != "sequential"
                if mode == "processes":
                    verifier._run_alignment = in_worker  # type: ignore[method-assign]
                try:
                    t0 = time.perf_counter()
                    verifier.verify_pairs(claims, evid)
                    out[mode].append(time.perf_counter() - t0)
                finally:
                    verifier.__dict__.pop("_run_alignment", None)
    verifier.parallel = None
    return {k: round(float(np.median(v[1:])), 2) for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=0,
                    help="rows per data set, a fixed sample (0, the default: the whole eval "
                         "split)")
    ap.add_argument("--cache", type=Path, default=None, help="feature cache folder (resumes)")
    ap.add_argument("--timing-rows", type=int, default=128)
    ap.add_argument("--plot", type=Path, default=RESULTS / "verifier_reliability.png")
    ap.add_argument("--latency-runs", type=int, default=20)
    ap.add_argument("--bootstrap", type=int, default=1000,
                    help="paired bootstrap resamples for the ensemble - NLI margin's interval")
    ap.add_argument("--nli-cuts", choices=("train", "default"), default="train",
                    help="the NLI row's cuts: learnt on the classifiers' training rows "
                    "(default; their features are computed, or read from --cache), or the "
                    "rule's 0.5 defaults (no training row read; then seen eval rows are kept)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    verifier = Verifier(meta=None, alignment_classifier=None)
    models = {name: StatusClassifier.load(embedded_meta_path(name)) for name in MODELS}
    cuts: dict[str, float] = {"support": verifier.support_threshold,
                              "contradiction": verifier.contradiction_threshold}
    train_examples: list[Example] = []
    if args.nli_cuts == "train":
        train_sets, train_examples = training_rows(verifier, args.cache)
        # the table's sets: the pipeline rows (drafts' claims against retrieved documents)
        # are none of them (with them the cuts came out 0.47 / 0.71, and NLI alone 66.8)
        cuts = tune_nli_cuts({k: v for k, v in train_sets.items() if k in META_SETS})
    nli_verifier = Verifier(meta=None, alignment_classifier=None,
                            support_threshold=cuts["support"],
                            contradiction_threshold=cuts["contradiction"])
    print(f"NLI alone: Supported when entailment >= {cuts['support']:.2f} (and >= "
          f"contradiction), Contradictory when contradiction >= {cuts['contradiction']:.2f}"
          + (f" (learnt on the table's sets' train rows the classifiers were fitted on: "
             f"mean macro-F1 {cuts['train_mean_macro_f1']:.1f} there)" if train_examples else
             " (the defaults)"), flush=True)
    table, pooled_conf, pooled_ok, curves = {}, [], [], {}
    pooled_decided: list[tuple[np.ndarray, np.ndarray]] = []
    timing_pool = []
    margin_pairs = {}
    for name in META_SETS:
        ex = sample_examples(name, "eval", args.limit or None)
        timing_pool += ex[:16]
        seen = seen_in_training(ex, train_examples)
        cache = args.cache / "eval.jsonl" if args.cache else None
        rows = collect_features(verifier, ex, cache=cache)
        rows = [r for r, s in zip(rows, seen, strict=True) if not s]
        gold, three = gold_statuses(rows)
        res: dict[str, Any] = {"n": len(rows),
                               "scheme": "3-class" if three else "supported vs rest",
                               "left_out_seen_in_training": int(seen.sum())}
        preds = {"nli": collapse(nli_rule(rows, nli_verifier), three),
                 "nli_default": collapse(nli_rule(rows, verifier), three)}
        probas, decided = {}, {}
        for mname, model in models.items():
            probas[mname] = model_proba(model, rows)
            decided[mname] = model.predict(
                feature_array(rows, list(model.feature_names_in_))).astype(object)
            preds[mname] = collapse(decided[mname], three)
        margin_pairs[name] = (gold, preds["ensemble"], preds["nli"])
        for key, pred in preds.items():
            labels = sorted(set(gold.tolist()))
            res[key] = {"macro_f1": round(100 * f1_score(gold, pred, labels=labels,
                                                         average="macro", zero_division=0), 1),
                        "bacc": round(100 * balanced_accuracy_score(gold, pred), 1)}
        pred, conf = confidences(probas["ensemble"], three)
        ok = (pred == gold).astype(float)
        res["ensemble"]["ece"] = round(ece(conf, ok), 4)
        res["ensemble"]["ece_noise_95"] = round(ece_noise_floor(conf), 4)
        dpred, dconf = decided_confidences(probas["ensemble"], decided["ensemble"], three)
        dok = (dpred == gold).astype(float)
        res["ensemble"]["ece_decided"] = round(ece(dconf, dok), 4)
        res["ensemble"]["ece_decided_noise_95"] = round(ece_noise_floor(dconf), 4)
        pooled_decided.append((dconf, dok))
        res["auroc_supported"] = supported_auroc(rows, probas["ensemble"][:, 2])
        pooled_conf.append(conf)
        pooled_ok.append(ok)
        curves[name] = (conf, ok)
        table[name] = res
        print(f"{name:10s} n={len(rows):4d} ({res['scheme']}"
              + (f"; {int(seen.sum())} seen in training left out" if seen.any() else "")
              + "): " + "  ".join(f"{k} F1 {res[k]['macro_f1']:5.1f} BAcc "
                                  f"{res[k]['bacc']:5.1f}" for k in ROWS)
              + f"  ECE {res['ensemble']['ece']:.3f} (calibrated: <= "
              f"{res['ensemble']['ece_noise_95']:.3f}), of the decided status "
              f"{res['ensemble']['ece_decided']:.3f} (<= "
              f"{res['ensemble']['ece_decided_noise_95']:.3f})", flush=True)
    keys = [*ROWS, "nli_default", "with_uncertainty"]
    mean = {k: round(float(np.mean([table[s][k]["macro_f1"] for s in table])), 2) for k in keys}
    mean_bacc = {k: round(float(np.mean([table[s][k]["bacc"] for s in table])), 2)
                 for k in keys}
    conf, ok = np.concatenate(pooled_conf), np.concatenate(pooled_ok)
    pooled_ece = round(ece(conf, ok), 4)
    pooled_ece_decided = round(ece(np.concatenate([c for c, _ in pooled_decided]),
                                   np.concatenate([o for _, o in pooled_decided])), 4)
    print("\nmean macro-F1: " + ", ".join(f"{k} {mean[k]:.1f}" for k in ROWS)
          + f" (NLI alone at the 0.5 defaults: {mean['nli_default']:.1f})")
    print("mean BAcc:     " + ", ".join(f"{k} {mean_bacc[k]:.1f}" for k in ROWS)
          + f" (NLI alone at the 0.5 defaults: {mean_bacc['nli_default']:.1f})")
    print("\nablation (macro-F1 per set; mean; change against the ensemble):")
    for name, key in ABLATIONS.items():
        print(f"  ensemble {name:18s} "
              + " ".join(f"{table[s][key]['macro_f1']:5.1f}" for s in table)
              + f"   mean {mean[key]:5.1f} ({mean[key] - mean['ensemble']:+.1f})")
    margin = bootstrap_margin(margin_pairs, args.bootstrap)
    print(f"ensemble - NLI alone: {mean['ensemble'] - mean['nli']:+.1f} macro-F1 points "
          f"(95 % paired bootstrap interval {margin['low']:+.1f} to {margin['high']:+.1f} "
          f"over {margin['resamples']} resamples; vs calibrated NLI: "
          f"{mean['ensemble'] - mean['nli_only']:+.1f}; vs NLI alone at the 0.5 defaults: "
          f"{mean['ensemble'] - mean['nli_default']:+.1f})")
    ranked = {s: t["auroc_supported"] for s, t in table.items()
              if t["auroc_supported"]["ensemble"] is not None}
    print("ranking of Supported claims (AUROC), ensemble vs NLI entailment - contradiction: "
          + ", ".join(f"{s} {a['ensemble']:.3f} vs {a['nli']:.3f}" for s, a in ranked.items())
          + f"; mean {np.mean([a['ensemble'] for a in ranked.values()]):.3f} vs "
          f"{np.mean([a['nli'] for a in ranked.values()]):.3f}")
    for key, what, pooled in (("ece", "the most probable status", pooled_ece),
                              ("ece_decided", "the decided status", pooled_ece_decided)):
        over = [s for s, t in table.items() if t["ensemble"][key] > 0.05]
        print(f"ECE of {what}'s probability: pooled {pooled:.3f}, max per set "
              f"{max(t['ensemble'][key] for t in table.values()):.3f}; sets over 0.05: "
              + (", ".join(f"{s} {table[s]['ensemble'][key]:.3f} (perfectly calibrated "
                           f"probabilities: <= {table[s]['ensemble'][key + '_noise_95']:.3f} "
                           "in 95 % of samples this size)" for s in over) or "none"))
    times = time_parallel(verifier, timing_pool[: args.timing_rows], repeats=2)
    print(f"detectors on {min(len(timing_pool), args.timing_rows)} pairs: threads "
          f"{times['threads']}s, alignment in a worker process {times['processes']}s, one "
          f"after another {times['sequential']}s (one after another / threads "
          f"{times['sequential'] / times['threads']:.2f}, / processes "
          f"{times['sequential'] / times['processes']:.2f})")
    latency = time_verify(args.latency_runs)
    print(f"Verifier().verify, 5 claims x 10 passages: median {latency['median_ms']:.0f} ms "
          f"over {args.latency_runs} runs after warm-up (target < 150 ms; detectors in "
          f"threads: {latency['threads_median_ms']:.0f} ms); median per stage: "
          + ", ".join(f"{k} {v:.0f} ms" for k, v in latency["stages_ms"].items()))
    _plot(curves, (conf, ok), args.plot)
    write_result("verifier", {"limit": args.limit, "nli_cuts": cuts,
                              "sets": table, "mean_macro_f1": mean,
                              "mean_bacc": mean_bacc, "pooled_ece": pooled_ece,
                              "pooled_ece_decided": pooled_ece_decided,
                              "ensemble_minus_nli": round(mean["ensemble"] - mean["nli"], 2),
                              "ensemble_minus_nli_default": round(
                                  mean["ensemble"] - mean["nli_default"], 2),
                              "ensemble_minus_nli_bootstrap": margin,
                              "detector_seconds": times, "verify_latency": latency,
                              "reliability_png": str(args.plot.name)})


def time_verify(runs: int, verifier: Verifier | None = None) -> dict:
    """Median latency of ``verifier.verify`` (default ``Verifier()``) on :data:`LATENCY_DRAFT`.

    The embedding cache is emptied before each run, so every run pays for embedding the
    claims and evidence sentences (once, shared by pairing and alignment). The default
    (detectors one after another on a CPU) and the detectors in threads are timed in turn.
    """
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs!r}")
    verifier = verifier if verifier is not None else Verifier()
    parallel = verifier.parallel
    try:
        for _ in range(3):  # warm-up: loads the models
            for mode in (None, True):
                verifier.parallel = mode
                report = verifier.verify(LATENCY_DRAFT, evidence=list(LATENCY_PASSAGES))
        total: dict[str, list[float]] = {"default": [], "threads": []}
        stages = []
        for _ in range(runs):
            for name, mode in (("default", None), ("threads", True)):
                verifier.parallel = mode
                verifier.embedding_cache.clear()  # cold: every run embeds its sentences again
                clear_caches()  # and parses its texts again
                t0 = time.perf_counter()
                report = verifier.verify(LATENCY_DRAFT, evidence=list(LATENCY_PASSAGES))
                total[name].append(time.perf_counter() - t0)
                if mode is None:
                    stages.append(report.timings)
    finally:
        verifier.parallel = parallel
    keys = [k for k in stages[0] if k not in ("retrieve",)]
    return {"median_ms": round(1000 * float(np.median(total["default"])), 1),
            "threads_median_ms": round(1000 * float(np.median(total["threads"])), 1),
            "stages_ms": {k: round(1000 * float(np.median([s[k] for s in stages])), 1)
                          for k in keys},
            "statuses": [v.status.value for v in report.verdicts]}


def _plot(curves: dict, pooled: tuple, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], "k:", lw=1, label="perfect")
    edges = np.linspace(0, 1, 11)
    for name, (conf, ok) in [*curves.items(), ("pooled", pooled)]:
        idx = np.clip(np.digitize(conf, edges[1:-1]), 0, 9)
        xs = [conf[idx == b].mean() for b in range(10) if (idx == b).sum() >= 10]
        ys = [ok[idx == b].mean() for b in range(10) if (idx == b).sum() >= 10]
        ax.plot(xs, ys, "o-" if name == "pooled" else ".-",
                lw=2.5 if name == "pooled" else 1, label=name)
    ax.set_xlabel("predicted probability of the status")
    ax.set_ylabel("observed accuracy")
    ax.set_title("Verifier ensemble: reliability (eval splits)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
