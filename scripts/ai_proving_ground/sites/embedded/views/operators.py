"""Filter operators by plugin family: a configured value becomes a predicate over items."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from ai_proving_ground.sites.embedded.views.columns import LANGUAGE_TOKEN, SITE_LANGCODE
from ai_proving_ground.sites.embedded.views.compare import (
    compare,
    fold_case,
    php_empty,
    to_number,
    to_text,
    truthy,
    value_key,
)
from ai_proving_ground.sites.embedded.views.context import Context, OpFactory, Predicate, ValueProblem


def _scalar(value: Any) -> Any:
    # Numeric filters store {value, min, max}; single-value operators read ``value``.
    return value.get("value") if isinstance(value, Mapping) else value


def _folded(value: Any) -> str:
    return fold_case(_scalar(value))


def _length(value: Any) -> int:
    number = to_number(_scalar(value))
    if number is None or not number.is_integer():
        raise ValueProblem(f"length {_scalar(value)!r} is not a whole number")
    return int(number)


def _regex(value: Any) -> re.Pattern[str]:
    try:
        return re.compile(to_text(_scalar(value)), re.IGNORECASE)
    except re.error as exc:
        raise ValueProblem(f"invalid regular expression {_scalar(value)!r}: {exc}") from None


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
        found = re.findall(r'"([^"]+)"|([^"\s]+)', to_text(_scalar(raw)))
        words = [w.strip(",?!();:-").casefold() for pair in found for w in pair if w]
        words = [w for w in words if w]
        if not words:
            return lambda values: True  # Drupal adds no condition without words
        return lambda values: any(combine(w in fold_case(v) for w in words) for v in values)

    return factory


def _between(inside: bool) -> OpFactory:
    def factory(raw: Any) -> Predicate:
        bounds = raw if isinstance(raw, Mapping) else {}
        low, high = to_number(bounds.get("min")), to_number(bounds.get("max"))
        if low is None and high is None:
            return lambda values: True  # no numeric bound: Drupal adds no condition

        def within(value: Any) -> bool:
            number = to_number(value)
            if number is None:
                return False
            ok = (low is None or number >= low) and (high is None or number <= high)
            return ok == inside

        return lambda values: any(within(v) for v in values)

    return factory


def _set_op(test: Callable[[set[Any], set[Any]], bool]) -> OpFactory:
    def factory(raw: Any) -> Predicate:
        wanted = {value_key(v) for v in _listed(raw)}
        if not wanted:
            raise ValueProblem("no values selected")  # Drupal's "No valid values found"
        return lambda values: test({value_key(v) for v in values}, wanted)

    return factory


def _eq(v: Any, a: Any) -> bool:
    return compare(v, a) == 0


def _ne(v: Any, a: Any) -> bool:
    return compare(v, a) != 0


def _matches(v: Any, a: re.Pattern[str]) -> bool:
    return a.search(to_text(v)) is not None


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
        "contains": _any_item(lambda v, a: a in fold_case(v), _folded),
        "not": _any_item(lambda v, a: a not in fold_case(v), _folded),
        "starts": _any_item(lambda v, a: fold_case(v).startswith(a), _folded),
        "not_starts": _any_item(lambda v, a: not fold_case(v).startswith(a), _folded),
        "ends": _any_item(lambda v, a: fold_case(v).endswith(a), _folded),
        "not_ends": _any_item(lambda v, a: not fold_case(v).endswith(a), _folded),
        "word": _words(any),
        "allwords": _words(all),
        "shorterthan": _any_item(lambda v, a: len(to_text(v)) < a, _length),
        "longerthan": _any_item(lambda v, a: len(to_text(v)) > a, _length),
        **_REGEX,
        **_NULLNESS,
    },
    "numeric": {
        "<": _any_item(lambda v, a: compare(v, a) < 0, _scalar),
        "<=": _any_item(lambda v, a: compare(v, a) <= 0, _scalar),
        "=": _any_item(_eq, _scalar),
        "!=": _any_item(_ne, _scalar),
        ">=": _any_item(lambda v, a: compare(v, a) >= 0, _scalar),
        ">": _any_item(lambda v, a: compare(v, a) > 0, _scalar),
        "between": _between(inside=True),
        "not between": _between(inside=False),
        **_REGEX,
        **_NULLNESS,
    },
    "in": {
        "in": _set_op(lambda have, wanted: bool(have & wanted)),
        "not in": _set_op(lambda have, wanted: bool(have - wanted)),
        **_NULLNESS,
    },
    "many_to_one": {
        "or": _set_op(lambda have, wanted: bool(have & wanted)),
        "and": _set_op(lambda have, wanted: wanted <= have),
        # Many-to-one "is none of" is a NOT EXISTS, so an empty field matches it.
        "not": _set_op(lambda have, wanted: not have & wanted),
        **_NULLNESS,
    },
    "boolean": {
        "=": _any_item(lambda v, a: truthy(v) == a, lambda raw: not php_empty(raw)),
        "!=": _any_item(lambda v, a: truthy(v) != a, lambda raw: not php_empty(raw)),
    },
}
_OPERATORS["date"] = _OPERATORS["numeric"]

_PLUGIN_FAMILIES = {
    plugin: family
    for family, plugins in {
        "string": "string equality",
        "numeric": "numeric datetime",
        "date": "date",
        "boolean": "boolean node_status",
        "in": "in_operator bundle language",
        "many_to_one": "list_field many_to_one taxonomy_index_tid entity_reference user_roles",
    }.items()
    for plugin in plugins.split()
}
_DEFAULT_OPERATORS = {"in": "in", "many_to_one": "or"}
# In-operator filters (both families) validate their operator and values.
IN_FAMILIES = frozenset({"in", "many_to_one"})
_FAMILY_GUESS_ORDER = ("string", "numeric", "in", "many_to_one", "boolean")


def plugin_family(handler: Mapping[str, Any]) -> str | None:
    """The operator family of a filter plugin Views knows, else None."""
    plugin = handler.get("plugin_id")
    return _PLUGIN_FAMILIES.get(plugin) if isinstance(plugin, str) else None


def handler_operators(family: str, allow_empty: bool) -> frozenset[str]:
    """The operators a filter handler of ``family`` offers (empty ones on nullable columns)."""
    names = set(_OPERATORS[family])
    if not allow_empty:
        names -= set(_NULLNESS)
    return frozenset(names)


def operator_factory(ctx: Context, key: str, handler: Mapping[str, Any], operator: Any,
                     allow_empty: bool = True) -> OpFactory | None:
    """The operator's predicate factory; None when the plugin does not have the operator.

    A stored view names its plugin, and Views adds no condition for an operator the plugin
    lacks (``in`` on a list field, ``like`` on a string, ``empty`` on a NOT NULL column). A
    condition without a plugin (a grader's count) takes the first family that knows it.
    """
    plugin = handler.get("plugin_id")
    family = plugin_family(handler)
    if operator is None or operator == "":
        operator = _DEFAULT_OPERATORS.get(family or "", "=")
    name = operator if isinstance(operator, str) else ""
    if family is not None:
        if name not in handler_operators(family, allow_empty):
            return None
        factory = _OPERATORS[family][name]
        return _date_aware(factory) if family == "date" else factory
    family = next((f for f in _FAMILY_GUESS_ORDER if name in _OPERATORS[f]), "string")
    lenient = _OPERATORS[family].get(name)
    if lenient is None:
        raise ctx.error(
            f"{key}.operator", f"unknown operator {operator!r} for a {family} filter ({plugin})"
        )
    return lenient


def _timestamp(value: Any) -> Any:
    if value is None or value == "" or to_number(value) is not None:
        return value
    try:
        moment = datetime.fromisoformat(str(value))
    except ValueError:
        raise ValueProblem(f"date {value!r} is not a timestamp or ISO date") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())


def _date_aware(factory: OpFactory) -> OpFactory:
    """Timestamp columns compared against ISO dates, as Drupal's date filter converts."""

    def wrapped(raw: Any) -> Predicate:
        if isinstance(raw, Mapping):
            if raw.get("type") == "offset":
                raise ValueProblem("relative date offsets are not supported by the embedded site")
            raw = {k: _timestamp(raw.get(k)) for k in ("value", "min", "max")}
        else:
            raw = _timestamp(raw)
        return factory(raw)

    return wrapped


def substitute_tokens(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: substitute_tokens(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [substitute_tokens(v) for v in value]
    if isinstance(value, str) and LANGUAGE_TOKEN.match(value):
        return SITE_LANGCODE
    return value

