"""Mitigation: rewrite a draft from its claim verdicts (citations, corrections, hedges)."""

from __future__ import annotations

from typing import Any

__all__ = ["Mitigator", "MitigatedAnswer", "Edit", "Reference", "correct_claim"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from mitigation import mitigator

        return getattr(mitigator, name)
    raise AttributeError(f"module 'mitigation' has no attribute {name!r}")
