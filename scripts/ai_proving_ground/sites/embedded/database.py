"""The embedded site's database file as a whole: dump it, and restore a dump in its place."""

from __future__ import annotations

import contextlib
import os
import sqlite3
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

def restore_database(database: Path, src: Path) -> None:
    if not src.is_file():
        raise ApgError("APG_DUMP_MISSING", f"database dump {src} does not exist")
    check = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    try:
        check.execute("SELECT count(*) FROM config").fetchone()
    except sqlite3.DatabaseError as exc:
        raise ApgError("APG_DUMP_INVALID", f"{src} is not an embedded site dump ({exc})") from None
    finally:
        check.close()
    with atomic_target(database) as tmp:
        target = sqlite3.connect(tmp)
        source = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
        try:
            source.backup(target)
        finally:
            source.close()
            target.close()
    for suffix in ("-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(str(database) + suffix)
