"""What every command shares: error reporting, output formats and the --approot option."""

from __future__ import annotations

import argparse
import io
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground import report, yamldump
from ai_proving_ground.errors import ApgError
from ai_proving_ground.layout import BedLayout, is_ddev_project
from ai_proving_ground.settings import Settings, resolve_approot

# A command's help is its module's docstring, written in reStructuredText for the API docs; a
# terminal shows it without the markup (``literal`` and :role:`target` become their text).
_RST_LITERAL = re.compile(r"``([^`]+?)``")
_RST_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`]+)`")


def plain_text(text: str) -> str:
    """``text`` without reStructuredText's inline literal and role markup."""
    return _RST_ROLE.sub(r"\1", _RST_LITERAL.sub(r"\1", text))


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports bad arguments with the APG_USAGE token and exit code 2, and shows
    help (docstrings, help= strings) as plain text."""

    def format_help(self) -> str:
        return plain_text(super().format_help())

    def format_usage(self) -> str:
        return plain_text(super().format_usage())

    def error(self, message: str) -> Any:  # argparse's signature says NoReturn
        self.print_usage(report.stderr())
        print(f"APG_USAGE {self.prog}: {message}", file=report.stderr())
        raise SystemExit(2)


def positive_int(raw: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def positive_seconds(raw: str) -> float:
    """An argparse type: a finite number of seconds above 0 (never nan or inf)."""
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, not {raw}")
    return value


def add_approot(parser: argparse.ArgumentParser, nested: bool = False) -> None:
    """``--approot``; on a subcommand it must not reset a value given before the subcommand."""
    parser.add_argument("--approot", default=argparse.SUPPRESS if nested else None,
                        help="the bed's app root (default: $AI_PG_APPROOT, else .)")


def resolve_bed(argument: str | None, settings: Settings) -> Path:
    """The app root of a command that acts on a bed. A directory that holds no site (neither an
    embedded site's database nor a DDEV project) is bad input, exit 2, refused before the
    command writes anything there."""
    approot = resolve_approot(argument, settings)
    database = BedLayout(approot).database
    if not (database.is_file() or is_ddev_project(approot)):
        raise ApgError("APG_SITE_NOT_INSTALLED", f"no site at {approot}: no embedded site "
                       f"database ({database}) and no DDEV project (.ddev/config.yaml); create a "
                       "bed with `apg bed init DIR`, or pass --approot BED (or set AI_PG_APPROOT)",
                       exit_code=2)
    return approot


def run(action: Callable[[], int]) -> int:
    """Run ``action``; an expected failure prints its token and message, never a traceback."""
    try:
        return action()
    except ApgError as exc:
        print(str(exc), file=report.stderr())
        return exc.exit_code
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        print("APG_INTERRUPTED interrupted", file=sys.stderr)
        return 130


def emit(data: Any, fmt: str, fields: str | None = None) -> None:
    """Print data on stdout in the format drush would use (``fields``: drush's --fields)."""
    report.stdout().write(render(data, fmt, fields))


def render(data: Any, fmt: str, fields: str | None = None) -> str:
    if fields:
        data = select_fields(data, fields)
    if fmt in ("csv", "tsv"):
        return _delimited(data, fmt)
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt == "yaml":
        return yamldump.dumps(data)
    if fmt == "string":
        return ("\n".join(map(str, data)) if isinstance(data, list) else str(data)) + "\n"
    if fmt == "table":
        return _table(data)
    raise ApgError("APG_USAGE", f"unknown --format {fmt!r}", exit_code=2)


def _rows(data: Any) -> list[Any] | None:
    """The rows a table shows of ``data`` (a list, a mapping of rows, or one mapping as key and
    value rows); None for a scalar."""
    if isinstance(data, dict) and all(isinstance(v, dict) for v in data.values()):
        return list(data.values())
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        return [{"key": k, "value": v} for k, v in data.items()]
    return None


def select_fields(data: Any, fields: str) -> Any:
    """drush's ``--fields=a,b``: only those columns, in that order (a mapping of rows keeps its
    keys); an unknown field is refused, naming the ones there are."""
    wanted = [f.strip() for f in fields.split(",") if f.strip()]
    rows = _rows(data)
    if rows is None:
        return data
    known = list(dict.fromkeys(k for row in rows if isinstance(row, dict) for k in row))
    unknown = [f for f in wanted if f not in known]
    if unknown and rows:
        raise ApgError("APG_USAGE", f"--fields: no field {', '.join(unknown)}; the fields are "
                       f"{', '.join(known)}", exit_code=2)

    def pick(row: Any) -> Any:
        return {f: row.get(f) for f in wanted} if isinstance(row, dict) else row

    if isinstance(data, dict) and all(isinstance(v, dict) for v in data.values()):
        return {k: pick(v) for k, v in data.items()}
    return [pick(row) for row in rows]


def _delimited(data: Any, fmt: str) -> str:
    """drush's csv (a header row first, RFC 4180 quoting) and tsv (no header; a tab or newline
    inside a value written as the two characters \\t or \\n, as drush's formatter does)."""
    # Lazy for start-up time: only csv output needs the csv module.
    import csv

    rows = _rows(data)
    if rows is None:
        rows = [{"value": data}]
    columns = list(dict.fromkeys(k for row in rows if isinstance(row, dict) for k in row))
    cells = [[_cell(row.get(c)) for c in columns] if isinstance(row, dict) else [_cell(row)]
             for row in rows]
    if fmt == "tsv":
        return "".join("\t".join(v.replace("\t", "\\t").replace("\n", "\\n") for v in r) + "\n"
                       for r in cells)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if columns:
        writer.writerow(columns)
    writer.writerows(cells)
    return out.getvalue()


def _table(data: Any) -> str:
    rows = _rows(data)
    if rows is None:
        return f"{data}\n"
    if not rows:
        return ""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


Row = dict[str, Any]


def listing_main(prog: str, doc: str | None, argv: Sequence[str] | None, what: str,
                 rows: Callable[[Path, Settings], list[Row]],
                 line: Callable[[Row], Row]) -> int:
    """The whole of a discovery command (``apg agents``, ``apg fixtures``): ``--approot`` and
    ``--json``; the rows as JSON objects, or each ``line`` of them as a table."""
    parser = ArgumentParser(prog=prog, description=doc,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    parser.add_argument("--json", action="store_true", help=f"print the {what} as JSON")
    args = parser.parse_args(argv)

    def act() -> int:
        settings = Settings.from_environ()
        listed = rows(resolve_approot(args.approot, settings), settings)
        if args.json:
            report.stdout().write(json.dumps(listed, indent=2, ensure_ascii=False) + "\n")
        else:
            report.stdout().write(render([line(row) for row in listed], "table"))
        return 0

    return run(act)
