"""Does the NLI model score the meta-classifier's training rows as it scores unseen ones?

The meta-classifiers (``models/recipes/train_meta.py``) are fitted on the detectors'
features over the ``train`` splits of :data:`verifier.training.META_SETS`; the embedded NLI
model was itself trained on the train splits of :data:`verifier.datasets.NLI_TRAINING_PRESETS`.
On those rows its features are in-sample: if it learnt them, the meta-classifier learns an
NLI model better than the one it meets on new data (stacking wants out-of-sample features).

For each set this prints the AUROC of the NLI feature the ensemble leans on most
(``nli.logit_entailment``, the deciding evidence unit's entailment log-odds; Supported vs
the rest) on the meta-classifier's train rows and on the benchmark's eval rows, and, from
the recorded results, the ensemble's macro-F1 cross-validated on the train rows
(``models/meta/training_log.json``) against its macro-F1 on the eval rows
(``benchmarks/results/verifier.json``).

    python benchmarks/nli_seen_rows.py [--train-cache DIR] [--eval-cache DIR] [--nli-holdout]

``--nli-holdout``: for an NLI model trained on ``prepare_nli_data.py --meta-holdout`` data
(the embedded v0.4 and v0.5): the train rows are sampled as ``train_meta.py --nli-holdout`` samples
them (the half the NLI model never saw), and for the sets the NLI model was trained on the
AUROC of the other half (the rows it was trained on) is printed beside them. The macro-F1
columns read the shipped classifiers' log either way.

``--train-cache`` / ``--eval-cache``: the ``--cache`` folders of ``train_meta.py`` and
``bench_verifier.py`` (features are computed, ~15 minutes, where they are missing).
Writes ``benchmarks/results/nli_seen_rows.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any, Literal

import numpy as np
from _common import RESULTS, ROOT, write_result
from sklearn.metrics import roc_auc_score

from verifier.datasets import NLI_TRAINING_PRESETS
from verifier.training import (
    META_SETS,
    collect_features,
    feature_array,
    nli_holdout,
    sample_examples,
)
from verifier.verify import Verifier

FEATURE = "nli.logit_entailment"
#: Rows per set, as ``train_meta.py`` and ``bench_verifier.py`` sample them by default.
LIMITS: dict[Literal["train", "eval"], int] = {"train": 800, "eval": 600}


def auroc(rows: list[dict]) -> float:
    """AUROC of :data:`FEATURE` for Supported vs the rest, in percent."""
    y = np.array([r["status"] == "Supported" for r in rows])
    x = feature_array(rows, [FEATURE])[:, 0]  # every labelled pair has one: NaN would raise
    return round(100 * float(roc_auc_score(y, x)), 1)


def recorded() -> tuple[dict, dict]:
    """The ensemble's cross-validated (train) and evaluated macro-F1 per set, as recorded."""
    log = json.loads((ROOT / "models" / "meta" / "training_log.json").read_text())
    bench = json.loads((RESULTS / "verifier.json").read_text())
    cv = log["classifiers"]["ensemble"]["cv_macro_f1"]
    ev = {s: v["ensemble"]["macro_f1"] for s, v in bench["sets"].items()}
    return cv, ev


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--train-cache", type=Path, default=None,
                    help="train_meta.py's --cache folder (train.jsonl)")
    ap.add_argument("--eval-cache", type=Path, default=None,
                    help="bench_verifier.py's --cache folder (eval.jsonl)")
    ap.add_argument("--nli-holdout", action="store_true",
                    help="train rows as train_meta.py --nli-holdout samples them, and the "
                    "AUROC of the rows the NLI model was trained on beside them")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    verifier = Verifier(meta=None, alignment_classifier=None)
    caches = {"train": args.train_cache, "eval": args.eval_cache}
    cv, ev = recorded()
    table = {}
    print(f"{'set':10s} {'NLI trained on its train split':>31s}   AUROC train  eval   gap"
          f"   ensemble macro-F1 CV (train)  eval   gap")
    for name in META_SETS:
        res: dict[str, Any] = {"in_nli_training": name in NLI_TRAINING_PRESETS}
        for split, limit in LIMITS.items():
            folder = caches[split]
            cache = folder / f"{split}.jsonl" if folder else None
            where = nli_holdout if args.nli_holdout and split == "train" else None
            rows = collect_features(verifier, sample_examples(name, split, limit, where=where),
                                    cache=cache)
            res[f"auroc_{split}"] = auroc(rows)
        if args.nli_holdout and res["in_nli_training"]:
            folder = caches["train"]
            seen = sample_examples(name, "train", LIMITS["train"],
                                   where=lambda e: not nli_holdout(e))
            res["auroc_train_nli_trained"] = auroc(collect_features(
                verifier, seen, cache=folder / "train_seen.jsonl" if folder else None))
        res["auroc_gap"] = round(res["auroc_train"] - res["auroc_eval"], 1)
        res["macro_f1_cv"], res["macro_f1_eval"] = cv[name], ev[name]
        res["macro_f1_gap"] = round(cv[name] - ev[name], 1)
        table[name] = res
        trained = (f"   (rows it was trained on: {res['auroc_train_nli_trained']:.1f})"
                   if "auroc_train_nli_trained" in res else "")
        print(f"{name:10s} {'yes' if res['in_nli_training'] else 'no':>31s}   "
              f"{res['auroc_train']:11.1f} {res['auroc_eval']:5.1f} {res['auroc_gap']:+5.1f}"
              f"   {res['macro_f1_cv']:27.1f} {res['macro_f1_eval']:5.1f} "
              f"{res['macro_f1_gap']:+5.1f}{trained}", flush=True)
    for trained_on in (True, False):
        part = [t for t in table.values() if t["in_nli_training"] is trained_on]
        print(f"mean gap, sets the NLI model {'was' if trained_on else 'was not'} trained on: "
              f"AUROC {np.mean([t['auroc_gap'] for t in part]):+.1f}, ensemble macro-F1 "
              f"{np.mean([t['macro_f1_gap'] for t in part]):+.1f}")
    write_result("nli_seen_rows", {"feature": FEATURE, "rows": LIMITS,
                                   "nli_holdout": args.nli_holdout, "sets": table})


if __name__ == "__main__":
    main()
