"""Presets for the claim-verification data sets in ``../shared/data`` and their splits.

Each preset yields :class:`Example` records (claim, evidence, normalised label). The
``split`` of every example is fixed here, once, so that training recipes never see what
the benchmarks report:

========== ====================================== =========================================
preset     ``train`` (may be trained on)           ``eval`` (reported, never trained on)
========== ====================================== =========================================
fever      FEVER dev pairs whose evidence group's  the rest (8,434 pairs), including every
           hash bucket is >= 50 (4,898 pairs)      group linked to FEVER-Symmetric
fever-sym  v0.2 dev (708; tuning only)             v0.2 test (712)
healthver  dev csv                                 test csv
scifact    train.tsv                               dev.tsv
covidfact  claims whose hash bucket is >= 50       hash bucket < 50 (about half)
wice       --                                      WiCE dev (claim level, retrieval version)
summedits  ``evaluation`` split of each domain     ``test`` split
frank      ``val`` split                           ``test`` split
anli       --                                      R1-R3 dev
averitec   --                                      dev
========== ====================================== =========================================

Claims, not evidence, are what the splits keep apart for COVID-Fact (whose counterfactual
claims share the evidence of the claim they were made from: 75% of its ``eval`` rows have
their evidence in a ``train`` row), HealthVer (92%, the official split), SciFact (44%,
official) and FEVER-Symmetric (74 of its 712 test rows, 10%, have their evidence in a dev
row, and 3 are the same claim, evidence and label as one: the official split, kept).
``python benchmarks/split_overlap.py`` prints the first three shares and, given a
``verifier eval`` output, scores the rows with shared and unseen evidence side by side: the
embedded NLI model, trained on COVID-Fact's train half, does no better on the shared ones
(AUROC 63.3 shared, 64.7 unseen). Training recipes' cross-validation folds group rows by
evidence (``models/recipes/train_meta.py``, ``fold_of``).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from verifier.text import csv_unescaped

Split = Literal["train", "eval"]

#: Presets whose ``train`` split the embedded NLI model was trained on
#: (``models/recipes/prepare_nli_data.py``): HealthVer, COVID-Fact and SciFact mixed into
#: its human-written NLI pairs, FEVER in its last fine-tuning stage. Its scores on these
#: train rows are not those of unseen data (``benchmarks/nli_seen_rows.py``).
NLI_TRAINING_PRESETS: tuple[str, ...] = ("healthver", "covidfact", "scifact", "fever")

#: Canonical label names (3-class). 2-class data sets use SUPPORTS / REFUTES or
#: SUPPORTS / NOT_SUPPORTED.
SUPPORTS, REFUTES, NEI, NOT_SUPPORTED = "SUPPORTS", "REFUTES", "NOT ENOUGH INFO", "NOT_SUPPORTED"

LABEL_SYNONYMS: dict[str, str] = {
    **dict.fromkeys(
        ["supports", "supported", "support", "entailment", "entailed", "e", "true", "1",
         "consistent", "yes"],
        SUPPORTS,
    ),
    **dict.fromkeys(
        ["refutes", "refuted", "refute", "contradiction", "contradicted", "contradicts", "c",
         "false"],
        REFUTES,
    ),
    **dict.fromkeys(
        ["not enough info", "not_enough_info", "nei", "not enough evidence", "neutral", "n",
         "insufficient_info", "insufficient info", "unverifiable",
         # AVeriTeC's fourth label: the evidence neither supports nor refutes the claim as a
         # whole (load_preset("averitec") and `verifier eval --preset averitec` alike)
         "conflicting evidence/cherrypicking"],
        NEI,
    ),
    **dict.fromkeys(
        ["not_supported", "not supported", "not_entailment", "not entailment", "unsupported",
         "partially_supported", "partially supported", "inconsistent", "0", "no"],
        NOT_SUPPORTED,
    ),
}


def normalise_label(raw: Any) -> str:
    """Map a raw label (any case, synonyms, 0/1) to a canonical label.

    Raises:
        ValueError: The label is unknown; the message names it.
    """
    key = str(raw).strip().lower()
    try:
        return LABEL_SYNONYMS[key]
    except KeyError:
        raise ValueError(f"unknown label {raw!r}") from None


@dataclass(frozen=True)
class Example:
    """One labelled claim-verification example.

    Attributes:
        id: Stable identifier within its data set.
        claim: The claim (hypothesis).
        evidence: The evidence (premise); a list when the source gives sentences or chunks.
        label: Canonical label (see :func:`normalise_label`).
        dataset: Preset name.
        split: ``"train"`` or ``"eval"``.
        meta: Extra fields (domain, source label...).
    """

    id: str
    claim: str
    evidence: str | tuple[str, ...]
    label: str
    dataset: str
    split: Split
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def evidence_text(self) -> str:
        """The evidence as one string (sentences joined by spaces)."""
        return self.evidence if isinstance(self.evidence, str) else " ".join(self.evidence)


def data_root() -> Path:
    """Folder holding the shared data: ``$NLI_VERIFIER_DATA`` or ``../shared/data``."""
    env = os.environ.get("NLI_VERIFIER_DATA")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parents[1]
    for cand in (here.parent / "shared" / "data", here / "shared" / "data"):
        if cand.is_dir():
            return cand
    return here.parent / "shared" / "data"


def hash_bucket(key: str, buckets: int = 100) -> int:
    """Deterministic bucket in ``[0, buckets)`` of a string (md5, platform-independent)."""
    return int(hashlib.md5(key.encode("utf-8")).hexdigest(), 16) % buckets


class _MissingField(KeyError):
    """A data row lacks a field a preset reads (``load_preset`` reports it as such)."""


class _Row(dict):  # type: ignore[type-arg]
    """A data file's row: a missing field raises :class:`_MissingField`, not any KeyError.

    So that ``load_preset`` reports a missing field as one, and lets a ``KeyError`` of
    anything else (a bug) through as what it is.
    """

    def __missing__(self, key: str) -> Any:
        raise _MissingField(key)


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}:{n}: bad JSON: {e.msg} (column {e.colno})"
                                     ) from None
                if not isinstance(row, dict):
                    raise ValueError(f"{path}:{n}: a JSON object is needed, got "
                                     f"{type(row).__name__}")
                yield _Row(row)


_FEVER_TOKENS = re.compile(r"-[lr][rsc]b-")
_ALNUM = re.compile(r"[^a-z0-9]+")


def _fever_key(text: str) -> str:
    """A FEVER sentence or claim reduced to lower-case letters and digits (``-LRB-`` dropped)."""
    return _ALNUM.sub("", _FEVER_TOKENS.sub("", text.lower()))


def _fever_sentences(evidence: str) -> list[str]:
    keys = [_fever_key(s) for s in evidence.split(" . ")]
    return [k for k in keys if k]


def _fever_sym_keys(root: Path) -> set[str]:
    """Claims and evidence sentences of every FEVER-Symmetric file (v0.1 and v0.2)."""
    paths = sorted((root / "fever-symmetric").glob("symmetric_*.jsonl"))
    if not paths:  # without them the split could put FEVER-Symmetric's claims in train
        raise FileNotFoundError(f"the FEVER split needs the FEVER-Symmetric files "
                                f"(symmetric_*.jsonl) in {str(root / 'fever-symmetric')!r}")
    keys: set[str] = set()
    for path in paths:
        for r in _jsonl(path):
            keys.add(_fever_key(r["claim"]))
            ev = r.get("evidence", r.get("evidence_sentence", ""))
            keys.update(_fever_sentences(ev))
    keys.discard("")
    return keys


def _fever(root: Path) -> Iterator[Example]:
    """FEVER dev pairs, split by evidence group (FEVER has no train split in the shared data).

    Pairs that share an evidence sentence form one group (union-find), so that claims written
    from the same Wikipedia sentences never straddle the split; a group goes to ``train`` when
    the md5 bucket of its smallest sentence is >= 50, unless one of its claims or sentences
    appears in FEVER-Symmetric (built from FEVER dev claims), which keeps it in ``eval``.
    92 claims of the file are stored as CSV fields (``"... ""Champ""."``): they are unescaped
    (:func:`verifier.text.csv_unescaped`); the split reads letters and digits only.
    """
    rows = list(_jsonl(root / "fever-dev" / "fever_dev_rte_claim_evidence.jsonl"))
    parent: dict[str, str] = {}

    def find(k: str) -> str:
        while parent.setdefault(k, k) != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    sents = [_fever_sentences(r["evidence"]) or [_fever_key(r["claim"])] for r in rows]
    for ss in sents:
        for a in ss[1:]:
            ra, rb = find(ss[0]), find(a)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    sym = _fever_sym_keys(root)
    linked = {find(ss[0]) for r, ss in zip(rows, sents, strict=True)
              if _fever_key(r["claim"]) in sym or any(k in sym for k in ss)}
    for r, ss in zip(rows, sents, strict=True):
        group = find(ss[0])
        split: Split = "train" if group not in linked and hash_bucket(group) >= 50 else "eval"
        yield Example(str(r["idx"]), csv_unescaped(r["claim"]), r["evidence"],
                      normalise_label(r["label"]), "fever", split, {"group": group})


def _fever_sym(root: Path) -> Iterator[Example]:
    for split, name in (("train", "dev"), ("eval", "test")):
        path = root / "fever-symmetric" / f"symmetric_v0.2_fever_symmetric_{name}.jsonl"
        for i, r in enumerate(_jsonl(path)):
            yield Example(f"{name}-{r.get('id', i)}-{i}", r["claim"], r["evidence"],
                          normalise_label(r["label"]), "fever-sym", split)  # type: ignore[arg-type]


def _healthver(root: Path) -> Iterator[Example]:
    for split, name in (("train", "dev"), ("eval", "test")):
        with (root / "healthver" / f"healthver_{name}.csv").open(encoding="utf-8") as fh:
            for r in map(_Row, csv.DictReader(fh)):
                yield Example(f"{name}-{r['id']}", r["claim"], r["evidence"],
                              normalise_label(r["label"]), "healthver", split)  # type: ignore[arg-type]


def _scifact(root: Path) -> Iterator[Example]:
    for split, name in (("train", "train"), ("eval", "dev")):
        with (root / "scifact" / f"{name}.tsv").open(encoding="utf-8") as fh:
            for r in map(_Row, csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)):
                lab = SUPPORTS if r["entailment"] == "entailment" else NOT_SUPPORTED
                yield Example(f"{name}-{r['index']}", r["sentence2"], r["sentence1"], lab,
                              "scifact", split)  # type: ignore[arg-type]


def _covidfact(root: Path) -> Iterator[Example]:
    for i, r in enumerate(_jsonl(root / "covidfact" / "COVIDFACT_dataset.jsonl")):
        split: Split = "eval" if hash_bucket(r["claim"]) < 50 else "train"
        yield Example(str(i), r["claim"], tuple(r["evidence"]), normalise_label(r["label"]),
                      "covidfact", split)


def _wice(root: Path) -> Iterator[Example]:
    for i, r in enumerate(_jsonl(root / "wice-dev" / "entailment_retrieval_claim_dev.jsonl")):
        lab = SUPPORTS if r["label"] == "supported" else NOT_SUPPORTED
        yield Example(str(i), r["claim"], tuple(r["evidence"]), lab, "wice", "eval",
                      {"source_label": r["label"]})


def _summedits(root: Path) -> Iterator[Example]:
    for path in sorted((root / "summedits").glob("summedits_*.json")):
        domain = path.stem.removeprefix("summedits_")
        for r in map(_Row, json.loads(path.read_text(encoding="utf-8"))):
            split: Split = "eval" if r["split"] == "test" else "train"
            lab = SUPPORTS if int(r["label"]) == 1 else NOT_SUPPORTED
            yield Example(r["id"], r["summary"], r["doc"], lab, "summedits", split,
                          {"domain": domain})


def _frank(root: Path) -> Iterator[Example]:
    for r in _jsonl(root / "frank" / "frank_doc_summary_label.jsonl"):
        split: Split = "eval" if r["split"] == "test" else "train"
        lab = SUPPORTS if int(r["label"]) == 1 else NOT_SUPPORTED
        yield Example(r["id"], r["summary"], r["document"], lab, "frank", split,
                      {"source": r["dataset"]})


def _anli(root: Path) -> Iterator[Example]:
    for rnd in ("R1", "R2", "R3"):
        for r in _jsonl(root / "anli" / f"{rnd}_dev.jsonl"):
            yield Example(r["uid"], r["hypothesis"], r["context"], normalise_label(r["label"]),
                          "anli", "eval", {"round": rnd})


def _averitec(root: Path) -> Iterator[Example]:
    data = json.loads((root / "averitec" / "dev.json").read_text(encoding="utf-8"))
    for i, r in enumerate(map(_Row, data)):
        answers = [
            f"{q['question']} {a.get('answer', '')}".strip()
            for q in map(_Row, r.get("questions", [])) for a in q.get("answers", [])
        ]
        yield Example(str(i), r["claim"], tuple(answers) or ("",), normalise_label(r["label"]),
                      "averitec", "eval", {"source_label": r["label"]})


PRESETS = {
    "fever": _fever,
    "fever-sym": _fever_sym,
    "healthver": _healthver,
    "scifact": _scifact,
    "covidfact": _covidfact,
    "wice": _wice,
    "summedits": _summedits,
    "frank": _frank,
    "anli": _anli,
    "averitec": _averitec,
}


def load_preset(
    name: str, split: Split | None = None, *, root: Path | None = None
) -> list[Example]:
    """Load a preset's examples, optionally one split only.

    Args:
        name: One of :data:`PRESETS`.
        split: ``"train"``, ``"eval"`` or ``None`` for both.
        root: Data folder (default :func:`data_root`).

    Raises:
        ValueError: Unknown preset or split.
        FileNotFoundError: The data folder lacks the preset's files.
    """
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; known: {sorted(PRESETS)}")
    if split not in (None, "train", "eval"):
        raise ValueError(f"split must be 'train', 'eval' or None, got {split!r}")
    root = root or data_root()
    rows: list[Example] = []
    try:
        rows.extend(PRESETS[name](root))
    except _MissingField as e:
        raise ValueError(f"preset {name!r}: a row of its files under {str(root)!r} lacks the "
                         f"field {e.args[0]!r}") from None
    except ValueError as e:  # a bad value (an unknown label, ...): say which example
        raise ValueError(f"preset {name!r}, example {len(rows)} (from 0, in the loader's "
                         f"order): {e}") from e
    return [r for r in rows if split is None or r.split == split]
