"""An attempt's files carried from a remote worker's scratch directory to the driver's campaign
directory, so that a distributed executor needs no filesystem shared with the driver.

A worker (a Ray bed actor) runs the attempt with a campaign directory of its own in node-local
scratch; :func:`pack` reads what the attempt left in ``runs/<order>/`` (the records, steps.log,
agent.log, model.diff, config.json, grade.json, run.json, the run directory with its
transcripts, the kept final state, earlier tries) as plain data, and the driver's
:func:`write_back` writes it under its own campaign directory. Nothing carried is trusted more
than the files a local attempt leaves are: every path must stay inside the attempt's folder
(``fsutil.is_within``, no ``..``, no absolute path), only regular files travel (a link or a
special file the agent left in its run directory is named in steps.log, never followed), the
whole is bounded by :data:`MAX_BYTES`, and every record of ours (:data:`RECORDS`) is parsed
through its schema and written with :func:`records.write_record`, the writer the local executor
uses. attempt.json must be the submitted attempt's.

The driver writes into ``runs/.<order>.incoming/`` and renames it into place (into an existing
``runs/<order>/``, the tries the driver itself recorded for an attempt whose worker was lost,
entry by entry, attempt.json last): a driver killed mid-write leaves no attempt.json, so
``apg campaign resume`` discards and reruns that attempt as it does a local half-written one.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ai_proving_ground.campaigns.evidence import HIDDEN_FILE, VERIFY_FILE, HiddenRecord, VerifyRecord
from ai_proving_ground.campaigns.records import AttemptRecord, CampaignFiles
from ai_proving_ground.campaigns.spec import Attempt
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import is_within
from ai_proving_ground.records import Readable, parse_record, write_record
from ai_proving_ground.tasks.envelope import Envelope

ATTEMPT_FILE = "attempt.json"
# The records of ours an attempt folder holds (at its top and in each tries/<k>/): parsed through
# their schema on the driver and written by records.write_record, never copied as bytes.
RECORDS: dict[str, type[Readable]] = {ATTEMPT_FILE: AttemptRecord, VERIFY_FILE: VerifyRecord,
                                      HIDDEN_FILE: HiddenRecord, "grade.json": Envelope}
# What one attempt may carry back, all files together. An embedded attempt's files are well under
# a megabyte (agent.log is cut at AI_PG_LOG_LIMIT; a 10,000-node final state is ~0.4 MB gzipped);
# a DDEV attempt's dump of a large site is the likeliest to be big. Past the bound the largest
# files are left out (named in steps.log; a state left out is re-graded as missing), never the
# records or steps.log.
MAX_BYTES = 256 * 2**20
INVALID = "APG_CAMPAIGN_FILES_INVALID"
STEPS_LOG = "steps.log"  # travels last, whatever the bound: it says what was left out


@dataclass(frozen=True)
class Carried:
    """One attempt's folder as data: its files by relative POSIX path, records included."""

    order: int
    files: tuple[tuple[str, bytes], ...]
    left_out: tuple[str, ...] = ()  # what did not travel, and why

    @property
    def size(self) -> int:
        return sum(len(data) for _, data in self.files)


def pack(files: CampaignFiles, order: int, limit: int = MAX_BYTES) -> Carried:
    """The attempt's folder under ``files`` (the worker's scratch) as :class:`Carried`; what is
    left out is said at the end of its steps.log (which travels too)."""
    root = files.attempt_dir(order)
    found: list[tuple[str, Path, int]] = []
    left_out: list[str] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        for name in sorted(dirs):  # a link to a folder: named, never walked
            if (Path(folder) / name).is_symlink():
                left_out.append(f"{_relative(root, Path(folder) / name)}: a symbolic link")
        for name in names:
            path = Path(folder) / name
            mode = path.lstat().st_mode
            relative = _relative(root, path)
            if stat.S_ISREG(mode):
                found.append((relative, path, path.lstat().st_size))
            else:
                kind = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
                left_out.append(f"{relative}: {kind}")
    # Records first, then the smallest: what fits under the bound is as much as can travel.
    found.sort(key=lambda item: (_record(item[0]) is None, item[2], item[0]))
    carried: list[tuple[str, bytes]] = []
    total = 0
    for relative, path, size in found:
        if relative == STEPS_LOG:
            continue  # last: it says what was left out
        if total + size > limit and _record(relative) is None:
            left_out.append(f"{relative}: {size} bytes, past the {limit}-byte bound of an attempt's files")
            continue
        carried.append((relative, _read(path)))
        total += size
    log = root / STEPS_LOG
    if left_out:
        with log.open("a", encoding="utf-8") as handle:
            for what in left_out:
                handle.write(f"APG_CAMPAIGN_FILE_LEFT_OUT {what}\n")
    if log.is_file() and not log.is_symlink():
        carried.append((STEPS_LOG, _read(log)))
    return Carried(order, tuple(carried), tuple(left_out))


def write_back(files: CampaignFiles, attempt: Attempt, carried: Carried,
               limit: int = MAX_BYTES) -> AttemptRecord:
    """Write ``carried`` as ``runs/<order>/`` under the driver's ``files``; its attempt record.
    Anything that would leave the folder, break a record's schema, or is not the submitted
    attempt raises :data:`INVALID` with nothing written into ``runs/<order>/``."""
    order = attempt.order
    if carried.order != order:
        raise ApgError(INVALID, f"attempt {order:04d} came back as attempt {carried.order:04d}")
    if carried.size > limit + _records_size(carried):
        raise ApgError(INVALID, f"attempt {order:04d} came back with {carried.size} bytes, past "
                       f"the {limit}-byte bound")
    target = files.attempt_dir(order)
    staging = files.runs / f".{target.name}.incoming"
    shutil.rmtree(staging, ignore_errors=True)  # a driver killed while writing it left this
    staging.mkdir(parents=True)
    try:
        record = _stage(staging, attempt, carried)
        _move_in(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return record


def _stage(staging: Path, attempt: Attempt, carried: Carried) -> AttemptRecord:
    record: AttemptRecord | None = None
    for relative, data in carried.files:
        path = _inside(staging, relative, attempt.order)
        path.parent.mkdir(parents=True, exist_ok=True)
        cls = _record(relative)
        if cls is None:
            path.write_bytes(data)  # the folder is renamed into place whole, once written
            continue
        where = f"attempt {attempt.order:04d}'s {relative}"
        try:
            value = parse_record(json.loads(data), cls, where, INVALID)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ApgError(INVALID, f"{where} is not JSON ({exc})") from None
        write_record(path, value)
        if relative == ATTEMPT_FILE:
            assert isinstance(value, AttemptRecord)
            record = value
    if record is None:
        raise ApgError(INVALID, f"attempt {attempt.order:04d} came back without its {ATTEMPT_FILE}")
    if record.as_plan() != attempt.as_plan():
        raise ApgError(INVALID, f"attempt {attempt.order:04d} came back with the record of "
                       f"another attempt ({record.as_plan()})")
    return record


def _move_in(staging: Path, target: Path) -> None:
    """``staging`` as ``target``: renamed whole, or merged into what the driver already holds
    there (tries/<k>/ of a lost worker), attempt.json last."""
    if not target.exists():
        staging.rename(target)
        return
    for entry in sorted(staging.iterdir(), key=lambda e: e.name == ATTEMPT_FILE):
        _merge(entry, target / entry.name)


def _merge(source: Path, target: Path) -> None:
    if source.is_dir() and target.is_dir() and not target.is_symlink():
        for entry in sorted(source.iterdir()):
            _merge(entry, target / entry.name)
        return
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    os.replace(source, target)


def _inside(root: Path, relative: str, order: int) -> Path:
    pure = PurePosixPath(relative)
    path = root.joinpath(*pure.parts)
    if (not relative or pure.is_absolute() or "\x00" in relative or ".." in pure.parts
            or not is_within(path, root) or path == root):
        raise ApgError(INVALID, f"attempt {order:04d} came back with the path {relative!r}, "
                       "outside its folder")
    return path


def _record(relative: str) -> type[Readable] | None:
    """The record class of a file at the attempt folder's top or a ``tries/<k>/`` folder's; a
    file of that name anywhere else (the agent's work folder in run/) is data."""
    parts = PurePosixPath(relative).parts
    if len(parts) == 1 or (len(parts) == 3 and parts[0] == "tries" and parts[1].isdigit()):
        return RECORDS.get(parts[-1])
    return None


def _records_size(carried: Carried) -> int:
    """What always travels, whatever the bound: the records and steps.log."""
    return sum(len(data) for name, data in carried.files
               if _record(name) is not None or name == STEPS_LOG)


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _read(path: Path) -> bytes:
    """A regular file's bytes, never through a link put there after it was listed."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()
