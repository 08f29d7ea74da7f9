#!/usr/bin/env python3
"""Check a bed against its escrow: baseline files, the baseline tag and the judging tree.

    python3 -I escrow_verify.py BED ESCROW_SET_DIR [--restore]
    python3 -I escrow_verify.py BED [FIXTURE...] [--restore] [--project NAME] [--escrow-root DIR]

One file, standard library only, Python 3.9 or newer. It reads only the JSON metadata that
``apg escrow`` wrote (ESCROW_SET_DIR/escrow.json), never YAML and never the bed's code. Git never
runs in the bed's own repository, whose config the agent could have written: each git call gets
a private git directory of its own, reads the bed's objects and index as data, ignores system and
user config and may use no transport; refs are read and written by this file. The tag is restored
from the escrowed bundle with `git bundle unbundle`, never `git fetch`. The repository's config,
hooks, info/ and alternates (and what .git itself is) are judged like code.

Every line it prints goes to stderr and starts with a token:

    APG_ESCROW_MISMATCH <file> <change>      a baseline file differs from its escrowed copy
                                             (modified, missing, truncated, replaced, added)
    APG_ESCROW_MISMATCH objects/<sha256> <change>
                                             an object of the whole-bed snapshot (what reset
                                             restores) is not the one escrow copied (modified,
                                             missing, replaced; objects/ itself: missing, replaced)
    APG_ESCROW_MISMATCH tag <tag> <change>   the baseline tag (deleted, moved, recreated, missing)
    APG_TAMPERED <path> <change>             judging code changed (modified, added, removed,
                                             replaced-by-symlink|file|other, retargeted,
                                             made-executable, made-non-executable); always a
                                             failure, never restored
    APG_ESCROW_RESTORED <what>               --restore rewrote a baseline file, an object or the tag
    APG_ESCROW_RESTORE_FAILED <what> <why>   --restore could not repair it
    APG_ESCROW_NONE ...                      no single escrow set matches (selection fails closed)
    APG_ESCROW_SELECTED <dir>                the set chosen from escrow metadata
    APG_ESCROW_UNREADABLE <what> <why>       the escrow itself is missing, changed or unreadable
    APG_ESCROW_WRONG_BED <bed> <recorded>    the set was escrowed for another bed
    APG_ESCROW_DDEV_PLANTED <path>           a .ddev/config.yaml in a bed recorded as embedded
                                             (ignored for the driver; reset removes it)
    APG_USAGE <message>                      bad arguments
    APG_ESCROW_OK <set-key>                  the last line of a successful check

Exit codes: 0 verified; 1 mismatch, tampering or no single set; 2 usage or unreadable escrow.

Without ESCROW_SET_DIR the set is chosen from escrow metadata alone: the sets under the escrow
root (--escrow-root, else $AI_PG_ESCROW_DIR, else ~/.ai-proving-ground-escrow), in the project's
folder when --project is given, that were escrowed for this bed with the same sorted fixture
names (arguments, else $AI_PG_FIXTURES, else kb_docs canvas_home) and, when $AI_PG_BASELINE_REF
is set, that tag. The chosen set's own verifier copy then does the check.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys

# Annotations only (they are never evaluated): importing typing would cost start-up time.
# subprocess is imported where git runs, only when a tag changed (about 7 ms of CPU at every
# verify otherwise, and a campaign verifies twice an attempt).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from typing import Any, Dict, List, Optional, Sequence, Tuple

    Entry = Dict[str, Any]
    Finding = Tuple[str, str]

FORMAT = 1
ESCROW_JSON = "escrow.json"
BUNDLE = "tag.bundle"
BASELINE_SUBDIR = "baseline"
# The whole-bed snapshot's objects (by sha256) in the baseline directory, and their escrowed
# copies, one after another in one file beside the escrowed baseline files.
OBJECTS = "objects"
OBJECTS_PACK = "objects.pack"
VERIFIER = "escrow_verify.py"
DEFAULT_FIXTURES = ("kb_docs", "canvas_home")
# Caches and VCS data never count as judging code.
SKIP_DIRS = frozenset({".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
CHUNK = 1 << 20
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_SCAN_FLAGS = _READ_FLAGS | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in must not block


class EscrowError(Exception):
    """The escrow cannot be used: missing, changed since it was written, or not ours."""


def say(token: str, message: str) -> None:
    sys.stderr.write(f"{token} {message}\n")
    sys.stderr.flush()


def _show(path: str) -> str:
    """A path on one line: names with whitespace or control characters are JSON-quoted."""
    if any(ch.isspace() or not ch.isprintable() for ch in path):
        import json  # only for such a name: see _parse_json

        return json.dumps(path)
    return path


# --- reading JSON -------------------------------------------------------------------------------
# json's own C scanner, without importing json: json.decoder compiles regular expressions at
# import, and importing re (with enum and functools) is about 9 ms of CPU, a fifth of a verify,
# which a campaign pays twice an attempt. The scanner is the one json.loads uses on CPython, so
# what it accepts and builds is the same; elsewhere json itself is used.
try:
    from _json import make_scanner as _make_scanner
except ImportError:  # not CPython
    _make_scanner = None


class _ScannerContext:
    """What json.JSONDecoder() hands its scanner: strict, plain dicts, float, int."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"-Infinity": float("-inf"), "Infinity": float("inf"),
                      "NaN": float("nan")}.__getitem__


_JSON_SPACE = " \t\n\r"


def _parse_json(text: str) -> Any:
    """``json.loads(text)``; malformed text raises ValueError, as json's JSONDecodeError is."""
    if _make_scanner is None:
        import json

        return json.loads(text)
    if text.startswith("\ufeff"):
        raise ValueError("Unexpected UTF-8 BOM (decode using utf-8-sig)")
    start = len(text) - len(text.lstrip(_JSON_SPACE))
    try:
        value, end = _make_scanner(_ScannerContext())(text, start)
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
    if text[end:].strip(_JSON_SPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


# --- hashing ------------------------------------------------------------------------------------


def _hash_fd(fd: int, size: int, limit: Optional[int] = None) -> Tuple[str, int]:
    """sha256 and length of what ``fd`` holds (at most ``limit`` bytes). ``size`` is fstat's size:
    a small file is read in one call, a large one in CHUNK-sized reads, up to end of file."""
    first = min(size + 1, CHUNK) if limit is None else min(size + 1, CHUNK, limit)
    block = os.read(fd, first)
    digest = hashlib.sha256(block)
    done = len(block)
    if done < first:  # a short read: end of file
        return digest.hexdigest(), done
    while limit is None or done < limit:
        block = os.read(fd, CHUNK if limit is None else min(CHUNK, limit - done))
        if not block:
            break
        digest.update(block)
        done += len(block)
    return digest.hexdigest(), done


def hash_path(path: str, limit: Optional[int] = None) -> Tuple[str, int]:
    """sha256 of a regular file, never through a symlink."""
    fd = os.open(path, _READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path} is not a regular file")
        return _hash_fd(fd, st.st_size, limit)
    finally:
        os.close(fd)


# --- the judging tree -----------------------------------------------------------------------------


# Every open below is relative to an open directory (openat) and never follows a symlink: a
# directory swapped for a link mid-scan fails to open instead of leading outside the tree.
_DIR_FLAGS = _READ_FLAGS | getattr(os, "O_DIRECTORY", 0)
_UNREADABLE: Entry = {"kind": "unreadable"}


def _file_entry(name: str, dir_fd: Optional[int]) -> Entry:
    try:
        fd = os.open(name, _SCAN_FLAGS, dir_fd=dir_fd)
    except OSError:
        return _link_or_other(name, dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return {"kind": "other"}
        digest, _size = _hash_fd(fd, st.st_size)
    except OSError:
        return dict(_UNREADABLE)
    finally:
        os.close(fd)
    return {"kind": "file", "sha256": digest, "exec": bool(st.st_mode & 0o111)}


def _link_or_other(name: str, dir_fd: Optional[int]) -> Entry:
    """What a path that could not be opened as a file is, by lstat."""
    try:
        st = os.lstat(name, dir_fd=dir_fd)
        if stat.S_ISLNK(st.st_mode):
            return {"kind": "symlink", "target": os.readlink(name, dir_fd=dir_fd)}
    except OSError:
        return dict(_UNREADABLE)
    return {"kind": "other"} if not stat.S_ISREG(st.st_mode) else dict(_UNREADABLE)


def _scan_dir(dir_fd: int, key: str, out: Dict[str, Entry]) -> None:
    try:
        with os.scandir(dir_fd) as scan:
            entries = list(scan)
    except OSError:
        out[key] = dict(_UNREADABLE)
        return
    for entry in entries:
        name = entry.name
        child = f"{key}/{name}"
        try:
            if entry.is_dir(follow_symlinks=False):
                if name not in SKIP_DIRS:
                    sub = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
                    try:
                        _scan_dir(sub, child, out)
                    finally:
                        os.close(sub)
            elif entry.is_symlink():
                out[child] = {"kind": "symlink", "target": os.readlink(name, dir_fd=dir_fd)}
            elif entry.is_file(follow_symlinks=False):
                out[child] = _file_entry(name, dir_fd)
            else:
                out[child] = {"kind": "other"}
        except OSError:
            out[child] = dict(_UNREADABLE)


def _directory_root(path: str, label: str, out: Dict[str, Entry]) -> bool:
    """True when ``path`` is a real directory to scan; else its entry (a file, a symlink or
    unreadable) is recorded as ``label``, or nothing when it is absent."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError:
        out[label] = dict(_UNREADABLE)
        return False
    if not stat.S_ISDIR(st.st_mode):
        out[label] = _file_entry(path, None)
        return False
    return True


def _scan_folder(name: str, key: str, out: Dict[str, Entry],
                 dir_fd: Optional[int] = None) -> None:
    """Open the folder ``name`` (relative to ``dir_fd`` when given) without following a link and
    scan it as ``key``; a folder that cannot be opened is recorded unreadable."""
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError:
        out[key] = dict(_UNREADABLE)
        return
    try:
        _scan_dir(fd, key, out)
    finally:
        os.close(fd)


def scan_root(path: str, label: str, out: Dict[str, Entry]) -> None:
    """Add every file and symlink under ``path`` as ``label/<relative path>``; a root that is
    itself a file or a symlink is the single entry ``label``; an absent root adds nothing."""
    if _directory_root(path, label, out):
        _scan_folder(path, label, out)


def scan_parts(path: str, label: str, parts: Sequence[str], out: Dict[str, Entry]) -> None:
    """The root's own kind as ``label`` ({"kind": "dir"} when it is a real directory), then only
    the named ``parts`` below it (files or folders, scanned whole), never through a symlink: a
    repository's config and hooks are judged, its objects and index are not."""
    if not _directory_root(path, label, out):
        return
    out[label] = {"kind": "dir"}
    for part in parts:
        steps = part.split("/")
        try:
            fd = os.open(path, _DIR_FLAGS)
        except OSError:
            out[label] = dict(_UNREADABLE)
            return
        try:
            key = label
            for step in steps[:-1]:
                key = f"{key}/{step}"
                try:
                    child = os.open(step, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    break
                except OSError:  # a symlink or a file where a folder belongs
                    out[key] = _link_or_other(step, fd)
                    break
                os.close(fd)
                fd = child
            else:
                _scan_one(steps[-1], f"{key}/{steps[-1]}", fd, out)
        finally:
            os.close(fd)


def _scan_one(name: str, key: str, dir_fd: int, out: Dict[str, Entry]) -> None:
    try:
        st = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return
    except OSError:
        out[key] = dict(_UNREADABLE)
        return
    if stat.S_ISDIR(st.st_mode):
        _scan_folder(name, key, out, dir_fd)
    elif stat.S_ISLNK(st.st_mode):
        out[key] = {"kind": "symlink", "target": os.readlink(name, dir_fd=dir_fd)}
    elif stat.S_ISREG(st.st_mode):
        out[key] = _file_entry(name, dir_fd)
    else:
        out[key] = {"kind": "other"}


def scan_tree(roots: Sequence[Entry]) -> Dict[str, Entry]:
    """label-prefixed path -> entry for every judged file: the form escrow.json records. A root
    with ``only`` is judged in those parts alone (see :func:`scan_parts`)."""
    out: Dict[str, Entry] = {}
    for root in roots:
        if root.get("only") is not None:
            scan_parts(str(root["path"]), str(root["label"]), list(root["only"]), out)
        else:
            scan_root(str(root["path"]), str(root["label"]), out)
    return out


def compare_tree(recorded: Dict[str, Entry], live: Dict[str, Entry]) -> List[Finding]:
    """(path, change) for every difference, sorted by path."""
    found: List[Finding] = []
    if recorded == live:  # the usual case, decided in one C-level comparison
        return found
    for key in sorted(set(recorded) | set(live)):
        was, now = recorded.get(key), live.get(key)
        if was == now:
            continue
        if was is None:
            found.append((key, "added"))
        elif now is None:
            found.append((key, "removed"))
        elif was.get("kind") != now.get("kind"):
            found.append((key, f"replaced-by-{now.get('kind')}"))
        elif now.get("kind") == "symlink":
            if was.get("target") != now.get("target"):
                found.append((key, "retargeted"))
        elif now.get("kind") == "file":
            if was.get("sha256") != now.get("sha256"):
                found.append((key, "modified"))
            if was.get("exec") != now.get("exec"):
                found.append((key, "made-executable" if now.get("exec") else "made-non-executable"))
    return found


# --- git, never in the bed's own repository -------------------------------------------------------
#
# The bed's .git is the agent's to write, and git has no switch to ignore a repository's own
# config: url.<x>.insteadOf onto ext:: with protocol.ext.allow, core.fsmonitor, filter and diff
# drivers, hooks, signing programs and editors each make git run a command the agent chose. So
# git never runs in the bed's repository. Every call gets a private git directory made for it
# (a config of ours, no hooks, no info/), reads the bed's objects and index as data
# (GIT_OBJECT_DIRECTORY, GIT_INDEX_FILE) with the bed as its work tree, and the bed's refs are read
# and written here, in Python. System and user config are never read, and no transport is
# allowed: GIT_ALLOW_PROTOCOL set to nothing overrides every protocol.<name>.allow. The tag is
# restored from the escrowed bundle by `git bundle unbundle` (objects in, no transport) and a ref
# written here; `git fetch` is never used.

# Belt and braces on top of the private config (which sets none of these), and the whole of the
# defence when the product runs git in a repository it has just made itself: every setting that
# names a program, or starts background work, that this code knows of.
GIT_SAFETY = tuple(arg for setting in (
    "core.hooksPath=/dev/null", "core.fsmonitor=false", "core.untrackedCache=false",
    "core.sshCommand=false", "core.askPass=false", "core.editor=false", "sequence.editor=false",
    "core.pager=cat", "core.attributesFile=/dev/null", "credential.helper=",
    "gpg.program=false", "gpg.openpgp.program=false", "gpg.x509.program=false",
    "gpg.ssh.program=false", "gpg.ssh.defaultKeyCommand=false", "tag.gpgSign=false",
    "tag.forceSignAnnotated=false", "commit.gpgSign=false", "push.gpgSign=false",
    "diff.external=", "protocol.allow=never", "gc.auto=0", "maintenance.auto=false",
    "fetch.recurseSubmodules=false", "submodule.recurse=false", "fetch.writeCommitGraph=false",
) for arg in ("-c", setting))

# What git reads from the environment that could run something or change what it reads; the
# caller's GIT_* are never passed on (they could name another repository, config or index).
_GIT_FIXED_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
    "GIT_ALLOW_PROTOCOL": "", "GIT_PROTOCOL_FROM_USER": "0", "GIT_TERMINAL_PROMPT": "0",
    "GIT_NO_REPLACE_OBJECTS": "1", "GIT_OPTIONAL_LOCKS": "0", "GIT_PAGER": "cat", "PAGER": "cat",
    "GIT_EDITOR": "false", "GIT_SEQUENCE_EDITOR": "false", "GIT_ASKPASS": "false",
    "SSH_ASKPASS": "false", "GIT_SSH_COMMAND": "false", "LC_ALL": "C", "LANG": "C",
}

# The parts of a repository that steer git or name other object stores: judging state for the
# escrow (a change is APG_TAMPERED), relative to <bed>/.git.
GIT_JUDGED = ("config", "config.worktree", "commondir", "hooks", "info",
              "objects/info/alternates", "objects/info/http-alternates")

_HEX = frozenset("0123456789abcdef")


class GitDirError(Exception):
    """The bed's repository cannot be read without running git in it."""


def hardened_env(home: str, path: Optional[str] = None) -> Dict[str, str]:
    """The whole environment of a git this code runs: PATH, a HOME with no config in it, and
    the fixed settings above; nothing else of the caller's."""
    env = {"PATH": os.environ.get("PATH", os.defpath) if path is None else path, "HOME": home}
    env.update(_GIT_FIXED_ENV)
    return env


def git_dir_of(bed: str) -> str:
    """<bed>/.git, when it is a real directory of a repository whose refs are files; else
    GitDirError. A symlink or a gitfile there could point anywhere the agent chose."""
    path = os.path.join(os.path.abspath(bed), ".git")
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise GitDirError(f".git cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise GitDirError(".git is a symlink")
    if not stat.S_ISDIR(st.st_mode):
        raise GitDirError(".git is not a directory (a worktree or submodule link)")
    for name, why in (("commondir", "borrows another repository (commondir)"),
                      ("reftable", "keeps its refs in a reftable")):
        if os.path.lexists(os.path.join(path, name)):
            raise GitDirError(f".git {why}, which cannot be read without running git in it")
    for name in ("objects", "refs"):
        try:
            if not stat.S_ISDIR(os.lstat(os.path.join(path, name)).st_mode):
                raise GitDirError(f".git/{name} is not a directory")
        except OSError as exc:
            raise GitDirError(f".git/{name} cannot be read: {exc.strerror or exc}") from None
    return path


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and set(text) <= _HEX


def _open_steps(git_dir: str, parts: Sequence[str]) -> Optional[int]:
    """An open descriptor of git_dir/parts..., each step a real directory; None when a step is
    missing. A step that is a symlink or a file raises GitDirError."""
    fd = os.open(git_dir, _DIR_FLAGS)
    for part in parts:
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            os.close(fd)
            return None
        except OSError:
            os.close(fd)
            raise GitDirError(f"{part} in .git is not a real directory") from None
        os.close(fd)
        fd = child
    return fd


def _read_small(name: str, dir_fd: int) -> Optional[str]:
    try:
        fd = os.open(name, _SCAN_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError:
        raise GitDirError(f"{name} in .git is not a regular file") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise GitDirError(f"{name} in .git is not a regular file")
        return os.read(fd, 1 << 16).decode("utf-8", "replace")
    finally:
        os.close(fd)


def read_ref(git_dir: str, ref: str, depth: int = 0) -> Optional[str]:
    """The object id ``ref`` names (a loose ref first, then packed-refs), following symbolic
    refs (HEAD) a few levels; None when the ref does not exist. Read here, never by git."""
    parts = ref.split("/")
    if depth > 4 or any(part in ("", ".", "..") for part in parts):
        raise GitDirError(f"{ref} is not a ref name")
    fd = _open_steps(git_dir, parts[:-1])
    value = None
    if fd is not None:
        try:
            value = _read_small(parts[-1], fd)
        finally:
            os.close(fd)
    if value is not None:
        value = value.strip()
        if value.startswith("ref: "):
            return read_ref(git_dir, value[5:].strip(), depth + 1)
        if not _is_oid(value):
            raise GitDirError(f"{ref} holds no object id")
        return value
    fd = os.open(git_dir, _DIR_FLAGS)
    try:
        packed = _read_packed(fd)
    finally:
        os.close(fd)
    return packed.get(ref)


def _read_packed(dir_fd: int) -> Dict[str, str]:
    try:
        fd = os.open("packed-refs", _SCAN_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return {}
    except OSError:
        raise GitDirError("packed-refs in .git is not a regular file") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise GitDirError("packed-refs in .git is not a regular file")
        chunks = []
        while True:
            block = os.read(fd, CHUNK)
            if not block:
                break
            chunks.append(block)
    finally:
        os.close(fd)
    refs: Dict[str, str] = {}
    for line in b"".join(chunks).decode("utf-8", "surrogateescape").splitlines():
        oid, _space, name = line.partition(" ")
        if _is_oid(oid) and name:
            refs[name] = oid
    return refs


def write_ref(git_dir: str, ref: str, oid: str) -> None:
    """Point ``ref`` at ``oid`` as a loose ref (it wins over packed-refs), written new-then-rename.
    Whatever is on the way that is not a real directory is the agent's, and is removed."""
    import tempfile

    parts = ref.split("/")
    if not _is_oid(oid) or any(part in ("", ".", "..") for part in parts):
        raise GitDirError(f"refusing to write {ref} -> {oid}")
    current = git_dir
    for part in parts[:-1]:
        current = os.path.join(current, part)
        if os.path.islink(current) or (os.path.lexists(current) and not os.path.isdir(current)):
            os.unlink(current)
        if not os.path.isdir(current):
            os.mkdir(current)
    target = os.path.join(current, parts[-1])
    fd, tmp = tempfile.mkstemp(prefix=f".{parts[-1]}.", suffix=".apg-ref", dir=current)
    try:
        os.write(fd, f"{oid}\n".encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    if os.path.isdir(target) and not os.path.islink(target):
        _remove(target)
    os.replace(tmp, target)


def head_commit(bed: str) -> Optional[str]:
    """The object id the bed's HEAD names; None on an unborn branch."""
    return read_ref(git_dir_of(bed), "HEAD")


def _private_git_dir(head: Optional[str]) -> str:
    """A git directory of our own for one call: our config, no hooks, HEAD at ``head``."""
    import tempfile

    path = tempfile.mkdtemp(prefix="apg-git-")
    os.mkdir(os.path.join(path, "refs"))
    fmt = "sha256" if head is not None and len(head) == 64 else "sha1"
    with open(os.path.join(path, "HEAD"), "w", encoding="ascii") as handle:
        handle.write(f"{head}\n" if head else "ref: refs/heads/apg-private\n")
    with open(os.path.join(path, "config"), "w", encoding="ascii") as handle:
        handle.write("[core]\n\trepositoryformatversion = 1\n\tbare = false\n"
                     f"[extensions]\n\tobjectformat = {fmt}\n")
    return path


def _git_exe() -> str:
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", "git")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return "git"


def run_git(bed: str, args: Sequence[str], input_bytes: Optional[bytes] = None,
            head: Optional[str] = None,
            refs: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess[bytes]:
    """git ``args`` on the bed's work tree, index and objects, in a private git directory whose
    HEAD is ``head`` and which holds ``refs`` (name -> object id). GitDirError when the bed's
    .git is not one this code can use; OSError when git cannot run."""
    import shutil
    import subprocess  # here, not at the top: start-up time (see the imports)

    bed = os.path.abspath(bed)
    git_dir = git_dir_of(bed)
    private = _private_git_dir(head)
    try:
        for name, oid in (refs or {}).items():
            write_ref(private, name, oid)
        env = hardened_env(private)
        env.update({"GIT_DIR": private, "GIT_WORK_TREE": bed,
                    "GIT_OBJECT_DIRECTORY": os.path.join(git_dir, "objects"),
                    "GIT_INDEX_FILE": os.path.join(git_dir, "index")})
        command = [_git_exe(), "--no-pager", "-C", bed, *GIT_SAFETY]
        # The bed's own exclude file is data (ignore patterns), read as the user's would be.
        exclude = os.path.join(git_dir, "info", "exclude")
        if os.path.isfile(exclude) and not os.path.islink(exclude):
            command += ["-c", f"core.excludesFile={exclude}"]
        return subprocess.run(command + list(args), env=env, input=input_bytes,
                              capture_output=True, check=False,
                              stdin=None if input_bytes is not None else subprocess.DEVNULL)
    finally:
        shutil.rmtree(private, ignore_errors=True)


def git_failure(done: subprocess.CompletedProcess[bytes]) -> str:
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"git exit {done.returncode}"


def object_types(bed: str, names: Sequence[str]) -> List[Tuple[str, str]]:
    """(object id, type) for each object name (``<oid>^{commit}`` peels), ("", "missing") for one
    the bed's objects lack: one ``git cat-file --batch-check``."""
    done = run_git(bed, ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
                   input_bytes="".join(f"{name}\n" for name in names).encode())
    if done.returncode != 0:
        raise OSError(git_failure(done))
    found: List[Tuple[str, str]] = []
    for line in done.stdout.decode(errors="replace").splitlines()[:len(names)]:
        oid, _space, kind = line.partition(" ")
        found.append((oid, kind) if kind != "missing" and _is_oid(oid) else ("", "missing"))
    return found


def read_tag(bed: str, tag: str, recorded: Optional[Entry] = None) -> Entry:
    """{"state": "present", "object", "type", "commit"} | {"state": "deleted"} |
    {"state": "unreadable", "detail"}. When the ref still names the ``recorded`` object, that
    record is the answer and no git runs."""
    ref = f"refs/tags/{tag}"
    try:
        oid = read_ref(git_dir_of(bed), ref)
        if oid is None:
            return {"state": "deleted"}
        if recorded is not None and recorded.get("object") == oid:
            return dict(recorded)
        (obj, kind), (peeled, peeled_kind) = object_types(bed, [oid, f"{oid}^{{commit}}"])
    except (GitDirError, OSError, ValueError) as exc:
        return {"state": "unreadable", "detail": str(exc)}
    if kind == "commit":
        return {"state": "present", "object": obj, "type": kind, "commit": obj}
    if kind == "tag" and peeled_kind == "commit":
        return {"state": "present", "object": obj, "type": kind, "commit": peeled}
    return {"state": "unreadable", "detail": f"{ref} names a {kind} object, not a commit"}


def tag_change(recorded: Entry, live: Entry) -> Optional[str]:
    """deleted | missing (unreadable) | moved (another commit) | recreated (same commit, another
    tag object) | None when the tag is as escrowed."""
    if live["state"] == "deleted":
        return "deleted"
    if live["state"] != "present":
        return "missing"
    if live["commit"] != recorded["commit"]:
        return "moved"
    if live["object"] != recorded["object"] or live["type"] != recorded["type"]:
        return "recreated"
    return None


# --- the escrow ---------------------------------------------------------------------------------


def _missing_keys(data: Any, keys: Sequence[str]) -> List[str]:
    if not isinstance(data, dict):
        return list(keys)
    return [key for key in keys if key not in data]


def load_escrow(set_dir: str) -> Entry:
    path = os.path.join(set_dir, ESCROW_JSON)
    try:
        with open(path, encoding="utf-8") as handle:
            data = _parse_json(handle.read())
    except (OSError, ValueError) as exc:
        raise EscrowError(f"{path} cannot be read: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise EscrowError(f"{path} is not escrow metadata of format {FORMAT}")
    missing = _missing_keys(data, ("set_key", "approot", "approot_real", "fixtures", "escrowed",
                                   "baseline", "judging"))
    if not missing:
        missing = [f"baseline.{key}" for key in _missing_keys(
            data["baseline"], ("dir", "label", "tag", "tag_state", "files"))]
        missing += [f"judging.{key}" for key in _missing_keys(data["judging"], ("roots", "files"))]
    if missing:
        raise EscrowError(f"{path} lacks {', '.join(missing)}")
    return data


def check_escrow_files(set_dir: str, escrow: Entry) -> None:
    """Every escrowed file still has the sha256 escrow recorded for it."""
    for relative, expected in sorted(escrow["escrowed"].items()):
        path = os.path.join(set_dir, relative)
        try:
            found, _size = hash_path(path)
        except OSError as exc:
            raise EscrowError(f"{_show(relative)} cannot be read: {exc}") from None
        if found != expected:
            raise EscrowError(f"{_show(relative)} changed since escrow: sha256 {found}, recorded {expected}")


# --- baseline files -----------------------------------------------------------------------------


def bad_step(escrow: Entry) -> Optional[str]:
    """The first folder on the way to the baseline directory (from the bed, when it lies inside
    it) that is not a real directory: a symlink there would redirect every baseline file."""
    baseline = escrow["baseline"]
    relative = baseline.get("relative")
    steps: List[str]
    if relative:
        parts = str(relative).split("/")
        steps = [os.path.join(str(escrow["approot_real"]), *parts[:depth])
                 for depth in range(1, len(parts) + 1)]
    else:
        steps = [str(baseline["dir"])]
    for step in steps:
        try:
            st = os.lstat(step)
        except FileNotFoundError:
            return None
        except OSError:
            return step
        if not stat.S_ISDIR(st.st_mode):
            return step
    return None


def _is_prefix(copy: str, path: str, size: int) -> bool:
    try:
        live, _ = hash_path(path)
        head, _ = hash_path(copy, limit=size)
    except OSError:
        return False
    return live == head


def check_baseline(set_dir: str, escrow: Entry) -> List[Finding]:
    """(file, change) for every baseline file that differs from its escrowed copy."""
    baseline = escrow["baseline"]
    if bad_step(escrow) is not None:
        return [(baseline["label"], "replaced")]
    found: List[Finding] = []
    for name, record in sorted(baseline["files"].items()):
        path = os.path.join(baseline["dir"], name)
        if record.get("absent"):
            if os.path.lexists(path):
                found.append((name, "added"))
            continue
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            found.append((name, "missing"))
            continue
        except OSError:
            found.append((name, "replaced"))
            continue
        if not stat.S_ISREG(st.st_mode):
            found.append((name, "replaced"))
            continue
        if st.st_size == record["size"]:
            try:
                if hash_path(path)[0] == record["sha256"]:
                    continue
            except OSError:
                found.append((name, "replaced"))
                continue
        copy = os.path.join(set_dir, BASELINE_SUBDIR, name)
        if st.st_size < record["size"] and _is_prefix(copy, path, st.st_size):
            found.append((name, "truncated"))
        elif st.st_ino != record.get("inode"):
            found.append((name, "replaced"))
        else:
            found.append((name, "modified"))
    return found


def _object_intact(path: str, sha: str, record: Entry) -> Optional[str]:
    """None when the object at ``path`` is as escrow recorded it, else its change. An ``lstat``
    equal to the recorded identity (inode, size, mtime, ctime) needs no read: every write moves
    ctime, which only CAP_SYS_TIME could set back; otherwise the bytes must hash to the name."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "replaced"
    if not stat.S_ISREG(st.st_mode):
        return "replaced"
    if (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (
            record.get("inode"), record.get("size"), record.get("mtime_ns"), record.get("ctime_ns")):
        return None
    try:
        same = st.st_size == record.get("size") and hash_path(path)[0] == sha
    except OSError:
        return "replaced"
    return None if same else "modified"


def check_objects(escrow: Entry) -> List[Finding]:
    """(``objects/<sha256>``, change) for every object of the whole-bed snapshot that is not the
    one escrow copied; an escrow made before objects were escrowed records none."""
    baseline = escrow["baseline"]
    recorded = baseline.get("objects") or {}
    if not recorded:
        return []
    folder = os.path.join(baseline["dir"], OBJECTS)
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return [(OBJECTS + "/", "replaced")]
    except FileNotFoundError:
        return [(OBJECTS + "/", "missing")]
    except OSError:
        return [(OBJECTS + "/", "replaced")]
    found: List[Finding] = []
    for sha, record in sorted(recorded.items()):
        change = _object_intact(os.path.join(folder, sha), sha, record)
        if change is not None:
            found.append((f"{OBJECTS}/{sha}", change))
    return found


def check_tag(escrow: Entry, bed: str, live: Optional[Entry] = None) -> List[Finding]:
    baseline = escrow["baseline"]
    if live is None:
        live = read_tag(bed, baseline["tag"], baseline["tag_state"])
    change = tag_change(baseline["tag_state"], live)
    return [(f"tag {_show(baseline['tag'])}", change)] if change else []


# --- restore ------------------------------------------------------------------------------------


def _remove(path: str) -> None:
    import shutil

    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def _copy_verified(source: str, directory: str, name: str, record: Entry) -> None:
    """Write the escrowed copy beside the destination, check it, then rename it into place."""
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".restore", dir=directory)
    try:
        digest = hashlib.sha256()
        src = os.open(source, _READ_FLAGS)
        try:
            while True:
                block = os.read(src, CHUNK)
                if not block:
                    break
                digest.update(block)
                view = memoryview(block)
                while view:
                    view = view[os.write(fd, view):]
        finally:
            os.close(src)
        if digest.hexdigest() != record["sha256"]:
            raise OSError(f"escrowed copy of {name} changed while it was read")
        os.fchmod(fd, int(record.get("mode", 0o600)))
        os.fsync(fd)
        os.close(fd)
        fd = -1
        destination = os.path.join(directory, name)
        if os.path.isdir(destination) and not os.path.islink(destination):
            _remove(destination)
        os.replace(tmp, destination)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def restore_baseline(set_dir: str, escrow: Entry, found: List[Finding]) -> None:
    baseline = escrow["baseline"]
    directory = baseline["dir"]
    names = [name for name, _change in found]
    if baseline["label"] in names:  # a folder on the way: make it a real directory again
        try:
            step = bad_step(escrow)
            while step is not None:
                _remove(step)
                step = bad_step(escrow)
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            say("APG_ESCROW_RESTORE_FAILED", f"{_show(baseline['label'])} {exc}")
            return
        names = [name for name, record in baseline["files"].items() if not record.get("absent")]
    else:
        os.makedirs(directory, exist_ok=True)
    for name in sorted(names):
        record = baseline["files"][name]
        try:
            if record.get("absent"):
                _remove(os.path.join(directory, name))
            else:
                _copy_verified(os.path.join(set_dir, BASELINE_SUBDIR, name), directory, name, record)
        except OSError as exc:
            say("APG_ESCROW_RESTORE_FAILED", f"{_show(name)} {exc}")
            continue
        say("APG_ESCROW_RESTORED", _show(name))


def restore_objects(set_dir: str, escrow: Entry, found: List[Finding]) -> None:
    """Put each object ``found`` back from the escrowed pack (checked by its name); a folder
    that is not one is made a real folder again, and every object written back into it."""
    import tempfile

    baseline = escrow["baseline"]
    folder = os.path.join(baseline["dir"], OBJECTS)
    names = [name for name, _change in found]
    try:
        if OBJECTS + "/" in names:
            _remove(folder)
            names = [f"{OBJECTS}/{sha}" for sha in sorted(baseline["objects"])]
        os.makedirs(folder, exist_ok=True)
        pack = os.open(os.path.join(set_dir, BASELINE_SUBDIR, OBJECTS_PACK), _READ_FLAGS)
    except OSError as exc:
        say("APG_ESCROW_RESTORE_FAILED", f"{OBJECTS}/ {exc}")
        return
    try:
        for name in names:
            sha = name.split("/", 1)[1]
            record = baseline["objects"][sha]
            try:
                data = os.pread(pack, int(record["size"]), int(record["offset"]))
                if hashlib.sha256(data).hexdigest() != sha:
                    raise OSError("its escrowed copy does not match its name")
                fd, tmp = tempfile.mkstemp(prefix=f".{sha[:12]}.", suffix=".restore", dir=folder)
                try:
                    with os.fdopen(fd, "wb") as handle:
                        handle.write(data)
                        os.fchmod(handle.fileno(), int(record.get("mode", 0o600)))
                        os.fsync(handle.fileno())
                    destination = os.path.join(folder, sha)
                    if os.path.isdir(destination) and not os.path.islink(destination):
                        _remove(destination)
                    os.replace(tmp, destination)
                finally:
                    if os.path.lexists(tmp):
                        os.unlink(tmp)
            except OSError as exc:
                say("APG_ESCROW_RESTORE_FAILED", f"{_show(name)} {exc}")
                continue
            say("APG_ESCROW_RESTORED", _show(name))
    finally:
        os.close(pack)


def restore_tag(set_dir: str, escrow: Entry, bed: str) -> None:
    """Point the tag at its escrowed object again: the bundle's objects are read into the bed's
    object store when it lacks them (``git bundle unbundle``: no transport, no fetch), then the
    ref is written here. Nothing of the bed's repository config is read."""
    tag = escrow["baseline"]["tag"]
    ref = f"refs/tags/{tag}"
    wanted = escrow["baseline"]["tag_state"]["object"]
    try:
        git_dir = git_dir_of(bed)
        if object_types(bed, [wanted])[0][0] != wanted:
            done = run_git(bed, ["bundle", "unbundle", os.path.join(set_dir, BUNDLE)])
            if done.returncode != 0:
                raise OSError(git_failure(done))
            listed = done.stdout.decode(errors="replace").split()
            if wanted not in listed or object_types(bed, [wanted])[0][0] != wanted:
                raise OSError(f"the escrowed bundle does not hold {wanted}")
        write_ref(git_dir, ref, wanted)
    except (GitDirError, OSError) as exc:
        say("APG_ESCROW_RESTORE_FAILED", f"tag {_show(tag)} {exc}")
        return
    say("APG_ESCROW_RESTORED", f"tag {_show(tag)}")


# --- the check ----------------------------------------------------------------------------------


def report_mismatches(files: List[Finding], tag: List[Finding]) -> None:
    for name, change in files:
        say("APG_ESCROW_MISMATCH", f"{_show(name)} {change}")
    for what, change in tag:  # already "tag <name>"
        say("APG_ESCROW_MISMATCH", f"{what} {change}")


def planted_ddev_config(bed: str) -> Optional[str]:
    """``.ddev/config.yaml`` when the bed's own record names the embedded driver, else None."""
    config = os.path.join(bed, ".ddev", "config.yaml")
    if not os.path.lexists(config):
        return None
    try:
        fd = os.open(os.path.join(bed, ".ai-proving-ground", "bed.json"),
                     os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, encoding="utf-8") as handle:
            record = _parse_json(handle.read())
    except (OSError, ValueError):
        return None
    return config if isinstance(record, dict) and record.get("driver") == "sqlite" else None


def verify(bed: str, set_dir: str, restore: bool) -> int:
    try:
        escrow = load_escrow(set_dir)
        check_escrow_files(set_dir, escrow)
    except EscrowError as exc:
        say("APG_ESCROW_UNREADABLE", str(exc))
        return 2
    if os.path.realpath(bed) != escrow["approot_real"]:
        say("APG_ESCROW_WRONG_BED", f"{_show(os.path.realpath(bed))} is not the bed this set was "
            f"escrowed for: {_show(escrow['approot_real'])}")
        return 2
    mismatches = check_baseline(set_dir, escrow)
    objects = check_objects(escrow)
    live = scan_tree(escrow["judging"]["roots"])
    tag = check_tag(escrow, bed)
    report_mismatches(mismatches + objects, tag)
    tampered = compare_tree(escrow["judging"]["files"], live)
    for path, change in tampered:
        say("APG_TAMPERED", f"{_show(path)} {change}")
    planted = planted_ddev_config(bed)
    if planted:
        say("APG_ESCROW_DDEV_PLANTED", f"{_show(planted)} is in a bed recorded as embedded "
            "(.ai-proving-ground/bed.json): ignored for the driver choice; apg reset removes it")
    if restore and (mismatches or objects or tag):
        if mismatches:
            restore_baseline(set_dir, escrow, mismatches)
            objects = check_objects(escrow)  # a baseline directory made real again has none
        if objects:
            restore_objects(set_dir, escrow, objects)
        if tag:
            restore_tag(set_dir, escrow, bed)
        mismatches, objects = check_baseline(set_dir, escrow), check_objects(escrow)
        tag = check_tag(escrow, bed)
        report_mismatches(mismatches + objects, tag)
    if mismatches or objects or tag or tampered:
        return 1
    say("APG_ESCROW_OK", str(escrow["set_key"]))
    return 0


# --- choosing a set -----------------------------------------------------------------------------


def escrow_root(argument: Optional[str]) -> str:
    raw = argument or os.environ.get("AI_PG_ESCROW_DIR") or "~/.ai-proving-ground-escrow"
    return os.path.abspath(os.path.expanduser(raw))


def requested_names(arguments: Sequence[str]) -> List[str]:
    if arguments:
        return sorted(set(arguments))
    from_env = os.environ.get("AI_PG_FIXTURES", "").replace(",", " ").split()
    return sorted(set(from_env or DEFAULT_FIXTURES))


def _subdirs(path: str) -> List[str]:
    try:
        with os.scandir(path) as scan:
            return sorted(e.path for e in scan if not e.name.startswith(".") and e.is_dir())
    except OSError:
        return []


def find_sets(root: str, project: Optional[str], bed: str, names: Sequence[str],
              ref: Optional[str]) -> Tuple[List[Entry], List[Entry]]:
    """(matching sets, the other sets escrowed for this bed), each {"dir", "escrow"}."""
    projects = [os.path.join(root, project)] if project else _subdirs(root)
    bed_real = os.path.realpath(bed)
    matches: List[Entry] = []
    others: List[Entry] = []
    for project_dir in projects:
        for set_dir in _subdirs(project_dir):
            try:
                escrow = load_escrow(set_dir)
            except EscrowError:
                continue
            if escrow["approot_real"] != bed_real:
                continue
            same = sorted(escrow["fixtures"]) == list(names) and (
                ref is None or escrow["baseline"]["tag"] == ref)
            (matches if same else others).append({"dir": set_dir, "escrow": escrow})
    return matches, others


def describe(candidate: Entry) -> str:
    escrow = candidate["escrow"]
    return (f"{_show(candidate['dir'])} (set {escrow['set_key']}, fixtures "
            f"{' '.join(escrow['fixtures'])}, tag {escrow['baseline']['tag']})")


def report_none(root: str, bed: str, names: Sequence[str], ref: Optional[str],
                matches: List[Entry], others: List[Entry]) -> None:
    wanted = f"fixtures {' '.join(names)}" + (f" and tag {ref}" if ref else "")
    if matches:
        say("APG_ESCROW_NONE", f"{len(matches)} escrow sets under {_show(root)} match {wanted} for "
            f"{_show(bed)}; pass the set directory explicitly. Candidates:")
        listed = matches
    else:
        say("APG_ESCROW_NONE", f"no escrow set under {_show(root)} matches {wanted} for "
            f"{_show(bed)}; run apg escrow first" + ("; other sets for this bed:" if others else ""))
        listed = others
    for candidate in listed:
        sys.stderr.write(f"  {describe(candidate)}\n")


# --- command line -------------------------------------------------------------------------------


USAGE = ("usage: escrow_verify.py BED [ESCROW_SET_DIR | FIXTURE...] [--restore] "
         "[--project NAME] [--escrow-root DIR]\n")


class UsageError(Exception):
    """Bad arguments."""


class Arguments:
    def __init__(self) -> None:
        self.positional: List[str] = []
        self.restore = False
        self.project: Optional[str] = None
        self.escrow_root: Optional[str] = None
        self.help = False


def parse_args(argv: Sequence[str]) -> Arguments:
    """BED, then a set directory or fixture names; --restore, --project NAME, --escrow-root DIR
    (also as --option=value); ``--`` ends the options."""
    args = Arguments()
    items = list(argv)
    options_done = False
    while items:
        item = items.pop(0)
        if options_done or not item.startswith("-") or item == "-":
            args.positional.append(item)
        elif item == "--":
            options_done = True
        elif item in {"-h", "--help"}:
            args.help = True
        elif item == "--restore":
            args.restore = True
        elif item.split("=", 1)[0] in {"--project", "--escrow-root"}:
            name, has_value, value = item.partition("=")
            if not has_value:
                if not items:
                    raise UsageError(f"{name} needs a value")
                value = items.pop(0)
            setattr(args, name[2:].replace("-", "_"), value)
        else:
            raise UsageError(f"unknown option {item}")
    if not args.help and not args.positional:
        raise UsageError("BED is required")
    return args


def _is_set_dir(argument: str) -> bool:
    return os.path.isfile(os.path.join(argument, ESCROW_JSON))


def _is_fixture_name(argument: str) -> bool:
    return bool(argument) and argument[0].isalpha() and argument.replace("_", "").isalnum()


def _usage_error(message: str) -> int:
    sys.stderr.write(USAGE)
    say("APG_USAGE", message)
    return 2


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        return _usage_error(str(exc))
    if args.help:
        sys.stdout.write(USAGE + (__doc__ or ""))
        return 0
    bed, rest = args.positional[0], args.positional[1:]
    if not os.path.isdir(bed):
        return _usage_error(f"bed {bed!r} is not a directory")
    if len(rest) == 1 and _is_set_dir(rest[0]):
        return verify(bed, os.path.abspath(rest[0]), args.restore)
    bad = [arg for arg in rest if not _is_fixture_name(arg)]
    if bad:
        return _usage_error(f"{bad[0]!r} is neither an escrow set directory (holding {ESCROW_JSON}) "
                            "nor a fixture name; pass one set directory or fixture names")
    if args.project is not None and (not args.project or "/" in args.project
                                     or args.project in {".", ".."}):
        return _usage_error(f"--project {args.project!r} must be a single folder name")
    root = escrow_root(args.escrow_root)
    names = requested_names(rest)
    ref = os.environ.get("AI_PG_BASELINE_REF") or None
    matches, others = find_sets(root, args.project, bed, names, ref)
    if len(matches) != 1:
        report_none(root, bed, names, ref, matches, others)
        return 1
    chosen = matches[0]["dir"]
    say("APG_ESCROW_SELECTED", _show(chosen))
    copy = os.path.join(chosen, VERIFIER)
    if os.path.realpath(copy) == os.path.realpath(__file__):
        return verify(bed, chosen, args.restore)
    # The chosen set's own copy judges; an unreadable copy fails like any other escrow file.
    if not os.path.isfile(copy):
        say("APG_ESCROW_UNREADABLE", f"{_show(copy)} is missing")
        return 2
    command = [sys.executable, "-I", copy, bed, chosen] + (["--restore"] if args.restore else [])
    import subprocess  # here, not at the top: start-up time (see the imports)

    return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
