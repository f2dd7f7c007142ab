"""Small text utilities shared by the stages (no heavy imports)."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence

from verifier.checking import is_int

# Latin full stops end a sentence before whitespace; CJK ones (。！？) end it anyway, as
# CJK text puts no space between sentences.
_SENT_END = re.compile(r"[.!?][\"')\]”’»]*\s+|[。！？][\"')\]」』”’]*\s*|\n\s*\n|\n")


#: Unicode categories of characters that show nothing: separators, control and format
#: characters (zero-width spaces and joiners, the byte-order mark) and combining marks,
#: which a BERT-style tokenizer drops (a text of only these has no tokens).
_INVISIBLE = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Mn", "Me"})


def is_blank(text: str) -> bool:
    """Whether ``text`` shows nothing: only whitespace and invisible characters.

    Example:
        >>> is_blank(" \u200b\ufeff "), is_blank("\u200bParis"), is_blank("...")
        (True, False, False)
    """
    return all(unicodedata.category(ch) in _INVISIBLE or ch == "\ufffd" for ch in text)


#: A text stored as a CSV field: wrapped in double quotes, the ones inside doubled (a full
#: stop may follow the closing quote).
_CSV_FIELD = re.compile(r'"(?P<body>(?:[^"]|"")*)"(?P<tail>\.?)')


_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'"})


def fold(text: str) -> str:
    """Lower case without accents, with straight apostrophes, for comparing names.

    Example:
        >>> fold("Larraín"), fold("O’Brien")
        ('larrain', "o'brien")
    """
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower())
                   if not unicodedata.combining(c)).translate(_APOSTROPHES)


def csv_unescaped(text: str) -> str:
    """``text`` without its CSV escaping when it is a whole escaped field, else unchanged.

    Example:
        >>> print(csv_unescaped('"His nickname is not ""Champ""."'))
        His nickname is not "Champ".
        >>> print(csv_unescaped('He said "no" twice.'))
        He said "no" twice.
    """
    m = _CSV_FIELD.fullmatch(text)
    if m is None or '""' not in m.group("body"):
        return text
    return m.group("body").replace('""', '"') + m.group("tail")


#: English function words: left out of BM25's tokens (:func:`rag.retrieval.tokenize`), and
#: weighed against another language's by the decomposer.
STOP_WORDS = frozenset(
    "a an the and or but if then else of in on at to for from by with without as is are was "
    "were be been being am do does did have has had having it its this that these those there "
    "here what which who whom whose when where why how not no nor so than too very can could "
    "will would shall should may might must i me my we our you your he him his she her they "
    "them their about into over under again further once all any both each few more most other "
    "some such only own same just also s t".split()
)
#: Words after which "an" sounds a consonant first ("a Ukrainian", "a European", "a one-off"),
#: and after which "a" sounds a vowel first ("an hour").
_CONSONANT_SOUND = re.compile(r"(?:uni|use|usu|uti|uk|uru|ura|eu|one\b|once\b)", re.I)
_VOWEL_SOUND = re.compile(r"(?:hour|honest|honou?r|heir)", re.I)


def indefinite_article(word: str) -> str:
    """``"a"`` or ``"an"``, as ``word`` sounds first (by its spelling, roughly).

    Example:
        >>> [indefinite_article(w) for w in ("object", "number", "Italian", "Ukrainian", "hour")]
        ['an', 'a', 'an', 'a', 'an']
    """
    vowel = (word[:1].lower() in tuple("aeiou") and not _CONSONANT_SOUND.match(word)) or \
        bool(_VOWEL_SOUND.match(word))
    return "an" if vowel else "a"


#: A Markdown footnote reference ("[^1]", "[^note]").
FOOTNOTE_REF = r"\[\^[^\]\s]+\]"
#: A citation marker: "[1]", "[2, 3]".
CITATION_MARK = r"\[\d+(?:\s*,\s*\d+)*\]"
#: A list item's marker at the start of a line: "- ", "* ", "+ ", "• ", "1. ", "2) ", and a
#: Markdown footnote definition's "[^1]: " (its text is read as an item's).
LIST_ITEM = re.compile(rf"\s*(?:\d{{1,2}}[.)]|[-*+•]|{FOOTNOTE_REF}:)\s+")
#: A label that opens a line before its statement: bold ("**Size:** ", "**Size**: ") or plain
#: (a capitalised word and at most three more: "Size: ", "Year built: ").
LINE_LABEL = re.compile(r"(?:(?:\*\*|__)[^*_\n]{1,40}?(?::(?:\*\*|__)|(?:\*\*|__):)"
                        r"|[A-Z][\w'’/&()-]*(?: [\w'’/&()-]+){0,3}:)[ \t]+")
#: A value under a label ("Height: 300 metres.", "Architect: Thomas Edison."): a number or a
#: name after the colon; not a list of sources.
LABELLED_VALUE = re.compile(
    r"(?!\s*(?i:sources?|references?|citations?|links?|see also|further reading)\s*:)"
    r"[^:\n]{1,60}:\s+(?=.*(?:\d|\b[A-Z][a-z]))\S.*")
#: Chinese and Japanese characters (ideographs and kana): no space between words.
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK = re.compile(f"[{CJK_CHARS}]")


#: Planes that hold every combining mark: the Basic and Supplementary Multilingual Planes,
#: and the Supplementary Special-purpose Plane (variation selectors).
_MARK_PLANES = (range(0x20000), range(0xE0000, 0xE1000))


def char_class(code_points: Sequence[int]) -> str:
    """The inside of a regex character class holding ``code_points`` (sorted), as ranges.

    Example:
        >>> char_class([0x61, 0x62, 0x63, 0x78])
        'a-cx-x'
    """
    runs: list[list[int]] = []  # [first, last] of each run of consecutive code points
    for i in code_points:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in runs)


@functools.cache
def combining_marks() -> tuple[str, str]:
    r"""Character classes (their insides) of the combining marks, in and beyond the BMP.

    The vowel signs and viramas of Indic scripts ("हिन्दी") are combining marks (categories
    Mn, Mc, Me) with no precomposed form, and Python's ``\w`` does not match them. Built
    once, at the first call (about 20 ms; not at import).
    """
    marks = [i for plane in _MARK_PLANES for i in plane
             if unicodedata.category(chr(i))[0] == "M"]
    return (char_class([i for i in marks if i <= 0xFFFF]),
            char_class([i for i in marks if i > 0xFFFF]))


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    r"""``phrase`` as a whole token sequence: not inside a longer word or number.

    "$5" is not in "$50", "Bath" not in "Bathurst", "10" not in "1910" nor in "10.5", "भारत"
    not in "भारतीय" (a word goes on with a combining mark, which ``\w`` does not match).

    Example:
        >>> bool(phrase_pattern("$5").search("the price was $50"))
        False
        >>> bool(phrase_pattern("born in bath").search("she was born in bath, england"))
        True
        >>> bool(phrase_pattern("भारत").search("भारतीय रेल")), bool(
        ...     phrase_pattern("भारत").search("यह भारत है"))
        (False, True)
    """
    bmp, astral = combining_marks()
    # a mark beyond the BMP is looked for only at such a character: ``re`` scans that class
    # range by range, which makes a search of plain text about three times slower
    word = rf"[\w{bmp}]|(?=[\U00010000-\U000E0FFF])[{astral}]"
    return re.compile(rf"(?<!{word})(?<!\d[.,]){re.escape(phrase)}(?!{word})(?![.,]\d)")


def phrase_in(phrase: str, text: str) -> bool:
    """Whether ``text`` holds ``phrase`` as a whole token sequence (:func:`phrase_pattern`).

    The pattern is compiled only when ``text`` holds the characters at all: most texts do
    not, and a pattern made of a whole claim is costly to compile and rarely used twice.

    Example:
        >>> phrase_in("$5", "the price was $50"), phrase_in("$5", "it cost $5.")
        (False, True)
    """
    return bool(phrase) and phrase in text and phrase_pattern(phrase).search(text) is not None


#: Words whose full stop never ends a sentence: titles and such (compared lower-case,
#: without the stop).
NEVER_FINAL_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st prof rev gen col lt sgt capt gov sen rep pres mt ft vs approx dept fig "
    "vol ed eds ca".split())
#: Words whose full stop ends a sentence only before a capital letter ("Apple Inc. The firm").
SOMETIMES_FINAL_ABBREVIATIONS = frozenset(
    "jr sr inc ltd co corp bros etc al est jan feb mar apr jun jul aug sep sept oct nov "
    "dec".split())


#: A dotted abbreviation without its final stop: "U.S", "e.g", "Ph.D" (not "3.5%" or
#: "example.com").
DOTTED = re.compile(r"(?:[^\W\d_]{1,4}\.)+[^\W\d_]{1,4}")


def abbreviation_stop(before: str, after: str, *, read_case: bool = True) -> bool:
    """Whether the full stop that ends ``before`` belongs to an abbreviation, not a sentence.

    ``after`` is the text that follows. Initials ("J. R. R. Tolkien"), dotted abbreviations
    ("U.S.", "D.C.", "F.C.", "e.g.") and titles ("Dr.", "St.") never end a sentence here;
    "No." does before a number only; "Inc.", "Jr.", "etc." and month names do before a
    capital letter (with ``read_case``; without it never: the rule claims of several
    sentences keep, :func:`verifier.nli.hypothesis_sentences`). A stop
    detached by tokenisation belongs to the word before it when that word has none of its
    own ("f.c . is"), and ends the sentence when it has ("in the U.S. . He").

    Example:
        >>> abbreviation_stop("written by J.", "R. R. Tolkien")
        True
        >>> abbreviation_stop("Apple Inc.", "The firm grew.")
        False
        >>> abbreviation_stop("The court said no.", "The law stands.")
        False
        >>> abbreviation_stop("Growth was 3.5%.", "It fell.")
        False
    """
    words = before.rsplit(None, 2)  # the last two words are all it reads
    if not before.endswith(".") or not words:
        return False
    if words[-1] == "." and len(words) > 1:  # a detached stop
        if words[-2].endswith("."):
            return False
        last = words[-2]
    else:
        last = words[-1][:-1]
    last = last.lstrip("(\"'“‘").lower()
    if not last:
        return False
    nxt = after.lstrip()[:1]
    if last in ("no", "nos"):  # "No. 5", but "The court said no. The law ..."
        return nxt.isdigit()
    if last in SOMETIMES_FINAL_ABBREVIATIONS:
        return not (read_case and nxt.isupper())
    return ((len(last) == 1 and last.isalpha()) or bool(DOTTED.fullmatch(last))
            or last in NEVER_FINAL_ABBREVIATIONS)


def sentence_spans(text: str, *, read_case: bool = True) -> list[tuple[int, int]]:
    """Split ``text`` into sentence spans that tile it completely (trailing whitespace kept).

    A full stop followed by a space ends a sentence unless it belongs to an abbreviation
    (:func:`abbreviation_stop`, given ``read_case``: "J. R. R. Tolkien", "Washington, D.C.
    is", "Dr. Smith"); a line break ends one, unless it is a hard wrap inside a sentence
    (:func:`_wrapped`).

    Example:
        >>> sentence_spans("One. Two!")
        [(0, 5), (5, 9)]
        >>> sentence_spans("巴黎是首都。柏林是首都！")
        [(0, 6), (6, 12)]
        >>> sentence_spans("He said “we won.” They left.")
        [(0, 18), (18, 28)]
        >>> t = "It is by J. R. R. Tolkien. Dr. Who met him."
        >>> [t[a:b] for a, b in sentence_spans(t)]
        ['It is by J. R. R. Tolkien. ', 'Dr. Who met him.']
    """
    spans, start = [], 0
    for m in _SENT_END.finditer(text):
        end = m.end()
        if end <= start:
            continue
        stop = m.group()
        if stop == "\n" and _wrapped(text, m.start()):
            continue
        if (stop[0] == "." and stop[1:].isspace() and "\n" not in stop
                and abbreviation_stop(text[start:m.start() + 1], text[end:end + 1],
                                      read_case=read_case)):
            continue
        spans.append((start, end))
        start = end
    if start < len(text):
        spans.append((start, len(text)))
    return spans or [(0, len(text))]


#: Words a line of wrapped prose may end with, mid-sentence ("... on the Champ de Mars
#: in\nParis, France.", "designed by\nGustave Eiffel").
WRAP_WORDS = frozenset(
    "a an the of in on at to for from with by into onto about as than and or but nor that "
    "which who whose whom where when while is was are were be been being has have had its "
    "their his her our your my this these those".split())
#: A Markdown (ATX) heading line: "# Title", "## The tower" (up to six "#").
HEADING = r" {0,3}#{1,6}(?:[ \t][^\n]*)?"
#: What opens a line that starts a block of its own: a heading, a table row, a quote, a
#: code fence or an HTML ``<pre>`` block (a label or a speaker's name is :data:`LINE_LABEL`).
_BLOCK_START = re.compile(r"\s*(?:#|\||>|```|~~~|(?i:<pre)(?![^\s>]))")


def _wrapped(text: str, newline: int) -> bool:
    r"""Whether the single line break at ``newline`` is a hard wrap inside a sentence.

    Plain-text documents are often wrapped at a fixed width ("... a wrought-iron lattice
    tower on the Champ de Mars in\nParis, France."). A break is a wrap when the line before
    it is long (30 characters or more) and ends with no stop, colon or semicolon, and the
    next line opens no block of its own (list item, heading, table, quote, code fence or
    ``<pre>``, label or speaker: "Project Manager: Yeah .") and
    starts with a lowercase letter, or the line before ends with a comma, a hyphen or a
    function word ("in", "the", "whose"). A line of its own ("Title Line", a statement
    without a stop before a capitalised line) still ends its sentence.

    Example:
        >>> t = ("It stands on the Champ de Mars in\nParis, France. It was built by its "
        ...      "designer's\ncompany.")
        >>> _wrapped(t, t.index("\n")), _wrapped(t, t.rindex("\n"))
        (True, True)
        >>> t = "Paris is the capital of France\nBerlin is the capital of Germany"
        >>> _wrapped(t, t.index("\n"))
        False
    """
    line = text[text.rfind("\n", 0, newline) + 1:newline].rstrip()
    end = text.find("\n", newline + 1)
    nxt = text[newline + 1:end if end >= 0 else len(text)]
    if len(line.strip()) < 30 or not nxt.strip() or re.search(
            r"[.!?:;。！？][\"')\]”’»]*$", line) or LIST_ITEM.match(nxt) or \
            _BLOCK_START.match(nxt) or LINE_LABEL.match(nxt.lstrip()):
        return False
    return nxt.lstrip()[:1].islower() or leads_on(line)


def leads_on(line: str) -> bool:
    """Whether ``line`` ends mid-sentence, so that the next line goes on with it.

    It ends with a comma, a hyphen or a dash, or a word of :data:`WRAP_WORDS` ("... on the
    Champ de Mars in", "designed by").

    Example:
        >>> leads_on("The tower was designed by"), leads_on("The tower opened in 1889")
        (True, False)
    """
    line = line.rstrip()
    last = re.search(r"[^\W\d_]+$", line)
    return line.endswith((",", "-", "–", "—")) or bool(
        last and last.group(0).lower() in WRAP_WORDS)


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``(start, end)`` so that ``text[start:end]`` has no surrounding whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


#: Where a piece of an over-long sentence may end (:func:`sentence_pieces`): after a comma,
#: semicolon or colon followed by a space, or before a dash set off by spaces.
_CLAUSE_CUT = re.compile(r"[,;:](?=\s)|\s(?=[-\u2013\u2014]\s)")


def sentence_pieces(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """``text[start:end]`` cut into pieces of at most ``max_chars`` characters.

    Each piece ends at the last clause boundary its window holds (after a comma, semicolon
    or colon, or before a spaced dash), else at the last whitespace, else after
    ``max_chars`` characters (text without spaces); a boundary in the window's first quarter
    is passed over, so that no piece is a stub. Pieces carry no surrounding whitespace and
    a blank one is dropped. A span of at most ``max_chars`` characters is one piece.

    Raises:
        ValueError: ``max_chars`` is not an int > 0.

    Example:
        >>> t = "red apples, green pears, blue plums"
        >>> [t[a:b] for a, b in sentence_pieces(t, 0, len(t), 25)]
        ['red apples, green pears,', 'blue plums']
    """
    if not is_int(max_chars) or max_chars <= 0:
        raise ValueError(f"max_chars must be an int > 0, got {max_chars!r}")
    out = []
    start, end = strip_span(text, start, end)
    while end - start > max_chars:
        window = text[start:start + max_chars + 1]  # a cut after it would be too long
        least = max_chars // 4
        cut = next((m.end() for m in reversed(list(_CLAUSE_CUT.finditer(window, 0, max_chars)))
                    if m.end() > least), None)
        if cut is None:
            cut = next((m.start() for m in reversed(list(re.finditer(r"\s", window)))
                        if m.start() > least), max_chars)
        a, b = strip_span(text, start, start + cut)
        if b > a:
            out.append((a, b))
        start, _ = strip_span(text, start + cut, end)
    if end > start:
        out.append((start, end))
    return out


def trimmed_sentence_spans(text: str, *, read_case: bool = True) -> list[tuple[int, int]]:
    """Sentence spans without surrounding whitespace; empty sentences dropped."""
    out = []
    for s, e in sentence_spans(text, read_case=read_case):
        s, e = strip_span(text, s, e)
        if e > s:
            out.append((s, e))
    return out
