"""CLI subcommands of the Baseline RAG module (index, ask, decompose): filled in below."""

from __future__ import annotations

import argparse


def add_subparsers(sub: argparse._SubParsersAction) -> None:
    """Register the RAG subcommands."""
