"""One provision or reset at a time per bed: an advisory lock the kernel frees if we die."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ai_proving_ground.errors import ApgError
from ai_proving_ground.settings import DEFAULT_LOCK_WAIT_SECONDS

_POLL_SECONDS = 0.1


@contextlib.contextmanager
def bed_lock(path: Path, what: str, wait_seconds: float = DEFAULT_LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Hold the lock at ``path``; wait ``wait_seconds`` at most, then refuse with APG_LOCK_BUSY."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _holder(path)
                    raise ApgError("APG_LOCK_BUSY", f"another provision or reset holds {path}"
                                   f"{holder}; {what} waited {wait_seconds:g}s. Retry when "
                                   "it finishes (AI_PG_LOCK_TIMEOUT sets the wait)") from None
                time.sleep(_POLL_SECONDS)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {what}\n".encode())
        yield
    finally:
        os.close(fd)  # closing releases the flock


@contextlib.contextmanager
def only_one(path: Path, holder: str, busy: Callable[[str], ApgError]) -> Iterator[None]:
    """Hold the lock at ``path`` or refuse at once with ``busy(who holds it)``; never waits."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)  # not inherited by children (PEP 446)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise busy(os.pread(fd, 200, 0).decode(errors="replace").strip() or "unknown") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} {holder}\n".encode())
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _holder(path: Path) -> str:
    try:
        text = path.read_text().strip()
    except OSError:
        return ""
    return f" (pid and command: {text})" if text else ""
