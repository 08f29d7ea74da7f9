"""Result rows as Views' SQL makes them: one per entity and joined field item.

Every field table a filter, sort or contextual filter reads is LEFT JOINed, so an entity with
three tags yields three rows (one with NULL when it has none), unless the query is DISTINCT.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ai_proving_ground.sites.base import EntityRecord
from ai_proving_ground.sites.embedded.views.columns import Accessor

_NO_JOINS: Mapping[str, int | None] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Row:
    """One result row: an entity and, per joined field table, the item delta (None = NULL)."""

    entity: EntityRecord
    deltas: Mapping[str, int | None] = field(default_factory=lambda: _NO_JOINS)


def row_reader(accessor: Accessor) -> Callable[[Row], list[Any]]:
    """``row_values`` for one accessor, resolved once (it runs for every row)."""
    if accessor.table is None:
        get = accessor.get
        return lambda row: get(row.entity)
    table, item = accessor.table, accessor.item

    def read(row: Row) -> list[Any]:
        delta = row.deltas.get(table)
        if delta is None:
            return []
        value = item(row.entity, delta)
        return [] if value is None else [value]

    return read


def row_values(accessor: Accessor, row: Row) -> list[Any]:
    """What ``accessor`` reads in ``row``: its joined item, or every value of a base column."""
    if accessor.table is None:
        return accessor.get(row.entity)
    delta = row.deltas.get(accessor.table)
    if delta is None:
        return []
    value = accessor.item(row.entity, delta)
    return [] if value is None else [value]


def expand(entities: Iterable[EntityRecord], entity_type: str,
           tables: Sequence[str]) -> list[Row]:
    """Every row the joins of ``tables`` (``<entity_type>__<field>``) give, entity by entity."""
    if not tables:
        return [Row(e) for e in entities]
    prefix = f"{entity_type}__"
    fields = [t.removeprefix(prefix) for t in tables]
    rows: list[Row] = []
    shared: dict[tuple[int | None, ...], Mapping[str, int | None]] = {}
    for entity in entities:
        choices = [range(len(entity.fields.get(f, ()))) or (None,) for f in fields]
        for combo in itertools.product(*choices):
            # Most rows join one item or none: their delta maps are shared, not rebuilt.
            deltas = shared.get(combo)
            if deltas is None:
                deltas = shared[combo] = dict(zip(tables, combo, strict=True))
            rows.append(Row(entity, deltas))
    return rows
