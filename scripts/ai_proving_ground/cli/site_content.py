"""``apg site`` content commands: entities, views execution and SQL."""

from __future__ import annotations

import argparse
import sqlite3

from ai_proving_ground.cli.common import emit
from ai_proving_ground.cli.site_commands import (
    ENTITY_VALUES,
    arg,
    command,
    entity_summary,
    entity_values,
    note,
)
from ai_proving_ground.errors import ApgError
from ai_proving_ground.report import stderr, stdout
from ai_proving_ground.sites.base import StateQuery, ViewQuery
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.sites.embedded.entity_types import export_values


@command("entity:create", "create an entity", arg("entity_type"), arg("target", nargs="?", help="bundle"),
         arg("--uuid"), *ENTITY_VALUES, fmt="json")
def _entity_create(site: EmbeddedSite, args: argparse.Namespace) -> int:
    values = entity_values(args)
    with site.session() as store:
        record, dropped = site.create_entity_via_api(store, args.entity_type, args.target,
                                                     values, args.uuid)
    # The design refuses an undefined field, but its first rule is Drupal's verdict for the
    # same build, and Drupal's entity API saves the entity without the value (golden case
    # 055): store what Drupal stores, and say what was dropped.
    for name in dropped:
        print(f"APG_ENTITY_FIELD_DROPPED {name}: {args.entity_type} bundle {record.bundle} has"
              " no working field of that name, so Drupal saves the entity without this value;"
              " create the field (field:create) and set the value again", file=stderr())
    emit(entity_summary(record), args.format, args.fields)
    return 0


@command("entity:update", "update an entity", arg("entity_type"), arg("target", help="id or uuid"),
         *ENTITY_VALUES, fmt="json")
def _entity_update(site: EmbeddedSite, args: argparse.Namespace) -> int:
    values = entity_values(args)
    with site.session() as store:
        record = site.update_entity(store, site.find_entity(store, args.entity_type, args.target),
                                    values)
    emit(entity_summary(record), args.format, args.fields)
    return 0


@command("entity:delete", "delete entities by id or uuid", arg("entity_type"), arg("keys", nargs="+"),
         aliases=["edel"])
def _entity_delete(site: EmbeddedSite, args: argparse.Namespace) -> int:
    with site.session() as store:
        for key in args.keys:
            store.entity_delete(site.find_entity(store, args.entity_type, key).uuid)
    note(f"Deleted {len(args.keys)} {args.entity_type} entit{'y' if len(args.keys) == 1 else 'ies'}.")
    return 0


@command("entity:get", "print one entity", arg("entity_type"), arg("key"), fmt="yaml")
def _entity_get(site: EmbeddedSite, args: argparse.Namespace) -> int:
    with site.session() as store:
        record = site.find_entity(store, args.entity_type, args.key)
    emit({**entity_summary(record), "status": record.status, "values": export_values(record)},
         args.format, args.fields)
    return 0


@command("entity:list", "list entities of a type", arg("entity_type"), arg("--bundle"), fmt="table")
def _entity_list(site: EmbeddedSite, args: argparse.Namespace) -> int:
    with site.session() as store:
        records = store.entities_of(args.entity_type, args.bundle)
    emit({str(r.id): {**entity_summary(r), "status": r.status} for r in records}, args.format, args.fields)
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
    emit([{"id": r.id, "uuid": r.uuid, "label": r.label} for r in result.rows], args.format, args.fields)
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
