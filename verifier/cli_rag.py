"""CLI subcommands of the Baseline RAG module: ``index``, ``ask``, ``decompose``."""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any

from verifier.checking import arg_number
from verifier.text import is_blank
from verifier.types import Passage

logger = logging.getLogger(__name__)


def load_documents(path: Path) -> list[Passage]:
    """Read documents from a folder of .txt/.md files or a .jsonl file.

    Folder: one document per file (UTF-8, its line ends kept, so that spans index the file
    on disk), id = relative path; a file of only spaces or invisible characters is skipped,
    with a warning naming it. JSONL: ``text`` and ``id`` or ``source_id`` fields (without
    either, the id is ``FILE:LINE``); other fields become metadata. A file or line that is
    not UTF-8, or a line whose id an earlier line has, is an error naming it.
    """
    path = Path(path)
    docs: list[Passage] = []
    skipped: list[str] = []
    if path.is_dir():
        for f in sorted(path.rglob("*")):
            if f.suffix.lower() in (".txt", ".md") and f.is_file():
                try:
                    # a byte-order mark is no text (as on stdin and in JSONL files); line
                    # ends are kept as they are, so that spans index the file on disk
                    with f.open(encoding="utf-8-sig", newline="") as fh:
                        text = fh.read()
                except UnicodeDecodeError as exc:
                    raise ValueError(f"{f}: not UTF-8 text ({exc}); convert it, e.g. "
                                     f"iconv -f latin1 -t utf-8") from exc
                name = str(f.relative_to(path))
                try:
                    name.encode("utf-8")
                except UnicodeEncodeError as exc:  # a name that no report can hold
                    raise ValueError(f"{name!r} in DOCS {str(path)!r}: the file name is not "
                                     "UTF-8; rename it (it becomes the source id)") from exc
                if is_blank(text):  # spaces or invisible characters only: no text
                    skipped.append(name)
                else:
                    docs.append(Passage(text, name))
    elif path.is_file() and path.suffix.lower() == ".jsonl":
        from verifier.batch import read_rows  # the batch reader: UTF-8, JSON, objects

        seen: dict[str, int] = {}  # id -> its first line
        for row in read_rows(path):
            n, rec = row.line, row.record
            if row.error == "empty line":
                continue
            if rec is None:
                raise ValueError(f"{path}:{n}: not a document line: {row.error}")
            try:
                sid = rec.get("source_id") or rec.get("id")
                if sid is None:  # a line without an id: named by its place
                    sid = f"{path.name}:{n}"
                meta = {k: v for k, v in rec.items() if k not in ("text", "id", "source_id")}
                docs.append(Passage(rec["text"], str(sid), meta))
            except (KeyError, ValueError, TypeError) as exc:
                raise ValueError(f"{path}:{n}: not a document line ({exc})") from exc
            if str(sid) in seen:  # 1 and "1" are one id: source ids are text
                raise ValueError(f"{path}:{n}: id {str(sid)!r} repeats line {seen[str(sid)]}")
            seen[str(sid)] = n
    else:
        raise ValueError(f"DOCS must be a folder of .txt/.md files or a .jsonl file, got "
                         f"{str(path)!r}")
    if skipped:
        logger.warning("%d file(s) in %s hold no text and are not indexed: %s", len(skipped),
                       path, ", ".join(skipped[:10]) + (" ..." if len(skipped) > 10 else ""))
    if not docs:
        raise ValueError(f"no documents found in {str(path)!r}")
    return docs


#: A ``--draft`` value that looks like a file name: one token ending in a text file's suffix,
#: or holding a slash.
_LOOKS_LIKE_PATH = re.compile(r"\S+\.(?:txt|md|json)|\S*/\S*", re.IGNORECASE)


def read_stdin(option: str) -> str:
    """Standard input as UTF-8 text, decoded strictly.

    The locale's decoder would let undecodable bytes through as lone surrogates.

    Raises:
        ValueError: stdin is not UTF-8 (the message names ``option``).
    """
    buffer = getattr(sys.stdin, "buffer", None)
    try:
        if buffer is None:  # a text stream without bytes (a test's StringIO)
            return text_value(f"{option} -", sys.stdin.read())
        return buffer.read().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{option} -: stdin is not UTF-8 text ({exc})") from exc


def text_value(option: str, value: str) -> str:
    """``value`` unchanged, or an error naming ``option`` when it holds undecodable bytes.

    A command-line argument that was not UTF-8 arrives with lone surrogates.

    Example:
        >>> text_value("--question", "Où est Paris ?")
        'Où est Paris ?'
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{option} {value!r}: not UTF-8 text ({exc.reason} at position "
                         f"{exc.start})") from exc
    return value


def read_draft(value: str) -> str:
    """The draft a ``--draft`` value names: ``-`` is stdin, a file's UTF-8 text, else the text.

    A value that cannot be a file name (too long for one, or holding a NUL) is the text. A
    value that looks like a file name (one token ending in .txt, .md or .json, or holding a
    slash) but names no file is an error: a mistyped path verified as a one-word "draft"
    would give a report about the path.

    Raises:
        ValueError: The file or stdin is not UTF-8 or holds no text, the value names a folder,
            or a path-like value names no file (the message names ``--draft`` and the value).
    """
    if value == "-":
        return _not_blank("--draft -: stdin", read_stdin("--draft"))
    text_value("--draft", value)
    if is_blank(value):  # Path("") is the working folder
        raise ValueError(f"--draft {value!r}: empty (give the draft's file, - for stdin, or "
                         f"the draft text itself)")
    path = Path(value)
    try:
        is_file, is_dir = path.is_file(), path.is_dir()
    except (OSError, ValueError):  # "File name too long", an embedded NUL: not a path
        is_file = is_dir = False
    if is_dir:
        raise ValueError(f"--draft {value!r}: is a folder, not a file (give the draft's file, "
                         f"- for stdin, or the draft text itself; documents go in --docs)")
    if is_file:
        try:
            text = path.read_text(encoding="utf-8-sig")  # without a byte-order mark
        except UnicodeDecodeError as exc:
            raise ValueError(f"--draft {value!r}: the file is not UTF-8 text ({exc}); convert "
                             f"it, e.g. iconv -f latin1 -t utf-8") from exc
        return _not_blank(f"--draft {value!r}: the file", text)
    if _LOOKS_LIKE_PATH.fullmatch(value.strip()):
        raise ValueError(f"--draft {value!r}: no such file (give an existing file, - for "
                         f"stdin, or the draft text itself)")
    return value


def _not_blank(what: str, text: str) -> str:
    """``text``, or an error saying that ``what`` holds no text (only whitespace or nothing).

    Example:
        >>> _not_blank("--draft -: stdin", " ")
        Traceback (most recent call last):
        ...
        ValueError: --draft -: stdin holds no text
    """
    if is_blank(text):
        raise ValueError(f"{what} holds no text")
    return text


def _print_result(res: Any, out: Any = sys.stdout) -> None:
    print(f"Question: {res.question}\n", file=out)
    print("Retrieved passages:", file=out)
    for i, p in enumerate(res.passages, start=1):
        shown = " ".join(p.content.split())
        shown = shown if len(shown) <= 90 else shown[:89].rstrip() + "…"
        print(f"  [{i}] {p.source_id} {list(p.span)}  {shown}", file=out)
    print(f"\nDraft ({res.draft.model or 'given'}):\n  {res.draft.text.strip()}\n", file=out)
    print("Claims and their evidence:", file=out)
    for i, ce in enumerate(res.claims, start=1):
        c = ce.claim
        flag = "" if c.verifiable else "  (not verifiable)"
        print(f"  {i}. {c.text}  [{c.type.value}; draft span {list(c.span)}]{flag}", file=out)
        for ev in ce.evidence:
            print(f"       - {ev.source_id} {list(ev.span)} score {ev.score:.2f}: {ev.content}",
                  file=out)


#: A Hugging Face hub id: ``name`` or ``namespace/name`` (letters, digits, ``_ . -``).
_HUB_ID = re.compile(r"[\w.-]+(?:/[\w.-]+)?")


def _check_model_path(option: str, value: str | None) -> str | None:
    """``value`` unchanged, or an error naming ``option`` when it is a path to no folder.

    A value is a path when it is absolute, starts with ``./``, ``../`` or ``~``, or holds
    a path separator without being a hub id (``namespace/name``). Handed on, a path that
    names no folder was read as a hub id, and failed with a hub message ("Repo id must
    use alphanumeric chars") that names neither the option nor the path.

    Example:
        >>> _check_model_path("--embedding-model", "sentence-transformers/all-MiniLM-L6-v2")
        'sentence-transformers/all-MiniLM-L6-v2'

    Raises:
        ValueError: ``value`` is a path that names no folder.
    """
    if value is None:
        return value
    seps = {os.sep, os.altsep or os.sep}
    path_like = (os.path.isabs(value)
                 or value.startswith(tuple(f"{d}{s}" for d in (".", "..") for s in seps))
                 or value.startswith("~")
                 or (any(s in value for s in seps) and not _HUB_ID.fullmatch(value)))
    if path_like:
        path = Path(value).expanduser()
        if path.is_file():
            raise ValueError(f"{option} {value!r}: is a file, not a model folder")
        if not path.is_dir():
            raise ValueError(f"{option} {value!r}: no such folder (give a sentence-transformers "
                             f"model folder, or a hub id such as "
                             f"sentence-transformers/all-MiniLM-L6-v2)")
    return value


def _count(n: int, word: str) -> str:
    """``"1 document"``, ``"2 documents"``."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def _check_out_folder(option: str, path: Path) -> None:
    """Refuse, naming ``option``, a ``path`` that cannot be an index folder.

    It is a file, or a folder above it is: said before any work is done, not after it.
    """
    from verifier.checking import file_on_path

    blocked = file_on_path(path)
    if blocked is not None:
        raise ValueError(f"{option} {str(path)!r}: {str(blocked)!r} is a file, not a folder")


def _cmd_index(args: argparse.Namespace) -> int:
    from rag.retrieval import HybridRetriever

    _check_model_path("--embedding-model", args.embedding_model)  # before the documents load
    _check_out_folder("--out", args.out)
    docs = load_documents(args.docs)
    r = HybridRetriever(args.embedding_model, device=args.device, index_type=args.index_type,
                        chunk_max_chars=args.chunk_chars).index(docs)
    r.save(args.out)
    print(f"indexed {_count(len(docs), 'document')} as {_count(len(r.passages), 'passage')} "
          f"into {args.out}")
    return 0


def _cmd_ask(args: argparse.Namespace) -> int:
    from rag.generation import HFGenerator
    from rag.pipeline import RAGPipeline
    from rag.retrieval import HybridRetriever

    text_value("question", args.question)
    if is_blank(args.question):
        raise ValueError(f"question {args.question!r}: empty (give the question to answer)")
    if args.self_correct and args.draft is not None:
        raise ValueError("--draft and --self-correct exclude each other: the self-correcting "
                         "loop writes its own drafts (verify a draft of yours with "
                         "`verifier verify`)")
    draft = None if args.draft is None else read_draft(args.draft)  # before the index loads
    r = HybridRetriever.load(args.index, device=args.device)
    if args.self_correct:
        return _self_correct(args, r)
    generator = None if draft is not None else HFGenerator(max_new_tokens=args.max_new_tokens,
                                                           device=args.device)
    pipe = RAGPipeline(r, generator, top_k=args.top_k,
                       min_evidence_score=args.min_evidence_score)
    res = pipe.run(args.question, draft=draft)
    if args.json:
        json.dump(res.to_dict(), sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        _print_result(res)
    return 0


def _min_score(text: str) -> float:
    """An argparse type: a pairer floor (:func:`rag.pairing.check_min_score`)."""
    from rag.pairing import check_min_score

    try:
        return check_min_score(float(text), "the score")
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1], got {text!r}") from None


#: An argparse type: a whole number >= 1.
_positive_int = arg_number(int, 1)


def _add_min_evidence_score(p: argparse.ArgumentParser) -> None:
    from rag.pairing import MIN_SCORE

    p.add_argument("--min-evidence-score", type=_min_score, default=MIN_SCORE,
                   help="least pairing score of an evidence sentence (0: no floor); a claim "
                   "with no sentence above it is Insufficient_Info")


def _verifier(args: argparse.Namespace) -> Any:
    """The command's ``Verifier``: its device, the mitigator's strictness, the pairer's floor.

    The verifier's Supported cut moves with the strictness, so both stages get the same one.
    """
    from verifier.nli import NLIDetector
    from verifier.verify import Verifier

    return Verifier(NLIDetector(device=args.device), strictness=args.strictness,
                    min_evidence_score=args.min_evidence_score)


def _self_correct(args: argparse.Namespace, retriever: Any) -> int:
    from mitigation.mitigator import Mitigator
    from rag.generation import HFGenerator
    from rag.self_correct import SelfCorrectingPipeline

    pipe = SelfCorrectingPipeline(
        retriever, HFGenerator(max_new_tokens=args.max_new_tokens, device=args.device),
        _verifier(args), Mitigator(args.strictness), top_k=args.top_k)
    answer = pipe.run(args.question)
    if args.json:
        print(answer.to_json())
        return 0
    print(answer.text)
    print(f"\napproved: {answer.approved}; grounding score {answer.grounding_score:.2f}")
    for t in answer.trace:
        g = "n/a" if t.grounding_score is None else f"{t.grounding_score:.2f}"
        print(f"  #{t.iteration} query={t.query!r} passages={len(t.passages)} grounding={g} "
              f"useful={t.useful} -> {t.decision}: {t.reason}")
    return 0


def _cmd_decompose(args: argparse.Namespace) -> int:
    from rag.decompose import SpacyDecomposer

    if args.text == "-":
        text = _not_blank("TEXT -: stdin", read_stdin("TEXT"))
    elif is_blank(text_value("TEXT", args.text)):
        raise ValueError(f"TEXT {args.text!r}: empty (give the text to split, or - for stdin)")
    else:
        text = args.text
    claims = SpacyDecomposer().decompose(text)
    if args.json:
        json.dump([c.to_dict() for c in claims], sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        for c in claims:
            flag = "" if c.verifiable else " (not verifiable)"
            print(f"{list(c.span)} [{c.type.value}]{flag} {c.text}")
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from mitigation.mitigator import Mitigator
    from rag.retrieval import HybridRetriever

    if (args.docs is None) == (args.index is None):
        raise ValueError("give exactly one of --docs or --index")
    if args.question is not None and is_blank(args.question):  # "" was ignored unsaid
        raise ValueError(f"--question holds no text: {args.question!r}")
    if args.out is not None:  # checked before the work, not after it
        out = str(args.out)
        if Path(out).is_dir():  # Path("") too: the working folder
            raise ValueError(f"--out {out!r}: is a folder, not a file (name the file to write)")
        if not Path(out).resolve().parent.is_dir():
            raise ValueError(f"--out {out!r}: its folder does not exist")
    draft = read_draft(args.draft)  # refuses one that holds no text
    if args.index is not None:
        retriever = HybridRetriever.load(args.index, device=args.device)
    else:
        retriever = HybridRetriever(device=args.device).index(load_documents(args.docs))
    report = _verifier(args).verify(draft, retriever=retriever, question=args.question,
                                    top_k=args.top_k)
    answer = Mitigator(args.strictness).mitigate(draft, report.verdicts,
                                                 documents=retriever.documents)
    if args.format == "json":
        text = json.dumps({**answer.to_dict(), "timings": report.timings}, indent=2,
                          ensure_ascii=False) + "\n"
    elif args.format == "md":
        text = answer.to_markdown()
    else:
        text = answer.to_html()
    if args.out:
        from verifier.batch import atomic_write

        atomic_write(Path(args.out), text)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def add_subparsers(sub: argparse._SubParsersAction) -> None:
    """Register ``index``, ``ask`` and ``decompose``."""
    p = sub.add_parser("index", help="index documents (folder of .txt/.md, or .jsonl)")
    p.add_argument("docs", type=Path)
    p.add_argument("--out", type=Path, required=True, help="index folder to write")
    p.add_argument("--embedding-model", help="sentence-transformers id or path "
                   "(default: embedded all-MiniLM-L6-v2)")
    p.add_argument("--index-type", choices=("flat", "hnsw", "ivf"), default="flat")
    p.add_argument("--chunk-chars", type=_positive_int, default=800,
                   help="most characters in a passage (default 800); a passage also "
                   "fits the embedding model's token limit")
    p.add_argument("--device")
    p.set_defaults(func=_cmd_index)

    p = sub.add_parser("ask", help="retrieve, generate a draft, split it into claims, pair "
                       "each claim with evidence")
    p.add_argument("question")
    p.add_argument("--index", type=Path, required=True)
    p.add_argument("--top-k", type=_positive_int, default=5)
    p.add_argument("--max-new-tokens", type=_positive_int, default=128)
    p.add_argument("--draft", help="bring your own draft: text, a file (UTF-8), or - for "
                   "stdin (no generation)")
    p.add_argument("--self-correct", action="store_true",
                   help="verify, then regenerate or rewrite the query within bounds")
    p.add_argument("--strictness", choices=("lenient", "balanced", "strict"),
                   default="balanced", help="with --self-correct: how the answer is verified "
                   "and rewritten (without it, nothing is verified)")
    _add_min_evidence_score(p)
    p.add_argument("--device")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_ask)

    p = sub.add_parser("verify", help="verify a draft against documents and rewrite it "
                       "(citations, corrections, hedges)")
    p.add_argument("--draft", required=True, help="draft file (UTF-8), - for stdin, or the "
                   "draft text itself")
    p.add_argument("--docs", type=Path, help="folder of .txt/.md or a .jsonl of documents")
    p.add_argument("--index", type=Path, help="an index written by `verifier index`")
    p.add_argument("--question")
    p.add_argument("--strictness", choices=("lenient", "balanced", "strict"),
                   default="balanced")
    p.add_argument("--format", choices=("json", "md", "html"), default="json")
    p.add_argument("--out", type=Path)
    p.add_argument("--top-k", type=_positive_int, default=5)
    _add_min_evidence_score(p)
    p.add_argument("--device")
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser("decompose", help="split text (or - for stdin) into atomic claims")
    p.add_argument("text")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_decompose)
