"""The embedded site's database file as a whole: dump it, and restore a dump in its place.

The restore also repairs the database's folder (``db/``, a trusted path): a link or file there
is removed, never written through, and anything in it besides the database goes, so db/ holds
the database alone and nothing an attempt left there reaches the next one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import stat
from pathlib import Path

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_target


def dump_database(database: Path, dest: Path) -> None:
    source = sqlite3.connect(database)
    try:
        with atomic_target(dest) as tmp:
            target = sqlite3.connect(tmp)
            try:
                source.backup(target)
            finally:
                target.close()
    finally:
        source.close()

def restore_database(database: Path, src: Path) -> list[str]:
    """Replace ``database`` with the dump ``src``; what was repaired or removed in its folder."""
    if not src.is_file():
        raise ApgError("APG_DUMP_MISSING", f"database dump {src} does not exist")
    check = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    try:
        check.execute("SELECT count(*) FROM config").fetchone()
    except sqlite3.DatabaseError as exc:
        raise ApgError("APG_DUMP_INVALID", f"{src} is not an embedded site dump ({exc})") from None
    finally:
        check.close()
    repaired = _real_folder(database)
    with atomic_target(database) as tmp:
        # A byte copy, not sqlite's backup API: the dump is a whole database that backup wrote
        # (checked just above), and copying it costs a third of the page-by-page backup (bench:
        # 10,000 nodes).
        shutil.copyfile(src, tmp)
    sqlite_own = {database.name + suffix for suffix in ("-wal", "-shm", "-journal")}
    for child in sorted(os.listdir(database.parent)):
        if child != database.name:
            _remove(database.parent / child)
            if child not in sqlite_own:  # SQLite's own files go silently; anything else is news
                repaired.append(str(database.parent / child))
    return repaired


def _real_folder(database: Path) -> list[str]:
    """Make the database's folder a real folder and its path free for a file; a link is
    removed as a link (what it points to, another bed's db/ say, is left byte-identical)."""
    repaired = []
    folder = database.parent
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            _remove(folder)
            repaired.append(str(folder))
    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(os.lstat(database).st_mode):
            _remove(database)
            repaired.append(str(database))
    return repaired


def _remove(path: Path) -> None:
    if stat.S_ISDIR(os.lstat(path).st_mode):
        shutil.rmtree(path)
    else:
        path.unlink()
