"""What ``ViewExecutable::validate()`` reports for a view, display by display.

Drupal runs this when a view is saved through the UI, not when it executes: a view stored
another way runs with the problems it reports (an operator its filter does not have, no valid
values), so the embedded site records the same messages for a grader to show.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ai_proving_ground.sites.embedded.views.columns import column_accessor
from ai_proving_ground.sites.embedded.views.context import Context, mapping
from ai_proving_ground.sites.embedded.views.display import display_ids, display_options, display_title
from ai_proving_ground.sites.embedded.views.operators import (
    IN_FAMILIES,
    handler_operators,
    plugin_family,
)

_GROUPS = {"node": "Content", "taxonomy_term": "Taxonomy term", "user": "User"}
_NO_VALUE = frozenset({"empty", "not empty"})


def _value_options(ctx: Context, handler: Mapping[str, Any], label: str) -> set[str] | None:
    """The keys an in-operator filter offers, or None when the embedded site cannot know them."""
    schema = ctx.schema
    if schema is None:
        return None
    if handler.get("plugin_id") == "bundle":
        return set(schema.bundles)
    table, field = str(handler.get("table", "")), str(handler.get("field", ""))
    name = table.partition("__")[2]
    info = schema.fields.get(name)
    if info is not None and info.allowed is not None and field == f"{name}_value":
        return set(info.allowed)
    return None


def _filter_messages(ctx: Context, handler: Mapping[str, Any], entity_type: str,
                     base_table: str) -> list[str]:
    """InOperator::validate(): an operator the filter lacks, or no valid values left."""
    family = plugin_family(handler)
    if family not in IN_FAMILIES:
        return []
    accessor = column_accessor(ctx, "filters", handler, entity_type, base_table)
    if accessor is None:
        return []
    admin = handler.get("admin_label")
    label = str(admin) if admin else f"{_GROUPS.get(entity_type, entity_type)}: {accessor.label}"
    operator = handler.get("operator") or ("in" if family == "in" else "or")
    operators = handler_operators(family, accessor.allow_empty)
    if operator in _NO_VALUE and operator in operators:
        return []
    messages = []
    if operator not in operators:
        messages.append(f"The operator is invalid on filter: {label}.")
    value = handler.get("value")
    if isinstance(value, Mapping | list):
        options = _value_options(ctx, handler, label)
        if options is None:
            return messages
        expose = mapping(ctx, "expose", handler.get("expose"))
        if handler.get("exposed") and not expose.get("required") and not value:
            return messages
        chosen = value.values() if isinstance(value, Mapping) else value
        if not [v for v in chosen if str(v) in options]:
            messages.append(f"No valid values found on filter: {label}.")
    return messages


def _uses_fields(options: Mapping[str, Any]) -> bool:
    row = options.get("row")
    row_type = row.get("type", "fields") if isinstance(row, Mapping) else "fields"
    return row_type == "fields"


def view_messages(ctx: Context, view: Mapping[str, Any], entity_type: str,
                  base_table: str) -> tuple[str, ...]:
    messages: list[str] = []
    probe = Context(ctx.view_id, ctx.display_id, ctx.schema)  # broken handlers are not its news
    for display_id in display_ids(probe, view):
        options = display_options(probe, view, display_id)
        found: list[str] = []
        fields = mapping(probe, "fields", options.get("fields"))
        if _uses_fields(options) and not [f for f in fields.values()
                                          if isinstance(f, Mapping) and not f.get("exclude")]:
            title = display_title(probe, view, display_id)
            found.append(f'Display "{title}" uses fields but there are none defined for it or'
                         " all are excluded.")
        for handler in mapping(probe, "filters", options.get("filters")).values():
            if isinstance(handler, Mapping):
                found.extend(_filter_messages(probe, handler, entity_type, base_table))
        messages.extend(f"{display_id}: {m}" for m in found)
    return tuple(messages)
