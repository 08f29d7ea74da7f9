"""A DDEV job's judging files, copied when its bed is escrowed and put back after tampering.

An embedded job whose attempt tampered gets a fresh clone; a DDEV project cannot be cloned, and
the baseline tag holds only the tracked paths reset restores, not ``.ddev/agents/``,
``.ddev/commands/`` or the other judging roots inside the bed. So when the campaign escrows a
DDEV job it also keeps those files' bytes in memory (the escrow holds only their hashes), and
after tampering writes them back, removing whatever was added, never following a link the
attempt left. The escrowed verifier then decides whether the bed is whole again.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ai_proving_ground.escrow.judging import judging_roots
from ai_proving_ground.fixtures import load_set
from ai_proving_ground.fsutil import atomic_write_bytes
from ai_proving_ground.settings import Settings

# A file's mode bits and contents, or a symlink's target.
Entry = tuple[int, bytes] | str


@dataclass(frozen=True)
class JudgedFiles:
    """The bed's judging roots (bed-relative) and every file and symlink under them."""

    roots: tuple[str, ...]
    files: Mapping[str, Entry]


def capture(bed: Path, fixtures: Sequence[str], settings: Settings) -> JudgedFiles:
    """What the judging roots inside ``bed`` hold now."""
    fixture_set = load_set(list(fixtures), bed, settings=settings)
    roots = tuple(root["label"] for root in judging_roots(bed, fixture_set, settings)
                  if ":" not in root["label"])
    files: dict[str, Entry] = {}
    for root in roots:
        for relative in _walk(bed, root):
            path = bed / relative
            if path.is_symlink():
                files[relative] = os.readlink(path)
            else:
                files[relative] = (stat.S_IMODE(path.lstat().st_mode), path.read_bytes())
    return JudgedFiles(roots, files)


def _walk(bed: Path, root: str) -> list[str]:
    """Files and symlinks under ``root`` (itself, when it is one), links never followed."""
    top = bed / root
    if top.is_symlink() or (os.path.lexists(top) and not top.is_dir()):
        return [root]
    found = []
    for folder, dirs, names in os.walk(top):
        linked = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        dirs[:] = [d for d in dirs if d not in linked]
        for name in (*names, *linked):
            found.append(Path(folder, name).relative_to(bed).as_posix())
    return found


def restore(bed: Path, judged: JudgedFiles) -> list[str]:
    """Make the judging roots hold exactly ``judged``; the paths put back or removed."""
    changed = []
    for root in judged.roots:
        for relative in _walk(bed, root):
            if relative not in judged.files:
                _remove(bed / relative)
                changed.append(relative)
        _prune_empty(bed / root, judged, bed)
    for relative, entry in sorted(judged.files.items()):
        path = bed / relative
        if _matches(path, entry):
            continue
        _clear_way(bed, relative)
        if isinstance(entry, str):
            path.symlink_to(entry)
        else:
            atomic_write_bytes(path, entry[1], entry[0])
        changed.append(relative)
    return changed


def _matches(path: Path, entry: Entry) -> bool:
    if isinstance(entry, str):
        return path.is_symlink() and os.readlink(path) == entry
    if path.is_symlink() or not path.is_file():
        return False
    return stat.S_IMODE(path.lstat().st_mode) == entry[0] and path.read_bytes() == entry[1]


def _clear_way(bed: Path, relative: str) -> None:
    """Every folder on the way a real directory (a link or file there removed), the target gone."""
    current = bed
    for part in Path(relative).parts[:-1]:
        current = current / part
        if current.is_symlink() or (os.path.lexists(current) and not current.is_dir()):
            _remove(current)
        current.mkdir(exist_ok=True)
    target = bed / relative
    if os.path.lexists(target):
        _remove(target)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def _prune_empty(top: Path, judged: JudgedFiles, bed: Path) -> None:
    """Remove folders an attempt added that hold nothing judged."""
    if not top.is_dir() or top.is_symlink():
        return
    kept = {str(Path(r).parent) for r in judged.files}
    for folder, _dirs, _names in os.walk(top, topdown=False):
        relative = Path(folder).relative_to(bed).as_posix()
        if folder != str(top) and not os.listdir(folder) and not any(
                k == relative or k.startswith(relative + "/") for k in kept):
            os.rmdir(folder)
