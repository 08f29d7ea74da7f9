"""An attempt's final site state, kept so that it can be re-graded offline (``apg campaign regrade``).

Once the agent has stopped and its ``model.diff`` and ``config.json`` are captured (before any
hidden overlay), an attempt that did not tamper keeps in ``runs/<order>/state/``:

``database.sqlite.gz``  embedded bed: the database's image, gzipped (the driver's
                        ``keep_database``: a consistent copy taken inside one transaction)
``database.sql.gz``     DDEV bed: ``drush sql:dump --gzip`` through the driver, as drush wrote it
``files.tar.gz``        the bed's tracked paths (``config/sync``, ``web/modules/custom``,
                        ``recipes``) and its public and private files: what the checks, a check
                        command and the hidden verifier read besides the database. Real folders
                        and regular files only; a symlink or special file there is listed in
                        ``skipped``, never followed

and its attempt.json's ``state`` (:class:`StateRecord`, ``schemas/attempt_state.schema.json``)
holds each file's size and SHA-256 (no file of its own: attempt.json is written, and synced,
anyway). :func:`checked_state` checks every file against it before anything is unpacked: a
record with no state or a missing file is :data:`MISSING`; a file whose size or hash differs, or
an archive holding what :func:`keep` never writes, is :data:`TAMPERED`; such a state is never
graded. The hashes tell a changed, truncated or swapped file from the one the harness wrote;
someone able to rewrite attempt.json as well is beyond what a record beside the files can tell.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import stat
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_target, is_within
from ai_proving_ground.layout import TRACKED_PATHS, BedLayout
from ai_proving_ground.records import FieldsRecord, parse_record
from ai_proving_ground.sites.base import SiteDriver

STATE_DIR = "state"
FILES = "files.tar.gz"
# The dump's file name per driver (sites.base.DRIVERS' names).
DATABASE = {"sqlite": "database.sqlite.gz", "ddev": "database.sql.gz"}

# gzip's level for the database (the driver's keep_database) and the files, chosen for time: they
# are kept on every attempt's path. A 10,000-node database image (2.3 MB, best of 5): gzip 1 16 ms
# 343 KB, gzip 6 56 ms 331 KB, lzma 0 47 ms 137 KB, lzma 6 3.7 s 90 KB; a shipped-fixtures bed's
# (68 KB): gzip 1 0.2 ms 5.9 KB, lzma 6 11 ms 4.6 KB. zstd is in the standard library from 3.14.
KEEP_GZIP_LEVEL = 1

MISSING = "APG_REGRADE_STATE_MISSING"
TAMPERED = "APG_REGRADE_STATE_TAMPERED"


class StateUnusable(Exception):
    """The kept state cannot be graded: ``token`` (:data:`MISSING`, :data:`TAMPERED`) says why."""

    def __init__(self, token: str, reason: str) -> None:
        super().__init__(f"{token} {reason}")
        self.token = token
        self.reason = reason


@dataclass(frozen=True)
class StateRecord(FieldsRecord):
    """attempt.json's ``state``: what the attempt kept of the site it left, and how to check it."""

    SCHEMA: ClassVar[str] = "attempt_state"

    driver: str
    # File name -> {"bytes": size, "sha256": hex}: the database dump and the files archive.
    files: dict[str, dict[str, Any]]
    paths: list[str]  # bed-relative folders the archive holds (those that existed)
    skipped: list[str]  # bed-relative links and special files left out of the archive
    keep_s: float  # seconds the keeping took

    @property
    def database(self) -> str:
        return DATABASE[self.driver]


def state_dir(attempt_dir: Path) -> Path:
    return attempt_dir / STATE_DIR


def keep(attempt_dir: Path, bed: Path, site: SiteDriver) -> StateRecord:
    """Keep ``site``'s database and ``bed``'s judged files in ``attempt_dir``/state/; the
    record for attempt.json."""
    started = time.perf_counter()
    folder = state_dir(attempt_dir)
    if folder.exists():  # a state from an earlier try of this attempt is not this one's
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    database = folder / DATABASE[site.name]
    site.keep_database(database, KEEP_GZIP_LEVEL)
    paths, skipped = _archive(folder / FILES, bed, judged_folders(bed, site))
    return StateRecord(driver=site.name,
                       files={p.name: fingerprint(p) for p in (database, folder / FILES)},
                       paths=paths, skipped=skipped, keep_s=round(time.perf_counter() - started, 6))


def judged_folders(bed: Path, site: SiteDriver) -> list[str]:
    """The tracked paths and the site's public and private files folders, bed-relative (a files
    folder outside the bed is not the bed's to keep)."""
    folders = list(TRACKED_PATHS)
    for where in (site.public_files_dir(), site.private_files_dir()):
        if where is None:
            continue
        absolute = where if where.is_absolute() else bed / where
        if is_within(Path(os.path.abspath(absolute)), Path(os.path.abspath(bed))):
            relative = Path(os.path.abspath(absolute)).relative_to(os.path.abspath(bed))
            if relative.as_posix() not in folders:
                folders.append(relative.as_posix())
    return folders


def _archive(target: Path, bed: Path, folders: list[str]) -> tuple[list[str], list[str]]:
    """Write the archive of ``folders``; the folders archived and the entries skipped. Entries
    are made from one ``lstat`` each (tarfile's ``gettarinfo`` and pathlib cost twice as much
    on a 12-node bed) and streamed through gzip, never held whole in memory."""
    kept: list[str] = []
    skipped: list[str] = []
    with atomic_target(target) as tmp, tmp.open("wb") as sink, \
            gzip.GzipFile(filename="", mode="wb", fileobj=sink, compresslevel=KEEP_GZIP_LEVEL,
                          mtime=0) as packed, \
            tarfile.open(fileobj=packed, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for folder in folders:
            if not _real_folders(bed, folder):
                if os.path.lexists(bed / folder):
                    skipped.append(folder)
                continue
            kept.append(folder)
            _add_tree(tar, str(bed / folder), folder, skipped)
    return kept, skipped


def _add_tree(tar: tarfile.TarFile, path: str, name: str, skipped: list[str]) -> None:
    """``path`` (a real folder, archived as ``name``) and everything under it, links never
    followed; a link or special file goes to ``skipped``."""
    tar.addfile(_info(name, os.lstat(path), tarfile.DIRTYPE))
    with os.scandir(path) as found:
        entries = sorted(found, key=lambda e: e.name)
    for entry in entries:
        child = f"{name}/{entry.name}"
        if entry.is_dir(follow_symlinks=False):
            _add_tree(tar, entry.path, child, skipped)
        elif entry.is_file(follow_symlinks=False):
            info = _info(child, entry.stat(follow_symlinks=False), tarfile.REGTYPE)
            with open(entry.path, "rb") as handle:
                tar.addfile(info, handle)
        else:
            skipped.append(child)


def _info(name: str, status: os.stat_result, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.mtime = kind, stat.S_IMODE(status.st_mode), int(status.st_mtime)
    info.size = status.st_size if kind == tarfile.REGTYPE else 0
    return info


def _real_folders(bed: Path, relative: str) -> bool:
    """Whether every folder from the bed down to ``relative`` is a real folder (no link)."""
    current = bed
    for part in PurePosixPath(relative).parts:
        current = current / part
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return False
        except FileNotFoundError:
            return False
    return True


def fingerprint(path: Path) -> dict[str, Any]:
    return {"bytes": path.stat().st_size, "sha256": _sha256(path)}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# ---------------------------------------------------------------------------- restore


def checked_state(attempt_dir: Path, state: dict[str, Any] | None) -> StateRecord:
    """The attempt's kept state (attempt.json's ``state``), every file it names checked;
    :class:`StateUnusable` if it cannot be graded."""
    folder = state_dir(attempt_dir)
    if state is None:
        raise StateUnusable(MISSING, "the attempt kept no final state (recorded before states "
                            "were kept, tampered, or stopped before its work was captured)")
    try:
        record = parse_record(state, StateRecord, f"{attempt_dir / 'attempt.json'}: state")
    except ApgError as exc:
        raise StateUnusable(TAMPERED, exc.message) from None
    if set(record.files) != {record.database, FILES}:
        raise StateUnusable(TAMPERED, f"the attempt's state names {sorted(record.files)}, not "
                            f"{record.database} and {FILES}")
    for name, expected in sorted(record.files.items()):
        path = folder / name
        if not os.path.lexists(path):
            raise StateUnusable(MISSING, f"{path} does not exist (attempt.json's state lists it)")
        if not stat.S_ISREG(os.lstat(path).st_mode):
            raise StateUnusable(TAMPERED, f"{path} is not a regular file")
        found = fingerprint(path)
        if found != {"bytes": expected["bytes"], "sha256": expected["sha256"]}:
            raise StateUnusable(TAMPERED, f"{path} is not the file the attempt kept (its record "
                                f"has {expected['bytes']} bytes, sha256 {expected['sha256']}; "
                                f"found {found['bytes']} bytes, sha256 {found['sha256']})")
    return record


def restore_files(attempt_dir: Path, record: StateRecord, bed: Path) -> None:
    """Unpack the files archive into the scratch ``bed``, whose archived folders are absent
    (checked: :func:`checked_state`)."""
    archive = state_dir(attempt_dir) / FILES
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            members = tar.getmembers()
            for member in members:
                _check_member(member, record, archive)
            # filter="data" refuses links, devices and paths leaving the bed, again.
            tar.extractall(bed, members=members, filter="data")
    except (OSError, tarfile.TarError, EOFError) as exc:
        raise StateUnusable(TAMPERED, f"{archive} cannot be unpacked ({exc})") from None


def _check_member(member: tarfile.TarInfo, record: StateRecord, archive: Path) -> None:
    """Only what :func:`keep` writes: folders and files under the archived paths."""
    parts = PurePosixPath(member.name).parts
    inside = any(parts[:len(PurePosixPath(p).parts)] == PurePosixPath(p).parts
                 for p in record.paths)
    if not (member.isreg() or member.isdir()) or ".." in parts or member.name.startswith("/") \
            or not inside:
        raise StateUnusable(TAMPERED, f"{archive} holds {member.name!r}, which the attempt "
                            "never kept")


def restore_embedded_database(attempt_dir: Path, record: StateRecord, bed: Path) -> None:
    """The kept database, unpacked where the scratch embedded ``bed`` keeps it."""
    source = state_dir(attempt_dir) / record.database
    database = BedLayout(bed).database
    database.parent.mkdir(parents=True, exist_ok=True)
    try:
        with gzip.open(source, "rb") as packed, database.open("wb") as sink:
            shutil.copyfileobj(packed, sink, 1 << 20)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise StateUnusable(TAMPERED, f"{source} cannot be unpacked ({exc})") from None
