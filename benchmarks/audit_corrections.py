"""The corrections the mitigator writes on the labelled sets' false claims, and what moved.

Runs :func:`mitigation.mitigator.correct_claim` (with :func:`mitigation.checks.run_checks`'
findings, as the mitigator does for a contradicted claim) on every claim of the train and
eval splits of the sets in :data:`verifier.training.META_SETS` that its data set does not
label as supported, against its own evidence. Each corrected claim is read by the embedded
NLI model against that evidence: a correction the model reads as entailed has put the
evidence's value in; one it reads as contradicted may have put in a wrong one ("a tour of
duty in 1967" from the evidence's year of birth), or left another error of the claim in
place ("Sausage Party was only released in 2016"). The model is no judge of truth: the
figures are for comparing two versions of the code, and the claims behind them are listed.

Prints per set how many claims are corrected and how many of the corrections the model
reads as entailed (p(entailment) >= 0.5) and as contradicted (p(contradiction) above
p(entailment)), and writes them to ``benchmarks/results/corrections.json``. With
``--against FILE`` (this script's ``--out`` of another version of the code; run an older
version from a worktree, as ``check_findings.py`` says), it also lists the claims whose
correction was added, withheld or changed::

    python benchmarks/audit_corrections.py --out /tmp/new.json --against /tmp/old.json

The per-claim corrections (``--out``) hold claims' ids, the corrected claims and their
reasons.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections import Counter
from pathlib import Path
from typing import Any

from verifier.training import META_SETS, sample_examples, status_label

logger = logging.getLogger("audit_corrections")
HERE = Path(__file__).resolve().parent


def corrections() -> tuple[dict[str, list[str]], dict[str, str]]:
    """``"set|split|id"`` -> [corrected claim, reason] for each labelled false claim the
    mitigator corrects, and the evidence of each."""
    from mitigation.checks import run_checks
    from mitigation.mitigator import correct_claim

    fixed, evidence = {}, {}
    for name in META_SETS:
        for split in ("train", "eval"):
            for e in sample_examples(name, split, None):
                if status_label(e.label) == "Supported":  # never corrected
                    continue
                found = run_checks(e.claim, [e.evidence_text])
                if not found:
                    continue
                out = correct_claim(e.claim, [e.evidence_text], found)
                if out is not None:
                    key = f"{name}|{split}|{e.id}"
                    fixed[key], evidence[key] = list(out), e.evidence_text
    return fixed, evidence


def summary(fixed: dict[str, list[str]], readings: dict[str, tuple[float, float]]
            ) -> dict[str, dict[str, int]]:
    """Per set: corrections, those read as entailed, those read as contradicted.

    ``readings``: each corrected claim's (p(entailment), p(contradiction)) against its
    evidence.
    """
    out: dict[str, Counter] = {}
    for key in fixed:
        ent, con = readings[key]
        c = out.setdefault(key.split("|")[0], Counter())
        c["corrected"] += 1
        c["entailed"] += ent >= 0.5
        c["contradicted"] += con > ent
    total: Counter = Counter()
    for c in out.values():
        total.update(c)
    return {**{k: dict(v) for k, v in sorted(out.items())}, "all": dict(total)}


def changes(new: dict[str, list[str]], old: dict[str, list[str]]
            ) -> dict[str, list[tuple[str, str | None, str | None]]]:
    """Claims whose correction was ``added``, ``withheld`` or ``changed`` between two runs:
    ``(key, old corrected claim, new corrected claim)`` each, in key order."""
    out: dict[str, list[tuple[str, str | None, str | None]]] = {
        "added": [], "withheld": [], "changed": []}
    for key in sorted(new.keys() | old.keys()):
        a, b = old.get(key), new.get(key)
        if a is None and b is not None:
            out["added"].append((key, None, b[0]))
        elif b is None and a is not None:
            out["withheld"].append((key, a[0], None))
        elif a is not None and b is not None and a[0] != b[0]:
            out["changed"].append((key, a[0], b[0]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None,
                    help="write the per-claim corrections here")
    ap.add_argument("--against", type=Path, default=None,
                    help="another version's --out: list what moved between the two")
    ap.add_argument("--results", type=Path, default=HERE / "results" / "corrections.json",
                    help="where the per-set figures go")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    from verifier.nli import NLIDetector

    fixed, evidence = corrections()
    keys = list(fixed)
    probs = NLIDetector().predict([(evidence[k], fixed[k][0]) for k in keys])
    readings = {k: (float(p[0]), float(p[2])) for k, p in zip(keys, probs, strict=True)}
    if args.out:
        args.out.write_text(json.dumps(fixed) + "\n")
    figures = summary(fixed, readings)
    result: dict[str, Any] = {"claims": "labelled not supported, train and eval splits",
                              "nli": "embedded", "per_set": figures}
    print("corrections of the labelled false claims; per set: corrected, read by the NLI "
          "model as entailed, as contradicted")
    for name, c in figures.items():
        print(f"  {name:12s} {c['corrected']:6d} {c['entailed']:6d} {c['contradicted']:6d}")
    if args.against:
        moved = changes(fixed, json.loads(args.against.read_text()))
        result["against"] = {k: len(v) for k, v in moved.items()}
        for kind, rows in moved.items():
            print(f"{kind} against {args.against}: {len(rows)}")
            for key, before, after in rows:
                ent = f" (entailed {readings[key][0]:.2f})" if key in readings else ""
                print(f"  {key}: {before!r} -> {after!r}{ent}")
    args.results.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.results}")


if __name__ == "__main__":
    main()
