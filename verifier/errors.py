"""The project's exception hierarchy: one module, a few narrow classes."""

from __future__ import annotations


class VerifierError(Exception):
    """Base class of every error this toolkit raises on purpose."""


class ConfigurationError(VerifierError, ValueError):
    """A component was configured with an invalid value (names the parameter and the value)."""


class ModelLoadError(VerifierError, RuntimeError):
    """Model weights, a tokenizer or an embedded package could not be loaded."""


class LabelMappingError(ModelLoadError):
    """A checkpoint's ``id2label`` cannot be mapped to the labels a component needs."""


class IndexMismatchError(VerifierError, ValueError):
    """A saved index was written by another embedding model or format version."""


class MissingDependencyError(VerifierError, ImportError):
    """An optional library is needed for this feature; the message says how to install it."""


def require(module: str, *, extra: str | None = None, package: str | None = None):
    """Import an optional module, or raise :class:`MissingDependencyError` saying how to get it.

    Args:
        module: Dotted module name to import.
        extra: The ``nli-verifier`` extra that installs it, if any.
        package: The PyPI distribution name when it differs from ``module``.

    Returns:
        The imported module.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised only without the package
        how = (
            f"pip install 'nli-verifier[{extra}]'" if extra else f"pip install {package or module}"
        )
        raise MissingDependencyError(f"{module!r} is required for this feature: {how}") from exc
