"""What the judging-code fingerprint walks: every file by its bytes' SHA-256, links by their
target text and never followed, caches and bytecode left out."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from ai_proving_ground.baselines import grader_tree
from ai_proving_ground.fixtures import load_set


def _tree(root: Path) -> Path:
    (root / "pkg" / "deep").mkdir(parents=True)
    (root / "pkg" / "deep" / "mod.py").write_bytes(b"x = 1\n")
    (root / "pkg" / "mod.cpython-311.pyc").write_bytes(b"bytecode")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "mod.pyc").write_bytes(b"cache")
    (root / "outside").mkdir()
    (root / "outside" / "secret.py").write_bytes(b"not walked through the link")
    os.symlink("outside", root / "pkg" / "linked_folder")
    os.symlink("deep/mod.py", root / "pkg" / "linked_file")
    os.symlink("nowhere", root / "pkg" / "dangling")
    return root


def test_files_by_content_links_by_target(tmp_path: Path) -> None:
    walked = dict(grader_tree._walk(_tree(tmp_path)))
    link = lambda target: "link:" + hashlib.sha256(target.encode()).hexdigest()  # noqa: E731
    assert walked == {
        "pkg/deep/mod.py": hashlib.sha256(b"x = 1\n").hexdigest(),
        "outside/secret.py": hashlib.sha256(b"not walked through the link").hexdigest(),
        "pkg/linked_folder": link("outside"),
        "pkg/linked_file": link("deep/mod.py"),
        "pkg/dangling": link("nowhere"),
    }


def test_a_retargeted_link_and_a_changed_file_are_changes(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    before = dict(grader_tree._walk(root))
    (root / "pkg" / "linked_file").unlink()
    os.symlink("../outside/secret.py", root / "pkg" / "linked_file")
    (root / "pkg" / "deep" / "mod.py").write_bytes(b"x = 2\n")
    after = dict(grader_tree._walk(root))
    assert {k for k in before if before[k] != after[k]} == {"pkg/linked_file", "pkg/deep/mod.py"}


def test_an_absent_root_walks_nothing(tmp_path: Path) -> None:
    assert list(grader_tree._walk(tmp_path / "absent")) == []


def test_read_once_reads_each_set_of_judged_files_once_in_its_block(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path)
    fixture_set = load_set([], tmp_path)
    monkeypatch.setattr(grader_tree, "judged_roots", lambda approot, fs: [("t", root)])
    walks: list[Path] = []
    walk = grader_tree._walk
    monkeypatch.setattr(grader_tree, "_walk", lambda r, **kw: walks.append(r) or walk(r, **kw))
    with grader_tree.read_once():
        first = grader_tree.fingerprint(tmp_path, fixture_set)
        first["t/pkg/deep/mod.py"] = "changed by the caller"  # a copy: the next read is whole
        (root / "pkg" / "deep" / "mod.py").write_bytes(b"x = 2\n")
        inside = grader_tree.fingerprint(tmp_path, fixture_set)
    assert len(walks) == 1 and inside["t/pkg/deep/mod.py"] == hashlib.sha256(b"x = 1\n").hexdigest()
    after = grader_tree.fingerprint(tmp_path, fixture_set)  # outside the block: read again
    assert len(walks) == 2 and after["t/pkg/deep/mod.py"] == hashlib.sha256(b"x = 2\n").hexdigest()


def _bed_and_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    bed, package = tmp_path / "bed", tmp_path / "package"
    (bed / "recipes").mkdir(parents=True)
    (bed / "recipes" / "recipe.yml").write_bytes(b"name: r\n")
    package.mkdir()
    (package / "checks.py").write_bytes(b"PASS = True\n")
    monkeypatch.setattr(grader_tree, "judged_roots", lambda approot, fs: [
        ("bed/recipes", approot / "recipes"), ("grader/pkg", package)])
    monkeypatch.setattr(grader_tree, "_known", {})
    return bed, package


def test_a_file_outside_the_bed_is_read_again_when_its_identity_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The digest of a settled file outside the bed is kept; a rewrite of the same size with
    its mtime put back still moves its ctime, so it is read again."""
    bed, package = _bed_and_package(tmp_path, monkeypatch)
    monkeypatch.setattr(grader_tree, "_SETTLED_NS", 0)  # no waiting for the files to settle
    fixture_set = load_set([], bed)
    first = grader_tree.fingerprint(bed, fixture_set)
    checks = str(package / "checks.py")
    assert set(grader_tree._known) == {checks}  # the bed's recipe is never kept
    identity, _ = grader_tree._known[checks]
    grader_tree._known[checks] = (identity, "kept")  # a kept digest is what a read would give
    assert grader_tree.fingerprint(bed, fixture_set)["grader/pkg/checks.py"] == "kept"
    times = os.stat(checks)
    (package / "checks.py").write_bytes(b"PASS = 1==1\n")
    os.utime(checks, ns=(times.st_atime_ns, times.st_mtime_ns))
    (bed / "recipes" / "recipe.yml").write_bytes(b"name: s\n")
    after = grader_tree.fingerprint(bed, fixture_set)
    assert after == {"bed/recipes/recipe.yml": hashlib.sha256(b"name: s\n").hexdigest(),
                     "grader/pkg/checks.py": hashlib.sha256(b"PASS = 1==1\n").hexdigest()}
    assert grader_tree.changes(first, after) == ["bed/recipes/recipe.yml modified",
                                                 "grader/pkg/checks.py modified"]


def test_a_file_changed_just_before_it_was_read_is_not_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose ctime is within _SETTLED_NS of the read could be written again in the
    same clock tick with an equal ctime: its digest is not kept."""
    bed, _ = _bed_and_package(tmp_path, monkeypatch)
    grader_tree.fingerprint(bed, load_set([], bed))
    assert grader_tree._known == {}
