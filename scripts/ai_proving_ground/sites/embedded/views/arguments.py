"""Contextual filters: an argument passed, or the default action when none is.

With an argument, a numeric plugin compares numbers (``5+7`` with break_phrase is 5 OR 7) and
any other compares text. Without one, ``ignore`` adds nothing, ``default`` uses the fixed
value, and ``empty`` / ``not found`` / ``access denied`` stop the build, as Views does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ai_proving_ground.sites.embedded.views.columns import Accessor, column_accessor
from ai_proving_ground.sites.embedded.views.compare import fold_case
from ai_proving_ground.sites.embedded.views.context import Context, mapping
from ai_proving_ground.sites.embedded.views.rows import Row, row_values

# Plugins whose argument is an id or number; the rest compare as text.
_NUMERIC_PLUGINS = frozenset({"numeric", "node_nid", "node_vid", "user_uid", "taxonomy_index_tid",
                              "entity_target_id", "taxonomy_index_tid_depth", "node_uid_revision"})
# What a default action or a failed validation does to the whole display.
ABORTS = {"empty": "rows", "not found": "not served (404)", "access denied": "not served (403)"}
_OR_PHRASE = re.compile(r"^([\w-]+[+ ]+)+[\w-]+$")
_AND_PHRASE = re.compile(r"^([\w-]+[, ]+)*[\w-]+$")
_LEADING_NUMBER = re.compile(r"^\s*[-+]?(\d+(\.\d*)?|\.\d+)")


def _mysql_number(value: Any) -> float:
    """The number MySQL reads in a string compared with a number ('5+7' is 5, 'x' is 0)."""
    match = _LEADING_NUMBER.match(str(value))
    return float(match.group(0)) if match else 0.0


@dataclass(frozen=True)
class _Condition:
    accessor: Accessor
    wanted: tuple[Any, ...]
    numeric: bool
    negate: bool

    def matches(self, row: Row) -> bool:
        values = row_values(self.accessor, row)
        if not values:
            return self.negate  # "not" adds OR ... IS NULL
        if self.numeric:
            wanted = {_mysql_number(w) for w in self.wanted}
            hit = any(_mysql_number(v) in wanted for v in values)
        else:
            folded = {fold_case(w) for w in self.wanted}
            hit = any(fold_case(v) in folded for v in values)
        return hit != self.negate


@dataclass
class Arguments:
    conditions: list[_Condition] = field(default_factory=list)
    abort: str | None = None  # the default action that stopped the build

    def matches(self, row: Row) -> bool:
        return all(c.matches(row) for c in self.conditions)

    @property
    def tables(self) -> tuple[str, ...]:
        return tuple(c.accessor.table for c in self.conditions if c.accessor.table)


def _split(argument: str, handler: Mapping[str, Any]) -> tuple[str, ...]:
    if not handler.get("break_phrase"):
        return (argument,)
    if _OR_PHRASE.match(argument):
        return tuple(p for p in re.split(r"[+ ]+", argument) if p)
    if _AND_PHRASE.match(argument):
        return tuple(p for p in re.split(r"[, ]+", argument) if p)
    return ("-1",)  # Views' value for a phrase it cannot break


def _default_argument(ctx: Context, key: str, handler: Mapping[str, Any]) -> str:
    kind = handler.get("default_argument_type", "fixed")
    options = mapping(ctx, f"{key}.default_argument_options", handler.get("default_argument_options"))
    if kind == "fixed":
        return str(options.get("argument") or "")
    if kind == "current_user":
        return "0"  # the embedded site executes views as anonymous
    raise ctx.error(f"{key}.default_argument_type",
                    f"default argument {kind!r} is not supported by the embedded site (it has no"
                    " request to read it from); use 'fixed' or pass the argument")


def _valid(ctx: Context, key: str, handler: Mapping[str, Any], values: tuple[str, ...]) -> bool:
    validate = mapping(ctx, f"{key}.validate", handler.get("validate"))
    kind = validate.get("type", "none") if handler.get("specify_validation", True) else "none"
    if kind in ("none", None, ""):
        return True
    if kind == "numeric":
        return all(re.fullmatch(r"-?\d+", v) for v in values)
    raise ctx.error(f"{key}.validate.type",
                    f"argument validator {kind!r} is not supported by the embedded site")


def build_arguments(ctx: Context, options: Mapping[str, Any], entity_type: str, base_table: str,
                    passed: Sequence[str]) -> Arguments:
    result = Arguments()
    relationships = mapping(ctx, "relationships", options.get("relationships"))
    for position, (argument_id, raw) in enumerate(
            mapping(ctx, "arguments", options.get("arguments")).items()):
        key = f"arguments.{argument_id}"
        handler = mapping(ctx, key, raw)
        argument: str | None = passed[position] if position < len(passed) else None
        if argument is None:
            action = handler.get("default_action", "ignore")
            if action == "ignore":
                continue
            if action in ABORTS:
                result.abort = str(action)
                return result
            if action != "default":
                raise ctx.error(f"{key}.default_action",
                                f"default action {action!r} is not supported by the embedded site")
            argument = _default_argument(ctx, key, handler)
        exception = mapping(ctx, f"{key}.exception", handler.get("exception")).get("value", "all")
        if argument == exception:
            continue
        values = _split(argument, handler)
        if not _valid(ctx, key, handler, values):
            fail = mapping(ctx, f"{key}.validate", handler.get("validate")).get("fail", "not found")
            result.abort = str(fail) if fail in ABORTS else "not found"
            return result
        accessor = column_accessor(ctx, key, handler, entity_type, base_table, relationships)
        if accessor is None:
            ctx.broken.append(f"argument.{argument_id}")
            continue
        numeric = handler.get("plugin_id") in _NUMERIC_PLUGINS
        result.conditions.append(_Condition(accessor, values, numeric, bool(handler.get("not"))))
    return result
