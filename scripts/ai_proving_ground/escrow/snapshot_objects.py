"""The whole-bed snapshot's objects in an escrow set: a copy of each, and its identity to check.

Reset makes the bed equal to ``bed.<set>.json`` with the bytes under ``objects/<sha256>`` (the
listings are escrowed as baseline files). Each object's name is its hash, and reset refuses one
whose bytes no longer match (``APG_RESET_SNAPSHOT_CHANGED``), so a changed object could never be
restored; but it would be found only by a later reset that needs it, and be blamed on that
attempt. So escrow copies every object a listing names into ``baseline/objects.pack`` (what
``verify --restore`` puts back) and records each one's identity (inode, size, mtime, ctime): the
verifier compares an ``lstat`` per object with it and hashes an object only when it differs.
That is enough because every write, rename, link or chmod moves a file's ctime to the current
time, which no one without CAP_SYS_TIME (dropped in the sandbox) can set back; an attempt runs
well after escrow recorded the identity (at least a verify and a reset later: many clock ticks),
so its writes land on a later ctime. The pack's sha256 is among the escrowed files', and each
object is checked by its name again when it is restored.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.escrow import UNSAFE


def listing_names(directory: Path, own: str) -> list[str]:
    """``own`` (this set's bed.<set>.json) and every other set's listing beside it: reset merges
    the other sets' ``.git`` entries, so they decide what it restores too."""
    return [own, *sorted(p.name for p in directory.glob("bed.*.json") if p.name != own)]


def named_objects(listings: list[Path]) -> list[str]:
    """The sha256 of every file the listings hold (a listing that cannot be read names none:
    reset skips another set's broken listing, and a missing own one is reported by escrow)."""
    found: set[str] = set()
    for listing in listings:
        try:
            data = json.loads(listing.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        entries = data.get("entries") if isinstance(data, dict) else None
        found.update(str(e["data"]) for e in entries or []
                     if isinstance(e, dict) and e.get("kind") == "file" and e.get("data"))
    return sorted(found)


def escrow_objects(source: Path, listings: list[Path], pack: Path) -> tuple[dict[str, Any], str]:
    """Copy each object of ``source`` (the baseline's ``objects/``) the listings name into one
    file, ``pack``, and return each one's record (offset and size in the pack, mode, identity)
    and the pack's sha256. One file, not one per object: a campaign hashes every file of its
    escrow set before each verify, and a file costs more to open than tens of KB to hash."""
    records: dict[str, Any] = {}
    whole = hashlib.sha256()
    out = os.open(pack, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        offset = 0
        for sha in named_objects(listings):
            data, info = _read_object(source / sha, sha)
            view = memoryview(data)
            while view:
                view = view[os.write(out, view):]
            whole.update(data)
            records[sha] = {"offset": offset, "size": info.st_size,
                            "mode": stat.S_IMODE(info.st_mode), "inode": info.st_ino,
                            "mtime_ns": info.st_mtime_ns, "ctime_ns": info.st_ctime_ns}
            offset += len(data)
        os.fsync(out)
    finally:
        os.close(out)
    return records, whole.hexdigest()


def _read_object(path: Path, sha: str) -> tuple[bytes, os.stat_result]:
    """The bytes of one object, never through a link, and the identity of the file read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise ApgError("APG_ESCROW_CHANGED", f"{path}, a file of the bed's snapshot, is missing; "
                       "recapture the baseline (apg provision after removing it), then escrow"
                       ) from None
    except OSError as exc:
        raise ApgError(UNSAFE, f"{path}, a file of the bed's snapshot, cannot be read "
                       f"({exc.strerror or exc}); make it the regular file provision wrote"
                       ) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        data = handle.read() if stat.S_ISREG(info.st_mode) else b""
    if not stat.S_ISREG(info.st_mode) or hashlib.sha256(data).hexdigest() != sha:
        raise ApgError("APG_ESCROW_CHANGED", f"{path} no longer holds the bytes its name is the "
                       "hash of; recapture the baseline, then escrow")
    return data, info
