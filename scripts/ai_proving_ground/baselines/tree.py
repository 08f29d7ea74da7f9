"""The tracked paths of a bed (config/sync, web/modules/custom, recipes) and the baseline tag."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from pathlib import Path

from ai_proving_ground.errors import ApgError
from ai_proving_ground.faults import crashpoint
from ai_proving_ground.gitutil import git, git_text
from ai_proving_ground.sites.embedded.layout import TRACKED_PATHS


def require_repository(approot: Path) -> None:
    if git(approot, ["rev-parse", "--is-inside-work-tree"], check=False).returncode != 0:
        raise ApgError("APG_BED_NOT_GIT", f"{approot} is not a git work tree; baselines need one: "
                       "git init -b main && git add -A && git commit -m 'bed initial state'")


def _files_on_disk(approot: Path, relative: str) -> list[str]:
    root = approot / relative
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


def _tracked(approot: Path, relative: str, ref: str | None) -> list[str]:
    args = ["ls-tree", "-r", "--name-only", ref, "--", relative] if ref else \
        ["ls-files", "--", relative]
    return [line for line in git_text(approot, args).splitlines() if line]


def untracked_paths(approot: Path, ref: str | None = None) -> list[str]:
    """Populated tracked paths with no file tracked (in the index, or in ``ref``): path + rule."""
    problems = []
    for relative in TRACKED_PATHS:
        on_disk = _files_on_disk(approot, relative)
        if on_disk and not _tracked(approot, relative, ref):
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


def tag_commit(approot: Path, tag: str) -> str | None:
    done = git(approot, ["rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}"],
               check=False)
    return done.stdout.decode().strip() if done.returncode == 0 else None


def create_tag(approot: Path, tag: str) -> str:
    git(approot, ["tag", "-f", tag, "HEAD"])
    commit = tag_commit(approot, tag)
    assert commit is not None
    return commit


def restore_from_tag(approot: Path, tag: str, skip: frozenset[str] = frozenset()) -> list[str]:
    """Make every tracked path byte-identical to ``tag``: rewrite its files, remove the rest."""
    paths = [p for p in TRACKED_PATHS if p not in skip]
    in_tag = set()
    for relative in paths:
        in_tag.update(_tracked(approot, relative, tag))
    present = [p for p in paths if _tracked(approot, p, tag)]
    if present:
        archive = git(approot, ["archive", "--format=tar", tag, "--", *present]).stdout
        _extract(approot, archive)
    crashpoint("reset.tree.extracted")
    removed = []
    for relative in paths:
        for file in _files_on_disk(approot, relative):
            if file not in in_tag:
                _remove(approot / file)
                removed.append(file)
        _prune_empty_dirs(approot / relative)
    return removed


def _extract(approot: Path, archive: bytes) -> None:
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            target = approot / member.name
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            if target.is_symlink() or target.is_dir():
                _remove(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            if member.issym():
                if target.exists() or target.is_symlink():
                    target.unlink()
                os.symlink(member.linkname, target)
                continue
            source = tar.extractfile(member)
            assert source is not None
            data = source.read()
            if not target.is_file() or target.read_bytes() != data:
                tmp = target.with_name(f".{target.name}.apg-restore")
                tmp.write_bytes(data)
                os.replace(tmp, target)
            os.chmod(target, 0o755 if member.mode & 0o111 else 0o644)


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
