"""``git apply`` without options, in-process: check a whole patch in memory, then write it.

The patch is read by :mod:`.patch_parse`; :func:`apply_patch` follows git's rules for applying
it. Context matches byte for byte: no fuzz, no whitespace repair and none of the bed's
``.gitattributes`` conversions (they are the agent's to write). A hunk may apply at an offset,
searched outward from its stated line, nearest first, forward before backward; a hunk stated at
line 0 or 1 must match at the file's start, one without trailing context at its end, and no
hunk matches a line an earlier hunk wrote. Entries apply in order (a later one sees what an
earlier one made of its file; renames and copies read the tree as it was).

Every entry is checked and computed in memory first; if anything fails, nothing is written.
Then deletions (and the folders they leave empty), then each written file, new-then-rename,
with git's permissions (0o666, or 0o777 for mode 100755, under the umask).

Refused with a reason (:class:`PatchError`), as a failed patch step: binary entries, symlink and
submodule entries (mode 120000 and 160000), touching an existing symlink or folder, a path that
is absolute, has an empty, ``.``, ``..`` or ``.git`` component or goes through a symlink or a
file, a new file that exists, a missing file to modify, a deletion that leaves content.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ai_proving_ground.tasks.patch_parse import FilePatch, Hunk, PatchError

REGULAR, EXECUTABLE = 0o100644, 0o100755
_TYPE = 0o170000


@dataclass(frozen=True)
class Result:
    """A file as the patch leaves it."""

    mode: int
    data: bytes


# What each entry did to a path so far (None: removed it), for the entries after it: git's
# fn_table. What is written is each entry's own result, in order (:data:`Plan`).
Outcome = dict[str, "Result | None"]
Plan = list[tuple[str, "Result | None"]]  # (path, what to write there, or None: remove it)


def apply_patch(root: Path, patches: list[FilePatch]) -> Plan:
    """Apply every entry under ``root``, all or nothing; :class:`PatchError` says why not."""
    plan = check_patch(root, patches)
    _write(root, plan)
    return plan


def check_patch(root: Path, patches: list[FilePatch]) -> Plan:
    """What the patch would write, computed in memory; nothing on disk changes."""
    outcome: Outcome = {}
    plan: Plan = []
    doomed = {p.old_name for p in patches
              if p.old_name is not None and (p.new_name is None or p.is_rename)}
    for patch in patches:
        plan.extend(_check_entry(root, patch, outcome, doomed))
    return plan


def _check_entry(root: Path, patch: FilePatch, outcome: Outcome, doomed: set[str]) -> Plan:
    name = patch.old_name or patch.new_name or "?"
    old_name, new_name, is_new, is_delete = patch.old_name, patch.new_name, patch.is_new, patch.is_delete
    old_mode, new_mode = patch.old_mode, patch.new_mode
    for path in (old_name, new_name):
        if path is not None:
            _verify_path(path)
    if patch.binary:
        raise PatchError(f"{name}: binary patches are not supported here (git needs the "
                         "repository's objects for them); make the file with a command instead")
    for mode in (old_mode, new_mode):
        if mode is not None and mode & _TYPE != 0o100000:
            raise PatchError(f"{name}: mode {mode:06o} (a symlink or submodule entry) is not supported")
    found_mode, old_data = REGULAR, b""
    if old_name is not None:
        if not (patch.is_copy or patch.is_rename) and old_name in outcome:
            previous = outcome[old_name]
            if previous is None:
                raise PatchError(f"path {old_name} has been renamed/deleted")
            found_mode, old_data = previous.mode, previous.data
        else:
            found = _read(root, old_name, outcome, doomed)
            if found is None and is_new is None:  # a plain diff's new file
                is_new, is_delete, old_name = True, False, None
            elif found is None:
                raise PatchError(f"{old_name}: No such file or directory")
            else:
                found_mode, old_data = found
    if old_name is not None:
        is_new = bool(is_new)
        old_mode = found_mode if old_mode is None else old_mode
        if (found_mode ^ old_mode) & _TYPE:
            raise PatchError(f"{old_name}: wrong type")
        if new_mode is None and is_delete is False:
            new_mode = found_mode
    if new_name is not None and (is_new or patch.is_rename or patch.is_copy):
        ok_if_exists = _removed(new_name, outcome, doomed)
        _parents(root, new_name, outcome, doomed)
        if os.path.lexists(root / new_name) and (not ok_if_exists or os.path.isdir(root / new_name)):
            raise PatchError(f"{new_name}: already exists in working directory")
        if new_mode is None:
            new_mode = REGULAR if is_new else old_mode
    if new_name is not None and old_name is not None and old_mode is not None:
        new_mode = old_mode if new_mode is None else new_mode
        if (old_mode ^ new_mode) & _TYPE:
            raise PatchError(f"new mode ({new_mode:o}) of {new_name} does not match old mode ({old_mode:o})")
    if new_name is not None and is_delete is not True:
        _parents(root, new_name, outcome, doomed)
    result = _apply_hunks(b"" if is_new else old_data, patch.hunks, name)
    if is_delete and result:
        raise PatchError(f"{name}: removal patch leaves file contents")
    plan: Plan = []
    if old_name is not None and (new_name is None or patch.is_rename):
        plan.append((old_name, None))
    if new_name is not None and is_delete is not True:
        plan.append((new_name, Result(REGULAR if new_mode is None else new_mode, result)))
    outcome.update(plan)
    return plan


def _removed(path: str, outcome: Outcome, doomed: set[str]) -> bool:
    """Whether an entry removed ``path`` or a later one will (git lets a new file take its place)."""
    return (path in outcome and outcome[path] is None) or (path in doomed and path not in outcome)


def _verify_path(path: str) -> None:
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
        raise PatchError(f"invalid path '{path}'")


def _parents(root: Path, path: str, outcome: Outcome, doomed: set[str]) -> None:
    """Refuse a path beyond a symlink (git's rule) or below a file the patch keeps."""
    parts = path.split("/")
    for depth in range(1, len(parts)):
        prefix = "/".join(parts[:depth])
        try:
            mode = os.lstat(root / prefix).st_mode
        except FileNotFoundError:
            return
        if stat.S_ISLNK(mode):
            raise PatchError(f"affected file '{path}' is beyond a symbolic link")
        if not stat.S_ISDIR(mode) and not _removed(prefix, outcome, doomed):
            raise PatchError(f"{path}: {prefix} is not a directory")


def _read(root: Path, path: str, outcome: Outcome, doomed: set[str]) -> tuple[int, bytes] | None:
    """A file's git mode and bytes, None when it does not exist."""
    _parents(root, path, outcome, doomed)
    try:
        found = os.lstat(root / path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(found.st_mode):
        raise PatchError(f"{path}: is a symbolic link; patching symlinks is not supported")
    if not stat.S_ISREG(found.st_mode):
        raise PatchError(f"{path}: is not a regular file")
    return (EXECUTABLE if found.st_mode & stat.S_IXUSR else REGULAR), (root / path).read_bytes()


# ---------------------------------------------------------------------------- hunks


def _apply_hunks(data: bytes, hunks: list[Hunk], name: str) -> bytes:
    image = _lines(data)
    written = [False] * len(image)  # lines a hunk wrote: git never matches them again
    for hunk in hunks:
        at_start, at_end = hunk.old_start <= 1, hunk.trailing == 0
        start = hunk.new_start - 1 if hunk.new_start else 0
        position = _find(image, written, hunk.pre, start, at_start, at_end)
        if position < 0:
            raise PatchError(f"patch failed: {name}:{hunk.old_start}")
        image[position:position + len(hunk.pre)] = hunk.post
        written[position:position + len(hunk.pre)] = [True] * len(hunk.post)
    return b"".join(image)


def _lines(data: bytes) -> list[bytes]:
    lines = [piece + b"\n" for piece in data.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _find(image: list[bytes], written: list[bool], pre: list[bytes], line: int,
          at_start: bool, at_end: bool) -> int:
    """Where ``pre`` matches: tried at ``line``, then one forward, one back, two forward..."""
    if len(pre) > len(image):
        return -1
    line = 0 if at_start else len(image) - len(pre) if at_end else line
    line = len(image) if line < 0 or line > len(image) else line
    back = forward = line
    candidates = [line]
    while back > 0 or forward < len(image):
        if forward < len(image):
            forward += 1
            candidates.append(forward)
        if back > 0:
            back -= 1
            candidates.append(back)
    for candidate in candidates:
        if _matches(image, written, pre, candidate, at_start, at_end):
            return candidate
    return -1


def _matches(image: list[bytes], written: list[bool], pre: list[bytes], at: int,
             at_start: bool, at_end: bool) -> bool:
    """git's match_fragment without whitespace options: the bytes of ``pre`` at line ``at``."""
    count = len(pre)
    if at + count > len(image) or (at_start and at) or any(written[at:at + count]):
        return False
    if count == 0:
        return not at_end or at == len(image)
    if image[at:at + count - 1] != pre[:-1]:
        return False
    last, have = pre[-1], image[at + count - 1]
    if at_end:
        return at + count == len(image) and have == last
    # A last line without its newline ("\ No newline") matches a longer line that starts with it
    # and differs only in whitespace: git compares bytes up to the patch's length and hashes
    # lines ignoring whitespace.
    return have == last or (not last.endswith(b"\n") and have.startswith(last)
                            and _line_hash(have) == _line_hash(last))


def _line_hash(line: bytes) -> int:
    value = 0
    for char in line:
        if char not in b" \t\n\r":
            value = (value * 3 + char) & 0xFFFFFFFF
    return value


# ---------------------------------------------------------------------------- writing


def _write(root: Path, plan: Plan) -> None:
    """Removals first, then writes, each in the patch's order (git's two phases)."""
    for path, result in plan:
        if result is None and os.path.lexists(root / path):
            os.unlink(root / path)
            _prune(root, Path(path).parent)
    for path, result in plan:
        if result is not None:
            _write_file(root / path, result)


def _prune(root: Path, folder: Path) -> None:
    """Remove the folders a deletion left empty, as git does."""
    while folder != Path("."):
        try:
            os.rmdir(root / folder)
        except OSError:
            return
        folder = folder.parent


def _write_file(target: Path, result: Result) -> None:
    """New-then-rename, created with git's permissions: the umask applies, as it does to git."""
    target.parent.mkdir(parents=True, exist_ok=True)
    # Not fsutil.atomic_write_bytes: it chmods a 0600 file, and git's modes follow the umask,
    # which only the kernel can apply without a process-wide os.umask() call (threads share it).
    temporary = target.with_name(f".{target.name}.{os.urandom(6).hex()}.new")
    permissions = 0o777 if result.mode & 0o100 else 0o666
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, permissions)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(result.data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
