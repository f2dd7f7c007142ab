"""Predicates that the parameter checks of every package share."""

from __future__ import annotations

import argparse
import math
import numbers
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeGuard


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


def arg_number(kind: type[int] | type[float], low: float, high: float | None = None, *,
               low_open: bool = False) -> Callable[[str], Any]:
    """An argparse ``type``: a finite ``kind`` from ``low`` to ``high`` (included).

    ``low`` is excluded when ``low_open``; anything else is an error naming the range and
    the value.

    Example:
        >>> arg_number(int, 0)("3"), arg_number(float, 0, 1)("0.5")
        (3, 0.5)
        >>> arg_number(float, 0, low_open=True)("0")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: must be a number > 0, got '0'
    """
    name = "a whole number" if kind is int else "a number"
    rule = (f"in ({low}, {high}]" if low_open else f"in [{low}, {high}]") if high is not None \
        else f"> {low}" if low_open else f">= {low}"

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        if (value is None or not math.isfinite(value) or value < low
                or (low_open and value == low) or (high is not None and value > high)):
            raise argparse.ArgumentTypeError(f"must be {name} {rule}, got {text!r}")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse
