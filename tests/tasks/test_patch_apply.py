"""The in-process applier against real ``git apply``: each case applies one patch to two copies of
a tree, with git in one and ours in the other, and the trees (content, kind and permissions, empty
folders too) must come out identical, or both sides must refuse and leave their tree as it was.

Patches are made by real ``git diff`` where git can make them (renames, copies, quoting, modes),
and by hand where the point is a shape git does not write (plain diffs, empty context lines, a
patch meant for a tree that has moved on)."""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from ai_proving_ground.tasks.patch_apply import apply_patch
from ai_proving_ground.tasks.patch_parse import PatchError, parse_patch, patch_paths

if shutil.which("git") is None:
    pytest.skip("git is not on PATH (the applier is tested against it); install git",
                allow_module_level=True)

# A file's content, or (content, permissions), or ("->", target) for a symlink.
Spec = bytes | tuple[bytes, int] | tuple[str, str]
Tree = dict[str, Spec]


def git_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}


def make_tree(root: Path, tree: Tree) -> Path:
    root.mkdir(parents=True)
    return place(root, tree)


def place(root: Path, tree: Tree) -> Path:
    for name, spec in tree.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(spec, tuple) and spec[0] == "->":
            path.symlink_to(str(spec[1]))
            continue
        data, mode = spec if isinstance(spec, tuple) else (spec, 0o644)
        assert isinstance(data, bytes) and isinstance(mode, int)
        path.write_bytes(data)
        path.chmod(mode)
    return root


def read_tree(root: Path) -> dict[str, tuple[object, ...]]:
    """Every file, symlink and folder under root but .git: kind, content, permissions."""
    found: dict[str, tuple[object, ...]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (folder == str(root) and d == ".git")]
        for name in [*files, *dirs]:
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[relative] = ("symlink", os.readlink(path))
            elif path.is_dir():
                found[relative] = ("dir",)
            else:
                found[relative] = ("file", path.read_bytes(), path.stat().st_mode & 0o7777)
    return found


def git_diff(tmp: Path, before: Tree, after: Tree, *options: str) -> bytes:
    """The patch real git writes from ``before`` to ``after``."""
    repo = make_tree(tmp / "diff-repo", before)
    env = git_env(tmp)
    run = lambda *argv: subprocess.run(["git", *argv], cwd=repo, env=env, check=True,  # noqa: E731
                                       capture_output=True).stdout
    run("init", "-q")
    run("add", "-A")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "b")
    for name in list(before):
        path = repo / name
        if path.is_symlink() or path.is_file():
            path.unlink()
    place(repo, after)
    run("add", "-A")
    return run("diff", "--cached", *options)


@dataclass
class Applied:
    ok: bool
    tree: dict[str, tuple[object, ...]]
    message: str


def with_git(root: Path, patch: bytes, home: Path) -> Applied:
    subprocess.run(["git", "init", "-q"], cwd=root, env=git_env(home), check=True)
    (home / "the.patch").write_bytes(patch)
    done = subprocess.run(["git", "apply", str(home / "the.patch")], cwd=root, env=git_env(home),
                          capture_output=True)
    return Applied(done.returncode == 0, read_tree(root), done.stderr.decode(errors="replace"))


def with_ours(root: Path, patch: bytes) -> Applied:
    try:
        apply_patch(root, parse_patch(patch))
    except PatchError as exc:
        return Applied(False, read_tree(root), str(exc))
    return Applied(True, read_tree(root), "")


def lines(count: int, stem: str = "line") -> bytes:
    return b"".join(f"{stem} {n}\n".encode() for n in range(1, count + 1))


TEN = lines(10)
FORTY = lines(40)
SPECIAL = "sp\u00e9cial\ttab.txt"


def replace(data: bytes, old: bytes, new: bytes) -> bytes:
    assert old in data
    return data.replace(old, new, 1)


@dataclass
class Case:
    """Apply ``patch`` (or the git diff from ``tree`` to ``after``) to ``target`` (default ``tree``)."""

    tree: Tree
    after: Tree | None = None
    patch: bytes | None = None
    target: Tree | None = None
    options: tuple[str, ...] = ()
    applies: bool = True


def plain(name: str, old: bytes, new: bytes, *, old_label: str = "", new_label: str = "") -> bytes:
    diff = difflib.unified_diff(old.decode().splitlines(True), new.decode().splitlines(True),
                                old_label or f"a/{name}", new_label or f"b/{name}")
    return "".join(diff).encode()


# The same block at lines 2 and 14; a hunk stated between them goes to the nearer one, and on a
# tie forward (git searches line, +1, -1, +2, -2, ...). Each of the three cases below picks
# a different block or direction, so a start line off by one either way fails one of them.
BLOCK = b"block\nx\nblock end\n"
REPEATED = b"".join([b"top\n", BLOCK, lines(9, "fill"), BLOCK, lines(8, "more")])


def at_line(number: int) -> bytes:
    return (f"--- a/r.txt\n+++ b/r.txt\n@@ -{number},3 +{number},3 @@\n"
            " block\n-x\n+X\n block end\n").encode()


def x_at(line: int) -> bytes:
    """REPEATED with the block at ``line`` changed."""
    cut = [n for n in range(len(REPEATED)) if REPEATED.startswith(BLOCK, n)]
    start = cut[0] if line == 2 else cut[1]
    return REPEATED[:start] + BLOCK.replace(b"x", b"X") + REPEATED[start + len(BLOCK):]

CASES: dict[str, Case] = {
    "modify": Case({"a.txt": TEN}, {"a.txt": replace(TEN, b"line 5\n", b"five\n")}),
    "add": Case({"a.txt": TEN}, {"a.txt": TEN, "new/deep/b.txt": b"hello\n"}),
    "delete-empties-folder": Case({"a.txt": TEN, "sub/only.txt": b"x\n"}, {"a.txt": TEN}),
    "rename": Case({"a.txt": TEN}, {"moved/b.txt": TEN}, options=("-M",)),
    "rename-and-modify": Case({"a.txt": TEN}, {"b.txt": replace(TEN, b"line 9\n", b"nine\n")},
                              options=("-M",)),
    "copy-and-modify": Case({"a.txt": TEN}, {"a.txt": TEN, "c.txt": replace(TEN, b"line 1\n", b"1\n")},
                            options=("-C", "--find-copies-harder")),
    "mode-only": Case({"run.sh": b"echo hi\n"}, {"run.sh": (b"echo hi\n", 0o755)}),
    "mode-and-content": Case({"run.sh": (b"echo hi\n", 0o755)}, {"run.sh": b"echo bye\n"}),
    "new-executable": Case({}, {"bin/tool": (b"#!/bin/sh\n", 0o755)}),
    "gain-final-newline": Case({"a.txt": b"one\ntwo"}, {"a.txt": b"one\ntwo\n"}),
    "lose-final-newline": Case({"a.txt": b"one\ntwo\n"}, {"a.txt": b"one\ntwo"}),
    "no-final-newline-either-side": Case({"a.txt": b"one\ntwo"}, {"a.txt": b"one\n2"}),
    "quoted-paths": Case({SPECIAL: TEN, "old \"q\".txt": b"q\n"},
                         {SPECIAL: replace(TEN, b"line 2\n", b"two\n"), "new\\dir/\u00fc.txt": b"u\n"}),
    "crlf-content": Case({"w.txt": b"a\r\nb\r\nc\r\n"}, {"w.txt": b"a\r\nB\r\nc\r\n"}),
    "add-empty-file": Case({}, {"d/made.txt": b""}),
    "delete-empty-file": Case({"d/gone.txt": b""}, {}),
    "file-becomes-empty": Case({"shrink.txt": b"x\n"}, {"shrink.txt": b""}),
    "rename-empty-file": Case({"gone.txt": b""}, {"made.txt": b""}, options=("-M",)),
    "multiple-hunks": Case({"f.txt": FORTY}, {"f.txt": replace(replace(
        FORTY, b"line 3\n", b"three\n"), b"line 35\n", b"thirty-five\n")}),
    "swap-renames": Case({"a.txt": TEN, "b.txt": FORTY}, {"a.txt": FORTY, "b.txt": TEN}, patch=(
        b"diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n"
        b"diff --git a/b.txt b/a.txt\nsimilarity index 100%\nrename from b.txt\nrename to a.txt\n")),
    # The tree moved on since the patch was made: the hunk applies a few lines further down.
    "hunk-at-offset": Case({"a.txt": TEN}, {"a.txt": replace(TEN, b"line 6\n", b"six\n")},
                           target={"a.txt": b"new 1\nnew 2\nnew 3\n" + TEN}),
    "second-hunk-at-offset": Case({"f.txt": FORTY}, {"f.txt": replace(replace(
        FORTY, b"line 3\n", b"three\n"), b"line 30\n", b"thirty\n")},
        target={"f.txt": replace(FORTY, b"line 20\n", b"line 20\nextra\nextra\n")}),
    "context-does-not-match": Case({"a.txt": TEN}, {"a.txt": replace(TEN, b"line 5\n", b"5\n")},
                                   target={"a.txt": replace(TEN, b"line 4\n", b"LINE 4\n")},
                                   applies=False),
    "second-file-fails-first-untouched": Case(
        {"a.txt": TEN, "b.txt": TEN},
        {"a.txt": replace(TEN, b"line 2\n", b"two\n"), "b.txt": replace(TEN, b"line 8\n", b"8\n")},
        target={"a.txt": TEN, "b.txt": replace(TEN, b"line 7\n", b"changed\n")}, applies=False),
    # Stated at line 1: it must match at the start, not where its lines now are.
    "start-hunk-must-match-at-start": Case(
        {"a.txt": TEN}, {"a.txt": replace(TEN, b"line 1\n", b"one\n")},
        target={"a.txt": b"x\n" + TEN}, applies=False),
    # No trailing context: it must match at the end, not where its lines now are.
    "end-hunk-must-match-at-end": Case(
        {"a.txt": TEN}, {"a.txt": replace(TEN, b"line 10\n", b"ten\n")},
        target={"a.txt": TEN + b"after\n"}, applies=False),
    # The block appears twice; the nearest one to the stated line wins, forward before back.
    "nearest-match-forward": Case({"r.txt": REPEATED}, {"r.txt": x_at(14)}, patch=at_line(11)),
    "nearest-match-backward": Case({"r.txt": REPEATED}, {"r.txt": x_at(2)}, patch=at_line(7)),
    "tie-goes-forward": Case({"r.txt": REPEATED}, {"r.txt": x_at(14)}, patch=at_line(8)),
    # No line an earlier hunk wrote is matched again: the second hunk skips the nearer b/c/q.
    "written-lines-are-not-matched-again": Case(
        {"f": b"a\nc\nq\n" + lines(5, "f") + b"b\nc\nq\nz\n"}, patch=(
            b"--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n a\n+b\n c\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n q\n")),
    # git's own quirk, kept: a last context line without its newline matches a longer line
    # (git compares the patch's bytes), so "c" and "d" end up on one line.
    "no-newline-context-matches-a-longer-line": Case({"f": b"a\nb\nc\nd\n"}, {"f": b"A\nb\ncd\n"}, patch=(
        b"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n+A\n b\n c\n\\ No newline at end of file\n")),
    # Entries apply in order: a later entry for a file sees what an earlier one made of it...
    "same-file-twice": Case({"a.txt": TEN}, {"a.txt": replace(TEN, b"line 2\n", b"2\n")}, patch=(
        plain("a.txt", TEN, replace(TEN, b"line 2\n", b"two\n"))
        + plain("a.txt", replace(TEN, b"line 2\n", b"two\n"), replace(TEN, b"line 2\n", b"2\n")))),
    "delete-then-create": Case({"a.txt": TEN}, {"a.txt": b"fresh\n"}, patch=(
        b"diff --git a/a.txt b/a.txt\ndeleted file mode 100644\n--- a/a.txt\n+++ /dev/null\n"
        b"@@ -1,10 +0,0 @@\n" + b"".join(b"-" + line + b"\n" for line in TEN.splitlines())
        + b"diff --git a/a.txt b/a.txt\nnew file mode 100644\n--- /dev/null\n+++ b/a.txt\n"
        b"@@ -0,0 +1 @@\n+fresh\n")),
    # ...and what a rename took away is gone for the entries after it.
    "renamed-path-patched-again": Case({"a.txt": TEN}, patch=(
        b"diff --git a/a.txt b/b.txt\nsimilarity index 100%\nrename from a.txt\nrename to b.txt\n"
        + plain("a.txt", TEN, replace(TEN, b"line 2\n", b"two\n"))), applies=False),
    "plain-unified-diff": Case({"d/p.txt": TEN}, patch=plain(
        "d/p.txt", TEN, replace(TEN, b"line 3\n", b"3\n"))),
    "plain-with-timestamps": Case({"p.txt": TEN}, patch=plain(
        "p.txt", TEN, replace(TEN, b"line 3\n", b"3\n"),
        old_label="a/p.txt\t2024-01-01 00:00:00.000000000 +0000",
        new_label="b/p.txt\t2024-01-02 00:00:00.000000000 +0000")),
    "plain-new-file": Case({}, patch=plain("n.txt", b"", b"fresh\n", old_label="/dev/null")),
    "plain-no-prefix": Case({"p.txt": TEN}, patch=plain(
        "p.txt", TEN, replace(TEN, b"line 3\n", b"3\n"), old_label="p.txt", new_label="p.txt")),
    "empty-context-line": Case({"e.txt": b"a\n\nb\n"}, patch=(
        b"diff --git a/e.txt b/e.txt\n--- a/e.txt\n+++ b/e.txt\n@@ -1,3 +1,3 @@\n a\n\n-b\n+B\n")),
    "omitted-counts": Case({"o.txt": b"only\n"}, patch=(
        b"diff --git a/o.txt b/o.txt\n--- a/o.txt\n+++ b/o.txt\n@@ -1 +1 @@\n-only\n+ONLY\n")),
    "text-around-entries": Case({"a.txt": TEN}, patch=(
        b"From: someone\nSubject: a change\n\n---\n a.txt | 2 +-\n\n"
        b"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-line 1\n+one\n"
        b" line 2\n-- \n2.39.5\n")),
    "binary-without-data": Case({"b.bin": b"\x00\x01"}, patch=(
        b"diff --git a/b.bin b/b.bin\nindex 1234567..89abcde 100644\n"
        b"Binary files a/b.bin and b/b.bin differ\n"), applies=False),
    "new-file-exists": Case({"a.txt": TEN}, {"a.txt": TEN, "n.txt": b"n\n"},
                            target={"a.txt": TEN, "n.txt": b"already\n"}, applies=False),
    "modify-missing-file": Case({"a.txt": TEN}, {"a.txt": replace(TEN, b"line 1\n", b"1\n")},
                                target={}, applies=False),
    "delete-leaves-content": Case({"a.txt": TEN}, {}, target={"a.txt": TEN + b"more\n"},
                                  applies=False),
    "path-leaves-the-tree": Case({}, patch=(
        b"diff --git a/../out.txt b/../out.txt\nnew file mode 100644\n--- /dev/null\n"
        b"+++ b/../out.txt\n@@ -0,0 +1 @@\n+x\n"), applies=False),
    "path-into-git-dir": Case({}, patch=(
        b"diff --git a/.git/hooks/x b/.git/hooks/x\nnew file mode 100644\n--- /dev/null\n"
        b"+++ b/.git/hooks/x\n@@ -0,0 +1 @@\n+x\n"), applies=False),
    "path-through-symlink": Case({"real/x.txt": b"x\n", "link": ("->", "real")}, patch=(
        b"diff --git a/link/x.txt b/link/x.txt\n--- a/link/x.txt\n+++ b/link/x.txt\n"
        b"@@ -1 +1 @@\n-x\n+y\n"), applies=False),
    "corrupt-counts": Case({"a.txt": TEN}, patch=(
        b"diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n-line 1\n+one\n"),
        applies=False),
    "no-patch-at-all": Case({"a.txt": TEN}, patch=b"just some words\n", applies=False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_ours_and_git_apply_leave_the_same_tree(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    patch = case.patch
    if patch is None:
        assert case.after is not None
        patch = git_diff(tmp_path, case.tree, case.after, *case.options)
    target = case.tree if case.target is None else case.target
    home = tmp_path / "home"
    home.mkdir()
    before = read_tree(make_tree(tmp_path / "mine", target))
    theirs = with_git(make_tree(tmp_path / "git", target), patch, home)
    ours = with_ours(tmp_path / "mine", patch)
    assert (ours.ok, theirs.ok) == (case.applies, case.applies), (ours.message, theirs.message)
    assert ours.tree == theirs.tree
    if not case.applies:
        assert ours.tree == before and ours.message  # nothing written, and a reason
    elif case.after is not None and (case.target is None or case.patch is not None):
        assert ours.tree == read_tree(make_tree(tmp_path / "expected", case.after))


def test_a_git_binary_patch_is_refused_with_a_reason(tmp_path: Path) -> None:
    """Git applies these (from the repository's objects or the literal); we refuse, and say so."""
    patch = git_diff(tmp_path, {}, {"b.bin": b"\x00\x01\x02"}, "--binary")
    assert b"GIT binary patch" in patch
    root = make_tree(tmp_path / "mine", {"a.txt": TEN})
    [entry] = parse_patch(patch)
    assert entry.binary and patch_paths([entry]) == ["b.bin"]
    with pytest.raises(PatchError, match=r"b\.bin: binary patches are not supported"):
        apply_patch(root, [entry])
    assert read_tree(root) == {"a.txt": ("file", TEN, 0o644)}


def test_a_symlink_entry_is_refused_with_a_reason(tmp_path: Path) -> None:
    patch = git_diff(tmp_path, {}, {"l": ("->", "target")})
    root = make_tree(tmp_path / "mine", {})
    with pytest.raises(PatchError, match=r"mode 120000 .* not supported"):
        apply_patch(root, parse_patch(patch))
    assert read_tree(root) == {}


def test_the_paths_a_patch_names_include_both_sides_of_renames_and_copies(tmp_path: Path) -> None:
    patch = git_diff(tmp_path, {"a.txt": TEN, "old name.txt": FORTY, "gone/g.txt": b"g\n"},
                     {"a.txt": TEN, "c/copy.txt": TEN, "new name.txt": FORTY, SPECIAL: b"s\n"},
                     "-M", "-C", "--find-copies-harder")
    assert b"copy from a.txt" in patch and b"rename from old name.txt" in patch
    assert patch_paths(parse_patch(patch)) == [
        "a.txt", "c/copy.txt", "gone/g.txt", "old name.txt", "new name.txt", SPECIAL]


@pytest.mark.parametrize("patch, message", [
    (b"@@ -1 +1 @@\n-a\n+b\n", "patch fragment without header at line 1"),
    (b"diff --git a/x b/x\nnew file mode 100644\ndeleted file mode 100644\n", "inconsistent header"),
    (b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n a\n", "corrupt patch at line 4"),
    (b"diff --git a/x b/x\nold mode 1z\n", "invalid mode on line 2"),
    (b"diff --git a/x b/x\nindex 1234567..89abcde 100644\n", "patch with only garbage"),
])
def test_what_git_calls_a_corrupt_patch(patch: bytes, message: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    root = make_tree(tmp_path / "git", {"x": b"a\n"})
    assert not with_git(root, patch, home).ok
    with pytest.raises(PatchError, match=message):
        parse_patch(patch)


# ---------------------------------------------------------------------------- random patches

# Few distinct lines (so that hunks could match in many places), blank and whitespace-only
# lines, a carriage return, and files with or without their last newline.
LINE = st.sampled_from([b"a", b"b", b"c", b"", b" ", b"a ", b"x\r"])
EDIT = st.tuples(st.sampled_from(["insert", "delete", "replace"]), st.integers(0, 12), LINE)


@st.composite
def text_files(draw: st.DrawFn) -> bytes:
    body = b"".join(line + b"\n" for line in draw(st.lists(LINE, max_size=12)))
    return body[:-1] if body and draw(st.booleans()) else body


def edited(data: bytes, edits: list[tuple[str, int, bytes]], flip_last_newline: bool) -> bytes:
    lines = data.split(b"\n")
    for kind, where, text in edits:
        where = min(where, len(lines))
        if kind == "insert":
            lines.insert(where, text)
        elif lines:
            lines[min(where, len(lines) - 1):min(where, len(lines) - 1) + 1] = (
                [] if kind == "delete" else [text])
    out = b"\n".join(lines)
    if flip_last_newline:
        out = out[:-1] if out.endswith(b"\n") else out + b"\n"
    return out


@settings(max_examples=25, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(before=text_files(), change=st.lists(EDIT, min_size=1, max_size=3), flip=st.booleans(),
       drift=st.lists(EDIT, max_size=2), context=st.sampled_from(["-U0", "-U1", "-U2", "-U3"]))
def test_random_patches_to_a_drifted_file_apply_as_git_applies_them(
        before: bytes, change: list[tuple[str, int, bytes]], flip: bool,
        drift: list[tuple[str, int, bytes]], context: str) -> None:
    """git diff makes a patch from ``before`` to its edit; it goes to ``before`` with other edits
    (``drift``): both appliers must agree, hunk offsets, refusals, -U0 patches and all."""
    after = edited(before, change, flip)
    assume(after != before)
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        patch = git_diff(tmp, {"f": before}, {"f": after}, context)
        target = {"f": edited(before, drift, False)}
        home = tmp / "home"
        home.mkdir()
        theirs = with_git(make_tree(tmp / "git", target), patch, home)
        make_tree(tmp / "mine", target)
        ours = with_ours(tmp / "mine", patch)
        assert (ours.ok, ours.tree) == (theirs.ok, theirs.tree), (ours.message, theirs.message)
