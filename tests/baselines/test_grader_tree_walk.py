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
    monkeypatch.setattr(grader_tree, "_walk", lambda r: walks.append(r) or walk(r))
    with grader_tree.read_once():
        first = grader_tree.fingerprint(tmp_path, fixture_set)
        first["t/pkg/deep/mod.py"] = "changed by the caller"  # a copy: the next read is whole
        (root / "pkg" / "deep" / "mod.py").write_bytes(b"x = 2\n")
        inside = grader_tree.fingerprint(tmp_path, fixture_set)
    assert len(walks) == 1 and inside["t/pkg/deep/mod.py"] == hashlib.sha256(b"x = 1\n").hexdigest()
    after = grader_tree.fingerprint(tmp_path, fixture_set)  # outside the block: read again
    assert len(walks) == 2 and after["t/pkg/deep/mod.py"] == hashlib.sha256(b"x = 2\n").hexdigest()
