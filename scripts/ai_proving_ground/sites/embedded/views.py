"""Execute a Drupal ``views.view.*`` config object over entity records, as Views would.

The embedded site has no SQL schema per field, so this module answers the part of Views a
grader looks at: which entities a display lists, in which order, and how many match. The
caller passes every entity of the view's base type; filtering, sorting and paging happen
here. Anything the embedded site cannot reproduce faithfully (relationships, contextual
filters that need an argument, relative dates) raises :class:`ViewError` rather than
returning rows Drupal would not.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ai_proving_ground.sites.base import EntityRecord, ViewResult, ViewRow

__all__ = ["ViewError", "base_entity_type", "execute_view"]


class ViewError(Exception):
    """A view config that cannot execute; the message names the view, display and key."""


# A predicate over the values one entity holds for a field (empty list = SQL NULL).
Predicate = Callable[[list[Any]], bool]
# Builds a predicate from a filter's configured value; raises _ValueProblem on bad values.
OpFactory = Callable[[Any], Predicate]


class _ValueProblem(ValueError):
    """A filter value an operator cannot use; re-raised as ViewError with its key."""


@dataclass(frozen=True)
class _Context:
    view_id: str
    display_id: str

    def error(self, key: str, message: str) -> ViewError:
        return ViewError(f"view {self.view_id!r} display {self.display_id!r}: {key}: {message}")


# ---------------------------------------------------------------------------- base table

# Tables whose name does not follow the ``<type>_field_data`` pattern.
_SPECIAL_BASE_TABLES = {"users_field_data": "user", "canvas_page": "canvas_page"}
_DATA_SUFFIX = "_field_data"


def _entity_type_of(table: Any) -> str | None:
    if not isinstance(table, str):
        return None
    if table in _SPECIAL_BASE_TABLES:
        return _SPECIAL_BASE_TABLES[table]
    if table.endswith(_DATA_SUFFIX) and len(table) > len(_DATA_SUFFIX):
        return table.removesuffix(_DATA_SUFFIX)
    return None


def base_entity_type(view: Mapping[str, Any]) -> str:
    """The entity type a view lists, from its ``base_table``."""
    entity_type = _entity_type_of(view.get("base_table"))
    if entity_type is None:
        raise ViewError(
            f"view {view.get('id', '?')!r}: base_table: {view.get('base_table')!r} is not an"
            " entity data table (expected node_field_data or <entity_type>_field_data)"
        )
    return entity_type


# ---------------------------------------------------------------------------- displays

# Option sections a display may override; everything else is irrelevant to the rows.
_OVERRIDABLE = ("filters", "filter_groups", "sorts", "pager", "arguments", "fields")


def _mapping(ctx: _Context, key: str, value: Any) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ctx.error(key, f"expected a mapping, got {type(value).__name__}")
    return value


def _display_options(ctx: _Context, view: Mapping[str, Any]) -> dict[str, Any]:
    displays = _mapping(ctx, "display", view.get("display"))
    if "default" not in displays:
        raise ctx.error("display.default", "the view has no default (master) display")
    if ctx.display_id not in displays:
        known = ", ".join(str(d) for d in displays)
        raise ctx.error("display", f"no display {ctx.display_id!r}; known displays: {known}")
    master = _display_section(ctx, displays, "default")
    if ctx.display_id == "default":
        return dict(master)
    own = _display_section(ctx, displays, ctx.display_id)
    defaults = _mapping(
        ctx, f"display.{ctx.display_id}.display_options.defaults", own.get("defaults")
    )
    resolved = dict(master)
    for key in _OVERRIDABLE:
        if key in own:
            resolved[key] = own[key]
        elif key in defaults and not defaults[key]:
            # Overridden (defaults: {key: false}) but exported without a value: Drupal then
            # sees the option's empty default, not the master's value.
            resolved[key] = None
    return resolved


def _display_section(
    ctx: _Context, displays: Mapping[str, Any], display_id: str
) -> Mapping[str, Any]:
    display = _mapping(ctx, f"display.{display_id}", displays[display_id])
    return _mapping(ctx, f"display.{display_id}.display_options", display.get("display_options"))


# ---------------------------------------------------------------------------- field access

_SITE_LANGCODE = "en"  # the embedded site is monolingual
_LANGUAGE_TOKEN = re.compile(
    r"^\*\*\*LANGUAGE_(language_content|language_interface|site_default)\*\*\*$"
)
_MAIN_PROPERTIES = ("value", "target_id", "target_uuid", "entity", "uri")
# Default content references entities by UUID, so a target_id column falls back to it.
_TARGET_ID_FALLBACK = ("target_uuid", "entity")

# Entity keys whose column name depends on the entity type.
_ID_KEYS = {
    "node": "nid",
    "taxonomy_term": "tid",
    "user": "uid",
    "media": "mid",
    "file": "fid",
    "comment": "cid",
}
_BUNDLE_KEYS = {"taxonomy_term": "vid", "comment": "comment_type"}
_EXTRA_TABLES = {"user": ("users",)}
# Base fields that the record keeps as field items rather than as attributes.
# fmt: off
_ITEM_BASE_FIELDS = frozenset({
    "promote", "sticky", "uid", "revision_uid", "revision_timestamp", "revision_log",
    "revision_translation_affected", "path", "weight", "description", "parent", "mail",
    "timezone", "access", "login", "init", "preferred_langcode", "thumbnail", "owner",
})
# fmt: on


@dataclass(frozen=True)
class _Accessor:
    """How to read one column; ``textual`` columns sort as text even when digits."""

    get: Callable[[EntityRecord], list[Any]]
    textual: bool = False


def _items(name: str, properties: tuple[str, ...]) -> _Accessor:
    def get(entity: EntityRecord) -> list[Any]:
        values = []
        for item in entity.fields.get(name, []):
            value = next((item[p] for p in properties if item.get(p) is not None), None)
            if value is not None:
                values.append(value)
        return values

    return _Accessor(get)


_LANGCODE_ITEMS = _items("langcode", _MAIN_PROPERTIES)


def _langcode(entity: EntityRecord) -> list[Any]:
    return _LANGCODE_ITEMS.get(entity) or [_SITE_LANGCODE]


_COMMON_COLUMNS: dict[str, _Accessor] = {
    "id": _Accessor(lambda e: [e.id]),
    "uuid": _Accessor(lambda e: [e.uuid], textual=True),
    "type": _Accessor(lambda e: [e.bundle], textual=True),
    "bundle": _Accessor(lambda e: [e.bundle], textual=True),
    "status": _Accessor(lambda e: [e.status]),
    "title": _Accessor(lambda e: [e.label], textual=True),
    "name": _Accessor(lambda e: [e.label], textual=True),
    "label": _Accessor(lambda e: [e.label], textual=True),
    "info": _Accessor(lambda e: [e.label], textual=True),
    "created": _Accessor(lambda e: [e.created]),
    "changed": _Accessor(lambda e: [e.changed]),
    "langcode": _Accessor(_langcode, textual=True),
    "default_langcode": _Accessor(lambda e: [True]),
}


def _properties(prop: str) -> tuple[str, ...]:
    return (prop, *_TARGET_ID_FALLBACK) if prop == "target_id" else (prop,)


def _base_column(entity_type: str, column: str) -> _Accessor | None:
    if column == _ID_KEYS.get(entity_type):
        return _COMMON_COLUMNS["id"]
    if column == _BUNDLE_KEYS.get(entity_type):
        return _COMMON_COLUMNS["bundle"]
    if column in _COMMON_COLUMNS:
        return _COMMON_COLUMNS[column]
    # Multi-property base fields are stored as <field>__<property> columns.
    name, _, prop = column.partition("__")
    if name in _ITEM_BASE_FIELDS:
        return _items(name, _properties(prop) if prop else _MAIN_PROPERTIES)
    return None


def _field_table_column(field_name: str, column: str) -> _Accessor | None:
    if column == field_name:
        return _items(field_name, _MAIN_PROPERTIES)
    if column.startswith(f"{field_name}_"):
        return _items(field_name, _properties(column.removeprefix(f"{field_name}_")))
    return None


def _accessor(
    ctx: _Context, key: str, handler: Mapping[str, Any], entity_type: str, base_table: str
) -> _Accessor:
    relationship = handler.get("relationship", "none")
    if relationship not in (None, "", "none"):
        raise ctx.error(
            f"{key}.relationship",
            f"relationship {relationship!r} is not supported by the embedded site",
        )
    table = handler.get("table") or base_table
    column = handler.get("field")
    if not isinstance(column, str) or not column:
        raise ctx.error(f"{key}.field", "missing field name")
    accessor: _Accessor | None = None
    base_tables = {
        base_table,
        entity_type,
        f"{entity_type}{_DATA_SUFFIX}",
        *_EXTRA_TABLES.get(entity_type, ()),
    }
    field_prefix = f"{entity_type}__"
    if table in base_tables:
        accessor = _base_column(entity_type, column)
    elif isinstance(table, str) and table.startswith(field_prefix):
        accessor = _field_table_column(table.removeprefix(field_prefix), column)
    if accessor is None:
        raise ctx.error(
            f"{key}.field", f"unknown field {table}.{column} for entity type {entity_type!r}"
        )
    return accessor


# ---------------------------------------------------------------------------- comparison


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def _text(value: Any) -> str:
    # Booleans and whole floats print as the database would store them.
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _fold(value: Any) -> str:
    # MySQL's default collation is case-insensitive, so every string comparison is too.
    return _text(value).casefold()


def _compare(left: Any, right: Any) -> int:
    a, b = _number(left), _number(right)
    if a is not None and b is not None:
        return (a > b) - (a < b)
    x, y = _fold(left), _fold(right)
    return (x > y) - (x < y)


def _key(value: Any) -> tuple[str, float | str]:
    number = _number(value)
    return ("n", number) if number is not None else ("s", _fold(value))


def _truthy(value: Any) -> bool:
    if isinstance(value, Mapping):
        value = value.get("value")
    if isinstance(value, str):
        return value.strip().lower() not in ("", "0", "false")
    return bool(value)


def _blank(value: Any) -> bool:
    """True when an exposed filter's value means "no input" (Drupal's 'All' included)."""
    if isinstance(value, Mapping):
        return all(_blank(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_blank(v) for v in value)
    return value is None or value == "" or value == "All"


# ---------------------------------------------------------------------------- operators


def _scalar(value: Any) -> Any:
    # Numeric filters store {value, min, max}; single-value operators read ``value``.
    return value.get("value") if isinstance(value, Mapping) else value


def _folded(value: Any) -> str:
    return _fold(_scalar(value))


def _length(value: Any) -> int:
    number = _number(_scalar(value))
    if number is None or not number.is_integer():
        raise _ValueProblem(f"length {_scalar(value)!r} is not a whole number")
    return int(number)


def _regex(value: Any) -> re.Pattern[str]:
    try:
        return re.compile(_text(_scalar(value)), re.IGNORECASE)
    except re.error as exc:
        raise _ValueProblem(f"invalid regular expression {_scalar(value)!r}: {exc}") from None


def _listed(value: Any) -> list[Any]:
    # Checkbox values are stored as {key: key}; Drupal uses the values.
    if isinstance(value, Mapping):
        return list(value.values())
    if isinstance(value, list | tuple):
        return list(value)
    return [] if value is None or value == "" else [value]


def _any_item(test: Callable[[Any, Any], bool], prepare: Callable[[Any], Any]) -> OpFactory:
    """A per-item test; a multi-value field matches when any item does, as a SQL join."""

    def factory(raw: Any) -> Predicate:
        arg = prepare(raw)
        return lambda values: any(test(v, arg) for v in values)

    return factory


def _nullness(want_empty: bool) -> OpFactory:
    return lambda raw: lambda values: (not values) == want_empty


def _words(combine: Callable[[Iterable[bool]], bool]) -> OpFactory:
    def factory(raw: Any) -> Predicate:
        # Drupal's word pattern: quoted phrases or space-separated words, punctuation trimmed.
        found = re.findall(r'"([^"]+)"|([^"\s]+)', _text(_scalar(raw)))
        words = [w.strip(",?!();:-").casefold() for pair in found for w in pair if w]
        words = [w for w in words if w]
        if not words:
            return lambda values: True  # Drupal adds no condition without words
        return lambda values: any(combine(w in _fold(v) for w in words) for v in values)

    return factory


def _between(inside: bool) -> OpFactory:
    def factory(raw: Any) -> Predicate:
        bounds = raw if isinstance(raw, Mapping) else {}
        low, high = _number(bounds.get("min")), _number(bounds.get("max"))
        if low is None and high is None:
            return lambda values: True  # no numeric bound: Drupal adds no condition

        def within(value: Any) -> bool:
            number = _number(value)
            if number is None:
                return False
            ok = (low is None or number >= low) and (high is None or number <= high)
            return ok == inside

        return lambda values: any(within(v) for v in values)

    return factory


def _set_op(test: Callable[[set[Any], set[Any]], bool]) -> OpFactory:
    def factory(raw: Any) -> Predicate:
        wanted = {_key(v) for v in _listed(raw)}
        if not wanted:
            raise _ValueProblem("no values selected")  # Drupal's "No valid values found"
        return lambda values: test({_key(v) for v in values}, wanted)

    return factory


def _eq(v: Any, a: Any) -> bool:
    return _compare(v, a) == 0


def _ne(v: Any, a: Any) -> bool:
    return _compare(v, a) != 0


def _matches(v: Any, a: re.Pattern[str]) -> bool:
    return a.search(_text(v)) is not None


_NULLNESS: dict[str, OpFactory] = {"empty": _nullness(True), "not empty": _nullness(False)}
_REGEX: dict[str, OpFactory] = {
    "regular_expression": _any_item(_matches, _regex),
    "not_regular_expression": _any_item(lambda v, a: not _matches(v, a), _regex),
}

# Operator semantics differ by filter plugin (``not`` is "does not contain" on strings but
# "is none of" on many-to-one filters), so the table is keyed by plugin family.
_OPERATORS: dict[str, dict[str, OpFactory]] = {
    "string": {
        "=": _any_item(_eq, _scalar),
        "!=": _any_item(_ne, _scalar),
        "contains": _any_item(lambda v, a: a in _fold(v), _folded),
        "not": _any_item(lambda v, a: a not in _fold(v), _folded),
        "starts": _any_item(lambda v, a: _fold(v).startswith(a), _folded),
        "not_starts": _any_item(lambda v, a: not _fold(v).startswith(a), _folded),
        "ends": _any_item(lambda v, a: _fold(v).endswith(a), _folded),
        "not_ends": _any_item(lambda v, a: not _fold(v).endswith(a), _folded),
        "word": _words(any),
        "allwords": _words(all),
        "shorterthan": _any_item(lambda v, a: len(_text(v)) < a, _length),
        "longerthan": _any_item(lambda v, a: len(_text(v)) > a, _length),
        **_REGEX,
        **_NULLNESS,
    },
    "numeric": {
        "<": _any_item(lambda v, a: _compare(v, a) < 0, _scalar),
        "<=": _any_item(lambda v, a: _compare(v, a) <= 0, _scalar),
        "=": _any_item(_eq, _scalar),
        "!=": _any_item(_ne, _scalar),
        ">=": _any_item(lambda v, a: _compare(v, a) >= 0, _scalar),
        ">": _any_item(lambda v, a: _compare(v, a) > 0, _scalar),
        "between": _between(inside=True),
        "not between": _between(inside=False),
        **_REGEX,
        **_NULLNESS,
    },
    "in": {
        "in": _set_op(lambda have, wanted: bool(have & wanted)),
        "or": _set_op(lambda have, wanted: bool(have & wanted)),
        "not in": _set_op(lambda have, wanted: bool(have - wanted)),
        "and": _set_op(lambda have, wanted: wanted <= have),
        # Many-to-one "is none of" is a NOT EXISTS, so an empty field matches it.
        "not": _set_op(lambda have, wanted: not have & wanted),
        **_NULLNESS,
    },
    "boolean": {
        "=": _any_item(lambda v, a: _truthy(v) == a, _truthy),
        "!=": _any_item(lambda v, a: _truthy(v) != a, _truthy),
    },
}
_OPERATORS["date"] = _OPERATORS["numeric"]

_PLUGIN_FAMILIES = {
    plugin: family
    for family, plugins in {
        "string": "string equality",
        "numeric": "numeric datetime",
        "date": "date",
        "boolean": "boolean",
        "in": "in_operator bundle list_field language many_to_one taxonomy_index_tid"
        " entity_reference user_roles",
    }.items()
    for plugin in plugins.split()
}
_DEFAULT_OPERATORS = {"in": "in"}
_FAMILY_GUESS_ORDER = ("string", "numeric", "in", "boolean")


def _operator(ctx: _Context, key: str, handler: Mapping[str, Any], operator: Any) -> OpFactory:
    plugin = handler.get("plugin_id")
    family = _PLUGIN_FAMILIES.get(plugin) if isinstance(plugin, str) else None
    if operator is None or operator == "":
        operator = _DEFAULT_OPERATORS.get(family or "", "=")
    name = operator if isinstance(operator, str) else ""
    if family is None:
        # Unknown plugin: take the first family that knows the operator.
        family = next((f for f in _FAMILY_GUESS_ORDER if name in _OPERATORS[f]), "string")
    factory = _OPERATORS[family].get(name)
    if factory is None:
        raise ctx.error(
            f"{key}.operator", f"unknown operator {operator!r} for a {family} filter ({plugin})"
        )
    return _date_aware(factory) if family == "date" else factory


def _timestamp(value: Any) -> Any:
    if value is None or value == "" or _number(value) is not None:
        return value
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        raise _ValueProblem(f"date {value!r} is not a timestamp or ISO date") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())


def _date_aware(factory: OpFactory) -> OpFactory:
    """Timestamp columns compared against ISO dates, as Drupal's date filter converts."""

    def wrapped(raw: Any) -> Predicate:
        if isinstance(raw, Mapping):
            if raw.get("type") == "offset":
                raise _ValueProblem("relative date offsets are not supported by the embedded site")
            raw = {k: _timestamp(raw.get(k)) for k in ("value", "min", "max")}
        else:
            raw = _timestamp(raw)
        return factory(raw)

    return wrapped


def _substitute_tokens(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _substitute_tokens(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_substitute_tokens(v) for v in value]
    if isinstance(value, str) and _LANGUAGE_TOKEN.match(value):
        return _SITE_LANGCODE
    return value


# ---------------------------------------------------------------------------- filters


@dataclass(frozen=True)
class _Filter:
    group: str
    values: Callable[[EntityRecord], list[Any]]
    test: Predicate

    def matches(self, entity: EntityRecord) -> bool:
        return self.test(self.values(entity))


def _grouped_choice(ctx: _Context, key: str, handler: Mapping[str, Any]) -> tuple[Any, Any]:
    """The operator and value of a grouped exposed filter's default choice."""
    info = _mapping(ctx, f"{key}.group_info", handler.get("group_info"))
    choice = info.get("default_group", "All")
    if _blank(choice):
        return None, None
    items = _mapping(ctx, f"{key}.group_info.group_items", info.get("group_items"))
    item = next((v for k, v in items.items() if str(k) == str(choice)), None)
    if not isinstance(item, Mapping):
        raise ctx.error(f"{key}.group_info.default_group", f"no group item {choice!r}")
    return item.get("operator"), item.get("value")


def _build_filter(
    ctx: _Context, key: str, handler: Mapping[str, Any], entity_type: str, base_table: str
) -> _Filter | None:
    accessor = _accessor(ctx, key, handler, entity_type, base_table)
    exposed = bool(handler.get("exposed"))
    operator, value = handler.get("operator"), handler.get("value")
    if exposed and handler.get("is_grouped"):
        operator, value = _grouped_choice(ctx, key, handler)
        if operator is None and value is None:
            return None
    factory = _operator(ctx, key, handler, operator)
    # Without exposed input Drupal drops an exposed filter whose default is empty.
    if exposed and operator not in ("empty", "not empty") and _blank(value):
        return None
    try:
        test = factory(_substitute_tokens(value))
    except _ValueProblem as exc:
        raise ctx.error(f"{key}.value", str(exc)) from None
    return _Filter(str(handler.get("group", 1)), accessor.get, test)


_CONJUNCTIONS: dict[str, Callable[[Iterable[bool]], bool]] = {"AND": all, "OR": any}


def _conjunction(ctx: _Context, key: str, value: Any) -> Callable[[Iterable[bool]], bool]:
    conjunction = _CONJUNCTIONS.get(str(value).upper()) if value is not None else all
    if conjunction is None:
        raise ctx.error(key, f"{value!r} is not AND or OR")
    return conjunction


def _build_matcher(
    ctx: _Context, options: Mapping[str, Any], entity_type: str, base_table: str
) -> Callable[[EntityRecord], bool]:
    filters = _mapping(ctx, "filters", options.get("filters"))
    groups_config = _mapping(ctx, "filter_groups", options.get("filter_groups"))
    top = _conjunction(ctx, "filter_groups.operator", groups_config.get("operator"))
    group_ops = {
        str(g): _conjunction(ctx, f"filter_groups.groups.{g}", op)
        for g, op in _mapping(ctx, "filter_groups.groups", groups_config.get("groups")).items()
    }
    by_group: dict[str, list[_Filter]] = {}
    for filter_id, handler in filters.items():
        key = f"filters.{filter_id}"
        built = _build_filter(ctx, key, _mapping(ctx, key, handler), entity_type, base_table)
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


# ---------------------------------------------------------------------------- sorts

SortKey = tuple[int, float, str]


@dataclass(frozen=True)
class _Sort:
    accessor: _Accessor
    descending: bool

    def key(self, entity: EntityRecord) -> SortKey:
        values = self.accessor.get(entity)
        if not values:
            return (0, 0.0, "")  # NULL sorts first ascending, as in MySQL
        value = values[0]
        number = None if self.accessor.textual else _number(value)
        return (1, number, "") if number is not None else (2, 0.0, _fold(value))


def _build_sorts(
    ctx: _Context, options: Mapping[str, Any], entity_type: str, base_table: str
) -> list[_Sort]:
    sorts = []
    for sort_id, handler in _mapping(ctx, "sorts", options.get("sorts")).items():
        key = f"sorts.{sort_id}"
        handler = _mapping(ctx, key, handler)
        order = str(handler.get("order") or "ASC").upper()
        if order not in ("ASC", "DESC"):
            raise ctx.error(f"{key}.order", f"{handler.get('order')!r} is not ASC or DESC")
        accessor = _accessor(ctx, key, handler, entity_type, base_table)
        sorts.append(_Sort(accessor, descending=order == "DESC"))
    return sorts


def _ordered(entities: list[EntityRecord], sorts: list[_Sort]) -> list[EntityRecord]:
    # Stable sorts applied last-to-first compose into one multi-key order; sorting by id
    # first makes ties deterministic.
    ordered = sorted(entities, key=lambda e: e.id)
    for sort in reversed(sorts):
        ordered.sort(key=sort.key, reverse=sort.descending)
    return ordered


# ---------------------------------------------------------------------------- pager and arguments

_PAGER_TYPES = frozenset({"none", "some", "full", "mini"})
_DEFAULT_ITEMS_PER_PAGE = 10  # Views' SqlBase pager default


def _count_option(ctx: _Context, key: str, value: Any, default: int) -> int:
    if value is None or value == "":
        return default
    number = _number(value)
    if number is None or not number.is_integer() or number < 0:
        raise ctx.error(key, f"{value!r} is not a non-negative whole number")
    return int(number)


def _pager(ctx: _Context, options: Mapping[str, Any]) -> tuple[int, int | None]:
    """(offset, limit); limit None means every row after the offset."""
    pager = _mapping(ctx, "pager", options.get("pager"))
    pager_type = pager.get("type", "mini")  # Views' default display pager
    if not isinstance(pager_type, str) or pager_type not in _PAGER_TYPES:
        raise ctx.error("pager.type", f"unknown pager type {pager_type!r}")
    settings = _mapping(ctx, "pager.options", pager.get("options"))
    offset = _count_option(ctx, "pager.options.offset", settings.get("offset"), 0)
    if pager_type == "none":
        return offset, None
    items = _count_option(
        ctx, "pager.options.items_per_page", settings.get("items_per_page"), _DEFAULT_ITEMS_PER_PAGE
    )
    return offset, items or None


def _check_arguments(ctx: _Context, options: Mapping[str, Any]) -> None:
    # With no argument passed, default_action 'ignore' shows every row; any other action
    # needs an argument or a default plugin the embedded site does not have.
    for argument_id, handler in _mapping(ctx, "arguments", options.get("arguments")).items():
        key = f"arguments.{argument_id}"
        action = _mapping(ctx, key, handler).get("default_action", "ignore")
        if action != "ignore":
            raise ctx.error(
                f"{key}.default_action",
                f"contextual filters are not supported by the embedded site (default_action"
                f" {action!r}; only 'ignore' can execute without an argument)",
            )


# ---------------------------------------------------------------------------- entry point


def execute_view(
    view_id: str, view: Mapping[str, Any], display_id: str, entities: Iterable[EntityRecord]
) -> ViewResult:
    """Run one display of ``view`` over every entity of its base type.

    The whole config is checked before any entity is looked at, so a broken view fails the
    same way on an empty site as on a full one.
    """
    ctx = _Context(view_id, display_id)
    base_table = view.get("base_table")
    entity_type = _entity_type_of(base_table)
    if entity_type is None or not isinstance(base_table, str):
        raise ctx.error(
            "base_table",
            f"{base_table!r} is not an entity data table"
            " (expected node_field_data or <entity_type>_field_data)",
        )
    options = _display_options(ctx, view)
    _check_arguments(ctx, options)
    matches = _build_matcher(ctx, options, entity_type, base_table)
    sorts = _build_sorts(ctx, options, entity_type, base_table)
    offset, limit = _pager(ctx, options)

    matched = [e for e in entities if e.entity_type == entity_type and matches(e)]
    ordered = _ordered(matched, sorts)
    end = None if limit is None else offset + limit
    rows = tuple(ViewRow(e.id, e.uuid, e.label) for e in ordered[offset:end])
    return ViewResult(view_id, display_id, rows=rows, total_rows=max(0, len(ordered) - offset))
