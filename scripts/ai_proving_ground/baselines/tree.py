"""The tracked paths of a bed (config/sync, web/modules/custom, recipes) and the baseline tag."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ai_proving_ground.errors import ApgError
from ai_proving_ground.faults import crashpoint
from ai_proving_ground.gitutil import git, git_text
from ai_proving_ground.layout import TRACKED_PATHS

TreeEntry = tuple[str, str, str]  # mode, blob sha, path


@dataclass(frozen=True)
class BaselineTree:
    """A baseline tag's tracked files, read from git once: what reset restores and what a
    model's diff is taken against. A campaign reads it when it escrows a job's bed (the escrowed
    verifier checks that tag before every attempt), so an attempt needs no git of its own."""

    tag: str
    entries: tuple[TreeEntry, ...]
    blobs: Mapping[str, bytes]


def read_tree(approot: Path, tag: str) -> BaselineTree:
    """``tag``'s tracked files, contents included (two git calls)."""
    entries = tag_entries(approot, tag)
    return BaselineTree(tag, tuple(entries),
                        _read_blobs(approot, sorted({sha for _mode, sha, _name in entries})))


def require_repository(approot: Path) -> None:
    if git(approot, ["rev-parse", "--is-inside-work-tree"], check=False).returncode != 0:
        raise ApgError("APG_BED_NOT_GIT", f"{approot} is not a git work tree; baselines need one: "
                       "git init -b main && git add -A && git commit -m 'bed initial state'")


def _files_on_disk(approot: Path, relative: str) -> list[str]:
    """Files and symlinks under a tracked path. A path that is itself a symlink or a file is
    listed as one entry and never walked: restore must not follow it out of the bed."""
    root = approot / relative
    if root.is_symlink() or (os.path.lexists(root) and not root.is_dir()):
        return [relative]
    if not root.is_dir():
        return []
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            found.append((Path(dirpath) / name).relative_to(approot).as_posix())
        for name in dirnames:
            if (Path(dirpath) / name).is_symlink():
                found.append((Path(dirpath) / name).relative_to(approot).as_posix())
    return found


def _index_names(approot: Path) -> list[str]:
    # -z: names verbatim (no C-quoting of non-ASCII), so they compare equal to names on disk.
    out = git(approot, ["ls-files", "-z", "--", *TRACKED_PATHS]).stdout
    return [name.decode("utf-8", "surrogateescape") for name in out.split(b"\0") if name]


def untracked_paths(approot: Path, entries: list[TreeEntry] | None = None) -> list[str]:
    """Populated tracked paths with no file tracked: path + the ignore rule that hid it.

    ``entries`` are the baseline tag's (see :func:`tag_entries`); without them, the index is read.
    """
    names = [name for _mode, _sha, name in entries] if entries is not None else \
        _index_names(approot)
    problems = []
    for relative in TRACKED_PATHS:
        on_disk = _files_on_disk(approot, relative)
        if on_disk and not any(n == relative or n.startswith(relative + "/") for n in names):
            rule = git(approot, ["check-ignore", "-v", "--no-index", on_disk[0]], check=False)
            why = rule.stdout.decode().strip().split("\t")[0] if rule.returncode == 0 else \
                "no ignore rule matches; the files were never added"
            problems.append(f"{relative} (ignore rule: {why})")
    return problems


def dirty_paths(approot: Path) -> list[str]:
    """Uncommitted changes under the tracked paths: a tag of HEAD would not hold them."""
    out = git_text(approot, ["status", "--porcelain", "--untracked-files=all", "--",
                             *TRACKED_PATHS])
    return [line[3:] for line in out.splitlines() if line]


def tag_ref(tag: str) -> str:
    """The tag's full ref name. A bare name would let ``refs/<tag>`` (or a branch) that an
    agent created shadow the tag, and the restore would read the agent's commit."""
    return f"refs/tags/{tag}"


def tag_commit(approot: Path, tag: str) -> str | None:
    done = git(approot, ["rev-parse", "--verify", "--quiet", f"{tag_ref(tag)}^{{commit}}"],
               check=False)
    return done.stdout.decode().strip() if done.returncode == 0 else None


def create_tag(approot: Path, tag: str) -> str:
    git(approot, ["tag", "-f", tag, "HEAD"])
    commit = tag_commit(approot, tag)
    assert commit is not None
    return commit


def check_scope(approot: Path) -> None:
    """Refuse, before anything changes, when a directory above a tracked path is a symlink or a
    file: restoring through it would write (and delete) outside the bed."""
    for relative in TRACKED_PATHS:
        parts = PurePosixPath(relative).parts
        for depth in range(1, len(parts)):
            step = approot.joinpath(*parts[:depth])
            if step.is_symlink() or (os.path.lexists(step) and not step.is_dir()):
                raise ApgError("APG_RESET_TREE_UNSAFE", f"{step} is a symlink or not a directory; "
                               f"restoring {relative} through it would write outside the bed. "
                               "Make it a real directory again, then reset")


def restore_from_tag(approot: Path, tag: str, skip: frozenset[str] = frozenset(),
                     entries: list[TreeEntry] | None = None,
                     blobs: Mapping[str, bytes] | None = None) -> list[str]:
    """Make every tracked path byte-identical to ``tag``: rewrite its files, remove the rest.

    Contents are read as raw blobs (``git cat-file``), never through ``git archive``: archive
    applies attributes (export-ignore, export-subst) and smudge filters, which a bed's
    ``.git/info/attributes`` or config could use to restore something else, or to run commands.
    ``entries`` and ``blobs``, when given, are the tag's as read before (:class:`BaselineTree`).
    """
    check_scope(approot)
    paths = [p for p in TRACKED_PATHS if p not in skip]
    if entries is None:
        entries = tag_entries(approot, tag)
    entries = [e for e in entries if any(e[2] == p or e[2].startswith(p + "/") for p in paths)]
    if blobs is None:
        blobs = _read_blobs(approot, sorted({sha for _mode, sha, _name in entries}))
    for mode, sha, name in entries:
        _write_entry(approot, name, mode, blobs[sha])
    crashpoint("reset.tree.extracted")
    in_tag = {name for _mode, _sha, name in entries}
    removed = []
    for relative in paths:
        for file in _files_on_disk(approot, relative):
            if file not in in_tag:
                _remove(approot / file)
                removed.append(file)
                crashpoint("reset.tree.removing")  # fires after the first removal
        _prune_empty_dirs(approot / relative)
    return removed


def tag_entries(approot: Path, tag: str) -> list[TreeEntry]:
    """(mode, blob sha, path) for every file and symlink of ``tag`` under the tracked paths:
    one ``git ls-tree`` that both the untracked check and the restore read."""
    out = git(approot, ["ls-tree", "-r", "-z", tag_ref(tag), "--", *TRACKED_PATHS]).stdout
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _tab, name = record.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        if kind == "blob":  # a submodule (commit) has no content to restore
            entries.append((mode, sha, name.decode("utf-8", "surrogateescape")))
    return entries


def _read_blobs(approot: Path, shas: list[str]) -> dict[str, bytes]:
    if not shas:
        return {}
    out = git(approot, ["cat-file", "--batch"], input_bytes="".join(f"{s}\n" for s in shas)
              .encode()).stdout
    blobs: dict[str, bytes] = {}
    offset = 0
    for sha in shas:
        header_end = out.index(b"\n", offset)
        found, kind, size = out[offset:header_end].decode().split()
        if found != sha or kind != "blob":
            raise ApgError("APG_GIT_FAILED", f"git cat-file answered {found} {kind} for {sha}")
        start = header_end + 1
        blobs[sha] = out[start:start + int(size)]
        offset = start + int(size) + 1
    return blobs


def _real_dirs(approot: Path, relative: PurePosixPath) -> None:
    """Make each directory of ``relative`` a real directory: a symlink or file there is removed."""
    current = approot
    for part in relative.parts:
        current = current / part
        if current.is_symlink() or (os.path.lexists(current) and not current.is_dir()):
            _remove(current)
        if not current.is_dir():
            current.mkdir()


def _write_entry(approot: Path, name: str, mode: str, data: bytes) -> None:
    relative = PurePosixPath(name)
    _real_dirs(approot, relative.parent)
    target = approot / name
    if mode == "120000":
        link = data.decode("utf-8", "surrogateescape")
        if target.is_symlink() and os.readlink(target) == link:
            return
        if os.path.lexists(target):
            _remove(target)
        os.symlink(link, target)
        return
    if target.is_symlink() or (os.path.lexists(target) and not target.is_file()):
        _remove(target)
    if not target.is_file() or target.read_bytes() != data:
        # A fresh, exclusively created temporary: a name planted in advance is never followed.
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".apg-restore",
                                   dir=target.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        crashpoint("reset.tree.staged")  # fires at the first changed file, before its rename
        os.replace(tmp, target)
        crashpoint("reset.tree.extracting")  # fires after the first changed file is in place
    wanted = 0o755 if mode == "100755" else 0o644
    if stat.S_IMODE(target.stat().st_mode) != wanted:
        os.chmod(target, wanted)


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _prune_empty_dirs(root: Path) -> None:
    if not root.is_dir() or root.is_symlink():
        return
    for dirpath, _dirnames, _filenames in sorted(os.walk(root), key=lambda t: -len(t[0])):
        directory = Path(dirpath)
        if directory != root and not any(directory.iterdir()):
            directory.rmdir()
