"""Diagnostics on stderr: each line starts with a stable APG_* token.

A harness that runs several product steps side by side in threads (the campaign runner) gives
each thread its own streams with :func:`redirected`, so one attempt's diagnostics and command
output land in that attempt's log, never on the harness's own stdout or in another attempt's.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import TextIO

_streams = threading.local()


def stdout() -> TextIO:
    """This thread's stdout (``sys.stdout`` unless :func:`redirected`)."""
    stream: TextIO = getattr(_streams, "out", None) or sys.stdout
    return stream


def stderr() -> TextIO:
    """This thread's stderr (``sys.stderr`` unless :func:`redirected`)."""
    stream: TextIO = getattr(_streams, "err", None) or sys.stderr
    return stream


@contextlib.contextmanager
def redirected(out: TextIO, err: TextIO) -> Iterator[None]:
    """Send this thread's output and diagnostics to ``out`` and ``err`` inside the block."""
    saved = getattr(_streams, "out", None), getattr(_streams, "err", None)
    _streams.out, _streams.err = out, err
    try:
        yield
    finally:
        _streams.out, _streams.err = saved


def say(token: str, message: str) -> None:
    """One diagnostic line on (this thread's) stderr."""
    print(f"{token} {message}", file=stderr(), flush=True)
