"""Writing an escrow set's files: copies hashed as they are written, and the set swapped into place
atomically, so that a crash at any point leaves the old set or the new one.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import shutil
import stat
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.escrow import UNSAFE
from ai_proving_ground.faults import crashpoint
from ai_proving_ground.report import say

_CHUNK = 1 << 20


def copy_hashed(source: Path, target: Path) -> dict[str, Any]:
    """Copy a regular file (never through a symlink); return its sha256, size, mode and inode."""
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ApgError(UNSAFE, f"baseline file {source} is not a regular file")
        digest, size = hashlib.sha256(), 0
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            while block := os.read(fd, _CHUNK):
                digest.update(block)
                size += len(block)
                view = memoryview(block)
                while view:
                    view = view[os.write(out, view):]
            os.fsync(out)
        finally:
            os.close(out)
    finally:
        os.close(fd)
    return {"sha256": digest.hexdigest(), "size": size, "mode": stat.S_IMODE(st.st_mode),
            "inode": st.st_ino}


def write_new(path: Path, data: bytes, mode: int = 0o600) -> str:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(path, mode)
    return hashlib.sha256(data).hexdigest()


def _exchange(first: Path, second: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False when unavailable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    done = renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange)
    return bool(done == 0)


def remove_tree(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def swap_into_place(new: Path, target: Path) -> None:
    """Make ``new`` the set at ``target``; a crash at any point leaves the old set or the new one
    there (between the two renames of the fallback, the old set waits under a hidden name)."""
    if not os.path.lexists(target):
        os.rename(new, target)
    elif _exchange(new, target):
        crashpoint("escrow.swapped")
        remove_tree(new)
    else:
        old = new.with_name(new.name.replace(".new-", ".old-"))
        os.rename(target, old)
        crashpoint("escrow.swapping")
        os.rename(new, target)
        remove_tree(old)
    with contextlib.suppress(OSError):
        fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def recover(set_dir: Path) -> None:
    """Undo an escrow killed between the two renames of the fallback swap: the old set waits
    under a hidden name and nothing is at ``set_dir``; put the old set back."""
    if os.path.lexists(set_dir):
        return
    waiting = sorted(set_dir.parent.glob(f".{set_dir.name}.old-*"), key=os.path.getmtime)
    if waiting and (waiting[-1] / "escrow.json").is_file():
        os.rename(waiting[-1], set_dir)
        say("APG_ESCROW_RECOVERED", f"{set_dir} (an earlier escrow was interrupted)")


def clear_stale(parent: Path, set_key: str) -> None:
    """Remove leftovers of an earlier escrow of this set that was killed mid-way."""
    for stale in parent.glob(f".{set_key}.new-*"):
        remove_tree(stale)
    if (parent / set_key).is_dir():
        for stale in parent.glob(f".{set_key}.old-*"):
            remove_tree(stale)
