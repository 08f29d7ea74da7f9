"""Restore stages a live file equal to its member as a hard link instead of writing it again;
anything that makes a live file not what extraction would leave is written afresh."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ai_proving_ground.baselines import public_files as pf
from ai_proving_ground.baselines import public_files_restore as pfr

PUBLIC = "web/sites/default/files"


@pytest.fixture
def approot(make_approot: Callable[..., Path]) -> Path:
    return make_approot("app")


@pytest.fixture
def public(approot: Path) -> Path:
    base = approot / PUBLIC
    (base / "sub").mkdir(parents=True)
    (base / "a.txt").write_text("alpha\n")
    (base / "sub" / "b.txt").write_text("beta\n")
    return base


@pytest.fixture
def snap(public: Path, approot: Path, tmp_path: Path) -> pf.FilesSnapshot:
    snapshot = pf.snapshot_paths(tmp_path / "baseline", "abc123")
    pf.capture(public, approot, snapshot)
    return snapshot


def test_an_equal_file_is_kept_and_a_changed_one_rewritten(public: Path, approot: Path,
                                                          snap: pf.FilesSnapshot) -> None:
    kept = os.lstat(public / "a.txt").st_ino
    (public / "sub" / "b.txt").write_text("betA\n")  # same size, other bytes
    pfr.restore(public, approot, snap)
    assert os.lstat(public / "a.txt").st_ino == kept  # reused, not written again
    assert os.lstat(public / "a.txt").st_nlink == 1  # the staging link is gone
    assert (public / "sub" / "b.txt").read_text() == "beta\n"


def test_a_hard_link_to_an_outside_file_is_cut(public: Path, approot: Path, tmp_path: Path,
                                               snap: pf.FilesSnapshot) -> None:
    outside = tmp_path / "outside.txt"
    (public / "a.txt").unlink()
    outside.write_text("alpha\n")  # the member's bytes, so only the link count tells
    os.chmod(outside, os.stat(public / "sub" / "b.txt").st_mode)
    os.link(outside, public / "a.txt")
    pfr.restore(public, approot, snap)
    (public / "a.txt").write_text("written by the site\n")
    assert outside.read_text() == "alpha\n"
    assert os.lstat(public / "a.txt").st_nlink == 1


def test_an_equal_file_with_another_mode_is_rewritten(public: Path, approot: Path,
                                                      snap: pf.FilesSnapshot) -> None:
    recorded = os.lstat(public / "a.txt").st_mode
    os.chmod(public / "a.txt", 0o666)
    pfr.restore(public, approot, snap)
    assert os.lstat(public / "a.txt").st_mode == recorded


def test_an_equal_file_under_a_linked_folder_is_not_reused(public: Path, approot: Path,
                                                           tmp_path: Path,
                                                           snap: pf.FilesSnapshot) -> None:
    elsewhere = tmp_path / "elsewhere"
    (public / "sub").rename(elsewhere)
    os.symlink(elsewhere, public / "sub")
    pfr.restore(public, approot, snap)
    assert not (public / "sub").is_symlink() and (public / "sub").is_dir()
    assert os.lstat(public / "sub" / "b.txt").st_ino != os.lstat(elsewhere / "b.txt").st_ino
    assert (elsewhere / "b.txt").read_text() == "beta\n"  # left alone, not deleted through


def test_an_equal_file_with_an_extended_attribute_is_rewritten(public: Path, approot: Path,
                                                               snap: pf.FilesSnapshot) -> None:
    try:
        os.setxattr(public / "a.txt", "user.agent", b"note")
    except OSError:
        pytest.skip("this file system holds no user extended attributes")
    pfr.restore(public, approot, snap)
    assert os.listxattr(public / "a.txt") == []
    assert (public / "a.txt").read_text() == "alpha\n"
