"""View mutants: of every ``views.view.*`` the reference wrote, one filter dropped or its operator
or value changed, a contextual filter dropped or its action without an argument changed, a
sort's key or direction changed or the sorts removed, the pager's type, size or offset changed,
a page's path, a display's or the view's status, a display's override flag, and the view saved
twice (a second view on the same paths).

Each works on the display that holds the option (the default display, or one that overrides it),
so a mutant is a build an agent could have saved.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from ai_proving_ground.mutation.registry import Context, Mutant, operator
from ai_proving_ground.mutation.state import Writes

VIEW_PREFIX = "views.view."
DEFAULT_ITEMS = 10  # Views' items_per_page when a pager names none: what a new view gets
# An operator and the one that means the opposite, as Views' filter handlers name them.
OPPOSITE = {"=": "!=", "!=": "=", "in": "not in", "not in": "in", "or": "not", "not": "or",
            "and": "not", "<": ">=", ">=": "<", ">": "<=", "<=": ">", "contains": "not",
            "starts": "not_starts", "not_starts": "starts", "ends": "not_ends",
            "not_ends": "ends", "empty": "not empty", "not empty": "empty"}
# Sort keys a mutant may switch to: a base field, another base field, a field no storage has.
OTHER_SORTS = (("node_field_data", "created"), ("node_field_data", "title"),
               ("node__field_apg_missing", "field_apg_missing_value"))
Edit = Callable[[dict[str, Any]], None]


def _views(context: Context) -> Iterator[tuple[str, dict[str, Any]]]:
    for name in context.changed_config:
        view = context.config(name)
        if name.startswith(VIEW_PREFIX) and isinstance(view, dict):
            yield name, view


def _options(view: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for display_id, display in (view.get("display") or {}).items():
        if isinstance(display, dict) and isinstance(display.get("display_options"), dict):
            yield str(display_id), display["display_options"]


def _section(view: dict[str, Any], key: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(display id, the mapping at ``key``) for each display that holds one."""
    for display_id, options in _options(view):
        if isinstance(options.get(key), dict):
            yield display_id, options[key]


def _variant(op: str, name: str, view: dict[str, Any], target: str, words: str,
             edit: Callable[[dict[str, Any]], None]) -> Mutant:
    changed = copy.deepcopy(view)
    edit(changed)
    return Mutant(op, f"{name}:{target}", words, Writes(config={name: changed}))


def _options_of(view: dict[str, Any], display_id: str) -> dict[str, Any]:
    options: dict[str, Any] = view["display"][display_id]["display_options"]
    return options


def _set(display_id: str, keys: tuple[str, ...], value: Any, view: dict[str, Any]) -> None:
    """Set ``keys`` (a path under the display's options) to a copy of ``value``."""
    cursor = _options_of(view, display_id)
    for key in keys[:-1]:
        cursor = cursor[key]
    cursor[keys[-1]] = copy.deepcopy(value)


def _pop(display_id: str, keys: tuple[str, ...], view: dict[str, Any]) -> None:
    cursor = _options_of(view, display_id)
    for key in keys[:-1]:
        cursor = cursor[key]
    cursor.pop(keys[-1])


def _disable(view: dict[str, Any]) -> None:
    view["status"] = False


# ---------------------------------------------------------------------------- filters


@operator("views.filter_dropped")
def filter_dropped(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        for display_id, filters in _section(view, "filters"):
            for key in filters:
                yield _variant("views.filter_dropped", name, view, f"{display_id}.filters.{key}",
                               f"the {key} filter of {display_id} removed",
                               partial(_pop, display_id, ("filters", key)))


@operator("views.filter_operator")
def filter_operator(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        for display_id, filters in _section(view, "filters"):
            for key, handler in filters.items():
                current = str((handler or {}).get("operator", "="))
                if current not in OPPOSITE:
                    continue
                yield _variant("views.filter_operator", name, view, f"{display_id}.filters.{key}",
                               f"the {key} filter's operator {current!r} made {OPPOSITE[current]!r}",
                               partial(_set, display_id, ("filters", key, "operator"),
                                       OPPOSITE[current]))


@operator("views.filter_value")
def filter_value(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        for display_id, filters in _section(view, "filters"):
            for key, handler in filters.items():
                if not isinstance(handler, dict) or "value" not in handler:
                    continue
                value = _other_value(context, handler)
                yield _variant("views.filter_value", name, view, f"{display_id}.filters.{key}",
                               f"the {key} filter's value {handler['value']!r} made {value!r}",
                               partial(_set, display_id, ("filters", key, "value"), value))


def _other_value(context: Context, handler: dict[str, Any]) -> Any:
    """Another value of the same kind: another bundle or allowed value when the site has one."""
    value = handler["value"]
    if isinstance(value, dict) and value and all(k == v for k, v in value.items()):
        choices = _choices(context, handler)
        others = [c for c in choices if c not in value]
        chosen = others[0] if others else "apg_mutant"
        return {chosen: chosen}
    if isinstance(value, dict) and "value" in value:
        return {**value, "value": _bumped(value["value"])}
    return _bumped(value)


def _choices(context: Context, handler: dict[str, Any]) -> list[str]:
    field_name = str(handler.get("field", ""))
    if handler.get("plugin_id") == "bundle" or field_name in {"type", "bundle", "vid"}:
        return sorted(n.removeprefix("node.type.") for n in context.reference.config
                      if n.startswith("node.type."))
    base = field_name.removesuffix("_value")
    for config_name, data in sorted(context.reference.config.items()):
        if config_name.startswith("field.storage.") and config_name.endswith(f".{base}"):
            allowed = ((data or {}).get("settings") or {}).get("allowed_values") or []
            return [str(item.get("value")) for item in allowed if isinstance(item, dict)]
    return []


def _bumped(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str) and value in {"0", "1"}:
        return "0" if value == "1" else "1"
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return str(int(value) + 1)
    return f"{value}-mutant" if isinstance(value, str) else "apg_mutant"


# ---------------------------------------------------------------------------- contextual filters

# A contextual filter's action without an argument, and the one a mutant switches it to.
OTHER_DEFAULT_ACTION = {"ignore": "not found"}


@operator("views.argument_dropped")
def argument_dropped(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        for display_id, arguments in _section(view, "arguments"):
            for key in arguments:
                yield _variant("views.argument_dropped", name, view,
                               f"{display_id}.arguments.{key}",
                               f"the {key} contextual filter of {display_id} removed",
                               partial(_pop, display_id, ("arguments", key)))


@operator("views.argument_default")
def argument_default(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        for display_id, arguments in _section(view, "arguments"):
            for key, handler in arguments.items():
                current = str((handler or {}).get("default_action", "ignore"))
                other = OTHER_DEFAULT_ACTION.get(current, "ignore")
                yield _variant("views.argument_default", name, view,
                               f"{display_id}.arguments.{key}",
                               f"the {key} contextual filter does {other!r} without an "
                               f"argument, not {current!r}",
                               partial(_set, display_id, ("arguments", key, "default_action"),
                                       other))


# ---------------------------------------------------------------------------- sorts


@operator("views.sort_key")
def sort_key(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        for display_id, sorts in _section(view, "sorts"):
            for key, handler in sorts.items():
                for table, field_name in OTHER_SORTS:
                    if not isinstance(handler, dict) or handler.get("field") == field_name:
                        continue
                    replacement = {"id": field_name, "table": table, "field": field_name,
                                   "order": handler.get("order", "ASC")}
                    yield _variant("views.sort_key", name, view,
                                   f"{display_id}.sorts.{key}->{field_name}",
                                   f"the {key} sort made a sort on {table}.{field_name}",
                                   partial(_replace, display_id, key, replacement))


def _replace(display_id: str, old: str, value: dict[str, Any], view: dict[str, Any]) -> None:
    """The sort ``old`` replaced by ``value`` in its place (order is the sorts' order)."""
    sorts = _options_of(view, display_id)["sorts"]
    items = [(value["id"], copy.deepcopy(value)) if k == old else (k, v) for k, v in sorts.items()]
    sorts.clear()
    sorts.update(items)


@operator("views.sort_direction")
def sort_direction(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        for display_id, sorts in _section(view, "sorts"):
            for key, handler in sorts.items():
                order = "DESC" if str((handler or {}).get("order", "ASC")).upper() == "ASC" else "ASC"
                yield _variant("views.sort_direction", name, view, f"{display_id}.sorts.{key}",
                               f"the {key} sort made {order}",
                               partial(_set, display_id, ("sorts", key, "order"), order))


@operator("views.sort_removed")
def sort_removed(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        for display_id, sorts in _section(view, "sorts"):
            if sorts:
                yield _variant("views.sort_removed", name, view, f"{display_id}.sorts",
                               f"every sort of {display_id} removed",
                               partial(_set, display_id, ("sorts",), {}))


# ---------------------------------------------------------------------------- pager


def _pager_edit(display_id: str, pager: dict[str, Any]) -> Edit:
    return partial(_set, display_id, ("pager",), pager)


@operator("views.pager_type")
def pager_type(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        for display_id, pager in _section(view, "pager"):
            current = str(pager.get("type", "mini"))
            offset = (pager.get("options") or {}).get("offset", 0)
            kinds = ["some", "full"] if current == "none" else ["none"]
            for kind in kinds:
                options = {"offset": offset} if kind == "none" else {
                    "items_per_page": DEFAULT_ITEMS, "offset": offset}
                yield _variant("views.pager_type", name, view, f"{display_id}.pager->{kind}",
                               f"the {current} pager of {display_id} made {kind}",
                               _pager_edit(display_id, {"type": kind, "options": options}))


@operator("views.pager_size")
def pager_size(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        view_id = name.removeprefix(VIEW_PREFIX)
        listed = max((len(r) for (v, _), r in context.view_rows.items() if v == view_id),
                     default=0)
        for display_id, pager in _section(view, "pager"):
            options = dict(pager.get("options") or {})
            if pager.get("type") == "none":
                # One fewer than the reference lists: the smallest pager that hides a row.
                kind, size = "some", max(1, listed - 1)
            else:
                kind, size = str(pager.get("type")), max(1, int(options.get(
                    "items_per_page", DEFAULT_ITEMS) or DEFAULT_ITEMS) - 1)
            changed = {"type": kind, "options": {**options, "items_per_page": size}}
            yield _variant("views.pager_size", name, view, f"{display_id}.pager",
                           f"{display_id} shows {size} item(s) a page", _pager_edit(display_id, changed))


@operator("views.pager_offset")
def pager_offset(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        for display_id, pager in _section(view, "pager"):
            options = dict(pager.get("options") or {})
            offset = int(options.get("offset", 0) or 0) + 1
            changed = {**pager, "options": {**options, "offset": offset}}
            yield _variant("views.pager_offset", name, view, f"{display_id}.pager",
                           f"{display_id} skips {offset} row(s)", _pager_edit(display_id, changed))


# ---------------------------------------------------------------------------- route and status


@operator("views.path")
def path(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        for display_id, options in _options(view):
            if isinstance(options.get("path"), str):
                moved = options["path"].rstrip("/") + "-mutant"
                yield _variant("views.path", name, view, display_id,
                               f"{display_id} served at {moved} instead",
                               partial(_set, display_id, ("path",), moved))


@operator("views.display_status")
def display_status(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        for display_id, _ in _options(view):
            if display_id != "default":
                yield _variant("views.display_status", name, view, display_id,
                               f"display {display_id} disabled",
                               partial(_set, display_id, ("enabled",), False))


@operator("views.view_status")
def view_status(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        if view.get("status", True) is not False:
            yield _variant("views.view_status", name, view, "status", "the view disabled",
                           _disable)


# What a display that starts to override an option gets: Views' empty default for it.
OVERRIDE_EMPTY: dict[str, Any] = {"filters": {}, "sorts": {},
                                  "pager": {"type": "mini", "options": {"items_per_page": DEFAULT_ITEMS,
                                                                        "offset": 0}}}


@operator("views.override_flag")
def override_flag(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        for display_id, options in _options(view):
            if display_id == "default":
                continue
            found = options.get("defaults")
            defaults: dict[str, Any] = found if isinstance(found, dict) else {}
            for key, empty in OVERRIDE_EMPTY.items():
                overrides = defaults.get(key, True) is False
                words = (f"{display_id} inherits the default {key} again" if overrides
                         else f"{display_id} overrides {key} with none of its own")
                yield _variant("views.override_flag", name, view, f"{display_id}.defaults.{key}",
                               words, partial(_flip, display_id, key, empty, overrides))


def _flip(display_id: str, key: str, empty: Any, overrides: bool, view: dict[str, Any]) -> None:
    options = _options_of(view, display_id)
    defaults = options.setdefault("defaults", {})
    if overrides:
        defaults.pop(key, None)
        options.pop(key, None)
    else:
        defaults[key] = False
        options[key] = copy.deepcopy(empty)


@operator("views.view_duplicated")
def view_duplicated(context: Context) -> Iterator[Mutant]:
    for name, view in _views(context):
        copy_name = f"{name}_copy"
        if copy_name in context.reference.config:
            continue
        twin = {**copy.deepcopy(view), "id": copy_name.removeprefix(VIEW_PREFIX)}
        yield Mutant("views.view_duplicated", name, f"a second view, {copy_name}, on the same paths",
                     Writes(config={copy_name: twin}))
