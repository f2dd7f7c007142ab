"""NLI contradiction detector: a local cross-encoder scoring (evidence, claim) pairs.

``NLIDetector.predict(pairs)`` returns an ``(n, 3)`` float32 array of probabilities with
columns ``entailment, neutral, contradiction`` (:attr:`NLIDetector.labels`), rows in input
order. Any Hugging Face sequence-classification checkpoint works: the label order is read
from ``config.id2label`` (see :func:`map_labels`).

Long evidence is never silently truncated: a premise that does not fit the window next to
the hypothesis is split into sentence-aligned chunks (one sentence of overlap) that cover the
whole premise; every chunk is scored and the pair's row is aggregated (see
:func:`aggregate_chunks`). The per-chunk scores stay available via
:meth:`NLIDetector.predict_chunks`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from verifier.embedded import DEFAULT_NLI_MODEL, embedded_model_dir, resolve_device, resolve_dtype
from verifier.errors import LabelMappingError, ModelLoadError
from verifier.registry import register
from verifier.text import sentence_spans

logger = logging.getLogger(__name__)

LABELS: tuple[str, str, str] = ("entailment", "neutral", "contradiction")

_SYNONYMS: dict[str, str] = {
    **dict.fromkeys(["entailment", "entailed", "entails", "supports", "supported", "support",
                     "consistent", "factual", "true"], "entailment"),
    **dict.fromkeys(["neutral", "not_enough_info", "not enough info", "nei", "unknown",
                     "not enough evidence"], "neutral"),
    **dict.fromkeys(["contradiction", "contradicted", "contradicts", "contradictory", "refutes",
                     "refuted", "refute", "false"], "contradiction"),
    **dict.fromkeys(["not_entailment", "not entailment", "non-entailment", "non_entailment",
                     "not_supported", "unsupported", "inconsistent", "hallucinated",
                     "hallucination"], "not_entailment"),
}


@dataclass(frozen=True)
class LabelMap:
    """How a checkpoint's output columns become (entailment, neutral, contradiction).

    Attributes:
        kind: ``"3class"``, ``"2class-entailment"`` (entailment vs not-entailment),
            ``"2class-refutes"`` (supported vs refuted) or ``"1logit"`` (sigmoid = p(support)).
        index: Column of the checkpoint for each needed name.
    """

    kind: Literal["3class", "2class-entailment", "2class-refutes", "1logit"]
    index: dict[str, int]


def map_labels(id2label: dict[Any, str] | None, num_labels: int) -> LabelMap:
    """Map a checkpoint's ``id2label`` onto entailment / neutral / contradiction.

    Names are matched case-insensitively, with synonyms (``supports``, ``refuted``,
    ``not_entailment``, ``nei``...). Rules for checkpoints with fewer classes:

    - entailment + not_entailment: p(not_entailment) goes to *neutral*; contradiction is 0
      (such models cannot tell "contradicted" from "not supported").
    - entailment (supported) + contradiction (refuted): neutral is 0.
    - one logit (HHEM / MiniCheck style): sigmoid(logit) is p(entailment), the rest neutral.

    Raises:
        LabelMappingError: Generic names (``LABEL_0``) or a set that cannot be mapped.
    """
    if num_labels == 1:
        return LabelMap("1logit", {"entailment": 0})
    if not id2label:
        raise LabelMappingError("the checkpoint has no id2label; cannot tell its label order")
    names: dict[str, int] = {}
    raw = {int(k): str(v) for k, v in id2label.items()}
    for idx, name in raw.items():
        key = name.strip().lower().replace("-", "_") if name else ""
        canon = _SYNONYMS.get(key) or _SYNONYMS.get(key.replace("_", " "))
        if canon is None or canon in names:
            raise LabelMappingError(
                f"cannot map the checkpoint's labels {sorted(raw.values())} to "
                f"entailment/neutral/contradiction (label {name!r} unknown or repeated)"
            )
        names[canon] = idx
    got = set(names)
    if got == {"entailment", "neutral", "contradiction"}:
        return LabelMap("3class", names)
    if got == {"entailment", "not_entailment"}:
        return LabelMap("2class-entailment", names)
    if got == {"entailment", "contradiction"}:
        return LabelMap("2class-refutes", names)
    raise LabelMappingError(
        f"cannot map the checkpoint's labels {sorted(raw.values())} to "
        "entailment/neutral/contradiction"
    )


def to_three_columns(logits: np.ndarray, label_map: LabelMap) -> np.ndarray:
    """Turn raw logits ``(n, num_labels)`` into ``(n, 3)`` probabilities (e, n, c)."""
    logits = np.asarray(logits, dtype=np.float64)
    n = logits.shape[0]
    out = np.zeros((n, 3), dtype=np.float64)
    if label_map.kind == "1logit":
        p = 1.0 / (1.0 + np.exp(-logits[:, 0]))
        out[:, 0], out[:, 1] = p, 1.0 - p
        return out.astype(np.float32)
    z = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(z)
    probs /= probs.sum(axis=1, keepdims=True)
    idx = label_map.index
    out[:, 0] = probs[:, idx["entailment"]]
    if label_map.kind == "3class":
        out[:, 1] = probs[:, idx["neutral"]]
        out[:, 2] = probs[:, idx["contradiction"]]
    elif label_map.kind == "2class-entailment":
        out[:, 1] = probs[:, idx["not_entailment"]]
    else:
        out[:, 2] = probs[:, idx["contradiction"]]
    return out.astype(np.float32)


def aggregate_chunks(chunk_probs: np.ndarray) -> np.ndarray:
    """Aggregate ``(k, 3)`` per-chunk probabilities into one row.

    Rule: the chunk that most entails (max p(entailment)) and the chunk that most contradicts
    (max p(contradiction)) compete; the row of whichever has the higher of those two
    probabilities is returned (ties go to entailment). So entailment is the max over chunks
    when some chunk entails, contradiction comes from the most contradicting chunk otherwise,
    and the row still sums to 1. One chunk returns its own row.
    """
    chunk_probs = np.asarray(chunk_probs, dtype=np.float32)
    if chunk_probs.shape[0] == 1:
        return chunk_probs[0]
    ie = int(chunk_probs[:, 0].argmax())
    ic = int(chunk_probs[:, 2].argmax())
    return chunk_probs[ie] if chunk_probs[ie, 0] >= chunk_probs[ic, 2] else chunk_probs[ic]


def supports_decision(probs: np.ndarray) -> np.ndarray:
    """SUPPORTS-vs-REFUTES decision for 2-class data: True iff p(entailment) > p(contradiction)."""
    probs = np.asarray(probs)
    return probs[:, 0] > probs[:, 2]


@dataclass(frozen=True)
class PairScores:
    """Scores of one (premise, hypothesis) pair, with its chunks.

    Attributes:
        probabilities: ``(3,)`` aggregated probabilities (entailment, neutral, contradiction).
        chunk_spans: ``(start, end)`` character span of each chunk in the premise; together
            they cover the whole premise.
        chunk_probabilities: ``(k, 3)`` probabilities of each chunk.
        best_chunk: Index of the chunk whose row was returned.
    """

    probabilities: np.ndarray
    chunk_spans: tuple[tuple[int, int], ...]
    chunk_probabilities: np.ndarray
    best_chunk: int


@register("nli.hf.v1")
class NLIDetector:
    """Cross-encoder NLI detector over (evidence, claim) pairs.

    Args:
        model_name_or_path: Hugging Face id or local folder; ``None`` is the embedded model
            shipped in ``models/nli-minilm-l6``.
        device: ``None`` (auto: cuda, mps, cpu) or a torch device name.
        batch_size: Pairs per forward pass.
        max_length: Model window in tokens; longer premises are chunked, never truncated.
        dtype: ``None``/``"auto"`` (bf16 on GPUs and on CPUs with AMX/AVX512-BF16, else
            float32), ``"float32"``, ``"bfloat16"`` or ``"float16"``.
        trust_remote_code: Let a model repository run its own code (off by default).
        show_progress_bar: ``None`` shows a bar for large inputs on a terminal only.

    Example:
        >>> det = NLIDetector()  # doctest: +SKIP
        >>> det.predict([("Paris is in France.", "Paris is French.")])  # doctest: +SKIP
        array([[0.97, 0.02, 0.01]], dtype=float32)
    """

    labels: tuple[str, str, str] = LABELS

    def __init__(
        self,
        model_name_or_path: str | Path | None = None,
        *,
        device: str | None = None,
        batch_size: int = 64,
        max_length: int = 512,
        dtype: str | None = None,
        trust_remote_code: bool = False,
        show_progress_bar: bool | None = None,
    ) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive int, got {batch_size!r}")
        if not isinstance(max_length, int) or max_length < 16:
            raise ValueError(f"max_length must be an int >= 16, got {max_length!r}")
        if dtype not in (None, "auto", "float32", "bfloat16", "float16"):
            raise ValueError(
                f"dtype must be None, 'auto', 'float32', 'bfloat16' or 'float16', got {dtype!r}"
            )
        self.model_name_or_path = None if model_name_or_path is None else str(model_name_or_path)
        self.device = device
        self.batch_size = batch_size
        self.max_length = max_length
        self.dtype = dtype
        self.trust_remote_code = trust_remote_code
        self.show_progress_bar = show_progress_bar
        self._model: Any = None
        self._tokenizer: Any = None
        self._label_map: LabelMap | None = None
        self._device: str | None = None
        self._dtype: str | None = None

    # ------------------------------------------------------------------ loading
    def to_dict(self) -> dict[str, Any]:
        """Serialisable configuration: ``{"type": "nli.hf.v1", "init_parameters": {...}}``."""
        return {
            "type": "nli.hf.v1",
            "init_parameters": {
                "model_name_or_path": self.model_name_or_path,
                "device": self.device,
                "batch_size": self.batch_size,
                "max_length": self.max_length,
                "dtype": self.dtype,
                "trust_remote_code": self.trust_remote_code,
                "show_progress_bar": self.show_progress_bar,
            },
        }

    @property
    def resolved_dtype(self) -> str:
        """The dtype actually used (after warm-up)."""
        self.warm_up()
        assert self._dtype is not None  # set by warm_up
        return self._dtype

    @property
    def label_map(self) -> LabelMap:
        """How the checkpoint's columns map to (entailment, neutral, contradiction)."""
        self.warm_up()
        assert self._label_map is not None
        return self._label_map

    def warm_up(self) -> None:
        """Load tokenizer and model once (called by the first prediction)."""
        if self._model is not None:
            return
        import torch
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

        path: str = self.model_name_or_path or str(embedded_model_dir(DEFAULT_NLI_MODEL))
        device = resolve_device(self.device)
        dtype = resolve_dtype(self.dtype, device)
        try:
            config = AutoConfig.from_pretrained(path, trust_remote_code=self.trust_remote_code)
            label_map = map_labels(getattr(config, "id2label", None), config.num_labels)
            tokenizer = AutoTokenizer.from_pretrained(path,
                                                      trust_remote_code=self.trust_remote_code)
            local = Path(path)
            kwargs: dict[str, Any] = {}
            if local.is_dir() and any(local.glob("*.safetensors")):
                kwargs["use_safetensors"] = True
            model = AutoModelForSequenceClassification.from_pretrained(
                path, trust_remote_code=self.trust_remote_code, dtype=getattr(torch, dtype),
                **kwargs,
            )
        except LabelMappingError:
            raise
        except (OSError, ValueError) as exc:
            raise ModelLoadError(f"could not load NLI model {path!r}: {exc}") from exc
        model.to(device).eval()
        limit = getattr(model.config, "max_position_embeddings", None)
        if isinstance(limit, int) and limit > 2:
            # RoBERTa-style models reserve two positions for the padding offset.
            usable = limit - 2 if getattr(model.config, "model_type", "") in (
                "roberta", "xlm-roberta", "mpnet", "camembert") else limit
            self._window = min(self.max_length, usable)
        else:
            self._window = self.max_length
        self._model, self._tokenizer, self._label_map = model, tokenizer, label_map
        self._device, self._dtype = device, dtype
        logger.info("loaded NLI model %s on %s (%s), labels %s", path, device, dtype,
                    label_map.kind)

    # ------------------------------------------------------------------ inputs
    @staticmethod
    def _validate(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        if isinstance(pairs, (str, bytes)):
            raise TypeError("pairs must be a sequence of (premise, hypothesis) pairs, got a str")
        out = []
        for i, pair in enumerate(pairs):
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise TypeError(f"pairs[{i}] must be a (premise, hypothesis) pair, got {pair!r}")
            prem, hyp = pair
            if not isinstance(prem, str) or not isinstance(hyp, str):
                raise TypeError(f"pairs[{i}] must hold two str, got "
                                f"({type(prem).__name__}, {type(hyp).__name__})")
            if not prem.strip():
                raise ValueError(f"pairs[{i}] has an empty premise")
            if not hyp.strip():
                raise ValueError(f"pairs[{i}] has an empty hypothesis")
            out.append((prem, hyp))
        return out

    def _chunk_premise(self, premise: str, hyp_tokens: int) -> list[tuple[int, int]]:
        """Sentence-aligned chunks (one sentence of overlap) covering the whole premise."""
        tok = self._tokenizer
        budget = self._window - hyp_tokens - 3 - 2  # specials and a small safety margin
        if budget < 8:
            raise ValueError(
                f"the hypothesis has {hyp_tokens} tokens, too long for the model window "
                f"of {self._window}"
            )
        enc = tok(premise, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        offsets = [o for o in enc["offset_mapping"] if o[1] > o[0]]
        if len(offsets) <= budget:
            return [(0, len(premise))]
        # Token count of each sentence span, from the offsets of the whole premise.
        units: list[tuple[int, int, int]] = []  # (start, end, n_tokens)
        for s, e in sentence_spans(premise):
            toks = [o for o in offsets if o[0] >= s and o[0] < e]
            if len(toks) <= budget:
                units.append((s, e, len(toks)))
                continue
            # A sentence longer than the window: split on token boundaries.
            piece_start = s
            for j in range(budget, len(toks), budget):
                cut = toks[j][0]
                units.append((piece_start, cut, budget))
                piece_start = cut
            units.append((piece_start, e, len(toks) - budget * ((len(toks) - 1) // budget)))
        chunks: list[tuple[int, int]] = []
        i = 0
        while i < len(units):
            j, used = i, 0
            while j < len(units) and used + units[j][2] <= budget:
                used += units[j][2]
                j += 1
            j = max(j, i + 1)
            chunks.append((units[i][0], units[j - 1][1]))
            if j >= len(units):
                break
            # one unit of overlap, unless that unit alone fills the chunk
            i = j - 1 if j - 1 > i else j
        # Chunks tile the premise: stretch the first and last to its ends.
        chunks[0] = (0, chunks[0][1])
        chunks[-1] = (chunks[-1][0], len(premise))
        return chunks

    # ------------------------------------------------------------------ prediction
    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Score (premise, hypothesis) pairs.

        Args:
            pairs: Sequence of ``(premise, hypothesis)``: the evidence first, the claim second.

        Returns:
            ``(n, 3)`` float32 probabilities, columns :attr:`labels`, rows in input order.
            An empty input gives a ``(0, 3)`` array.
        """
        if len(pairs) == 0:
            return np.zeros((0, 3), dtype=np.float32)
        return np.stack([s.probabilities for s in self.predict_chunks(pairs)]).astype(np.float32)

    def predict_chunks(self, pairs: Sequence[tuple[str, str]]) -> list[PairScores]:
        """Score pairs and keep the per-chunk scores (see :class:`PairScores`)."""
        pairs = self._validate(pairs)
        if not pairs:
            return []
        self.warm_up()
        tok = self._tokenizer
        hyps = [h for _, h in pairs]
        hyp_lens = [len(x) for x in tok(hyps, add_special_tokens=False, verbose=False)["input_ids"]]
        prem_lens = [len(x) for x in tok([p for p, _ in pairs], add_special_tokens=False,
                                         verbose=False)["input_ids"]]
        units: list[tuple[int, str, str]] = []  # (pair index, premise chunk text, hypothesis)
        spans: list[list[tuple[int, int]]] = []
        for i, (prem, hyp) in enumerate(pairs):
            if prem_lens[i] + hyp_lens[i] + 3 <= self._window:
                sp = [(0, len(prem))]
            else:
                sp = self._chunk_premise(prem, hyp_lens[i])
            spans.append(sp)
            units.extend((i, prem[s:e], hyp) for s, e in sp)
        probs = self._score_units([(p, h) for _, p, h in units])
        out: list[PairScores] = []
        k = 0
        for i in range(len(pairs)):
            n = len(spans[i])
            cp = probs[k : k + n]
            k += n
            row = aggregate_chunks(cp)
            best = int(np.flatnonzero((cp == row).all(axis=1))[0])
            out.append(PairScores(row, tuple(spans[i]), cp, best))
        return out

    def _score_units(self, units: list[tuple[str, str]]) -> np.ndarray:
        import torch

        tok, model = self._tokenizer, self._model
        enc = tok([p for p, _ in units], [h for _, h in units], truncation=False,
                  add_special_tokens=True, verbose=False)
        ids = enc["input_ids"]
        too_long = [i for i, x in enumerate(ids) if len(x) > self._window]
        if too_long:
            # Should not happen (chunks leave a margin); never truncate silently.
            raise RuntimeError(
                f"internal chunking error: {len(too_long)} unit(s) exceed the window "
                f"{self._window} tokens (first: {len(ids[too_long[0]])})"
            )
        keys = [k for k in ("input_ids", "token_type_ids", "attention_mask") if k in enc]
        order = np.argsort([len(x) for x in ids], kind="stable")
        n_labels = model.config.num_labels
        logits = np.zeros((len(units), n_labels), dtype=np.float32)
        show = self.show_progress_bar
        if show is None:
            import sys

            show = len(units) > 20 * self.batch_size and sys.stderr.isatty()
        batches = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        if show:
            from tqdm.auto import tqdm

            batches = tqdm(batches, desc="NLI", unit="batch")
        pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0
        with torch.inference_mode():
            for b in batches:
                # Widths rounded up to a multiple of 8: fewer distinct shapes keep the CPU
                # allocator from fragmenting over long runs (and suit the matmul kernels).
                width = min(-(-max(len(ids[i]) for i in b) // 8) * 8, self._window)
                feats = {}
                for key in keys:
                    fill = pad_id if key == "input_ids" else 0
                    arr = np.full((len(b), width), fill, dtype=np.int64)
                    for r, i in enumerate(b):
                        seq = enc[key][i]
                        arr[r, : len(seq)] = seq
                    feats[key] = torch.from_numpy(arr).to(self._device)
                out = model(**feats).logits
                logits[b] = out.float().cpu().numpy()
        return to_three_columns(logits, self._label_map)  # type: ignore[arg-type]
