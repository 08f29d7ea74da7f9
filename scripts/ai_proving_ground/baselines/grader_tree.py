"""The judging-code fingerprint: recipes in the bed, the fixtures in use and the grader package."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from ai_proving_ground.fixtures import FixtureSet
from ai_proving_ground.paths import PACKAGE_DIR

_SKIP_DIRS = {".git", ".ai-proving-ground", "__pycache__", ".mypy_cache", ".pytest_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


def sha256_file(path: Path | str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _walk(root: Path) -> Iterator[tuple[str, str]]:
    """(relative POSIX path, digest) for every judged file under ``root``; links are not followed.

    os.walk on strings rather than pathlib: a fixture of 10,000 content files is walked on every
    reset, and pathlib's per-path objects cost more than the hashing.
    """
    if not root.is_dir():
        return
    base = str(root)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
        relative_dir = os.path.relpath(dirpath, base).replace(os.sep, "/")
        prefix = "" if relative_dir == "." else relative_dir + "/"
        linked_dirs = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in (*filenames, *linked_dirs):
            if name.endswith(_SKIP_SUFFIXES):
                continue
            yield prefix + name, _entry(os.path.join(dirpath, name))


def _entry(path: str) -> str:
    # A symlink is judged by where it points, so retargeting one is a change.
    if os.path.islink(path):
        return "link:" + hashlib.sha256(os.readlink(path).encode()).hexdigest()
    return sha256_file(path)


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
    files: dict[str, str] = {}
    for label, root in judged_roots(approot, fixture_set):
        for relative, digest in _walk(root):
            files[f"{label}/{relative}"] = digest
    return dict(sorted(files.items()))


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
