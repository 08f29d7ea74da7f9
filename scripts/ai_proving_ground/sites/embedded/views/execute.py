"""Run one display of a view: display options, filters, sorts, then the pager."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ai_proving_ground.sites.base import EntityRecord, ViewResult, ViewRow
from ai_proving_ground.sites.embedded.views.columns import entity_type_of
from ai_proving_ground.sites.embedded.views.context import Context
from ai_proving_ground.sites.embedded.views.display import display_options
from ai_proving_ground.sites.embedded.views.filters import build_matcher
from ai_proving_ground.sites.embedded.views.pager import check_arguments, pager_window
from ai_proving_ground.sites.embedded.views.sorts import build_sorts, sort_entities


def execute_view(
    view_id: str, view: Mapping[str, Any], display_id: str, entities: Iterable[EntityRecord]
) -> ViewResult:
    """Run one display of ``view`` over every entity of its base type.

    The whole config is checked before any entity is looked at, so a broken view fails the
    same way on an empty site as on a full one.
    """
    ctx = Context(view_id, display_id)
    base_table = view.get("base_table")
    entity_type = entity_type_of(base_table)
    if entity_type is None or not isinstance(base_table, str):
        raise ctx.error(
            "base_table",
            f"{base_table!r} is not an entity data table"
            " (expected node_field_data or <entity_type>_field_data)",
        )
    options = display_options(ctx, view)
    check_arguments(ctx, options)
    matches = build_matcher(ctx, options, entity_type, base_table)
    sorts = build_sorts(ctx, options, entity_type, base_table)
    offset, limit = pager_window(ctx, options)

    matched = [e for e in entities if e.entity_type == entity_type and matches(e)]
    ordered = sort_entities(matched, sorts)
    end = None if limit is None else offset + limit
    rows = tuple(ViewRow(e.id, e.uuid, e.label) for e in ordered[offset:end])
    return ViewResult(view_id, display_id, rows=rows, total_rows=max(0, len(ordered) - offset))
