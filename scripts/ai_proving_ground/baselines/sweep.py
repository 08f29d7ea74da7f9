"""The sweep: make a bed equal to its :class:`snapshot.BedSnapshot`, outside the keep-list.

Three stages. Plan: walk the bed (no link followed), compare each path with the snapshot (a
file by size, then by content hash) and read every object a write will need, checking its hash:
a changed snapshot is refused before anything in the bed changes. Write: in path order (a folder
before what it holds), replace each differing or missing path; a file goes new-then-rename, so
a killed reset leaves each file old or new. Remove: whatever the snapshot does not hold, a folder
whole, never through a link. The next reset repairs a killed one.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ai_proving_ground.baselines.snapshot import CHANGED, BedSnapshot, Entry, kind_of, read_file, walk
from ai_proving_ground.errors import ApgError
from ai_proving_ground.faults import crashpoint
from ai_proving_ground.layout import KeepMatcher


@dataclass
class SweepOutcome:
    """What the sweep changed: paths removed (the top of each removed folder) and written."""

    removed: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)


@dataclass
class _Plan:
    writes: list[Entry] = field(default_factory=list)  # parents first
    chmods: list[Entry] = field(default_factory=list)  # folders, set last
    file_modes: list[Entry] = field(default_factory=list)  # right bytes, wrong mode
    removals: list[str] = field(default_factory=list)
    contents: dict[str, bytes] = field(default_factory=dict)  # sha256 -> bytes, checked


def sweep(approot: Path, snapshot: BedSnapshot, keep: KeepMatcher) -> SweepOutcome:
    """Make everything in ``approot`` outside ``keep`` equal to ``snapshot``."""
    plan = _plan(approot, snapshot, keep)
    outcome = SweepOutcome()
    for entry in plan.writes:
        _write(approot / entry.path, entry, plan.contents)
        outcome.restored.append(entry.path)
    for entry in plan.file_modes:
        os.chmod(approot / entry.path, entry.mode)
        outcome.restored.append(entry.path)
    crashpoint("reset.tree.extracted")
    for relative in plan.removals:
        _remove(approot / relative)
        outcome.removed.append(relative)
        crashpoint("reset.tree.removing")  # fires after the first removal
    # Folder modes last: a folder recorded read-only must still take what is written into it.
    for entry in plan.chmods:
        os.chmod(approot / entry.path, entry.mode, follow_symlinks=False)
    return outcome


def _plan(approot: Path, snapshot: BedSnapshot, keep: KeepMatcher) -> _Plan:
    # Kept now, kept from the record too (the public files or baseline folder may have moved).
    target = {path: entry for path, entry in snapshot.entries.items() if not keep.keeps(path)}
    found = walk(approot, keep, target)
    plan = _Plan()
    equal: set[str] = set()
    for relative, info in found.items():
        want = target.get(relative)
        if want is None:
            parent = relative.rpartition("/")[0]
            if not parent or parent in target:  # the top of what goes: one removal, one line
                plan.removals.append(relative)
        elif _same(approot / relative, info, want):
            equal.add(relative)
            if want.kind != "link" and stat.S_IMODE(info.st_mode) != want.mode:
                (plan.chmods if want.kind == "dir" else plan.file_modes).append(want)
    plan.writes = [e for e in sorted(target.values(), key=lambda e: e.path.split("/"))
                   if e.path not in equal]
    plan.chmods += [e for e in plan.writes if e.kind == "dir"]
    for entry in plan.writes:
        if entry.kind == "file" and entry.data not in plan.contents:
            plan.contents[entry.data] = _object(snapshot, entry)
    plan.removals.sort(key=lambda p: p.split("/"))
    return plan


def _same(path: Path, info: os.stat_result, want: Entry) -> bool:
    """True when ``path`` (lstat ``info``) has the recorded type and content (modes aside)."""
    kind = kind_of(info.st_mode)
    if kind != want.kind:
        return False
    if kind == "file":
        return info.st_size == want.size and hashlib.sha256(read_file(path)).hexdigest() == want.data
    if kind == "link":
        return os.readlink(path) == want.data
    return True


def _object(snapshot: BedSnapshot, entry: Entry) -> bytes:
    path = snapshot.objects / entry.data
    try:
        content = read_file(path)
    except OSError as exc:
        raise ApgError(CHANGED, f"{path}, the recorded bytes of {entry.path}, cannot be read "
                       f"({exc.strerror or exc}); nothing was changed. Recapture the baseline "
                       "(apg provision after removing it)") from None
    if hashlib.sha256(content).hexdigest() != entry.data:
        raise ApgError(CHANGED, f"{path}, the recorded bytes of {entry.path}, no longer match "
                       "their hash; nothing was changed. Recapture the baseline")
    return content


def _write(path: Path, entry: Entry, contents: dict[str, bytes]) -> None:
    if entry.kind == "dir":
        if os.path.lexists(path) and not (path.is_dir() and not path.is_symlink()):
            _remove(path)
        if not os.path.lexists(path):
            path.mkdir()
        return
    if entry.kind == "link":
        if os.path.lexists(path):
            _remove(path)
        os.symlink(entry.data, path)
        return
    if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):
        _remove(path)
    # A fresh, exclusively created temporary: a name planted in advance is never followed.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".apg-restore", dir=path.parent)
    with os.fdopen(fd, "wb") as handle:
        handle.write(contents[entry.data])
    os.chmod(tmp, entry.mode)
    crashpoint("reset.tree.staged")  # fires at the first changed file, before its rename
    os.replace(tmp, path)
    crashpoint("reset.tree.extracting")  # fires after the first changed file is in place


def _remove(path: Path) -> None:
    """Remove ``path``; a folder whole, a link as a link (never what it points to)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
