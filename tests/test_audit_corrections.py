"""The corrections audit's counting (benchmarks/audit_corrections.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from audit_corrections import changes, summary  # noqa: E402


def test_audit_corrections_summary_counts_per_set_and_in_all() -> None:
    fixed = {"fever|eval|1": ["It opened in 1889.", "r"], "fever|eval|2": ["B.", "r"],
             "frank|train|3": ["C.", "r"]}
    readings = {"fever|eval|1": (0.9, 0.05), "fever|eval|2": (0.2, 0.7),
                "frank|train|3": (0.4, 0.3)}
    assert summary(fixed, readings) == {
        "fever": {"corrected": 2, "entailed": 1, "contradicted": 1},
        "frank": {"corrected": 1, "entailed": 0, "contradicted": 0},
        "all": {"corrected": 3, "entailed": 1, "contradicted": 1}}


def test_audit_corrections_changes_between_two_runs() -> None:
    old = {"a": ["A1.", "r"], "b": ["B1.", "r"], "c": ["C1.", "r"]}
    new = {"a": ["A1.", "r"], "c": ["C2.", "r"], "d": ["D1.", "r"]}
    assert changes(new, old) == {"added": [("d", None, "D1.")],
                                 "withheld": [("b", "B1.", None)],
                                 "changed": [("c", "C1.", "C2.")]}
