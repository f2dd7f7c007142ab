"""Retrieval: BM25, dense (sentence-transformers over FAISS) and a hybrid fused by RRF.

Every retriever indexes whole documents (:class:`~verifier.types.Passage`), chunks them into
passages that keep character offsets, and returns :class:`~verifier.types.Evidence` whose
``span`` indexes the original document (``retriever.document(source_id)[start:end] ==
evidence.content``). Indexes save to and load from a folder (JSON, NPY and the FAISS index; no
pickle).

Example:
    >>> r = BM25Retriever().index([Passage("Paris is in France.", "d1"),
    ...                            Passage("Berlin is in Germany.", "d2")])
    >>> ev = r.retrieve("Where is Paris?", top_k=1)[0]
    >>> ev.source_id, r.document(ev.source_id)[ev.span[0]:ev.span[1]] == ev.content
    ('d1', True)
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import re
import shutil
import tempfile
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from rag.chunking import TokenCounter, chunk_document
from verifier.checking import is_int, is_real
from verifier.embedded import (
    MODEL_LOAD_LOCK,
    embedded_embedding_model,
    folder_fingerprint,
    resolve_device,
    resolve_dtype,
)
from verifier.errors import IndexMismatchError, ModelLoadError
from verifier.registry import register
from verifier.text import CJK_CHARS, STOP_WORDS, combining_marks, is_blank
from verifier.types import Evidence, Passage

logger = logging.getLogger(__name__)

#: Version of the on-disk index format; a folder with another version is refused.
FORMAT_VERSION = 1
#: Name recorded in saved indexes for the embedded all-MiniLM-L6-v2 (whatever its path).
EMBEDDED_MODEL_ID = "embedded:all-MiniLM-L6-v2"

IndexType = Literal["flat", "hnsw", "ivf"]
_INDEX_TYPES = ("flat", "hnsw", "ivf")
_DTYPES = (None, "auto", "float32", "bfloat16", "float16")


@functools.cache
def _token_pattern() -> re.Pattern[str]:
    r"""The BM25 token: an ideograph or a kana, or a word with its combining marks.

    The vowel signs and viramas of Indic scripts ("हिन्दी", "தமிழ்") are combining marks
    (categories Mn, Mc) with no precomposed form, and Python's ``\w`` does not match them:
    a token is a run of word characters, and more after each run of combining marks
    (:func:`~verifier.text.combining_marks`, built at the first call, not at import). (The
    marks outside the Basic Multilingual Plane are a class of their own, read only for such
    a character: ``re`` scans a class of both planes range by range, three times slower.)
    """
    bmp, astral = combining_marks()
    mark = rf"(?:[{bmp}]|(?=[\U00010000-\U000E0FFF])[{astral}])"
    # ideographs and kana: text without spaces between words, so each character is a token
    return re.compile(rf"[{CJK_CHARS}]|[^\W{CJK_CHARS}]+(?:{mark}+[^\W{CJK_CHARS}]*)*")


def tokenize(text: str) -> list[str]:
    """BM25 tokeniser: lower-case word characters, punctuation and stop-words removed.

    Args:
        text: Any text.

    Returns:
        The tokens in text order (repeats kept).

    The text is Unicode-normalised (NFKC) first, so one word matches however it is encoded:
    ``"cafe\u0301"`` (an accent as a combining mark) is ``"café"``, full-width ``"ＰＡＲＩＳ"``
    is ``"paris"``. Accents are kept (``"café"`` is not ``"cafe"``). Chinese and Japanese
    characters are one token each (the text puts no space between words). A word keeps its
    combining marks, which Hindi or Tamil vowel signs are (``"हिन्दी"`` is one token).

    Example:
        >>> tokenize("The Eiffel Tower, in Paris!")
        ['eiffel', 'tower', 'paris']
        >>> tokenize("東京は首都")
        ['東', '京', 'は', '首', '都']
        >>> tokenize("cafe\u0301") == tokenize("café") == ["café"]
        True
        >>> tokenize("हिन्दी भाषा")
        ['हिन्दी', 'भाषा']
    """
    text = unicodedata.normalize("NFKC", text).lower()
    return [t for t in _token_pattern().findall(text) if t not in STOP_WORDS]


@runtime_checkable
class Retriever(Protocol):
    """One verb: ``retrieve(query, *, top_k) -> list[Evidence]`` (best first)."""

    def retrieve(self, query: str, *, top_k: int = 5) -> list[Evidence]:
        """Return the ``top_k`` best passages for ``query``."""
        ...


def _check_top_k(top_k: int) -> None:
    if not is_int(top_k) or top_k <= 0:
        raise ValueError(f"top_k must be an int > 0, got {top_k!r}")


def _check_query(query: str, top_k: int) -> None:
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    if is_blank(query):  # spaces or invisible characters only
        raise ValueError(f"query must not be empty, got {query!r}")
    _check_top_k(top_k)


def _check_queries(queries: Sequence[str], top_k: int) -> list[str]:
    if isinstance(queries, str) or not isinstance(queries, Sequence):
        raise TypeError(f"queries must be a sequence of str, got {type(queries).__name__}")
    _check_top_k(top_k)
    for i, q in enumerate(queries):
        if not isinstance(q, str):
            raise TypeError(f"queries[{i}] must be a str, got {type(q).__name__}")
        if is_blank(q):
            raise ValueError(f"queries[{i}] must not be empty, got {q!r}")
    return list(queries)


def _top_n(ids: np.ndarray, scores: np.ndarray, n: int) -> list[tuple[int, float]]:
    """The ``n`` best ``(id, score)`` pairs, ties broken by the smaller id (deterministic)."""
    if len(scores) > n:
        kth = np.partition(scores, len(scores) - n)[len(scores) - n]
        keep = scores >= kth
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((ids, -scores))[:n]
    return [(int(ids[i]), float(scores[i])) for i in order]


def _model_id(model_name_or_path: str | None) -> str:
    """Canonical name of an embedding model, as recorded in saved indexes.

    ``None`` and the embedded model's folder both give :data:`EMBEDDED_MODEL_ID`; another
    existing folder gives its resolved path; anything else (a hub id) is kept as given.
    """
    if model_name_or_path is None or model_name_or_path == EMBEDDED_MODEL_ID:
        return EMBEDDED_MODEL_ID
    path = Path(model_name_or_path).expanduser()
    if not path.exists():
        return model_name_or_path
    resolved = path.resolve()
    try:
        embedded = Path(embedded_embedding_model()).resolve()
    except ModelLoadError:  # not installed: this folder cannot be the embedded model
        embedded = None
    return EMBEDDED_MODEL_ID if resolved == embedded else str(resolved)


def _rebuild(path: Path) -> str:
    """How to replace an index that cannot be read: the end of every such error."""
    return (f"rebuild it with `verifier index DOCS --out {path}` (or index() and save() "
            "again)")


class _Corpus:
    """Documents, their chunked passages, and the folder format shared by the retrievers."""

    type_name: ClassVar[str] = ""

    def __init__(self, *, chunk_max_chars: int = 800, chunk_overlap: int = 1) -> None:
        if not is_int(chunk_max_chars) or chunk_max_chars <= 0:
            raise ValueError(f"chunk_max_chars must be a positive int, got {chunk_max_chars!r}")
        if not is_int(chunk_overlap) or chunk_overlap < 0:
            raise ValueError(f"chunk_overlap must be an int >= 0, got {chunk_overlap!r}")
        self.chunk_max_chars = int(chunk_max_chars)
        self.chunk_overlap = int(chunk_overlap)
        self.documents: dict[str, str] = {}
        self.passages: list[Passage] = []

    def _chunk(self, documents: Sequence[Passage]) -> tuple[dict[str, str], list[Passage]]:
        """Check and chunk ``documents``: ``(text by source_id, passages)``; changes nothing."""
        if isinstance(documents, (str, Passage)) or not isinstance(documents, Sequence):
            raise TypeError(
                f"documents must be a sequence of Passage, got {type(documents).__name__}")
        if len(documents) == 0:
            raise ValueError("cannot index an empty corpus: documents is empty")
        docs: dict[str, str] = {}
        for i, d in enumerate(documents):
            if not isinstance(d, Passage):
                raise TypeError(f"documents[{i}] must be a Passage, got {type(d).__name__}")
            if d.source_id in docs:
                raise ValueError(f"documents[{i}] repeats source_id {d.source_id!r}")
            docs[d.source_id] = d.text
        budget = self._token_budget()
        max_tokens, count_tokens = budget if budget is not None else (None, None)
        passages: list[Passage] = []
        for d in documents:
            passages.extend(chunk_document(d.text, d.source_id, max_chars=self.chunk_max_chars,
                                           overlap=self.chunk_overlap, metadata=d.metadata,
                                           max_tokens=max_tokens, count_tokens=count_tokens))
        return docs, passages

    def _token_budget(self) -> tuple[int, TokenCounter] | None:
        """Most tokens in a passage and how to count them (``None``: characters only)."""
        return None

    def _set_corpus(self, docs: dict[str, str], passages: list[Passage]) -> None:
        self.documents, self.passages = docs, passages
        logger.info("%s: %d documents chunked into %d passages", type(self).__name__,
                    len(docs), len(passages))

    def retrieve(self, query: str, *, top_k: int = 5) -> list[Evidence]:
        """Best passages first, as :class:`Evidence` with spans into their documents.

        Raises:
            ValueError: ``query`` is empty, ``top_k <= 0`` or nothing is indexed.
        """
        _check_query(query, top_k)
        return self.retrieve_batch([query], top_k=top_k)[0]  # type: ignore[attr-defined]

    def _require_index(self) -> None:
        if not self.passages:
            raise ValueError(f"{type(self).__name__} has no index: call index(documents) first")

    def document(self, source_id: str) -> str:
        """Full original text of an indexed document (what ``Evidence.span`` indexes).

        Raises:
            KeyError: No indexed document has this ``source_id``.
        """
        try:
            return self.documents[source_id]
        except KeyError:
            raise KeyError(f"no indexed document with source_id {source_id!r}") from None

    def _evidence(self, idx: int, score: float, rank: int) -> Evidence:
        p = self.passages[idx]
        s, e = p.metadata["doc_span"]
        return Evidence(p.text, p.source_id, (s, e), float(score), rank)

    def _params(self) -> dict[str, Any]:
        return {"chunk_max_chars": self.chunk_max_chars, "chunk_overlap": self.chunk_overlap}

    def to_dict(self) -> dict[str, Any]:
        """``{"type": registry name, "init_parameters": {...}}`` (JSON-serialisable)."""
        return {"type": self.type_name, "init_parameters": self._params()}

    def _save_corpus(self, path: Path, extra: dict[str, Any],
                     more_files: Callable[[Path], None] | None = None,
                     init_parameters: dict[str, Any] | None = None) -> None:
        """Write the corpus files, ``more_files(folder)`` and the manifest into ``path``.

        Everything is written into a staging folder inside ``path`` first, so a save that
        fails on the way (disk full, no permission, a value that is not JSON) leaves the index
        that was there whole and loadable, and removes the staging folder. Only then are the
        files moved in (renames within one file system): the old manifest is removed first and
        the new one moved last, so even a save killed during the moves leaves a folder that
        reads as "no index", never a mix of two indexes.
        """
        self._require_index()
        manifest = {"format_version": FORMAT_VERSION, **self.to_dict(),
                    "n_documents": len(self.documents), "n_passages": len(self.passages),
                    **extra}
        if init_parameters is not None:
            manifest["init_parameters"] = init_parameters
        manifest_text = json.dumps(manifest, indent=2)  # before anything is written
        path.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=".saving-", dir=path))
        try:
            (stage / "documents.json").write_text(
                json.dumps(self.documents, ensure_ascii=False), encoding="utf-8")
            (stage / "passages.json").write_text(
                json.dumps([p.to_dict() for p in self.passages], ensure_ascii=False),
                encoding="utf-8")
            if more_files is not None:
                more_files(stage)
            (stage / "manifest.json").write_text(manifest_text, encoding="utf-8")
            (path / "manifest.json").unlink(missing_ok=True)
            for f in sorted(stage.iterdir(), key=lambda f: f.name == "manifest.json"):
                os.replace(f, path / f.name)
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    @staticmethod
    def _read_manifest(path: Path, expected_type: str,
                       required: dict[str, type | tuple[type, ...]] | None = None
                       ) -> dict[str, Any]:
        """The manifest of the index in ``path``, checked: format version, type, keys.

        Args:
            path: The index folder.
            expected_type: The registry name the manifest must hold.
            required: Keys the caller reads besides ``init_parameters``, with their types.

        Raises:
            FileNotFoundError: ``path`` holds no manifest.
            IndexMismatchError: The manifest is not JSON, has another format version or type,
                or lacks a key (each message names the folder and how to rebuild it).
        """
        path = Path(path)
        mf = path / "manifest.json"
        if not mf.is_file():
            raise FileNotFoundError(f"no index in {str(path)!r} (manifest.json missing)")
        try:
            manifest = json.loads(mf.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise IndexMismatchError(
                f"index at {str(path)!r}: manifest.json is not JSON ({exc}); "
                f"{_rebuild(path)}") from exc
        if not isinstance(manifest, dict):
            raise IndexMismatchError(
                f"index at {str(path)!r}: manifest.json holds a {type(manifest).__name__}, "
                f"not an object; {_rebuild(path)}")
        version = manifest.get("format_version")
        if version != FORMAT_VERSION:
            what = ("no format version" if version is None
                    else f"format version {version!r}")
            raise IndexMismatchError(
                f"index at {str(path)!r} has {what}; this library reads format version "
                f"{FORMAT_VERSION}; {_rebuild(path)}")
        if manifest.get("type") != expected_type:
            raise IndexMismatchError(
                f"{str(path)!r} holds a {manifest.get('type')!r} index, not {expected_type!r}")
        for key, kind in {"init_parameters": dict, **(required or {})}.items():
            if key not in manifest:
                raise IndexMismatchError(
                    f"index at {str(path)!r}: manifest.json has no {key!r} (written by "
                    f"another version of this library?); {_rebuild(path)}")
            value = manifest[key]
            if not isinstance(value, kind) or isinstance(value, bool):
                raise IndexMismatchError(
                    f"index at {str(path)!r}: manifest.json has {key!r} = {value!r}, of the "
                    f"wrong type; {_rebuild(path)}")
        return manifest

    @classmethod
    def _from_manifest(cls, path: Path, params: dict[str, Any]) -> Any:
        """``cls(**params)`` from a manifest, or an error naming the folder.

        A saved parameter this library does not know is an error (it cannot honour it); one
        it does not find takes the constructor's default, with a warning.
        """
        import inspect

        known = {n for n, p in inspect.signature(cls.__init__).parameters.items()
                 if n != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
        unknown = sorted(set(params) - known)
        if unknown:
            raise IndexMismatchError(
                f"index at {str(path)!r} has parameters {unknown} that this library's "
                f"{cls.__name__} does not know (written by another version?); "
                f"{_rebuild(path)}")
        missing = sorted(known - set(params))
        if missing:
            logger.warning("index at %r: no saved value for %s; using %s's defaults",
                           str(path), missing, cls.__name__)
        try:
            return cls(**params)
        except (TypeError, ValueError) as exc:
            raise IndexMismatchError(
                f"index at {str(path)!r} has a bad saved parameter: {exc}; "
                f"{_rebuild(path)}") from exc

    def _load_corpus(self, path: Path, manifest: dict[str, Any]) -> None:
        """Read the documents and passages of the index in ``path``, checked against each other.

        Every passage must slice back out of its document (``documents[source_id][start:end]
        == passage.text``), the promise :meth:`document` and ``Evidence.span`` keep; a
        document edited or removed after the save breaks it, and is refused here rather
        than at the first :meth:`document` call.

        Raises:
            IndexMismatchError: A file is missing or not JSON, or the files disagree.
        """
        def read(name: str) -> Any:
            try:
                return json.loads((path / name).read_text(encoding="utf-8"))
            except FileNotFoundError as exc:  # the manifest is there: a damaged index
                raise IndexMismatchError(
                    f"index at {str(path)!r}: {name} is missing; {_rebuild(path)}") from exc
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise IndexMismatchError(
                    f"index at {str(path)!r}: {name} is not JSON ({exc}); "
                    f"{_rebuild(path)}") from exc

        documents, passages = read("documents.json"), read("passages.json")
        try:
            if not isinstance(documents, dict) or not all(
                    isinstance(v, str) for v in documents.values()):
                raise TypeError("documents.json must map source ids to texts")
            if not isinstance(passages, list):
                raise TypeError("passages.json must hold a list")
            self.passages = [Passage.from_dict(d) for d in passages]
        except (KeyError, TypeError, ValueError) as exc:
            raise IndexMismatchError(
                f"index at {str(path)!r} is not readable: {exc}; {_rebuild(path)}") from exc
        for i, p in enumerate(self.passages):
            span = p.metadata.get("doc_span")
            if p.source_id not in documents:
                why = f"its document {p.source_id!r} is not in documents.json"
            elif span is None:
                why = "it has no 'doc_span'"
            elif documents[p.source_id][span[0]:span[1]] != p.text:
                why = (f"documents.json's {p.source_id!r}[{span[0]}:{span[1]}] is not its "
                       "text (the document changed after the index was saved?)")
            else:
                continue
            raise IndexMismatchError(
                f"index at {str(path)!r}: passages.json and documents.json disagree on "
                f"passage {i}: {why}; {_rebuild(path)}")
        self.documents = documents
        n = manifest.get("n_passages")
        if n is not None and n != len(self.passages):
            raise IndexMismatchError(
                f"{str(path)!r}: manifest lists {n} passages, passages.json has "
                f"{len(self.passages)}")


@register("retriever.bm25.v1")
class BM25Retriever(_Corpus):
    """Lexical retrieval with BM25 (Okapi, Lucene's idf) over the chunked passages.

    The corpus statistics come from ``rank_bm25.BM25Okapi``; at index time they are turned
    into a sparse ``(vocabulary, n_passages)`` matrix of per-term BM25 weights, so that a query
    costs one sparse product instead of a Python loop over every passage (same scores).

    Args:
        k1: Term-frequency saturation (>= 0).
        b: Length normalisation in [0, 1].
        chunk_max_chars: Passage size used to chunk long documents.
        chunk_overlap: Sentences shared by consecutive passages.

    Example:
        >>> r = BM25Retriever().index([Passage("Paris is in France.", "d1"),
        ...                            Passage("Berlin is in Germany.", "d2")])
        >>> r.retrieve("Where is Paris?", top_k=1)[0].source_id
        'd1'
    """

    type_name = "retriever.bm25.v1"

    def __init__(self, *, k1: float = 1.5, b: float = 0.75, chunk_max_chars: int = 800,
                 chunk_overlap: int = 1) -> None:
        super().__init__(chunk_max_chars=chunk_max_chars, chunk_overlap=chunk_overlap)
        if not is_real(k1) or not 0 <= k1 < math.inf:
            raise ValueError(f"k1 must be a finite number >= 0, got {k1!r}")
        if not is_real(b) or not 0 <= b <= 1:
            raise ValueError(f"b must be a number in [0, 1], got {b!r}")
        self.k1, self.b = float(k1), float(b)
        self._vocab: dict[str, int] = {}
        self._weights: Any = None  # scipy CSR, shape (len(vocab), n_passages)

    def _params(self) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b, **super()._params()}

    def index(self, documents: Sequence[Passage]) -> BM25Retriever:
        """Chunk and index ``documents`` (whole documents); returns ``self``.

        Nothing changes when this raises: the previous index stays whole.

        Raises:
            ValueError: ``documents`` is empty or repeats a ``source_id``.
            TypeError: ``documents`` is not a sequence of :class:`Passage`.
        """
        docs, passages = self._chunk(documents)
        weights, vocab = self._bm25_weights(passages)
        self._set_corpus(docs, passages)
        self._weights, self._vocab = weights, vocab
        return self

    def _okapi(self, passages: Sequence[Passage] | None = None) -> Any:
        from rank_bm25 import BM25Okapi

        class _LuceneIdfBM25(BM25Okapi):
            # Okapi's idf is 0 or negative for terms in half the passages or more, which
            # breaks small corpora; Lucene's idf stays positive.
            def _calc_idf(self, nd: dict[str, int]) -> None:
                n = self.corpus_size
                self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in nd.items()}

        passages = self.passages if passages is None else passages
        return _LuceneIdfBM25([tokenize(p.text) for p in passages], k1=self.k1, b=self.b)

    def _build(self) -> None:
        self._weights, self._vocab = self._bm25_weights(self.passages)

    def _bm25_weights(self, passages: Sequence[Passage]) -> tuple[Any, dict[str, int]]:
        """The ``(vocabulary, n_passages)`` BM25 weight matrix of ``passages`` and its vocab."""
        from scipy import sparse

        okapi = self._okapi(passages)
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        tfs: list[int] = []
        for j, freqs in enumerate(okapi.doc_freqs):
            for word, tf in freqs.items():
                rows.append(vocab.setdefault(word, len(vocab)))
                cols.append(j)
                tfs.append(tf)
        tf = np.asarray(tfs, dtype=np.float64)
        col = np.asarray(cols, dtype=np.int64)
        if len(tf):  # avgdl > 0 whenever some passage has a token
            dl = np.asarray(okapi.doc_len, dtype=np.float64)[col]
            norm = self.k1 * (1 - self.b + self.b * dl / okapi.avgdl)
            idf = np.fromiter((okapi.idf[w] for w in vocab), np.float64, len(vocab))
            data = idf[np.asarray(rows)] * tf * (self.k1 + 1) / (tf + norm)
        else:
            data = tf
        weights = sparse.csr_matrix(
            (data, (np.asarray(rows, dtype=np.int64), col)),
            shape=(len(vocab), len(passages)))
        return weights, vocab

    def _query_matrix(self, queries: Sequence[str]) -> Any:
        from scipy import sparse

        rows, cols = [], []
        for i, q in enumerate(queries):
            for t in tokenize(q):
                j = self._vocab.get(t)
                if j is not None:
                    rows.append(i)
                    cols.append(j)
        # Duplicate (row, col) entries add up: a repeated query term counts twice, as in
        # rank_bm25's get_scores.
        return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)),
                                 shape=(len(queries), len(self._vocab)))

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every passage, shape ``(n_passages,)`` (float64)."""
        self._require_index()
        return np.asarray((self._query_matrix([query]) @ self._weights).toarray()).ravel()

    def ranked_batch(self, queries: Sequence[str], n: int) -> list[list[tuple[int, float]]]:
        """``(passage index, score)`` of the ``n`` best passages with a positive score, per query.

        Ties are broken by passage order (deterministic).
        """
        self._require_index()
        out: list[list[tuple[int, float]]] = []
        step = 1024
        for start in range(0, len(queries), step):
            prod = (self._query_matrix(queries[start:start + step]) @ self._weights).tocsr()
            for i in range(prod.shape[0]):
                lo, hi = prod.indptr[i], prod.indptr[i + 1]
                ids, sc = prod.indices[lo:hi], prod.data[lo:hi]
                keep = sc > 0
                out.append(_top_n(ids[keep], sc[keep], n))
        return out

    def ranked(self, query: str, n: int) -> list[tuple[int, float]]:
        """:meth:`ranked_batch` for one query."""
        return self.ranked_batch([query], n)[0]

    def retrieve_batch(self, queries: Sequence[str], *, top_k: int = 5) -> list[list[Evidence]]:
        """:meth:`retrieve` for several queries; returns one list per query."""
        queries = _check_queries(queries, top_k)
        return [[self._evidence(i, s, r) for r, (i, s) in enumerate(row)]
                for row in self.ranked_batch(queries, top_k)]

    def save(self, path: str | Path) -> None:
        """Write the index to a folder (manifest, documents and passages as JSON)."""
        self._save_corpus(Path(path), {})

    @classmethod
    def load(cls, path: str | Path, *, device: str | None = None) -> BM25Retriever:
        """Read an index written by :meth:`save` (the BM25 statistics are rebuilt).

        Args:
            path: The folder.
            device: Accepted for a surface shared with the dense retrievers; BM25 runs on CPU.

        Raises:
            FileNotFoundError: No index in ``path``.
            IndexMismatchError: The folder holds another kind of index or format version,
                or its files are missing, damaged or disagree.
        """
        path = Path(path)
        manifest = cls._read_manifest(path, cls.type_name)
        r = cls._from_manifest(path, manifest["init_parameters"])
        r._load_corpus(path, manifest)
        r._build()
        return r


@register("retriever.dense.v1")
class DenseRetriever(_Corpus):
    """Dense retrieval: sentence-transformers embeddings (normalised) in a FAISS index.

    Scores are inner products of unit vectors (cosine similarity). The model loads on
    :meth:`warm_up` or first use.

    Args:
        model_name_or_path: Sentence-transformers id or folder; ``None`` is the embedded
            all-MiniLM-L6-v2 (``verifier.embedded.embedded_embedding_model()``).
        device: ``None`` (auto: cuda, mps, cpu) or a torch device.
        batch_size: Texts per encoding batch.
        index_type: ``"flat"`` (exact), ``"hnsw"`` or ``"ivf"`` (approximate, for large
            corpora).
        dtype: Encoding dtype (``None``: bf16 on CUDA and on CPUs with fast bf16, else
            float32). Embeddings are re-normalised in float32 either way.
        chunk_max_chars: Passage size used to chunk long documents (a passage also holds
            at most the embedding model's ``max_seq_length`` tokens: none is truncated).
        chunk_overlap: Sentences shared by consecutive passages.
        show_progress_bar: ``None`` shows a bar on a terminal when indexing > 5,000 passages.

    Example:
        >>> r = DenseRetriever().index([Passage("Paris is in France.", "d1")])  # doctest: +SKIP
        >>> r.retrieve("Where is Paris?", top_k=1)[0].source_id  # doctest: +SKIP
        'd1'
    """

    type_name = "retriever.dense.v1"

    def __init__(
        self,
        model_name_or_path: str | None = None,
        *,
        device: str | None = None,
        batch_size: int = 64,
        index_type: IndexType = "flat",
        dtype: str | None = None,
        chunk_max_chars: int = 800,
        chunk_overlap: int = 1,
        show_progress_bar: bool | None = None,
    ) -> None:
        super().__init__(chunk_max_chars=chunk_max_chars, chunk_overlap=chunk_overlap)
        if model_name_or_path is not None and (
                not isinstance(model_name_or_path, str) or not model_name_or_path):
            raise ValueError(
                f"model_name_or_path must be None or a non-empty str, got {model_name_or_path!r}")
        if index_type not in _INDEX_TYPES:
            raise ValueError(f"index_type must be 'flat', 'hnsw' or 'ivf', got {index_type!r}")
        if not is_int(batch_size) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {_DTYPES}, got {dtype!r}")
        self.model_name_or_path = model_name_or_path
        self.device = device
        self.batch_size = int(batch_size)
        self.index_type = index_type
        self.dtype = dtype
        self.show_progress_bar = show_progress_bar
        self._model: Any = None
        self._budget: tuple[int, TokenCounter] | None = None  # set with the model
        self._faiss: Any = None
        self.embeddings: np.ndarray | None = None

    @property
    def model_id(self) -> str:
        """Name recorded in saved indexes (:data:`EMBEDDED_MODEL_ID` for the default)."""
        return _model_id(self.model_name_or_path)

    def _params(self) -> dict[str, Any]:
        return {"model_name_or_path": self.model_name_or_path, "device": self.device,
                "batch_size": self.batch_size, "index_type": self.index_type,
                "dtype": self.dtype, **super()._params(),
                "show_progress_bar": self.show_progress_bar}

    def warm_up(self) -> None:
        """Load the embedding model once (later calls do nothing).

        Raises:
            ModelLoadError: The embedded model is wanted but not installed.
        """
        if self._model is not None:
            return
        import torch
        from sentence_transformers import SentenceTransformer

        device = resolve_device(self.device)
        path = self.model_name_or_path
        if path is None or path == EMBEDDED_MODEL_ID:
            path = embedded_embedding_model()
        dtype = resolve_dtype(self.dtype, device)
        with MODEL_LOAD_LOCK:
            if self._model is not None:
                return
            model = SentenceTransformer(path, device=device)
            if dtype != "float32":
                model = model.to(getattr(torch, dtype))
            model.eval()
            self._budget = _token_budget_of(model, self.model_id)
            self._model = model
        logger.info("loaded embedding model %s on %s (%s)", self.model_id, device, dtype)

    @property
    def dimension(self) -> int:
        """Embedding size (loads the model if nothing is indexed yet)."""
        if self.embeddings is not None:
            return int(self.embeddings.shape[1])
        self.warm_up()
        get_dim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        return int(get_dim())

    def _token_budget(self) -> tuple[int, TokenCounter] | None:
        """The model's input limit less its special tokens, and its tokenizer's count.

        Passages are chunked to fit it (the model drops the tokens past its limit, so the
        end of a longer passage could never be found by dense search), and a longer query is
        said. Read once, when the model loads (:func:`_token_budget_of`).
        """
        self.warm_up()
        return self._budget

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm float32 embeddings, shape ``(len(texts), dim)``; ``(0, dim)`` for none."""
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of str, got str")
        texts = list(texts)
        self.warm_up()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        show = self.show_progress_bar
        if show is None:
            import sys

            show = len(texts) > 5000 and sys.stderr.isatty()
        emb = self._model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=show)
        emb = np.array(emb, dtype=np.float32)
        # bf16/fp16 models normalise in low precision; do it again in float32.
        emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
        return np.ascontiguousarray(emb)

    def _build_faiss(self, emb: np.ndarray) -> Any:
        """A new FAISS index holding ``emb`` (``self`` is not changed)."""
        import faiss

        dim = emb.shape[1]
        index: Any
        if self.index_type == "hnsw":
            index = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = 80
            index.hnsw.efSearch = 64
        elif self.index_type == "ivf":
            nlist = max(1, min(4096, int(np.sqrt(len(emb)))))
            quant = faiss.IndexFlatIP(dim)
            index = faiss.IndexIVFFlat(quant, dim, nlist, faiss.METRIC_INNER_PRODUCT)
            index.train(emb)
            index.nprobe = min(nlist, 16)
        else:
            index = faiss.IndexFlatIP(dim)
        index.add(emb)
        return index

    def index(self, documents: Sequence[Passage]) -> DenseRetriever:
        """Chunk, embed and index ``documents`` (whole documents); returns ``self``.

        Nothing changes when this raises (e.g. encoding runs out of memory): the previous
        index stays whole.

        Raises:
            ValueError: ``documents`` is empty or repeats a ``source_id``.
            TypeError: ``documents`` is not a sequence of :class:`Passage`.
        """
        docs, passages = self._chunk(documents)
        emb = self.encode([p.text for p in passages])
        index = self._build_faiss(emb)
        self._set_corpus(docs, passages)
        self.embeddings, self._faiss = emb, index
        return self

    def ranked_batch(self, queries: Sequence[str], n: int) -> list[list[tuple[int, float]]]:
        """``(passage index, cosine)`` of the ``n`` nearest passages of each query, best first.

        Raises:
            IndexMismatchError: The model's embedding size differs from the index's.
        """
        self._require_index()
        budget = self._token_budget()
        if budget is not None:  # a query past the model's limit is read in part: said
            limit, count = budget
            over = [n for n in count(queries) if n > limit]
            if over:
                logger.warning("%d of %d queries are longer than the embedding model's %d "
                               "tokens (the longest: %d): dense search reads only their "
                               "first %d", len(over), len(queries), limit, max(over), limit)
        q = self.encode(queries)
        if q.shape[1] != self._faiss.d:
            raise IndexMismatchError(
                f"embedding model {self.model_id!r} gives {q.shape[1]}-d vectors, the index "
                f"holds {self._faiss.d}-d ones")
        want = min(n, len(self.passages))
        scores, ids = self._faiss.search(q, want)
        short = int((ids < 0).any(axis=1).sum()) if len(ids) else 0
        if short:  # an approximate index (HNSW, IVF) may find fewer than asked for
            logger.warning("%s index: %d of %d queries got fewer than the %d passages asked for "
                           "(an approximate search; raise its search settings, or use "
                           "index_type='flat' for every passage)", self.index_type, short,
                           len(queries), want)
        # Equal scores (duplicate passages) come back in FAISS's order; sort them by index.
        return [sorted(((int(i), float(s)) for i, s in zip(row_i, row_s, strict=True) if i >= 0),
                       key=lambda t: (-t[1], t[0]))
                for row_i, row_s in zip(ids, scores, strict=True)]

    def retrieve_batch(self, queries: Sequence[str], *, top_k: int = 5) -> list[list[Evidence]]:
        """:meth:`retrieve` for several queries, encoded in one batch.

        In bf16 or fp16 (``dtype=None`` on a CPU with bf16 or on a GPU) a query's embedding
        depends slightly on the queries batched with it (cosines move in the third decimal),
        so two passages whose scores are that close may swap places against :meth:`retrieve`;
        ``dtype="float32"`` gives the same results either way.
        """
        queries = _check_queries(queries, top_k)
        self._require_index()
        if not queries:
            return []
        return [[self._evidence(i, s, r) for r, (i, s) in enumerate(row)]
                for row in self.ranked_batch(queries, top_k)]

    def _save_vectors(self, corpus: _Corpus, path: Path) -> None:
        import faiss

        emb = self.embeddings
        if emb is None:
            raise ValueError(f"{type(corpus).__name__} has no index: call index(documents) first")
        def vectors(folder: Path) -> None:
            np.save(folder / "embeddings.npy", emb, allow_pickle=False)
            faiss.write_index(self._faiss, str(folder / "faiss.index"))

        params = corpus.to_dict()["init_parameters"]
        model = _local_model(self.model_name_or_path)
        if model is not None and self.model_id != EMBEDDED_MODEL_ID:
            # the folder as a path from anywhere, not from the directory of the save
            params = {**params, "model_name_or_path": str(model)}
        corpus._save_corpus(path, {"embedding_model": self.model_id,
                                   "embedding_fingerprint": model_fingerprint(
                                       self.model_name_or_path),
                                   "dimension": int(emb.shape[1])}, vectors, params)

    def _load_vectors(self, path: Path, manifest: dict[str, Any]) -> None:
        import faiss

        name = "embeddings.npy"
        try:
            self.embeddings = np.load(path / name, allow_pickle=False)
            name = "faiss.index"
            self._faiss = faiss.read_index(str(path / name))
        # a missing file too: NumPy raises FileNotFoundError, FAISS a RuntimeError
        except (ValueError, RuntimeError, FileNotFoundError) as exc:
            raise IndexMismatchError(
                f"index at {str(path)!r}: {name} is not readable ({exc}); "
                f"{_rebuild(path)}") from exc
        dim, n = manifest["dimension"], len(self.passages)
        if self._faiss.d != dim or self.embeddings.shape != (n, dim) or self._faiss.ntotal != n:
            raise IndexMismatchError(
                f"{str(path)!r} is inconsistent: manifest says {n} passages of dimension {dim}, "
                f"embeddings.npy has shape {self.embeddings.shape}, faiss.index holds "
                f"{self._faiss.ntotal} vectors of dimension {self._faiss.d}")

    def save(self, path: str | Path) -> None:
        """Write the index to a folder (manifest, documents, passages, embeddings, FAISS index)."""
        self._save_vectors(self, Path(path))

    @classmethod
    def load(cls, path: str | Path, *, model_name_or_path: str | None = None,
             device: str | None = None) -> DenseRetriever:
        """Read an index written by :meth:`save`.

        Args:
            path: The folder.
            model_name_or_path: Embedding model to query with (e.g. the same model moved to
                another folder); must be the one that wrote the index. When given it replaces
                the saved ``model_name_or_path`` (default: the saved one).
            device: Torch device for query encoding.

        Raises:
            FileNotFoundError: No index in ``path``.
            IndexMismatchError: The index was written by another embedding model, holds
                another kind of index, or its files disagree.
        """
        path = Path(path)
        manifest = _read_vector_manifest(path, cls.type_name, model_name_or_path)
        r = cls._from_manifest(path,
                               _load_parameters(manifest, model_name_or_path, device))
        r._load_corpus(path, manifest)
        r._load_vectors(path, manifest)
        return r


def _token_budget_of(model: Any, model_id: str) -> tuple[int, TokenCounter] | None:
    """:meth:`DenseRetriever._token_budget` of a loaded sentence-transformers ``model``."""
    tokenizer = getattr(model, "tokenizer", None)
    limit = getattr(model, "max_seq_length", None)
    if tokenizer is None or not is_int(limit) or limit <= 0:
        logger.warning("embedding model %s has no tokenizer or max_seq_length: passages are "
                       "chunked by characters only and may be truncated", model_id)
        return None
    special = int(tokenizer.num_special_tokens_to_add(pair=False))
    if limit - special <= 0:
        raise ValueError(f"embedding model {model_id!r} has max_seq_length {limit}, no room "
                         f"for text after its {special} special tokens")

    def count(texts: Sequence[str]) -> list[int]:
        ids = tokenizer(list(texts), add_special_tokens=False, truncation=False,
                        verbose=False)["input_ids"]
        return [len(i) for i in ids]

    logger.info("embedding model %s reads at most %d tokens of a text", model_id,
                limit - special)
    return limit - special, count


def _read_vector_manifest(path: Path, type_name: str, model_name_or_path: str | None
                          ) -> dict[str, Any]:
    """The manifest, once the model to query with is known to be the one that wrote it.

    That model is ``model_name_or_path`` when given, else the saved one. It is the same
    model when its name is (and, for a local folder, its fingerprint is, when recorded), or
    when it is a local folder with the recorded fingerprint (the same model moved).
    """
    manifest = _Corpus._read_manifest(path, type_name,
                                      {"embedding_model": str, "dimension": int})
    given = model_name_or_path
    if given is None:
        given = _saved_model(manifest)
    wrote, recorded = manifest["embedding_model"], manifest.get("embedding_fingerprint")
    if given is not None and given != EMBEDDED_MODEL_ID and Path(given).is_absolute() \
            and not Path(given).exists():
        raise FileNotFoundError(
            f"index in {str(path)!r} was written with the embedding model in {given!r}, which "
            "is not there any more; pass model_name_or_path= (the same model, moved)")
    same_name = _model_id(given) == wrote
    fingerprint = model_fingerprint(given) if recorded is not None else None
    if not ((same_name and fingerprint in (None, recorded))
            or (fingerprint is not None and fingerprint == recorded)):
        what = "another model" if same_name else repr(_model_id(given))
        raise IndexMismatchError(
            f"index in {str(path)!r} was written with embedding model {wrote!r}, not "
            f"{what}{' (its files differ)' if same_name else ''}; re-index the documents "
            "with the new model")
    return manifest


def _saved_model(manifest: dict[str, Any]) -> str | None:
    return manifest["init_parameters"].get("model_name_or_path")


def _local_model(model_name_or_path: str | None) -> Path | None:
    """The resolved folder of a local model (the embedded one for ``None``), else ``None``."""
    if model_name_or_path is None or model_name_or_path == EMBEDDED_MODEL_ID:
        try:
            model_name_or_path = embedded_embedding_model()
        except ModelLoadError:
            return None
    path = Path(model_name_or_path).expanduser()
    return path.resolve() if path.is_dir() else None


def model_fingerprint(model_name_or_path: str | None) -> str | None:
    """SHA-256 of a local model folder's files (names and bytes), ``None`` for a hub id.

    Recorded in saved indexes: the same model moved to another folder has the same
    fingerprint; another model with the same architecture does not.
    """
    folder = _local_model(model_name_or_path)
    return None if folder is None else folder_fingerprint(folder)


def _load_parameters(manifest: dict[str, Any], model_name_or_path: str | None,
                     device: str | None) -> dict[str, Any]:
    """Saved constructor keywords, with ``device`` and a given ``model_name_or_path``."""
    params = {**manifest["init_parameters"], "device": device}
    if model_name_or_path is not None:  # the same model (checked), perhaps at another path
        params["model_name_or_path"] = model_name_or_path
    return params


@register("retriever.hybrid.v1")
class HybridRetriever(_Corpus):
    """BM25 + dense retrieval fused by weighted reciprocal rank fusion (RRF).

    ``score(p) = dense_weight / (rrf_k + rank_dense(p)) + (1 - dense_weight) / (rrf_k +
    rank_bm25(p))`` with ranks from 1; each retriever contributes its ``candidates * top_k``
    best passages and a passage missing from a list gets no term from it.

    Args:
        model_name_or_path: Sentence-transformers model (``None``: the embedded MiniLM).
        device: Torch device (``None``: auto).
        batch_size: Encoding batch size.
        rrf_k: Reciprocal rank fusion constant (> 0).
        dense_weight: Weight of the dense ranking in [0, 1] (0: BM25 only, 1: dense only).
        index_type: FAISS index kind (``"flat"``, ``"hnsw"``, ``"ivf"``).
        dtype: Encoding dtype (see :class:`DenseRetriever`).
        candidates: How many candidates each retriever contributes per ``top_k`` (multiplier).
        chunk_max_chars: Passage size used to chunk long documents (a passage also holds
            at most the embedding model's ``max_seq_length`` tokens: none is truncated).
        chunk_overlap: Sentences shared by consecutive passages.
        show_progress_bar: ``None`` shows a bar on a terminal for large corpora.

    Example:
        >>> r = HybridRetriever().index([Passage("Paris is in France.", "d1")])  # doctest: +SKIP
        >>> r.retrieve("Where is Paris?", top_k=1)[0].span  # doctest: +SKIP
        (0, 19)
    """

    type_name = "retriever.hybrid.v1"

    def __init__(
        self,
        model_name_or_path: str | None = None,
        *,
        device: str | None = None,
        batch_size: int = 64,
        rrf_k: int = 60,
        dense_weight: float = 0.5,
        index_type: IndexType = "flat",
        dtype: str | None = None,
        candidates: int = 4,
        chunk_max_chars: int = 800,
        chunk_overlap: int = 1,
        show_progress_bar: bool | None = None,
    ) -> None:
        super().__init__(chunk_max_chars=chunk_max_chars, chunk_overlap=chunk_overlap)
        if not is_real(dense_weight) or not 0.0 <= dense_weight <= 1.0:
            raise ValueError(f"dense_weight must be in [0, 1], got {dense_weight!r}")
        if not is_int(rrf_k) or rrf_k <= 0:
            raise ValueError(f"rrf_k must be a positive int, got {rrf_k!r}")
        if not is_int(candidates) or candidates <= 0:
            raise ValueError(f"candidates must be a positive int, got {candidates!r}")
        self.rrf_k, self.dense_weight = int(rrf_k), float(dense_weight)
        self.candidates = int(candidates)
        self.bm25 = BM25Retriever(chunk_max_chars=chunk_max_chars, chunk_overlap=chunk_overlap)
        self.dense = DenseRetriever(model_name_or_path, device=device, batch_size=batch_size,
                                    index_type=index_type, dtype=dtype,
                                    chunk_max_chars=chunk_max_chars, chunk_overlap=chunk_overlap,
                                    show_progress_bar=show_progress_bar)

    @property
    def model_id(self) -> str:
        """Name of the embedding model recorded in saved indexes."""
        return self.dense.model_id

    def _params(self) -> dict[str, Any]:
        d = self.dense._params()
        return {**d, "rrf_k": self.rrf_k, "dense_weight": self.dense_weight,
                "candidates": self.candidates}

    def warm_up(self) -> None:
        """Load the embedding model."""
        self.dense.warm_up()

    def _token_budget(self) -> tuple[int, TokenCounter] | None:
        return self.dense._token_budget()

    def _share_corpus(self) -> None:
        for part in (self.bm25, self.dense):
            part.documents, part.passages = self.documents, self.passages

    def index(self, documents: Sequence[Passage]) -> HybridRetriever:
        """Chunk and index ``documents`` in both retrievers; returns ``self``.

        Nothing changes when this raises: the previous index stays whole.

        Raises:
            ValueError: ``documents`` is empty or repeats a ``source_id``.
            TypeError: ``documents`` is not a sequence of :class:`Passage`.
        """
        docs, passages = self._chunk(documents)
        weights, vocab = self.bm25._bm25_weights(passages)
        emb = self.dense.encode([p.text for p in passages])
        index = self.dense._build_faiss(emb)
        self._set_corpus(docs, passages)
        self._share_corpus()
        self.bm25._weights, self.bm25._vocab = weights, vocab
        self.dense.embeddings, self.dense._faiss = emb, index
        return self

    def retrieve_batch(self, queries: Sequence[str], *, top_k: int = 5) -> list[list[Evidence]]:
        """:meth:`retrieve` for several queries (dense queries encoded in one batch)."""
        queries = _check_queries(queries, top_k)
        self._require_index()
        if not queries:
            return []
        n = top_k * self.candidates
        none: list[list[tuple[int, float]]] = [[] for _ in queries]
        dense_rows = self.dense.ranked_batch(queries, n) if self.dense_weight > 0 else none
        bm25_rows = self.bm25.ranked_batch(queries, n) if self.dense_weight < 1 else none
        out = []
        for drow, brow in zip(dense_rows, bm25_rows, strict=True):
            fused: dict[int, float] = {}
            for rank, (i, _) in enumerate(drow, start=1):
                fused[i] = fused.get(i, 0.0) + self.dense_weight / (self.rrf_k + rank)
            for rank, (i, _) in enumerate(brow, start=1):
                fused[i] = fused.get(i, 0.0) + (1 - self.dense_weight) / (self.rrf_k + rank)
            best = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:top_k]
            out.append([self._evidence(i, s, r) for r, (i, s) in enumerate(best)])
        return out

    def save(self, path: str | Path) -> None:
        """Write the index to a folder (the dense part's files plus this manifest)."""
        self.dense._save_vectors(self, Path(path))

    @classmethod
    def load(cls, path: str | Path, *, model_name_or_path: str | None = None,
             device: str | None = None) -> HybridRetriever:
        """Read an index written by :meth:`save` (BM25 statistics are rebuilt).

        Args:
            path: The folder.
            model_name_or_path: Embedding model to query with (e.g. the same model moved to
                another folder); must be the one that wrote the index. When given it replaces
                the saved ``model_name_or_path`` (default: the saved one).
            device: Torch device for query encoding.

        Raises:
            FileNotFoundError: No index in ``path``.
            IndexMismatchError: ``model_name_or_path`` differs from the model that wrote it,
                the folder holds another kind of index, or its files disagree.
        """
        path = Path(path)
        manifest = _read_vector_manifest(path, cls.type_name, model_name_or_path)
        r = cls._from_manifest(path,
                               _load_parameters(manifest, model_name_or_path, device))
        r._load_corpus(path, manifest)
        r._share_corpus()
        r.bm25._build()
        r.dense._load_vectors(path, manifest)
        return r
