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
import re
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
_DDEV_ECHO = "Failed to execute command"
_SYMFONY_BLOCK = re.compile(r"^In \S+ line \d+:$")
_TRACE_LINE = re.compile(r"^(Exception trace:|#\d+ |at \S+:\d+$|\S+\(\) at )")


def ddev_binary() -> str:
    """``ddev`` on PATH, or APG_DDEV_MISSING."""
    found = shutil.which("ddev")
    if found is None:
        raise ApgError("APG_DDEV_MISSING", DDEV_MISSING_MESSAGE, exit_code=2)
    return found


def run_ddev(
    binary: str, approot: Path, args: Sequence[str], check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run ``<binary> <args>`` in the app root; with ``check``, a non-zero exit is APG_DDEV_FAILED."""
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
    if check and result.returncode != 0:
        raise ApgError("APG_DDEV_FAILED", failure_message(args, result))
    return result


# Arguments passed as they are: `--raw` keeps argv, and `bash -c` (not a login shell) still
# reads $BASH_ENV, which puts the project's vendor/bin, and so drush, on PATH.
DRUSH_VERBATIM = ("exec", "--raw", "--", "bash", "-c", 'exec drush "$@"', "drush")


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
    """What failed and why: drush's error itself, not its trace or DDEV's echo of the command."""
    cause = failure_cause(result.stderr) or failure_cause(result.stdout) or "(no output)"
    message = f"`{render(args)}` failed with exit {result.returncode}: {cause}"
    return message + _failure_hint(result.returncode, result.stderr + result.stdout)


def failure_cause(stream: str) -> str:
    """The error a drush or DDEV failure states, unwrapped to one line.

    In order: drush's ``[error]`` log lines (a trace may follow them; it is left out), a
    Symfony console block (``In File.php line N:`` then the exception's message, wrapped
    at 80 columns), the ``[ERROR]`` block a command prints on stdout (recipes do), else
    the last lines. DDEV's own ``Failed to execute command`` line repeats the whole
    command, base64 request included, and says nothing drush did not, so it is dropped.
    """
    lines = [
        line.rstrip()
        for line in stream.splitlines()
        if line.strip() and not line.lstrip().startswith(_DDEV_ECHO)
    ]
    logged = [line.strip() for line in lines if line.lstrip().startswith("[error]")]
    if logged:
        return " | ".join(abbreviate_words(line) for line in logged)
    for index, line in enumerate(lines):
        if _SYMFONY_BLOCK.match(line.strip()):
            return abbreviate_words(_unwrap(_block(lines[index + 1 :]), hard_cut=True))
        if line.lstrip().startswith(("[ERROR]", "[error]")):
            return abbreviate_words(_unwrap(_block(lines[index:], continuation=True), hard_cut=False))
    return " | ".join(abbreviate_words(line.strip()) for line in lines[-_STDERR_TAIL_LINES:])


def _block(lines: list[str], continuation: bool = False) -> list[str]:
    """The message lines of a console block: up to a trace or, for [ERROR], the indent's end."""
    block: list[str] = []
    for line in lines:
        text = line.strip()
        if _TRACE_LINE.match(text) or (continuation and block and not line.startswith(" " * 3)):
            break
        block.append(line)
    return block


def _unwrap(lines: list[str], hard_cut: bool) -> str:
    """Wrapped lines joined back into one.

    An exception block is split at a fixed width, mid-word, so a line as wide as the widest
    continues without a space; an ``[ERROR]`` block is wrapped at spaces.
    """
    widest = max((len(line.rstrip()) for line in lines), default=0)
    text = ""
    glued = False
    for line in lines:
        piece = line.strip()
        text += piece if not text or glued else " " + piece
        glued = hard_cut and len(line.rstrip()) == widest
    return text.replace("[ERROR] ", "", 1).strip()


def abbreviate_words(text: str) -> str:
    """``text`` with every over-long word (a base64 request) shortened."""
    return " ".join(abbreviate(word) for word in text.split(" "))


def _failure_hint(code: int, stream: str) -> str:
    if code == 127 or "command not found" in stream or "executable file not found" in stream:
        return " (is drush installed in the project? ddev composer require drush/drush)"
    if "ddev start" in stream or "not currently running" in stream:
        return " (start the project with: ddev start)"
    return ""


def json_output(stdout: str, command: str) -> Any:
    """The JSON document in ``stdout``, or APG_DDEV_OUTPUT_INVALID naming ``command``.

    DDEV may print around it (a project start's progress, exec hooks), so the document is the
    first one that starts at the beginning of a line and parses, whatever follows it.
    """
    decoder = json.JSONDecoder()
    offset = 0
    for line in stdout.splitlines(keepends=True):
        if line.startswith(("{", "[")):
            try:
                return decoder.raw_decode(stdout, offset)[0]
            except ValueError:
                pass
        offset += len(line)
    raise output_invalid(command, stdout)


def last_json_object(stdout: str) -> dict[str, Any] | None:
    """The last line that is a JSON object: PHP notices or DDEV hooks may surround it."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict):
                return data
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
