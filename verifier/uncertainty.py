"""Uncertainty signals of a claim.

From the generator's token log-probs, from teacher forcing, from self-consistency across
sampled drafts (SelfCheckGPT-style), and from the NLI distribution itself.

Every part can be turned off; a signal that cannot be computed (no log-probs, no generator,
a generator without ``score`` for teacher forcing, a generator call that fails) is ``NaN``,
never an error.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from verifier.checking import is_int
from verifier.text import is_blank
from verifier.types import Claim, Generation

logger = logging.getLogger(__name__)

FEATURES: tuple[str, ...] = (
    "unc.mean_surprisal", "unc.max_surprisal", "unc.min_logprob", "unc.tokens",
    "unc.self_consistency", "unc.nli_entropy",
)


def claim_token_logprobs(generation: Generation, claim: Claim) -> list[float]:
    """Log-probs of the draft tokens that overlap the claim's span (needs token offsets).

    A character split over tokens belongs to the token that completes it
    (:func:`rag.generation.token_offsets`); the tokens before that one, which hold its first
    bytes (an empty span, or only the space before it), are the claim's too.

    Example:
        >>> g = Generation(" 東京", (" ", "", "東", "京"), (-1.0, -2.0, -3.0, -4.0),
        ...                ((0, 1), (1, 1), (1, 2), (2, 3)))
        >>> claim_token_logprobs(g, Claim("東京", (1, 3)))
        [-1.0, -2.0, -3.0, -4.0]
    """
    offsets, logprobs = generation.token_offsets, generation.token_logprobs
    if logprobs is None or offsets is None:
        return []
    a, b = claim.span
    picked = [k for k, (s, e) in enumerate(offsets) if s < b and e > a]
    if not picked:
        return []
    k = picked[0] - 1
    while k >= 0 and offsets[k][0] == offsets[k][1] == a:  # the first character's bytes
        k -= 1
    lead = k >= 0 and offsets[k][1] == a and generation.text[offsets[k][0]:a].isspace()
    split_char = len(generation.text[a:a + 1].encode("utf-8")) > 1  # "東", not "R"
    if lead and (k + 1 < picked[0] or (offsets[picked[0]][0] == a and split_char)):
        k -= 1  # a space token with the first bytes of a character split over tokens
    return [logprobs[j] for j in range(k + 1, picked[0])] + [logprobs[j] for j in picked]


def logprob_features(logprobs: Sequence[float]) -> dict[str, float]:
    """Mean and max surprisal (−log p), minimum log-prob and token count; NaN when empty.

    Only the chosen tokens' log-probs are known from most back-ends, so surprisal stands in
    for the per-token entropy. Without log-probs every feature, the token count included, is
    missing (``NaN``), as when the draft is a plain string.
    """
    if not logprobs:
        return {"unc.mean_surprisal": math.nan, "unc.max_surprisal": math.nan,
                "unc.min_logprob": math.nan, "unc.tokens": math.nan}
    lp = np.asarray(logprobs, dtype=np.float64)
    return {"unc.mean_surprisal": float(-lp.mean()), "unc.max_surprisal": float(-lp.min()),
            "unc.min_logprob": float(lp.min()), "unc.tokens": float(len(lp))}


def nli_entropy(probs: Sequence[float]) -> float:
    """Entropy (nats) of an NLI distribution (entailment, neutral, contradiction)."""
    p = np.clip(np.asarray(probs, dtype=np.float64), 1e-12, 1.0)
    return float(-(p * np.log(p)).sum())


class UncertaintyDetector:
    """Per-claim uncertainty features.

    Args:
        generator: A local generator with ``score(prompt, continuation)`` (teacher forcing,
            used when the draft came without log-probs) and ``generate(prompt, n=...)``
            (self-consistency samples); ``None`` turns both off. A generator without
            ``score`` (an OpenAI-compatible server) gives no teacher forcing: a warning says
            so once, and the log-prob features of a draft without log-probs are ``NaN``.
        nli: An NLI detector, needed for self-consistency.
        samples: Extra drafts sampled for self-consistency (0 turns it off); the generator
            must sample (a ``temperature`` of 0 is greedy: every sample would be the same
            draft, an error). Empty samples are left out; with none left,
            ``unc.self_consistency`` is ``NaN``.
        teacher_forcing: Score the draft by teacher forcing when it has no log-probs: the
            whole draft once after the prompt, each claim reading its own tokens in context
            (as the draft's own log-probs are read); each claim's text alone when the
            generator gives no token offsets or not the draft back as written.

    A generator call that raises (a server down, say) is logged as a warning and leaves the
    features it would give ``NaN``: the claims are still verified. Self-consistency without
    a ``prompt`` is ``NaN`` too (a warning says so once).

    Example:
        >>> det = UncertaintyDetector(samples=0)
        >>> g = Generation("Paris is big.", ("Paris", " is", " big."), (-0.1, -0.2, -3.0),
        ...                ((0, 5), (5, 8), (8, 13)))
        >>> round(det.features(g, [Claim("Paris is big.", (0, 13))])[0]["unc.max_surprisal"], 1)
        3.0
    """

    def __init__(self, generator: Any = None, nli: Any = None, *, samples: int = 0,
                 teacher_forcing: bool = True) -> None:
        if not is_int(samples) or samples < 0:
            raise ValueError(f"samples must be an int >= 0, got {samples!r}")
        samples = int(samples)
        if samples and (generator is None or nli is None):
            raise ValueError("self-consistency (samples > 0) needs a generator and an nli")
        temperature = getattr(generator, "temperature", None)
        if samples and temperature is not None and temperature == 0:
            raise ValueError(
                f"self-consistency (samples={samples}) needs a generator that samples, got "
                f"{type(generator).__name__} with temperature=0 (greedy: every sample would "
                f"be the same draft and self-consistency always 1.0); give it a temperature "
                f"> 0, e.g. 0.7, or samples=0")
        self._can_score = callable(getattr(generator, "score", None))
        if generator is not None and teacher_forcing and not self._can_score:
            logger.warning("the generator %s has no score(): no teacher forcing, so a draft "
                           "without log-probs gets no log-prob features (NaN)",
                           type(generator).__name__)
        self.generator, self.nli = generator, nli
        self.samples, self.teacher_forcing = samples, teacher_forcing
        self._warned_no_prompt = False

    def _ask(self, what: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``call(*args, **kwargs)``, or ``None`` after a warning if it raises."""
        try:
            return call(*args, **kwargs)
        except Exception as exc:  # a signal is NaN, never an error (a server down, say)
            logger.warning("the generator's %s() failed (%s: %s): the uncertainty features "
                           "it gives are missing (NaN)", what, type(exc).__name__, exc)
            return None

    def features(self, draft: Generation, claims: Sequence[Claim], *, prompt: str | None = None,
                 nli_probs: np.ndarray | None = None) -> list[dict[str, float]]:
        """One feature dict per claim (keys: :data:`FEATURES`).

        Args:
            draft: The draft the claims come from.
            claims: Its claims (spans index ``draft.text``).
            prompt: The prompt that produced the draft (teacher forcing, sampling).
            nli_probs: ``(len(claims), 3)`` NLI probabilities, for ``unc.nli_entropy``.
        """
        if nli_probs is not None:
            nli_probs = np.asarray(nli_probs, dtype=np.float64)
            if nli_probs.shape != (len(claims), 3):
                raise ValueError(f"nli_probs must have shape ({len(claims)}, 3), one row per "
                                 f"claim, got {nli_probs.shape}")
        force = self.teacher_forcing and self._can_score and bool(prompt)
        forced = None  # the draft teacher-forced, when it came without log-probs it can place
        placed = draft.token_logprobs is not None and draft.token_offsets is not None
        if force and claims and not placed and not is_blank(draft.text):
            scored = self._ask("score", self.generator.score, prompt, draft.text)
            if scored is None:
                force = False  # one warning: the claims' own calls would fail alike
            elif scored.text == draft.text and scored.token_offsets is not None:
                forced = scored
            else:
                logger.warning("the generator gives no token offsets or not the draft back as "
                               "written; each claim is teacher-forced on its own")
        out = []
        for i, c in enumerate(claims):
            lps = claim_token_logprobs(draft, c) or (
                claim_token_logprobs(forced, c) if forced is not None else [])
            if not lps and force and forced is None:
                scored = self._ask("score", self.generator.score, prompt, c.text)
                force = scored is not None  # after a failure, one warning, not one a claim
                lps = [] if scored is None else list(scored.token_logprobs or [])
            f = logprob_features(lps)
            f["unc.self_consistency"] = math.nan
            f["unc.nli_entropy"] = nli_entropy(nli_probs[i]) if nli_probs is not None \
                else math.nan
            out.append(f)
        if self.samples and claims and not prompt and not self._warned_no_prompt:
            self._warned_no_prompt = True  # once: every call without a prompt is alike
            logger.warning("self-consistency (samples=%d) needs the prompt that produced the "
                           "draft: without one, unc.self_consistency is missing (NaN)",
                           self.samples)
        if self.samples and prompt and claims:
            generated = self._ask("generate", self.generator.generate, prompt, n=self.samples)
            if generated is None:  # unc.self_consistency stays missing (NaN)
                return out
            sampled = [g.text for g in generated]
            # an empty draft has nothing to read: it neither supports nor contradicts a claim
            drafts = [d for d in sampled if not is_blank(d)]
            if len(drafts) < len(sampled):
                logger.warning("%d of %d sampled drafts are empty: self-consistency uses "
                               "the other %d", len(sampled) - len(drafts), len(sampled),
                               len(drafts))
            if not drafts:  # unc.self_consistency stays missing (NaN)
                return out
            pairs = [(d, c.text) for c in claims for d in drafts]
            probs = self.nli.predict(pairs).reshape(len(claims), len(drafts), 3)
            for f, p in zip(out, probs, strict=True):
                f["unc.self_consistency"] = float((p[:, 0] > 0.5).mean())
        return out
