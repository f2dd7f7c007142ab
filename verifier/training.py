"""Detector features of labelled data sets, for fitting and evaluating the meta-classifiers.

The features come from :meth:`Verifier.verify_pairs` with the meta-classifiers off, so
training and inference compute exactly the same columns. Used by
``models/recipes/train_meta.py`` and ``benchmarks/bench_verifier.py``.
"""

from __future__ import annotations

import ast
import hashlib
import itertools
import json
import logging
import math
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from verifier.datasets import (
    NEI,
    NLI_TRAINING_PRESETS,
    NOT_SUPPORTED,
    REFUTES,
    SUPPORTS,
    Example,
    Split,
    load_preset,
)
from verifier.types import Claim, Evidence

logger = logging.getLogger(__name__)

#: Data sets with both a training and an evaluation split (see :mod:`verifier.datasets`).
META_SETS: tuple[str, ...] = ("fever", "fever-sym", "healthver", "scifact", "covidfact",
                              "summedits", "frank")
#: The data set name of :func:`pipeline_features` rows (FEVER claims checked as in a draft).
PIPELINE_SET = "fever-pipeline"
_STATUS = {SUPPORTS: "Supported", REFUTES: "Contradictory", NEI: "Insufficient_Info",
           NOT_SUPPORTED: "Not_Supported"}


def status_label(label: str) -> str:
    """Canonical data-set label -> status label (``Not_Supported`` for 2-class negatives)."""
    try:
        return _STATUS[label]
    except KeyError:
        raise ValueError(f"label must be one of {sorted(_STATUS)}, got {label!r}") from None


def sample_examples(name: str, split: Split, limit: int | None, seed: int = 0, *,
                    where: Callable[[Example], bool] | None = None) -> list[Example]:
    """A preset's split, or a seeded random sample of ``limit`` of its examples.

    ``where``: keep only the examples it returns true for (before sampling).
    """
    ex = load_preset(name, split)
    if where is not None:
        ex = [e for e in ex if where(e)]
    if limit is not None and 0 < limit < len(ex):
        ex = random.Random(f"{name}-{split}-{seed}").sample(ex, limit)
    return ex


def collect_features(verifier: Any, examples: Sequence[Example], *, batch_size: int = 64,
                     cache: str | Path | None = None) -> list[dict[str, Any]]:
    """Feature rows (``id``, ``dataset``, ``label``, ``status``, ``features``) of examples.

    Args:
        verifier: A :class:`~verifier.verify.Verifier` (its meta-classifiers are not used).
        examples: Labelled pairs; the evidence is passed as one text (long texts are chunked
            by the NLI detector, never truncated).
        batch_size: Pairs per :meth:`~verifier.verify.Verifier.verify_pairs` call.
        cache: A JSONL file: rows already there (same ``dataset``, ``id`` and input) are
            reused and new rows are appended, so an interrupted run resumes. The input is
            the claim, the evidence and :func:`feature_signature` (the code, the models and
            the detector's settings): a row computed from other texts, by other code or
            with another model is computed again. The label, status and meta always come
            from ``examples``. Rows computed in another run can differ from this run's in
            about the third decimal: bf16 scores depend on the pairs batched together and
            the verifier's embedding cache keeps a text's first embedding (see
            :class:`~verifier.verify.Verifier`), so a cache partly computed again is not
            the cache a fresh run writes.

    Raises:
        ValueError: Two examples share ``dataset`` and ``id`` but not their claim and
            evidence (rows are kept by that key).
    """
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
    t0 = time.perf_counter()
    signature = feature_signature(verifier) if cache is not None else ""

    def key(e: Example) -> str:
        return _input_key(e.claim, e.evidence_text, signature)

    # rows are kept by (dataset, id): two examples of one key with other texts would get
    # the features of one of them
    seen: dict[tuple[str, str], str] = {}
    for e in examples:
        if seen.setdefault((e.dataset, e.id), key(e)) != key(e):
            raise ValueError(f"examples share the dataset and id {(e.dataset, e.id)!r} but not "
                             f"their claim and evidence: ids must be unique within a data set")
    with _FeatureCache(cache) as done:
        todo = [e for e in examples if not done.fresh((e.dataset, e.id), key(e))]
        for i in range(0, len(todo), batch_size):
            batch = todo[i: i + batch_size]
            verdicts = verifier.verify_pairs([e.claim for e in batch],
                                             [e.evidence_text for e in batch])
            for e, v in zip(batch, verdicts, strict=True):
                done.add({"id": e.id, "dataset": e.dataset, "label": e.label,
                          "status": status_label(e.label), "meta": e.meta,
                          "input": key(e), "features": _jsonable(v.scores)})
            done.flush()
            logger.info("%d/%d pairs, %.0fs", min(i + batch_size, len(todo)), len(todo),
                        time.perf_counter() - t0)
        return [{**done[(e.dataset, e.id)], "label": e.label, "status": status_label(e.label),
                 "meta": e.meta} for e in examples]


#: Files the recipes keep beside a model's weights that no feature reads: its card, training
#: log, tuning records and ``verifier eval``'s decision cuts. Editing one does not make cached
#: features stale (:func:`feature_signature`).
RECORD_FILES: tuple[str, ...] = ("*.md", "training_log.json", "*_tuning.json",
                                 "thresholds.json")


def feature_signature(verifier: Any) -> str:
    """A fingerprint of what a verifier's features depend on besides the texts.

    The code of the ``verifier``, ``rag`` and ``mitigation`` packages (its syntax tree:
    editing a docstring, a comment or the layout leaves it as it was,
    :func:`code_fingerprint`), the NLI
    detector's settings (not its device or batching) and model files (not
    :data:`RECORD_FILES`), the verifier's evidence settings, and the embedded
    sentence-embedding model's files (a custom encoder passed to the verifier is not
    covered: clear the cache when you change it).
    """
    from verifier.embedded import embedded_embedding_model, embedded_model_dir, folder_fingerprint
    from verifier.errors import ModelLoadError

    h = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent
    for package in ("verifier", "rag", "mitigation"):
        for f in sorted((root / package).rglob("*.py")):
            h.update(f.relative_to(root).as_posix().encode() + b"\0" + code_fingerprint(f))
    nli = getattr(verifier, "nli", None)
    settings: Any = type(nli).__qualname__
    if nli is not None and hasattr(nli, "to_dict"):
        settings = {k: v for k, v in nli.to_dict()["init_parameters"].items()
                    if k not in ("device", "batch_size", "show_progress_bar")}
    h.update(json.dumps([settings, getattr(verifier, "top_k_evidence", None),
                         getattr(verifier, "min_evidence_score", None),
                         getattr(verifier, "context_chars", None)],
                        sort_keys=True, default=str).encode())
    folders = [getattr(nli, "model_name_or_path", None)]
    if folders[0] is None and hasattr(nli, "to_dict"):
        folders[0] = str(embedded_model_dir())
    try:
        folders.append(embedded_embedding_model())
    except ModelLoadError:
        pass
    for folder in folders:
        if folder is not None and Path(folder).is_dir():
            h.update(folder_fingerprint(folder, skip=RECORD_FILES).encode())
    return h.hexdigest()


def code_fingerprint(path: str | Path) -> bytes:
    """What :func:`feature_signature` reads of a Python file: its syntax tree.

    Docstrings, comments, line numbers and layout are left out, so editing them does not
    make cached features stale; a file that does not parse gives its bytes.
    """
    source = Path(path).read_bytes()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False).encode()


def _input_key(*texts: str) -> str:
    """A fingerprint of a cached row's input texts (md5 of them joined by NUL)."""
    return hashlib.md5("\0".join(texts).encode()).hexdigest()


class _FeatureCache:
    """Feature rows by ``(dataset, id)``, kept in a JSONL file (``None``: in memory only).

    The file's rows are read first (a later row of a key replaces an earlier one), and
    :meth:`add` appends new ones, so an interrupted run resumes. Each row records the
    fingerprint of its input (``input``, :func:`_input_key`), so a row is reused only for
    the same texts: a data set whose text changed gets its changed rows computed again
    rather than features of the old text. A context manager (the file is open inside the
    ``with`` block).
    """

    def __init__(self, path: str | Path | None) -> None:
        self.path = None if path is None else Path(path)
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}
        if self.path is not None and self.path.is_file():
            lines = self.path.read_bytes().split(b"\n")
            for n, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                except ValueError as exc:
                    if n == len(lines):  # a row cut off by an interrupted run: dropped
                        logger.warning("%s:%d: an incomplete last row (%s); dropped", self.path,
                                       n, exc)
                        with self.path.open("r+b") as fh:
                            fh.truncate(len(self.path.read_bytes()) - len(line))
                        break
                    raise ValueError(f"{self.path}:{n}: not a feature row ({exc}); delete the "
                                     "cache file to compute its rows again") from exc
                self.rows[(r["dataset"], r["id"])] = r
        self._fh: Any = None

    def __enter__(self) -> _FeatureCache:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("a", encoding="utf-8")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def fresh(self, key: tuple[str, str], input_key: str) -> bool:
        """Whether a row of ``key`` is cached for the input ``input_key``."""
        row = self.rows.get(key)
        return row is not None and row.get("input") == input_key

    def __getitem__(self, key: tuple[str, str]) -> dict[str, Any]:
        return self.rows[key]

    def add(self, row: dict[str, Any]) -> None:
        self.rows[(row["dataset"], row["id"])] = row
        if self._fh is not None:
            self._fh.write(json.dumps(row) + "\n")

    def flush(self) -> None:
        if self._fh is not None:
            self._fh.flush()


def _jsonable(scores: dict[str, float]) -> dict[str, float | None]:
    return {k: (None if isinstance(x, float) and math.isnan(x) else x)
            for k, x in scores.items()}


def pipeline_features(verifier: Any, examples: Sequence[Example], *, distractors: int = 4,
                      cache: str | Path | None = None
                      ) -> tuple[list[dict[str, Any]], list[Example]]:
    """Feature rows of claims checked the way :meth:`Verifier.verify` checks a draft's.

    The labelled pairs of :func:`collect_features` give the detectors one gold evidence text
    per claim; a draft's claims get the sentences that ``verifier.pairer`` picks from all the
    passages, several per claim, some about something else, and none at all when nothing
    reaches its floor. Each SUPPORTS / REFUTES example is checked twice against the
    documents (evidence texts) of ``distractors`` other examples (the next ones in
    ``examples`` with other evidence): with its own document among them (status from its
    label) and without it (``Insufficient_Info``: nothing given is about the claim). A case
    in which the pairer finds no evidence gives no row: the verifier decides it without the
    meta-classifiers.

    ``cache``: a JSONL file, as :func:`collect_features`'s: a row is reused only for the
    same claim, documents and :func:`feature_signature` (code, models, settings).

    Returns:
        The rows (as :func:`collect_features`; ``dataset`` :data:`PIPELINE_SET`, ``id``
        ``"<id>:with"`` / ``"<id>:without"``) and, for each row, the example it checks (for
        :func:`fold_of`: both cases of a claim fall in its fold).
    """
    if not isinstance(distractors, int) or isinstance(distractors, bool) or distractors < 1:
        raise ValueError(f"distractors must be an int >= 1, got {distractors!r}")
    pool = [e for e in examples if e.label in (SUPPORTS, REFUTES)]
    groups = [fold_group(e) for e in pool]
    rows: list[dict[str, Any]] = []
    owners: list[Example] = []
    t0 = time.perf_counter()
    signature = feature_signature(verifier) if cache is not None else ""
    with _FeatureCache(cache) as done:
        for i, e in enumerate(pool):
            nxt = ((i + k) % len(pool) for k in range(1, len(pool)))
            others = [pool[j] for j in itertools.islice(
                (j for j in nxt if groups[j] != groups[i]), distractors)]
            for case, docs in (("with", [e, *others]), ("without", others)):
                if not docs:  # no other evidence group to check the claim against
                    continue
                key = (PIPELINE_SET, f"{e.id}:{case}")
                given = _pipeline_input(e, docs, signature)
                if not done.fresh(key, given):
                    done.add(_pipeline_row(verifier, e, case, docs, given))
                if done[key]["features"] is not None:
                    rows.append(done[key])
                    owners.append(e)
            if i % 100 == 99:
                done.flush()
                logger.info("%d/%d claims, %.0fs", i + 1, len(pool), time.perf_counter() - t0)
    return rows, owners


def _pipeline_row(verifier: Any, e: Example, case: str, docs: Sequence[Example], given: str
                  ) -> dict[str, Any]:
    # the claim's own document at a position of its own (not always first)
    order = list(docs)
    j = int(hashlib.md5(e.id.encode()).hexdigest(), 16) % len(order)
    order[0], order[j] = order[j], order[0]
    passages = [Evidence(d.evidence_text, f"d{k}", (0, len(d.evidence_text)))
                for k, d in enumerate(order)]
    paired = verifier.pairer.pair([Claim(" ".join(e.claim.split()))], passages)
    features = None  # no evidence: the verifier decides without the meta-classifiers
    if paired[0].evidence:
        (v,) = verifier.verify_claims(paired, passages=passages)
        features = _jsonable(v.scores)
    with_own = case == "with"
    return {"id": f"{e.id}:{case}", "dataset": PIPELINE_SET, "input": given,
            "label": e.label if with_own else NEI,
            "status": status_label(e.label) if with_own else "Insufficient_Info",
            "meta": {**e.meta, "claim_id": e.id, "case": case}, "features": features}


def _pipeline_input(e: Example, docs: Sequence[Example], signature: str) -> str:
    return _input_key(e.claim, *(d.evidence_text for d in docs), signature)


def feature_array(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> Any:
    """``(n, len(names))`` float array of the rows' features (missing -> NaN)."""
    import numpy as np

    from verifier.verify import derive_features

    out = np.full((len(rows), len(names)), np.nan)
    for i, r in enumerate(rows):
        f = {**r["features"], **derive_features(r["features"])}
        out[i] = [math.nan if f.get(n) is None else float(f[n]) for n in names]
    return out


def fold_of(example: Example, folds: int = 5) -> int:
    """An example's cross-validation fold, in ``range(folds)``.

    Hashed from its data set and its evidence group: FEVER's ``meta["group"]`` (pairs linked
    by a shared evidence sentence), else the evidence text itself. Pairs that share evidence
    stay in one fold: a SummEdits document has ~31 edited summaries in the train split, a
    FRANK article ~4.5, a HealthVer or COVID-Fact passage ~4 claims, and folds that split
    them let a classifier learn the document in one fold and be scored on it in another.

    Example:
        >>> a = Example("1", "It rained.", "Rain fell all day.", SUPPORTS, "demo", "train")
        >>> b = Example("2", "It was dry.", "Rain fell all day.", REFUTES, "demo", "train")
        >>> fold_of(a) == fold_of(b)
        True
    """
    if not isinstance(folds, int) or isinstance(folds, bool) or folds < 2:
        raise ValueError(f"folds must be an int >= 2, got {folds!r}")
    return int(hashlib.md5(f"{example.dataset}|{fold_group(example)}".encode()).hexdigest(),
               16) % folds


def fold_group(example: Example) -> str:
    """The evidence group that :func:`fold_of` keeps in one fold.

    FEVER's ``meta["group"]`` (pairs linked by a shared evidence sentence), else a hash of
    the evidence text.
    """
    key = (example.meta or {}).get("group")
    if key is not None:
        return str(key)
    return hashlib.md5(example.evidence_text.encode()).hexdigest()


def nli_holdout(example: Example) -> bool:
    """Whether a ``train`` example stays out of the NLI model's training data, for stacking.

    The meta-classifiers learn from the NLI model's features, and on rows the NLI model was
    trained on those are in-sample (``benchmarks/nli_seen_rows.py``). With
    ``prepare_nli_data.py --meta-holdout`` the NLI data leave out every example this returns
    true for, and ``train_meta.py --nli-holdout`` fits the meta-classifiers on those only:
    half of each set in :data:`~verifier.datasets.NLI_TRAINING_PRESETS` (by
    :func:`fold_of` with two folds, so rows that share evidence stay on one side) and every
    example of the other sets.

    Example:
        >>> a = Example("1", "It rained.", "Rain fell all day.", SUPPORTS, "healthver", "train")
        >>> b = Example("2", "It was dry.", "Rain fell all day.", REFUTES, "healthver", "train")
        >>> nli_holdout(a) == nli_holdout(b)
        True
        >>> nli_holdout(Example("3", "It rained.", "Rain.", SUPPORTS, "frank", "train"))
        True
    """
    return example.dataset not in NLI_TRAINING_PRESETS or fold_of(example, folds=2) == 0
