"""Evidence-alignment features and detector: what the NLI model does not see.

Coverage of the claim's names, numbers, dates and quotes by the evidence (numbers and dates
normalised, so other formats of the same value count as covered), lexical and embedding
alignment with the best evidence sentence, negation mismatch, lengths, and retrieval rank and
score, aggregated over several evidence passages (best over sentences and passages,
MiniCheck-style). Missing signals are ``NaN``; the classifiers in :mod:`verifier.meta` handle
that.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from verifier.checking import is_int
from verifier.text import fold, sentence_spans
from verifier.types import Evidence

FEATURES: tuple[str, ...] = (
    "align.claim_recall", "align.bigram_recall", "align.doc_recall", "align.cosine",
    "align.entity_coverage", "align.number_coverage", "align.number_conflict",
    "align.date_coverage", "align.date_conflict", "align.quote_coverage",
    "align.negation_mismatch", "align.claim_tokens", "align.evidence_tokens",
    "align.evidence_count", "align.best_rank", "align.best_score",
)
#: Date findings that say the evidence gives another date for the same thing: another
#: value, or the claim's date is another life event's ("died in 1971" against "born 1971").
_DATE_CONFLICTS = frozenset({"value_contradiction", "event_contradiction"})
#: A negation: a word, or a contraction's "n't" (no word boundary inside "isn't").
_NEG = re.compile(r"\b(?:not|no|never|none|neither|nor|without|cannot|only)\b|n['’]t\b",
                  re.I)
#: Evidence sentences per claim embedded for ``align.cosine`` (the best by lexical recall).
MAX_EMBEDDED_SENTENCES = 4


def _tokens(text: str) -> list[str]:
    from rag.retrieval import tokenize

    return tokenize(text)


def evidence_sentences(evidence: Sequence[Evidence]) -> list[str]:
    """The sentences of every evidence item, in order (empty ones dropped)."""
    out = []
    for e in evidence:
        for s, t in sentence_spans(e.content):
            piece = e.content[s:t].strip()
            if piece:
                out.append(piece)
    return out


def _best_sentences(claim: str, sentences: Sequence[str]) -> tuple[list[float], list[float]]:
    ct = _tokens(claim)
    cset = set(ct)
    cbi = set(zip(ct, ct[1:], strict=False))
    recalls, bi_recalls = [], []
    for t in sentences:
        et = _tokens(t)
        recalls.append(len(cset & set(et)) / len(cset) if cset else math.nan)
        ebi = set(zip(et, et[1:], strict=False))
        bi_recalls.append(len(cbi & ebi) / len(cbi) if cbi else math.nan)
    return recalls, bi_recalls


def top_sentences(claim: str, evidence: Sequence[Evidence], k: int = MAX_EMBEDDED_SENTENCES
                  ) -> list[str]:
    """The ``k`` evidence sentences with the highest lexical recall of the claim."""
    sents = evidence_sentences(evidence)
    if len(sents) <= k:
        return sents
    rec, _ = _best_sentences(claim, sents)
    order = np.argsort(-np.nan_to_num(np.asarray(rec, dtype=float), nan=0.0), kind="stable")
    return [sents[i] for i in order[:k]]


def alignment_features(claim: str, evidence: Sequence[Evidence], *,
                       cosines: Sequence[float] | None = None) -> dict[str, float]:
    """Alignment features of one claim against its evidence (best first).

    Args:
        claim: The claim text.
        evidence: Its evidence passages or sentences (long passages are split into sentences).
        cosines: Embedding cosine of the claim with evidence sentences, if computed.

    Returns:
        One value per name in :data:`FEATURES` (``NaN`` where the signal does not apply, e.g.
        number coverage of a claim without numbers).

    Example:
        >>> f = alignment_features("Paris has 2 million people.",
        ...                        [Evidence("Paris has 2,000,000 inhabitants.", "d1")])
        >>> f["align.number_coverage"], f["align.number_conflict"]
        (1.0, 0.0)
    """
    from mitigation.checks import DateCheck, NumberCheck, QuoteCheck
    from mitigation.values import find_dates, find_name_starts, find_numbers, find_quotes

    nan = math.nan
    f = dict.fromkeys(FEATURES, nan)
    f["align.evidence_count"] = float(len(evidence))
    ct = _tokens(claim)
    f["align.claim_tokens"] = float(len(ct))
    if not evidence:
        return f
    texts = [e.content for e in evidence]
    joined = " ".join(texts)
    jt = _tokens(joined)
    f["align.evidence_tokens"] = float(len(jt))
    sents = evidence_sentences(evidence) or texts
    recalls, bi_recalls = _best_sentences(claim, sents)
    cset = set(ct)
    if cset:
        f["align.claim_recall"] = float(np.nanmax(recalls))
        f["align.doc_recall"] = len(cset & set(jt)) / len(cset)
    if len(ct) > 1:
        f["align.bigram_recall"] = float(np.nanmax(bi_recalls))
    if cosines is not None and len(cosines):
        f["align.cosine"] = float(max(cosines))
    # names, not a date's month or weekday ("4 July 1990" is covered by "1990-07-04": the
    # date features read it), each found whole in one passage ("Oman" is not in "a woman",
    # nor "New York" in "It is New" + "York City")
    dates = [d.span for d in find_dates(claim)]
    names = [n for n, a in find_name_starts(claim)
             if not any(s < a + len(n) and a < e for s, e in dates)]
    if names:  # "São Paulo" holds "Sao Paulo", "O’Brien" "O'Brien"
        folded = [fold(t) for t in texts]
        f["align.entity_coverage"] = sum(
            any(re.search(rf"(?<!\w){re.escape(fold(n))}(?!\w)", t) for t in folded)
            for n in names) / len(names)
    if n := len(find_numbers(claim)):
        res = NumberCheck().run(claim, texts)
        f["align.number_coverage"] = max(0.0, 1.0 - len(res) / n)
        f["align.number_conflict"] = float(any(x.type == "value_contradiction" for x in res))
    if n := len(find_dates(claim)):
        res = DateCheck().run(claim, texts)
        f["align.date_coverage"] = max(0.0, 1.0 - len(res) / n)
        f["align.date_conflict"] = float(any(x.type in _DATE_CONFLICTS for x in res))
    if n := len(find_quotes(claim)):
        f["align.quote_coverage"] = max(0.0, 1.0 - len(QuoteCheck().run(claim, texts)) / n)
    best = int(np.nanargmax(recalls)) if cset else 0
    f["align.negation_mismatch"] = float(bool(_NEG.search(claim)) != bool(_NEG.search(
        sents[best])))
    ranks = [e.rank for e in evidence if e.rank is not None]
    scores = [e.score for e in evidence if not math.isnan(e.score)]
    f["align.best_rank"] = float(min(ranks)) if ranks else nan
    f["align.best_score"] = float(max(scores)) if scores else nan
    return f


def feature_matrix(rows: Sequence[dict[str, float]], names: Sequence[str] = FEATURES
                   ) -> np.ndarray:
    """Stack feature dicts into an ``(n, len(names))`` float array (missing keys -> NaN)."""
    return np.array([[float(r.get(k, math.nan)) for k in names] for r in rows],
                    dtype=np.float64).reshape(len(rows), len(names))


class AlignmentDetector:
    """Alignment features of many claims at once, with embedding cosines batched.

    Args:
        encoder: Anything with ``encode(texts) -> (n, d)`` L2-normalised rows; ``None``
            creates the embedded MiniLM encoder on first use.
        embeddings: Compute ``align.cosine`` (``False`` leaves it ``NaN`` and loads no model).
        max_sentences: Evidence sentences per claim embedded (the best by lexical recall).

    Example:
        >>> det = AlignmentDetector(embeddings=False)
        >>> rows = det.features(["Paris is in France."], [[Evidence("Paris is in France.", "d")]])
        >>> rows[0]["align.claim_recall"]
        1.0
    """

    def __init__(self, encoder: Any = None, *, embeddings: bool = True,
                 max_sentences: int = MAX_EMBEDDED_SENTENCES) -> None:
        if not is_int(max_sentences) or max_sentences <= 0:
            raise ValueError(f"max_sentences must be an int > 0, got {max_sentences!r}")
        if encoder is not None and not callable(getattr(encoder, "encode", None)):
            raise TypeError(f"encoder must have an encode() method, got {encoder!r}")
        self._encoder = encoder
        self.embeddings = bool(embeddings)
        self.max_sentences = int(max_sentences)

    @property
    def encoder(self) -> Any:
        """The sentence encoder (the embedded MiniLM is created on first use)."""
        if self._encoder is None:
            from rag.retrieval import DenseRetriever

            self._encoder = DenseRetriever()
        return self._encoder

    def features(self, claims: Sequence[str], evidence: Sequence[Sequence[Evidence]]
                 ) -> list[dict[str, float]]:
        """One feature dict per claim (keys: :data:`FEATURES`)."""
        if len(claims) != len(evidence):
            raise ValueError(f"claims has {len(claims)} items but evidence has "
                             f"{len(evidence)}")
        cosines: list[list[float] | None] = [None] * len(claims)
        if self.embeddings and claims:
            picked = [top_sentences(c, ev, self.max_sentences) for c, ev in
                      zip(claims, evidence, strict=True)]
            texts = list(dict.fromkeys([*claims, *(s for p in picked for s in p)]))
            if texts:
                emb = np.asarray(self.encoder.encode(texts), dtype=np.float32)
                pos = {t: i for i, t in enumerate(texts)}
                for i, (c, p) in enumerate(zip(claims, picked, strict=True)):
                    if p:
                        cv = emb[pos[c]]
                        cosines[i] = [float(emb[pos[s]] @ cv) for s in p]
        return [alignment_features(c, ev, cosines=cos)
                for c, ev, cos in zip(claims, evidence, cosines, strict=True)]
