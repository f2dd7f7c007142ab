"""Retrieval: BM25, dense (sentence-transformers over FAISS) and a hybrid fused by RRF.

Every retriever indexes whole documents (:class:`~verifier.types.Passage`), chunks them into
passages that keep character offsets, and returns :class:`~verifier.types.Evidence` whose
``span`` indexes the original document (``retriever.document(source_id)[start:end] ==
evidence.content``). Indexes save to and load from a folder (JSON, NPY and the FAISS index; no
pickle).
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

import numpy as np

from rag.chunking import chunk_document
from verifier.embedded import embedded_embedding_model, resolve_device, resolve_dtype
from verifier.errors import IndexMismatchError
from verifier.registry import register
from verifier.types import Evidence, Passage

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1

STOP_WORDS = frozenset(
    "a an the and or but if then else of in on at to for from by with without as is are was "
    "were be been being am do does did have has had having it its this that these those there "
    "here what which who whom whose when where why how not no nor so than too very can could "
    "will would shall should may might must i me my we our you your he him his she her they "
    "them their about into over under again further once all any both each few more most other "
    "some such only own same just also s t".split()
)
_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """BM25 tokeniser: lower-case word characters, punctuation and stop-words removed.

    Example:
        >>> tokenize("The Eiffel Tower, in Paris!")
        ['eiffel', 'tower', 'paris']
    """
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOP_WORDS]


@runtime_checkable
class Retriever(Protocol):
    """One verb: ``retrieve(query, *, top_k) -> list[Evidence]`` (best first)."""

    def retrieve(self, query: str, *, top_k: int = 5) -> list[Evidence]:
        """Return the ``top_k`` best passages for ``query``."""
        ...


def _check_query(query: str, top_k: int) -> None:
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    if not query.strip():
        raise ValueError("query must not be empty")
    if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k <= 0:
        raise ValueError(f"top_k must be > 0, got {top_k!r}")


class _Corpus:
    """Documents, their chunked passages, and the folder format shared by the retrievers."""

    type_name: ClassVar[str] = ""

    def __init__(self, *, chunk_max_chars: int = 800, chunk_overlap: int = 1) -> None:
        if not isinstance(chunk_max_chars, int) or chunk_max_chars <= 0:
            raise ValueError(f"chunk_max_chars must be a positive int, got {chunk_max_chars!r}")
        self.chunk_max_chars = chunk_max_chars
        self.chunk_overlap = chunk_overlap
        self.documents: dict[str, str] = {}
        self.passages: list[Passage] = []

    def _ingest(self, documents: Sequence[Passage]) -> None:
        if isinstance(documents, (str, Passage)) or not isinstance(documents, Sequence):
            raise TypeError("documents must be a sequence of Passage")
        if len(documents) == 0:
            raise ValueError("cannot index an empty corpus: documents is empty")
        docs: dict[str, str] = {}
        for i, d in enumerate(documents):
            if not isinstance(d, Passage):
                raise TypeError(f"documents[{i}] must be a Passage, got {type(d).__name__}")
            if d.source_id in docs:
                raise ValueError(f"documents[{i}] repeats source_id {d.source_id!r}")
            docs[d.source_id] = d.text
        passages: list[Passage] = []
        for d in documents:
            passages.extend(chunk_document(d.text, d.source_id, max_chars=self.chunk_max_chars,
                                           overlap=self.chunk_overlap, metadata=d.metadata))
        self.documents, self.passages = docs, passages

    def _require_index(self) -> None:
        if not self.passages:
            raise ValueError(f"{type(self).__name__} has no index: call index(documents) first")

    def document(self, source_id: str) -> str:
        """Full original text of an indexed document."""
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
        """``{"type": registry name, "init_parameters": {...}}``."""
        return {"type": self.type_name, "init_parameters": self._params()}

    def _save_corpus(self, path: Path, extra: dict[str, Any]) -> None:
        self._require_index()
        path.mkdir(parents=True, exist_ok=True)
        manifest = {"format_version": FORMAT_VERSION, **self.to_dict(), **extra}
        (path / "manifest.json").write_text(json.dumps(manifest, indent=2))
        (path / "documents.json").write_text(json.dumps(self.documents, ensure_ascii=False))
        (path / "passages.json").write_text(
            json.dumps([p.to_dict() for p in self.passages], ensure_ascii=False))

    @staticmethod
    def _read_manifest(path: Path, expected_type: str) -> dict[str, Any]:
        path = Path(path)
        mf = path / "manifest.json"
        if not mf.is_file():
            raise FileNotFoundError(f"no index in {str(path)!r} (manifest.json missing)")
        manifest = json.loads(mf.read_text())
        if manifest.get("format_version") != FORMAT_VERSION:
            raise IndexMismatchError(
                f"index format {manifest.get('format_version')!r} in {str(path)!r}, "
                f"this version reads {FORMAT_VERSION}")
        if manifest.get("type") != expected_type:
            raise IndexMismatchError(
                f"{str(path)!r} holds a {manifest.get('type')!r} index, not {expected_type!r}")
        return manifest

    def _load_corpus(self, path: Path) -> None:
        self.documents = json.loads((path / "documents.json").read_text())
        self.passages = [Passage.from_dict(d)
                         for d in json.loads((path / "passages.json").read_text())]


@register("retriever.bm25.v1")
class BM25Retriever(_Corpus):
    """Lexical retrieval with BM25 (Okapi) over the chunked passages.

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
        self.k1, self.b = k1, b
        self._bm25: Any = None

    def _params(self) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b, **super()._params()}

    def index(self, documents: Sequence[Passage]) -> BM25Retriever:
        """Chunk and index ``documents``; returns ``self``."""
        self._ingest(documents)
        self._build()
        return self

    def _build(self) -> None:
        from rank_bm25 import BM25Okapi

        class _LuceneIdfBM25(BM25Okapi):
            # Okapi's idf is 0 or negative for terms in half the passages or more, which
            # breaks small corpora; Lucene's idf stays positive.
            def _calc_idf(self, nd: dict[str, int]) -> None:
                n = self.corpus_size
                self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in nd.items()}

        corpus = [tokenize(p.text) or ["_"] for p in self.passages]
        self._bm25 = _LuceneIdfBM25(corpus, k1=self.k1, b=self.b)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every passage, shape ``(n_passages,)``."""
        self._require_index()
        return np.asarray(self._bm25.get_scores(tokenize(query)), dtype=np.float64)

    def ranked(self, query: str, n: int) -> list[tuple[int, float]]:
        """``(passage index, score)`` of the ``n`` best passages with a positive score."""
        sc = self.scores(query)
        n = min(n, len(sc))
        top = np.argpartition(-sc, n - 1)[:n]
        top = top[np.argsort(-sc[top], kind="stable")]
        return [(int(i), float(sc[i])) for i in top if sc[i] > 0]

    def retrieve(self, query: str, *, top_k: int = 5) -> list[Evidence]:
        """Best passages first (only those sharing a term with the query)."""
        _check_query(query, top_k)
        return [self._evidence(i, s, r) for r, (i, s) in enumerate(self.ranked(query, top_k))]

    def retrieve_batch(self, queries: Sequence[str], *, top_k: int = 5) -> list[list[Evidence]]:
        """:meth:`retrieve` for several queries."""
        return [self.retrieve(q, top_k=top_k) for q in queries]

    def save(self, path: str | Path) -> None:
        """Write the index to a folder."""
        self._save_corpus(Path(path), {})

    @classmethod
    def load(cls, path: str | Path) -> BM25Retriever:
        """Read an index written by :meth:`save` (the BM25 statistics are rebuilt)."""
        path = Path(path)
        manifest = cls._read_manifest(path, cls.type_name)
        r = cls(**manifest["init_parameters"])
        r._load_corpus(path)
        r._build()
        return r


@register("retriever.dense.v1")
class DenseRetriever(_Corpus):
    """Dense retrieval: sentence-transformers embeddings (normalised) in a FAISS index.

    Args:
        model_name_or_path: Sentence-transformers id or folder; ``None`` is the embedded
            all-MiniLM-L6-v2.
        device: ``None`` (auto) or a torch device.
        batch_size: Texts per encoding batch.
        index_type: ``"flat"`` (exact inner product), ``"hnsw"`` or ``"ivf"`` (large corpora).
        dtype: Encoding dtype (``None``: bf16 where fast, else float32).
        show_progress_bar: ``None`` shows a bar on a terminal for large corpora.
    """

    type_name = "retriever.dense.v1"

    def __init__(
        self,
        model_name_or_path: str | None = None,
        *,
        device: str | None = None,
        batch_size: int = 64,
        index_type: Literal["flat", "hnsw", "ivf"] = "flat",
        dtype: str | None = None,
        chunk_max_chars: int = 800,
        chunk_overlap: int = 1,
        show_progress_bar: bool | None = None,
    ) -> None:
        super().__init__(chunk_max_chars=chunk_max_chars, chunk_overlap=chunk_overlap)
        if index_type not in ("flat", "hnsw", "ivf"):
            raise ValueError(f"index_type must be 'flat', 'hnsw' or 'ivf', got {index_type!r}")
        if not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        self.model_name_or_path = model_name_or_path
        self.device = device
        self.batch_size = batch_size
        self.index_type = index_type
        self.dtype = dtype
        self.show_progress_bar = show_progress_bar
        self._model: Any = None
        self._faiss: Any = None
        self.embeddings: np.ndarray | None = None

    @property
    def model_id(self) -> str:
        """Name recorded in saved indexes (``"embedded:all-MiniLM-L6-v2"`` for the default)."""
        return self.model_name_or_path or "embedded:all-MiniLM-L6-v2"

    def _params(self) -> dict[str, Any]:
        return {"model_name_or_path": self.model_name_or_path, "device": self.device,
                "batch_size": self.batch_size, "index_type": self.index_type,
                "dtype": self.dtype, **super()._params(),
                "show_progress_bar": self.show_progress_bar}

    def warm_up(self) -> None:
        """Load the embedding model once."""
        if self._model is not None:
            return
        import torch
        from sentence_transformers import SentenceTransformer

        device = resolve_device(self.device)
        path = self.model_name_or_path or embedded_embedding_model()
        model = SentenceTransformer(path, device=device)
        if resolve_dtype(self.dtype, device) == "bfloat16":
            model = model.to(torch.bfloat16)
        self._model = model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Normalised float32 embeddings, shape ``(len(texts), dim)``."""
        self.warm_up()
        show = self.show_progress_bar
        if show is None:
            import sys

            show = len(texts) > 5000 and sys.stderr.isatty()
        emb = self._model.encode(list(texts), batch_size=self.batch_size,
                                 normalize_embeddings=True, convert_to_numpy=True,
                                 show_progress_bar=show)
        return np.ascontiguousarray(emb, dtype=np.float32)

    def _build_faiss(self, emb: np.ndarray) -> None:
        import faiss

        dim = emb.shape[1]
        if self.index_type == "hnsw":
            index = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
        elif self.index_type == "ivf":
            nlist = max(1, min(4096, int(np.sqrt(len(emb)))))
            quant = faiss.IndexFlatIP(dim)
            index = faiss.IndexIVFFlat(quant, dim, nlist, faiss.METRIC_INNER_PRODUCT)
            index.train(emb)
            index.nprobe = min(nlist, 16)
        else:
            index = faiss.IndexFlatIP(dim)
        index.add(emb)
        self._faiss = index

    def index(self, documents: Sequence[Passage]) -> DenseRetriever:
        """Chunk, embed and index ``documents``; returns ``self``."""
        self._ingest(documents)
        self.embeddings = self.encode([p.text for p in self.passages])
        self._build_faiss(self.embeddings)
        return self

    def ranked_batch(self, queries: Sequence[str], n: int) -> list[list[tuple[int, float]]]:
        """``(passage index, cosine)`` of the ``n`` nearest passages of each query."""
        self._require_index()
        q = self.encode(queries)
        scores, ids = self._faiss.search(q, min(n, len(self.passages)))
        return [[(int(i), float(s)) for i, s in zip(row_i, row_s, strict=True) if i >= 0]
                for row_i, row_s in zip(ids, scores, strict=True)]

    def retrieve(self, query: str, *, top_k: int = 5) -> list[Evidence]:
        """Nearest passages first (score = cosine similarity)."""
        return self.retrieve_batch([query], top_k=top_k)[0]

    def retrieve_batch(self, queries: Sequence[str], *, top_k: int = 5) -> list[list[Evidence]]:
        """:meth:`retrieve` for several queries, encoded in one batch."""
        for q in queries:
            _check_query(q, top_k)
        return [[self._evidence(i, s, r) for r, (i, s) in enumerate(row)]
                for row in self.ranked_batch(queries, top_k)]

    def _save_vectors(self, corpus: _Corpus, path: Path) -> None:
        import faiss

        emb = self.embeddings
        if emb is None:
            raise ValueError(f"{type(corpus).__name__} has no index: call index(documents) first")
        corpus._save_corpus(path, {"embedding_model": self.model_id,
                                   "dimension": int(emb.shape[1])})
        np.save(path / "embeddings.npy", emb)
        faiss.write_index(self._faiss, str(path / "faiss.index"))

    def _load_vectors(self, path: Path, manifest: dict[str, Any]) -> None:
        import faiss

        self.embeddings = np.load(path / "embeddings.npy")
        self._faiss = faiss.read_index(str(path / "faiss.index"))
        if self._faiss.d != manifest["dimension"]:
            raise IndexMismatchError(f"FAISS index dimension {self._faiss.d} != manifest "
                                     f"{manifest['dimension']} in {str(path)!r}")

    def save(self, path: str | Path) -> None:
        """Write the index to a folder (manifest, passages, embeddings, FAISS index)."""
        self._save_vectors(self, Path(path))

    @classmethod
    def load(cls, path: str | Path, *, model_name_or_path: str | None = None,
             device: str | None = None) -> DenseRetriever:
        """Read an index written by :meth:`save`.

        Args:
            path: The folder.
            model_name_or_path: Embedding model to query with; must be the one that wrote the
                index (default: that one).
            device: Torch device for query encoding.

        Raises:
            IndexMismatchError: The index was written by another embedding model.
        """
        path = Path(path)
        manifest = _read_vector_manifest(path, cls.type_name, model_name_or_path)
        r = cls(**{**manifest["init_parameters"], "device": device})
        r._load_corpus(path)
        r._load_vectors(path, manifest)
        return r


def _read_vector_manifest(path: Path, type_name: str, model_name_or_path: str | None
                          ) -> dict[str, Any]:
    manifest = _Corpus._read_manifest(path, type_name)
    if model_name_or_path is not None and model_name_or_path != manifest["embedding_model"]:
        raise IndexMismatchError(
            f"index in {str(path)!r} was written with embedding model "
            f"{manifest['embedding_model']!r}, not {model_name_or_path!r}")
    return manifest


@register("retriever.hybrid.v1")
class HybridRetriever(_Corpus):
    """BM25 + dense retrieval fused by weighted reciprocal rank fusion.

    ``score(p) = dense_weight / (rrf_k + rank_dense(p)) + (1 - dense_weight) / (rrf_k +
    rank_bm25(p))`` (ranks from 1; a passage missing from a list gets no term from it).

    Args:
        model_name_or_path: Sentence-transformers model (``None``: the embedded MiniLM).
        device: Torch device (``None``: auto).
        batch_size: Encoding batch size.
        rrf_k: Reciprocal rank fusion constant.
        dense_weight: Weight of the dense ranking in [0, 1].
        index_type: FAISS index kind (``"flat"``, ``"hnsw"``, ``"ivf"``).
        candidates: How many candidates each retriever contributes per ``top_k`` (multiplier).

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
        index_type: Literal["flat", "hnsw", "ivf"] = "flat",
        dtype: str | None = None,
        candidates: int = 4,
        chunk_max_chars: int = 800,
        chunk_overlap: int = 1,
        show_progress_bar: bool | None = None,
    ) -> None:
        super().__init__(chunk_max_chars=chunk_max_chars, chunk_overlap=chunk_overlap)
        if not 0.0 <= float(dense_weight) <= 1.0:
            raise ValueError(f"dense_weight must be in [0, 1], got {dense_weight!r}")
        if not isinstance(rrf_k, int) or rrf_k <= 0:
            raise ValueError(f"rrf_k must be a positive int, got {rrf_k!r}")
        if not isinstance(candidates, int) or candidates <= 0:
            raise ValueError(f"candidates must be a positive int, got {candidates!r}")
        self.rrf_k, self.dense_weight, self.candidates = rrf_k, float(dense_weight), candidates
        self.bm25 = BM25Retriever(chunk_max_chars=chunk_max_chars, chunk_overlap=chunk_overlap)
        self.dense = DenseRetriever(model_name_or_path, device=device, batch_size=batch_size,
                                    index_type=index_type, dtype=dtype,
                                    chunk_max_chars=chunk_max_chars, chunk_overlap=chunk_overlap,
                                    show_progress_bar=show_progress_bar)

    def _params(self) -> dict[str, Any]:
        d = self.dense._params()
        return {**d, "rrf_k": self.rrf_k, "dense_weight": self.dense_weight,
                "candidates": self.candidates}

    def warm_up(self) -> None:
        """Load the embedding model."""
        self.dense.warm_up()

    def index(self, documents: Sequence[Passage]) -> HybridRetriever:
        """Chunk and index ``documents`` in both retrievers; returns ``self``."""
        self._ingest(documents)
        self.bm25.documents, self.bm25.passages = self.documents, self.passages
        self.bm25._build()
        self.dense.documents, self.dense.passages = self.documents, self.passages
        self.dense.embeddings = self.dense.encode([p.text for p in self.passages])
        self.dense._build_faiss(self.dense.embeddings)
        return self

    def retrieve(self, query: str, *, top_k: int = 5) -> list[Evidence]:
        """Best fused passages first (score = fused RRF score)."""
        return self.retrieve_batch([query], top_k=top_k)[0]

    def retrieve_batch(self, queries: Sequence[str], *, top_k: int = 5) -> list[list[Evidence]]:
        """:meth:`retrieve` for several queries (dense queries encoded in one batch)."""
        for q in queries:
            _check_query(q, top_k)
        self._require_index()
        n = top_k * self.candidates
        dense_rows = self.dense.ranked_batch(queries, n) if self.dense_weight > 0 else \
            [[] for _ in queries]
        out = []
        for q, drow in zip(queries, dense_rows, strict=True):
            brow = self.bm25.ranked(q, n) if self.dense_weight < 1 else []
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

        Raises:
            IndexMismatchError: ``model_name_or_path`` differs from the model that wrote it.
        """
        path = Path(path)
        manifest = _read_vector_manifest(path, cls.type_name, model_name_or_path)
        r = cls(**{**manifest["init_parameters"], "device": device})
        r._load_corpus(path)
        for part in (r.bm25, r.dense):
            part.documents, part.passages = r.documents, r.passages
        r.bm25._build()
        r.dense._load_vectors(path, manifest)
        return r
