"""Compare variants of the ensemble's stage one (Supported vs the rest) against the recipe.

The figures of ``models/meta/README.md``, "Tried on these features for the margin": each
variant is cross-validated as ``train_meta.py`` chooses its options (macro-F1 per training
set, 5-fold, folds grouped by evidence; mean over sets), its lead over the recipe fold by
fold (mean and standard error), then fitted on every train row and scored on the eval splits
as ``benchmarks/bench_verifier.py`` scores the ensemble (mean macro-F1 over the seven sets,
and the margin over the NLI threshold rule). The eval splits choose nothing here: the card's
rule is the CV lead.

    python models/recipes/compare_stage_one.py --train-cache DIR --eval-cache DIR
        [--variants recipe detail bagged hist hist_monotone reverse lm_gain linear_init]
        [--out FILE] [--lm-cache FILE]

``--train-cache``: ``train_meta.py --cache``'s folder; ``--eval-cache``: ``bench_verifier.py
--cache``'s. Both must hold the features of the code this runs on (a cache of other code
is recomputed: ~20 minutes each on a 2-core CPU); to read an older commit's caches, run this
file from a worktree of that commit, its packages first on the path, as
``benchmarks/check_findings.py`` says.

Variants (stage two stays the recipe's logistic regression):

- ``recipe``: the shipped ensemble's features and boosted trees;
- ``detail``: the recipe plus :data:`verifier.verify.NLI_DETAIL_FEATURES`;
- ``bagged``: 5 boosted models on 80 % subsamples (seeds 0-4), probabilities averaged;
- ``hist``: scikit-learn's ``HistGradientBoostingClassifier`` of the recipe's size;
- ``hist_monotone``: the same, its output constrained to rise with the entailment and
  coverage features and fall with the contradiction, conflict and finding features
  (:data:`RISING`, :data:`FALLING`);
- ``reverse``: the recipe plus the NLI model read the other way round
  (:data:`REVERSE_FEATURES`, :func:`reverse_nli`): the claim as the premise, its evidence
  sentence with the highest lexical recall of the claim as the hypothesis. Contradiction is
  symmetric and entailment is not, so the two directions are two readings of one pair. The
  rows of the labelled sets get them (one more model call a row, ~3 minutes for the train
  and eval rows on a 2-core CPU); the pipeline rows do not (``NaN``: their cache keeps no
  evidence text). Its result also holds, per eval set, the AUROC for ``Supported`` of the
  forward reading's entailment minus contradiction and of that plus the reverse one's
  (``auroc_supported``).
- ``lm_gain``: the recipe plus what the evidence does to the embedded generator's
  (SmolLM2-135M) teacher-forced log-probs of the claim (:data:`LM_FEATURES`,
  :func:`lm_gain`): each claim token's log-prob after ``"Evidence: <its top sentences>\n
  Claim:"`` minus after ``"Claim:"`` alone (pointwise mutual information of the claim and
  its evidence), its mean and minimum over the claim's tokens, and the two mean log-probs.
  The evidence is the claim's :data:`LM_SENTENCES` sentences of highest lexical recall, best
  first, cut at :data:`LM_EVIDENCE_TOKENS` tokens. The rows of the labelled sets get them
  (bf16, two model calls a row: ~80 minutes for the train and eval rows on a 2-core CPU;
  ``--lm-cache`` keeps each pair's scores, so a stopped run resumes); the pipeline rows do
  not (``NaN``, as for ``reverse``). Its result also holds, per eval set, the AUROC for
  ``Supported`` of the NLI row's entailment minus contradiction and of each LM feature
  (``auroc_supported``).

- ``linear_init``: the recipe's boosted trees started from a logistic regression over the
  same features (``C`` as stage one's) instead of a constant: the trees correct a smooth
  linear score instead of building the whole score from their leaves (the ensemble ranks
  SciFact's and COVID-Fact's claims a little worse than the NLI row alone does,
  ``bench_verifier.py``'s AUROC line).

The variants other than ``recipe``, ``detail``, ``reverse`` and ``lm_gain`` are not exportable
to the shipped JSON format; they live in this script only.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import logging
import math
import sys
import time
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import f1_score

import verifier.meta as vm
import verifier.verify
from verifier.alignment import top_sentences
from verifier.datasets import Example
from verifier.nli import PairInputError
from verifier.training import (
    PIPELINE_SET,
    feature_array,
    sample_examples,
)
from verifier.types import Evidence
from verifier.verify import Verifier, _logit, all_features

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent.parent / "benchmarks")]  # train_meta, bench_*
import bench_verifier as bv  # noqa: E402
import train_meta as tm  # noqa: E402

logger = logging.getLogger("compare_stage_one")
#: The NLI detail features (none in code older than them, where ``detail`` is the recipe).
NLI_DETAIL_FEATURES: tuple[str, ...] = getattr(verifier.verify, "NLI_DETAIL_FEATURES", ())

#: Features p(Supported) may only rise with (``hist_monotone``).
RISING = frozenset({
    "nli.entailment", "nli.mean_entailment", "nli.logit_entailment",
    "nli.logit_mean_entailment", "nli.min_sentence_entailment", "nli.chunk_max_entailment",
    "align.claim_recall", "align.bigram_recall", "align.doc_recall", "align.cosine",
    "align.entity_coverage", "align.number_coverage", "align.date_coverage",
    "align.quote_coverage", "match.exact", "x.entailment_cosine", "x.entailment_recall"})
#: Features p(Supported) may only fall with (``hist_monotone``).
FALLING = frozenset({
    "nli.contradiction", "nli.max_contradiction", "nli.logit_contradiction",
    "nli.logit_max_contradiction", "nli.max_sentence_contradiction",
    "nli.chunk_max_contradiction", "align.number_conflict", "align.date_conflict",
    "align.negation_mismatch", "checks.findings", "checks.high", "checks.substitution",
    "x.contradiction_recall"})
VARIANTS = ("recipe", "detail", "bagged", "hist", "hist_monotone", "reverse", "lm_gain",
            "linear_init")
#: The variants whose stage one is the recipe's boosted trees (their features differ).
_RECIPE_TREES = ("recipe", "detail", "reverse", "lm_gain")
#: The ``reverse`` variant's features (:func:`reverse_nli`).
REVERSE_FEATURES = ("rev.entailment", "rev.contradiction", "rev.logit_entailment",
                    "rev.logit_contradiction")
#: The ``lm_gain`` variant's features (:func:`lm_gain`).
LM_FEATURES = ("lm.gain_mean", "lm.gain_min", "lm.conditioned_mean", "lm.unconditioned_mean")
#: Evidence sentences (highest lexical recall of the claim first) and the token budget of
#: the ``lm_gain`` prompt; the claim's own tokens are cut at :data:`LM_CLAIM_TOKENS`.
LM_SENTENCES, LM_EVIDENCE_TOKENS, LM_CLAIM_TOKENS = 5, 200, 80
#: The recipe's tree size (``verifier.meta.MetaClassifier``'s defaults).
_TREES = {"max_leaf_nodes": 15, "min_samples_leaf": 40, "learning_rate": 0.1}


def reverse_nli(verifier: Verifier, examples: Sequence[Example]) -> list[dict[str, float]]:
    """:data:`REVERSE_FEATURES` of each example: the claim as the premise, as the hypothesis
    its evidence sentence with the highest lexical recall of the claim
    (:func:`verifier.alignment.top_sentences`); ``NaN`` where the pair cannot be read."""
    pairs, owners = [], []
    for i, e in enumerate(examples):
        top = top_sentences(e.claim, [Evidence(e.evidence_text, "evidence")], 1)
        if top:
            pairs.append((e.claim, top[0]))
            owners.append(i)
    out = [dict.fromkeys(REVERSE_FEATURES, math.nan) for _ in examples]
    unread = 0
    for start in range(0, len(pairs), 256):
        batch = pairs[start:start + 256]
        try:
            probs = list(verifier.nli.predict(batch))
        except PairInputError:  # score the batch pair by pair: one unreadable pair is NaN
            probs = []
            for pair in batch:
                try:
                    probs.append(verifier.nli.predict([pair])[0])
                except PairInputError:
                    probs.append(np.full(3, np.nan))
                    unread += 1
        for i, p in zip(owners[start:start + 256], probs, strict=True):
            ent, con = float(p[0]), float(p[2])
            out[i] = {"rev.entailment": ent, "rev.contradiction": con,
                      "rev.logit_entailment": _logit(ent), "rev.logit_contradiction": _logit(con)}
    if unread or len(pairs) < len(examples):
        logger.warning("reverse NLI: %d of %d examples NaN (%d with no evidence sentence, %d "
                       "pairs the model cannot read)", len(examples) - len(pairs) + unread,
                       len(examples), len(examples) - len(pairs), unread)
    return out


def _lm_key(e: Example) -> str:
    """Cache key of an example's ``lm_gain`` scores (its texts and the prompt's limits)."""
    text = json.dumps([e.claim, e.evidence_text, LM_SENTENCES, LM_EVIDENCE_TOKENS,
                       LM_CLAIM_TOKENS])
    return hashlib.sha1(text.encode()).hexdigest()


def lm_inputs(tokenizer: Any, e: Example) -> tuple[list[int], list[int], list[int]] | None:
    """Token ids of the evidence prompt, of the bare prompt and of the claim (cut at
    :data:`LM_CLAIM_TOKENS`); ``None`` for a blank claim or evidence without a sentence."""
    if not e.claim.strip() or not e.evidence_text.strip():
        return None
    top = top_sentences(e.claim, [Evidence(e.evidence_text, "evidence")], LM_SENTENCES)
    if not top:
        return None
    claim = tokenizer(" " + e.claim.strip(), add_special_tokens=False)["input_ids"]
    ids = tokenizer(" ".join(top), add_special_tokens=False)["input_ids"]
    head, tail, bare = (tokenizer(t, add_special_tokens=False)["input_ids"]
                        for t in ("Evidence: ", "\nClaim:", "Claim:"))
    return head + ids[:LM_EVIDENCE_TOKENS] + tail, bare, claim[:LM_CLAIM_TOKENS]


def claim_logprobs(model: Any, seqs: Sequence[tuple[list[int], list[int]]], *,
                   batch_size: int = 8) -> list[np.ndarray]:
    """Teacher-forced log-prob of each continuation token after its prompt, for
    ``(prompt ids, continuation ids)`` pairs (batched by length, padded on the right; the
    body runs in the model's dtype, the output layer in fp32). In bf16 a token's figure moves
    with its batch's padding by up to ~0.25 (24 FRANK and FEVER pairs, batched against one
    by one); in fp32 the two agree (tested)."""
    import torch

    out: list[np.ndarray] = [np.empty(0)] * len(seqs)
    lm_head = model.get_output_embeddings()
    weight = lm_head.weight.detach().float()
    bias = None if lm_head.bias is None else lm_head.bias.detach().float()
    order = sorted(range(len(seqs)), key=lambda i: len(seqs[i][0]) + len(seqs[i][1]))
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        width = max(len(seqs[i][0]) + len(seqs[i][1]) for i in idx)
        ids = torch.zeros((len(idx), width), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for r, i in enumerate(idx):
            row = seqs[i][0] + seqs[i][1]
            ids[r, :len(row)] = torch.tensor(row)
            mask[r, :len(row)] = 1
        with torch.inference_mode():  # the body in the model's dtype, the head in fp32
            hidden = model.base_model(input_ids=ids, attention_mask=mask).last_hidden_state
        for r, i in enumerate(idx):
            prompt, cont = seqs[i]
            h = hidden[r, len(prompt) - 1:len(prompt) + len(cont) - 1].float()
            logits = torch.nn.functional.linear(h, weight, bias)
            lp = torch.log_softmax(logits, dim=-1)[torch.arange(len(cont)), torch.tensor(cont)]
            out[i] = lp.numpy().astype(np.float64)
    return out


def gain_features(conditioned: np.ndarray, bare: np.ndarray) -> dict[str, float]:
    """:data:`LM_FEATURES` of one claim from its tokens' log-probs with and without the
    evidence."""
    gain = conditioned - bare
    return {"lm.gain_mean": float(gain.mean()), "lm.gain_min": float(gain.min()),
            "lm.conditioned_mean": float(conditioned.mean()),
            "lm.unconditioned_mean": float(bare.mean())}


@functools.cache
def _bf16_generator() -> tuple[Any, Any]:
    """The embedded generator's tokenizer and model, cast to bf16 (loaded once a run)."""
    import torch

    from rag.generation import HFGenerator

    gen = HFGenerator()
    gen.warm_up()
    return gen._tokenizer, gen._model.to(torch.bfloat16)


def lm_gain(examples: Sequence[Example], *, cache: Path | None = None, chunk: int = 256
            ) -> list[dict[str, float]]:
    """:data:`LM_FEATURES` of each example, from the embedded generator in bf16; ``NaN``
    where :func:`lm_inputs` gives none. ``cache``: a JSONL file of the scores by example
    (read first, appended to chunk by chunk)."""
    keys = [_lm_key(e) for e in examples]
    done: dict[str, dict[str, float]] = {}
    if cache is not None and cache.exists():
        for line in cache.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            done[rec["key"]] = {k: math.nan if v is None else v
                                for k, v in rec["features"].items()}
    todo = sorted({k: i for i, k in enumerate(keys) if k not in done}.values())
    if todo:
        tokenizer, model = _bf16_generator()
        t0 = time.perf_counter()
        unread = 0
        for start in range(0, len(todo), chunk):
            part = todo[start:start + chunk]
            inputs = [lm_inputs(tokenizer, examples[i]) for i in part]
            read = [(i, x) for i, x in zip(part, inputs, strict=True) if x is not None]
            unread += len(part) - len(read)
            cond = claim_logprobs(model, [(x[0], x[2]) for _, x in read])
            bare = claim_logprobs(model, [(x[1], x[2]) for _, x in read])
            new = {keys[i]: dict.fromkeys(LM_FEATURES, math.nan) for i in part}
            for (i, _), a, b in zip(read, cond, bare, strict=True):
                new[keys[i]] = gain_features(a, b)
            done.update(new)
            if cache is not None:
                with cache.open("a", encoding="utf-8") as f:
                    for k, v in new.items():
                        f.write(json.dumps({"key": k, "features": {
                            n: None if math.isnan(x) else x for n, x in v.items()}}) + "\n")
            logger.info("lm_gain: %d/%d examples, %.0f s", min(start + chunk, len(todo)),
                        len(todo), time.perf_counter() - t0)
        if unread:
            logger.warning("lm_gain: %d of %d examples NaN (a blank claim or evidence without "
                           "a sentence)", unread, len(todo))
    return [done[k] for k in keys]


def _auroc3(rows: Sequence[dict[str, Any]], scores: np.ndarray) -> float:
    """:func:`bench_verifier.ranking_auroc` to 3 decimals (an eval set has both classes)."""
    auroc = bv.ranking_auroc(rows, scores)
    if auroc is None:
        raise ValueError("an eval set whose scored rows hold one class has no AUROC")
    return round(auroc, 3)


def _auroc_supported(evals: dict[str, list[dict[str, Any]]], extra: Sequence[str]
                     ) -> dict[str, dict[str, float]]:
    """Per eval set, the AUROC for ``Supported`` of the NLI row's entailment minus
    contradiction (``forward``) and of each feature in ``extra`` (rows where it is known)."""
    out = {}
    for name, rows in evals.items():
        X = feature_array(rows, list(extra))
        res = {"forward": _auroc3(rows, bv.nli_margin(rows))}
        for j, f in enumerate(extra):
            res[f] = _auroc3(rows, X[:, j])
        out[name] = res
    return out


def _reverse_auroc(evals: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, float]]:
    """Per eval set, the AUROC for ``Supported`` of the NLI row's entailment minus
    contradiction (``forward``) and of that plus the reverse reading's (``both``), on the
    rows that have both readings."""
    out = {}
    for name, rows in evals.items():
        forward = bv.nli_margin(rows)
        rev = feature_array(rows, ["rev.entailment", "rev.contradiction"])
        both = forward + rev[:, 0] - rev[:, 1]
        out[name] = {"forward": _auroc3(rows, np.where(np.isnan(both), np.nan, forward)),
                     "both": _auroc3(rows, both)}
    return out


def _with_features(rows: Sequence[dict[str, Any]], extra: Sequence[dict[str, float]]
                   ) -> list[dict[str, Any]]:
    """Copies of ``rows`` whose features also hold ``extra`` (row by row)."""
    return [{**r, "features": {**r["features"], **x}} for r, x in zip(rows, extra, strict=True)]


class _Stage(vm.MetaClassifier):
    """A stage-one classifier whose estimator is one of this script's variants."""

    variant = "recipe"

    def _new_estimator(self) -> Any:
        if self.estimator == "logistic" or self.variant in _RECIPE_TREES:
            return super()._new_estimator()
        if self.variant == "bagged":
            from sklearn.ensemble import GradientBoostingClassifier, VotingClassifier

            return VotingClassifier(
                [(f"g{i}", GradientBoostingClassifier(n_estimators=100, subsample=0.8,
                                                      random_state=i, **_TREES))
                 for i in range(5)], voting="soft")
        if self.variant == "linear_init":
            from sklearn.ensemble import GradientBoostingClassifier
            from sklearn.linear_model import LogisticRegression

            return GradientBoostingClassifier(
                n_estimators=100, init=LogisticRegression(C=self.C, max_iter=1000),
                random_state=0, **_TREES)
        from sklearn.ensemble import HistGradientBoostingClassifier

        cst = None
        if self.variant == "hist_monotone":  # classes sorted: Not_Supported, Supported
            names = list(self.feature_names_in_)
            cst = ([1 if n in RISING else -1 if n in FALLING else 0 for n in names]
                   + [0] * len(self.missing_cols_))
        return HistGradientBoostingClassifier(max_iter=100, monotonic_cst=cst,
                                              early_stopping=False, random_state=0, **_TREES)

    def _raw_proba(self, Z: np.ndarray) -> np.ndarray:
        model = getattr(self, "trees_", None)
        if model is not None and hasattr(model, "predict_proba"):  # a variant, kept whole
            return model.predict_proba(Z)
        return super()._raw_proba(Z)


class _Classifier(vm.StatusClassifier):
    """A status classifier whose stages are :class:`_Stage`."""

    def _stage(self, estimator: str) -> vm.MetaClassifier:
        return _Stage(**super()._stage(estimator).get_params())


@contextmanager
def _keep_estimators(variant: str) -> Any:
    """Fit ``variant`` (``train_meta``'s CV too): its fitted estimators stay as they are
    (only the recipe's trees export)."""
    export, classifier = vm._export_trees, tm.StatusClassifier
    _Stage.variant = variant
    tm.StatusClassifier = _Classifier  # type: ignore[misc]

    def keep(model: Any, Z: np.ndarray) -> Any:
        if variant in _RECIPE_TREES:
            return export(model, Z)
        return model, np.zeros(1)

    vm._export_trees = keep
    try:
        yield
    finally:
        vm._export_trees = export
        tm.StatusClassifier = classifier  # type: ignore[misc]
        _Stage.variant = "recipe"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train-cache", type=Path, required=True)
    ap.add_argument("--eval-cache", type=Path, required=True)
    ap.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    ap.add_argument("--out", type=Path, default=None, help="JSON of the figures")
    ap.add_argument("--lm-cache", type=Path, default=None,
                    help="JSONL of the lm_gain variant's scores (read, then appended to)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    verifier = Verifier(meta=None, alignment_classifier=None)
    rows, examples, y, groups, folds = tm.recipe_rows(verifier, args.train_cache)
    base = [f for f in tm.features_for(tm.GROUPS["ensemble"], rows)
            if f not in NLI_DETAIL_FEATURES]
    # the detail features where all_features() puts them (a tree's ties follow column order)
    detail = tm.features_for(tuple(f for f in all_features()
                                   if f in base or f in NLI_DETAIL_FEATURES), rows)
    evals = bv.eval_rows(verifier, args.eval_cache)
    extras = {"reverse": (REVERSE_FEATURES, lambda ex: reverse_nli(verifier, ex)),
              "lm_gain": (LM_FEATURES, lambda ex: lm_gain(ex, cache=args.lm_cache))}
    labelled = [i for i, r in enumerate(rows) if r["dataset"] != PIPELINE_SET]
    extended: dict[str, tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]] = {}
    for variant, (features, score) in extras.items():
        if variant not in args.variants:
            continue
        extra = [dict.fromkeys(features, math.nan) for _ in rows]
        for i, x in zip(labelled, score([examples[i] for i in labelled]), strict=True):
            extra[i] = x
        extended[variant] = (_with_features(rows, extra), {
            name: _with_features(erows, score(sample_examples(name, "eval", None)))
            for name, erows in evals.items()})
    params = tm.ENSEMBLE_FIT
    out: dict[str, Any] = {}
    recipe_folds = None
    for variant in ["recipe", *[v for v in args.variants if v != "recipe"]]:
        names = (detail if variant == "detail" else
                 [*base, *extras[variant][0]] if variant in extras else base)
        vrows, vevals = extended.get(variant, (rows, evals))
        X = feature_array(vrows, names)
        t0 = time.perf_counter()
        with _keep_estimators(variant):
            cv, per_fold = tm.cv_folds(names, X, y, groups, folds, tm.RECIPE["weighting"],
                                       None, **params)
            model = _Classifier(names, **params).fit(X, y, groups=groups)
            res: dict[str, Any] = {"cv_macro_f1": cv, "cut": model.support_threshold_}
            if recipe_folds is None:
                recipe_folds = per_fold
            else:
                lead, se = tm.paired_lead(per_fold, recipe_folds)
                res["cv_lead"], res["cv_lead_se"] = round(lead, 2), round(se, 2)
            ens, nli = {}, {}
            for name, erows in vevals.items():
                gold, three = bv.gold_statuses(erows)
                labels = sorted(set(gold.tolist()))
                pred = bv.collapse(model.predict(feature_array(erows, names)).astype(object),
                                   three)
                ens[name] = round(100 * f1_score(gold, pred, labels=labels, average="macro"),
                                  2)
                rule = bv.collapse(bv.nli_rule(erows, verifier), three)
                nli[name] = round(100 * f1_score(gold, rule, labels=labels, average="macro"),
                                  2)
        res["eval_macro_f1"] = ens
        res["eval_mean"] = round(float(np.mean(list(ens.values()))), 2)
        res["nli_mean"] = round(float(np.mean(list(nli.values()))), 2)
        res["margin"] = round(res["eval_mean"] - res["nli_mean"], 2)
        res["seconds"] = round(time.perf_counter() - t0)
        if variant == "reverse":
            res["auroc_supported"] = _reverse_auroc(vevals)
        elif variant == "lm_gain":
            res["auroc_supported"] = _auroc_supported(vevals, LM_FEATURES)
        out[variant] = res
        print(f"{variant:14s} CV {cv['mean']:.2f}"
              + (f" (lead {res['cv_lead']:+.2f}, SE {res['cv_lead_se']:.2f})"
                 if "cv_lead" in res else "")
              + f"  eval {res['eval_mean']:.2f}, NLI alone {res['nli_mean']:.2f}, margin "
              f"{res['margin']:+.2f}", flush=True)
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
