"""The frame of ``apg site``: each command's arguments beside its handler, the parser built
from them, and the helpers handlers share. The handlers live in ``site_*`` modules by concern;
``cli/site.py`` imports them all, which registers them, and runs one.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ai_proving_ground.cli.common import ArgumentParser, add_approot
from ai_proving_ground.errors import ApgError, UsageError
from ai_proving_ground.report import stderr
from ai_proving_ground.sites.base import EntityRecord
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

Handler = Callable[[EmbeddedSite, argparse.Namespace], int]
Argument = tuple[tuple[str, ...], dict[str, Any]]
FORMATS = ["json", "yaml", "table", "string", "csv", "tsv"]


class CommandParser(ArgumentParser):
    """One command's parser: options and arguments in any order, as drush takes them
    (``views:execute VIEW DISPLAY --format=json ARG``)."""

    _intermixed = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if self._intermixed:  # argparse's intermixed parsing calls back in: parse plainly
            return super().parse_known_args(args, namespace)
        self._intermixed = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixed = False


@dataclass(frozen=True)
class Command:
    """One ``apg site`` command: its parser's shape beside the handler that runs it."""

    name: str
    helptext: str
    aliases: tuple[str, ...]
    fmt: str | None  # the default --format, for commands that print data
    arguments: tuple[Argument, ...]
    handler: Handler


COMMANDS: dict[str, Command] = {}


def arg(*flags: str, **options: Any) -> Argument:
    """One ``add_argument`` call, written where the command is."""
    return flags, options


YES = arg("-y", "--yes", action="store_true", help="accepted for drush parity")
ENTITY_VALUES = (arg("--set", action="append", default=[], metavar="FIELD=VALUE",
                     help="a field value; repeat a field for several values"),
                 arg("--values", help="field values as a JSON or YAML mapping"))


def command(name: str, helptext: str, *arguments: Argument, aliases: Sequence[str] = (),
            fmt: str | None = None) -> Callable[[Handler], Handler]:
    """Register ``handler`` as ``apg site NAME`` with these arguments (in --help order)."""
    def register(handler: Handler) -> Handler:
        COMMANDS[name] = Command(name, helptext, tuple(aliases), fmt, arguments, handler)
        return handler

    return register


def build_parser(only: Command | None = None, description: str | None = None) -> ArgumentParser:
    """The whole parser, or (``only``) one whose sole subcommand is that command."""
    parser = ArgumentParser(prog="apg site", description=description,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=CommandParser)
    for spec in [only] if only else COMMANDS.values():
        p = sub.add_parser(spec.name, help=spec.helptext, aliases=list(spec.aliases),
                           description=spec.helptext)
        add_approot(p, nested=True)
        p.set_defaults(command=spec.name)
        if spec.fmt:
            p.add_argument("--format", default=spec.fmt, choices=FORMATS)
            p.add_argument("--fields", help="comma-separated fields to show, in that order "
                           "(as drush's --fields)")
        for flags, options in spec.arguments:
            p.add_argument(*flags, **options)
    return parser


def named_command(argv: Sequence[str]) -> Command | None:
    """The command ``argv`` names when only ``--approot`` comes before it, else None.

    Building a parser for each of the ~20 commands costs more than the command itself, so a
    plainly named command gets a parser with only its own subcommand: it parses the same
    arguments and prints the same help and errors. Anything else gets the whole parser.
    """
    index = 0
    while index < len(argv):
        token = argv[index]
        if token == "--approot":
            index += 2
        elif token.startswith("--approot="):
            index += 1
        elif token.startswith("-"):
            return None
        else:
            return next((spec for spec in COMMANDS.values()
                         if token == spec.name or token in spec.aliases), None)
    return None


def note(message: str) -> None:
    # An outcome line starts with its token, as every stderr line does; drush's words follow.
    print(f"APG_SITE_OK [success] {message}", file=stderr())


def parse_value(raw: str, input_format: str) -> Any:
    if input_format == "string":
        return raw
    # Lazy for start-up time: only a command given a YAML value needs the YAML loader (PyYAML).
    from ai_proving_ground import yamlio

    try:
        return json.loads(raw) if input_format == "json" else yamlio.loads(raw, source="the value")
    except json.JSONDecodeError as exc:
        raise UsageError(f"value is not valid json: {exc}") from None
    except ApgError as exc:
        raise UsageError(f"value is not valid yaml: {exc.message}") from None


def get_path(data: Any, dotted: str, name: str) -> Any:
    cursor = data
    for part in dotted.split("."):
        if not isinstance(cursor, dict) or part not in cursor:
            raise ApgError("APG_CONFIG_MISSING", f"config {name} has no key {dotted}")
        cursor = cursor[part]
    return cursor


def entity_values(args: argparse.Namespace) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if args.values:
        parsed = parse_value(args.values, "yaml")
        if not isinstance(parsed, dict):
            raise UsageError("--values must be a mapping of field name to value(s)")
        values.update(parsed)
    for assignment in args.set:
        field, sep, value = assignment.partition("=")
        if not sep or not field:
            raise UsageError(f"--set {assignment!r} must look like FIELD=VALUE")
        values.setdefault(field, [])
        if not isinstance(values[field], list):
            values[field] = [values[field]]
        values[field].append({"value": value})
    return values


def entity_summary(record: EntityRecord) -> dict[str, Any]:
    """What the entity commands print of an entity: its ids, bundle and label."""
    return {"id": record.id, "uuid": record.uuid, "bundle": record.bundle, "label": record.label}
