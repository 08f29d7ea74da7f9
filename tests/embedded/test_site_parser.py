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


@pytest.mark.parametrize("argv", [
    ["views:execute", "kb_billing", "page_1", "--format=json", "7,8"],
    ["views:execute", "--format=json", "kb_billing", "page_1", "7,8"],
    ["views:execute", "kb_billing", "--format", "json", "page_1", "7,8"],
    ["vex", "kb_billing", "page_1", "7,8", "--format=json"],
], ids=" ".join)
def test_options_and_arguments_in_any_order_as_drush_takes_them(argv: list[str]) -> None:
    parsed, _, err = _parse(site.build_parser(site.named_command(argv)), argv)
    assert err == ""
    assert (parsed["view"], parsed["display"], parsed["view_args"], parsed["format"]) == (
        "kb_billing", "page_1", "7,8", "json")
    whole, _, _ = _parse(site.build_parser(), argv)
    assert whole == parsed


def test_csv_tsv_and_fields_on_a_listing(bed: Any, site: Any) -> None:
    site_cli = site
    csv = site_cli(bed, "pm:list", "--status=enabled", "--format=csv", "--fields=name,status")
    lines = csv.out.splitlines()
    assert csv.rc == 0 and lines[0] == "name,status" and "views,Enabled" in lines
    tsv = site_cli(bed, "pm:list", "--status=enabled", "--format=tsv", "--fields=status,name")
    assert tsv.rc == 0 and "Enabled\tviews" in tsv.out.splitlines()  # no header, as drush
    assert not tsv.out.startswith("status")
    table = site_cli(bed, "pm:list", "--fields=name")
    assert table.out.splitlines()[0].split() == ["name"]
    unknown = site_cli(bed, "pm:list", "--fields=nope")
    assert unknown.rc == 2 and "APG_USAGE --fields: no field nope; the fields are " in unknown.err
