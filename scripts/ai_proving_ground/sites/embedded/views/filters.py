"""A display's filters and filter groups as one predicate over entities."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ai_proving_ground.sites.base import EntityRecord
from ai_proving_ground.sites.embedded.views.columns import column_accessor
from ai_proving_ground.sites.embedded.views.compare import blank
from ai_proving_ground.sites.embedded.views.context import Context, Predicate, ValueProblem, mapping
from ai_proving_ground.sites.embedded.views.operators import operator_factory, substitute_tokens


@dataclass(frozen=True)
class _Filter:
    group: str
    values: Callable[[EntityRecord], list[Any]]
    test: Predicate

    def matches(self, entity: EntityRecord) -> bool:
        return self.test(self.values(entity))


def _grouped_choice(ctx: Context, key: str, handler: Mapping[str, Any]) -> tuple[Any, Any]:
    """The operator and value of a grouped exposed filter's default choice."""
    info = mapping(ctx, f"{key}.group_info", handler.get("group_info"))
    choice = info.get("default_group", "All")
    if blank(choice):
        return None, None
    items = mapping(ctx, f"{key}.group_info.group_items", info.get("group_items"))
    item = next((v for k, v in items.items() if str(k) == str(choice)), None)
    if not isinstance(item, Mapping):
        raise ctx.error(f"{key}.group_info.default_group", f"no group item {choice!r}")
    return item.get("operator"), item.get("value")


def _build_filter(
    ctx: Context, key: str, handler: Mapping[str, Any], entity_type: str, base_table: str
) -> _Filter | None:
    accessor = column_accessor(ctx, key, handler, entity_type, base_table)
    exposed = bool(handler.get("exposed"))
    operator, value = handler.get("operator"), handler.get("value")
    if exposed and handler.get("is_grouped"):
        operator, value = _grouped_choice(ctx, key, handler)
        if operator is None and value is None:
            return None
    factory = operator_factory(ctx, key, handler, operator)
    # Without exposed input Drupal drops an exposed filter whose default is empty.
    if exposed and operator not in ("empty", "not empty") and blank(value):
        return None
    try:
        test = factory(substitute_tokens(value))
    except ValueProblem as exc:
        raise ctx.error(f"{key}.value", str(exc)) from None
    return _Filter(str(handler.get("group", 1)), accessor.get, test)


_CONJUNCTIONS: dict[str, Callable[[Iterable[bool]], bool]] = {"AND": all, "OR": any}


def _conjunction(ctx: Context, key: str, value: Any) -> Callable[[Iterable[bool]], bool]:
    conjunction = _CONJUNCTIONS.get(str(value).upper()) if value is not None else all
    if conjunction is None:
        raise ctx.error(key, f"{value!r} is not AND or OR")
    return conjunction


def build_matcher(
    ctx: Context, options: Mapping[str, Any], entity_type: str, base_table: str
) -> Callable[[EntityRecord], bool]:
    filters = mapping(ctx, "filters", options.get("filters"))
    groups_config = mapping(ctx, "filter_groups", options.get("filter_groups"))
    top = _conjunction(ctx, "filter_groups.operator", groups_config.get("operator"))
    group_ops = {
        str(g): _conjunction(ctx, f"filter_groups.groups.{g}", op)
        for g, op in mapping(ctx, "filter_groups.groups", groups_config.get("groups")).items()
    }
    by_group: dict[str, list[_Filter]] = {}
    for filter_id, handler in filters.items():
        key = f"filters.{filter_id}"
        built = _build_filter(ctx, key, mapping(ctx, key, handler), entity_type, base_table)
        if built is not None:
            by_group.setdefault(built.group, []).append(built)

    def matches(entity: EntityRecord) -> bool:
        # Groups without an active filter add no condition, as in Views' SQL builder.
        verdicts = [
            group_ops.get(group, all)(f.matches(entity) for f in members)
            for group, members in by_group.items()
        ]
        return top(verdicts) if verdicts else True

    return matches

