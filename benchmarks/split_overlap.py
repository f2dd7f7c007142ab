"""How much evidence the train and eval splits share, and whether shared evidence helps.

For every preset with both splits: the share of ``eval`` rows whose evidence text is also
the evidence of a ``train`` row (COVID-Fact's counterfactual claims share their evidence
with the claim they were made from; HealthVer and SciFact reuse abstracts across their
official splits). With ``--predictions DIR`` (a ``verifier eval --preset NAME`` output
folder), the AUROC and balanced accuracy of those predictions on the eval rows with shared
and with unseen evidence, side by side: if the model had learnt the evidence, the shared rows
would score higher.

With ``--cache DIR`` (``benchmarks/bench_verifier.py``'s feature cache of the same code),
each eval split is cut by what its evidence was to the shipped models: ``nli`` (the evidence
of a train row the embedded NLI model was trained on: a set of
:data:`~verifier.datasets.NLI_TRAINING_PRESETS`, the half
:func:`~verifier.training.nli_holdout` keeps in), ``meta`` (only of train rows the NLI model
never saw, which the meta-classifiers may be fitted on) and ``unseen``; on each part the NLI
row's AUROC, the macro-F1 of the NLI detector alone and of the ensemble, as
``bench_verifier.py`` scores them, and the margin between the two. A part much better than
``unseen`` is a figure that shared evidence lifts.

    python benchmarks/split_overlap.py [--predictions DIR --preset covidfact] [--cache DIR]
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import numpy as np
from _common import write_result

from verifier.datasets import NLI_TRAINING_PRESETS, SUPPORTS, load_preset
from verifier.training import META_SETS, nli_holdout

logger = logging.getLogger("split_overlap")


def overlap(name: str) -> tuple[float, set[str]]:
    """Share of the eval rows whose evidence a train row has; the ids of those rows."""
    seen = {e.evidence_text for e in load_preset(name, "train")}
    ev = load_preset(name, "eval")
    shared = {e.id for e in ev if e.evidence_text in seen}
    return len(shared) / max(len(ev), 1), shared


def evidence_parts(name: str) -> dict[str, str]:
    """Each eval row's part by what its evidence was to the shipped models (by row id).

    ``nli``: the evidence of a train row the NLI model trained on; ``meta``: only of train
    rows it never saw; ``unseen``: of no train row.
    """
    nli_seen: set[str] = set()
    train_evidence: set[str] = set()
    for e in load_preset(name, "train"):
        train_evidence.add(e.evidence_text)
        if name in NLI_TRAINING_PRESETS and not nli_holdout(e):
            nli_seen.add(e.evidence_text)
    return {e.id: "nli" if e.evidence_text in nli_seen else
            "meta" if e.evidence_text in train_evidence else "unseen"
            for e in load_preset(name, "eval")}


def by_evidence(cache: Path, min_rows: int = 30) -> dict[str, dict[str, dict[str, float]]]:
    """The NLI row and the ensemble on each part of each eval split (:func:`evidence_parts`).

    ``cache``: ``bench_verifier.py``'s ``--cache`` folder (its ``eval.jsonl``). Parts of
    fewer than ``min_rows`` rows are left out.
    """
    from bench_verifier import collapse, nli_rule
    from sklearn.metrics import f1_score, roc_auc_score

    from verifier.embedded import embedded_meta_path
    from verifier.meta import StatusClassifier
    from verifier.training import feature_array
    from verifier.verify import Verifier

    path = cache / "eval.jsonl"
    if not path.is_file():
        raise ValueError(f"--cache {str(cache)!r}: no eval.jsonl (run benchmarks/"
                         f"bench_verifier.py --cache {cache} first)")
    rows: dict[str, list[dict]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            rows.setdefault(r["dataset"], []).append(r)
    ensemble = StatusClassifier.load(embedded_meta_path("ensemble"))
    rule = Verifier(meta=None, alignment_classifier=None)  # its thresholds; loads no model
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name in META_SETS:
        parts = evidence_parts(name)
        got = [r for r in rows.get(name, []) if r["id"] in parts]
        if len(got) < len(parts):
            raise ValueError(f"--cache {str(cache)!r}: {len(parts) - len(got)} of "
                             f"{len(parts)} {name} eval rows are not in {str(path)!r}")
        gold_s = np.asarray([r["status"] for r in got], dtype=object)
        three = bool((gold_s == "Insufficient_Info").any())
        gold = collapse(np.where(gold_s == "Not_Supported", "Contradictory", gold_s), three)
        nli = collapse(nli_rule(got, rule), three)
        ens = collapse(ensemble.predict(feature_array(
            got, list(ensemble.feature_names_in_))).astype(object), three)
        score = np.array([r["features"]["nli.entailment"] - r["features"]["nli.contradiction"]
                          for r in got])
        where = np.array([parts[r["id"]] for r in got], dtype=object)
        out[name] = {}
        for part in ("all", "nli", "meta", "unseen"):
            m = np.ones(len(got), dtype=bool) if part == "all" else where == part
            if m.sum() < min_rows:
                continue
            labels = sorted(set(gold[m].tolist()))
            f1 = {k: round(100 * f1_score(gold[m], pred[m], labels=labels, average="macro",
                                          zero_division=0), 1) for k, pred in
                  (("nli", nli), ("ensemble", ens))}
            supported = gold[m] == "Supported"
            res = {"n": int(m.sum()), "nli_macro_f1": f1["nli"],
                   "ensemble_macro_f1": f1["ensemble"],
                   "margin": round(f1["ensemble"] - f1["nli"], 1)}
            if 0 < supported.sum() < m.sum():
                res["nli_auroc"] = round(100 * roc_auc_score(supported, score[m]), 1)
            out[name][part] = res
    return out


def _scores(rows: list[dict]) -> dict[str, float]:
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    y = np.array([r["gold"] == SUPPORTS for r in rows])
    p = np.array([r["probabilities"][SUPPORTS] for r in rows])
    pred = np.array([r["predicted"] == SUPPORTS for r in rows])
    out = {"n": len(rows), "bacc": round(100 * balanced_accuracy_score(y, pred), 1)}
    if 0 < y.sum() < len(y):
        out["auroc"] = round(100 * roc_auc_score(y, p), 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--predictions", type=Path, default=None,
                    help="a `verifier eval` output folder (predictions.jsonl)")
    ap.add_argument("--preset", default="covidfact", help="the preset of --predictions")
    ap.add_argument("--cache", type=Path, default=None,
                    help="bench_verifier.py's feature cache folder: the eval splits by what "
                         "their evidence was to the shipped models")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    result: dict[str, object] = {}
    shared_ids: set[str] = set()
    for name in META_SETS:
        share, ids = overlap(name)
        if name == args.preset:
            shared_ids = ids
        result[name] = {"eval_rows_with_train_evidence": round(share, 4)}
        print(f"{name:10s} eval rows whose evidence a train row has: {100 * share:5.1f} %")
    if args.predictions is not None:
        path = args.predictions / "predictions.jsonl"
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]
        if not rows or SUPPORTS not in rows[0].get("probabilities", {}):
            raise ValueError(f"--predictions {str(args.predictions)!r}: no 2-class "
                             f"predictions with p({SUPPORTS}) in {str(path)!r}")
        split = {"shared": [r for r in rows if r["id"] in shared_ids],
                 "unseen": [r for r in rows if r["id"] not in shared_ids]}
        scores = {k: _scores(v) for k, v in split.items() if v}
        for k, v in scores.items():
            print(f"{args.preset} eval rows, {k} evidence: {v}")
        result["predictions"] = {"preset": args.preset, "folder": str(args.predictions),
                                 **scores}
    if args.cache is not None:
        parts = by_evidence(args.cache)
        print("\neval rows by their evidence: nli = a train row's the NLI model trained on, "
              "meta = only train rows' it never saw, unseen = no train row's")
        print(f"{'set':10s} {'part':7s} {'n':>5s} {'NLI AUROC':>9s} {'NLI F1':>7s} "
              f"{'ensemble F1':>11s} {'margin':>6s}")
        for name, by_part in parts.items():
            for part, r in by_part.items():
                print(f"{name:10s} {part:7s} {r['n']:5d} {r.get('nli_auroc', float('nan')):9.1f}"
                      f" {r['nli_macro_f1']:7.1f} {r['ensemble_macro_f1']:11.1f} "
                      f"{r['margin']:+6.1f}")
        means = {part: {k: round(float(np.mean([by[part][k] for by in parts.values()])), 2)
                        for k in ("nli_macro_f1", "ensemble_macro_f1", "margin")}
                 for part in ("all", "unseen") if all(part in by for by in parts.values())}
        for part, m in means.items():
            print(f"mean over the {len(parts)} sets, {part:6s} rows: NLI alone "
                  f"{m['nli_macro_f1']:.1f}, ensemble {m['ensemble_macro_f1']:.1f}, margin "
                  f"{m['margin']:+.1f}")
        result["by_evidence"] = {"cache": str(args.cache), "means": means, **parts}
    write_result("split_overlap", result)


if __name__ == "__main__":
    main()
