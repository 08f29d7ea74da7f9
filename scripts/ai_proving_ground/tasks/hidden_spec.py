"""A task's ``hidden_verifier`` as the dataset loader checks it, before any agent runs.

The schema (``schemas/dataset.schema.json``) holds the shape: ``patch`` and ``commands`` both
required, ``commands`` a non-empty list whose items are command strings (the hidden-verifier
design's form) or argument lists, ``patch`` ending in ``.patch`` or ``.diff``. This module holds
what a schema cannot know: the patch is a relative path inside the dataset's folder (no absolute
path, no ``..`` part, no symlink leading out) naming a file that exists, and every command string
splits into at least one word. Each problem is an ``APG_DATASET_INVALID`` at
``file:line:col: $.tasks[i].hidden_verifier...``, so ``apg run``, ``apg grade``, campaigns and
Inspect, which all load through :func:`ai_proving_ground.tasks.dataset.load_dataset`, refuse it.

A command string is split as POSIX shell words (:func:`shlex.split`): quotes group, backslashes
escape, and nothing else of a shell applies (no pipes, redirections, variables or globs), since
the command runs without a shell, as an argument list does.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import is_within
from ai_proving_ground.yamlio import PathPart

# A located message: the dataset's file:line:col: $.path for these parts.
Where = Callable[[Sequence[PathPart]], str]


def command_argv(command: str | Sequence[str]) -> tuple[str, ...]:
    """A command as its argument list: a string split as shell words, a list as it is."""
    if isinstance(command, str):
        return tuple(shlex.split(command))
    return tuple(str(word) for word in command)


def check_hidden(task: dict[str, Any], index: int, folder: Path, where: Where) -> None:
    """Refuse an unsafe or missing patch, and a command string that names no program."""
    verifier = task.get("hidden_verifier")
    if verifier is None:
        return
    base: list[PathPart] = ["tasks", index, "hidden_verifier"]
    _check_patch(str(verifier["patch"]), folder, lambda: where([*base, "patch"]))
    for number, command in enumerate(verifier["commands"]):
        here = [*base, "commands", number]
        try:
            words = command_argv(command)
        except ValueError as exc:  # an unclosed quote
            raise _invalid(f"{where(here)}: {command!r} cannot be split into words ({exc}); "
                           "close its quotes or write it as an argument list") from None
        if not words:
            raise _invalid(f"{where(here)}: the command is empty; name a program to run")


def _check_patch(ref: str, folder: Path, where: Callable[[], str]) -> None:
    pure = PurePosixPath(ref)
    if pure.is_absolute() or ref.startswith("~") or "\\" in ref or "\x00" in ref:
        raise _invalid(f"{where()}: {ref!r} must be a relative path inside the dataset's folder "
                       f"({folder}); write it relative to the dataset file")
    if ".." in pure.parts:
        raise _invalid(f"{where()}: {ref!r} has a '..' part; the patch must stay inside the "
                       f"dataset's folder ({folder})")
    target = folder / ref
    if not is_within(target.resolve(), folder.resolve()):
        raise _invalid(f"{where()}: {ref!r} leads out of the dataset's folder ({folder}) "
                       "through a symlink; keep the patch inside it")
    if not target.is_file():
        raise _invalid(f"{where()}: the patch {ref!r} is not a file ({target}); create it "
                       "or fix the path")


def _invalid(message: str) -> ApgError:
    return ApgError("APG_DATASET_INVALID", message, exit_code=2)
