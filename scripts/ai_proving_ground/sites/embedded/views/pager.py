"""The pager's window over the ordered rows, and contextual filters without arguments."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ai_proving_ground.sites.embedded.views.compare import to_number
from ai_proving_ground.sites.embedded.views.context import Context, mapping

_PAGER_TYPES = frozenset({"none", "some", "full", "mini"})
_DEFAULT_ITEMS_PER_PAGE = 10  # Views' SqlBase pager default


def _count_option(ctx: Context, key: str, value: Any, default: int) -> int:
    if value is None or value == "":
        return default
    number = to_number(value)
    if number is None or not number.is_integer() or number < 0:
        raise ctx.error(key, f"{value!r} is not a non-negative whole number")
    return int(number)


def pager_window(ctx: Context, options: Mapping[str, Any]) -> tuple[int, int | None]:
    """(offset, limit); limit None means every row after the offset."""
    pager = mapping(ctx, "pager", options.get("pager"))
    pager_type = pager.get("type", "mini")  # Views' default display pager
    if not isinstance(pager_type, str) or pager_type not in _PAGER_TYPES:
        raise ctx.error("pager.type", f"unknown pager type {pager_type!r}")
    settings = mapping(ctx, "pager.options", pager.get("options"))
    offset = _count_option(ctx, "pager.options.offset", settings.get("offset"), 0)
    if pager_type == "none":
        return offset, None
    items = _count_option(
        ctx, "pager.options.items_per_page", settings.get("items_per_page"), _DEFAULT_ITEMS_PER_PAGE
    )
    return offset, items or None


def check_arguments(ctx: Context, options: Mapping[str, Any]) -> None:
    # With no argument passed, default_action 'ignore' shows every row; any other action
    # needs an argument or a default plugin the embedded site does not have.
    for argument_id, handler in mapping(ctx, "arguments", options.get("arguments")).items():
        key = f"arguments.{argument_id}"
        action = mapping(ctx, key, handler).get("default_action", "ignore")
        if action != "ignore":
            raise ctx.error(
                f"{key}.default_action",
                f"contextual filters are not supported by the embedded site (default_action"
                f" {action!r}; only 'ignore' can execute without an argument)",
            )

