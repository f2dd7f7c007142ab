"""What the deterministic checks find on the claims of the labelled sets, and what a change moved.

Runs :func:`mitigation.checks.run_checks` on every claim of the train and eval splits of the
sets in :data:`verifier.training.META_SETS`, against its own evidence, and prints per set and
label how many claims get a HIGH finding, how many an ``entity_substitution`` one and how many
a ``term_substitution`` one. With
``--against FILE`` (this script's ``--out`` of another version of the code), it also prints
per set and label how many claims have other findings at all, how many findings they
gained and lost, and how many claims gain or lose a HIGH finding. To read an older
version, run this file from a worktree of it, its packages first on the path::

    git worktree add /tmp/old REV && cp benchmarks/check_findings.py /tmp/old/benchmarks/
    (cd /tmp/old && PYTHONPATH=. python benchmarks/check_findings.py --out /tmp/old.json)
    python benchmarks/check_findings.py --out /tmp/new.json --against /tmp/old.json

The per-claim findings (``--out``) hold claims' ids and finding values, no other text.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections import Counter
from pathlib import Path

from verifier.training import META_SETS, sample_examples

logger = logging.getLogger("check_findings")

#: One claim's findings: ``[type, severity, value]`` each, sorted.
Findings = list[list[str]]


def claim_findings() -> dict[str, tuple[str, Findings]]:
    """``"set|split|id"`` -> (label, the claim's findings against its evidence)."""
    from mitigation.checks import run_checks

    out = {}
    for name in META_SETS:
        for split in ("train", "eval"):
            for e in sample_examples(name, split, None):
                found = run_checks(e.claim, [e.evidence_text])
                out[f"{name}|{split}|{e.id}"] = (e.label, sorted(
                    [f.type, f.severity.value, f.value or ""] for f in found))
    return out


def _high(findings: Findings) -> bool:
    return any(severity == "HIGH" for _, severity, _ in findings)


def summary(claims: dict[str, tuple[str, Findings]]) -> dict[str, dict[str, int]]:
    """Per ``"set label"``: claims, those with a HIGH finding, those with a name substitution
    (``substitution``) and those with a term substitution (``term``)."""
    out: dict[str, Counter] = {}
    for key, (label, findings) in claims.items():
        c = out.setdefault(f"{key.split('|')[0]} {label}", Counter())
        c["claims"] += 1
        c["high"] += _high(findings)
        c["substitution"] += any(t == "entity_substitution" for t, _, _ in findings)
        c["term"] += any(t == "term_substitution" for t, _, _ in findings)
    return {k: dict(v) for k, v in sorted(out.items())}


def changes(new: dict[str, tuple[str, Findings]], old: dict[str, tuple[str, Findings]]
            ) -> dict[str, dict[str, int]]:
    """Per ``"set label"``: claims whose findings differ (``changed``), the findings they
    gained and lost (``gained``, ``lost``), and the claims that gain and that lose a HIGH one.

    Raises:
        ValueError: when the two runs do not hold the same claims.
    """
    if new.keys() != old.keys():
        raise ValueError(f"the runs hold other claims: {len(new.keys() - old.keys())} only in "
                         f"the new one, {len(old.keys() - new.keys())} only in the old one")
    out: dict[str, Counter] = {}
    for key, (label, findings) in sorted(new.items()):
        before = old[key][1]
        if findings == before:
            continue
        c = out.setdefault(f"{key.split('|')[0]} {label}", Counter())
        c["changed"] += 1
        c["gained"] += sum(f not in before for f in findings)
        c["lost"] += sum(f not in findings for f in before)
        c["gain_high"] += _high(findings) and not _high(before)
        c["lose_high"] += _high(before) and not _high(findings)
    return {k: dict(v) for k, v in out.items()}


def _load(path: Path) -> dict[str, tuple[str, Findings]]:
    return {k: (v[0], v[1]) for k, v in json.loads(path.read_text()).items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="write the per-claim findings here")
    ap.add_argument("--against", type=Path, default=None,
                    help="another version's --out: print what moved between the two")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    claims = claim_findings()
    if args.out:
        args.out.write_text(json.dumps(claims) + "\n")
    print(f"{len(claims)} claims; per set and label: claims, with a HIGH finding, with an "
          "entity_substitution finding, with a term_substitution finding")
    for key, c in summary(claims).items():
        print(f"  {key:28s} {c['claims']:6d} {c['high']:6d} {c['substitution']:6d} "
              f"{c['term']:6d}")
    if args.against:
        moved = changes(claims, _load(args.against))
        print(f"against {args.against}: per set and label, claims whose findings differ, "
              "findings gained, findings lost, claims that gain a HIGH finding, that lose one")
        for key, c in moved.items():
            print(f"  {key:28s} " + " ".join(f"{c.get(k, 0):6d}" for k in (
                "changed", "gained", "lost", "gain_high", "lose_high")))


if __name__ == "__main__":
    main()
