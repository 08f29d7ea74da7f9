"""The pager's window over the ordered rows, and the ``total_rows`` Views reports with it.

``none`` and ``full`` count every row after the offset; ``some`` reports the rows it returned;
``mini`` fetches one row more than a page to know whether a next page exists, and reports
that many.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ai_proving_ground.sites.embedded.views.compare import to_number
from ai_proving_ground.sites.embedded.views.context import Context, ViewFailure, mapping

_PAGER_TYPES = ("full", "some", "none", "mini")  # in the order Drupal's error lists them
_DEFAULT_PAGER = "mini"  # a display without a pager option
_PAGING = ("full", "mini")  # the pagers with links to other pages
_DEFAULT_ITEMS_PER_PAGE = 10  # Views' SqlBase pager default


@dataclass(frozen=True)
class Pager:
    type: str
    offset: int
    items: int | None  # None: every row after the offset

    def window(self, count: int, page: int = 0) -> tuple[int, int | None]:
        """(start, end) of the rows shown on ``page``, end None for all. Only ``full`` and
        ``mini`` page (their links ask for ?page=N); ``some`` and ``none`` ignore the page, as
        their query() sets the offset alone."""
        start = self.offset
        if self.items is not None and self.type in _PAGING:
            start += page * self.items
        return start, None if self.items is None else start + self.items

    def total_rows(self, count: int) -> int:
        remaining = max(0, count - self.offset)
        if self.items is None or self.type in ("none", "full"):
            return remaining
        if self.type == "mini":
            return min(remaining, self.items + 1)
        return min(remaining, self.items)


def _count_option(ctx: Context, key: str, value: Any, default: int) -> int:
    if value is None or value == "":
        return default
    number = to_number(value)
    if number is None or not number.is_integer() or number < 0:
        raise ctx.error(key, f"{value!r} is not a non-negative whole number")
    return int(number)


def build_pager(ctx: Context, options: Mapping[str, Any]) -> Pager:
    pager = mapping(ctx, "pager", options.get("pager"))
    pager_type = pager.get("type", _DEFAULT_PAGER)
    if pager_type not in _PAGER_TYPES:
        raise ViewFailure(
            "Drupal\\Component\\Plugin\\Exception\\PluginNotFoundException: The"
            f' "{pager_type}" plugin does not exist. Valid plugin IDs for'
            f" Drupal\\views\\Plugin\\ViewsPluginManager are: {', '.join(_PAGER_TYPES)}")
    settings = mapping(ctx, "pager.options", pager.get("options"))
    offset = _count_option(ctx, "pager.options.offset", settings.get("offset"), 0)
    if pager_type == "none":
        return Pager(pager_type, offset, None)
    items = _count_option(
        ctx, "pager.options.items_per_page", settings.get("items_per_page"), _DEFAULT_ITEMS_PER_PAGE
    )
    return Pager(pager_type, offset, items or None)
