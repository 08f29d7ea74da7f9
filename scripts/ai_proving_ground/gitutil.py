"""Running git in a bed: argument lists only, failures as ApgError naming the command."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from ai_proving_ground.errors import ApgError

# A bed's .git is the agent's to write: none of its settings may run a command or start
# background work when the harness calls git (hooks, fsmonitor, auto gc and maintenance).
SAFE_CONFIG = ("-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
               "-c", "gc.auto=0", "-c", "maintenance.auto=false", "-c", "core.pager=cat")

# A bed's commits must not depend on the operator's git identity.
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "ai_proving_ground",
    "GIT_AUTHOR_EMAIL": "apg@localhost",
    "GIT_COMMITTER_NAME": "ai_proving_ground",
    "GIT_COMMITTER_EMAIL": "apg@localhost",
}


def git(repo: Path, args: Sequence[str], check: bool = True, input_bytes: bytes | None = None,
        env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C repo args`` safely; a failure names the command and git's message.

    The caller's ``GIT_*`` variables are dropped (they could point git at another repository
    or index); ``env`` replaces the process environment when given.
    """
    exe = shutil.which("git")
    if exe is None:
        raise ApgError("APG_GIT_MISSING", "git is not on PATH; install git", exit_code=2)
    base = os.environ if env is None else env
    clean = {k: v for k, v in base.items() if not k.startswith("GIT_")}
    done = subprocess.run([exe, "-C", str(repo), *SAFE_CONFIG, *args], capture_output=True,
                          env={**clean, **_GIT_ENV}, input=input_bytes, check=False,
                          stdin=None if input_bytes is not None else subprocess.DEVNULL)
    if check and done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise ApgError("APG_GIT_FAILED",
                       f"git {' '.join(args)} failed in {repo}: {message[-1] if message else ''}")
    return done


def git_text(repo: Path, args: Sequence[str]) -> str:
    return git(repo, args).stdout.decode().strip()
