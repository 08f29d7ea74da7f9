"""What a visitor can give a view beyond a first visit, so that equivalence sees it too: each
exposed filter's input and the contextual arguments, chosen from the reference.

A first visit gives neither, and then a build that changes an exposed filter's operator, drops
it, or breaks a contextual filter lists what the reference lists. So every display of a view the
reference wrote is also executed with:

- each exposed filter's identifier set to a value the reference's own rows hold in the filtered
  field (the first listed row's: it selects a subset), and to a value no row holds; a grouped
  one to each of its group items;
- its contextual filters given the first listed row's values, and an argument no row holds;
- each input a task's check gives that view (``arguments``, ``exposed``, ``page``).

The same inputs are given to the reference and to every mutant; a mutant is equivalent only if
every execution lists what the reference's does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ai_proving_ground.mutation.state import EntityState, SiteState
from ai_proving_ground.mutation.views_ops import VIEW_PREFIX

NO_MATCH = "apg-no-such-value"  # an input no fixture holds: the filter must then list nothing


@dataclass(frozen=True)
class ViewInput:
    """One visit's input: contextual arguments (``/path/a/b``) and exposed input (``?k=v``)."""

    label: str  # how the behaviour names the execution: "arguments billing", "exposed product=x"
    arguments: tuple[str, ...] = ()
    exposed: tuple[tuple[str, str], ...] = ()
    page: int = 0  # the pager's page, as in ?page=1


Inputs = dict[str, tuple[ViewInput, ...]]  # views.view.<id> -> the inputs its displays get


def view_inputs(reference: SiteState, names: Iterable[str],
                view_rows: Mapping[tuple[str, str], Sequence[str]],
                checks: Sequence[Mapping[str, Any]]) -> Inputs:
    """The inputs of every view among ``names``, from the reference's config and rows."""
    inputs: Inputs = {}
    for name in names:
        view = reference.config.get(name)
        if not name.startswith(VIEW_PREFIX) or not isinstance(view, dict):
            continue
        view_id = name.removeprefix(VIEW_PREFIX)
        listed = [u for (v, _d), rows in sorted(view_rows.items()) if v == view_id for u in rows]
        entities = [reference.entities[u] for u in dict.fromkeys(listed) if u in reference.entities]
        entities += [e for u, e in sorted(reference.entities.items()) if u not in listed]
        found: dict[str, ViewInput] = {}
        for options in _display_options(view):
            _exposed(options, entities, found)
            _arguments(options, entities, found)
        for check in checks:
            if check.get("view") == view_id:
                _checked(check, found)
        if found:
            inputs[name] = tuple(found[label] for label in sorted(found))
    return inputs


def _display_options(view: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    for display in (view.get("display") or {}).values():
        options = display.get("display_options") if isinstance(display, dict) else None
        if isinstance(options, dict):
            yield options


def _checked(check: Mapping[str, Any], found: dict[str, ViewInput]) -> None:
    """The input a check gives the view, when it gives some."""
    arguments = tuple(_text(v) for v in check.get("arguments") or ())
    typed = check.get("exposed")
    exposed = tuple(sorted((str(k), _text(v)) for k, v in typed.items())) \
        if isinstance(typed, dict) else ()
    page = int(check.get("page") or 0)
    if arguments or exposed or page:
        label = "; ".join(part for part in (
            _label(arguments) if arguments else "",
            "exposed " + "&".join(f"{k}={v}" for k, v in exposed) if exposed else "",
            f"page {page}" if page else "") if part)
        found.setdefault(label, ViewInput(label, arguments, exposed, page))


def _exposed(options: Mapping[str, Any], entities: Sequence[EntityState],
             found: dict[str, ViewInput]) -> None:
    filters = options.get("filters")
    for handler in (filters.values() if isinstance(filters, dict) else ()):
        if not isinstance(handler, dict) or not handler.get("exposed"):
            continue
        key = _identifier(handler)
        if key is None:
            continue
        for value in _choices(handler, entities):
            label = f"exposed {key}={value}"
            found.setdefault(label, ViewInput(label, exposed=((key, value),)))


def _identifier(handler: Mapping[str, Any]) -> str | None:
    """The URL parameter an exposed filter reads: its group's, or its own (``expose``)."""
    section = handler.get("group_info") if handler.get("is_grouped") else handler.get("expose")
    name = section.get("identifier") if isinstance(section, dict) else None
    return name if isinstance(name, str) and name else None


def _choices(handler: Mapping[str, Any], entities: Sequence[EntityState]) -> list[str]:
    """A grouped filter's group items; else a value the rows hold and one no row holds."""
    if handler.get("is_grouped"):
        items = (handler.get("group_info") or {}).get("group_items")
        return [str(key) for key in items] if isinstance(items, dict) else []
    held = _held(handler, entities)
    return [held, NO_MATCH] if held is not None else [NO_MATCH]


def _arguments(options: Mapping[str, Any], entities: Sequence[EntityState],
               found: dict[str, ViewInput]) -> None:
    arguments = options.get("arguments")
    if not isinstance(arguments, dict) or not arguments:
        return
    held = [_held(h, entities) if isinstance(h, dict) else None for h in arguments.values()]
    for values in ([v for v in held if v is not None], [NO_MATCH]):
        if values:
            found.setdefault(_label(values), ViewInput(_label(values), arguments=tuple(values)))


def _label(arguments: Sequence[str]) -> str:
    return "arguments " + "/".join(arguments)


def _held(handler: Mapping[str, Any], entities: Sequence[EntityState]) -> str | None:
    """The first value the handler's column holds among ``entities``, as a visitor types it."""
    table, column = str(handler.get("table") or ""), str(handler.get("field") or "")
    if "__" in table:  # a field table: node__field_x, column field_x_value
        name = table.split("__", 1)[1]
        prop = column.removeprefix(f"{name}_") or "value"
        for entity in entities:
            for item in entity.fields.get(name) or []:
                if isinstance(item, dict) and item.get(prop) not in (None, ""):
                    return _text(item[prop])
        return None
    for entity in entities:  # a base field of the data table
        base = {"title": entity.label, "name": entity.label, "status": entity.status,
                "type": entity.bundle, "vid": entity.bundle}
        if column in base:
            return _text(base[column])
        items = entity.fields.get(column) or []
        if items and isinstance(items[0], dict) and items[0].get("value") not in (None, ""):
            return _text(items[0]["value"])
    return None


def _text(value: Any) -> str:
    """A value as it reaches Views from a URL: text, a boolean as 1 or 0."""
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)
