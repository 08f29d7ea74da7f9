"""Help is plain text: no command's --help (nor a subcommand's) shows reStructuredText markup,
although the help comes from docstrings written in it for the API docs."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from ai_proving_ground.cli.common import plain_text
from ai_proving_ground.cli.completion import candidates
from ai_proving_ground.cli.main import COMMANDS
from ai_proving_ground.cli.main import main as apg_main

MODULES = {name: module for name, (module, _) in COMMANDS.items()}
MARKUP = re.compile(r"``|:[a-z]+:`")


def help_of(*words: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = apg_main([*words, "--help"])
        except SystemExit as exc:  # argparse's --help exits
            rc = int(exc.code or 0)
    return rc, out.getvalue() + err.getvalue()


@pytest.mark.parametrize("command", list(COMMANDS))
def test_no_help_shows_rst_markup(command: str) -> None:
    rc, text = help_of(command)
    assert rc == 0 and "usage:" in text, text
    assert not MARKUP.findall(text), text
    # Each subcommand the completion offers (site's, campaign's, task's, bed's...) too.
    for word in candidates([command, ""], MODULES):
        _, sub_text = help_of(command, word)
        assert not MARKUP.findall(sub_text), (word, sub_text)


def test_plain_text_keeps_the_words() -> None:
    assert plain_text("``apg run`` serves (:mod:`ai_proving_ground.sandbox.broker`), "
                      ":py:func:`~x.y` and a `shell` word") == (
        "apg run serves (ai_proving_ground.sandbox.broker), x.y and a `shell` word")
