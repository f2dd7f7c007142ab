"""Command-line interface: ``verifier index|ask|verify|decompose|eval``.

Subcommands come from the modules in ``_SUBCOMMAND_MODULES``: each one's
``add_subparser(subparsers)`` adds its parsers and sets ``func(args) -> int`` on each.
Bad input prints a one-line error on stderr and exits with status 2 (no traceback).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)


def _print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


# ----------------------------------------------------------------------------- eval
def _add_eval(sub: argparse._SubParsersAction) -> None:
    from verifier.batch import PRESETS, SCHEMES

    p = sub.add_parser("eval", help="evaluate over a FEVER-style data set (JSONL, JSON, CSV/TSV)",
                       description="Score every row; predictions.jsonl + errors.jsonl always "
                       "hold every input row (a row that cannot be read, mapped or scored is "
                       "an error record with its file, line, reason and raw text). Resumable: "
                       "run again with the same arguments (one run at a time per output "
                       "folder). Exit status 2, after writing the outputs, when no row at all "
                       "could be used (or the inputs hold none); the message gives the first "
                       "error and, for a missing field, the fields the rows do have.")
    p.add_argument("inputs", nargs="*", type=Path, help="input files (default: the preset's); "
                   "CSV/TSV: the first non-blank line is the header; a TSV field quoted as "
                   "Python's csv module and pandas write it is unquoted, other quotes are text")
    p.add_argument("--output-dir", type=_output_dir_arg, required=True,
                   help="folder for the outputs (made if missing)")
    p.add_argument("--preset", choices=sorted(PRESETS), help="field mapping + label scheme "
                   "(+ default files under ../shared/data) of a known data set")
    p.add_argument("--split", choices=("eval", "all"),
                   help="with --preset and no inputs: 'eval' (default) scores the preset's "
                   "evaluation split only, never rows a shipped model was trained on; 'all' "
                   "scores every row of its default files, read through the preset's loader "
                   "(presets whose files hold a train split too: fever, covidfact, summedits, "
                   "frank)")
    p.add_argument("--claim-field")
    p.add_argument("--evidence-field", help="a field with a string or a list of strings; "
                   "several fields separated by commas are joined")
    p.add_argument("--label-field")
    p.add_argument("--id-field", help="the rows' id field (an error if the first row lacks "
                   "it, an error record for a later row without it); default: the preset's, "
                   "else 'id' (a row without it is named FILE:LINE); an empty or repeated id "
                   "is an error record; 'none': every row is named FILE:LINE")
    p.add_argument("--scheme", choices=SCHEMES,
                   help="3class (SUPPORTS/REFUTES/NEI), supports-refutes or supported-not")
    p.add_argument("--label-map", type=_label_map_arg, metavar="RAW=LABEL,...",
                   help="what raw labels mean, e.g. 0=entailment,1=neutral,2=contradiction "
                   "(MNLI, SNLI, ANLI numbering): class numbers (0, 1, 2) are error records "
                   "without it, since data sets number their classes differently; default: "
                   "the preset's (SummEdits, FRANK: 1=SUPPORTS,0=NOT_SUPPORTED); a map "
                   "that starts with '-' is given with '=': --label-map=-1=REFUTES,...")
    p.add_argument("--mode", choices=("nli", "ensemble"), default="nli")
    p.add_argument("--threshold", type=_threshold_arg, default="auto",
                   help="2-class schemes: SUPPORTS iff p(SUPPORTS) >= this cut; 'auto' "
                   "(default): the cut tuned for the model (for the preset, else the scheme), "
                   "else 0.5; with --mode ensemble the meta-classifier's cut (0.41), as the "
                   "verifier decides")
    p.add_argument("--model", help="HF NLI model id or path (default: the embedded model)")
    p.add_argument("--device")
    p.add_argument("--batch-size", default="auto", help="an int, or 'auto'")
    p.add_argument("--max-length", type=int, default=512)
    p.add_argument("--dtype", choices=("auto", "float32", "bfloat16", "float16"))
    p.add_argument("--hypothesis-sentences", choices=("auto", "on", "off"), default="auto",
                   help="score a claim of several sentences sentence by sentence and average "
                   "(default auto: as the model's config.json says; the embedded model: on)")
    p.add_argument("--chunk-rows", type=int, default=1024, help="rows committed at a time")
    p.add_argument("--engine", choices=("local", "ray"), default="local")
    p.add_argument("--ray-actors", type=int, default=2)
    p.add_argument("--ray-gpus-per-actor", type=float, default=0.0)
    p.add_argument("--limit", type=int, default=0, help="only the first N rows (0 = all)")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--progress", choices=("auto", "on", "off"), default="auto")
    p.set_defaults(func=_cmd_eval)


#: ``auto|on|off`` options -> ``None`` (the component decides), ``True``, ``False``.
_AUTO_ON_OFF: dict[str, bool | None] = {"auto": None, "on": True, "off": False}


def _threshold_arg(text: str) -> float | str:
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be 'auto' or a number between 0 and 1, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1, got {text!r}")
    return value


def _output_dir_arg(text: str) -> Path:
    """A folder to write into (:func:`verifier.batch.check_output_dir`).

    Checked by argparse, before a preset writes its inputs there.
    """
    from verifier.batch import check_output_dir

    try:
        return check_output_dir(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _label_map_arg(text: str) -> dict[str, str]:
    """``RAW=LABEL,RAW=LABEL`` as a dict (the labels are checked by EvalConfig).

    A raw label given twice (compared as :func:`verifier.batch.check_label_map` compares
    them, :func:`verifier.batch.label_key`: trimmed, any case, ``01`` as ``1``) is refused
    here: the dict would keep the last mapping only.
    """
    from verifier.batch import label_key

    pairs = [item.partition("=") for item in text.split(",")]
    if not text.strip() or any(not sep or not raw.strip() or not label.strip()
                               for raw, sep, label in pairs):
        raise argparse.ArgumentTypeError(f"must be RAW=LABEL pairs separated by commas, e.g. "
                                         f"0=entailment,1=neutral,2=contradiction; got {text!r}")
    seen: set[str] = set()
    for raw, _, _ in pairs:
        key = label_key(raw)
        if key in seen:
            raise argparse.ArgumentTypeError(f"gives the raw label {raw.strip()!r} twice; "
                                             f"map each raw label once, got {text!r}")
        seen.add(key)
    return {raw.strip(): label.strip() for raw, _, label in pairs}


def _cmd_eval(args: argparse.Namespace) -> int:
    from verifier.batch import (
        CLASSES,
        PRESETS,
        SPLIT_FIELDS,
        EvalConfig,
        FieldMap,
        resolve_preset_inputs,
        run_eval,
        write_preset_split,
    )

    preset = PRESETS[args.preset] if args.preset else None
    if args.split is not None and (preset is None or args.inputs):
        raise ValueError(f"--split applies to --preset without input files, got --split "
                         f"{args.split!r} with {'input files' if args.inputs else 'no --preset'}")
    if args.split == "all" and preset is not None and not preset.holds_train:
        whole = sorted(n for n, p in PRESETS.items() if p.holds_train)
        raise ValueError(f"--split all: the {args.preset} preset's files hold its eval split "
                         f"only (they were scored as the eval split, unsaid); it applies to "
                         f"{', '.join(whole)}")
    base = preset.fields if preset else FieldMap()
    inputs = list(args.inputs)
    from_loader = False
    if preset is not None and not inputs:
        # through the loader, which normalises (FEVER's CSV fields) and builds evidence
        # that is no one field of the file (AVeriTeC's question-answer pairs)
        if preset.holds_train or preset.loader:
            inputs = [write_preset_split(args.preset, None if args.split == "all" else "eval",
                                         args.output_dir / "inputs")]
            base, from_loader = SPLIT_FIELDS, True
        else:
            inputs = resolve_preset_inputs(args.preset)
    elif preset is not None and preset.holds_train:
        own = {f.resolve() for f in resolve_preset_inputs(args.preset, must_exist=False)
               if f.exists()}
        given = [str(f) for f in inputs if Path(f).resolve() in own]
        if given:  # read whole: the train split too, which the shipped models learnt from
            logger.warning(
                "%s: the preset's own data, read whole, holds its train split, which the "
                "embedded models were fitted on: scores on it are higher than on unseen data; "
                "leave the input files out to score its eval split (--split eval, the "
                "default)", ", ".join(given))
    for option in ("claim_field", "evidence_field", "label_field", "id_field"):
        value = getattr(args, option)
        if value is not None and not value.strip():
            raise ValueError(f"--{option.replace('_', '-')} must name a field, got {value!r}")
    no_id = args.id_field is not None and args.id_field.strip().lower() == "none"
    fields = FieldMap(
        claim=args.claim_field if args.claim_field is not None else base.claim,
        evidence=args.evidence_field if args.evidence_field is not None else base.evidence,
        label=args.label_field if args.label_field is not None else base.label,
        id=None if no_id else args.id_field if args.id_field is not None else base.id,
    )
    scheme = args.scheme or (preset.scheme if preset else "3class")
    label_map = args.label_map
    if label_map is None and preset is not None and not from_loader:  # the loader maps them
        label_map = preset.label_map
    bs: int | str = args.batch_size
    if bs != "auto":
        try:
            bs = int(bs)
        except ValueError:
            raise ValueError(
                f"--batch-size must be an int or 'auto', got {args.batch_size!r}"
            ) from None
    cfg = EvalConfig(inputs, args.output_dir, fields=fields, scheme=scheme, mode=args.mode,
                     model=args.model, device=args.device, batch_size=bs,
                     max_length=args.max_length, dtype=args.dtype,
                     hypothesis_sentences=_AUTO_ON_OFF[args.hypothesis_sentences],
                     chunk_rows=args.chunk_rows,
                     engine=args.engine, ray_actors=args.ray_actors,
                     ray_gpus_per_actor=args.ray_gpus_per_actor, limit=args.limit,
                     plots=not args.no_plots,
                     threshold=None if args.threshold == "auto" else args.threshold,
                     preset=args.preset,
                     # named, even as the default 'id', or by a preset: the rows must have it
                     require_id=(bool(args.id_field) or args.preset is not None)
                     and not no_id,
                     from_loader=from_loader, label_map=label_map)
    mapped = ("; labels " + ", ".join(f"{k}={v}" for k, v in cfg.label_map.items())
              if cfg.label_map else "")
    print(f"fields: claim={fields.claim} evidence={fields.evidence} label={fields.label} "
          f"id={fields.id}; label scheme {scheme}: {', '.join(CLASSES[scheme])}{mapped}",
          file=sys.stderr)
    show = _AUTO_ON_OFF[args.progress]
    m = run_eval(cfg, show_progress_bar=show)
    keys = ("n", "n_errors", "accuracy", "macro_f1", "balanced_accuracy", "auroc", "ece",
            "threshold", "threshold_source")
    _print_json({k: m[k] for k in keys if k in m})
    return 0


# ----------------------------------------------------------------------------- main
# Modules that add subcommands: each has ``add_subparser(subparsers)`` (the older spelling
# ``add_subparsers`` is accepted) that adds its parsers and sets ``func`` on each. A module
# that is not there is skipped; one that fails to import is logged and skipped.
_SUBCOMMAND_MODULES: tuple[str, ...] = ("verifier.cli_rag", "verifier.batch")


def _add_module_subcommands(sub: argparse._SubParsersAction, modules: Sequence[str]) -> None:
    import importlib

    for name in modules:
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
                continue  # the module itself is missing: skipped silently
            logger.warning("CLI: subcommands of %s are unavailable: %s", name, exc)
            continue
        except ImportError as exc:
            logger.warning("CLI: subcommands of %s are unavailable: %s", name, exc)
            continue
        add = getattr(mod, "add_subparser", None) or getattr(mod, "add_subparsers", None)
        if callable(add):
            add(sub)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand."""
    parser = argparse.ArgumentParser(prog="verifier", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more logging (-vv: debug, with tracebacks of errors)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_module_subcommands(sub, _SUBCOMMAND_MODULES)
    if "eval" not in sub.choices:  # verifier.batch did not add its own
        _add_eval(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 bad input or a known error, 130 Ctrl-C).

    Bad input (a ``ValueError``/``TypeError``/``OSError`` or a toolkit error) prints one line
    ``verifier COMMAND: error: ...`` on stderr, without a traceback (``-vv`` logs it).
    """
    # Idle OpenMP workers sleep instead of spinning (read when torch is first imported): on
    # a shared CPU, spinning workers made generation up to 5x slower.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse printed usage (and the error) on stderr
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    logging.basicConfig(level=logging.WARNING - 10 * min(args.verbose, 2),
                        format="%(levelname)s %(name)s: %(message)s")
    from verifier.errors import VerifierError

    try:
        from verifier.cli_rag import text_value

        for name, value in vars(args).items():  # undecodable bytes in an argument
            if isinstance(value, str):
                text_value(f"--{name.replace('_', '-')}", value)
        return int(args.func(args) or 0)
    except (ValueError, TypeError, OSError, VerifierError) as exc:
        logger.debug("error details", exc_info=True)
        print(f"verifier {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"verifier {args.command}: interrupted", file=sys.stderr)
        return 130
