"""Running ``ddev``: one child process per round trip, and the errors it can end in.

Why ``ddev exec drush`` and never ``ddev drush``: DDEV's custom commands (``ddev drush`` is one)
turn every failure into exit 1, while ``ddev exec`` keeps the real exit code.

Why not ``ddev exec --raw``: without a shell the container never reads ``$BASH_ENV``, which is
what puts the project's ``vendor/bin`` (and so ``drush``) on ``PATH``. Plain ``ddev exec``
joins the arguments into a ``bash -c`` line instead, so every argument sent through it is
checked against a shell-inert character set first (:func:`shell_inert`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError

DDEV_MISSING_MESSAGE = (
    "ddev not found on PATH; install DDEV (https://ddev.com) or use the embedded site with "
    "AI_PG_SITE_DRIVER=sqlite"
)

SHELL_INERT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")
_STDERR_TAIL_LINES = 6


def ddev_binary() -> str:
    """``ddev`` on PATH, or APG_DDEV_MISSING."""
    found = shutil.which("ddev")
    if found is None:
        raise ApgError("APG_DDEV_MISSING", DDEV_MISSING_MESSAGE, exit_code=2)
    return found


def run_ddev(binary: str, approot: Path, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run ``<binary> <args>`` in the app root; a non-zero exit is APG_DDEV_FAILED."""
    argv = [binary, *args]
    try:
        result = subprocess.run(
            argv,
            cwd=approot,
            stdin=subprocess.DEVNULL,  # no TTY, and nothing can wait for input
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            check=False,
        )
    except OSError as exc:
        raise ApgError("APG_DDEV_FAILED", f"could not run `{render(args)}` in {approot}: {exc}") from None
    if result.returncode != 0:
        raise ApgError("APG_DDEV_FAILED", failure_message(args, result))
    return result


def shell_inert(arg: str) -> None:
    """Refuse an argument that ``ddev exec``'s ``bash -c`` line could reinterpret."""
    if not arg or any(ch not in SHELL_INERT for ch in arg):
        raise ApgError(
            "APG_DDEV_ARG_UNSAFE",
            f"argument {abbreviate(arg)!r} holds characters that `ddev exec` would pass "
            "through bash; use paths and names made of letters, digits and _ @ % + = : , . / -",
            exit_code=2,
        )


def render(args: Sequence[str]) -> str:
    """A command line for a message, long arguments shortened."""
    return "ddev " + " ".join(abbreviate(arg) for arg in args)


def abbreviate(arg: str) -> str:
    """``arg`` itself, or its head and length when it is long (a base64 request)."""
    return arg if len(arg) <= 80 else f"{arg[:40]}...({len(arg)} chars)"


def failure_message(args: Sequence[str], result: subprocess.CompletedProcess[str]) -> str:
    """What failed, with the output lines that say why and a hint when one applies."""
    stream = result.stderr if result.stderr.strip() else result.stdout
    lines = [line.rstrip() for line in stream.splitlines() if line.strip()]
    tail = " | ".join(lines[-_STDERR_TAIL_LINES:]) or "(no output)"
    message = f"`{render(args)}` failed with exit {result.returncode}: {tail}"
    return message + _failure_hint(result.returncode, stream)


def _failure_hint(code: int, stream: str) -> str:
    if code == 127 or "command not found" in stream or "executable file not found" in stream:
        return " (is drush installed in the project? ddev composer require drush/drush)"
    if "ddev start" in stream or "not currently running" in stream:
        return " (start the project with: ddev start)"
    return ""


def json_output(stdout: str, command: str) -> Any:
    """``stdout`` parsed as JSON, or APG_DDEV_OUTPUT_INVALID naming ``command``."""
    try:
        return json.loads(stdout)
    except ValueError:
        raise output_invalid(command, stdout) from None


def last_json_line(stdout: str) -> Any:
    """The JSON on the last non-empty line: PHP notices may precede it on stdout."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return None
    try:
        return json.loads(lines[-1])
    except ValueError:
        return None


def output_invalid(command: str, stdout: str) -> ApgError:
    """APG_DDEV_OUTPUT_INVALID for a drush command whose output could not be read."""
    return ApgError(
        "APG_DDEV_OUTPUT_INVALID",
        f"`{command}` printed no usable JSON; stdout began: {stdout[:200]!r}",
    )


def probe_invalid(detail: str) -> ApgError:
    """APG_DDEV_PROBE_INVALID: the probe's answer is not what was asked for."""
    return ApgError("APG_DDEV_PROBE_INVALID", detail)
