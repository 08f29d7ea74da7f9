"""``model.diff``: what a model changed in a bed's tracked paths, against the baseline tag.

The diff is made in-process from the tag's files as read once (:class:`BaselineTree`) and the
files on disk, in git's patch format (``git apply`` takes it): full blob ids on the ``index``
line, file modes, symlinks as their target text, and ``GIT binary patch`` literals for a file
with a NUL byte in its first 8000 bytes (git's test). It compares what reset restores: every
file under the tracked paths, ignored or not, so nothing a ``.gitignore`` in the bed names can
hide the model's work. Renames are a deletion and an addition, and hunks are difflib's (3 lines
of context): the same change as git's, not always the same bytes.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import os
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path

from ai_proving_ground.baselines.tree import BaselineTree
from ai_proving_ground.errors import ApgError
from ai_proving_ground.layout import TRACKED_PATHS

Blob = tuple[str, bytes]  # mode, content
CONTEXT = 3
_NULL_ID = "0" * 40
_BINARY_SNIFF = 8000


def model_diff(bed: Path, tree: BaselineTree) -> bytes:
    """The patch from ``tree`` to the bed's tracked paths now; empty when they are the tag's."""
    old = {name: (mode, tree.blobs[sha]) for mode, sha, name in tree.entries}
    new = dict(_on_disk(bed))
    return b"".join(_file_patch(name, old.get(name), new.get(name))
                    for name in sorted(old.keys() | new.keys(), key=os.fsencode))


def _on_disk(bed: Path) -> Iterator[tuple[str, Blob]]:
    """Every regular file and symlink under the tracked paths, as git would store it (a
    ``.git`` component is never content; a tracked path that is a file or symlink is one).
    A symlink above a tracked path is refused, as git refuses a path beyond one: what it
    leads to is outside the bed."""
    for relative in TRACKED_PATHS:
        root = bed / relative
        for step in list(reversed(root.parents))[len(bed.parents) + 1:]:
            if step.is_symlink():
                raise ApgError("APG_MODEL_DIFF_UNSAFE", f"{step} is a symlink: {relative} "
                               "beyond it is not the bed's to read")
        if root.is_symlink() or root.is_file():
            yield from _blob(bed, root)
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != ".git"]
            for name in [*files, *(d for d in dirs if os.path.islink(os.path.join(folder, d)))]:
                yield from _blob(bed, Path(folder) / name)


def _blob(bed: Path, path: Path) -> Iterator[tuple[str, Blob]]:
    info = path.lstat()
    name = path.relative_to(bed).as_posix()
    if stat.S_ISLNK(info.st_mode):
        yield name, ("120000", os.fsencode(os.readlink(path)))
    elif stat.S_ISREG(info.st_mode):
        yield name, ("100755" if info.st_mode & stat.S_IXUSR else "100644", path.read_bytes())


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _file_patch(name: str, old: Blob | None, new: Blob | None) -> bytes:
    if old == new:
        return b""
    if old is not None and new is not None and (old[0] == "120000") != (new[0] == "120000"):
        return _file_patch(name, old, None) + _file_patch(name, None, new)  # a type change
    path = os.fsencode(name)
    head = [b"diff --git a/%s b/%s\n" % (path, path)]
    old_data, new_data = (old[1] if old else b""), (new[1] if new else b"")
    ids = f"{_blob_id(old_data) if old else _NULL_ID}..{_blob_id(new_data) if new else _NULL_ID}"
    if old is None:
        assert new is not None
        head.append(f"new file mode {new[0]}\nindex {ids}\n".encode())
    elif new is None:
        head.append(f"deleted file mode {old[0]}\nindex {ids}\n".encode())
    elif old[0] != new[0]:
        head.append(f"old mode {old[0]}\nnew mode {new[0]}\n".encode())
        if old_data == new_data:
            return b"".join(head)
        head.append(f"index {ids}\n".encode())
    else:
        head.append(f"index {ids} {old[0]}\n".encode())
    if old_data == new_data:  # an empty file added or removed
        return b"".join(head)
    if _binary(old_data) or _binary(new_data):
        return b"".join([*head, b"GIT binary patch\n", _literal(new_data), _literal(old_data)])
    before = b"a/" + path if old else b"/dev/null"
    after = b"b/" + path if new else b"/dev/null"
    return b"".join([*head, b"--- %s\n+++ %s\n" % (before, after), *_hunks(old_data, new_data)])


def _binary(data: bytes) -> bool:
    return b"\0" in data[:_BINARY_SNIFF]


def _literal(data: bytes) -> bytes:
    """One side of a binary patch: the deflated content in git's base85 lines."""
    packed = zlib.compress(data, 9)
    lines = [b"literal %d\n" % len(data)]
    for start in range(0, len(packed), 52):
        chunk = packed[start:start + 52]
        size = len(chunk)
        marker = ord("A") + size - 1 if size <= 26 else ord("a") + size - 27
        lines.append(bytes([marker]) + base64.b85encode(chunk, pad=True) + b"\n")
    return b"".join([*lines, b"\n"])


def _hunks(old: bytes, new: bytes) -> Iterator[bytes]:
    a, b = _split(old), _split(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(CONTEXT):
        first, last = group[0], group[-1]
        yield b"@@ -%s +%s @@\n" % (_range(first[1], last[2]), _range(first[3], last[4]))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from _lines(b" ", a[i1:i2])
                continue
            yield from _lines(b"-", a[i1:i2])
            yield from _lines(b"+", b[j1:j2])


def _split(data: bytes) -> list[bytes]:
    """Lines as git sees them: ended by a newline only (a lone CR is part of its line)."""
    parts = data.split(b"\n")
    return [p + b"\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _range(start: int, stop: int) -> bytes:
    length = stop - start
    if length == 1:
        return b"%d" % (start + 1)
    return b"%d,%d" % (start + 1 if length else start, length)


def _lines(sign: bytes, lines: list[bytes]) -> Iterator[bytes]:
    for line in lines:
        yield sign + line
        if not line.endswith(b"\n"):
            yield b"\n\\ No newline at end of file\n"
