"""Batch evaluation over FEVER-style data sets: ``verifier eval``.

Reads JSONL, JSON or CSV/TSV rows, maps their fields to (claim, evidence, label), scores every
usable row with the NLI detector and writes, in ``output_dir``:

- ``predictions.jsonl``: one line per usable input row (id, line, gold, predicted status,
  probabilities, per-detector scores); on 2-class schemes the predicted status is SUPPORTS
  iff p(SUPPORTS) reaches the run's threshold (see :func:`resolve_threshold`);
- ``errors.jsonl``: one line per row that could not be used (line number, reason, raw line);
  in both files ``line`` is the file line a row starts on, and a row of a ``.json`` array
  also has ``item``, its number in the array (a compact array is all on line 1);
- ``metrics.json``: quality metrics, computed from ``predictions.jsonl`` (deterministic: a
  resumed run ends with the same bytes as an uninterrupted one);
- ``run.json``: what varies from run to run (pairs/s, peak memory, seconds, device);
- ``.lock``: locked while a run is on, so that a second run into the folder fails at once;
- ``confusion_matrix.png`` and ``reliability.png`` when matplotlib is installed.

Rows in = predictions + errors, always. Work is committed in fixed chunks of rows: after each
chunk the output files are flushed and fsync'ed, then ``state.json`` is replaced atomically.
A run killed at any point (``kill -9`` included) and started again with the same arguments
truncates the outputs to the last committed chunk and goes on from there.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import math
import os
import re
import time
import warnings
from collections import Counter
from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from verifier.checking import file_on_path, is_int, is_real
from verifier.datasets import (
    _ESCAPED_BYTE,
    CLASS_NUMBERINGS,
    NEI,
    NOT_SUPPORTED,
    REFUTES,
    SUPPORTS,
    TWO_CLASS_SYNONYMS,
    Split,
    _printable,  # helpers for both modules' readers (datasets cannot import batch)
    _undecodable,
    data_root,
    is_class_number,
    load_preset_rows,
    missing_data_message,
    normalise_label,
)
from verifier.errors import ConfigurationError
from verifier.nli import lacks_contradiction
from verifier.text import indefinite_article, is_blank

logger = logging.getLogger(__name__)

Scheme = Literal["3class", "supports-refutes", "supported-not"]
SCHEMES: tuple[str, ...] = ("3class", "supports-refutes", "supported-not")
#: Version of ``state.json``: a folder written by another version is not resumed (2: ids
#: are checked row by row, so the same inputs may give other outputs than under 1).
STATE_VERSION = 2


class PairScorer(Protocol):
    """What the evaluation needs of a detector: ``predict(pairs) -> (n, 3)`` probabilities."""

    labels: tuple[str, ...]

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:  # pragma: no cover
        """Return an ``(n, 3)`` array: entailment, neutral, contradiction."""
        ...


@dataclass(frozen=True)
class FieldMap:
    """Which input fields hold the claim, the evidence, the label and the id.

    ``evidence`` may name a field holding a string or a list of strings (joined by spaces), or
    several fields separated by commas (their values are joined).
    """

    claim: str = "claim"
    evidence: str = "evidence"
    label: str = "label"
    id: str | None = "id"


@dataclass(frozen=True)
class Preset:
    """Field mapping, label scheme and default files of a shared data set.

    ``holds_train`` is true when the default files also hold rows of the preset's ``train``
    split (see :mod:`verifier.datasets`): ``verifier eval --preset`` then evaluates the
    ``eval`` split only (written out by :func:`write_preset_split`) unless ``--split all``.
    ``label_map``: what the data set's class numbers mean (:attr:`EvalConfig.label_map`),
    for its files read directly (``verifier eval --preset NAME FILE``).
    ``loader``: the default files are read through the preset's loader
    (:func:`write_preset_split`) even without train rows, because no field of theirs is the
    evidence (AVeriTeC's is the answers to its questions); ``fields`` then name the
    loader's flat fields, for files in that form read directly. A preset with
    ``holds_train`` is always read through its loader.
    """

    fields: FieldMap
    scheme: Scheme
    files: tuple[str, ...]
    holds_train: bool = False
    label_map: dict[str, str] | None = None
    loader: bool = False


#: SummEdits' and FRANK's labels: 1 consistent, 0 not.
_BINARY_LABEL_MAP: dict[str, str] = {"1": SUPPORTS, "0": NOT_SUPPORTED}


PRESETS: dict[str, Preset] = {
    "fever": Preset(FieldMap("claim", "evidence", "label", "idx"), "supports-refutes",
                    ("fever-dev/fever_dev_rte_claim_evidence.jsonl",), holds_train=True),
    "fever-sym": Preset(FieldMap("claim", "evidence", "label", "id"), "supports-refutes",
                        ("fever-symmetric/symmetric_v0.2_fever_symmetric_test.jsonl",)),
    "healthver": Preset(FieldMap("claim", "evidence", "label", "id"), "3class",
                        ("healthver/healthver_test.csv",)),
    "scifact": Preset(FieldMap("sentence2", "sentence1", "entailment", "index"),
                      "supported-not", ("scifact/dev.tsv",)),
    "wice": Preset(FieldMap("claim", "evidence", "label", None), "supported-not",
                   ("wice-dev/entailment_retrieval_claim_dev.jsonl",)),
    "summedits": Preset(FieldMap("summary", "doc", "label", "id"), "supported-not",
                        tuple(f"summedits/summedits_{d}.json" for d in (
                            "ectsum", "news", "podcast", "qmsumm", "sales_call", "sales_email",
                            "samsum", "scitldr")), holds_train=True,
                        label_map=_BINARY_LABEL_MAP),
    "frank": Preset(FieldMap("summary", "document", "label", "id"), "supported-not",
                    ("frank/frank_doc_summary_label.jsonl",), holds_train=True,
                    label_map=_BINARY_LABEL_MAP),
    "anli": Preset(FieldMap("hypothesis", "context", "label", "uid"), "3class",
                   ("anli/R1_dev.jsonl", "anli/R2_dev.jsonl", "anli/R3_dev.jsonl")),
    "covidfact": Preset(FieldMap("claim", "evidence", "label", None), "supports-refutes",
                        ("covidfact/COVIDFACT_dataset.jsonl",), holds_train=True),
    # evidence: the question-answer pairs (verifier.datasets._averitec), not the annotators'
    # justification, which often states the verdict ("... so the claim is refuted")
    "averitec": Preset(FieldMap("claim", "evidence", "label", None), "3class",
                       ("averitec/dev.json",), loader=True),
}

#: Statuses by scheme, in the order of the probability columns written out.
CLASSES: dict[str, tuple[str, ...]] = {
    "3class": (SUPPORTS, REFUTES, NEI),
    "supports-refutes": (SUPPORTS, REFUTES),
    "supported-not": (SUPPORTS, NOT_SUPPORTED),
}


#: A class number's text (``"01"``, ``"+1"``, ``"1.0"``): its sign, digits and zero decimals.
_INTEGRAL = re.compile(r"([+-]?)(\d+)(?:\.0*)?")


def label_key(raw_label: Any) -> str:
    """How a raw label is looked up in a label map: trimmed, lower-case, a number as an int.

    A class number however written (``1``, ``1.0``, ``"1.0"``, ``"01"``:
    :func:`verifier.datasets.is_class_number`) is its integer's text, so that
    ``--label-map 1=...`` matches labels that a spreadsheet or pandas wrote as floats.

    Example:
        >>> [label_key(x) for x in (1.0, "1.0", " 01 ", -0, "+2", "Yes", True)]
        ['1', '1', '1', '0', '2', 'yes', 'true']
    """
    key = str(raw_label).strip().lower()
    m = _INTEGRAL.fullmatch(key)
    if m is None or isinstance(raw_label, bool):
        return key
    digits = m.group(2).lstrip("0") or "0"  # not int(): it refuses over 4,300 digits
    return ("-" if m.group(1) == "-" and digits != "0" else "") + digits


def gold_for_scheme(raw_label: Any, scheme: Scheme, *,
                    label_map: dict[str, str] | None = None, field: str | None = None) -> str:
    """Map a raw label to the scheme's classes; raise ``ValueError`` naming it if impossible.

    A class number (``0``, ``1``, ``"2"``, ``1.0``: :func:`verifier.datasets.is_class_number`)
    is read only through ``label_map`` (raw label, as :func:`label_key` spells it -> canonical
    label: see :attr:`EvalConfig.label_map`), in every scheme: data sets number their classes
    differently (1 is neutral in MNLI, SUPPORTS in SummEdits, not entailed in GLUE RTE).
    In ``3class``, the two-class synonyms (true/false, yes/no) are ambiguous, hence refused
    (:func:`verifier.datasets.normalise_label`). In ``supports-refutes`` they name the two
    classes: false and no are REFUTES. ``field`` (the label field) is named in the messages.

    Example:
        >>> [gold_for_scheme(x, "supports-refutes") for x in ("yes", "no", "false")]
        ['SUPPORTS', 'REFUTES', 'REFUTES']
        >>> gold_for_scheme(2, "supports-refutes", label_map={"2": REFUTES})
        'REFUTES'
    """
    key = label_key(raw_label)
    if label_map:  # keys as check_label_map gives them, for a map given here unchecked
        label_map = {label_key(k): v for k, v in label_map.items()}
    if label_map and key in label_map:
        lab = normalise_label(label_map[key])
    elif is_class_number(raw_label):
        where = f" (field {field!r})" if field else ""
        if label_map:  # a map was given: telling the user to give one would mislead
            raise ValueError(f"label {raw_label!r}{where} has no entry in the label map "
                             f"(--label-map, EvalConfig.label_map), which maps "
                             f"{', '.join(repr(k) for k in label_map)}; add {key}=LABEL")
        raise ValueError(f"label {raw_label!r} is ambiguous in scheme {scheme!r}{where}: a "
                         f"class number, and data sets number their classes differently "
                         f"({CLASS_NUMBERINGS}); say what the numbers mean with --label-map "
                         f"(EvalConfig.label_map), e.g. --label-map "
                         f"0=entailment,1=neutral,2=contradiction")
    else:
        lab = normalise_label(raw_label, three_class=scheme == "3class")
    if scheme == "3class":
        if lab == NOT_SUPPORTED:
            raise ValueError(f"label {raw_label!r} is 2-class; use --scheme supported-not")
        return lab
    if scheme == "supports-refutes":
        if lab == NOT_SUPPORTED and key in TWO_CLASS_SYNONYMS and key not in (label_map or {}):
            lab = REFUTES  # "no" is the other class, as "false" is
        if lab not in (SUPPORTS, REFUTES):
            raise ValueError(f"label {raw_label!r} is neither SUPPORTS nor REFUTES")
        return lab
    return SUPPORTS if lab == SUPPORTS else NOT_SUPPORTED


def probabilities_for_scheme(nli: np.ndarray, scheme: Scheme, *, statuses: bool = False
                             ) -> np.ndarray:
    """Turn ``(n, 3)`` NLI probabilities (e, n, c) into the scheme's class probabilities.

    ``statuses``: the rows are the verifier's (Supported, Insufficient_Info, Contradictory)
    probabilities (``mode="ensemble"``): p(SUPPORTS) is p(Supported) in both 2-class
    schemes, as the verifier's status is ``Supported`` or not.

    - ``3class``: (SUPPORTS, REFUTES, NEI) = (e, c, n).
    - ``supports-refutes``: p(SUPPORTS) = e / (e + c); neutral mass is left out, because these
      data sets have no NOT ENOUGH INFO class (so SUPPORTS iff e > c). A model without a
      contradiction class (entailment / not_entailment, or one logit: its contradiction
      column is all zeros) gives p(SUPPORTS) = e, as :func:`verifier.nli.supports_decision`
      decides (e / (e + 0) would be 1 for every pair).
    - ``supported-not``: p(SUPPORTS) = e; neutral and contradiction both count as not supported.

    Example:
        >>> probabilities_for_scheme(np.array([[0.2, 0.2, 0.6]]), "supports-refutes").round(2)
        array([[0.25, 0.75]])
        >>> probabilities_for_scheme(np.array([[0.2, 0.8, 0.0]]), "supports-refutes").round(2)
        array([[0.2, 0.8]])
    """
    nli = np.asarray(nli, dtype=np.float64)
    if scheme == "3class":
        return nli[:, [0, 2, 1]]
    if scheme == "supports-refutes" and not statuses and not lacks_contradiction(nli):
        s = nli[:, 0] / np.clip(nli[:, 0] + nli[:, 2], 1e-12, None)
    else:
        s = nli[:, 0]
    return np.stack([s, 1.0 - s], axis=1)


#: File next to an NLI model holding its tuned p(SUPPORTS) cuts
#: (written by ``models/recipes/tune_thresholds.py``).
THRESHOLDS_FILE = "thresholds.json"
THRESHOLDS_FORMAT = "nli-verifier.thresholds.v1"


def _check_threshold(value: Any, name: str) -> float:
    if not is_real(value) or not 0.0 < float(value) < 1.0:
        raise ValueError(f"{name} must be a number strictly between 0 and 1, got {value!r}")
    return float(value)


def stored_threshold(model: str | None, scheme: Scheme, preset: str | None = None
                     ) -> tuple[float, str] | None:
    """The tuned p(SUPPORTS) cut stored with an NLI model, for a 2-class scheme.

    Reads :data:`THRESHOLDS_FILE` in the model's folder (the embedded model's when ``model``
    is ``None``; a hub id has none). The preset's own cut when the file has one for
    ``preset`` under the same scheme, else the scheme's.

    Returns:
        ``(cut, source)``, or ``None`` when there is no file or no cut for the scheme.

    Raises:
        ValueError: The file exists but is not a thresholds file, holds a bad cut, or a
            ``schemes`` / ``presets`` section (or an entry of one) that is not a JSON object;
            the message names the file and the key.
    """
    from verifier.embedded import embedded_model_dir

    folder = embedded_model_dir() if model is None else Path(model)
    path = folder / THRESHOLDS_FILE
    if scheme == "3class" or not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the thresholds file {str(path)!r}: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != THRESHOLDS_FORMAT:
        raise ValueError(f"{str(path)!r} is not a thresholds file (format "
                         f"{doc.get('format') if isinstance(doc, dict) else None!r})")
    presets, schemes = _json_object(doc, "presets", path), _json_object(doc, "schemes", path)
    own = _json_object(presets, preset, path, "presets.") if preset else None
    if own is not None and own.get("scheme") == scheme:
        return (_check_threshold(own.get("threshold"), f"{path}: presets.{preset}.threshold"),
                f"{THRESHOLDS_FILE}: preset {preset} (tuned on its train split)")
    entry = _json_object(schemes, scheme, path, "schemes.")
    if entry is None:
        return None
    cut = _check_threshold(entry.get("threshold"), f"{path}: schemes.{scheme}.threshold")
    sets = entry.get("sets", [])
    if not isinstance(sets, list) or not all(isinstance(x, str) for x in sets):
        raise ValueError(f"{str(path)!r}: schemes.{scheme}.sets must be a list of preset "
                         f"names, got {_a_json_type(sets)} ({_short(sets)})")
    return (cut, f"{THRESHOLDS_FILE}: scheme {scheme} (tuned on train splits of "
                 f"{', '.join(sets)})")


def _json_object(doc: dict[str, Any] | None, key: str, path: Path, prefix: str = ""
                 ) -> dict[str, Any] | None:
    """``doc[key]``, which must be a JSON object when there; ``None`` when absent.

    Raises:
        ValueError: ``doc[key]`` is not an object; the message names the file and the key
            (``prefix + key``).
    """
    if doc is None or key not in doc:
        return None
    value = doc[key]
    if not isinstance(value, dict):
        raise ValueError(f"{str(path)!r}: {prefix}{key} must be a JSON object, got "
                         f"{_a_json_type(value)} ({_short(value)})")
    return value


def decide(probs: np.ndarray, scheme: Scheme, threshold: float | None = None) -> list[str]:
    """Predicted classes of :func:`probabilities_for_scheme` rows.

    3-class: the most probable class; with a ``threshold`` (the verifier's cut,
    ``mode="ensemble"``), SUPPORTS iff p(SUPPORTS) reaches it, else the more probable of
    REFUTES and NOT ENOUGH INFO (a tie: NOT ENOUGH INFO), as
    :meth:`~verifier.verify.Verifier.decide` decides a status. 2-class: SUPPORTS iff
    p(SUPPORTS) >= ``threshold`` (``None``: 0.5, the most probable class).

    Example:
        >>> decide(np.array([[0.4, 0.6], [0.7, 0.3]]), "supported-not", 0.35)
        ['SUPPORTS', 'SUPPORTS']
        >>> decide(np.array([[0.42, 0.48, 0.1], [0.3, 0.35, 0.35]]), "3class", 0.42)
        ['SUPPORTS', 'NOT ENOUGH INFO']
    """
    classes = CLASSES[scheme]
    probs = np.asarray(probs, dtype=np.float64)
    if scheme == "3class":
        if threshold is not None:
            return [classes[0] if p[0] >= threshold else classes[1] if p[1] > p[2]
                    else classes[2] for p in probs]
        return [classes[int(k)] for k in probs.argmax(axis=1)]
    cut = 0.5 if threshold is None else threshold
    return [classes[0] if p >= cut else classes[1] for p in probs[:, 0]]


# ----------------------------------------------------------------------------- reading

@dataclass(frozen=True)
class RawRow:
    """One input row: the 1-based file line it starts on, raw text, and parsed record.

    ``item``: the row's 1-based number in a ``.json`` array (several items may start on one
    line: a compact array is one line); ``None`` in other formats.
    """

    line: int
    raw: str
    record: dict[str, Any] | None
    error: str | None = None
    source: str = ""
    item: int | None = None

    @property
    def where(self) -> str:
        """``FILE:LINE``, and the array item in a ``.json`` array."""
        place = f"{self.source}:{self.line}"
        return place if self.item is None else f"{place} (array item {self.item})"


def _detect_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".json":
        return "json"
    if suffix == ".csv":
        return "csv"
    if suffix in (".tsv", ".tab"):
        return "tsv"
    raise ValueError(
        f"cannot tell the format of input {str(path)!r}: use .jsonl, .json, .csv or .tsv"
    )


#: A UTF-16 surrogate code point: JSON may spell a lone one (``"\ud800"``), which is not text
#: (no tokenizer takes it and it cannot be written as UTF-8).
_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_unicode(value: str, what: str) -> None:
    """Raise ``ValueError`` naming ``what`` when ``value`` holds a lone surrogate."""
    m = _SURROGATE.search(value)
    if m is not None:
        raise ValueError(f"not valid Unicode: {what} holds a lone surrogate "
                         f"U+{ord(m.group()):04X} (a JSON escape such as \\ud800) at "
                         f"character {m.start()}")


#: Where a JSONL line ends (as ``open(newline="")`` iterates lines).
_LINE_END = re.compile(r"\r\n|\r|\n")


def _first_line_is_object(text: str) -> bool:
    """Whether the first non-blank line of ``text`` is a JSON object by itself."""
    for line in _LINE_END.split(text):
        if line.strip():
            try:
                return isinstance(json.loads(line), dict)
            except (ValueError, RecursionError):
                return False
    return False


#: JSON's whitespace (``json.decoder.WHITESPACE``).
_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def _after_space(text: str, pos: int) -> int:
    """The position of the first character at or after ``pos`` that is not JSON whitespace."""
    m = _JSON_SPACE.match(text, pos)
    return pos if m is None else m.end()


def _array_items(text: str) -> list[tuple[int, Any]] | None:
    """``(start line, item)`` of each item of ``text``, a JSON array; ``None`` if it is not one.

    The items are parsed as ``json.loads(text, object_pairs_hook=_Record)`` parses them,
    one at a time, so that each item's first line is known (counted as
    ``JSONDecodeError`` counts lines). ``None`` for any text ``json.loads`` would not read
    as one array: the caller parses it whole again for the error.
    """
    decoder = json.JSONDecoder(object_pairs_hook=_Record)
    pos = _after_space(text, 0)
    if not text.startswith("[", pos):
        return None
    pos = _after_space(text, pos + 1)
    items: list[tuple[int, Any]] = []
    line, counted = 1, 0
    while not text.startswith("]", pos):
        if items:  # a comma, then the next item
            if not text.startswith(",", pos):
                return None
            pos = _after_space(text, pos + 1)
        try:
            item, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):  # JSONDecodeError, digit limit, depth
            return None
        line += text.count("\n", counted, pos)
        counted = pos
        items.append((line, item))
        pos = _after_space(text, end)
    return items if _after_space(text, pos + 1) == len(text) else None


def _read_json_array(path: Path) -> Iterator[RawRow]:
    """Rows of a ``.json`` file (one array, parsed whole), or of JSON Lines saved as ``.json``.

    Each row's ``line`` is the file line its array item starts on, and ``item`` its number
    in the array (the rows of a compact array, all on one line, are told apart by it).
    A file that is not one JSON array but whose first non-blank line is a JSON object by
    itself is JSON Lines (:func:`_read_jsonl`: each line a row, a bad line an error row of
    its own). Any other file that cannot be parsed, or holds no array, gives one error row
    naming the line where parsing stopped (its rows cannot be told apart), and is logged as
    an error. A byte that is not UTF-8 inside a string, or a key given twice, is an error
    row of its own array item.
    """
    src = str(path)
    skipped = ("; the whole .json file was skipped (it is parsed as one array, or as JSON "
               "Lines when its first line is a JSON object)")
    text = path.read_bytes().decode("utf-8-sig", "surrogateescape")
    items = _array_items(text)
    try:
        doc = [item for _, item in items] if items is not None else json.loads(
            text, object_pairs_hook=_Record)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, digit limit, depth
        if _first_line_is_object(text):
            logger.info("input %s: not one JSON array; read as JSON Lines", src)
            yield from _read_jsonl(path)
            return
        lines = text.split("\n")  # as JSONDecodeError counts lines
        lineno = getattr(exc, "lineno", 1)
        raw = _printable(lines[lineno - 1].rstrip("\r")) if 0 < lineno <= len(lines) else ""
        logger.error("input %s: bad JSON: %s%s", src, _json_error(exc), skipped)
        yield RawRow(lineno, raw, None, f"bad JSON: {_json_error(exc)}{skipped}", src)
        return
    if not isinstance(doc, list) and _first_line_is_object(text):  # JSON Lines of one line
        logger.info("input %s: not one JSON array; read as JSON Lines", src)
        yield from _read_jsonl(path)
        return
    if not isinstance(doc, list):
        logger.error("input %s: a .json input must hold an array of objects, got a JSON %s%s",
                     src, _json_type(doc), skipped)
        yield RawRow(1, (text.splitlines() or [""])[0], None,
                     f"a .json input must hold an array of objects, got a JSON "
                     f"{_json_type(doc)}{skipped}", src)
        return
    assert items is not None  # a JSON array: _array_items read it
    undecodable = _ESCAPED_BYTE.search(text) is not None  # else a surrogate is an escape
    for i, (line, rec) in enumerate(items, start=1):
        raw = json.dumps(rec, ensure_ascii=False)
        if undecodable and (bad := _undecodable(raw, line, f"array item {i}")) is not None:
            yield RawRow(line, _printable(raw), None, bad, src, i)
        elif not isinstance(rec, _Record):  # every JSON object is read as a _Record
            yield RawRow(line, raw, None, "array item is not an object", src, i)
        elif rec.duplicates:
            yield RawRow(line, raw, None, _duplicate_keys(rec), src, i)
        else:
            yield RawRow(line, raw, dict(rec), None, src, i)


#: csv's field size limit while a CSV/TSV record is parsed: csv's default (131,072 characters)
#: split a longer field, one long document, into several made-up rows.
_CSV_FIELD_LIMIT = 2**31 - 1


def _next_record(reader: Iterator[list[str]]) -> list[str]:
    """``next(reader)`` with csv's field size limit raised for the call, then restored.

    The limit is process-global: it is raised per call, not per file, so that a reader left
    half-read (or interleaved with other code) never leaves it changed.
    """
    old = csv.field_size_limit(_CSV_FIELD_LIMIT)
    try:
        return next(reader)
    finally:
        csv.field_size_limit(old)


def _repeated_column(header: list[str]) -> str | None:
    """What is wrong with ``header`` when it repeats a column name (one would be lost), or None."""
    columns: dict[str, list[int]] = {}
    for k, name in enumerate(header, start=1):
        columns.setdefault(name, []).append(k)
    for name, where in columns.items():
        if len(where) > 1:
            listed = ", ".join(map(str, where[:-1])) + f" and {where[-1]}"
            return f"repeats the column name {name!r} (columns {listed}); rename one"
    return None


def _quotes_as_text(lines: list[str], values: list[str], parse_error: str | None,
                    header: list[str] | None) -> bool:
    """Whether a TSV record's quotes were text, not quoting: each of its lines is a record.

    So when csv could not parse it (a stray quote opened a field that closed badly), or when
    a quoted field ran over several lines yet gave the wrong number of fields, or each of
    those lines is a whole row by itself (the quote closed only on a later row).
    """
    if parse_error is not None:
        return True
    if len(lines) < 2 or header is None:
        return False
    return len(values) != len(header) or all(ln.count("\t") + 1 == len(header)
                                             for ln in lines)


def _check_not_utf16(path: Path) -> None:
    """Refuse an input saved as UTF-16 or UTF-32 (Excel's "Unicode Text") at once.

    Read as UTF-8, its every line would be an error row.
    """
    with path.open("rb") as fh:
        head = fh.read(4)
    if head.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        raise ValueError(f"input {str(path)!r} is UTF-16 or UTF-32 text (it starts with that "
                         "byte-order mark); convert it to UTF-8, e.g. iconv -f utf-16 -t utf-8")


def _lines_are_rows(lines: list[str], header: list[str] | None) -> bool:
    """Whether each line of a CSV record that ran over several lines is a row by itself.

    A row by itself: the header's number of fields, quotes read as text. Asked only of a
    record csv could not parse into the header's number of fields: then the record's opening
    quote was a stray one. (A record csv parses into the header's width is one row, as csv
    and pandas read it, even when its lines also count as rows: a multi-line field's lines
    may hold commas.)
    """
    if header is None:
        return False
    return all(line.count(",") + 1 == len(header) for line in lines)


def _read_delimited(path: Path, fmt: str) -> Iterator[RawRow]:
    """Rows of a CSV/TSV file, streamed; each row's ``line`` is the file line it starts on.

    Bytes are decoded with ``surrogateescape``, so one bad byte spoils its row only: the row
    becomes an error naming the byte and its line, and the rows after it are read as usual.
    A leading UTF-8 BOM is dropped. ``raw`` is the row's text as in the file. A field may be
    of any length (csv's default limit of 131,072 characters is lifted).

    The header is the first line that is not blank (blank lines before it are "empty line"
    error rows); a header that repeats a column name makes every row an error naming it.

    TSV quoting: a field quoted as Python's ``csv`` module and pandas write it (the whole field
    in double quotes, inner quotes doubled, tabs and newlines inside allowed) is unquoted. A
    record whose quotes are not so (``"Van Gogh" bundles``, an unclosed ``"``, a quoted field
    over several lines that each hold a whole row) is read as text instead, one record a
    line, quotes kept, as a plain tab-separated file means it. (A field that is a quoted text
    and nothing else, ``"Hello"``, is read as ``Hello``.)

    CSV quoting must be the ``csv`` module's: a record that cannot be parsed, or that has
    the wrong number of fields because a quoted field ran over lines that are each a whole
    row (a stray opening quote), gives one error row per line. A record that parses into
    the header's number of fields is one row, as csv and pandas read it (logged as a warning
    when its lines would each be a row too).
    """
    src = str(path)
    delim = "," if fmt == "csv" else "\t"
    consumed: list[str] = []  # the physical lines of the row being parsed

    with path.open("rb") as bfh:
        text_fh = io.TextIOWrapper(bfh, encoding="utf-8-sig", errors="surrogateescape",
                                   newline="")

        def physical_lines() -> Iterator[str]:
            for text_line in text_fh:
                consumed.append(text_line)
                yield text_line

        # strict, so that quotes the csv module would not have written are an error (TSV:
        # then read as text below) rather than a field silently glued to what follows
        reader = csv.reader(physical_lines(), delimiter=delim, quoting=csv.QUOTE_MINIMAL,
                            strict=True)
        header: list[str] | None = None
        header_error: str | None = None

        def records() -> Iterator[tuple[int, str, list[str], str | None]]:
            """``(first line, raw text, values, parse error)`` of each record, in order."""
            n_lines = 0
            while True:
                parse_error: str | None = None
                try:
                    values = _next_record(reader)
                except StopIteration:
                    return
                except csv.Error as exc:
                    parse_error = f"unreadable row: {exc}"
                    values = []
                start = n_lines + 1
                n_lines += len(consumed)
                lines = list(consumed)
                consumed.clear()
                if fmt == "tsv" and _quotes_as_text(lines, values, parse_error, header):
                    for k, line in enumerate(lines):
                        text = line.rstrip("\r\n")
                        yield start + k, text, text.split("\t") if text else [], None
                    continue
                wrong_width = header is not None and len(values) != len(header)
                if fmt == "csv" and len(lines) > 1 and (
                        parse_error is not None or (wrong_width
                                                    and _lines_are_rows(lines, header))):
                    # a stray quote joined lines into one record: the lines with a quote
                    # are errors, and each line without one is read as the row it is (all
                    # were errors: a quote never closed cost every row after it)
                    why = parse_error or "a quoted field ran over lines that are each a row"
                    why += (f" (a quote opened on line {start} ran to line "
                            f"{start + len(lines) - 1}: a stray quote?)")
                    logger.warning("input %s: line %d opens a quote that runs to line %d (a "
                                   "stray quote?): the lines with a quote are error records, "
                                   "the others are read one by one", src, start,
                                   start + len(lines) - 1)
                    for k, line in enumerate(lines):
                        text = line.rstrip("\r\n")
                        if '"' in text:
                            yield start + k, text, [], why
                        else:
                            yield start + k, text, next(csv.reader([text], delimiter=delim),
                                                        []), None
                    continue
                if fmt == "csv" and len(lines) > 1 and _lines_are_rows(lines, header):
                    logger.warning("input %s: lines %d-%d are read as one row (a quoted field "
                                   "over several lines, as csv and pandas read it); each "
                                   "line also has the header's number of commas: if a quote "
                                   "is stray, mend it", src, start, start + len(lines) - 1)
                yield start, "".join(lines).rstrip("\r\n"), values, parse_error

        for start, raw, values, parse_error in records():
            bad = _undecodable(raw, start)
            if header is None and header_error is None:
                if parse_error is not None:
                    header_error = f"the header (line {start}) is unreadable: {parse_error}"
                    logger.error("input %s: %s", src, header_error)
                    yield RawRow(start, _printable(raw), None, header_error, src)
                    continue
                if not raw.strip():  # a blank line before the header: not the header
                    yield RawRow(start, raw, None, "empty line (before the header)", src)
                    continue
                if bad is not None:
                    logger.warning("input %s: header %s", src, bad)
                header = [_printable(v) for v in values]
                repeated = _repeated_column(header)
                if repeated is not None:
                    header_error = f"the header (line {start}) {repeated}"
                    logger.error("input %s: %s", src, header_error)
                    yield RawRow(start, _printable(raw), None, header_error, src)
                continue
            error = parse_error or bad or header_error
            if error is None and not values and not raw.strip():
                error = "empty line"
            if error is None and len(values) != len(header or ()):
                error = f"row has {len(values)} fields, header has {len(header or ())}"
            if error is not None:  # (a missing header is header_error)
                yield RawRow(start, _printable(raw), None, error, src)
                continue
            assert header is not None
            yield RawRow(start, raw, dict(zip(header, values, strict=True)), None, src)


def read_rows(path: Path) -> Iterator[RawRow]:
    r"""Stream the rows of a JSONL, JSON (array) or CSV/TSV file; never drops a line.

    JSONL and CSV/TSV are streamed (memory flat in the number of rows) and decoded line by line:
    undecodable bytes, bad JSON or a bad CSV row give a row with ``error`` set (and its true
    line number), and the rows after it are read as usual. A JSONL line ends at ``\n``,
    ``\r\n`` or a lone ``\r``. A ``.json`` file holds one array and is parsed whole, or
    is JSON Lines (read as a ``.jsonl`` file) when it is not one array and its first
    non-blank line is a JSON object; any other that cannot be parsed gives one error row. A
    leading UTF-8 BOM (Excel's default) is dropped.
    """
    fmt = _detect_format(path)
    if fmt == "json":
        yield from _read_json_array(path)
        return
    if fmt in ("csv", "tsv"):
        yield from _read_delimited(path, fmt)
        return
    yield from _read_jsonl(path)


def _read_jsonl(path: Path) -> Iterator[RawRow]:
    """Rows of a JSON Lines file, streamed: each line a row, or an error row naming why."""
    src = str(path)
    # lines end at \n, \r\n or \r (a file with old Mac line endings is not one long line);
    # an undecodable byte is kept (surrogateescape) and spoils its line only
    with path.open(encoding="utf-8-sig", errors="surrogateescape", newline="") as fh:
        for i, line in enumerate(fh, start=1):
            text = line.rstrip("\r\n")
            bad = _undecodable(text, i)
            if bad is not None:
                yield RawRow(i, _printable(text), None, bad, src)
                continue
            if not text.strip():
                yield RawRow(i, text, None, "empty line", src)
                continue
            try:
                rec = json.loads(text, object_pairs_hook=_Record)
            except (ValueError, RecursionError) as exc:  # JSONDecodeError, digit limit, depth
                yield RawRow(i, text, None, f"bad JSON: {_json_error(exc)}", src)
                continue
            if not isinstance(rec, _Record):  # every JSON object is read as a _Record
                yield RawRow(i, text, None,
                             f"a JSON line must be an object, got {_a_json_type(rec)}", src)
                continue
            if rec.duplicates:
                yield RawRow(i, text, None, _duplicate_keys(rec), src)
                continue
            yield RawRow(i, text, dict(rec), None, src)


class _Record(dict):
    """A JSON object that remembers the keys it was given more than once.

    ``json.loads`` keeps the last value of a repeated key and drops the others silently.
    """

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.duplicates: list[str] = [] if len(self) == len(pairs) else sorted(
            k for k, n in Counter(k for k, _ in pairs).items() if n > 1)


def _duplicate_keys(rec: _Record) -> str:
    keys = ", ".join(repr(k) for k in rec.duplicates)
    return f"key {keys} given more than once (one value would be lost)"


def _json_error(exc: Exception) -> str:
    """What ``json.loads`` found wrong (a nesting too deep for Python's parser included)."""
    if isinstance(exc, RecursionError):
        return "nested too deeply to parse"
    return str(exc)


_JSON_TYPES: dict[type, str] = {str: "string", bool: "boolean", int: "number", float: "number",
                                list: "array", dict: "object", type(None): "null"}


def _json_type(value: Any) -> str:
    return "object" if isinstance(value, dict) else _JSON_TYPES.get(type(value),
                                                                     type(value).__name__)


def _a_json_type(value: Any) -> str:
    """``"a number"``, ``"an object"``...: the JSON type of ``value`` with its article."""
    name = _json_type(value)
    return f"{indefinite_article(name)} {name}"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _has_text(text: str) -> bool:
    """Whether ``text`` holds a visible character.

    Spaces, control and zero-width characters (NUL, U+200B) are not, nor are combining marks
    alone or U+FFFD, what a decoding error leaves (:func:`verifier.text.is_blank`, as the
    verifier reads them: such a claim stopped a ``--mode ensemble`` run).
    """
    return any(ch.isprintable() and not ch.isspace() for ch in text) and not is_blank(text)


def record_id(rec: dict[str, Any], fields: FieldMap, *, required: bool = False
              ) -> str | None:
    """The id of a record: its ``fields.id`` field as a string.

    ``None`` when ``fields.id`` is unset, or the field is absent or null and not
    ``required`` (the caller's default id, ``FILE:LINE``).

    Raises:
        ValueError: The id is empty (or blank), not a string or a number, holds a lone
            surrogate, or is absent or null while ``required``; the message names the field.
    """
    name = fields.id
    if not name:
        return None
    value = rec.get(name)
    if value is None:
        if required:
            raise ValueError(f"missing id field {name!r} (--id-field, FieldMap.id): every row "
                             f"needs an id" + (" (it is null)" if name in rec else ""))
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"id field {name!r} must be a string or a number, got "
                         f"{_a_json_type(value)} ({_short(value)})")
    rid = str(value)
    if not _has_text(rid):
        raise ValueError(f"empty id in field {name!r}" + (f" ({_short(rid)})" if rid else ""))
    _check_unicode(rid, f"id field {name!r}")
    return rid


def extract(rec: dict[str, Any], fields: FieldMap) -> tuple[str, str, Any]:
    """Return ``(claim, evidence, raw_label)`` of a record; ``ValueError`` if unusable.

    The id is not read here (:func:`record_id`, through the run's ``_Ids``). A claim or
    evidence holding a lone surrogate (valid JSON, but not text) is unusable.
    """
    if fields.claim not in rec:
        raise ValueError(f"missing claim field {fields.claim!r}")
    claim = rec[fields.claim]
    if not isinstance(claim, str):
        raise ValueError(f"claim field {fields.claim!r} must be a string, got "
                         f"{_a_json_type(claim)} ({_short(claim)})")
    if not _has_text(claim):
        raise ValueError(f"empty claim in field {fields.claim!r}"  # invisible characters shown
                         + (f" ({_short(claim)})" if claim.strip() else ""))
    _check_unicode(claim, f"claim field {fields.claim!r}")
    parts: list[str] = []
    for name in fields.evidence.split(","):
        name = name.strip()
        if name not in rec:
            raise ValueError(f"missing evidence field {name!r}")
        val = rec[name]
        if isinstance(val, str):
            _check_unicode(val, f"evidence field {name!r}")
            parts.append(val)
        elif isinstance(val, list) and all(isinstance(v, str) for v in val):
            for k, v in enumerate(val):
                _check_unicode(v, f"evidence field {name!r} (item {k})")
            parts.extend(val)
        else:
            raise ValueError(f"evidence field {name!r} must be a string or a list of strings, "
                             f"got {_a_json_type(val)} ({_short(val)})")
    evidence = " ".join(p.strip() for p in parts if p.strip())
    if not _has_text(evidence):
        raise ValueError(f"empty evidence in field {fields.evidence!r}")
    if fields.label not in rec:
        raise ValueError(f"missing label field {fields.label!r}")
    return claim, evidence, rec[fields.label]


# ----------------------------------------------------------------------------- metrics

def compute_metrics(gold: Sequence[str], pred: Sequence[str], probs: np.ndarray,
                    classes: Sequence[str], *, n_errors: int = 0, n_bins: int = 10
                    ) -> dict[str, Any]:
    """Accuracy, macro-F1, balanced accuracy, per-class P/R/F1, confusion, AUROC, ECE.

    Args:
        gold: Gold class names.
        pred: Predicted class names.
        probs: ``(n, len(classes))`` predicted probabilities, columns in ``classes`` order.
        classes: Class names.
        n_errors: Rows that could not be used (reported as ``n_errors``).
        n_bins: Bins of the expected calibration error (equal width, on the top probability).
    """
    from sklearn.metrics import (
        balanced_accuracy_score,
        confusion_matrix,
        f1_score,
        precision_recall_fscore_support,
        roc_auc_score,
    )

    classes = list(classes)
    out: dict[str, Any] = {"n": len(gold), "n_errors": n_errors, "classes": classes}
    if not gold:
        return out
    g, p = np.asarray(gold), np.asarray(pred)
    present = [c for c in classes if c in set(gold) | set(pred)]
    out["accuracy"] = round(float((g == p).mean()), 6)
    out["macro_f1"] = round(float(f1_score(g, p, labels=present, average="macro",
                                           zero_division=0)), 6)
    with warnings.catch_warnings():  # a class absent from gold or predictions is expected
        # here ("y_pred contains classes not in y_true"): the mean recall is over the gold
        # classes present, and the matrix has every class
        warnings.simplefilter("ignore", UserWarning)
        out["balanced_accuracy"] = round(float(balanced_accuracy_score(g, p)), 6)
        matrix = confusion_matrix(g, p, labels=classes).tolist()
    prec, rec, f1, sup = precision_recall_fscore_support(g, p, labels=classes, zero_division=0)
    out["per_class"] = {
        c: {"precision": round(float(prec[i]), 6), "recall": round(float(rec[i]), 6),
            "f1": round(float(f1[i]), 6), "support": int(sup[i])}
        for i, c in enumerate(classes)
    }
    out["confusion_matrix"] = {"labels": classes, "matrix": matrix}
    if len(classes) == 2 and len(set(gold)) == 2:
        out["auroc"] = round(float(roc_auc_score(g == classes[0], probs[:, 0])), 6)
    # confidence = the probability of the predicted class (the top one, unless a 2-class
    # threshold other than 0.5 decided)
    col = {c: i for i, c in enumerate(classes)}
    idx = np.array([col.get(str(x), -1) for x in p])
    conf = np.where(idx >= 0, probs[np.arange(len(p)), np.maximum(idx, 0)], probs.max(axis=1))
    correct = (g == p).astype(float)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    ece, bins = 0.0, []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        m = (conf > lo) & (conf <= hi) if lo > 0 else (conf >= lo) & (conf <= hi)
        if m.any():
            ece += m.mean() * abs(correct[m].mean() - conf[m].mean())
            bins.append({"lo": round(float(lo), 3), "hi": round(float(hi), 3),
                         "count": int(m.sum()), "accuracy": round(float(correct[m].mean()), 6),
                         "confidence": round(float(conf[m].mean()), 6)})
    out["ece"] = round(float(ece), 6)
    out["reliability"] = bins
    return out


# ----------------------------------------------------------------------------- running

@dataclass
class EvalConfig:
    """Arguments of one evaluation run (everything that decides its outputs).

    Attributes:
        inputs: Input files (JSONL, JSON or CSV/TSV); one path is taken as a list of one.
        output_dir: Folder for the outputs.
        fields: Field mapping.
        scheme: Label scheme (see :data:`SCHEMES`).
        mode: ``"nli"`` (the NLI detector alone) or ``"ensemble"`` (the full verifier).
        model: NLI model id or path (``None``: the embedded model).
        device: Torch device (``None``: auto).
        batch_size: Detector batch size, or ``"auto"`` (largest that fits; halved on OOM).
        max_length: Model window in tokens.
        dtype: ``None``/``"auto"``, ``"float32"``, ``"bfloat16"`` or ``"float16"``.
        hypothesis_sentences: Score a claim of several sentences sentence by sentence
            (:class:`~verifier.nli.NLIDetector`'s parameter); ``None``: as the model's
            ``config.json`` recommends (the embedded model: on).
        chunk_rows: Rows committed at a time (also the resume granularity).
        engine: ``"local"`` or ``"ray"``.
        ray_actors: Number of Ray actors (one model each).
        ray_gpus_per_actor: GPUs per Ray actor.
        limit: Stop after this many input rows (0 = all).
        plots: Write the PNG figures (needs matplotlib).
        threshold: The p(SUPPORTS) cut of the 2-class schemes (in (0, 1)); ``None``: the NLI
            model's tuned cut (:func:`stored_threshold`; ``mode="nli"``), the shipped
            meta-classifier's p(Supported) cut (``mode="ensemble"``, every scheme: the
            verifier's statuses), else 0.5. Not allowed with the 3-class scheme.
        preset: The shared data set the inputs come from (``verifier eval --preset``): picks
            that preset's own tuned cut when the model stores one.
        require_id: The id field was named (``--id-field``, a preset): every row must have
            it (the first row's lack of it stops the run, :func:`check_id_field`; a later
            row without it is an error record). A field other than the default ``"id"`` is
            always required; rows may lack the default, and get ``FILE:LINE`` ids (the
            file's base name, or its path as given when two inputs share a base name). An
            empty id, or one an earlier row has, is an error record either way.
        from_loader: The inputs are files :func:`write_preset_split` wrote (``verifier eval
            --preset`` for a preset with train rows, or read through its loader): each row
            keeps the data file and line the preset's loader read it from, and a data row
            the loader could not read or map is an error record naming them.
        label_map: What raw labels mean: raw label (compared as a string, trimmed, any case;
            a number as its integer, ``1.0`` as ``1``: :func:`label_key`) -> a label
            :func:`verifier.datasets.normalise_label` knows (``"entailment"``,
            ``"SUPPORTS"``...), e.g. ``{"0": "entailment", "1": "neutral", "2":
            "contradiction"}`` for MNLI-numbered data. Class numbers (``0``, ``1``, ``"2"``)
            are read only through it (:func:`gold_for_scheme`); ``None``: no map.
    """

    inputs: list[Path]
    output_dir: Path
    fields: FieldMap = field(default_factory=FieldMap)
    scheme: Scheme = "3class"
    mode: Literal["nli", "ensemble"] = "nli"
    model: str | None = None
    device: str | None = None
    batch_size: int | str = "auto"
    max_length: int = 512
    dtype: str | None = None
    hypothesis_sentences: bool | None = None
    chunk_rows: int = 1024
    engine: Literal["local", "ray"] = "local"
    ray_actors: int = 2
    ray_gpus_per_actor: float = 0.0
    limit: int = 0
    plots: bool = True
    threshold: float | None = None
    preset: str | None = None
    require_id: bool = False
    from_loader: bool = False
    label_map: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.inputs, (str, os.PathLike)):  # one file: not its characters
            self.inputs = [self.inputs]  # type: ignore[list-item]
        self.inputs = [Path(p) for p in self.inputs]
        try:
            self.output_dir = check_output_dir(self.output_dir)
        except ValueError as exc:
            raise ValueError(f"output_dir (--output-dir) {exc}") from None
        if not self.inputs:
            raise ValueError("inputs must name at least one file, got none")
        seen: dict[Path, Path] = {}
        written = {(self.output_dir / name).resolve() for name in OUTPUT_FILES}
        for p in self.inputs:
            if p.is_dir():
                raise ValueError(f"inputs name a folder, not a file: {str(p)!r}")
            if not p.exists():
                raise FileNotFoundError(f"input file not found: {str(p)!r}")
            if p.resolve() in written:  # it would be truncated before it is read
                raise ValueError(f"input {str(p)!r} is one of the files the run writes in "
                                 f"output_dir {str(self.output_dir)!r}: move it or choose "
                                 "another output folder")
            if not p.is_file():
                raise ValueError(f"input {str(p)!r} is not a regular file (a pipe or a "
                                 "device): save it to a file first; the run reads its inputs "
                                 "more than once")
            _detect_format(p)
            _check_not_utf16(p)
            first = seen.setdefault(p.resolve(), p)
            if first is not p:  # its rows would be scored and counted twice
                raise ValueError(f"inputs name one file twice: {str(first)!r} and {str(p)!r}")
        if any(not name.strip() for name in self.fields.evidence.split(",")):
            raise ValueError(f"fields.evidence (--evidence-field, FieldMap.evidence) names an "
                             f"empty field: {self.fields.evidence!r}; separate field names "
                             f"by single commas")
        if self.scheme not in SCHEMES:
            raise ValueError(f"scheme must be one of {SCHEMES}, got {self.scheme!r}")
        if self.mode not in ("nli", "ensemble"):
            raise ValueError(f"mode must be 'nli' or 'ensemble', got {self.mode!r}")
        if self.mode == "ensemble" and self.engine == "ray":
            raise ValueError("mode 'ensemble' runs on the local engine only, got engine 'ray'")
        if self.engine not in ("local", "ray"):
            raise ValueError(f"engine must be 'local' or 'ray', got {self.engine!r}")
        from verifier.nli import check_max_length

        check_max_length(self.max_length, "max_length (--max-length)")  # before any work
        if self.batch_size != "auto" and (not is_int(self.batch_size) or self.batch_size <= 0):
            raise ValueError(
                f"batch_size must be a positive int or 'auto', got {self.batch_size!r}"
            )
        if not is_int(self.chunk_rows) or self.chunk_rows <= 0:
            raise ValueError(f"chunk_rows must be an int > 0, got {self.chunk_rows!r}")
        if not is_int(self.limit) or self.limit < 0:
            raise ValueError(f"limit must be an int >= 0, got {self.limit!r}")
        self.chunk_rows, self.limit = int(self.chunk_rows), int(self.limit)  # numpy's: JSON
        if self.batch_size != "auto":
            self.batch_size = int(self.batch_size)
        if self.threshold is not None:
            self.threshold = _check_threshold(self.threshold, "threshold")
            if self.scheme == "3class":
                raise ValueError(f"threshold applies to the 2-class schemes, not scheme "
                                 f"'3class' (argmax); got threshold {self.threshold!r}")
        if self.hypothesis_sentences is not None and not isinstance(self.hypothesis_sentences,
                                                                    bool):
            raise TypeError(f"hypothesis_sentences must be None or a bool, got "
                            f"{self.hypothesis_sentences!r}")
        if self.preset is not None and self.preset not in PRESETS:
            raise ValueError(f"unknown preset {self.preset!r}; known: {sorted(PRESETS)}")
        if self.label_map is not None:
            self.label_map = check_label_map(self.label_map)

    def settings(self, **extra: Any) -> dict[str, Any]:
        """Everything that decides the outputs, plus each input's size and mtime (JSON types).

        ``extra``: values resolved at run time that decide the outputs too (the threshold).
        """
        d = {**asdict(self), **extra}
        for key in ("output_dir", "plots"):  # they do not decide the outputs
            d.pop(key)
        if d["label_map"] is None:  # the settings (and a run's fingerprint) of before it
            d.pop("label_map")
        d["inputs"] = [[str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns]
                       for p in self.inputs]
        out: dict[str, Any] = json.loads(json.dumps(d, sort_keys=True, default=str))
        return out

    def fingerprint(self, **extra: Any) -> str:
        """Hash of :meth:`settings`: a run resumes only into a folder of the same one."""
        return hashlib.sha256(json.dumps(self.settings(**extra), sort_keys=True)
                              .encode()).hexdigest()


def check_output_dir(value: str | os.PathLike[str]) -> Path:
    """``value`` as the folder a run writes into.

    Not blank (``Path("")`` would be the working folder) and not a file.

    Raises:
        ValueError: "must name a folder, got ..." (callers name the option).
    """
    if isinstance(value, str) and not value.strip():
        raise ValueError(f"must name a folder, got {value!r}")
    path = Path(value)
    blocked = file_on_path(path)
    if blocked == path:
        raise ValueError(f"must name a folder, got the file {str(value)!r}")
    if blocked is not None:  # "o/predictions.jsonl/x": [Errno 20] Not a directory
        raise ValueError(f"must name a folder, got {str(value)!r}, under the file "
                         f"{str(blocked)!r}")
    return path


def check_label_map(label_map: Any) -> dict[str, str]:
    """:attr:`EvalConfig.label_map` checked: raw labels (:func:`label_key`) -> canonical labels.

    Raises:
        ValueError: It is not a mapping of strings to labels :func:`normalise_label` knows
            (a class number is none), or is empty, or gives one raw label twice (in two
            cases); the message names it (``--label-map``, ``EvalConfig.label_map``) and
            the value.
    """
    what = "label_map (--label-map, EvalConfig.label_map)"
    if not isinstance(label_map, dict) or not label_map:
        raise ValueError(f"{what} must map raw labels to labels, got {_short(label_map)}")
    out: dict[str, str] = {}
    for raw, label in label_map.items():
        key = label_key(raw) if isinstance(raw, str) else None
        if not key or not isinstance(label, str):
            raise ValueError(f"{what} must map non-empty strings to label names, got "
                             f"{_short(raw)}: {_short(label)}")
        if key in out:
            raise ValueError(f"{what} gives the raw label {key!r} twice")
        try:
            out[key] = normalise_label(label)
        except ValueError as exc:
            raise ValueError(f"{what} maps {raw!r} to {label!r}, which is no label: {exc}"
                             ) from None
    return out


def _fsync_write(fh: io.BufferedWriter, lines: list[str]) -> None:
    if lines:  # a lone surrogate left in a JSON string is written as its JSON escape
        fh.write("".join(lines).encode("utf-8", "backslashreplace"))
    fh.flush()
    os.fsync(fh.fileno())


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all.

    A failed write keeps the file that was there and leaves no temporary file.
    """
    data = text.encode("utf-8")  # before the file: a text that cannot be written fails here
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _release_memory() -> None:
    """Give freed heap pages back to the OS (glibc), so memory stays flat over long runs."""
    import ctypes
    import sys

    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # not glibc: nothing to do
            pass


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class _LocalScorer:
    """Runs the NLI detector in-process; halves the batch on CUDA out-of-memory."""

    def __init__(self, cfg: EvalConfig) -> None:
        from verifier.nli import NLIDetector

        self.device = cfg.device
        bs = cfg.batch_size
        self.auto = bs == "auto"
        batch_size: dict[str, Any] = {} if self.auto else {"batch_size": bs}
        self.detector = NLIDetector(cfg.model, device=cfg.device, max_length=cfg.max_length,
                                    dtype=cfg.dtype,
                                    hypothesis_sentences=cfg.hypothesis_sentences,
                                    **batch_size)
        if self.auto:
            self.detector.batch_size = 512 if str(self._device()).startswith("cuda") else 64
        self.verifier = None
        if cfg.mode == "ensemble":
            from verifier.verify import Verifier

            self.verifier = Verifier(self.detector)

    def warm_up(self) -> None:
        """Load the model now, so that a load error is not taken for bad input rows."""
        self.detector.warm_up()

    def _device(self) -> str:
        from verifier.embedded import resolve_device

        return resolve_device(self.device)

    def __call__(self, pairs: list[tuple[str, str]]) -> np.ndarray | tuple:
        while True:
            try:
                if self.verifier is not None:
                    return self._ensemble(pairs)
                return self.detector.predict(pairs)
            except RuntimeError as exc:  # torch.cuda.OutOfMemoryError subclasses RuntimeError
                if "out of memory" not in str(exc).lower() or self.detector.batch_size <= 1:
                    raise
                import torch

                torch.cuda.empty_cache()
                self.detector.batch_size = max(1, self.detector.batch_size // 2)
                logger.warning("out of memory: batch size halved to %d", self.detector.batch_size)

    def _ensemble(self, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, list[dict]]:
        """Full verifier on pre-paired input, with each verdict's per-detector scores.

        Rows (e, n, c) are the (Supported, Insufficient_Info, Contradictory) probabilities.
        """
        assert self.verifier is not None
        verdicts = self.verifier.verify_pairs([h for _, h in pairs], [p for p, _ in pairs])
        rows = np.array([[v.probabilities["Supported"], v.probabilities["Insufficient_Info"],
                          v.probabilities["Contradictory"]] for v in verdicts])
        return rows, [dict(v.scores) for v in verdicts]


_INDEXED_ARGUMENT = re.compile(r"\b(pairs|claims|evidences)\[\d+\]")
_ARGUMENT_NAMES = {"pairs": "the pair", "claims": "the claim", "evidences": "the evidence"}


class UnscoredPairs(ValueError):  # noqa: N818 (a bad-input ValueError, named for what it holds)
    """Raised by a scorer that scored every pair it could, and says why the others failed.

    A scorer that isolates bad pairs itself (the Ray engine's actors do: calling it again on
    halves would start a new pipeline each time) raises this instead of a bare ``ValueError``.

    Args:
        probs: ``(n, 3)`` probabilities of every pair (any values where a pair failed).
        reasons: Pair index -> why that pair could not be scored, as its error record gives
            it (:func:`_score_isolating_bad_pairs` writes them so).
    """

    def __init__(self, probs: np.ndarray, reasons: dict[int, str]) -> None:
        first = min(reasons) if reasons else None
        super().__init__(f"{len(reasons)} pair(s) could not be scored"
                         + (f"; pairs[{first}]: {reasons[first]}" if first is not None else ""))
        self.probs = probs
        self.reasons = dict(reasons)


def _score(scorer: Any, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, list[dict] | None]:
    """``scorer(pairs)`` as ``(n, 3)`` float64 probabilities and optional per-detector scores."""
    result = scorer(pairs)
    extra: list[dict] | None = None
    if isinstance(result, tuple):  # (probabilities, per-detector scores)
        result, extra = result
    try:
        probs = np.asarray(result, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ConfigurationError(f"the scorer must return an (n, 3) array of probabilities, "
                                 f"got {type(result).__name__}: {exc}") from exc
    if probs.shape != (len(pairs), 3):  # a bug in the scorer, not a bad pair: it stops the run
        raise ConfigurationError(f"the scorer must return an (n, 3) array of probabilities "
                                 f"for n = {len(pairs)} pairs, got shape {probs.shape}")
    if extra is not None and len(extra) != len(pairs):
        raise ConfigurationError(f"the scorer returned {len(extra)} per-detector score dicts "
                                 f"for {len(pairs)} pairs")
    return probs, extra


#: How far a scorer's row may sum from 1 (float32 rounding, averaged sentence rows).
_SUM_TOLERANCE = 1e-3


def _bad_probability_rows(probs: np.ndarray) -> dict[int, str]:
    """Row index -> why that row of ``probs`` is not a distribution, as its error record says.

    Each row must hold finite values in [0, 1] that sum to 1 (within :data:`_SUM_TOLERANCE`).
    Such a row is a bad pair's error record, not a reason to score the others again.
    """
    finite = np.asarray(np.isfinite(probs).all(axis=1))
    in_range = np.asarray(((probs >= 0.0) & (probs <= 1.0)).all(axis=1))
    sums = probs.sum(axis=1)
    bad = {}
    for k in np.flatnonzero(~(finite & in_range & (np.abs(sums - 1.0) <= _SUM_TOLERANCE))):
        row = [round(float(x), 6) if math.isfinite(x) else float(x) for x in probs[k]]
        why = ("a value that is not finite" if not finite[k]
               else "a value outside [0, 1]" if not in_range[k]
               else f"a sum of {float(sums[k]):.6g}, not 1")
        bad[int(k)] = (f"cannot score: the scorer returned the probabilities {row} for the "
                       f"pair: {why}")
    return bad


def _score_isolating_bad_pairs(scorer: Any, pairs: list[tuple[str, str]]
                               ) -> list[tuple[np.ndarray, dict | None] | str]:
    """Score ``pairs``; a pair the scorer rejects as bad input gets the reason instead.

    When a call raises ``ValueError`` (bad input: a claim too long for the model window, say)
    or ``ArithmeticError`` (a value in the text that overflows a computation),
    the pairs are split in halves and scored again until each rejected pair is alone, so the
    other pairs are still scored (with k bad pairs, about ``2 k log2(n)`` extra calls); a
    scorer that isolates them itself raises :class:`UnscoredPairs`. A returned row that is
    not a distribution (:func:`_bad_probability_rows`) is that pair's reason, with no call
    again. Other exceptions, and the toolkit's own configuration errors
    (:class:`VerifierError`), propagate.

    Returns:
        One entry per pair, in order: ``(nli_row, scores_or_None)``, or the reason (``str``).
    """
    from verifier.errors import VerifierError

    try:
        nli, extra = _score(scorer, pairs)
        reasons: dict[int, str] = {}
    except UnscoredPairs as exc:  # the scorer isolated its bad pairs itself (the Ray actors)
        nli, extra, reasons = np.asarray(exc.probs, dtype=np.float64), None, exc.reasons
        if nli.shape != (len(pairs), 3):
            raise ConfigurationError(f"the scorer's UnscoredPairs must hold (n, 3) "
                                     f"probabilities for n = {len(pairs)} pairs, got shape "
                                     f"{nli.shape}") from exc
    except (ValueError, ArithmeticError) as exc:  # arithmetic: a value in the row ("1e400")
        if isinstance(exc, VerifierError):
            raise
        if len(pairs) == 1:
            named = _INDEXED_ARGUMENT.sub(lambda m: _ARGUMENT_NAMES[m.group(1)], str(exc))
            return [f"cannot score: {named}"]
        mid = len(pairs) // 2
        return (_score_isolating_bad_pairs(scorer, pairs[:mid])
                + _score_isolating_bad_pairs(scorer, pairs[mid:]))
    reasons = {**_bad_probability_rows(nli), **reasons}  # a failed pair: the scorer's reason
    return [reasons[k] if k in reasons else (nli[k], None if extra is None else extra[k])
            for k in range(len(pairs))]


def _chunks(rows: Iterator[RawRow], size: int) -> Iterator[list[RawRow]]:
    buf: list[RawRow] = []
    for r in rows:
        buf.append(r)
        if len(buf) == size:
            yield buf
            buf = []
    if buf:
        yield buf


def _all_rows(cfg: EvalConfig) -> Generator[RawRow, None, None]:
    n = 0
    for p in cfg.inputs:
        for r in (_loader_rows(p) if cfg.from_loader else read_rows(p)):
            if cfg.limit and n >= cfg.limit:
                return
            n += 1
            yield r


def _loader_rows(path: Path) -> Iterator[RawRow]:
    """Rows of a file :func:`write_preset_split` wrote, each where the loader read it.

    A line holding a data row the loader could not read or map is that row's error, with
    its data file and line. A line that is not one the function writes is read as it is.
    """
    for r in read_rows(path):
        rec = r.record
        if rec is None or not isinstance(rec.get("source"), str) \
                or not isinstance(rec.get("line"), int):
            yield r
        elif "error" in rec:
            yield RawRow(rec["line"], str(rec.get("raw", "")), None, str(rec["error"]),
                         rec["source"])
        else:
            yield RawRow(rec["line"], r.raw, rec, None, rec["source"])


class _Ids:
    """The ids of a run's rows, given out in input order: each row's, or why it has none.

    A row's id is its id field (:func:`record_id`; required as :func:`_id_required` says),
    else ``FILE:LINE`` (``FILE:ITEM`` in a ``.json`` array, whose items may share a line:
    :attr:`RawRow.item`), with the file's base name unless two inputs share it (then the
    path as given). An id an earlier row has is refused, naming where that row is. Memory
    grows with the number of rows (one entry per id).
    """

    def __init__(self, cfg: EvalConfig) -> None:
        self.fields = cfg.fields
        self.required = _id_required(cfg)
        names = [p.name for p in cfg.inputs]
        self.shared = {str(p) for p in cfg.inputs if names.count(p.name) > 1}
        self.first: dict[str, str] = {}  # id -> where its first row is (RawRow.where)

    def of(self, row: RawRow) -> str:
        """The id of ``row`` (its ``record`` is set), registered as taken.

        Raises:
            ValueError: The row has no usable id, or an earlier row has it.
        """
        assert row.record is not None
        rid = record_id(row.record, self.fields, required=self.required)
        if rid is None:
            name = row.source if row.source in self.shared else Path(row.source).name
            rid = f"{name}:{row.line if row.item is None else row.item}"
        first = self.first.get(rid)
        if first is not None:  # each row is given an id once a run
            field_name = f"id field {self.fields.id!r}" if self.fields.id else "no id field"
            raise ValueError(f"duplicate id {_short(rid)} ({field_name}): the row on "
                             f"{first} has it already")
        self.first[rid] = row.where
        return rid


def _id_required(cfg: EvalConfig) -> bool:
    """Whether every row must have the id field: named (``require_id``) or not ``"id"``."""
    return bool(cfg.fields.id) and (cfg.require_id or cfg.fields.id != FieldMap().id)


def resolve_threshold(cfg: EvalConfig) -> tuple[float | None, str]:
    """The run's p(SUPPORTS) cut and where it comes from.

    ``mode="ensemble"``: ``cfg.threshold`` when given (2-class), else the shipped
    meta-classifier's p(Supported) cut, in every scheme: the predictions are the statuses
    :class:`~verifier.verify.Verifier` gives (balanced strictness). ``mode="nli"``, 3-class:
    ``None`` (argmax). Else ``cfg.threshold`` when given; the cut stored with the model
    (:func:`stored_threshold`: the preset's own, else the scheme's); else 0.5.
    """
    if cfg.threshold is not None:
        return cfg.threshold, "argument"
    if cfg.mode == "ensemble":  # the cut the scorer's Verifier decides by
        from verifier.embedded import embedded_meta_path
        from verifier.meta import StatusClassifier
        from verifier.verify import support_cut

        cut = support_cut(StatusClassifier.load(embedded_meta_path("ensemble")), "balanced")
        if cut is not None:
            return cut, "the meta-classifier's p(Supported) cut (models/meta/ensemble.json)"
    if cfg.scheme == "3class":
        return None, "argmax (3-class)"
    if cfg.mode == "nli":
        found = stored_threshold(cfg.model, cfg.scheme, cfg.preset)
        if found is not None:
            return found
    return 0.5, "default 0.5"


def run_eval(cfg: EvalConfig, *, scorer: Any = None, show_progress_bar: bool | None = None
             ) -> dict[str, Any]:
    """Run (or resume) an evaluation and return the metrics dict (also in ``metrics.json``).

    A row that cannot be read, mapped or scored (a claim too long for the model window, say)
    becomes an error record; the other rows are still scored. So does a row without a
    required id, with an empty id, or with an id an earlier row has (:class:`_Ids`).

    Args:
        cfg: The run's configuration.
        scorer: Callable ``pairs -> (n, 3)`` NLI probabilities; default: the NLI detector
            (local engine) or a Ray Data pipeline (``engine="ray"``). Each row must hold
            finite values in [0, 1] summing to 1: a pair whose row does not is an error
            record; a result of another shape raises :class:`ConfigurationError`.
        show_progress_bar: ``None`` shows a tqdm bar only on a terminal.

    Only one run at a time may use ``output_dir``: the run holds an exclusive lock on its
    :data:`LOCK_FILE` (POSIX ``flock``; where there is none, a warning says so).

    Raises:
        ValueError: No row at all could be used, or the inputs hold no row (raised after
            every output is written): the message gives the first error and, for a missing
            field, the fields the rows have. Also: an id field named explicitly (not the
            default ``"id"``) that the first row lacks; an ``output_dir`` whose state and
            outputs disagree (an output deleted or shortened since), or written by another
            state version; a malformed thresholds file (:func:`stored_threshold`).
        ConfigurationError: The scorer's result is not ``(n, 3)``.
        BlockingIOError: Another run holds ``output_dir``.
    """
    check_id_field(cfg)  # before anything is written
    out = cfg.output_dir
    out.mkdir(parents=True, exist_ok=True)
    with _output_dir_lock(out):
        return _run_eval(cfg, scorer, show_progress_bar)


#: The file in ``output_dir`` that :func:`run_eval` holds an exclusive lock on while it runs.
LOCK_FILE = ".lock"
#: What a run writes in its output folder (no input may be one of them).
OUTPUT_FILES = ("predictions.jsonl", "errors.jsonl", "state.json", "metrics.json", "run.json",
                LOCK_FILE, "confusion_matrix.png", "reliability.png")


@contextmanager
def _output_dir_lock(out: Path) -> Iterator[None]:
    """Hold an exclusive, non-blocking ``flock`` on ``out / LOCK_FILE``.

    Raises:
        BlockingIOError: Another process (or another run in this one) holds it.
    """
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        logger.warning("cannot lock output_dir %r (no fcntl here): do not start a second run "
                       "into it before this one ends, or their rows will mix", str(out))
        yield
        return
    with (out / LOCK_FILE).open("a") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BlockingIOError(
                f"output_dir {str(out)!r} is in use by another run (it holds the lock on "
                f"{str(out / LOCK_FILE)!r}); wait for it to end, or use another output_dir"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def check_id_field(cfg: EvalConfig) -> None:
    """Refuse a required id field that the first row read lacks.

    Every row would be an error record. The field is required when ``cfg.require_id`` or
    when it is not the default ``"id"``; a later row that lacks it is an error record.

    Raises:
        ValueError: The first row that parses lacks the field; the message names its fields.
    """
    name = cfg.fields.id
    if not name or not _id_required(cfg):
        return
    first = _first_record(cfg)
    if first is not None and first.record is not None and name not in first.record:
        names = ", ".join(repr(k) for k in first.record)
        raise ValueError(f"id field {name!r} (--id-field, FieldMap.id) is not in the first row, "
                         f"{first.where}, whose fields are {names}: name one of "
                         f"them, or give --id-field none to number rows FILE:LINE")


def _first_record(cfg: EvalConfig) -> RawRow | None:
    """The first input row that parses (its ``record`` is set), or ``None``."""
    rows = _all_rows(cfg)
    try:
        return next((r for r in rows if r.record is not None), None)
    finally:
        rows.close()


def _run_eval(cfg: EvalConfig, scorer: Any, show_progress_bar: bool | None
              ) -> dict[str, Any]:
    """:func:`run_eval` once ``output_dir`` is locked."""
    out = cfg.output_dir
    pred_path, err_path, state_path = (out / "predictions.jsonl", out / "errors.jsonl",
                                       out / "state.json")
    threshold, threshold_source = resolve_threshold(cfg)
    settings = cfg.settings(resolved_threshold=threshold)
    fp = cfg.fingerprint(resolved_threshold=threshold)
    state: dict[str, Any] = {
        "version": STATE_VERSION, "fingerprint": fp, "settings": settings, "rows_done": 0,
        "pred_bytes": 0, "err_bytes": 0, "seconds": 0.0, "pairs_scored": 0, "done": False}
    if state_path.exists():
        try:
            old = json.loads(state_path.read_text(encoding="utf-8"))
            if not isinstance(old, dict):
                raise ValueError(f"a JSON object was expected, got {_a_json_type(old)}")
        except (ValueError, RecursionError) as exc:
            raise ValueError(
                f"{str(state_path)!r} cannot be read ({_json_error(exc)}): the folder does not "
                "hold a run this version can resume; use another output_dir or delete it"
            ) from exc
        if old.get("version") != STATE_VERSION:
            raise ValueError(
                f"output_dir {str(out)!r} holds a run of state version {old.get('version')!r}, "
                f"this version writes {STATE_VERSION}: it cannot be resumed; use another "
                f"output_dir or delete it")
        if old.get("fingerprint") != fp:
            before = old.get("settings")
            changed = ([f"{k}: {before.get(k)!r} then, {settings.get(k)!r} now"
                        for k in sorted(set(before) | set(settings))
                        if before.get(k) != settings.get(k)]
                       if isinstance(before, dict) else [])
            raise ValueError(
                f"output_dir {str(out)!r} holds a run with other arguments or inputs"
                + (f" ({'; '.join(changed)})" if changed else "")
                + "; use another output_dir or delete it")
        state = old
        logger.info("resuming after %d rows", state["rows_done"])
    else:  # a fresh run: what the folder holds already is not written over unasked
        found = [f"{p.name} ({p.stat().st_size} bytes)" for p in (
            pred_path, err_path, out / "metrics.json", out / "run.json")
            if p.is_file() and p.stat().st_size > 0]
        if found:
            raise ValueError(
                f"output_dir {str(out)!r} holds {', '.join(found)} but no state.json (a run "
                f"whose state was deleted, or files of your own): they are not written over; "
                f"delete them, or use another output_dir")
    for path, key in ((pred_path, "pred_bytes"), (err_path, "err_bytes")):
        size = path.stat().st_size if path.exists() else 0
        if size < state[key]:  # truncate() would pad with NUL bytes: rows lost, counted done
            raise ValueError(
                f"output_dir {str(out)!r} cannot be resumed: {path.name} holds {size} bytes, "
                f"fewer than the {state[key]} its state.json counts as written (deleted or "
                f"edited since?); delete the folder, or use another output_dir, to start afresh")
        with path.open("ab") as fh:
            fh.truncate(state[key])
    classes = CLASSES[cfg.scheme]
    logger.info("label scheme %s: classes %s", cfg.scheme, classes)
    if not state["done"]:
        if scorer is None:
            if cfg.engine == "ray":
                from verifier.batch_ray import RayScorer

                scorer = RayScorer(cfg)
            else:
                scorer = _LocalScorer(cfg)
        _run_chunks(cfg, scorer, state, state_path, pred_path, err_path, show_progress_bar,
                    threshold)
    metrics = _metrics_from_files(pred_path, err_path, classes)
    metrics["threshold"] = threshold
    metrics["threshold_source"] = threshold_source
    atomic_write(out / "metrics.json", json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    run = {
        "pairs_per_second": round(state["pairs_scored"] / state["seconds"], 2)
        if state["seconds"] > 0 else None,
        "seconds_scoring": round(state["seconds"], 3),
        "peak_memory_mb": round(_peak_rss_mb(), 1),
        "engine": cfg.engine, "device": cfg.device or "auto", "model": cfg.model or "embedded",
    }
    atomic_write(out / "run.json", json.dumps(run, indent=2, sort_keys=True) + "\n")
    if cfg.plots:
        write_plots(metrics, out)
    if metrics["n"] == 0 and metrics["n_errors"] > 0:
        raise ValueError(_no_usable_row_message(cfg, err_path, metrics["n_errors"]))
    if metrics["n"] == 0:
        names = ", ".join(repr(str(p)) for p in cfg.inputs)
        hint = ("; a CSV/TSV file needs a header line and a row under it"
                if any(_detect_format(p) in ("csv", "tsv") for p in cfg.inputs) else "")
        raise ValueError(f"no input row could be used: the inputs hold no row at all "
                         f"({names}{hint})")
    return metrics


def _error_record(row: RawRow, reason: str | None) -> dict[str, Any]:
    """An ``errors.jsonl`` record: where the row is, why it has no prediction, its text.

    ``item``: the row's number in a ``.json`` array (:attr:`RawRow.item`), only there.
    """
    return {"line": row.line, **_item_field(row), "source": row.source, "reason": reason,
            "raw": row.raw}


def _item_field(row: RawRow) -> dict[str, int]:
    """``{"item": n}`` for a row of a ``.json`` array, else nothing (no key in other formats)."""
    return {} if row.item is None else {"item": row.item}


def _no_usable_row_message(cfg: EvalConfig, err_path: Path, n_errors: int) -> str:
    """Why a run scored no row: its first error and, for a missing field, the rows' fields."""
    with err_path.open(encoding="utf-8") as fh:
        first = json.loads(fh.readline())
    where = f"{first['source']}:{first['line']}" + (
        f" (array item {first['item']})" if "item" in first else "")
    msg = (f"no input row could be used: all {n_errors} are in {str(err_path)!r}; the first, "
           f"{where}: {first['reason']}")
    if str(first["reason"]).startswith("missing "):
        found = _first_record(cfg)
        if found is not None and found.record is not None:
            names = ", ".join(repr(k) for k in found.record)
            msg += (f"; the rows have the fields {names}: choose them with --claim-field, "
                    f"--evidence-field, --label-field (FieldMap)")
    return msg


def _run_chunks(cfg: EvalConfig, scorer: Any, state: dict[str, Any], state_path: Path,
                pred_path: Path, err_path: Path, show_progress_bar: bool | None,
                threshold: float | None) -> None:
    from tqdm.auto import tqdm

    disable = None if show_progress_bar is None else not show_progress_bar
    bar = tqdm(total=None, unit="rows", disable=disable, initial=state["rows_done"])
    skip = state["rows_done"]
    rows = _all_rows(cfg)
    ids = _Ids(cfg)
    for _ in range(skip):  # committed already; their ids are taken
        r = next(rows)
        if r.record is not None:
            try:
                ids.of(r)
            except ValueError:  # the row is in errors.jsonl already
                pass
    warm_up = getattr(scorer, "warm_up", None)
    classes = CLASSES[cfg.scheme]
    with pred_path.open("ab") as pf, err_path.open("ab") as ef:
        for chunk in _chunks(rows, cfg.chunk_rows):
            preds: list[dict[str, Any]] = []
            errs: list[tuple[int, dict[str, Any]]] = []  # (position in the chunk, record)
            pairs: list[tuple[str, str]] = []
            metas: list[tuple[int, RawRow, str, str]] = []
            for pos, r in enumerate(chunk):
                if r.record is None:
                    errs.append((pos, _error_record(r, r.error)))
                    continue
                try:
                    rid = ids.of(r)
                    claim, evidence, raw_label = extract(r.record, cfg.fields)
                    gold = gold_for_scheme(raw_label, cfg.scheme, label_map=cfg.label_map,
                                           field=cfg.fields.label)
                except ValueError as exc:
                    errs.append((pos, _error_record(r, str(exc))))
                    continue
                pairs.append((evidence, claim))
                metas.append((pos, r, rid, gold))
            if pairs:
                if callable(warm_up):  # outside the bad-input guard: a load error stops the run
                    warm_up()
                    warm_up = None
                t0 = time.perf_counter()
                scored = _score_isolating_bad_pairs(scorer, pairs)
                state["seconds"] += time.perf_counter() - t0
                good = []
                for meta, s in zip(metas, scored, strict=True):
                    if isinstance(s, str):  # the reason this pair could not be scored
                        pos, r = meta[0], meta[1]
                        logger.warning("%s: %s", r.where, s)
                        errs.append((pos, _error_record(r, s)))
                    else:
                        good.append((meta, s))
                state["pairs_scored"] += len(good)
                if good:
                    nli = np.stack([s[0] for _, s in good])
                    probs = probabilities_for_scheme(nli, cfg.scheme,
                                                     statuses=cfg.mode == "ensemble")
                    decided = decide(probs, cfg.scheme, threshold)
                    for k, (((_, r, rid, gold), (nl, extra_row)), pr) in enumerate(
                            zip(good, probs, strict=True)):
                        scores = {"nli.entailment": round(float(nl[0]), 6),
                                  "nli.neutral": round(float(nl[1]), 6),
                                  "nli.contradiction": round(float(nl[2]), 6)}
                        if extra_row is not None:
                            scores = {k2: round(float(v), 6) for k2, v in extra_row.items()}
                        preds.append({
                            "id": rid,
                            "source": r.source, "line": r.line, **_item_field(r),
                            "gold": gold,
                            "predicted": decided[k],
                            "probabilities": {c: round(float(x), 6)
                                              for c, x in zip(classes, pr, strict=True)},
                            "scores": scores,
                        })
            errs.sort(key=lambda e: e[0])
            _fsync_write(pf, [json.dumps(p, ensure_ascii=False) + "\n" for p in preds])
            _fsync_write(ef, [json.dumps(e, ensure_ascii=False) + "\n" for _, e in errs])
            state["rows_done"] += len(chunk)
            state["pred_bytes"], state["err_bytes"] = pf.tell(), ef.tell()
            atomic_write(state_path, json.dumps(state))
            bar.update(len(chunk))
            _release_memory()
    bar.close()
    state["done"] = True
    atomic_write(state_path, json.dumps(state))


def metrics_of_predictions(predictions: Iterable[dict[str, Any]], classes: Sequence[str],
                           *, n_errors: int = 0) -> dict[str, Any]:
    """:func:`compute_metrics` of ``predictions.jsonl`` records.

    Each record has ``gold``, ``predicted`` and ``probabilities``; any subset of a run's rows
    (one domain, say) works.
    """
    gold, pred, probs = [], [], []
    for p in predictions:
        gold.append(p["gold"])
        pred.append(p["predicted"])
        probs.append([p["probabilities"][c] for c in classes])
    arr = np.asarray(probs, dtype=np.float64).reshape(-1, len(classes))
    return compute_metrics(gold, pred, arr, classes, n_errors=n_errors)


def _metrics_from_files(pred_path: Path, err_path: Path, classes: Sequence[str]
                        ) -> dict[str, Any]:
    with err_path.open(encoding="utf-8") as fh:
        n_err = sum(1 for _ in fh)
    with pred_path.open(encoding="utf-8") as fh:
        return metrics_of_predictions(map(json.loads, fh), classes, n_errors=n_err)


def write_plots(metrics: dict[str, Any], out: Path) -> list[Path]:
    """Write ``confusion_matrix.png`` and ``reliability.png``; skip (logged) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.warning("matplotlib is not installed: no PNG figures (pip install matplotlib)")
        return []
    written = []
    if "confusion_matrix" in metrics:
        cm = np.asarray(metrics["confusion_matrix"]["matrix"])
        labels = metrics["confusion_matrix"]["labels"]
        fig, ax = plt.subplots(figsize=(4.5, 4))
        ax.imshow(cm, cmap="Blues")
        ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
        ax.set_yticks(range(len(labels)), labels)
        ax.set_xlabel("predicted")
        ax.set_ylabel("gold")
        for i in range(cm.shape[0]):
            for j in range(cm.shape[1]):
                ax.text(j, i, str(cm[i, j]), ha="center", va="center")
        fig.tight_layout()
        fig.savefig(out / "confusion_matrix.png", dpi=100)
        plt.close(fig)
        written.append(out / "confusion_matrix.png")
    if metrics.get("reliability"):
        bins = metrics["reliability"]
        fig, ax = plt.subplots(figsize=(4.5, 4))
        ax.plot([0, 1], [0, 1], "--", color="grey")
        ax.plot([b["confidence"] for b in bins], [b["accuracy"] for b in bins], "o-")
        ax.set_xlabel("confidence")
        ax.set_ylabel("accuracy")
        ax.set_title(f"ECE {metrics.get('ece', math.nan):.3f}")
        fig.tight_layout()
        fig.savefig(out / "reliability.png", dpi=100)
        plt.close(fig)
        written.append(out / "reliability.png")
    return written


#: Field mapping of the files :func:`write_preset_split` writes.
SPLIT_FIELDS = FieldMap("claim", "evidence", "label", "id")


def write_preset_split(name: str, split: Split | None, folder: Path) -> Path:
    """Write one split of a preset (``None``: all of it) as JSONL.

    Fields ``id``, ``claim``, ``evidence``, ``label``, ``meta``, as
    :func:`verifier.datasets.load_preset` reads them, and ``source`` and ``line``: the data
    file and line the row comes from. A data row the loader cannot read or map (bad JSON, an
    empty line, an unknown label or split: :func:`verifier.datasets.load_preset_rows`) is a
    line with ``source``, ``line``, ``error`` and ``raw`` instead. The file is
    ``folder / f"{name}_{split or 'all'}.jsonl"``; it is rewritten only when its content
    changes, so that a resumed :func:`run_eval` sees the same input (same size and mtime).
    Read it with :data:`SPLIT_FIELDS` and ``EvalConfig(from_loader=True)``, which makes the
    rows the loader could not use error records.
    """
    lines = []
    for r in load_preset_rows(name, split):
        e = r.example
        if e is None:
            doc = {"source": r.source, "line": r.line, "error": r.error, "raw": r.raw}
        else:
            doc = {"id": e.id, "claim": e.claim,
                   "evidence": e.evidence if isinstance(e.evidence, str) else list(e.evidence),
                   "label": e.label, "meta": e.meta, "source": r.source, "line": r.line}
        lines.append(json.dumps(doc, ensure_ascii=False) + "\n")
    text = "".join(lines)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}_{split or 'all'}.jsonl"
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        atomic_write(path, text)
    return path


def resolve_preset_inputs(name: str, *, must_exist: bool = True) -> list[Path]:
    """Default input files of a preset, under :func:`verifier.datasets.data_root`.

    Raises:
        FileNotFoundError: One is missing (unless ``must_exist`` is false): the message says
            where the data folder was looked for and how to give it.
    """
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; known: {sorted(PRESETS)}")
    paths = [data_root() / f for f in PRESETS[name].files]
    for path in paths:
        if must_exist and not path.is_file():
            raise FileNotFoundError(missing_data_message(name, path))
    return paths
