"""Shared helpers of the benchmark scripts (run as ``python benchmarks/<script>.py``)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def machine() -> dict:
    """What the figures were measured on."""
    import torch

    info = {"python": platform.python_version(), "torch": torch.__version__,
            "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None}
    try:
        flags = Path("/proc/cpuinfo").read_text().split("flags", 1)[1].split("\n", 1)[0]
        info["cpu_bf16"] = [f for f in ("amx_bf16", "avx512_bf16") if f in flags.split()]
    except (OSError, IndexError):
        pass
    return info


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a share ``successes / n`` (95 % for the default ``z``).

    Example:
        >>> tuple(round(x, 3) for x in wilson_interval(182, 200))
        (0.862, 0.942)
    """
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n >= 1, got successes={successes!r}, "
                         f"n={n!r}")
    p = successes / n
    half = z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    centre = p + z * z / (2 * n)
    denom = 1 + z * z / n
    return max(0.0, (centre - half) / denom), min(1.0, (centre + half) / denom)


def result_name(name: str) -> str:
    """Check a results file name (``NAME`` of ``benchmarks/results/NAME.json``): argparse type.

    Example:
        >>> result_name("nli_v05")
        'nli_v05'
        >>> result_name("/tmp/x.json")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        argparse.ArgumentTypeError: a results name is a bare file name ..., got '/tmp/x.json'
    """
    if not name or Path(name).name != name or name in (".", "..") or name.endswith(".json"):
        raise argparse.ArgumentTypeError(
            "a results name is a bare file name without .json (written as "
            f"benchmarks/results/NAME.json), got {name!r}")
    return name


def write_result(name: str, data: dict) -> Path:
    """Write ``benchmarks/results/<name>.json`` and return its path."""
    try:
        result_name(name)
    except argparse.ArgumentTypeError as exc:
        raise ValueError(str(exc)) from None
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"machine": machine(), **data}, indent=2) + "\n")
    print(f"wrote {path.relative_to(ROOT)}")
    return path
