"""One campaign per directory: the exclusive lock a runner holds on its campaign directory."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


class Busy(Exception):
    """Another campaign runner holds the directory."""


@contextlib.contextmanager
def only_campaign(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``directory`` or raise :class:`Busy`.

    The lock is an ``flock`` on the directory itself, not on a file inside it: a lock file would
    make the directory non-empty before the lock is held, and a loser would have written into
    the winner's directory. The kernel frees it when the runner dies, so a crashed campaign
    leaves no stale lock and can be resumed at once. ``apg campaign run`` and ``apg campaign
    resume`` take the same lock, so a resume never works a directory a runner still fills."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)  # not inherited by children (PEP 446)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Busy(f"another apg campaign run is writing into {directory}; nothing was "
                       "written. Wait for it to finish, or pass a new --out directory") from None
        yield
    finally:
        os.close(fd)  # closing releases the flock
