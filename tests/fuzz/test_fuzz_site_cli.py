"""``apg site`` with fuzzed argument lists: every outcome is an exit code and a token, never a
traceback. Command names and options come from the parser itself, values from the fuzzer.

Values never hold a slash and the working directory is a scratch one, so that a path argument
(``--destination``, ``recipe PATH``) can only name something in that scratch directory.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ai_proving_ground.cli import site as site_cli


def _commands() -> dict[str, list[str]]:
    """Each subcommand name (aliases included) -> its option strings."""
    parser = site_cli.build_parser()
    found: dict[str, list[str]] = {}
    for action in parser._actions:  # argparse keeps its subparsers here and nowhere public
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found[name] = [o for a in sub._actions for o in a.option_strings]
    return found


COMMANDS = _commands()
value = st.one_of(
    st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=["Cs"]), max_size=16),
    st.sampled_from(["?", ".", "..", "-", "--", "node", "kb_doc", "system.site", "name", "1", "0",
                     "-1", "nan", "inf", "1e999", "{a: [1, 2]}", "[", "{}", "[]", "null", "true",
                     "views.view.content", "a..b", ".a", "a.", "x=y", "=y", "title=t", "default",
                     "SELECT 1", "DROP TABLE config", "json", "yaml", "table", "string"]))


@st.composite
def argv(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(sorted(COMMANDS)))
    words = [command]
    for _ in range(draw(st.integers(0, 5))):
        options = COMMANDS[command]
        if options and draw(st.booleans()):
            option = draw(st.sampled_from(options))
            words += [f"{option}={draw(value)}"] if draw(st.booleans()) else [option]
        else:
            words.append(draw(value))
    return words


@given(argv())
def test_site_command_lines(content_bed: Path, fuzz_dir: Path, words: list[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    cwd = Path.cwd()
    os.chdir(fuzz_dir)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = site_cli.main(["--approot", str(content_bed), *words])
            except SystemExit as exc:  # argparse: --help (0) or bad usage (2)
                rc = exc.code if isinstance(exc.code, int) else 0
    finally:
        os.chdir(cwd)
    assert rc in (0, 1, 2), (rc, err.getvalue())
    assert "Traceback" not in err.getvalue()
    if rc != 0:
        assert "APG_" in err.getvalue(), err.getvalue()
