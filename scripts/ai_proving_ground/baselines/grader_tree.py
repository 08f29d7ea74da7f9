"""The judging-code fingerprint: recipes in the bed, the fixtures in use and the grader package."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

from ai_proving_ground.fixtures import FixtureSet
from ai_proving_ground.paths import PACKAGE_DIR

_SKIP_DIRS = {".git", ".ai-proving-ground", "__pycache__", ".mypy_cache", ".pytest_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _walk(root: Path) -> Iterable[Path]:
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any(part in _SKIP_DIRS for part in relative.parts) or path.name.endswith(_SKIP_SUFFIXES):
            continue
        if path.is_symlink() or path.is_file():
            yield path


def _entry(path: Path) -> str:
    # A symlink is judged by where it points, so retargeting one is a change.
    if path.is_symlink():
        return "link:" + hashlib.sha256(str(path.readlink()).encode()).hexdigest()
    return sha256_file(path)


def judged_roots(approot: Path, fixture_set: FixtureSet) -> list[tuple[str, Path]]:
    """Labelled roots: each file's label is ``<label>/<path under root>``."""
    roots = [("bed/recipes", approot / "recipes"), ("grader/ai_proving_ground", PACKAGE_DIR)]
    recipes = (approot / "recipes").resolve()
    for fixture in sorted(fixture_set.fixtures, key=lambda f: f.name):
        if recipes not in fixture.directory.resolve().parents:
            roots.append((f"fixture/{fixture.name}", fixture.directory))
    return roots


def fingerprint(approot: Path, fixture_set: FixtureSet) -> dict[str, str]:
    """label -> sha256 for every judged file."""
    files: dict[str, str] = {}
    for label, root in judged_roots(approot, fixture_set):
        for path in _walk(root):
            files[f"{label}/{path.relative_to(root).as_posix()}"] = _entry(path)
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
