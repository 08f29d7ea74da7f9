"""Run one display of a view: display options, joins, filters, sorts, then the pager."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ai_proving_ground.sites.base import EntityRecord, ViewResult, ViewRow
from ai_proving_ground.sites.embedded.views.arguments import ABORTS, build_arguments
from ai_proving_ground.sites.embedded.views.columns import entity_type_of
from ai_proving_ground.sites.embedded.views.context import Context, ViewFailure, ViewSchema, mapping
from ai_proving_ground.sites.embedded.views.display import display_options
from ai_proving_ground.sites.embedded.views.filters import build_matcher
from ai_proving_ground.sites.embedded.views.pager import build_pager
from ai_proving_ground.sites.embedded.views.rows import Row, expand
from ai_proving_ground.sites.embedded.views.sorts import build_sorts, sort_rows, tie_runs
from ai_proving_ground.sites.embedded.views.validate import view_messages

RENDER_ERROR = "render error (HTTP 500)"


def _broken_fields(ctx: Context, options: Mapping[str, Any], entity_type: str) -> list[str]:
    """Display fields on a field table with no field storage: Views renders them Broken."""
    if ctx.schema is None:
        return []
    prefix = f"{entity_type}__"
    broken = []
    for field_id, handler in mapping(ctx, "fields", options.get("fields")).items():
        table = handler.get("table") if isinstance(handler, Mapping) else None
        if (isinstance(table, str) and table.startswith(prefix)
                and table.removeprefix(prefix) not in ctx.schema.fields):
            broken.append(f"field.{field_id}")
    return broken


def _distinct(options: Mapping[str, Any]) -> bool:
    query = options.get("query")
    settings = query.get("options") if isinstance(query, Mapping) else None
    return bool(settings.get("distinct")) if isinstance(settings, Mapping) else False


def _first_per_entity(rows: list[Row]) -> list[Row]:
    seen: set[int] = set()
    kept = []
    for row in rows:
        if row.entity.id not in seen:
            seen.add(row.entity.id)
            kept.append(row)
    return kept


def execute_view(
    view_id: str, view: Mapping[str, Any], display_id: str, entities: Iterable[EntityRecord],
    *, arguments: Sequence[str] = (), schema: ViewSchema | None = None,
    exposed: Mapping[str, str] | None = None, pager_page: int = 0,
) -> ViewResult:
    """Run one display of ``view`` over every entity of its base type, as Drupal would.

    The whole config is checked before any entity is looked at, so a broken view fails the
    same way on an empty site as on a full one. ``schema`` (the site's fields and bundles)
    lets handlers on missing fields turn Broken as on Drupal; without it they are errors.
    ``exposed`` is a visitor's exposed form input and ``pager_page`` the pager page asked for.
    """
    ctx = Context(view_id, display_id, schema, exposed=dict(exposed or {}))
    base_table = view.get("base_table")
    entity_type = entity_type_of(base_table)
    if entity_type is None or not isinstance(base_table, str):
        raise ctx.error(
            "base_table",
            f"{base_table!r} is not an entity data table"
            " (expected node_field_data or <entity_type>_field_data)",
        )
    displays = mapping(ctx, "display", view.get("display"))
    if display_id not in displays:
        known = ", ".join(str(d) for d in displays)
        raise ctx.error("display", f"no display {display_id!r}; known displays: {known}")
    messages = view_messages(ctx, view, entity_type, base_table) if schema is not None else ()
    options = display_options(ctx, view, display_id)
    try:
        matcher = build_matcher(ctx, options, entity_type, base_table)
        sorts = build_sorts(ctx, options, entity_type, base_table)
        pager = build_pager(ctx, options)
        args = build_arguments(ctx, options, entity_type, base_table, arguments)
    except ViewFailure as exc:
        return ViewResult(view_id, display_id, error=str(exc), outcome="exception",
                          messages=messages, broken=tuple(ctx.broken))
    broken_fields = _broken_fields(ctx, options, entity_type)
    broken = (*ctx.broken, *broken_fields)
    if args.abort is not None:
        return ViewResult(view_id, display_id, outcome=ABORTS[args.abort], messages=messages,
                          broken=broken)
    tables = tuple(dict.fromkeys((*matcher.tables, *args.tables,
                                  *(s.accessor.table for s in sorts if s.accessor.table))))
    candidates = (e for e in entities if e.entity_type == entity_type)
    rows = [r for r in expand(candidates, entity_type, tables)
            if matcher.matches(r) and args.matches(r)]
    ordered = sort_rows(rows, sorts)
    if _distinct(options):
        ordered = _first_per_entity(ordered)
    start, end = pager.window(len(ordered), pager_page)
    page = ordered[start:end]
    shown = tuple(ViewRow(r.entity.id, r.entity.uuid, r.entity.label) for r in page)
    return ViewResult(view_id, display_id, rows=shown, total_rows=pager.total_rows(len(ordered)),
                      outcome=RENDER_ERROR if broken_fields else "rows", messages=messages,
                      broken=broken, ties=tie_runs(page, sorts))
