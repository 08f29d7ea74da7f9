"""The tracked paths of a bed (config/sync, web/modules/custom, recipes) and the baseline tag.

Every git here runs through :func:`gitutil.bed_git`, never in the bed's own repository (whose
config the agent can write). The baseline's commit is the one recorded in the baseline directory
(``baseline.<key>.json``): reset restores it and points the tag at it again, whatever the tag
names now; :func:`repository_changes` says whether a bed still matches it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ai_proving_ground.baselines.store import Baseline, read_metadata
from ai_proving_ground.errors import ApgError
from ai_proving_ground.faults import crashpoint
from ai_proving_ground.gitutil import bed_git, check_git_dir, object_types, read_ref, write_ref
from ai_proving_ground.layout import TRACKED_PATHS
from ai_proving_ground.report import say

TreeEntry = tuple[str, str, str]  # mode, blob sha, path


@dataclass(frozen=True)
class BaselineTree:
    """A baseline tag's tracked files, read from git once: what reset restores and what a
    model's diff is taken against. A campaign reads it when it escrows a job's bed (the escrowed
    verifier checks that tag before every attempt), so an attempt needs no git of its own."""

    tag: str
    entries: tuple[TreeEntry, ...]
    blobs: Mapping[str, bytes]
    commit: str | None = None  # the commit they were read from


def read_tree(approot: Path, tag: str, commit: str | None = None) -> BaselineTree:
    """``tag``'s tracked files (those of ``commit`` when given), contents included, every object
    checked against its name (four git calls)."""
    commit = commit or tag_commit(approot, tag)
    if commit is None:
        raise ApgError("APG_GIT_FAILED", f"tag {tag} names no commit in {approot}")
    entries = commit_entries(approot, commit)
    return BaselineTree(tag, tuple(entries),
                        _read_blobs(approot, sorted({sha for _mode, sha, _name in entries})),
                        commit)


def require_repository(approot: Path) -> None:
    if os.path.lexists(approot / ".git"):
        check_git_dir(approot)
    else:
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
    out = bed_git(approot, ["ls-files", "-z", "--", *TRACKED_PATHS]).stdout
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
            rule = bed_git(approot, ["check-ignore", "-v", "--no-index", on_disk[0]], check=False)
            why = rule.stdout.decode().strip().split("\t")[0] if rule.returncode == 0 else \
                "no ignore rule matches; the files were never added"
            problems.append(f"{relative} (ignore rule: {why})")
    return problems


def dirty_paths(approot: Path) -> list[str]:
    """Uncommitted changes under the tracked paths: a tag of HEAD would not hold them."""
    out = bed_git(approot, ["status", "--porcelain", "--untracked-files=all", "--",
                            *TRACKED_PATHS], head=read_ref(approot, "HEAD")).stdout.decode()
    return [line[3:] for line in out.splitlines() if line]


def tag_ref(tag: str) -> str:
    """The tag's full ref name. A bare name would let ``refs/<tag>`` (or a branch) that an
    agent created shadow the tag, and the restore would read the agent's commit."""
    return f"refs/tags/{tag}"


def tag_commit(approot: Path, tag: str) -> str | None:
    """The commit the bed's tag names now (the ref read without git, peeled by one git call);
    None when there is none."""
    oid = read_ref(approot, tag_ref(tag))
    if oid is None:
        return None
    (commit, kind), = object_types(approot, [f"{oid}^{{commit}}"])
    return commit if kind == "commit" else None


def head_commit(approot: Path) -> str:
    """The commit the bed's HEAD names (read without git): what a new baseline tags."""
    commit = read_ref(approot, "HEAD")
    if commit is None or object_types(approot, [commit])[0][1] != "commit":
        raise ApgError("APG_GIT_FAILED", f"HEAD of {approot} names no commit; commit the bed's "
                       "state first")
    return commit


def create_tag(approot: Path, tag: str, commit: str | None = None) -> str:
    """Point ``tag`` at ``commit`` (HEAD's when None): a lightweight tag written as a ref, so
    no ``git tag`` runs (signing, editors and hooks of the bed's config are never reached)."""
    commit = commit or head_commit(approot)
    if object_types(approot, [commit])[0][1] != "commit":
        raise ApgError("APG_GIT_FAILED", f"{commit} is not a commit in {approot}")
    write_ref(approot, tag_ref(tag), commit)
    return commit


def recorded_commit(baseline: Baseline) -> str | None:
    """The commit the baseline directory recorded for the set under this tag name; None for a
    baseline captured before commits were recorded, under another tag name, or with no
    metadata. Metadata that cannot be read is refused (its token), never read as "unrecorded":
    that would fall back to whatever the tag names."""
    if not os.path.lexists(baseline.metadata):
        return None
    record = read_metadata(baseline)
    return record.commit if record.tag == baseline.tag else None


def restore_tag(approot: Path, tag: str, commit: str, known: bool = False) -> bool:
    """Point ``tag`` at the recorded ``commit`` again when it names anything else (deleted,
    moved, recreated); True when it had to. ``APG_RESET_TAG_LOST`` when the bed's objects no
    longer hold the commit (not asked when ``known``: the caller read its files already). The
    usual case (the tag as recorded) runs no git at all."""
    if read_ref(approot, tag_ref(tag)) == commit:
        return False
    if not known and object_types(approot, [commit])[0][1] != "commit":
        raise ApgError("APG_RESET_TAG_LOST", f"tag {tag} does not name the baseline commit "
                       f"{commit}, and the bed's objects no longer hold it; restore it from the "
                       f"escrow (apg verify --restore) or recapture the baseline")
    write_ref(approot, tag_ref(tag), commit)
    return True


def baseline_entries(approot: Path, baseline: Baseline,
                     tree: BaselineTree | None = None) -> list[TreeEntry] | None:
    """The files reset restores: the recorded commit's, after pointing the bed's tag at it again
    (``APG_RESET_TAG_RESTORED``) when an attempt deleted or moved it. ``tree`` is used when it
    was read from that commit (a campaign's, read once). None when the baseline recorded no
    commit (it predates the record) and its tag is gone."""
    commit = recorded_commit(baseline)
    if commit is None:  # an older baseline: its tag is all there is
        if tree is not None:
            return list(tree.entries)
        return tag_entries(approot, baseline.tag) if tag_commit(approot, baseline.tag) else None
    from_tree = tree is not None and tree.commit == commit
    if restore_tag(approot, baseline.tag, commit, known=from_tree):
        say("APG_RESET_TAG_RESTORED", f"tag {baseline.tag} no longer named the baseline commit "
            f"{commit}; it does again")
    return list(tree.entries) if tree is not None and from_tree else commit_entries(approot, commit)


def settle_tag(approot: Path, baseline: Baseline, token: str) -> bool:
    """True when the baseline has its tag: the recorded commit's (a deleted or moved tag is
    pointed back at it, saying ``token``), or for an older baseline that recorded none, any."""
    commit = recorded_commit(baseline)
    if commit is None:
        return tag_commit(approot, baseline.tag) is not None
    if restore_tag(approot, baseline.tag, commit):
        say(token, f"tag {baseline.tag} no longer named the baseline commit {commit}; it does "
            "again")
    return True


def repository_changes(approot: Path, baseline: Baseline) -> list[str]:
    """What differs between the bed's repository and the recorded baseline: the ``.git`` that
    cannot be used, the tag deleted or moved off the recorded commit. Empty when they match.
    For callers that must judge an attempt (a moved or deleted tag is the agent's doing)."""
    commit = recorded_commit(baseline)
    try:
        check_git_dir(approot)
        now = tag_commit(approot, baseline.tag)
    except ApgError as exc:
        return [exc.message]
    if now is None:
        return [f"tag {baseline.tag} deleted"]
    if commit is not None and now != commit:
        return [f"tag {baseline.tag} moved to {now} (baseline commit {commit})"]
    return []


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
    commit = tag_commit(approot, tag)
    if commit is None:
        raise ApgError("APG_GIT_FAILED", f"tag {tag} names no commit in {approot}")
    return commit_entries(approot, commit)


def commit_entries(approot: Path, commit: str) -> list[TreeEntry]:
    """(mode, blob sha, path) of ``commit``'s files under the tracked paths.

    The bed's object store is the agent's to write and git does not check what it reads, so the
    commit and every tree on the way are read again and hashed here (:func:`_read_objects`): an
    object whose content does not hash to its name is ``APG_GIT_OBJECT_FORGED``."""
    out = bed_git(approot, ["ls-tree", "-r", "-t", "-z", commit, "--", *TRACKED_PATHS]).stdout
    entries = []
    trees = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _tab, name = record.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        if kind == "blob":  # a submodule (commit) has no content to restore
            entries.append((mode, sha, name.decode("utf-8", "surrogateescape")))
        elif kind == "tree":
            trees.append(sha)
    head = _read_objects(approot, [commit], "commit")[commit].split(b"\n", 1)[0]
    if not head.startswith(b"tree "):
        raise _forged(approot, commit)
    _read_objects(approot, [head[5:].decode(), *trees], "tree")
    return entries


def _read_blobs(approot: Path, shas: list[str]) -> dict[str, bytes]:
    return _read_objects(approot, shas, "blob")


def _forged(approot: Path, sha: str) -> ApgError:
    return ApgError("APG_GIT_OBJECT_FORGED", f"object {sha} in {approot}/.git is missing or its "
                    "content does not hash to its name: the repository's objects were changed. "
                    "Restore .git from a trusted copy, or recapture the baseline")


def _read_objects(approot: Path, shas: list[str], kind: str) -> dict[str, bytes]:
    """``shas``' contents (one ``git cat-file --batch``), each checked to be a ``kind`` whose
    content hashes to its name, as git names objects."""
    wanted = sorted(set(shas))
    if not wanted:
        return {}
    out = bed_git(approot, ["cat-file", "--batch"],
                  input_bytes="".join(f"{s}\n" for s in wanted).encode()).stdout
    found: dict[str, bytes] = {}
    offset = 0
    for sha in wanted:
        header_end = out.index(b"\n", offset)
        fields = out[offset:header_end].decode(errors="replace").split()
        if len(fields) != 3 or fields[0] != sha or fields[1] != kind:
            raise _forged(approot, sha)
        start = header_end + 1
        data = out[start:start + int(fields[2])]
        digest = hashlib.sha1 if len(sha) == 40 else hashlib.sha256
        if digest(f"{kind} {len(data)}\0".encode() + data).hexdigest() != sha:
            raise _forged(approot, sha)
        found[sha] = data
        offset = start + int(fields[2]) + 1
    return found


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
