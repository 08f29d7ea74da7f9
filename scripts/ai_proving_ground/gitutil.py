"""Running git in a bed: argument lists only, failures as ApgError naming the command."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.errors import ApgError

# A bed's commits must not depend on the operator's git identity or hooks.
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "ai_proving_ground",
    "GIT_AUTHOR_EMAIL": "apg@localhost",
    "GIT_COMMITTER_NAME": "ai_proving_ground",
    "GIT_COMMITTER_EMAIL": "apg@localhost",
}


def git(repo: Path, args: Sequence[str], check: bool = True,
        input_bytes: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C repo args``; a failure names the command and git's message."""
    exe = shutil.which("git")
    if exe is None:
        raise ApgError("APG_GIT_MISSING", "git is not on PATH; install git", exit_code=2)
    env = {**os.environ, **_GIT_ENV}
    done = subprocess.run([exe, "-C", str(repo), "-c", "core.hooksPath=/dev/null", *args],
                          capture_output=True, env=env, input=input_bytes, check=False)
    if check and done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise ApgError("APG_GIT_FAILED",
                       f"git {' '.join(args)} failed in {repo}: {message[-1] if message else ''}")
    return done


def git_text(repo: Path, args: Sequence[str]) -> str:
    return git(repo, args).stdout.decode().strip()
