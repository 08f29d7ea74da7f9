"""Diagnostics on stderr: each line starts with a stable APG_* token."""

from __future__ import annotations

import sys


def say(token: str, message: str) -> None:
    """One diagnostic line on stderr."""
    print(f"{token} {message}", file=sys.stderr, flush=True)
