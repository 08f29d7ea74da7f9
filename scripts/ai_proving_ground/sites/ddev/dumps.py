"""Database dump files: checking what drush wrote, moving it into place, naming it for import-db."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_target

GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: Path) -> bool:
    """Whether ``path`` starts with the gzip magic number."""
    with path.open("rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def check_gzip(path: Path) -> None:
    """Refuse a dump drush did not leave on the host, or one that is not gzip."""
    if not path.is_file():
        raise ApgError(
            "APG_DDEV_FAILED",
            f"drush sql:dump reported success but {path} is not on the host; is the project "
            "directory shared with the web container?",
        )
    if not is_gzip(path):
        raise ApgError("APG_DDEV_FAILED", f"drush sql:dump wrote {path}, which is not gzip")


def move_into_place(src: Path, dest: Path) -> None:
    """Rename ``src`` over ``dest``; across file systems, copy beside ``dest`` then rename."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with src.open("rb") as handle:
        os.fsync(handle.fileno())
    try:
        os.replace(src, dest)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        with atomic_target(dest) as tmp:
            shutil.copyfile(src, tmp)
        src.unlink()


@contextlib.contextmanager
def importable(src: Path) -> Iterator[Path]:
    """``src`` under a name that tells ``ddev import-db`` how to read it.

    import-db decides decompression by the file name, so the name must follow the content:
    gzip as ``.sql.gz``, anything else as ``.sql``. A name that already says so is used as it
    is; otherwise a link (or copy) with the right name is staged beside ``src``: import-db reads
    the host file, and beside the baseline (outside the project) the web container cannot
    replace it while it is read, as it could in the project.
    """
    suffix = ".sql.gz" if is_gzip(src) else ".sql"
    if src.name.endswith(suffix):
        yield src.resolve()
        return
    alias = src.with_name(f".restore-{uuid.uuid4().hex}{suffix}")
    try:
        os.link(src, alias)
    except OSError:
        shutil.copyfile(src, alias)
    try:
        yield alias
    finally:
        with contextlib.suppress(FileNotFoundError):
            alias.unlink()
