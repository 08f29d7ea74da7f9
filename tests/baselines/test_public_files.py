"""Public files snapshots: capture, verify, restore and compare against real temporary trees."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.baselines import public_files as pf
from ai_proving_ground.baselines import public_files_restore as pfr
from ai_proving_ground.errors import ApgError
from support.record_kit import canonical

PUBLIC = "web/sites/default/files"
KEY = "abc123"


@pytest.fixture
def approot(make_approot: Callable[..., Path]) -> Path:
    return make_approot("app")


@pytest.fixture
def public(approot: Path) -> Path:
    """A small public tree: files, a hidden file, an empty dir, an internal link and regenerables."""
    base = approot / PUBLIC
    _write(base / "a.txt", "alpha\n")
    _write(base / ".htaccess", "Deny from all\n")
    (base / "sub").mkdir()
    (base / "sub" / "b.bin").write_bytes(bytes(range(256)))
    (base / "empty").mkdir()
    os.symlink("sub/b.bin", base / "link")
    _write(base / "css" / "x.css", "body{}\n")
    _write(base / "styles" / "thumb" / "a.jpg", "jpeg\n")
    return base


@pytest.fixture
def snap(tmp_path: Path) -> pf.FilesSnapshot:
    return pf.snapshot_paths(tmp_path / "baseline", KEY)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _tree(base: Path) -> dict[str, str]:
    """Every path under ``base`` (regenerables included) mapped to its content or link target."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = full.relative_to(base).as_posix()
            if full.is_symlink():
                found[rel] = "-> " + os.readlink(full)
            elif full.is_dir():
                found[rel + "/"] = ""
            else:
                found[rel] = hashlib.sha256(full.read_bytes()).hexdigest()
    return found


def _code(exc: pytest.ExceptionInfo[ApgError]) -> str:
    return exc.value.token


def _rewrite_sidecar(snap: pf.FilesSnapshot, **changes: Any) -> None:
    data = json.loads(snap.sidecar.read_text())
    data.update(changes)
    snap.sidecar.write_text(json.dumps(data))


def _forge(snap: pf.FilesSnapshot, members: list[tuple[tarfile.TarInfo, bytes]], listing: list[str],
           public_dir: str = PUBLIC) -> None:
    """Write an archive, listing and a *consistent* sidecar, as an attacker with write access could."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    archive = buffer.getvalue()
    listed = "".join(f"{path}\n" for path in listing).encode()
    snap.archive.parent.mkdir(parents=True, exist_ok=True)
    snap.archive.write_bytes(archive)
    snap.listing.write_bytes(listed)
    snap.sidecar.write_text(json.dumps({
        "format": 1, "public_dir": public_dir, "archive": snap.archive.name,
        "sha256": hashlib.sha256(archive).hexdigest(), "entries": len(listing),
        "list_sha256": hashlib.sha256(listed).hexdigest(),
    }))


def _file_member(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link_member(name: str, target: str) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info, b""


# --- snapshot_paths and listing -----------------------------------------------------------------


def test_snapshot_paths_names_the_three_files(tmp_path: Path) -> None:
    snap = pf.snapshot_paths(tmp_path, KEY)
    assert (snap.archive.name, snap.sidecar.name, snap.listing.name) == (
        f"files.{KEY}.tar.gz", f"files.{KEY}.tar.gz.json", f"files.{KEY}.list")
    assert snap.archive.parent == tmp_path


def test_snapshot_paths_refuses_a_key_with_a_slash(tmp_path: Path) -> None:
    with pytest.raises(ApgError):
        pf.snapshot_paths(tmp_path, "../up")


def test_listing_excludes_regenerables_and_does_not_follow_links(public: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    _write(outside / "secret.txt", "secret\n")
    os.symlink(outside, public / "dirlink")
    _write(public / "sub" / "css" / "nested.css", "kept: only top-level css/ is regenerable\n")
    assert pf.list_public_paths(public) == [
        ".htaccess", "a.txt", "dirlink", "empty/", "link", "sub/b.bin", "sub/css/nested.css"]


def test_listing_of_a_missing_directory_is_empty(tmp_path: Path) -> None:
    assert pf.list_public_paths(tmp_path / "nope") == []


# --- capture ------------------------------------------------------------------------------------


def test_capture_writes_archive_listing_and_sidecar(public: Path, approot: Path,
                                                    snap: pf.FilesSnapshot) -> None:
    sidecar = pf.capture(public, approot, snap)
    listing = snap.listing.read_bytes()
    expected = {
        "format": 1, "public_dir": PUBLIC, "archive": snap.archive.name,
        "sha256": hashlib.sha256(snap.archive.read_bytes()).hexdigest(), "entries": 5,
        "list_sha256": hashlib.sha256(listing).hexdigest(),
    }
    assert sidecar.as_json() == expected
    # The bytes capture has always written, and they read back through the record.
    assert snap.sidecar.read_text() == canonical(expected)
    assert pf.verify(snap) == sidecar
    assert listing.decode().splitlines() == pf.list_public_paths(public)
    assert not [p for p in snap.archive.parent.iterdir() if p.name.endswith(".new")]


def test_archive_excludes_regenerables_and_keeps_links_as_links(public: Path, approot: Path,
                                                                snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    with tarfile.open(snap.archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert sorted(members) == [".htaccess", "a.txt", "empty", "link", "sub/b.bin"]
    assert members["link"].issym() and members["link"].linkname == "sub/b.bin"
    assert members["empty"].isdir()
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members.values()} == {(0, 0, 0, "", "")}


def test_capture_is_byte_deterministic(public: Path, approot: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = (pf.snapshot_paths(tmp_path / name, KEY) for name in ("one", "two"))
    monkeypatch.setattr(time, "time", lambda: 1_000_000_000.0)
    pf.capture(public, approot, first)
    for path in (public / "a.txt", public / "sub" / "b.bin"):
        os.utime(path, (2_000_000_000, 2_000_000_000))
    monkeypatch.setattr(time, "time", lambda: 1_500_000_000.0)
    pf.capture(public, approot, second)
    assert first.archive.read_bytes() == second.archive.read_bytes()
    assert first.archive.read_bytes()[4:8] == b"\0\0\0\0"  # gzip header mtime


def test_capture_refuses_public_dir_outside_approot(approot: Path, tmp_path: Path,
                                                   snap: pf.FilesSnapshot) -> None:
    elsewhere = tmp_path / "elsewhere"
    _write(elsewhere / "f.txt", "x")
    with pytest.raises(ApgError) as exc:
        pf.capture(elsewhere, approot, snap)
    assert _code(exc) == "APG_FILES_UNSAFE"
    assert not snap.archive.exists() and not snap.sidecar.exists()


def test_capture_refuses_the_approot_itself(approot: Path, snap: pf.FilesSnapshot) -> None:
    with pytest.raises(ApgError) as exc:
        pf.capture(approot, approot, snap)
    assert _code(exc) == "APG_FILES_UNSAFE"


def test_capture_refuses_a_symlinked_public_dir(public: Path, approot: Path,
                                                snap: pf.FilesSnapshot) -> None:
    alias = approot / "files-alias"
    os.symlink(public, alias)
    with pytest.raises(ApgError) as exc:
        pf.capture(alias, approot, snap)
    assert _code(exc) == "APG_FILES_UNSAFE"


def test_capture_refuses_a_link_pointing_outside(public: Path, approot: Path, tmp_path: Path,
                                                 snap: pf.FilesSnapshot) -> None:
    os.symlink(tmp_path, public / "escape")
    with pytest.raises(ApgError) as exc:
        pf.capture(public, approot, snap)
    assert _code(exc) == "APG_FILES_UNSAFE"
    assert not snap.sidecar.exists()


def test_capture_refuses_a_baseline_inside_public_files(public: Path, approot: Path) -> None:
    inside = pf.snapshot_paths(public / "baseline", KEY)
    with pytest.raises(ApgError) as exc:
        pf.capture(public, approot, inside)
    assert _code(exc) == "APG_FILES_UNSAFE"


# --- verify -------------------------------------------------------------------------------------


def test_verify_returns_the_sidecar(public: Path, approot: Path, snap: pf.FilesSnapshot) -> None:
    sidecar = pf.capture(public, approot, snap)
    assert pf.verify(snap) == sidecar


@pytest.mark.parametrize("damage", ["archive", "listing", "sidecar-sha", "sidecar-entries",
                                    "sidecar-json", "no-listing", "no-sidecar", "no-archive"])
def test_verify_reports_changes(damage: str, public: Path, approot: Path,
                                snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    if damage == "archive":
        snap.archive.write_bytes(snap.archive.read_bytes() + b"\0")
    elif damage == "listing":
        snap.listing.write_text(snap.listing.read_text() + "planted.txt\n")
    elif damage == "sidecar-sha":
        _rewrite_sidecar(snap, sha256="0" * 64)
    elif damage == "sidecar-entries":
        _rewrite_sidecar(snap, entries=99)
    elif damage == "sidecar-json":
        snap.sidecar.write_text("{not json")
    else:
        {"no-listing": snap.listing, "no-sidecar": snap.sidecar, "no-archive": snap.archive}[damage].unlink()
    with pytest.raises(ApgError) as exc:
        pf.verify(snap)
    assert _code(exc) == "APG_RESET_FILES_CHANGED"
    assert "recapture the baseline" in exc.value.message


def test_verify_without_any_snapshot_is_unrecorded(snap: pf.FilesSnapshot) -> None:
    with pytest.raises(ApgError) as exc:
        pf.verify(snap)
    assert _code(exc) == "APG_RESET_FILES_UNRECORDED"


# --- restore ------------------------------------------------------------------------------------


def test_round_trip_restores_contents_and_removes_additions(public: Path, approot: Path,
                                                            snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    before = _tree(public)
    (public / "a.txt").write_text("modified\n")
    (public / "sub" / "b.bin").unlink()
    (public / "empty").rmdir()
    _write(public / "added.txt", "new\n")
    _write(public / "newdir" / "deep" / "x.txt", "new\n")
    restored = pfr.restore(public, approot, snap)
    assert _tree(public) == before
    assert (public / "a.txt").read_text() == "alpha\n"
    assert (public / "sub" / "b.bin").read_bytes() == bytes(range(256))
    assert restored == pf.list_public_paths(public)


def test_restore_leaves_regenerables_untouched(public: Path, approot: Path,
                                               snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    (public / "css" / "x.css").write_text("changed after capture\n")
    _write(public / "js" / "new.js", "js\n")
    pfr.restore(public, approot, snap)
    assert (public / "css" / "x.css").read_text() == "changed after capture\n"
    assert (public / "js" / "new.js").read_text() == "js\n"
    assert (public / "styles" / "thumb" / "a.jpg").read_text() == "jpeg\n"


def test_restore_recreates_a_link_as_a_link(public: Path, approot: Path, snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    (public / "link").unlink()
    (public / "link").write_text("a regular file now\n")
    pfr.restore(public, approot, snap)
    assert (public / "link").is_symlink()
    assert os.readlink(public / "link") == "sub/b.bin"


def test_restore_unlinks_a_planted_file_link_without_touching_its_target(
        public: Path, approot: Path, tmp_path: Path, snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    target = tmp_path / "outside.txt"
    target.write_text("outside content\n")
    os.symlink(target, public / "evil")
    pfr.restore(public, approot, snap)
    assert not os.path.lexists(public / "evil")
    assert target.read_text() == "outside content\n"


def test_restore_unlinks_a_planted_dir_link_without_emptying_its_target(
        public: Path, approot: Path, tmp_path: Path, snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    outside = tmp_path / "outside"
    _write(outside / "keep.txt", "keep\n")
    _write(outside / "nested" / "keep2.txt", "keep2\n")
    os.symlink(outside, public / "dirlink")
    os.symlink(outside, public / "sub" / "nested-dirlink")
    pfr.restore(public, approot, snap)
    assert not os.path.lexists(public / "dirlink")
    assert not os.path.lexists(public / "sub" / "nested-dirlink")
    assert (outside / "keep.txt").read_text() == "keep\n"
    assert (outside / "nested" / "keep2.txt").read_text() == "keep2\n"


def test_restore_refuses_a_public_dir_replaced_by_a_symlink(public: Path, approot: Path, tmp_path: Path,
                                                            snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    moved = public.with_name("files-moved")
    public.rename(moved)
    elsewhere = tmp_path / "elsewhere"
    _write(elsewhere / "precious.txt", "precious\n")
    os.symlink(elsewhere, public)
    moved_before = _tree(moved)
    with pytest.raises(ApgError) as exc:
        pfr.restore(public, approot, snap)
    assert _code(exc) == "APG_RESET_FILES_UNSAFE"
    assert _tree(elsewhere) == {"precious.txt": hashlib.sha256(b"precious\n").hexdigest()}
    assert _tree(moved) == moved_before


def test_restore_refuses_a_symlinked_ancestor(public: Path, approot: Path, tmp_path: Path,
                                              snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    default = approot / "web" / "sites" / "default"
    real = tmp_path / "real-default"
    default.rename(real)
    os.symlink(real, default)
    before = _tree(real)
    with pytest.raises(ApgError) as exc:
        pfr.restore(public, approot, snap)
    assert _code(exc) == "APG_RESET_FILES_UNSAFE"
    assert _tree(real) == before


def test_restore_refuses_a_destination_other_than_the_recorded_one(public: Path, approot: Path,
                                                                   snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    other = approot / "other"
    _write(other / "keep.txt", "keep\n")
    with pytest.raises(ApgError) as exc:
        pfr.restore(other, approot, snap)
    assert _code(exc) == "APG_RESET_FILES_UNSAFE"
    assert (other / "keep.txt").read_text() == "keep\n"


@pytest.mark.parametrize("recorded", ["other", ".", "../outside", "/abs"])
def test_restore_refuses_an_edited_recorded_dir(recorded: str, public: Path, approot: Path,
                                                snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    _write(public / "added.txt", "stays\n")
    _rewrite_sidecar(snap, public_dir=recorded)
    with pytest.raises(ApgError) as exc:
        pfr.restore(public, approot, snap)
    assert _code(exc) == "APG_RESET_FILES_UNSAFE"
    assert (public / "added.txt").read_text() == "stays\n"


def test_restore_refuses_a_changed_archive_before_deleting(public: Path, approot: Path,
                                                           snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    _write(public / "added.txt", "stays\n")
    (public / "a.txt").write_text("modified\n")
    snap.archive.write_bytes(snap.archive.read_bytes()[:-10])
    before = _tree(public)
    with pytest.raises(ApgError) as exc:
        pfr.restore(public, approot, snap)
    assert _code(exc) == "APG_RESET_FILES_CHANGED"
    assert _tree(public) == before


def test_restore_refuses_an_edited_sidecar(public: Path, approot: Path, snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    _write(public / "added.txt", "stays\n")
    _rewrite_sidecar(snap, entries=1)
    with pytest.raises(ApgError) as exc:
        pfr.restore(public, approot, snap)
    assert _code(exc) == "APG_RESET_FILES_CHANGED"
    assert (public / "added.txt").exists()


@pytest.mark.parametrize(("members", "listing"), [
    ([_file_member("../escape.txt", b"x")], ["../escape.txt"]),
    ([_link_member("out", "../../outside")], ["out"]),
    ([_link_member("abs", "/etc/passwd")], ["abs"]),
    ([_link_member("l", "sub"), _file_member("l/through.txt", b"x")], ["l", "l/through.txt"]),
    ([_file_member("css/planted.css", b"x")], ["css/planted.css"]),
    ([_link_member("self", "."), _link_member("up", "self/..")], ["self", "up"]),
])
def test_restore_refuses_unsafe_members_before_deleting(
        members: list[tuple[tarfile.TarInfo, bytes]], listing: list[str],
        public: Path, approot: Path, tmp_path: Path, snap: pf.FilesSnapshot) -> None:
    _forge(snap, members, listing)
    before = _tree(public)
    with pytest.raises(ApgError) as exc:
        pfr.restore(public, approot, snap)
    assert _code(exc) == "APG_RESET_FILES_UNSAFE"
    assert _tree(public) == before
    assert not (approot / "web" / "sites" / "default" / "escape.txt").exists()


def test_restore_refuses_an_archive_disagreeing_with_its_listing(public: Path, approot: Path,
                                                                snap: pf.FilesSnapshot) -> None:
    _forge(snap, [_file_member("a.txt", b"x")], ["b.txt"])
    with pytest.raises(ApgError) as exc:
        pfr.restore(public, approot, snap)
    assert _code(exc) == "APG_RESET_FILES_CHANGED"
    assert (public / "a.txt").read_text() == "alpha\n"


def test_restore_twice_gives_the_same_tree(public: Path, approot: Path, snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    expected = _tree(public)
    _write(public / "added.txt", "x")
    pfr.restore(public, approot, snap)
    pfr.restore(public, approot, snap)
    assert _tree(public) == expected


def test_restore_repairs_an_interrupted_restore(public: Path, approot: Path, snap: pf.FilesSnapshot,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    pf.capture(public, approot, snap)
    expected = _tree(public)
    real_rename = os.rename
    calls: list[Any] = []

    def crash_after_one(src: Any, dst: Any) -> None:
        calls.append(src)
        if len(calls) > 1:
            raise OSError("simulated crash")
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", crash_after_one)
    with pytest.raises(OSError, match="simulated crash"):
        pfr.restore(public, approot, snap)
    assert _tree(public) != expected
    monkeypatch.setattr(os, "rename", real_rename)
    # A hard kill also leaves the staging directory behind: the next run must clear it too.
    _write(public / ".apg-restore-leftover" / "half.txt", "half\n")
    pfr.restore(public, approot, snap)
    assert _tree(public) == expected


def test_restore_creates_a_missing_public_dir(public: Path, approot: Path, tmp_path: Path,
                                              snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    expected = {k: v for k, v in _tree(public).items() if k.split("/")[0] not in pf.REGENERABLE}
    public.rename(tmp_path / "gone")
    pfr.restore(public, approot, snap)
    assert _tree(public) == expected


def test_restore_puts_back_a_changed_file_and_a_removed_link(public: Path, approot: Path,
                                                            snap: pf.FilesSnapshot) -> None:
    """Extraction never uses tarfile's filters (the members are checked before): the same
    restore on every Python."""
    pf.capture(public, approot, snap)
    expected = _tree(public)
    (public / "a.txt").write_text("modified\n")
    (public / "link").unlink()
    pfr.restore(public, approot, snap)
    assert _tree(public) == expected


def test_check_destination_refuses_without_changing_anything(public: Path, approot: Path,
                                                             snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    assert pfr.check_destination(public, approot, snap) == public.resolve()
    with pytest.raises(ApgError) as exc:
        pfr.check_destination(approot / "other", approot, snap)
    assert _code(exc) == "APG_RESET_FILES_UNSAFE"


def test_recorded_public_dir_is_the_captured_one(public: Path, approot: Path,
                                                 snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    assert pf.recorded_public_dir(approot, snap) == public.resolve()


# --- compare ------------------------------------------------------------------------------------


def test_compare_reports_missing_and_added_paths(public: Path, approot: Path,
                                                 snap: pf.FilesSnapshot) -> None:
    pf.capture(public, approot, snap)
    assert pf.compare(public, snap) == {"missing": [], "added": []}
    (public / "a.txt").unlink()
    (public / "sub" / "b.bin").write_bytes(b"contents are not compared")
    _write(public / "added.txt", "x")
    _write(public / "css" / "ignored.css", "x")
    assert pf.compare(public, snap) == {"missing": ["a.txt"], "added": ["added.txt"]}


def test_compare_without_a_snapshot_is_unrecorded(public: Path, snap: pf.FilesSnapshot) -> None:
    with pytest.raises(ApgError) as exc:
        pf.compare(public, snap)
    assert _code(exc) == "APG_RESET_FILES_UNRECORDED"
