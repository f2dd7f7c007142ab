"""The packages, benchmarks and recipes stay ruff clean and type-check with mypy (settings in
pyproject.toml)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (the dev extra installs it)")
    return subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def test_ruff_clean() -> None:
    done = _run("ruff", "check", "verifier", "rag", "mitigation", "tests", "benchmarks",
                "models")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_clean() -> None:
    done = _run("mypy")  # the files and settings of [tool.mypy]
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
