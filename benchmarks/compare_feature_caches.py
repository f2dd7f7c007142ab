"""Which rows' features differ between two feature caches of ``bench_verifier.py --cache``.

A rerun of ``bench_verifier.py`` on changed code computes a fresh cache; this says which of
its rows moved against the cache of the run before, per data set, and which features moved,
so that a change in the per-set table can be traced to the rows and detectors behind it::

    python benchmarks/compare_feature_caches.py OLD/eval.jsonl NEW/eval.jsonl

A feature differs when one side lacks it or the two values differ by more than 1e-9 (``NaN``
equals ``NaN``). Rows only one cache holds are counted apart. Each moved feature is printed
with the rows it moved in and the largest change of its value (``-`` where it only went
missing or appeared). Any of the recipes' caches compares the same way (``train.jsonl``,
``pipeline.jsonl``).
"""

from __future__ import annotations

import argparse
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from _common import ROOT  # noqa: F401  (puts the project on the path)

from verifier.training import _FeatureCache


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) and math.isnan(b):
        return True
    return abs(a - b) <= 1e-9


def changed_rows(old: Path, new: Path
                 ) -> tuple[dict[str, Counter], dict[str, int], int, dict[str, float]]:
    """Per data set: how many rows each feature moved in, rows that moved, rows in one cache;
    and per feature the largest absolute change between two numbers (absent: none)."""
    with _FeatureCache(old) as a, _FeatureCache(new) as b:
        rows_a, rows_b = a.rows, b.rows
    features: dict[str, Counter] = defaultdict(Counter)
    moved: Counter = Counter()
    largest: dict[str, float] = {}
    for key, row in rows_b.items():
        if key not in rows_a:
            continue
        fa, fb = rows_a[key]["features"] or {}, row["features"] or {}
        diff = [f for f in set(fa) | set(fb) if not _same(fa.get(f), fb.get(f))]
        if diff:
            moved[key[0]] += 1
            features[key[0]].update(diff)
        for f in diff:
            va, vb = fa.get(f), fb.get(f)
            if va is not None and vb is not None and not (math.isnan(va) or math.isnan(vb)):
                largest[f] = max(largest.get(f, 0.0), abs(va - vb))
    alone = len(set(rows_a) ^ set(rows_b))
    return features, dict(moved), alone, largest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path, help="the cache of the run before (eval.jsonl, ...)")
    ap.add_argument("new", type=Path, help="the cache of this run")
    args = ap.parse_args()
    for path in (args.old, args.new):
        if not path.is_file():
            ap.error(f"no cache file {str(path)!r}")
    features, moved, alone, largest = changed_rows(args.old, args.new)
    total = sum(moved.values())
    print(f"rows whose features differ: {total}; rows in one cache only: {alone}")
    for name in sorted(moved):
        top = ", ".join(f"{f} {n} (by <= {largest[f]:.2g})" if f in largest else f"{f} {n} (-)"
                        for f, n in features[name].most_common(6))
        print(f"  {name:<10} {moved[name]:5d} rows: {top}")


if __name__ == "__main__":
    main()
