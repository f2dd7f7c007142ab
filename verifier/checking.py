"""Predicates that the parameter checks of every package share."""

from __future__ import annotations

import numbers
from pathlib import Path
from typing import TypeGuard


def is_int(value: object) -> TypeGuard[int]:
    """Whether ``value`` is an integer, numpy's included, and not a ``bool``.

    Typed as a guard for ``int``, which numpy's integers stand in for wherever they are used.

    Example:
        >>> import numpy as np
        >>> is_int(3), is_int(np.int64(3)), is_int(True), is_int(3.0)
        (True, True, False, False)
    """
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value: object) -> TypeGuard[float]:
    """Whether ``value`` is a real number, numpy's included, and not a ``bool``.

    NaN and the infinities are real numbers here: range checks reject them. Typed as a guard
    for ``float``, as :func:`is_int` is for ``int``.

    Example:
        >>> import numpy as np
        >>> is_real(0.5), is_real(np.float32(0.5)), is_real(2), is_real(False), is_real("1")
        (True, True, True, False, False)
    """
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def lone_surrogate(text: str) -> int | None:
    r"""Where ``text`` holds its first lone surrogate (``None``: it holds none).

    A lone surrogate (U+D800 to U+DFFF) is half of a character: a stream cut inside an emoji
    and decoded by a JSON parser gives one. No tokenizer can encode it, so every package
    refuses it at its input, naming the parameter, rather than failing deep in a tokenizer.

    Example:
        >>> lone_surrogate("Paris \ud83d is big"), lone_surrogate("Paris 🗼 is big")
        (6, None)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def surrogate_message(name: str, text: str, at: int) -> str:
    """The error message for a lone surrogate at ``text[at]`` of the input ``name``."""
    return (f"{name} holds a lone surrogate {text[at]!r} at position {at} (half of a "
            f"character: a text cut inside one?): {text!r:.80}")


def check_whole_characters(name: str, text: str) -> None:
    """Raise ``ValueError`` naming ``name`` when ``text`` holds a lone surrogate.

    Example:
        >>> check_whole_characters("draft", "Paris 🗼 is big")
    """
    if (at := lone_surrogate(text)) is not None:
        raise ValueError(surrogate_message(name, text, at))


def file_on_path(path: Path) -> Path | None:
    """The file that keeps ``path`` from being a folder (``None``: it is one, or can be made).

    ``path`` itself, or the nearest folder above it that exists, when that is a file.

    Example:
        >>> file_on_path(Path("/")) is None
        True
    """
    for p in (path, *path.parents):
        if p.exists():
            return None if p.is_dir() else p
    return None
