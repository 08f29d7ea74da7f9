"""A display's sorts as one stable multi-key order over result rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ai_proving_ground.sites.embedded.views.columns import Accessor, column_accessor
from ai_proving_ground.sites.embedded.views.compare import fold_case, to_number
from ai_proving_ground.sites.embedded.views.context import Context, mapping
from ai_proving_ground.sites.embedded.views.rows import Row, row_reader

SortKey = tuple[int, float, str]


@dataclass(frozen=True)
class Sort:
    accessor: Accessor
    descending: bool

    def key_function(self) -> Callable[[Row], SortKey]:
        read, textual = row_reader(self.accessor), self.accessor.textual

        def key(row: Row) -> SortKey:
            values = read(row)
            if not values:
                return (0, 0.0, "")  # NULL sorts first ascending, as in MySQL
            value = values[0]
            number = None if textual else to_number(value)
            return (1, number, "") if number is not None else (2, 0.0, fold_case(value))

        return key


def build_sorts(
    ctx: Context, options: Mapping[str, Any], entity_type: str, base_table: str
) -> list[Sort]:
    sorts = []
    relationships = mapping(ctx, "relationships", options.get("relationships"))
    for sort_id, handler in mapping(ctx, "sorts", options.get("sorts")).items():
        key = f"sorts.{sort_id}"
        handler = mapping(ctx, key, handler)
        accessor = column_accessor(ctx, key, handler, entity_type, base_table, relationships)
        if accessor is None:
            ctx.broken.append(f"sort.{sort_id}")  # Broken handler: no ORDER BY
            continue
        # The database layer reads anything but DESC (in any case) as ASC.
        descending = str(handler.get("order") or "ASC").upper() == "DESC"
        sorts.append(Sort(accessor, descending=descending))
    return sorts


def sort_rows(rows: list[Row], sorts: list[Sort]) -> list[Row]:
    """Rows in the display's order; ties keep insertion order (entity id, then item delta).

    Stable sorts applied last-to-first compose into one multi-key order. When the last key is
    descending, ties come out in descending id, as MariaDB returned them: the order of a tie is
    the database's, and a check must not rest on it (the dataset validator warns).
    """
    ordered = sorted(rows, key=lambda r: r.entity.id,
                     reverse=bool(sorts) and sorts[-1].descending)
    for sort in reversed(sorts):
        ordered.sort(key=sort.key_function(), reverse=sort.descending)
    return ordered


def tie_runs(rows: list[Row], sorts: list[Sort]) -> tuple[tuple[int, int], ...]:
    """(start, end) runs of rows of two or more entities with equal sort keys (no sorts: one).

    Rows of one entity (one per joined item) tie harmlessly: they list the same entity.
    """
    runs: list[tuple[int, int]] = []
    start = 0
    functions = [s.key_function() for s in sorts]
    keys = [tuple(key(r) for key in functions) for r in rows]
    for index in range(1, len(rows) + 1):
        if index == len(rows) or keys[index] != keys[start]:
            if len({r.entity.id for r in rows[start:index]}) > 1:
                runs.append((start, index))
            start = index
    return tuple(runs)
