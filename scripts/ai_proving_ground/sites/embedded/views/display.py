"""Which options a display runs with: its own where it overrides, else the master's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ai_proving_ground.sites.embedded.views.context import Context, mapping

# Option sections a display may override; everything else is irrelevant to the rows.
_OVERRIDABLE = ("filters", "filter_groups", "sorts", "pager", "arguments", "fields")



def display_options(ctx: Context, view: Mapping[str, Any]) -> dict[str, Any]:
    displays = mapping(ctx, "display", view.get("display"))
    if "default" not in displays:
        raise ctx.error("display.default", "the view has no default (master) display")
    if ctx.display_id not in displays:
        known = ", ".join(str(d) for d in displays)
        raise ctx.error("display", f"no display {ctx.display_id!r}; known displays: {known}")
    master = _display_section(ctx, displays, "default")
    if ctx.display_id == "default":
        return dict(master)
    own = _display_section(ctx, displays, ctx.display_id)
    defaults = mapping(
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
    ctx: Context, displays: Mapping[str, Any], display_id: str
) -> Mapping[str, Any]:
    display = mapping(ctx, f"display.{display_id}", displays[display_id])
    return mapping(ctx, f"display.{display_id}.display_options", display.get("display_options"))

