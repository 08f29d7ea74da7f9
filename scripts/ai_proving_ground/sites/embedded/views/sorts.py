"""A display's sorts as one stable multi-key order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ai_proving_ground.sites.base import EntityRecord
from ai_proving_ground.sites.embedded.views.columns import Accessor, column_accessor
from ai_proving_ground.sites.embedded.views.compare import fold_case, to_number
from ai_proving_ground.sites.embedded.views.context import Context, mapping

SortKey = tuple[int, float, str]


@dataclass(frozen=True)
class _Sort:
    accessor: Accessor
    descending: bool

    def key(self, entity: EntityRecord) -> SortKey:
        values = self.accessor.get(entity)
        if not values:
            return (0, 0.0, "")  # NULL sorts first ascending, as in MySQL
        value = values[0]
        number = None if self.accessor.textual else to_number(value)
        return (1, number, "") if number is not None else (2, 0.0, fold_case(value))


def build_sorts(
    ctx: Context, options: Mapping[str, Any], entity_type: str, base_table: str
) -> list[_Sort]:
    sorts = []
    for sort_id, handler in mapping(ctx, "sorts", options.get("sorts")).items():
        key = f"sorts.{sort_id}"
        handler = mapping(ctx, key, handler)
        order = str(handler.get("order") or "ASC").upper()
        if order not in ("ASC", "DESC"):
            raise ctx.error(f"{key}.order", f"{handler.get('order')!r} is not ASC or DESC")
        accessor = column_accessor(ctx, key, handler, entity_type, base_table)
        sorts.append(_Sort(accessor, descending=order == "DESC"))
    return sorts


def sort_entities(entities: list[EntityRecord], sorts: list[_Sort]) -> list[EntityRecord]:
    # Stable sorts applied last-to-first compose into one multi-key order; sorting by id
    # first makes ties deterministic.
    ordered = sorted(entities, key=lambda e: e.id)
    for sort in reversed(sorts):
        ordered.sort(key=sort.key, reverse=sort.descending)
    return ordered

