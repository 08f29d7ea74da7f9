"""A display's filters and filter groups as one predicate over result rows.

A filter on a field table reads the item its row joined (one SQL row per item), except the
many-to-one ``and`` / ``not`` operators, which Views builds as per-value joins over the whole
entity. A filter Views would replace with its Broken handler adds no condition; one whose
operator its plugin lacks adds none either, as Drupal's query() does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ai_proving_ground.sites.embedded.views.columns import Accessor, column_accessor
from ai_proving_ground.sites.embedded.views.compare import blank
from ai_proving_ground.sites.embedded.views.context import (
    Context,
    Predicate,
    ValueProblem,
    ViewFailure,
    mapping,
)
from ai_proving_ground.sites.embedded.views.operators import (
    IN_FAMILIES,
    operator_factory,
    plugin_family,
    substitute_tokens,
)
from ai_proving_ground.sites.embedded.views.rows import Row, row_reader

# Operators that read the numeric filter's {value, min, max} array.
_NO_VALUE_OPERATORS = frozenset({"empty", "not empty"})
# Many-to-one operators Views builds from joins of their own: they judge the whole entity.
_ENTITY_LEVEL = frozenset({"and", "not"})
# PHP 8 reading $this->value['value'] on a string.
_STRING_OFFSET = "TypeError: Cannot access offset of type string on string"


@dataclass(frozen=True)
class _Filter:
    group: str
    accessor: Accessor
    test: Predicate
    per_row: bool

    def predicate(self) -> Callable[[Row], bool]:
        test = self.test
        if self.per_row:
            read = row_reader(self.accessor)
            return lambda row: test(read(row))
        get = self.accessor.get
        return lambda row: test(get(row.entity))

    @property
    def joined_table(self) -> str | None:
        return self.accessor.table if self.per_row else None


def _grouped_choice(ctx: Context, key: str, handler: Mapping[str, Any]) -> tuple[Any, Any]:
    """The operator and value of a grouped exposed filter's choice: the visitor's, else the
    default."""
    info = mapping(ctx, f"{key}.group_info", handler.get("group_info"))
    choice = ctx.exposed.get(str(info.get("identifier")), info.get("default_group", "All"))
    if blank(choice):
        return None, None
    items = mapping(ctx, f"{key}.group_info.group_items", info.get("group_items"))
    item = next((v for k, v in items.items() if str(k) == str(choice)), None)
    if not isinstance(item, Mapping):
        raise ctx.error(f"{key}.group_info.default_group", f"no group item {choice!r}")
    return item.get("operator"), item.get("value")


def _exposed_value(handler: Mapping[str, Any], configured: Any, typed: str) -> Any:
    """What a visitor's input makes of a filter's value, in the shape its plugin reads: the
    numeric filter's ``value`` key, the in-operator's {key: key} selection, else the text."""
    family = plugin_family(handler)
    if family in ("numeric", "date"):
        return {**(configured if isinstance(configured, Mapping) else {}), "value": typed}
    if family in IN_FAMILIES:
        return {} if blank(typed) else {typed: typed}
    return typed


def _visitor_input(ctx: Context, handler: Mapping[str, Any], operator: Any,
                   value: Any) -> tuple[Any, Any]:
    """A non-grouped exposed filter's operator and value after the visitor's input (Drupal's
    acceptExposedInput): the value under the filter's identifier, the operator under its
    operator_id when the operator is exposed; what the visitor left out keeps its default."""
    expose = handler.get("expose")
    if not isinstance(expose, Mapping):
        return operator, value
    identifier = expose.get("identifier")
    if isinstance(identifier, str) and identifier in ctx.exposed:
        value = _exposed_value(handler, value, ctx.exposed[identifier])
    operator_id = expose.get("operator_id")
    if expose.get("use_operator") and isinstance(operator_id, str) and operator_id in ctx.exposed:
        operator = ctx.exposed[operator_id]
    return operator, value


def _configured(ctx: Context, key: str, handler: Mapping[str, Any]) -> tuple[Any, Any] | None:
    """The operator and value a filter runs with, or None when it adds no condition."""
    operator, value = handler.get("operator"), handler.get("value")
    exposed = bool(handler.get("exposed"))
    if exposed and handler.get("is_grouped"):
        operator, value = _grouped_choice(ctx, key, handler)
        if operator is None and value is None:
            return None
    elif exposed:
        operator, value = _visitor_input(ctx, handler, operator, value)
    if handler.get("plugin_id") == "node_status":
        return "=", "1"  # "published or admin": for anonymous, published
    # Drupal drops an exposed filter whose value (typed, else its default) is empty.
    if exposed and operator not in _NO_VALUE_OPERATORS and blank(value):
        return None
    return operator, value


def _build_filter(
    ctx: Context, key: str, handler: Mapping[str, Any], entity_type: str, base_table: str,
    relationships: Mapping[str, Any],
) -> _Filter | None:
    accessor = column_accessor(ctx, key, handler, entity_type, base_table, relationships)
    if accessor is None:
        ctx.broken.append(f"filter.{key.removeprefix('filters.')}")
        return None
    configured = _configured(ctx, key, handler)
    if configured is None:
        return None
    operator, value = configured
    factory = operator_factory(ctx, key, handler, operator, accessor.allow_empty)
    if factory is None:
        return None
    family = plugin_family(handler)
    if family in ("numeric", "date") and operator not in _NO_VALUE_OPERATORS and isinstance(
            value, str):
        raise ViewFailure(_STRING_OFFSET)
    try:
        test = factory(substitute_tokens(value))
    except ValueProblem as exc:
        if family in IN_FAMILIES:
            return None  # no values selected: opSimple adds no condition
        raise ctx.error(f"{key}.value", str(exc)) from None
    per_row = not (family == "many_to_one" and operator in _ENTITY_LEVEL)
    return _Filter(str(handler.get("group", 1)), accessor, test, per_row)


_CONJUNCTIONS: dict[str, Callable[[Iterable[bool]], bool]] = {"AND": all, "OR": any}


def _conjunction(ctx: Context, key: str, value: Any) -> Callable[[Iterable[bool]], bool]:
    conjunction = _CONJUNCTIONS.get(str(value).upper()) if value is not None else all
    if conjunction is None:
        raise ctx.error(key, f"{value!r} is not AND or OR")
    return conjunction


@dataclass(frozen=True)
class Matcher:
    """The display's WHERE clause, and the field tables it joins one row per item."""

    matches: Callable[[Row], bool]
    tables: tuple[str, ...]


def build_matcher(
    ctx: Context, options: Mapping[str, Any], entity_type: str, base_table: str
) -> Matcher:
    filters = mapping(ctx, "filters", options.get("filters"))
    relationships = mapping(ctx, "relationships", options.get("relationships"))
    groups_config = mapping(ctx, "filter_groups", options.get("filter_groups"))
    top = _conjunction(ctx, "filter_groups.operator", groups_config.get("operator"))
    group_ops = {
        str(g): _conjunction(ctx, f"filter_groups.groups.{g}", op)
        for g, op in mapping(ctx, "filter_groups.groups", groups_config.get("groups")).items()
    }
    by_group: dict[str, list[_Filter]] = {}
    for filter_id, handler in filters.items():
        key = f"filters.{filter_id}"
        built = _build_filter(ctx, key, mapping(ctx, key, handler), entity_type, base_table,
                              relationships)
        if built is not None:
            by_group.setdefault(built.group, []).append(built)

    # Groups without an active filter add no condition, as in Views' SQL builder.
    groups = [(group_ops.get(group, all), [f.predicate() for f in members])
              for group, members in by_group.items()]

    def matches(row: Row) -> bool:
        return top(combine(test(row) for test in tests) for combine, tests in groups)

    if not groups:
        return Matcher(lambda row: True, ())

    tables = [f.joined_table for members in by_group.values() for f in members]
    return Matcher(matches, tuple(dict.fromkeys(t for t in tables if t is not None)))
