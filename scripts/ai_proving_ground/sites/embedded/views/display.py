"""Which options a display runs with: its own where ``defaults.<key>: false``, else the master's.

Views reads a display's own value for an option only when the display says it overrides it;
a value stored without the flag is ignored, and a flag without a value means the option's
empty default. ``filter_groups`` follows ``filters`` and ``row`` follows ``style``, as Views
overrides them together.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ai_proving_ground.sites.embedded.views.compare import php_empty
from ai_proving_ground.sites.embedded.views.context import Context, mapping

_OVERRIDABLE = ("filters", "filter_groups", "sorts", "pager", "arguments", "fields",
                "relationships", "style", "row", "query")
_LINKED = {"filter_groups": "filters", "row": "style"}


def display_ids(ctx: Context, view: Mapping[str, Any]) -> list[str]:
    return [str(d) for d in mapping(ctx, "display", view.get("display"))]


def display_title(ctx: Context, view: Mapping[str, Any], display_id: str) -> str:
    display = mapping(ctx, f"display.{display_id}", view["display"][display_id])
    title = display.get("display_title")
    return str(title) if title else ("Default" if display_id == "default" else display_id)


def display_options(ctx: Context, view: Mapping[str, Any], display_id: str) -> dict[str, Any]:
    """The resolved options of ``display_id``, which the caller has checked exists."""
    displays = mapping(ctx, "display", view.get("display"))
    if "default" not in displays:
        raise ctx.error("display.default", "the view has no default (master) display")
    master = _display_section(ctx, displays, "default")
    if display_id == "default":
        return dict(master)
    own = _display_section(ctx, displays, display_id)
    defaults = mapping(ctx, f"display.{display_id}.display_options.defaults", own.get("defaults"))
    resolved = dict(master)
    for key in _OVERRIDABLE:
        flag = defaults.get(key, defaults.get(_LINKED.get(key, key), True))
        if php_empty(flag):
            resolved[key] = own.get(key)
    return resolved


def _display_section(
    ctx: Context, displays: Mapping[str, Any], display_id: str
) -> Mapping[str, Any]:
    display = mapping(ctx, f"display.{display_id}", displays[display_id])
    return mapping(ctx, f"display.{display_id}.display_options", display.get("display_options"))
