#!/usr/bin/env python3
"""Check a bed against its escrow: baseline files, the baseline tag and the judging tree.

    python3 -I escrow_verify.py BED ESCROW_SET_DIR [--restore]
    python3 -I escrow_verify.py BED [FIXTURE...] [--restore] [--project NAME] [--escrow-root DIR]

One file, standard library only, Python 3.9 or newer. It reads only the JSON metadata that
``apg escrow`` wrote (ESCROW_SET_DIR/escrow.json), never YAML and never the bed's code, and it
runs git with hooks disabled and without the caller's GIT_* variables.

Every line it prints goes to stderr and starts with a token:

    APG_ESCROW_MISMATCH <file> <change>      a baseline file differs from its escrowed copy
                                             (modified, missing, truncated, replaced, added)
    APG_ESCROW_MISMATCH tag <tag> <change>   the baseline tag (deleted, moved, recreated, missing)
    APG_TAMPERED <path> <change>             judging code changed (modified, added, removed,
                                             replaced-by-symlink|file|other, retargeted,
                                             made-executable, made-non-executable); always a
                                             failure, never restored
    APG_ESCROW_RESTORED <what>               --restore rewrote a baseline file or the tag
    APG_ESCROW_RESTORE_FAILED <what> <why>   --restore could not repair it
    APG_ESCROW_NONE ...                      no single escrow set matches (selection fails closed)
    APG_ESCROW_SELECTED <dir>                the set chosen from escrow metadata
    APG_ESCROW_UNREADABLE <what> <why>       the escrow itself is missing, changed or unreadable
    APG_ESCROW_WRONG_BED <bed> <recorded>    the set was escrowed for another bed
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
import json
import os
import stat
import subprocess
import sys

# Annotations only (they are never evaluated): importing typing would cost start-up time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Sequence, Tuple

    Entry = Dict[str, Any]
    Finding = Tuple[str, str]

FORMAT = 1
ESCROW_JSON = "escrow.json"
BUNDLE = "tag.bundle"
BASELINE_SUBDIR = "baseline"
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
        return json.dumps(path)
    return path


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


def scan_root(path: str, label: str, out: Dict[str, Entry]) -> None:
    """Add every file and symlink under ``path`` as ``label/<relative path>``; a root that is
    itself a file or a symlink is the single entry ``label``; an absent root adds nothing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError:
        out[label] = dict(_UNREADABLE)
        return
    if not stat.S_ISDIR(st.st_mode):
        out[label] = _file_entry(path, None)
        return
    try:
        fd = os.open(path, _DIR_FLAGS)
    except OSError:
        out[label] = dict(_UNREADABLE)
        return
    try:
        _scan_dir(fd, label, out)
    finally:
        os.close(fd)


def scan_tree(roots: Sequence[Entry]) -> Dict[str, Entry]:
    """label-prefixed path -> entry for every judged file: the form escrow.json records."""
    out: Dict[str, Entry] = {}
    for root in roots:
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


# --- git ----------------------------------------------------------------------------------------


def git_env(bed: str) -> Dict[str, str]:
    """The caller's environment without GIT_*; discovery never climbs above the bed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CEILING_DIRECTORIES"] = os.path.dirname(os.path.realpath(bed))
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    return env


# Hooks off, and none of the settings through which a repository's config could run a command
# or start background work during the calls made here.
GIT_SAFETY = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
              "-c", "gc.auto=0", "-c", "maintenance.auto=false",
              "-c", "fetch.recurseSubmodules=false", "-c", "submodule.recurse=false",
              "-c", "fetch.writeCommitGraph=false", "-c", "core.pager=cat")


def _git_exe() -> str:
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(folder or ".", "git")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return "git"


def start_git(bed: str, args: Sequence[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([_git_exe(), "-C", bed, *GIT_SAFETY, *args], env=git_env(bed),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def run_git(bed: str, args: Sequence[str]) -> subprocess.CompletedProcess[bytes]:
    process = start_git(bed, args)
    out, err = process.communicate()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def start_read_tag(bed: str, tag: str) -> subprocess.Popen[bytes]:
    """Start the one git call that reads the tag; :func:`finish_read_tag` collects it, so the
    tree can be hashed meanwhile."""
    return start_git(bed, ["for-each-ref", "--format=%(refname)%00%(objectname)%00%(objecttype)"
                           "%00%(*objectname)%00%(*objecttype)", f"refs/tags/{tag}"])


def finish_read_tag(process: subprocess.Popen[bytes], tag: str) -> Entry:
    """{"state": "present", "object", "type", "commit"} | {"state": "deleted"} |
    {"state": "unreadable", "detail"}."""
    ref = f"refs/tags/{tag}"
    out, err = process.communicate()
    if process.returncode != 0:
        lines = err.decode(errors="replace").strip().splitlines()
        return {"state": "unreadable",
                "detail": lines[-1] if lines else f"git exit {process.returncode}"}
    for line in out.decode(errors="surrogateescape").splitlines():
        fields = line.split("\0")
        if len(fields) == 5 and fields[0] == ref:
            _name, obj, kind, peeled, peeled_kind = fields
            if kind == "commit":
                return {"state": "present", "object": obj, "type": kind, "commit": obj}
            if kind == "tag" and peeled_kind == "commit":
                return {"state": "present", "object": obj, "type": kind, "commit": peeled}
            return {"state": "unreadable", "detail": f"{ref} names a {kind}, not a commit"}
    return {"state": "deleted"}


def read_tag(bed: str, tag: str) -> Entry:
    try:
        process = start_read_tag(bed, tag)
    except OSError as exc:
        return {"state": "unreadable", "detail": f"git could not run: {exc}"}
    return finish_read_tag(process, tag)


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
            data = json.load(handle)
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


def check_tag(escrow: Entry, bed: str, live: Optional[Entry] = None) -> List[Finding]:
    baseline = escrow["baseline"]
    if live is None:
        live = read_tag(bed, baseline["tag"])
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


def restore_tag(set_dir: str, escrow: Entry, bed: str) -> None:
    tag = escrow["baseline"]["tag"]
    ref = f"refs/tags/{tag}"
    bundle = os.path.join(set_dir, BUNDLE)
    try:
        done = run_git(bed, ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
                             "--no-recurse-submodules", bundle, f"+{ref}:{ref}"])
    except OSError as exc:
        say("APG_ESCROW_RESTORE_FAILED", f"tag {tag} git could not run: {exc}")
        return
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        say("APG_ESCROW_RESTORE_FAILED", f"tag {tag} {lines[-1] if lines else done.returncode}")
        return
    say("APG_ESCROW_RESTORED", f"tag {tag}")


# --- the check ----------------------------------------------------------------------------------


def report_mismatches(files: List[Finding], tag: List[Finding]) -> None:
    for name, change in files:
        say("APG_ESCROW_MISMATCH", f"{_show(name)} {change}")
    for what, change in tag:  # already "tag <name>"
        say("APG_ESCROW_MISMATCH", f"{what} {change}")


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
    tag_name = escrow["baseline"]["tag"]
    reading: Optional[subprocess.Popen[bytes]] = None
    failed: Entry = {"state": "unreadable", "detail": "git could not run"}
    try:
        reading = start_read_tag(bed, tag_name)
    except OSError as exc:
        failed["detail"] = f"git could not run: {exc}"
    # git reads the tag while the baseline files and the judging tree are hashed.
    mismatches = check_baseline(set_dir, escrow)
    live = scan_tree(escrow["judging"]["roots"])
    tag = check_tag(escrow, bed, finish_read_tag(reading, tag_name) if reading else failed)
    report_mismatches(mismatches, tag)
    tampered = compare_tree(escrow["judging"]["files"], live)
    for path, change in tampered:
        say("APG_TAMPERED", f"{_show(path)} {change}")
    if restore and (mismatches or tag):
        if mismatches:
            restore_baseline(set_dir, escrow, mismatches)
        if tag:
            restore_tag(set_dir, escrow, bed)
        mismatches, tag = check_baseline(set_dir, escrow), check_tag(escrow, bed)
        report_mismatches(mismatches, tag)
    if mismatches or tag or tampered:
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
    return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
