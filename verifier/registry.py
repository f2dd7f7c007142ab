"""A registry of components by versioned name (``"nli.hf.v1"``), open to entry points."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

_REGISTRY: dict[str, Callable[..., Any]] = {}
_ENTRY_POINT_GROUP = "nli_verifier.components"
_entry_points_loaded = False


def register(name: str) -> Callable[[F], F]:
    """Class decorator: register a component factory under ``name``.

    Example:
        >>> @register("example.echo.v1")
        ... class Echo:
        ...     pass
        >>> get("example.echo.v1") is Echo
        True
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, got {name!r}")

    def deco(obj: F) -> F:
        old = _REGISTRY.get(name)
        if old is not None and old is not obj and not _same_definition(old, obj):
            raise ValueError(f"component name {name!r} is already registered")
        _REGISTRY[name] = obj
        return obj

    return deco


def _same_definition(old: Any, new: Any) -> bool:
    """Whether ``new`` is ``old`` defined again (its module reloaded, e.g. by autoreload).

    A class defined inside a function (``f.<locals>.Thing``) is never the same definition:
    two of them share a name but are different components.
    """
    key = ("__module__", "__qualname__")
    if "<locals>" in str(getattr(new, "__qualname__", "")):
        return False
    return all(getattr(old, k, None) is not None and getattr(old, k, None) == getattr(new, k, None)
               for k in key)


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=_ENTRY_POINT_GROUP):
        try:
            _REGISTRY.setdefault(ep.name, ep.load())
        except Exception:  # a broken plug-in must not break the toolkit; say so loudly
            logger.exception("could not load component entry point %r", ep.name)


def _load_builtin() -> None:
    # Importing these modules runs their @register decorators.
    import importlib

    for mod in ("verifier.nli", "rag.retrieval", "rag.generation", "rag.decompose",
                "rag.pairing", "mitigation.mitigator"):
        try:
            importlib.import_module(mod)
        except ImportError as exc:  # an optional dependency is missing: say which
            logger.warning("registry: components of %s are unavailable: %s", mod, exc)


def get(name: str) -> Callable[..., Any]:
    """Return the component factory registered as ``name``.

    Raises:
        KeyError: Unknown name; the message lists the known names.
    """
    if name not in _REGISTRY:
        _load_builtin()
        _load_entry_points()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown component {name!r}; known: {sorted(_REGISTRY)}") from None


def names() -> list[str]:
    """Return every registered name (built-ins and entry points)."""
    _load_builtin()
    _load_entry_points()
    return sorted(_REGISTRY)


def create(name: str, **init_parameters: Any) -> Any:
    """Instantiate the component registered as ``name`` with keyword arguments."""
    return get(name)(**init_parameters)


def from_config(config: dict[str, Any]) -> Any:
    """Rebuild a component from ``{"type": name, "init_parameters": {...}}``."""
    if not isinstance(config, dict) or "type" not in config:
        raise ValueError(f"config must be a dict with a 'type' key, got {config!r}")
    return create(config["type"], **config.get("init_parameters", {}))
