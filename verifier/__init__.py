"""nli-verifier: a plug-and-play verifier for answers written by LLMs and RAG systems.

The front door: ``from verifier import ...``. Imports are lazy: importing ``verifier``
loads no model and no torch.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "Passage": "verifier.types",
    "Evidence": "verifier.types",
    "Claim": "verifier.types",
    "ClaimType": "verifier.types",
    "ClaimEvidence": "verifier.types",
    "ClaimVerdict": "verifier.types",
    "Generation": "verifier.types",
    "Status": "verifier.types",
    "NLIDetector": "verifier.nli",
    "Verifier": "verifier.verify",
    "Report": "verifier.verify",
    "VerifierError": "verifier.errors",
    "ConfigurationError": "verifier.errors",
    "ModelLoadError": "verifier.errors",
    "LabelMappingError": "verifier.errors",
}

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'verifier' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
