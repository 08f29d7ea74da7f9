"""Reading a patch as ``git apply`` reads it (the applier is :mod:`.patch_apply`).

:func:`parse_patch` takes git's patch format (``diff --git`` with its extended headers: old/new
mode, new/deleted file mode, rename and copy from/to, (dis)similarity index, ``index``) and plain
unified diffs (``--- a/X`` / ``+++ b/X``: one leading component stripped, as ``git apply`` does,
or none when neither name has a slash), C-quoted names (``"a/sp\\303\\251cial"``), hunks whose
omitted counts mean 1, ``\\ No newline at end of file`` and GNU diff's epoch-dated creations and
deletions. Text between entries (a mail, a commit message) is skipped, as git skips it; a hunk
whose counts do not add up, or one outside any entry, is a corrupt patch. A binary entry is read
(``binary``) so that its paths are known; the applier refuses it. :func:`patch_paths` lists
every path a patch names, both sides of renames and copies.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

_HUNK = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {ord(k): v for k, v in zip("abtnvfr\\\"", b"\a\b\t\n\v\f\r\\\"", strict=True)}
_SPACE = b" \t\n\r"  # git's isspace()
_EPOCH = re.compile(rb"(1969-12-31|1970-01-01) ([0-2][0-9]):([0-5][0-9]):00(\.0+)? "
                    rb"([-+])([0-2][0-9]):?([0-5][0-9])\n")


class PatchError(Exception):
    """A patch that cannot be read or does not apply; the message says why, as git's would."""


@dataclass
class Hunk:
    old_start: int
    new_start: int
    pre: list[bytes]  # the lines it expects, then the lines it leaves
    post: list[bytes]
    trailing: int  # context lines after its last change


@dataclass
class FilePatch:
    """One entry: ``None`` for is_new/is_delete means "not said" (a plain diff), as in git."""

    line: int
    old_name: str | None = None
    new_name: str | None = None
    old_mode: int | None = None
    new_mode: int | None = None
    is_new: bool | None = None
    is_delete: bool | None = None
    is_rename: bool = False
    is_copy: bool = False
    binary: bool = False
    hunks: list[Hunk] = field(default_factory=list)


def parse_patch(data: bytes) -> list[FilePatch]:
    """Every entry of a patch; :class:`PatchError` when git would call it corrupt or empty."""
    lines = [piece + b"\n" for piece in data.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()
    patches: list[FilePatch] = []
    at, p_value = 0, None
    while at < len(lines):
        line = lines[at]
        if line.startswith(b"@@ -") and _HUNK.match(line) and line.endswith(b"\n"):
            raise PatchError(f"patch fragment without header at line {at + 1}: {_show(line)}")
        patch, body = None, at + 1
        if line.startswith(b"diff --git "):
            patch, body = _git_header(lines, at)
        elif (line.startswith(b"--- ") and at + 2 < len(lines) and lines[at + 1].startswith(b"+++ ")
              and lines[at + 2].startswith(b"@@ -")):
            patch, p_value = _plain_header(line[4:], lines[at + 1][4:], at, p_value)
            body = at + 2
        if patch is None:
            at = body
            continue
        at = _read_hunks(lines, body, patch)
        patches.append(patch)
    if not patches:
        raise PatchError("No valid patches in input")
    return patches


def patch_paths(patches: list[FilePatch]) -> list[str]:
    """Every path the patch names, both sides of a rename or copy, in order, once each."""
    names = [n for p in patches for n in (p.old_name, p.new_name) if n is not None]
    return list(dict.fromkeys(names))


_GIT_LINES = ("@@ -", "--- ", "+++ ", "old mode ", "new mode ", "deleted file mode ",
              "new file mode ", "copy from ", "copy to ", "rename old ", "rename new ",
              "rename from ", "rename to ", "similarity index ", "dissimilarity index ", "index ")


def _git_header(lines: list[bytes], at: int) -> tuple[FilePatch | None, int]:
    patch = FilePatch(line=at + 1, is_new=False, is_delete=False)
    default = _header_name(lines[at][len(b"diff --git "):])
    end = at + 1
    while end < len(lines) and lines[end].endswith(b"\n"):
        text = lines[end]
        key = next((k for k in _GIT_LINES if text.startswith(k.encode())), None)
        if key is None or key == "@@ -":
            break
        _git_line(patch, key, text[len(key):-1], default, end + 1)
        if sum(map(bool, (patch.is_new, patch.is_delete, patch.is_rename, patch.is_copy))) > 1:
            raise PatchError(f"inconsistent header lines {patch.line} and {end + 1}")
        end += 1
    if patch.old_name is None and patch.new_name is None:
        if default is None:
            raise PatchError("git diff header lacks filename information when removing 1 leading "
                             f"pathname component (line {end})")
        patch.old_name = patch.new_name = default
    if (patch.new_name is None and not patch.is_delete) or (patch.old_name is None and not patch.is_new):
        raise PatchError(f"git diff header lacks filename information (line {end})")
    return (patch if end > at + 1 else None), end


def _git_line(patch: FilePatch, key: str, value: bytes, default: str | None, line: int) -> None:
    if key in ("--- ", "+++ "):
        old = key == "--- "
        current, null = (patch.old_name, patch.is_new) if old else (patch.new_name, patch.is_delete)
        if current is None and not null:
            current = _find_name(value, 1, stop_at_tab=True)
        elif current is not None and null:
            raise PatchError(f"git apply: bad git-diff - expected /dev/null, got {current} on line {line}")
        elif current is not None and _find_name(value, 1, stop_at_tab=True) != current:
            raise PatchError(f"git apply: bad git-diff - inconsistent {'old' if old else 'new'} "
                             f"filename on line {line}")
        elif current is None and not _is_null(value + b"\n"):
            raise PatchError(f"git apply: bad git-diff - expected /dev/null on line {line}")
        if old:
            patch.old_name = current
        else:
            patch.new_name = current
    elif key in ("old mode ", "new mode ", "deleted file mode ", "new file mode "):
        mode = _mode(value, line)
        if key == "deleted file mode ":
            patch.is_delete, patch.old_name = True, default
        if key == "new file mode ":
            patch.is_new, patch.new_name = True, default
        if key.startswith(("old", "deleted")):
            patch.old_mode = mode
        else:
            patch.new_mode = mode
    elif key.startswith(("copy", "rename")):
        name = _find_name(value, 0, stop_at_tab=False)
        if key.startswith("copy"):
            patch.is_copy = True
        else:
            patch.is_rename = True
        if key.endswith(("from ", "old ")):
            patch.old_name = name
        else:
            patch.new_name = name
    elif key == "index ":
        ids, _, mode_text = value.partition(b" ")
        if b".." in ids and mode_text:
            patch.old_mode = _mode(mode_text, line)


def _plain_header(first: bytes, second: bytes, at: int,
                  p_value: int | None) -> tuple[FilePatch, int | None]:
    """A plain unified diff. As git, strip one component unless both names have no slash (then
    none, and so on for the rest of the patch)."""
    patch = FilePatch(line=at + 1)
    if p_value is None:
        guess, other = _guess_p(first), _guess_p(second)
        guess = other if guess < 0 else guess
        p_value = guess if guess >= 0 and guess == other else None
    strip = 1 if p_value is None else p_value
    if _is_null(first):
        patch.is_new, patch.is_delete = True, False
        patch.new_name = name = _find_name(second, strip, stop_at_tab=True)
    elif _is_null(second):
        patch.is_new, patch.is_delete = False, True
        patch.old_name = name = _find_name(first, strip, stop_at_tab=True)
    else:
        name = _find_name(second, strip, True, default=_find_name(first, strip, stop_at_tab=True))
        if _is_epoch(first):
            patch.is_new, patch.is_delete, patch.new_name = True, False, name
        elif _is_epoch(second):
            patch.is_new, patch.is_delete, patch.old_name = False, True, name
        else:
            patch.old_name = patch.new_name = name
    if name is None:
        raise PatchError(f"unable to find filename in patch at line {at + 1}")
    return patch, p_value


def _read_hunks(lines: list[bytes], at: int, patch: FilePatch) -> int:
    old_total = new_total = 0
    while at < len(lines) and lines[at].startswith(b"@@ -"):
        hunk, at = _hunk(lines, at)
        old_total += len(hunk.pre)
        new_total += len(hunk.post)
        patch.hunks.append(hunk)
    several = len(patch.hunks) > 1
    if patch.is_new is None and (old_total or several):
        patch.is_new = False
    if patch.is_delete is None and (new_total or several):
        patch.is_delete = False
    name = patch.new_name or patch.old_name
    if patch.is_new and old_total:
        raise PatchError(f"new file {name} depends on old contents")
    if patch.is_delete and new_total:
        raise PatchError(f"deleted file {name} still has contents")
    if not patch.hunks and at < len(lines) and (lines[at] == b"GIT binary patch\n" or (
            lines[at].endswith(b" differ\n") and lines[at].startswith((b"Binary files ", b"Files ")))):
        patch.binary = True
        return at + 1
    changes_mode = None not in (patch.old_mode, patch.new_mode) and patch.old_mode != patch.new_mode
    if not patch.hunks and not (patch.is_rename or patch.is_copy or patch.is_new
                                or patch.is_delete or changes_mode):
        raise PatchError(f"patch with only garbage at line {at + 1}")
    return at


def _hunk(lines: list[bytes], at: int) -> tuple[Hunk, int]:
    found = _HUNK.match(lines[at])
    if found is None or not lines[at].endswith(b"\n"):
        raise PatchError(f"corrupt patch at line {at + 1}")
    old_start, old_count, new_start, new_count = (int(g) if g is not None else 1
                                                  for g in found.groups())
    start, body, trailing, changed = at, [], 0, False
    at += 1
    while old_count > 0 or new_count > 0:
        line = lines[at] if at < len(lines) else b""
        kind = line[:1]
        if not line.endswith(b"\n") or kind not in (b" ", b"\n", b"-", b"+", b"\\") or (
                kind == b"\\" and (len(line) < 12 or not line.startswith(b"\\ "))):
            raise PatchError(f"corrupt patch at line {at + 1}")
        old_count -= kind in (b" ", b"\n", b"-")
        new_count -= kind in (b" ", b"\n", b"+")
        if kind in (b"-", b"+"):
            changed, trailing = True, 0
        elif kind != b"\\":
            trailing += 1
        body.append(line)
        at += 1
    if old_count or new_count or not changed:
        raise PatchError(f"corrupt patch at line {start + 1}")
    if at < len(lines) and lines[at].startswith(b"\\ "):
        body.append(lines[at])
        at += 1
    pre: list[bytes] = []
    post: list[bytes] = []
    for number, line in enumerate(body):
        kind, text = line[:1], line[1:]
        if kind == b"\\":
            continue
        if number + 1 < len(body) and body[number + 1].startswith(b"\\"):
            text = text[:-1]  # "\ No newline at end of file" takes the line's newline away
            if kind == b"\n":
                continue
        if kind == b"\n":
            text = b"\n"  # an empty context line (its space lost on the way)
        if kind != b"+":
            pre.append(text)
        if kind != b"-":
            post.append(text)
    return Hunk(old_start, new_start, pre, post, trailing), at


def _header_name(rest: bytes) -> str | None:
    """The name on a ``diff --git`` line, only when both sides name it the same way (git's
    rule: renames and copies carry their names in their own headers)."""
    line = rest[:-1] if rest.endswith(b"\n") else rest
    if line.startswith(b'"'):
        quoted = _unquote(line)
        first = _skip(quoted[0], 1) if quoted else None
        after = quoted[1].lstrip(_SPACE) if quoted else b""
        if first is None or not after:
            return None
        again = _unquote(after) if after.startswith(b'"') else (after, b"")
        return os.fsdecode(first) if again and _skip(again[0], 1) == first else None
    name = _skip(line, 1)
    if name is None:
        return None
    quote = name.find(b'"')
    if quote >= 0:
        quoted = _unquote(name[quote:])
        second = _skip(quoted[0], 1) if quoted else None
        if second is not None and len(second) < quote and name.startswith(second) \
                and name[len(second)] in _SPACE:
            return os.fsdecode(second)
        return None
    for length, char in enumerate(name):
        if char in (0x20, 0x09) and _skip(name[length + 1:], 1) == name[:length]:
            return os.fsdecode(name[:length])
    return None


def _find_name(text: bytes, strip: int, stop_at_tab: bool, default: str | None = None) -> str | None:
    quoted = _unquote(text) if text.startswith(b'"') else None
    if quoted is not None:
        unquoted = _skip(quoted[0], strip)
        if unquoted is not None:
            return os.fsdecode(re.sub(rb"/+", b"/", unquoted))
    end = text.find(b"\t") if stop_at_tab else -1
    text = (text[:end] if end >= 0 else text).split(b"\n", 1)[0]
    start = 0 if strip == 0 else None
    for index, char in enumerate(text):
        if char == 0x2F and strip > 0:
            strip -= 1
            start = index + 1 if strip == 0 else start
    if start is None or start == len(text):
        return default
    name = os.fsdecode(re.sub(rb"/+", b"/", text[start:]))
    return default if default is not None and name.startswith(default) and name != default else name


def _guess_p(text: bytes) -> int:
    if _is_null(text):
        return -1
    name = _find_name(text, 0, stop_at_tab=True)
    return 0 if name is not None and "/" not in name else -1


def _is_null(text: bytes) -> bool:
    return text.startswith(b"/dev/null") and text[9:10] in (b" ", b"\t", b"\n", b"\r")


def _is_epoch(text: bytes) -> bool:
    """GNU diff dates a created or deleted file at the epoch (git's has_epoch_timestamp)."""
    found = _EPOCH.match(text.rsplit(b"\t", 1)[1]) if b"\t" in text else None
    if found is None:
        return False
    zone = (int(found[6]) * 60 + int(found[7])) * (-1 if found[5] == b"-" else 1)
    epoch_hour = 24 if found[1] == b"1969-12-31" else 0
    return int(found[2]) * 60 + int(found[3]) - zone == epoch_hour * 60


def _skip(name: bytes | None, strip: int) -> bytes | None:
    """``name`` without its first ``strip`` components; None when it is absolute or too short."""
    if name is None or name.startswith(b"/"):
        return None
    parts = name.split(b"/", strip)
    return parts[strip] if len(parts) > strip else None


def _unquote(text: bytes) -> tuple[bytes, bytes] | None:
    """Git's C-style quoting: the name and what follows its closing quote; None if malformed."""
    out, at = bytearray(), 1
    while at < len(text) and text[at] != 0x22:
        char = text[at]
        if char == 0x5C:
            octal = text[at + 1:at + 4]
            if re.fullmatch(rb"[0-3][0-7][0-7]", octal):
                out.append(int(octal, 8))
                at += 4
                continue
            if text[at + 1:at + 2] == b"" or text[at + 1] not in _ESCAPES:
                return None
            char = _ESCAPES[text[at + 1]]
            at += 1
        out.append(char)
        at += 1
    return (bytes(out), text[at + 1:]) if at < len(text) else None


def _mode(value: bytes, line: int) -> int:
    digits = re.match(rb"[0-7]+(?=[ \t\r\n]|$)", value)
    if digits is None:
        raise PatchError(f"invalid mode on line {line}: {_show(value)}")
    return int(digits[0], 8)


def _show(text: bytes) -> str:
    return text.decode("utf-8", "replace").rstrip("\n")
