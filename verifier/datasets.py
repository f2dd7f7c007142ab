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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
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
        ["supports", "supported", "support", "entailment", "entailed", "e", "true",
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
         "partially_supported", "partially supported", "inconsistent", "no"],
        NOT_SUPPORTED,
    ),
}


#: Synonyms that name one of two classes: ``true``/``false``, ``yes``/``no``. A 3-class data
#: set's label cannot be one of them. (The class numbers ``0``/``1`` are refused in every
#: scheme, before: :func:`is_class_number`.)
TWO_CLASS_SYNONYMS: frozenset[str] = frozenset({"true", "false", "yes", "no"})

#: A label that is a number (``0``, ``"2"``, ``1.0``).
_CLASS_NUMBER = re.compile(r"[+-]?\d+(?:\.0*)?")

#: How data sets number their classes: no one way, so a class number alone names no class.
CLASS_NUMBERINGS = ("MNLI, SNLI, ANLI: 0 entailment, 1 neutral, 2 contradiction; GLUE RTE: "
                    "0 entailment, 1 not_entailment; SummEdits, FRANK: 1 consistent, 0 not")


def is_class_number(raw: Any) -> bool:
    """Whether a raw label is a class number (an integer, or a string or float spelling one).

    Data sets number their classes each in an order of their own (:data:`CLASS_NUMBERINGS`):
    ``1`` is SUPPORTS in SummEdits, neutral in MNLI and not entailed in GLUE RTE, so a
    number is read only through a table that says what it means (``verifier eval
    --label-map``, the presets' own tables). ``True`` and ``False`` are not numbers here.

    Example:
        >>> [is_class_number(x) for x in (0, "2", 1.0, " 1 ", True, "e", 1.5)]
        [True, True, True, True, False, False, False]
    """
    return not isinstance(raw, bool) and _CLASS_NUMBER.fullmatch(str(raw).strip()) is not None


def normalise_label(raw: Any, *, three_class: bool = False) -> str:
    """Map a raw label (any case, synonyms) to a canonical label.

    Args:
        raw: The label as read.
        three_class: The label is from a 3-class data set (SUPPORTS / REFUTES / NOT ENOUGH
            INFO): the two-class synonyms of :data:`TWO_CLASS_SYNONYMS` are refused.

    Raises:
        ValueError: The label is unknown, a class number (:func:`is_class_number`: which
            class it is depends on the data set), or ambiguous in a 3-class data set; the
            message names it.
    """
    key = str(raw).strip().lower()
    if is_class_number(raw):
        raise ValueError(f"label {raw!r} is ambiguous: a class number, and data sets number "
                         f"their classes differently ({CLASS_NUMBERINGS}); spell the labels "
                         f"out, e.g. SUPPORTS / REFUTES / NOT ENOUGH INFO")
    if three_class and key in TWO_CLASS_SYNONYMS:
        raise ValueError(f"label {raw!r} is ambiguous in scheme '3class' (true/false and "
                         f"yes/no name one of two classes): spell the labels out, e.g. "
                         f"SUPPORTS / REFUTES / NOT ENOUGH INFO")
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


class _Row(dict):
    """A data file's row: a missing field raises :class:`_MissingField`, not any KeyError.

    So that ``load_preset`` reports a missing field as one, and lets a ``KeyError`` of
    anything else (a bug) through as what it is.
    """

    def __missing__(self, key: str) -> Any:
        raise _MissingField(key)


@dataclass(frozen=True)
class PresetRow:
    """One row of a preset's files: its example, or why it has none.

    Attributes:
        source: The data file the row is in.
        line: Its 1-based line number (in a ``.json`` array: its item number).
        example: The example; ``None`` when the row cannot be read or mapped.
        error: Why there is no example (an unknown label, bad JSON, an empty line...).
        raw: The row's text as in the file (set when ``example`` is ``None``).
        split: The row's split; for a row without an example, ``None`` when the split
            could not be told either (such a row belongs to every split).
        where: ``source`` and ``line`` as a message gives them (``FILE:LINE``, or
            ``FILE item N`` in a ``.json`` array).
    """

    source: str
    line: int
    example: Example | None
    error: str | None = None
    raw: str = ""
    split: Split | None = None
    where: str = ""


@dataclass(frozen=True)
class _SourceRow:
    """A row as read from a data file: ``row`` is ``None`` when it cannot be (``error``)."""

    source: str
    line: int
    raw: str
    row: _Row | None
    error: str | None = None
    where: str = ""

    def bad(self, reason: str, split: Split | None = None) -> PresetRow:
        return PresetRow(self.source, self.line, None, reason, self.raw, split, self.where)

    def good(self, example: Example) -> PresetRow:
        return PresetRow(self.source, self.line, example, None, "", example.split, self.where)


def _reason(exc: Exception) -> str:
    """What an exception raised while a row was mapped says is wrong with the row."""
    if isinstance(exc, _MissingField):
        return f"the row lacks the field {exc.args[0]!r}"
    return str(exc)


#: A byte ``surrogateescape`` kept because it was not UTF-8.
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def _undecodable(text: str, first_line: int, where: str | None = None) -> str | None:
    """Where ``surrogateescape`` kept an undecodable byte in ``text``, or ``None``.

    ``first_line`` is the file line ``text`` starts on; the answer names the byte and its line,
    or ``where`` it is when given ("array item 2": a line no longer tells).
    """
    m = _ESCAPED_BYTE.search(text)
    if m is None:
        return None
    line = first_line + text.count("\n", 0, m.start())
    place = f"in {where}" if where else f"on line {line}"
    return f"not UTF-8: byte 0x{ord(m.group()) - 0xDC00:02x} {place}"


def _printable(text: str) -> str:
    """``text`` with the bytes ``surrogateescape`` kept turned into U+FFFD (writable as JSON).

    :mod:`verifier.batch`'s readers use it too.
    """
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _jsonl(path: Path) -> Iterator[_SourceRow]:
    r"""Every line of a JSONL file, each a row or an error naming what is wrong.

    Lines end at ``\n``, ``\r\n`` or ``\r``; a line that is not UTF-8, is empty, is not
    JSON or is not a JSON object is a row with ``error`` set (the lines after it are read).
    """
    src = str(path)
    with path.open(encoding="utf-8-sig", errors="surrogateescape", newline="") as fh:
        for n, line in enumerate(fh, start=1):
            text = line.rstrip("\r\n")
            where = f"{src}:{n}"
            bad = _undecodable(text, n)
            if bad is not None:
                yield _SourceRow(src, n, _printable(text), None, bad, where)
                continue
            if not text.strip():
                yield _SourceRow(src, n, text, None, "empty line", where)
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as e:
                yield _SourceRow(src, n, text, None, f"bad JSON: {e.msg} (column {e.colno})",
                                 where)
                continue
            except (ValueError, RecursionError) as e:  # a digit limit, a nesting too deep
                yield _SourceRow(src, n, text, None, f"bad JSON: {e!r}", where)
                continue
            if not isinstance(row, dict):
                yield _SourceRow(src, n, text, None, f"a JSON object is needed, got "
                                 f"{type(row).__name__}", where)
                continue
            yield _SourceRow(src, n, text, _Row(row), None, where)


def _json_array(path: Path) -> Iterator[_SourceRow]:
    """The items of a ``.json`` file holding one array; ``line`` is the item's number.

    A file that cannot be decoded or parsed, or holds no array, is one error row (its rows
    cannot be told apart); an item that is not an object is an error row.
    """
    src = str(path)
    data = path.read_bytes()
    try:
        doc = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        yield _SourceRow(src, line, "", None, f"not UTF-8: byte 0x{data[e.start]:02x} on line "
                         f"{line}; the whole file was skipped", f"{src}:{line}")
        return
    except json.JSONDecodeError as e:
        yield _SourceRow(src, e.lineno, "", None, f"bad JSON: {e.msg} (line {e.lineno}, column "
                         f"{e.colno}); the whole file was skipped", f"{src}:{e.lineno}")
        return
    if not isinstance(doc, list):
        yield _SourceRow(src, 1, "", None, f"an array of objects is needed, got "
                         f"{type(doc).__name__}; the whole file was skipped", f"{src}:1")
        return
    for i, item in enumerate(doc, start=1):
        raw = json.dumps(item, ensure_ascii=False)
        where = f"{src} item {i}"
        if isinstance(item, dict):
            yield _SourceRow(src, i, raw, _Row(item), None, where)
        else:
            yield _SourceRow(src, i, raw, None, f"a JSON object is needed, got "
                             f"{type(item).__name__}", where)


#: ``csv.QUOTE_MINIMAL`` .. ``csv.QUOTE_NONE``.
_Quoting = Literal[0, 1, 2, 3]


def _delimited(path: Path, delimiter: str, quoting: _Quoting) -> Iterator[_SourceRow]:
    """The rows of a CSV/TSV file under its header line; ``line`` is where a row starts.

    A row that is not UTF-8, is empty, cannot be parsed or has a number of fields other than
    the header's is an error row (the rows after it are read).
    """
    src = str(path)
    with path.open(encoding="utf-8-sig", errors="surrogateescape", newline="") as fh:
        reader = csv.reader(fh, delimiter=delimiter, quoting=quoting)
        header: list[str] | None = None
        end = 0  # the last line read
        while True:
            start = end + 1
            try:
                values = next(reader)
            except StopIteration:
                return
            except csv.Error as e:
                end = reader.line_num
                yield _SourceRow(src, start, "", None, f"unreadable row: {e}", f"{src}:{start}")
                continue
            end = reader.line_num
            raw = delimiter.join(values)
            where = f"{src}:{start}"
            error = _undecodable(raw, start) or ("empty line" if not values else None)
            if header is None and error is None:
                header = values
                continue
            if error is None and header is not None and len(values) != len(header):
                error = f"row has {len(values)} fields, header has {len(header)}"
            if error is not None or header is None:
                yield _SourceRow(src, start, _printable(raw), None, error, where)
                continue
            yield _SourceRow(src, start, raw, _Row(zip(header, values, strict=True)), None,
                             where)


def _text(r: _Row, key: str) -> str:
    """Field ``key`` of a row, which must be a string."""
    value = r[key]
    if not isinstance(value, str):
        raise ValueError(f"field {key!r} must be a string, got {type(value).__name__} "
                         f"({value!r:.60})")
    return value


def _texts(r: _Row, key: str) -> tuple[str, ...]:
    """Field ``key`` of a row, which must be a list of strings."""
    value = r[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"field {key!r} must be a list of strings, got "
                         f"{type(value).__name__} ({value!r:.60})")
    return tuple(value)


def _mapped(key: str, table: dict[Any, Any], r: _Row, exact_int: bool = False) -> Any:
    """``table[r[key]]``; a value not in ``table`` is a ``ValueError`` naming it.

    ``exact_int``: the value must be a JSON integer (not ``1.9``, ``True`` or ``"1"``).
    """
    value = r[key]
    if exact_int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"field {key!r} must be one of {sorted(table)} (an integer), got "
                         f"{value!r}")
    try:
        return table[value]
    except (KeyError, TypeError):  # TypeError: an unhashable value (a list, an object)
        raise ValueError(f"field {key!r} must be one of {sorted(table)}, got {value!r:.60}"
                         ) from None


def _rows(rows: Iterable[_SourceRow], make: Callable[[_Row, int], Example],
          split_of: Split | Callable[[_Row], Split]) -> Iterator[PresetRow]:
    """``make(row, k)`` of every readable row (``k``: its number among them, from 0).

    A row that cannot be read, or that ``make`` rejects (a missing field, a bad value), is a
    :class:`PresetRow` without an example; ``split_of`` (the file's split, or a function of
    the row) tells its split where it can.
    """
    k = 0
    for s in rows:
        if s.row is None:
            yield s.bad(s.error or "unreadable row", split_of if isinstance(split_of, str)
                        else None)
            continue
        try:
            yield s.good(make(s.row, k))
        except (_MissingField, ValueError) as exc:
            split: Split | None = split_of if isinstance(split_of, str) else None
            if not isinstance(split_of, str):
                try:
                    split = split_of(s.row)
                except (_MissingField, ValueError):  # the row is reported as it is anyway
                    split = None
            yield s.bad(_reason(exc), split)
        k += 1


_FEVER_TOKENS = re.compile(r"-[lr][rsc]b-")
_ALNUM = re.compile(r"[^a-z0-9]+")


def _fever_key(text: str) -> str:
    """A FEVER sentence or claim reduced to lower-case letters and digits (``-LRB-`` dropped)."""
    return _ALNUM.sub("", _FEVER_TOKENS.sub("", text.lower()))


def _fever_sentences(evidence: str) -> list[str]:
    keys = [_fever_key(s) for s in evidence.split(" . ")]
    return [k for k in keys if k]


def _fever_sym_keys(root: Path) -> set[str]:
    """Claims and evidence sentences of every FEVER-Symmetric file (v0.1 and v0.2).

    Raises:
        ValueError: A row of these files cannot be read (the split needs every one).
    """
    paths = sorted((root / "fever-symmetric").glob("symmetric_*.jsonl"))
    if not paths:  # without them the split could put FEVER-Symmetric's claims in train
        raise FileNotFoundError(f"the FEVER split needs the FEVER-Symmetric files "
                                f"(symmetric_*.jsonl) in {str(root / 'fever-symmetric')!r}")
    keys: set[str] = set()
    for path in paths:
        for s in _jsonl(path):
            try:
                if s.row is None:
                    raise ValueError(s.error)
                keys.add(_fever_key(_text(s.row, "claim")))
                ev = s.row.get("evidence", s.row.get("evidence_sentence", ""))
                keys.update(_fever_sentences(ev if isinstance(ev, str) else ""))
            except (_MissingField, ValueError) as exc:
                raise ValueError(f"{s.where}: {_reason(exc)} (the FEVER split reads every "
                                 f"FEVER-Symmetric row)") from None
    keys.discard("")
    return keys


def _fever(root: Path) -> Iterator[PresetRow]:
    """FEVER dev pairs, split by evidence group (FEVER has no train split in the shared data).

    Pairs that share an evidence sentence form one group (union-find), so that claims written
    from the same Wikipedia sentences never straddle the split; a group goes to ``train`` when
    the md5 bucket of its smallest sentence is >= 50, unless one of its claims or sentences
    appears in FEVER-Symmetric (built from FEVER dev claims), which keeps it in ``eval``.
    92 claims of the file are stored as CSV fields (``"... ""Champ""."``): they are unescaped
    (:func:`verifier.text.csv_unescaped`); the split reads letters and digits only. A row
    whose claim or evidence cannot be read has no group, and no split.
    """
    rows = list(_jsonl(root / "fever-dev" / "fever_dev_rte_claim_evidence.jsonl"))
    parent: dict[str, str] = {}

    def find(k: str) -> str:
        while parent.setdefault(k, k) != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    # a row's claim key and sentence keys, or why it has none
    sents: list[tuple[str, list[str]] | str] = []
    for s in rows:
        try:
            if s.row is None:
                raise ValueError(s.error)
            ck = _fever_key(_text(s.row, "claim"))
            sents.append((ck, _fever_sentences(_text(s.row, "evidence")) or [ck]))
        except (_MissingField, ValueError) as exc:
            sents.append(_reason(exc))
    for ss in sents:
        for a in ss[1][1:] if isinstance(ss, tuple) else ():
            ra, rb = find(ss[1][0]), find(a)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    sym = _fever_sym_keys(root)
    linked = {find(keys[0]) for ck, keys in (ss for ss in sents if isinstance(ss, tuple))
              if ck in sym or any(k in sym for k in keys)}
    for s, ss in zip(rows, sents, strict=True):
        if isinstance(ss, str):  # every row without a claim and sentence keys (s.row None too)
            yield s.bad(ss)
            continue
        r, group = s.row, find(ss[1][0])
        assert r is not None  # a row that could not be read has its reason in ``sents``
        split: Split = "train" if group not in linked and hash_bucket(group) >= 50 else "eval"
        try:
            yield s.good(Example(str(r["idx"]), csv_unescaped(r["claim"]), r["evidence"],
                                 normalise_label(r["label"]), "fever", split,
                                 {"group": group}))
        except (_MissingField, ValueError) as exc:
            yield s.bad(_reason(exc), split)


_SPLIT_FILES: tuple[tuple[Split, str], ...] = (("train", "dev"), ("eval", "test"))


def _fever_sym_example(split: Split, name: str, r: _Row, i: int) -> Example:
    return Example(f"{name}-{r.get('id', i)}-{i}", _text(r, "claim"), _text(r, "evidence"),
                   normalise_label(r["label"]), "fever-sym", split)


def _fever_sym(root: Path) -> Iterator[PresetRow]:
    for split, name in _SPLIT_FILES:
        path = root / "fever-symmetric" / f"symmetric_v0.2_fever_symmetric_{name}.jsonl"
        yield from _rows(_jsonl(path), partial(_fever_sym_example, split, name), split)


def _healthver_example(split: Split, name: str, r: _Row, _: int) -> Example:
    return Example(f"{name}-{r['id']}", r["claim"], r["evidence"],
                   normalise_label(r["label"], three_class=True), "healthver", split)


def _healthver(root: Path) -> Iterator[PresetRow]:
    for split, name in _SPLIT_FILES:
        path = root / "healthver" / f"healthver_{name}.csv"
        yield from _rows(_delimited(path, ",", csv.QUOTE_MINIMAL),
                         partial(_healthver_example, split, name), split)


#: SciFact's ``entailment`` column (the RTE version of the shared data).
_SCIFACT_LABELS: dict[str, str] = {"entailment": SUPPORTS, "not_entailment": NOT_SUPPORTED}


def _scifact_example(split: Split, name: str, r: _Row, _: int) -> Example:
    # the file is read unquoted (QUOTE_NONE): two train claims are whole escaped CSV fields
    return Example(f"{name}-{r['index']}", csv_unescaped(r["sentence2"]),
                   csv_unescaped(r["sentence1"]),
                   _mapped("entailment", _SCIFACT_LABELS, r), "scifact", split)


def _scifact(root: Path) -> Iterator[PresetRow]:
    split: Split
    for split, name in (("train", "train"), ("eval", "dev")):
        path = root / "scifact" / f"{name}.tsv"
        yield from _rows(_delimited(path, "\t", csv.QUOTE_NONE),
                         partial(_scifact_example, split, name), split)


def _covidfact_split(r: _Row) -> Split:
    return "eval" if hash_bucket(_text(r, "claim")) < 50 else "train"


def _covidfact(root: Path) -> Iterator[PresetRow]:
    yield from _rows(_jsonl(root / "covidfact" / "COVIDFACT_dataset.jsonl"),
                     lambda r, i: Example(str(i), r["claim"], _texts(r, "evidence"),
                                          normalise_label(r["label"]), "covidfact",
                                          _covidfact_split(r)),
                     _covidfact_split)


#: WiCE's claim-level labels (``supported``, ``partially_supported``, ``not_supported``).
_WICE_LABELS: dict[str, str] = {"supported": SUPPORTS, "partially_supported": NOT_SUPPORTED,
                                "not_supported": NOT_SUPPORTED}


def _wice(root: Path) -> Iterator[PresetRow]:
    yield from _rows(_jsonl(root / "wice-dev" / "entailment_retrieval_claim_dev.jsonl"),
                     lambda r, i: Example(str(i), _text(r, "claim"), _texts(r, "evidence"),
                                          _mapped("label", _WICE_LABELS, r), "wice", "eval",
                                          {"source_label": r["label"]}),
                     "eval")


#: FRANK and SummEdits labels: 1 consistent (SUPPORTS), 0 not.
_BINARY_LABELS: dict[int, str] = {1: SUPPORTS, 0: NOT_SUPPORTED}
_SUMMEDITS_SPLITS: dict[str, Split] = {"test": "eval", "evaluation": "train"}
_FRANK_SPLITS: dict[str, Split] = {"test": "eval", "val": "train"}


def _summedits_split(r: _Row) -> Split:
    split: Split = _mapped("split", _SUMMEDITS_SPLITS, r)
    return split


def _summedits_example(domain: str, r: _Row, _: int) -> Example:
    return Example(r["id"], r["summary"], r["doc"], _mapped("label", _BINARY_LABELS, r, True),
                   "summedits", _summedits_split(r), {"domain": domain})


def _summedits(root: Path) -> Iterator[PresetRow]:
    for path in sorted((root / "summedits").glob("summedits_*.json")):
        domain = path.stem.removeprefix("summedits_")
        yield from _rows(_json_array(path), partial(_summedits_example, domain),
                         _summedits_split)


def _frank_split(r: _Row) -> Split:
    split: Split = _mapped("split", _FRANK_SPLITS, r)
    return split


def _frank_example(r: _Row, _: int) -> Example:
    return Example(r["id"], r["summary"], r["document"],
                   _mapped("label", _BINARY_LABELS, r, True), "frank", _frank_split(r),
                   {"source": r["dataset"]})


def _frank(root: Path) -> Iterator[PresetRow]:
    yield from _rows(_jsonl(root / "frank" / "frank_doc_summary_label.jsonl"), _frank_example,
                     _frank_split)


def _anli_example(rnd: str, r: _Row, _: int) -> Example:
    return Example(r["uid"], r["hypothesis"], r["context"],
                   normalise_label(r["label"], three_class=True), "anli", "eval",
                   {"round": rnd})


def _anli(root: Path) -> Iterator[PresetRow]:
    for rnd in ("R1", "R2", "R3"):
        yield from _rows(_jsonl(root / "anli" / f"{rnd}_dev.jsonl"), partial(_anli_example, rnd),
                         "eval")


def _averitec_answer(question: str, a: dict[str, Any]) -> str:
    """One question-answer pair as evidence.

    A Yes / No answer comes with its explanation, as the AVeriTeC baseline reads it ("Has
    Syria complied with the Chemical Weapons Convention? No" said nothing more).
    """
    text = f"{question} {a.get('answer', '')}".strip()
    why = a.get("boolean_explanation")
    if a.get("answer_type") == "Boolean" and isinstance(why, str) and why.strip():
        text = f"{text}. {why.strip()}"
    return text


def _averitec_example(r: _Row, i: int) -> Example:
    answers = [
        _averitec_answer(q["question"], a)
        for q in map(_Row, r.get("questions", [])) for a in q.get("answers", [])
    ]
    return Example(str(i), r["claim"], tuple(answers) or ("",),
                   normalise_label(r["label"], three_class=True), "averitec", "eval",
                   {"source_label": r["label"]})


def _averitec(root: Path) -> Iterator[PresetRow]:
    yield from _rows(_json_array(root / "averitec" / "dev.json"), _averitec_example, "eval")


PRESETS: dict[str, Callable[[Path], Iterator[PresetRow]]] = {
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


def load_preset_rows(
    name: str, split: Split | None = None, *, root: Path | None = None
) -> list[PresetRow]:
    """Every row of a preset's files, optionally of one split only, in the files' order.

    Unlike :func:`load_preset`, a row that cannot be read or mapped (bad JSON, an empty line,
    an unknown label or split, a missing field) is returned as a :class:`PresetRow` without
    an example, naming its file, line and what is wrong; one whose split cannot be told is
    kept whatever ``split`` asks for. ``verifier eval --preset`` reads presets so
    (:func:`verifier.batch.write_preset_split`), so that such rows are error records.

    Raises:
        ValueError: Unknown preset or split; a FEVER-Symmetric row the FEVER split needs
            cannot be read.
        FileNotFoundError: The data folder lacks the preset's files.
    """
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; known: {sorted(PRESETS)}")
    if split not in (None, "train", "eval"):
        raise ValueError(f"split must be 'train', 'eval' or None, got {split!r}")
    root = root or data_root()
    try:
        return [r for r in PRESETS[name](root) if split is None or r.split in (None, split)]
    except FileNotFoundError as exc:
        if exc.filename is None:
            raise
        raise FileNotFoundError(missing_data_message(name, Path(exc.filename))) from exc


def missing_data_message(name: str, path: Path) -> str:
    """The error of a preset whose data file ``path`` is missing.

    It says where the data folder was looked for, and how to give it
    (``$NLI_VERIFIER_DATA``, or input files).
    """
    env = os.environ.get("NLI_VERIFIER_DATA")
    where = f"$NLI_VERIFIER_DATA={env!r}" if env else "the default, ../shared/data"
    return (f"preset {name!r}: data file {str(path)!r} not found (data folder: {where}); set "
            f"NLI_VERIFIER_DATA to the folder holding the shared data, or give input files")


def load_preset(
    name: str, split: Split | None = None, *, root: Path | None = None
) -> list[Example]:
    """Load a preset's examples, optionally one split only.

    Labels and splits are mapped by explicit tables (FRANK and SummEdits: the integers 0 and
    1; WiCE: ``supported``, ``partially_supported``, ``not_supported``; SciFact:
    ``entailment``, ``not_entailment``); any other value is an error.

    Args:
        name: One of :data:`PRESETS`.
        split: ``"train"``, ``"eval"`` or ``None`` for both.
        root: Data folder (default :func:`data_root`).

    Raises:
        ValueError: Unknown preset or split; a row of the preset's files (of any split)
            cannot be read or mapped: the message names its file and line and what is wrong.
        FileNotFoundError: The data folder lacks the preset's files.
    """
    if split not in (None, "train", "eval"):
        raise ValueError(f"split must be 'train', 'eval' or None, got {split!r}")
    examples: list[Example] = []
    for r in load_preset_rows(name, root=root):
        if r.example is None:
            raise ValueError(f"preset {name!r}: {r.where}: {r.error}")
        examples.append(r.example)
    return [e for e in examples if split is None or e.split == split]
