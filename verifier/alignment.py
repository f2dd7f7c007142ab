"""Evidence-alignment features: what the NLI model does not see.

Coverage of the claim's names, numbers, dates and quotes by the evidence (numbers and dates
normalised, so other formats of the same value count as covered), lexical and embedding
alignment with the best evidence, negation mismatch, and retrieval rank and score, aggregated
over several evidence passages (best over passages). Missing signals are ``NaN``; the
:class:`~verifier.meta.MetaClassifier` trained on them handles that.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np

from verifier.types import Evidence

FEATURES: tuple[str, ...] = (
    "align.claim_recall", "align.bigram_recall", "align.cosine", "align.entity_coverage",
    "align.number_coverage", "align.number_conflict", "align.date_coverage",
    "align.date_conflict", "align.quote_coverage", "align.negation_mismatch",
    "align.evidence_count", "align.best_rank", "align.best_score",
)
_NEG = re.compile(r"\b(not|no|never|none|neither|nor|without|n't|cannot|only)\b", re.I)


def _tokens(text: str) -> list[str]:
    from rag.retrieval import tokenize

    return tokenize(text)


def alignment_features(claim: str, evidence: Sequence[Evidence], *,
                       cosines: Sequence[float] | None = None) -> dict[str, float]:
    """Alignment features of one claim against its evidence (best first).

    Args:
        claim: The claim text.
        evidence: Its evidence passages or sentences.
        cosines: Embedding cosine of the claim with each evidence item, if computed.

    Returns:
        One value per name in :data:`FEATURES` (``NaN`` where the signal does not apply, e.g.
        number coverage of a claim without numbers).
    """
    from mitigation.checks import DateCheck, NumberCheck, QuoteCheck
    from mitigation.values import find_dates, find_names, find_numbers, find_quotes

    nan = math.nan
    f = dict.fromkeys(FEATURES, nan)
    f["align.evidence_count"] = float(len(evidence))
    if not evidence:
        return f
    texts = [e.content for e in evidence]
    joined = " ".join(texts)
    ct = _tokens(claim)
    cset = set(ct)
    cbi = set(zip(ct, ct[1:], strict=False))
    recalls, bi_recalls = [], []
    for t in texts:
        et = _tokens(t)
        recalls.append(len(cset & set(et)) / len(cset) if cset else nan)
        ebi = set(zip(et, et[1:], strict=False))
        bi_recalls.append(len(cbi & ebi) / len(cbi) if cbi else nan)
    f["align.claim_recall"] = float(np.nanmax(recalls)) if cset else nan
    f["align.bigram_recall"] = float(np.nanmax(bi_recalls)) if cbi else nan
    if cosines is not None and len(cosines):
        f["align.cosine"] = float(max(cosines))
    names = find_names(claim)
    if names:
        low = joined.lower()
        f["align.entity_coverage"] = sum(n.lower() in low for n in names) / len(names)
    if find_numbers(claim):
        res = NumberCheck().run(claim, texts)
        n = len(find_numbers(claim))
        f["align.number_coverage"] = 1.0 - len(res) / n
        f["align.number_conflict"] = float(any(x.type == "value_contradiction" for x in res))
    if find_dates(claim):
        res = DateCheck().run(claim, texts)
        n = len(find_dates(claim))
        f["align.date_coverage"] = 1.0 - len(res) / n
        f["align.date_conflict"] = float(any(x.type == "value_contradiction" for x in res))
    if find_quotes(claim):
        f["align.quote_coverage"] = 1.0 - len(QuoteCheck().run(claim, texts)) / len(
            find_quotes(claim))
    best = int(np.nanargmax(recalls)) if cset else 0
    f["align.negation_mismatch"] = float(bool(_NEG.search(claim)) != bool(_NEG.search(
        texts[best])))
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
