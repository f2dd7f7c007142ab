"""Build the NLI training and evaluation files for the embedded NLI model.

Writes JSON lines ``{"premise", "hypothesis", "label", "source"}`` with ``label`` one of
``entailment`` / ``neutral`` / ``contradiction`` (or ``null`` for the unlabelled pairs used
only for distillation) into ``--out``:

- ``train_human.jsonl``: ``nli-train/nli_train_human.jsonl`` plus the *train* splits of the
  claim-verification presets (HealthVer dev, COVID-Fact train half; see
  ``verifier.datasets``) mapped to 3 classes.
- ``train_synthetic.jsonl``: ``nli-train/nli_train_synthetic.jsonl``.
- ``train_fever.jsonl``: the FEVER dev pairs of the ``fever`` preset's *train* split (whole
  evidence groups, none linked to FEVER-Symmetric), 2-class: ``entailment`` / ``contradiction``.
- ``replay_human.jsonl``: a seeded sample of ``--replay`` rows of ``train_human.jsonl``, mixed
  with ``train_fever.jsonl`` in the FEVER fine-tuning stage so that it does not forget NLI.
- ``dev2_fever_sym.jsonl``: FEVER-Symmetric v0.2 dev (the ``fever-sym`` train split), for
  choosing between runs; never reported.
- ``distill_extra.jsonl``: unlabelled claim/evidence-sentence pairs from the train splits
  (each claim against each single evidence sentence), for distillation only.
- ``distill_fever.jsonl``: each FEVER train claim against each sentence of its evidence (four
  words or more), unlabelled: what the verifier's pairer hands the detector. For distillation
  only.
- ``distill_unrelated.jsonl``: each FEVER train claim against a sentence of another claim's
  evidence, unlabelled: of 30 random sentences from other evidence groups that share no
  capitalised word with the claim, the one sharing most words with it (what a retriever hands
  the verifier when the claim's own evidence is missing). For distillation only: labelled
  ``neutral`` and trained on with cross-entropy, they cost the MiniLM student 9 points of
  FEVER-Symmetric dev accuracy (0.792 -> 0.703).
- ``eval_*.jsonl``: SNLI eval, the val file, ANLI R1-R3 dev (3-class); FEVER dev and
  FEVER-Symmetric v0.2 test (2-class, ``contradiction`` stands for REFUTES).

Nothing from an ``eval`` split is ever written to a ``train_*`` or ``distill_*`` file.
``--meta-holdout`` also leaves out the train examples that ``verifier.training.nli_holdout``
keeps for the meta-classifiers (half of HealthVer, COVID-Fact, SciFact and FEVER), so that
``train_meta.py --nli-holdout`` fits them on features the NLI model has not learnt.

Usage: python models/recipes/prepare_nli_data.py --out .work/nli-data
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

from verifier.checking import arg_number
from verifier.datasets import (
    NEI,
    NLI_TRAINING_PRESETS,
    NOT_SUPPORTED,
    REFUTES,
    SUPPORTS,
    Example,
    data_root,
    load_preset,
)
from verifier.text import sentence_spans
from verifier.training import nli_holdout

TO_NLI = {SUPPORTS: "entailment", REFUTES: "contradiction", NEI: "neutral"}
_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def _write(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{path.name}: {len(rows)} rows")


def _read(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _two_class(ex: Example, source: str) -> dict:
    """A SUPPORTS / REFUTES example as an entailment / contradiction pair."""
    return {"premise": ex.evidence_text, "hypothesis": ex.claim,
            "label": "entailment" if ex.label == SUPPORTS else "contradiction",
            "source": source}


_WORD = re.compile(r"[A-Za-z0-9]+")


def unrelated_pairs(examples: list[Example], rng: random.Random, pool: int = 30) -> list[dict]:
    """Each claim against a sentence about something else, unlabelled (for distillation).

    Of ``pool`` random sentences (five words or more) from the evidence of other groups
    (``example.meta["group"]``), those sharing no capitalised word of three letters or more
    with the claim (not about its subject), the one sharing most words with the claim. A
    claim with no such sentence among its ``pool`` gets no row (the count written says how
    many did).
    """
    sentences = [(ex.meta.get("group", ex.id), ex.evidence_text[a:b])
                 for ex in examples for a, b in sentence_spans(ex.evidence_text)
                 if len(ex.evidence_text[a:b].split()) >= 5]
    rows = []
    for ex in examples:
        found = _WORD.findall(ex.claim)
        words = {w.lower() for w in found}
        names = {w.lower() for w in found if w[0].isupper() and len(w) >= 3}
        group = ex.meta.get("group", ex.id)
        best, best_overlap = None, -1
        for g, sent in rng.sample(sentences, min(pool, len(sentences))):
            toks = {w.lower() for w in _WORD.findall(sent)}
            if g == group or toks & names:
                continue
            if len(toks & words) > best_overlap:
                best, best_overlap = sent, len(toks & words)
        if best is not None:
            rows.append({"premise": best, "hypothesis": ex.claim, "label": None,
                         "source": "fever_train_unrelated"})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--replay", type=arg_number(int, 0), default=15000,
                    help="rows of train_human.jsonl in replay_human.jsonl")
    ap.add_argument("--meta-holdout", action="store_true",
                    help="leave the train examples verifier.training.nli_holdout picks (half "
                    "of each claim-verification set used) out of every file, for "
                    "train_meta.py --nli-holdout")
    args = ap.parse_args()

    def used(ex: Example) -> bool:
        return not (args.meta_holdout and nli_holdout(ex))

    root = data_root()
    args.out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)

    human = [
        {k: r[k] for k in ("premise", "hypothesis", "label", "source")}
        for r in _read(root / "nli-train" / "nli_train_human.jsonl")
    ]
    extra, distill = [], []
    for preset in NLI_TRAINING_PRESETS:
        if preset == "fever":  # its own file, train_fever.jsonl, below
            continue
        for ex in filter(used, load_preset(preset, "train")):
            if ex.label in TO_NLI:
                extra.append({"premise": ex.evidence_text, "hypothesis": ex.claim,
                              "label": TO_NLI[ex.label], "source": f"{preset}_train"})
            sents = list(ex.evidence) if not isinstance(ex.evidence, str) else _SENT.split(
                ex.evidence)
            for s in sents:
                if len(s.split()) >= 4:
                    distill.append({"premise": s, "hypothesis": ex.claim, "label": None,
                                    "source": f"{preset}_train_sentence"})
    train = human + extra
    rng.shuffle(train)
    _write(args.out / "train_human.jsonl", train)
    _write(args.out / "replay_human.jsonl", train[: args.replay])
    fever_used = [ex for ex in load_preset("fever", "train") if used(ex)]
    fever = [_two_class(ex, "fever_train") for ex in fever_used]
    random.Random(args.seed + 1).shuffle(fever)  # own stream: the older files stay as they were
    _write(args.out / "train_fever.jsonl", fever)
    _write(args.out / "distill_fever.jsonl", [
        {"premise": ex.evidence_text[a:b], "hypothesis": ex.claim, "label": None,
         "source": "fever_train_sentence"}
        for ex in fever_used for a, b in sentence_spans(ex.evidence_text)
        if len(ex.evidence_text[a:b].split()) >= 4])
    _write(args.out / "distill_unrelated.jsonl",
           unrelated_pairs(fever_used, random.Random(args.seed + 2)))
    _write(args.out / "dev2_fever_sym.jsonl",
           [_two_class(ex, "fever_sym_dev") for ex in load_preset("fever-sym", "train")])
    synthetic = _read(root / "nli-train" / "nli_train_synthetic.jsonl")
    _write(args.out / "train_synthetic.jsonl", synthetic)
    rng.shuffle(distill)
    _write(args.out / "distill_extra.jsonl", distill)

    _write(args.out / "eval_snli.jsonl", _read(root / "nli-train" / "nli_eval_snli.jsonl"))
    _write(args.out / "eval_val.jsonl", _read(root / "nli-train" / "nli_eval_val.jsonl"))
    for rnd in ("R1", "R2", "R3"):
        rows = [
            {"premise": r["context"], "hypothesis": r["hypothesis"],
             "label": {"e": "entailment", "n": "neutral", "c": "contradiction"}[r["label"]],
             "source": f"anli_{rnd}_dev"}
            for r in _read(root / "anli" / f"{rnd}_dev.jsonl")
        ]
        _write(args.out / f"eval_anli_{rnd.lower()}.jsonl", rows)
    for name, preset in (("fever", "fever"), ("fever_sym", "fever-sym")):
        rows = [_two_class(ex, name) for ex in load_preset(preset, "eval")
                if ex.label in (SUPPORTS, REFUTES, NOT_SUPPORTED)]
        _write(args.out / f"eval2_{name}.jsonl", rows)


if __name__ == "__main__":
    main()
