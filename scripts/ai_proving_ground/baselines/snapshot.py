"""The whole bed as its baseline held it: recorded at provision, restored by reset (the sweep).

Every folder, file and symlink outside the keep-list (:data:`layout.KEEP_LIST`) is recorded:
``.git``, git-ignored files and top-level folders no one declared included. A file's bytes go to
``<baseline dir>/objects/<sha256>`` (shared by every set of the bed), the listing to
``bed.<key>.json`` (:class:`BedSnapshotRecord`). Reset walks the bed without following a link,
rewrites what differs from the listing, creates what is missing and removes what the listing
does not hold; nothing is read from git, so what the bed's tag names now changes nothing.

``.git`` is one repository for every set of the bed: its target is the union of the listings
of every set recorded here, the newest capture winning where they differ, so resetting one set
keeps the tags and objects another set's provision added.
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ai_proving_ground.baselines.store import Baseline
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_bytes
from ai_proving_ground.layout import KeepMatcher
from ai_proving_ground.records import FieldsRecord, read_record, write_record
from ai_proving_ground.sites.base import SiteDriver

GIT_DIR = ".git"
CHANGED = "APG_RESET_SNAPSHOT_CHANGED"


@dataclass(frozen=True)
class Entry:
    """One recorded path: a folder, a file (``data`` its sha256) or a link (``data`` its target)."""

    path: str
    kind: str
    mode: int
    size: int
    data: str


@dataclass(frozen=True)
class BedSnapshotRecord(FieldsRecord):
    """bed.<key>.json: the bed outside the keep-list when the baseline was captured."""

    SCHEMA: ClassVar[str] = "bed_snapshot"

    format: int
    set_key: str
    driver: str
    captured_at_ns: int
    entries: list[dict[str, Any]]


@dataclass(frozen=True)
class BedSnapshot:
    """What a reset makes the bed equal to (read once; a campaign may keep it for every attempt)."""

    set_key: str
    driver: str
    entries: dict[str, Entry]
    objects: Path


def keep_for(approot: Path, driver: SiteDriver, baseline: Baseline) -> KeepMatcher:
    """What capture and reset leave out in this bed: :data:`layout.KEEP_LIST` for the driver,
    the public files (their own archive and restore) and the baseline directory, wherever the
    settings put it."""
    return KeepMatcher(approot, driver.name, driver.public_files_dir(), baseline.directory)


# ---------------------------------------------------------------------------- walking


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "link" if stat.S_ISLNK(mode) else "other"  # a fifo, socket or device: never recorded


def walk(approot: Path, keep: KeepMatcher,
          target: dict[str, Entry] | None = None) -> dict[str, os.stat_result]:
    """Bed-relative path -> lstat of everything outside the keep-list, never through a link.
    With ``target``, a folder it does not hold as a folder is listed and not entered: it goes
    whole."""
    found: dict[str, os.stat_result] = {}
    pending = [("", str(approot))]
    while pending:
        prefix, directory = pending.pop()
        with os.scandir(directory) as listing:
            for item in listing:
                relative = prefix + item.name
                if keep.keeps(relative):
                    continue
                info = item.stat(follow_symlinks=False)
                found[relative] = info
                if stat.S_ISDIR(info.st_mode) and (target is None or _is_dir(target, relative)):
                    pending.append((relative + "/", item.path))
    return found


def _is_dir(target: dict[str, Entry], relative: str) -> bool:
    entry = target.get(relative)
    return entry is not None and entry.kind == "dir"


def read_file(path: Path) -> bytes:
    # O_NOFOLLOW: a file swapped for a link after the walk is refused, never followed.
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


# ---------------------------------------------------------------------------- capture


def capture(approot: Path, baseline: Baseline, driver: SiteDriver) -> None:
    """Record the bed outside its keep-list: each file's bytes under ``objects/``, then the
    listing, new-then-rename (its presence completes the baseline)."""
    keep = keep_for(approot, driver, baseline)
    objects = baseline.objects
    objects.mkdir(parents=True, exist_ok=True)
    entries = []
    for relative, info in sorted(walk(approot, keep).items(), key=lambda i: i[0].split("/")):
        kind = kind_of(info.st_mode)
        data, size = "", 0
        if kind == "file":
            content = read_file(approot / relative)
            data, size = hashlib.sha256(content).hexdigest(), len(content)
            if not (objects / data).is_file():
                atomic_write_bytes(objects / data, content)
        elif kind == "link":
            data = os.readlink(approot / relative)
        elif kind == "other":
            continue
        entries.append({"path": relative, "kind": kind, "mode": stat.S_IMODE(info.st_mode),
                        "size": size, "data": data})
    write_record(baseline.bed_snapshot, BedSnapshotRecord(
        format=1, set_key=baseline.set_key, driver=driver.name, captured_at_ns=time.time_ns(),
        entries=entries))


# ---------------------------------------------------------------------------- load


def recorded(baseline: Baseline) -> bool:
    """True when this set's snapshot has been written (the last step of a capture)."""
    return baseline.bed_snapshot.is_file()


def load(baseline: Baseline) -> BedSnapshot:
    """The set's snapshot, ``.git`` merged over every set recorded beside it (see the module)."""
    own = read_record(baseline.bed_snapshot, BedSnapshotRecord, CHANGED)
    records = [own]
    for path in sorted(baseline.directory.glob("bed.*.json")):
        if path != baseline.bed_snapshot:
            try:
                records.append(read_record(path, BedSnapshotRecord, CHANGED))
            except ApgError:
                continue  # another set's broken listing only costs that set's .git additions
    entries = {e["path"]: _entry(e) for e in own.entries if not _in_git(e["path"])}
    for record in sorted(records, key=lambda r: r.captured_at_ns):
        entries.update((e["path"], _entry(e)) for e in record.entries if _in_git(e["path"]))
    # Where sets disagree on a path's type, keep only what has a folder for a parent.
    entries = {p: e for p, e in entries.items() if _parents_are_dirs(p, entries)}
    return BedSnapshot(own.set_key, own.driver, entries, baseline.objects)


def _entry(data: dict[str, Any]) -> Entry:
    return Entry(data["path"], data["kind"], data["mode"], data["size"], data["data"])


def _in_git(path: str) -> bool:
    return path == GIT_DIR or path.startswith(GIT_DIR + "/")


def _parents_are_dirs(path: str, entries: dict[str, Entry]) -> bool:
    parent = path.rpartition("/")[0]
    while parent:
        entry = entries.get(parent)
        if entry is None or entry.kind != "dir":
            return False
        parent = parent.rpartition("/")[0]
    return True

