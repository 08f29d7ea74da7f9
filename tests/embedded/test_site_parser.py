"""``apg site`` builds a parser for the named command only; it must behave as the whole one."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import pytest

from ai_proving_ground.cli import site


def _parse(parser: Any, argv: list[str]) -> tuple[Any, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: Any = vars(parser.parse_args(argv))
        except SystemExit as exc:
            result = ("exit", exc.code)
    return result, out.getvalue(), err.getvalue()


CASES = [[name, *rest] for spec in site.COMMANDS.values() for name in (spec.name, *spec.aliases)
         for rest in (["--help"], [], ["a", "b", "c", "d"], ["--format", "bogus"],
                      ["x", "--approot", "/z"])]
CASES += [["--approot", "/x", "config:get", "system.site", "name", "--format", "json"],
          ["--approot=/y", "cset", "a", "b", "c", "--input-format", "yaml", "-y"],
          ["--approot", "/x", "entity:create", "node", "page", "--set", "title=x"]]


@pytest.mark.parametrize("argv", CASES, ids=" ".join)
def test_a_named_command_parses_prints_and_fails_as_the_whole_parser_does(argv: list[str]) -> None:
    assert site.named_command(argv) is not None
    assert _parse(site.build_parser(site.named_command(argv)), argv) == _parse(
        site.build_parser(), argv)


@pytest.mark.parametrize("argv", [["--help"], [], ["nope"], ["--appr", "/x", "cget", "a"],
                                  ["--approot"], ["--", "cget", "a"]])
def test_anything_else_gets_the_whole_parser(argv: list[str]) -> None:
    assert site.named_command(argv) is None
