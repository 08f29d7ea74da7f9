"""``apg site``: a drush-shaped command line for the embedded site, for people and agents.

Exit codes: 0 success; 1 the site refused or the command failed (a token on stderr says why);
2 bad arguments (APG_USAGE) or no site where --approot points (APG_SITE_NOT_INSTALLED).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground import yamlio
from ai_proving_ground.cli.common import ArgumentParser, add_approot, emit, run
from ai_proving_ground.errors import ApgError, UsageError
from ai_proving_ground.report import stderr, stdout
from ai_proving_ground.settings import Settings, resolve_approot
from ai_proving_ground.sites.base import StateQuery, ViewQuery
from ai_proving_ground.sites.embedded.content_model import export_values
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.sites.embedded.store import database_errors

Handler = Callable[[EmbeddedSite, argparse.Namespace], int]
Argument = tuple[tuple[str, ...], dict[str, Any]]
FORMATS = ["json", "yaml", "table", "string"]


@dataclass(frozen=True)
class Command:
    """One ``apg site`` command: its parser's shape beside the handler that runs it."""

    name: str
    helptext: str
    aliases: tuple[str, ...]
    fmt: str | None  # the default --format, for commands that print data
    arguments: tuple[Argument, ...]
    handler: Handler


_COMMANDS: dict[str, Command] = {}


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
        _COMMANDS[name] = Command(name, helptext, tuple(aliases), fmt, arguments, handler)
        return handler

    return register


def build_parser(only: Command | None = None) -> ArgumentParser:
    """The whole parser, or (``only``) one whose sole subcommand is that command."""
    parser = ArgumentParser(prog="apg site", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=ArgumentParser)
    for spec in [only] if only else _COMMANDS.values():
        p = sub.add_parser(spec.name, help=spec.helptext, aliases=list(spec.aliases),
                           description=spec.helptext)
        add_approot(p, nested=True)
        p.set_defaults(command=spec.name)
        if spec.fmt:
            p.add_argument("--format", default=spec.fmt, choices=FORMATS)
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
            return next((spec for spec in _COMMANDS.values()
                         if token == spec.name or token in spec.aliases), None)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(named_command(arguments)).parse_args(arguments)

    def act() -> int:
        site = EmbeddedSite(resolve_approot(args.approot, Settings.from_environ()))
        with database_errors(site.layout.database):  # read-only or locked: a token
            return _COMMANDS[args.command].handler(site, args)

    return run(act)


def _note(message: str) -> None:
    print(f" [success] {message}", file=stderr())


# ---------------------------------------------------------------------------- handlers


@command("status", "site facts, as drush core:status", arg("--field", help="print one fact only"),
         aliases=["st", "core:status"], fmt="table")
def _status(site: EmbeddedSite, args: argparse.Namespace) -> int:
    facts = site.status()
    if args.field:
        if args.field not in facts:
            raise UsageError(f"no status field {args.field!r}; fields: {', '.join(facts)}")
        print(facts[args.field], file=stdout())
    else:
        emit(facts, args.format)
    return 0


@command("pm:list", "modules on disk and whether they are enabled",
         arg("--status", choices=["enabled", "disabled"]),
         arg("--type", default="module", choices=["module"]), aliases=["pml"], fmt="table")
def _pm_list(site: EmbeddedSite, args: argparse.Namespace) -> int:
    rows: dict[str, Any] = {}
    for name, state in site.modules().items():
        if args.status and (args.status == "enabled") != state.enabled:
            continue
        rows[name] = {"package": state.package, "display_name": name, "name": name,
                      "type": "module", "path": state.path,
                      "status": "Enabled" if state.enabled else "Disabled",
                      "version": state.version}
    emit(rows, args.format)
    return 0


@command("pm:install", "install modules and dependencies", arg("modules", nargs="+"), YES,
         aliases=["pmi", "en"])
def _pm_install(site: EmbeddedSite, args: argparse.Namespace) -> int:
    installed = site.install_modules(args.modules)
    _note(f"Installed: {', '.join(installed)}" if installed else "Already installed.")
    return 0


@command("pm:uninstall", "uninstall modules", arg("modules", nargs="+"), YES, aliases=["pmu"])
def _pm_uninstall(site: EmbeddedSite, args: argparse.Namespace) -> int:
    removed = site.uninstall_modules(args.modules)
    _note(f"Uninstalled: {', '.join(removed)}")
    return 0


@command("cr", "rebuild caches", aliases=["cache:rebuild"])
def _cr(site: EmbeddedSite, args: argparse.Namespace) -> int:
    site.rebuild_caches()
    _note("Cache rebuild complete.")
    return 0


@command("config:get", "print a config object or one key of it", arg("name"), arg("key", nargs="?"),
         aliases=["cget"], fmt="yaml")
def _config_get(site: EmbeddedSite, args: argparse.Namespace) -> int:
    data = site.config_get(args.name)
    if data is None:
        raise ApgError("APG_CONFIG_MISSING", f"config {args.name} does not exist")
    if args.key:
        value = _get_path(data, args.key, args.name)
        data = {f"{args.name}:{args.key}": value}
    emit(data, args.format)
    return 0


@command("config:set", "set a key (dotted path) of a config object; key ? sets the whole object",
         arg("name"), arg("key"), arg("value"),
         arg("--input-format", default="string", choices=["string", "yaml", "json"]), YES,
         aliases=["cset"])
def _config_set(site: EmbeddedSite, args: argparse.Namespace) -> int:
    # Lazy for start-up time: the recipe reader that owns set_path is slow to import.
    from ai_proving_ground.sites.embedded.recipes import set_path

    value = _parse_value(args.value, args.input_format)
    with site.session() as store:
        current = store.config_get(args.name)
        if args.key == "?":
            if not isinstance(value, dict):
                raise UsageError("with key ?, the value must be a mapping (use --input-format=yaml)")
            data = value
        else:
            data = current if current is not None else {}
            set_path(data, args.key, value)
        warnings = site.config_save(store, args.name, data, raw=True)
    for warning in warnings:
        print(f"APG_CONFIG_UNUSABLE {warning}", file=stderr())
    _note(f"Saved {args.name}.")
    return 0


@command("config:delete", "delete a config object, or one key of it", arg("name"),
         arg("key", nargs="?"), aliases=["cdel"])
def _config_delete(site: EmbeddedSite, args: argparse.Namespace) -> int:
    with site.session() as store:
        if args.key is None:
            site.config_delete(store, args.name)
        else:
            data = store.config_get(args.name)
            if data is None:
                raise ApgError("APG_CONFIG_MISSING", f"config {args.name} does not exist")
            parent_key, _, last = args.key.rpartition(".")
            parent = _get_path(data, parent_key, args.name) if parent_key else data
            if not isinstance(parent, dict) or last not in parent:
                raise ApgError("APG_CONFIG_MISSING", f"config {args.name} has no key {args.key}")
            del parent[last]
            site.config_save(store, args.name, data)
    _note(f"Deleted {args.name}{':' + args.key if args.key else ''}.")
    return 0


@command("config:list", "config names, optionally under a prefix", arg("prefix", nargs="?", default=""),
         aliases=["cls"], fmt="string")
def _config_list(site: EmbeddedSite, args: argparse.Namespace) -> int:
    names = site.read_state(StateQuery(config_prefixes=(args.prefix,))).config_names[args.prefix]
    emit(names, args.format)
    return 0


@command("config:import", "make active config equal the sync directory",
         arg("--source", help="directory (default: config/sync)"), YES, aliases=["cim"])
def _config_import(site: EmbeddedSite, args: argparse.Namespace) -> int:
    # Lazy for start-up time: only the sync-directory commands need config_sync.
    from ai_proving_ground.sites.embedded import config_sync

    source, root = config_sync.chosen(args.source, site.layout.config_sync, site.approot)
    changes = site.config_import(config_sync.read_directory(source, root))
    counts = ", ".join(f"{len(v)} {k}" for k, v in changes.items())
    _note(f"Config imported from {source}: {counts}.")
    return 0


@command("config:export", "write active config to the sync directory",
         arg("--destination", help="directory (default: config/sync)"), YES, aliases=["cex"])
def _config_export(site: EmbeddedSite, args: argparse.Namespace) -> int:
    # Lazy for start-up time: only the sync-directory commands need config_sync.
    from ai_proving_ground.sites.embedded import config_sync

    destination, root = config_sync.chosen(args.destination, site.layout.config_sync, site.approot)
    changes = config_sync.write_directory(destination, site.all_config(), root)
    _note(f"Config exported to {destination}: {len(changes['written'])} written, "
          f"{len(changes['removed'])} removed.")
    return 0


@command("field:create", "create a field as Field UI does (drush field:create)",
         arg("entity_type"), arg("bundle"), arg("--field-name", required=True),
         arg("--field-type", required=True), arg("--field-label"), arg("--field-description", default=""),
         arg("--cardinality", type=int, default=1), arg("--is-required", action="store_true"),
         arg("--storage-settings", default="{}"), arg("--field-settings", default="{}"), YES)
def _field_create(site: EmbeddedSite, args: argparse.Namespace) -> int:
    # Lazy for start-up time: the builder imports uuid, which every other command can skip.
    from ai_proving_ground.sites.embedded.field_api import FieldRequest, create_field

    request = FieldRequest(args.entity_type, args.bundle, args.field_name, args.field_type,
                           args.field_label or args.field_name, args.cardinality, args.is_required,
                           description=args.field_description,
                           storage_settings=_parse_value(args.storage_settings, "yaml"),
                           field_settings=_parse_value(args.field_settings, "yaml"))
    with site.session() as store:
        saved = create_field(store, request, site.config_save)
    _note(f"Saved {', '.join(saved)}.")
    return 0


@command("entity:create", "create an entity", arg("entity_type"), arg("target", nargs="?", help="bundle"),
         arg("--uuid"), *ENTITY_VALUES, fmt="json")
def _entity_create(site: EmbeddedSite, args: argparse.Namespace) -> int:
    values = _entity_values(args)
    with site.session() as store:
        record = site.create_entity(store, args.entity_type, args.target, values, args.uuid)
    emit({"id": record.id, "uuid": record.uuid, "bundle": record.bundle, "label": record.label},
         args.format)
    return 0


@command("entity:update", "update an entity", arg("entity_type"), arg("target", help="id or uuid"),
         *ENTITY_VALUES, fmt="json")
def _entity_update(site: EmbeddedSite, args: argparse.Namespace) -> int:
    values = _entity_values(args)
    with site.session() as store:
        record = site.update_entity(store, site.find_entity(store, args.entity_type, args.target),
                                    values)
    emit({"id": record.id, "uuid": record.uuid, "bundle": record.bundle, "label": record.label},
         args.format)
    return 0


@command("entity:delete", "delete entities by id or uuid", arg("entity_type"), arg("keys", nargs="+"),
         aliases=["edel"])
def _entity_delete(site: EmbeddedSite, args: argparse.Namespace) -> int:
    with site.session() as store:
        for key in args.keys:
            store.entity_delete(site.find_entity(store, args.entity_type, key).uuid)
    _note(f"Deleted {len(args.keys)} {args.entity_type} entit{'y' if len(args.keys) == 1 else 'ies'}.")
    return 0


@command("entity:get", "print one entity", arg("entity_type"), arg("key"), fmt="yaml")
def _entity_get(site: EmbeddedSite, args: argparse.Namespace) -> int:
    with site.session() as store:
        record = site.find_entity(store, args.entity_type, args.key)
    emit({"id": record.id, "uuid": record.uuid, "bundle": record.bundle, "label": record.label,
          "status": record.status, "values": export_values(record)}, args.format)
    return 0


@command("entity:list", "list entities of a type", arg("entity_type"), arg("--bundle"), fmt="table")
def _entity_list(site: EmbeddedSite, args: argparse.Namespace) -> int:
    with site.session() as store:
        records = store.entities_of(args.entity_type, args.bundle)
    emit({str(r.id): {"id": r.id, "uuid": r.uuid, "bundle": r.bundle, "label": r.label,
                      "status": r.status} for r in records}, args.format)
    return 0


@command("views:execute", "execute a view display and print its rows in order", arg("view"),
         arg("display", nargs="?", default="default"),
         arg("view_args", nargs="?", default="",
             help="contextual filter values, comma-separated (as drush takes them)"),
         arg("--count", action="store_true", help="print the number of rows only"),
         aliases=["vex"], fmt="table")
def _views_execute(site: EmbeddedSite, args: argparse.Namespace) -> int:
    arguments = tuple(args.view_args.split(",")) if args.view_args else ()
    query = ViewQuery(args.view, args.display, arguments)
    result = site.read_state(StateQuery(views=(query,))).views[0]
    if result.error:
        raise ApgError("APG_VIEW_FAILED", result.error)
    for handler in result.broken:
        print(f"APG_VIEW_BROKEN_HANDLER {handler}: Views replaced it with its Broken handler "
              "(no such field); fix the table/field it names", file=stderr())
    for message in result.messages:
        print(f"APG_VIEW_INVALID {message}", file=stderr())
    if result.outcome != "rows":
        raise ApgError("APG_VIEW_FAILED", f"a visitor of {args.view}/{args.display} gets: "
                       f"{result.outcome}")
    if args.count:
        print(len(result.rows), file=stdout())
        return 0
    emit([{"id": r.id, "uuid": r.uuid, "label": r.label} for r in result.rows], args.format)
    return 0


@command("sql:query", "run SQL against the site database (tab-separated rows)", arg("query"),
         aliases=["sqlq"])
def _sql_query(site: EmbeddedSite, args: argparse.Namespace) -> int:
    with site.session() as store:
        try:
            rows = store.conn.execute(args.query).fetchall()
        except sqlite3.Error as exc:
            raise ApgError("APG_SQL_FAILED", f"{exc}") from None
    for row in rows:
        print("\t".join("NULL" if v is None else str(v) for v in tuple(row)), file=stdout())
    return 0


@command("recipe", "apply a recipe directory", arg("path"), aliases=["recipe:apply"])
def _recipe(site: EmbeddedSite, args: argparse.Namespace) -> int:
    report = site.apply_recipe(Path(args.path))
    _note(f"{report.recipe} applied: {len(report.modules_installed)} modules installed, "
          f"{len(report.config_written)} config objects written, "
          f"{len(report.content_created)} entities created, "
          f"{len(report.content_skipped)} skipped (already present).")
    return 0


@command("updatedb:status", "list pending database updates", aliases=["updbst"], fmt="table")
def _updatedb_status(site: EmbeddedSite, args: argparse.Namespace) -> int:
    pending = site.read_state(StateQuery(pending_updates=True)).pending_updates
    if not pending:
        _note("No database updates required.")
        return 0
    emit({p.update_id: {"module": p.module, "update_id": int(p.update_id.rsplit("_", 1)[-1]),
                        "description": p.description, "type": "hook_update_n"} for p in pending},
         args.format)
    return 0


@command("updatedb", "run pending database updates", YES, aliases=["updb"])
def _updatedb(site: EmbeddedSite, args: argparse.Namespace) -> int:
    ran = site.run_updates()
    _note(f"Ran {len(ran)} update(s)." if ran else "No database updates required.")
    return 0


# ---------------------------------------------------------------------------- helpers


def _parse_value(raw: str, input_format: str) -> Any:
    if input_format == "string":
        return raw
    try:
        return json.loads(raw) if input_format == "json" else yamlio.loads(raw)
    except (json.JSONDecodeError, ValueError) as exc:
        raise UsageError(f"value is not valid {input_format}: {exc}") from None
    except Exception as exc:  # yaml.YAMLError, without importing yaml here
        raise UsageError(f"value is not valid {input_format}: {exc}") from None


def _get_path(data: Any, dotted: str, name: str) -> Any:
    cursor = data
    for part in dotted.split("."):
        if not isinstance(cursor, dict) or part not in cursor:
            raise ApgError("APG_CONFIG_MISSING", f"config {name} has no key {dotted}")
        cursor = cursor[part]
    return cursor


def _entity_values(args: argparse.Namespace) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if args.values:
        parsed = _parse_value(args.values, "yaml")
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


if __name__ == "__main__":
    raise SystemExit(main())
