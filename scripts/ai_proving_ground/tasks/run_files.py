"""apg run's own files in the run directory, kept as apg wrote them and checked before use.

The adapter writes only its work folder (``work/``, its ``APG_RUN_DIR``), ``home/`` and ``tmp/``;
the sandbox leaves the rest of the run directory readable only. :class:`RunFiles` remembers what
apg wrote there (``run.json``, ``request.json``, ``prompt.txt``, the logs, the oracle's
reference solution) as it left it, and before apg trusts or rewrites one it checks that the
entry is still that regular file: a folder, a link or another file in its place (an unconfined
adapter, or a hole in a sandbox) is a broken record, :class:`RunRecordBroken`
(``APG_RUN_RECORD_BROKEN``), never a crash and never silently overwritten. The raw output of a
known agent CLI is copied once the adapter is gone (:meth:`RunFiles.collect_as`: its stream from
apg's own ``stdout.log``, Codex's session out of the work folder): only regular files, opened
without following a link, at most the log limit of each.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_bytes
from ai_proving_ground.report import say

RECORD_BROKEN = "APG_RUN_RECORD_BROKEN"
# apg's capture of the adapter's stdout: an agent CLI's event stream, out of the agent's reach.
STDOUT_LOG = "stdout.log"
# Files apg keeps writing while the adapter runs (a later turn's in turns/<n>/ too): their size
# and time change, their inode not.
GROWING = frozenset({STDOUT_LOG, "stderr.log"})


class RunRecordBroken(ApgError):
    """A file apg wrote in the run directory is no longer the file it wrote."""

    def __init__(self, run_dir: Path, record: dict[str, Any], problems: list[str]) -> None:
        super().__init__(RECORD_BROKEN, f"run {run_dir.name}: {'; '.join(problems)} in "
                         f"{run_dir}; apg's records of this run cannot be trusted (something "
                         "other than apg changed them while the adapter ran)", exit_code=1)
        self.run_dir = run_dir
        self.record = record
        self.problems = problems


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a regular file"


class RunFiles:
    """What apg wrote in one run directory, by name, as it left each file (its lstat)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._seen: dict[str, os.stat_result] = {}

    def note(self, *names: str) -> None:
        """Remember ``names`` as apg just wrote them."""
        for name in names:
            self._seen[name] = os.lstat(self.run_dir / name)

    def problems(self) -> list[str]:
        """Each remembered file that is gone, not a regular file, replaced or rewritten."""
        found = []
        for name, before in self._seen.items():
            try:
                now = os.lstat(self.run_dir / name)
            except FileNotFoundError:
                found.append(f"{name} was removed")
                continue
            if not stat.S_ISREG(now.st_mode):
                found.append(f"{name} is {_kind(now.st_mode)}, not the file apg wrote")
            elif (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
                found.append(f"{name} was replaced")
            elif os.path.basename(name) not in GROWING and (now.st_size, now.st_mtime_ns) != (before.st_size,
                                                                           before.st_mtime_ns):
                found.append(f"{name} was rewritten")
        return found

    def check(self, record: dict[str, Any]) -> None:
        """Raise :class:`RunRecordBroken` when any remembered file is not as apg left it."""
        found = self.problems()
        if found:
            raise RunRecordBroken(self.run_dir, record, found)

    def discard(self, name: str) -> None:
        """Remove a file apg wrote (the oracle's reference solution), if it is still that file;
        anything else in its place stays, and stays reported."""
        if not any(p.startswith(f"{name} ") for p in self.problems()):
            with contextlib.suppress(FileNotFoundError):
                (self.run_dir / name).unlink()
            self._seen.pop(name, None)

    def collect_as(self, work: Path, pairs: tuple[tuple[str, str], ...], limit: int) -> list[str]:
        """Copy each (path under ``work``, name in the run directory): regular files only, never
        through a link, at most ``limit`` bytes each; what was skipped (``APG_RUN_RAW_SKIPPED``)."""
        skipped = []
        for name, target in pairs:
            try:
                fd = os.open(work / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except FileNotFoundError:
                continue
            except OSError as exc:  # a symlink (ELOOP), a folder it cannot read, ...
                skipped.append(f"{name}: {exc.strerror or exc}")
                continue
            with os.fdopen(fd, "rb") as handle:
                mode = os.fstat(handle.fileno()).st_mode
                if not stat.S_ISREG(mode):
                    skipped.append(f"{name}: {_kind(mode)}")
                    continue
                data = handle.read(limit)
            atomic_write_bytes(self.run_dir / target, data)
        for why in skipped:
            say("APG_RUN_RAW_SKIPPED", f"run {self.run_dir.name}: not copied out of work/: {why}")
        return skipped
