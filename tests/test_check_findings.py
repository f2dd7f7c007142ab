"""The check-findings benchmark's counting (benchmarks/check_findings.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from check_findings import changes, summary  # noqa: E402

SUB = ["entity_substitution", "MEDIUM", "John Woo"]
MISS = ["entity_not_in_evidence", "MEDIUM", "Several"]
HIGH = ["value_contradiction", "HIGH", "1999"]


def test_check_findings_summary_counts_claims_per_set_and_label() -> None:
    claims = {"fever|eval|1": ("REFUTES", [HIGH, SUB]), "fever|eval|2": ("REFUTES", []),
              "fever|train|3": ("SUPPORTS", [MISS])}
    assert summary(claims) == {
        "fever REFUTES": {"claims": 2, "high": 1, "substitution": 1, "term": 0},
        "fever SUPPORTS": {"claims": 1, "high": 0, "substitution": 0, "term": 0}}


def test_check_findings_changes_between_two_runs() -> None:
    old = {"fever|eval|1": ("REFUTES", [MISS]), "fever|eval|2": ("SUPPORTS", [HIGH]),
           "fever|eval|3": ("SUPPORTS", [MISS])}
    new = {"fever|eval|1": ("REFUTES", [HIGH, SUB]), "fever|eval|2": ("SUPPORTS", []),
           "fever|eval|3": ("SUPPORTS", [MISS])}
    assert changes(new, old) == {
        "fever REFUTES": {"changed": 1, "gained": 2, "lost": 1, "gain_high": 1, "lose_high": 0},
        "fever SUPPORTS": {"changed": 1, "gained": 0, "lost": 1, "gain_high": 0, "lose_high": 1}}
    with pytest.raises(ValueError, match="other claims"):
        changes(new, {k: v for k, v in old.items() if k != "fever|eval|3"})
