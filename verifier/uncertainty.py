"""Uncertainty signals of a claim.

From the generator's token log-probs, from teacher forcing, from self-consistency across
sampled drafts (SelfCheckGPT-style), and from the NLI distribution itself.

Every part can be turned off; a signal that cannot be computed (no log-probs, no generator)
is ``NaN``, never an error.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from verifier.text import is_blank
from verifier.types import Claim, Generation

logger = logging.getLogger(__name__)

FEATURES: tuple[str, ...] = (
    "unc.mean_surprisal", "unc.max_surprisal", "unc.min_logprob", "unc.tokens",
    "unc.self_consistency", "unc.nli_entropy",
)


def claim_token_logprobs(generation: Generation, claim: Claim) -> list[float]:
    """Log-probs of the draft tokens that overlap the claim's span (needs token offsets)."""
    if generation.token_logprobs is None or generation.token_offsets is None:
        return []
    a, b = claim.span
    return [lp for (s, e), lp in zip(generation.token_offsets, generation.token_logprobs,
                                     strict=True) if s < b and e > a]


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
            (self-consistency samples); ``None`` turns both off.
        nli: An NLI detector, needed for self-consistency.
        samples: Extra drafts sampled for self-consistency (0 turns it off). Empty samples
            are left out; with none left, ``unc.self_consistency`` is ``NaN``.
        teacher_forcing: Score claims by teacher forcing when the draft has no log-probs.

    Example:
        >>> det = UncertaintyDetector(samples=0)
        >>> g = Generation("Paris is big.", ("Paris", " is", " big."), (-0.1, -0.2, -3.0),
        ...                ((0, 5), (5, 8), (8, 13)))
        >>> round(det.features(g, [Claim("Paris is big.", (0, 13))])[0]["unc.max_surprisal"], 1)
        3.0
    """

    def __init__(self, generator: Any = None, nli: Any = None, *, samples: int = 0,
                 teacher_forcing: bool = True) -> None:
        if not isinstance(samples, int) or samples < 0:
            raise ValueError(f"samples must be an int >= 0, got {samples!r}")
        if samples and (generator is None or nli is None):
            raise ValueError("self-consistency (samples > 0) needs a generator and an nli")
        self.generator, self.nli = generator, nli
        self.samples, self.teacher_forcing = samples, teacher_forcing

    def features(self, draft: Generation, claims: Sequence[Claim], *, prompt: str | None = None,
                 nli_probs: np.ndarray | None = None) -> list[dict[str, float]]:
        """One feature dict per claim (keys: :data:`FEATURES`).

        Args:
            draft: The draft the claims come from.
            claims: Its claims (spans index ``draft.text``).
            prompt: The prompt that produced the draft (teacher forcing, sampling).
            nli_probs: ``(len(claims), 3)`` NLI probabilities, for ``unc.nli_entropy``.
        """
        out = []
        for i, c in enumerate(claims):
            lps = claim_token_logprobs(draft, c)
            if not lps and self.teacher_forcing and self.generator is not None and prompt:
                scored = self.generator.score(prompt, c.text)
                lps = list(scored.token_logprobs or [])
            f = logprob_features(lps)
            f["unc.self_consistency"] = math.nan
            f["unc.nli_entropy"] = nli_entropy(nli_probs[i]) if nli_probs is not None \
                else math.nan
            out.append(f)
        if self.samples and prompt and claims:
            sampled = [g.text for g in self.generator.generate(prompt, n=self.samples)]
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
