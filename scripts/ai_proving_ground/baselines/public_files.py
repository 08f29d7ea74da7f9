"""Public files: capture a bed's public:// tree as a deterministic archive and restore it safely.

A snapshot is three files beside the database dump: ``files.<set>.tar.gz`` (the tree),
``files.<set>.list`` (one path per line) and ``files.<set>.tar.gz.json`` (a sidecar recording the
app-relative public directory and both checksums: a :class:`Sidecar`,
``schemas/files_sidecar.schema.json``, written and read through :mod:`records`). Restore
refuses a changed snapshot or an unsafe destination before it deletes anything, and never
follows a symlink while deleting.

``public_files_restore`` stages and restores a snapshot; this module captures, verifies and
compares it.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import posixpath
import stat
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, ClassVar, NoReturn

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import (
    atomic_target,
    atomic_write_bytes,
    is_within,
    safe_name,
)
from ai_proving_ground.records import FieldsRecord, read_record, write_record

REGENERABLE = ("css", "js", "php", "styles")


SIDECAR_FORMAT = 1


CAPTURE_UNSAFE = "APG_FILES_UNSAFE"


RESET_UNSAFE = "APG_RESET_FILES_UNSAFE"


CHANGED = "APG_RESET_FILES_CHANGED"


UNRECORDED = "APG_RESET_FILES_UNRECORDED"


RECAPTURE = "recapture the baseline"


CHUNK = 1 << 20


@dataclass(frozen=True)
class Sidecar(FieldsRecord):
    """``files.<set>.tar.gz.json``: what the archive and the listing must hash to."""

    SCHEMA: ClassVar[str] = "files_sidecar"

    format: int
    public_dir: str  # app-relative, POSIX
    archive: str  # the archive's file name, beside the sidecar
    sha256: str  # of the archive
    entries: int  # paths in the listing
    list_sha256: str  # of the listing


@dataclass(frozen=True)
class FilesSnapshot:
    """Where one fixture set's public files snapshot lives."""

    archive: Path
    sidecar: Path
    listing: Path


def snapshot_paths(baseline_dir: Path, set_key: str) -> FilesSnapshot:
    """The snapshot files for ``set_key`` inside ``baseline_dir``."""
    stem = f"files.{safe_name(set_key, 'set key')}"
    return FilesSnapshot(
        archive=baseline_dir / f"{stem}.tar.gz",
        sidecar=baseline_dir / f"{stem}.tar.gz.json",
        listing=baseline_dir / f"{stem}.list",
    )


def list_public_paths(public_dir: Path) -> list[str]:
    """Sorted relative paths of files, symlinks and empty dirs (``dir/``), minus REGENERABLE."""
    if not os.path.lexists(public_dir):
        return []
    found: list[str] = []
    _walk(str(public_dir), "", found)
    return sorted(found)


def _walk(root: str, prefix: str, found: list[str]) -> bool:
    """Append the entries under ``prefix`` (``''`` or ``'a/b/'``); return whether any were listed."""
    with os.scandir(os.path.join(root, prefix)) as scan:
        entries = list(scan)
    listed = False
    for entry in entries:
        if not prefix and entry.name in REGENERABLE:
            continue
        path = prefix + entry.name
        # follow_symlinks=False everywhere: a link is listed as itself, never descended into.
        if entry.is_dir(follow_symlinks=False):
            if not _walk(root, path + "/", found):
                found.append(path + "/")
            listed = True
        elif entry.is_symlink() or entry.is_file(follow_symlinks=False):
            found.append(path)
            listed = True
    return listed


def capture(public_dir: Path, approot: Path, snapshot: FilesSnapshot) -> Sidecar:
    """Write the archive, then the listing, then the sidecar (last, so a torn capture never verifies)."""
    root = approot.resolve()
    target = public_dir.resolve()
    if root not in target.parents:
        raise ApgError(CAPTURE_UNSAFE, f"public files directory {public_dir} resolves to {target}, "
                                       f"which is not inside the app root {root}")
    relative = target.relative_to(root).as_posix()
    dest = checked_destination(public_dir, approot, relative, CAPTURE_UNSAFE)
    refuse_snapshot_inside(snapshot, dest, CAPTURE_UNSAFE)
    paths = list_public_paths(dest)
    _check_capturable(dest, paths)
    archive_sha = _write_archive(dest, paths, snapshot.archive)
    listing = _listing_bytes(paths)
    atomic_write_bytes(snapshot.listing, listing)
    sidecar = Sidecar(format=SIDECAR_FORMAT, public_dir=relative, archive=snapshot.archive.name,
                      sha256=archive_sha, entries=len(paths),
                      list_sha256=hashlib.sha256(listing).hexdigest())
    write_record(snapshot.sidecar, sidecar)
    return sidecar


def _check_capturable(dest: Path, paths: list[str]) -> None:
    """Refuse what restore would refuse later, so a baseline is never unrestorable."""
    for path in paths:
        if "\n" in path:
            raise ApgError(CAPTURE_UNSAFE, f"public file {path!r} has a newline in its name, which the "
                                           "path listing cannot hold; rename it and capture again")
        full = dest / path
        if full.is_symlink() and not link_stays_inside(path, os.readlink(full)):
            raise ApgError(CAPTURE_UNSAFE, f"symlink {path} points to {os.readlink(full)!r}, outside the "
                                           "public files directory; restore would refuse it")


def _write_archive(dest: Path, paths: list[str], archive: Path) -> str:
    """Write a byte-reproducible tar.gz of ``paths`` new-then-rename; return its sha256."""
    with atomic_target(archive) as tmp:
        with tmp.open("wb") as raw:
            # filename='' and mtime=0: otherwise gzip embeds the temporary name and the clock.
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as zipped, \
                    tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for path in paths:
                    _add_member(tar, dest, path)
            raw.flush()
            os.fsync(raw.fileno())
        digest = _sha256_path(tmp)
    return digest


def _add_member(tar: tarfile.TarFile, dest: Path, path: str) -> None:
    full = dest / path
    info = tarfile.TarInfo(path.rstrip("/"))  # TarInfo defaults: mtime 0, uid/gid 0, empty names
    st = os.lstat(full)
    if path.endswith("/"):
        info.type, info.mode = tarfile.DIRTYPE, stat.S_IMODE(st.st_mode) & 0o777
        tar.addfile(info)
    elif stat.S_ISLNK(st.st_mode):
        info.type, info.mode, info.linkname = tarfile.SYMTYPE, 0o777, os.readlink(full)
        tar.addfile(info)
    elif stat.S_ISREG(st.st_mode):
        info.mode, info.size = stat.S_IMODE(st.st_mode) & 0o777, st.st_size
        with _open_regular(full, st.st_size) as handle:
            tar.addfile(info, handle)
    else:
        raise ApgError(CAPTURE_UNSAFE, f"public file {path} changed type during capture; "
                                       "stop writers to the site and capture again")


def _open_regular(full: Path, size: int) -> IO[bytes]:
    # O_NOFOLLOW: a file swapped for a symlink after listing must not pull in its target.
    fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW)
    handle = os.fdopen(fd, "rb")
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size != size:
        handle.close()
        raise ApgError(CAPTURE_UNSAFE, f"public file {full} changed during capture; "
                                       "stop writers to the site and capture again")
    return handle


def _listing_bytes(paths: Iterable[str]) -> bytes:
    return "".join(f"{path}\n" for path in paths).encode("utf-8", "surrogateescape")


def verify(snapshot: FilesSnapshot) -> Sidecar:
    """Check the snapshot against its sidecar; return the sidecar."""
    sidecar, _listing, handle = open_verified(snapshot)
    handle.close()
    return sidecar


def open_verified(snapshot: FilesSnapshot) -> tuple[Sidecar, list[str], IO[bytes]]:
    """Verify and return the archive still open, so what is extracted is what was hashed."""
    _require_recorded(snapshot)
    sidecar = _load_sidecar(snapshot)
    listing = _checked_listing(snapshot, sidecar)
    handle = snapshot.archive.open("rb")
    try:
        found = _sha256_handle(handle)
        if found != sidecar.sha256:
            _changed(snapshot.archive, f"sha256 is {found}, recorded {sidecar.sha256}")
        handle.seek(0)
    except BaseException:
        handle.close()
        raise
    return sidecar, listing, handle


def _require_recorded(snapshot: FilesSnapshot) -> None:
    if not os.path.lexists(snapshot.sidecar) and not os.path.lexists(snapshot.archive):
        raise ApgError(UNRECORDED, f"no public files snapshot {snapshot.archive.name} in "
                                   f"{snapshot.archive.parent}; {RECAPTURE} to enable file restore")
    for path in (snapshot.sidecar, snapshot.archive, snapshot.listing):
        if not path.is_file():
            _changed(path, "it is missing")


def _load_sidecar(snapshot: FilesSnapshot) -> Sidecar:
    try:
        sidecar = read_record(snapshot.sidecar, Sidecar, CHANGED)
    except ApgError as exc:
        raise ApgError(CHANGED, f"{exc.message} (it changed since capture); {RECAPTURE}") from None
    # What the schema cannot know: which format this code reads, and the archive beside it.
    for key, value in (("format", SIDECAR_FORMAT), ("archive", snapshot.archive.name)):
        if getattr(sidecar, key) != value:
            _changed(snapshot.sidecar, f"{key} is {getattr(sidecar, key)!r}, expected {value!r}")
    return sidecar


def _checked_listing(snapshot: FilesSnapshot, sidecar: Sidecar) -> list[str]:
    data = snapshot.listing.read_bytes()
    found = hashlib.sha256(data).hexdigest()
    if found != sidecar.list_sha256:
        _changed(snapshot.listing, f"sha256 is {found}, recorded {sidecar.list_sha256}")
    paths = data.decode("utf-8", "surrogateescape").split("\n")[:-1]
    if len(paths) != sidecar.entries:
        _changed(snapshot.sidecar, f"entries is {sidecar.entries}, the listing holds {len(paths)}")
    return paths


def _changed(path: Path, detail: str) -> NoReturn:
    raise ApgError(CHANGED, f"{path.name} changed since capture: {detail}; {RECAPTURE}")


def recorded_public_dir(approot: Path, snapshot: FilesSnapshot) -> Path:
    """The public directory the sidecar recorded, under the resolved app root (for read-only checks)."""
    _require_recorded(snapshot)
    recorded = _load_sidecar(snapshot).public_dir
    return approot.resolve().joinpath(*_plain_relative(recorded, approot, RESET_UNSAFE).parts)


def _plain_relative(recorded: str, approot: Path, token: str) -> PurePosixPath:
    relative = PurePosixPath(recorded)
    if relative.is_absolute() or not relative.parts or ".." in relative.parts or "\x00" in recorded:
        raise ApgError(token, f"recorded public directory {recorded!r} must be a relative path strictly "
                              f"inside the app root {approot}, not the app root itself")
    return relative


def checked_destination(public_dir: Path, approot: Path, recorded: str, token: str) -> Path:
    """The recorded public directory under the resolved app root, if it is safe to write to."""
    relative = _plain_relative(recorded, approot, token)
    root = approot.resolve()
    dest = root.joinpath(*relative.parts)
    for depth in range(1, len(relative.parts) + 1):
        step = root.joinpath(*relative.parts[:depth])
        if step.is_symlink():
            raise ApgError(token, f"{step} is a symlink; public files must be a real directory "
                                  "with no symlinked parent under the app root")
    if public_dir.is_symlink():
        raise ApgError(token, f"public files directory {public_dir} is a symlink; refusing to follow it")
    if public_dir.resolve() != dest:
        raise ApgError(token, f"public files directory {public_dir} resolves to {public_dir.resolve()}, "
                              f"but the baseline recorded {dest}")
    if os.path.lexists(dest) and not dest.is_dir():
        raise ApgError(token, f"public files path {dest} exists but is not a directory")
    return dest


def refuse_snapshot_inside(snapshot: FilesSnapshot, dest: Path, token: str) -> None:
    for path in (snapshot.archive, snapshot.sidecar, snapshot.listing):
        resolved = path.parent.resolve() / path.name
        if is_within(resolved, dest):
            raise ApgError(token, f"baseline file {path} lies inside the public files directory {dest}; "
                                  "keep baselines outside it")


def compare(public_dir: Path, snapshot: FilesSnapshot) -> dict[str, list[str]]:
    """Paths (not contents) that the snapshot lists but are gone, and that are present but unlisted."""
    _require_recorded(snapshot)
    recorded = set(_checked_listing(snapshot, _load_sidecar(snapshot)))
    live = set(list_public_paths(public_dir))
    return {"missing": sorted(recorded - live), "added": sorted(live - recorded)}


def _sha256_path(path: Path) -> str:
    with path.open("rb") as handle:
        return _sha256_handle(handle)


def _sha256_handle(handle: IO[bytes]) -> str:
    digest = hashlib.sha256()
    while chunk := handle.read(CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def link_stays_inside(path: str, target: str) -> bool:
    if not target or target.startswith("/") or "\x00" in target:
        return False
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return joined != ".." and not joined.startswith("../")
