"""Running git for the harness: argument lists only, never steered by anything a bed holds.

A bed's ``.git`` is the agent's to write, and git has no switch to ignore a repository's own
config (``url.<x>.insteadOf`` onto ``ext::`` with ``protocol.ext.allow``, ``core.fsmonitor``,
filter drivers, hooks, ``tag.gpgSign`` with ``gpg.program`` or an editor: each runs a command).
So the harness never runs git in a bed's repository. :func:`bed_git` gives every call a private
git directory made for it (a config of ours, no hooks, no ``info/``), the bed's objects and
index as data and the bed as work tree; the bed's refs (HEAD, the baseline tag) are read and
written in Python (:func:`read_ref`, :func:`write_ref`). Neither the system's nor the user's
config is read, and no transport is allowed (``GIT_ALLOW_PROTOCOL`` set to nothing overrides
every ``protocol.<name>.allow``). This holds for provision, recapture, escrow, verify, verify
--restore and reset alike.

The machinery is the escrow verifier's (``scripts/escrow_verify.py``, loaded from its file), so
the product and the stdlib verifier run git one way. :func:`git` runs git in a repository with
its own config, hardened the same way otherwise: it is only for a repository the harness has
just made itself (a new bed) and for tests, never for a bed an agent has had.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

from ai_proving_ground.errors import ApgError
from ai_proving_ground.verifier_file import load_verifier

UNSAFE = "APG_GIT_UNSAFE"

# A bed's commits must not depend on the operator's git identity.
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "ai_proving_ground",
    "GIT_AUTHOR_EMAIL": "apg@localhost",
    "GIT_COMMITTER_NAME": "ai_proving_ground",
    "GIT_COMMITTER_EMAIL": "apg@localhost",
}


def _machinery() -> ModuleType:
    return load_verifier()


def _exe() -> str:
    exe = shutil.which("git")
    if exe is None:
        raise ApgError("APG_GIT_MISSING", "git is not on PATH; install git", exit_code=2)
    return exe


def _failed(args: Sequence[str], where: Path, done: subprocess.CompletedProcess[bytes]) -> ApgError:
    message = done.stderr.decode(errors="replace").strip().splitlines()
    return ApgError("APG_GIT_FAILED",
                    f"git {' '.join(args)} failed in {where}: {message[-1] if message else ''}")


def git(repo: Path, args: Sequence[str], check: bool = True, input_bytes: bytes | None = None,
        env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C repo args`` in ``repo``'s own repository; a failure names the command.

    Only for a repository the harness has just made (its config is ours) and for tests: system
    and user config are ignored, no transport is allowed and every setting known to run a
    program is overridden, but git has no way to ignore the repository's own config, so a bed
    an agent has had goes through :func:`bed_git`. Of the process environment (``env`` when
    given) only PATH is kept.
    """
    machinery = _machinery()
    base = os.environ if env is None else env
    clean = machinery.hardened_env(os.devnull, base.get("PATH", os.defpath))
    done = subprocess.run([_exe(), "--no-pager", "-C", str(repo), *machinery.GIT_SAFETY, *args],
                          capture_output=True, env={**clean, **_GIT_ENV}, input=input_bytes,
                          check=False, stdin=None if input_bytes is not None else subprocess.DEVNULL)
    if check and done.returncode != 0:
        raise _failed(args, repo, done)
    return done


def git_text(repo: Path, args: Sequence[str]) -> str:
    return git(repo, args).stdout.decode().strip()


def bed_git(approot: Path, args: Sequence[str], check: bool = True,
            input_bytes: bytes | None = None, head: str | None = None,
            refs: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """git ``args`` on the bed's work tree, index and objects from a private git directory whose
    HEAD is ``head`` and which holds ``refs`` (name -> object id): nothing of the bed's
    repository config, hooks or info is read. ``APG_GIT_UNSAFE`` when the bed's ``.git`` is a
    symlink, a gitfile or a layout that cannot be read so."""
    machinery = _machinery()
    _exe()
    try:
        done: subprocess.CompletedProcess[bytes] = machinery.run_git(
            str(approot), list(args), input_bytes, head, dict(refs or {}))
    except machinery.GitDirError as exc:
        raise unsafe(approot, str(exc)) from None
    if check and done.returncode != 0:
        raise _failed(args, approot, done)
    return done


def unsafe(approot: Path, why: str) -> ApgError:
    return ApgError(UNSAFE, f"{approot}: {why}; apg never runs git in a repository it cannot "
                    "isolate. Make .git a real directory of the bed's own repository again")


def check_git_dir(approot: Path) -> None:
    """``APG_GIT_UNSAFE`` unless ``<approot>/.git`` is a real directory git can be run on from
    outside (see :func:`bed_git`)."""
    machinery = _machinery()
    try:
        machinery.git_dir_of(str(approot))
    except machinery.GitDirError as exc:
        raise unsafe(approot, str(exc)) from None


def read_ref(approot: Path, ref: str) -> str | None:
    """The object id ``ref`` names in the bed (HEAD is followed), read without git; None when
    the ref does not exist."""
    machinery = _machinery()
    try:
        oid: str | None = machinery.read_ref(machinery.git_dir_of(str(approot)), ref)
    except machinery.GitDirError as exc:
        raise unsafe(approot, str(exc)) from None
    return oid


def write_ref(approot: Path, ref: str, oid: str) -> None:
    """Point the bed's ``ref`` at ``oid`` (a loose ref, written new-then-rename, without git)."""
    machinery = _machinery()
    try:
        machinery.write_ref(machinery.git_dir_of(str(approot)), ref, oid)
    except machinery.GitDirError as exc:
        raise unsafe(approot, str(exc)) from None


def object_types(approot: Path, names: Sequence[str]) -> list[tuple[str, str]]:
    """(object id, type) of each object name in the bed's objects (``<oid>^{commit}`` peels);
    ("", "missing") for one that is not there. One git call."""
    machinery = _machinery()
    _exe()
    try:
        found: list[tuple[str, str]] = machinery.object_types(str(approot), list(names))
    except machinery.GitDirError as exc:
        raise unsafe(approot, str(exc)) from None
    except OSError as exc:
        raise ApgError("APG_GIT_FAILED", f"git cat-file failed in {approot}: {exc}") from None
    return found
