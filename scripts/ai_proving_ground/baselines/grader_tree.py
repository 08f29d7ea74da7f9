"""The judging-code fingerprint: recipes in the bed, the fixtures in use and the grader package."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from ai_proving_ground.fixtures import FixtureSet
from ai_proving_ground.fsutil import is_within
from ai_proving_ground.paths import PACKAGE_DIR

_SKIP_DIRS = {".git", ".ai-proving-ground", "__pycache__", ".mypy_cache", ".pytest_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo")
# This thread's fingerprints inside :func:`read_once` (None: outside, every call reads).
_read: contextvars.ContextVar[dict[tuple[str, ...], dict[str, str]] | None] = \
    contextvars.ContextVar("grader_tree_read", default=None)

# Digests of judged files outside the bed (the grader package, fixtures' manifests), by path,
# with the file's identity when it was read: (device, inode, mode, size, mtime, ctime).
#
# Why a file whose identity is unchanged need not be read again (in a long-lived process: a
# campaign fingerprints the package twice an attempt, 4.4 ms of CPU each; the check of the
# identities is 0.8 ms): every write, truncation, rename onto the path and time change through
# the kernel sets the file's ctime to the current time, and no process can set it back without
# setting the system clock (CAP_SYS_TIME, which the agent's sandbox drops with every other
# capability). A digest is kept only when the file's ctime was at least _SETTLED_NS before the
# read began, so a write in the same clock tick as the read (file times come from a coarse
# clock) cannot hide behind an equal ctime: it would carry a later one. One way around ctime
# is left: a process holding a writable mapping of the file may change pages already dirty
# without the kernel moving ctime again. No sandboxed agent can map these files writable (they
# lie outside the bed, its one writable tree besides its own folders), so only the bed's own
# files, which it may write, are read in full every time; and an unconfined adapter's change
# is still found by the escrow verifier, a child that reads every judged file before and
# after every campaign attempt.
_known: dict[str, tuple[tuple[int, ...], str]] = {}
_SETTLED_NS = 2_000_000_000


def sha256_file(path: Path | str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _walk(root: Path, remember: bool = False) -> Iterator[tuple[str, str]]:
    """(relative POSIX path, digest) for every judged file under ``root``; links are not followed
    (a linked file or folder is judged by its target text), unreadable folders are skipped.
    ``remember``: files outside the bed, whose digests may be kept (see ``_known``).

    By hand with os.scandir, not pathlib or os.walk: a campaign fingerprints the grader package
    (about 280 files) three times an attempt and a fixture of 10,000 content files is walked on
    every reset. scandir's entries know their type without another lstat, and a whole read
    hashes a small file faster than hashlib.file_digest, which allocates a 256 KiB buffer per
    file: 8 ms of CPU for the package became 4 ms (best of 40, interleaved).
    """
    if not root.is_dir():
        return
    folders = [(str(root), "")]
    while folders:
        folder, prefix = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:  # as os.walk does: a folder that cannot be listed adds nothing
            continue
        for entry in entries:
            name = entry.name
            if entry.is_dir(follow_symlinks=False):
                if name not in _SKIP_DIRS:
                    folders.append((entry.path, prefix + name + "/"))
            # A link to a folder named like a skipped one is skipped too, as os.walk's pruned
            # folder names had it.
            elif not name.endswith(_SKIP_SUFFIXES) and not (name in _SKIP_DIRS and entry.is_dir()):
                yield prefix + name, _entry(entry, remember)


def _entry(entry: os.DirEntry[str], remember: bool) -> str:
    # A symlink is judged by where it points, so retargeting one is a change.
    if entry.is_symlink():
        return "link:" + hashlib.sha256(os.readlink(entry.path).encode()).hexdigest()
    return _remembered(entry.path) if remember else sha256_file(entry.path)


def _identity(status: os.stat_result) -> tuple[int, ...]:
    return (status.st_dev, status.st_ino, status.st_mode, status.st_size, status.st_mtime_ns,
            status.st_ctime_ns)


def _remembered(path: str) -> str:
    """The file's digest, read again only when its identity changed (see ``_known``)."""
    known = _known.get(path)
    if known is not None and known[0] == _identity(os.lstat(path)):
        return known[1]
    started = time.time_ns()  # before the read: a write after it carries a later ctime
    with open(path, "rb") as handle:
        status = os.fstat(handle.fileno())  # the identity of the very file read
        digest = hashlib.sha256(handle.read()).hexdigest()
    if stat.S_ISREG(status.st_mode) and status.st_ctime_ns < started - _SETTLED_NS:
        _known[path] = (_identity(status), digest)
    return digest


def judged_roots(approot: Path, fixture_set: FixtureSet) -> list[tuple[str, Path]]:
    """Labelled roots: each file's label is ``<label>/<path under root>``.

    Of a fixture outside the bed only ``manifest/`` is judged: its facts are what the doctor
    compares with, while its config and content were imported at provision and live on in the
    dump. Hashing a 10,000-item content folder on every reset would buy nothing.
    """
    roots = [("bed/recipes", approot / "recipes"), ("grader/ai_proving_ground", PACKAGE_DIR)]
    recipes = (approot / "recipes").resolve()
    for fixture in sorted(fixture_set.fixtures, key=lambda f: f.name):
        if recipes not in fixture.directory.resolve().parents:
            roots.append((f"fixture/{fixture.name}/manifest", fixture.directory / "manifest"))
    return roots


def fingerprint(approot: Path, fixture_set: FixtureSet) -> dict[str, str]:
    """label -> sha256 for every judged file."""
    roots = judged_roots(approot, fixture_set)
    key = tuple(f"{label}={root}" for label, root in roots)
    read = _read.get()
    if read is not None and key in read:
        return dict(read[key])
    files: dict[str, str] = {}
    bed = approot.resolve()
    for label, root in roots:
        outside = not is_within(root.resolve(), bed)  # the bed's own files are always read
        for relative, digest in _walk(root, remember=outside):
            files[f"{label}/{relative}"] = digest
    files = dict(sorted(files.items()))
    if read is not None:
        read[key] = dict(files)
    return files


@contextlib.contextmanager
def read_once() -> Iterator[None]:
    """Inside the block, this thread reads each set of judged files once: for harness steps
    that run back to back with nothing else on the bed between them (a campaign attempt's reset,
    whose last step reads the judging code, and the doctor at once after it: each read was a
    third of the attempt's fingerprinting). Outside it, and in other threads, every call reads."""
    token = _read.set({})
    try:
        yield
    finally:
        _read.reset(token)


def render_listing(files: dict[str, str]) -> str:
    """sha256sum's format: one ``<hex>  <label>`` line per file, sorted."""
    return "".join(f"{digest}  {label}\n" for label, digest in sorted(files.items()))


def parse_listing(text: str) -> dict[str, str]:
    files: dict[str, str] = {}
    for line in text.splitlines():
        digest, sep, label = line.partition("  ")
        if sep:
            files[label] = digest
    return files


def tree_sha256(files: dict[str, str]) -> str:
    return hashlib.sha256(render_listing(files).encode()).hexdigest()


def changes(recorded: dict[str, str], live: dict[str, str]) -> list[str]:
    """``<label> modified|added|removed`` for every difference, sorted by label."""
    out = []
    for label in sorted(set(recorded) | set(live)):
        if label not in live:
            out.append(f"{label} removed")
        elif label not in recorded:
            out.append(f"{label} added")
        elif recorded[label] != live[label]:
            out.append(f"{label} modified")
    return out
