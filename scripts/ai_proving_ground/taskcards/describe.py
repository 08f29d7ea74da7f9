"""One sentence per check, from its dataset entry: a check type name -> describer table.

A type with no describer here (a new one) is still described, by its type and its own
``description``; a check's ``description`` is added to every sentence, as the task's author's
words. Nothing here evaluates a check: it only reads the entry.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Describer = Callable[[dict[str, Any]], str]


def _value(value: Any) -> str:
    return f"`{json.dumps(value, ensure_ascii=False, sort_keys=True)}`"


def _config_exists(spec: dict[str, Any]) -> str:
    return f"Config object `{spec['name']}` exists."


def _config_equals(spec: dict[str, Any]) -> str:
    where = f"`{spec['name']}`" + (f" at `{spec['path']}`" if spec.get("path") else "")
    order = " (its items in any order)" if spec.get("any_order") else ""
    return f"Config {where} equals {_value(spec['value'])}{order}."


def _entity_exists(spec: dict[str, Any]) -> str:
    subject = (f"Entity `{spec['uuid']}`" if "uuid" in spec else
               f"At least one {spec['entity_type']} {spec.get('bundle', '')} entity".replace("  ", " "))
    facts = [f"{key} {_value(spec[key])}" for key in ("label", "bundle", "status") if key in spec
             and not (key == "bundle" and "uuid" not in spec)]
    unordered = set(spec.get("any_order") or ())
    facts += [f"field `{name}` {_value(value)}" + (" in any order" if name in unordered else "")
              for name, value in (spec.get("fields") or {}).items()]
    return f"{subject} exists" + (f" with {', '.join(facts)}" if facts else "") + "."


def _entity_count(spec: dict[str, Any]) -> str:
    bounds = [f"{word} {spec[key]}" for key, word in (("equals", "exactly"), ("min", "at least"),
                                                      ("max", "at most")) if key in spec]
    what = " ".join(p for p in (spec["entity_type"], spec.get("bundle")) if p)
    conditions = [f"{c['field']} {c['operator']} {_value(c.get('value'))}"
                  for c in spec.get("conditions") or []]
    where = f" where {' and '.join(conditions)}" if conditions else ""
    return f"The site holds {' and '.join(bounds)} {what} entities{where}."


def _module_enabled(spec: dict[str, Any]) -> str:
    return f"Module `{spec['module']}` is enabled."


def _rows(rows: list[Any]) -> str:
    """How many rows, and how their order is judged (a listed group is a tie, any order)."""
    count = sum(len(r) if isinstance(r, list) else 1 for r in rows)
    groups = sum(1 for r in rows if isinstance(r, list))
    return f"{count} row(s) in the expected order" + (
        f" ({groups} group(s) of them in any order)" if groups else "")


def _view_rows(spec: dict[str, Any]) -> str:
    display = spec.get("display", "default")
    arguments = f" with arguments {_value(spec['arguments'])}" if spec.get("arguments") else ""
    if spec.get("exposed"):
        arguments += f" with exposed input {_value(spec['exposed'])}"
    if spec.get("page"):
        arguments += f" on pager page {spec['page']} (0 is the first)"
    key = spec.get("match", "uuid")
    return (f"Executing view `{spec['view']}` display `{display}`{arguments} lists exactly "
            f"{_rows(spec['rows'])}, matched by {key}.")


def _page_served(spec: dict[str, Any]) -> str:
    if "view" in spec:
        what = f"view `{spec['view']}`" + (f" display `{spec['display']}`" if spec.get("display") else "")
    else:
        what = f"{spec['entity_type']} `{spec['uuid']}`"
    rows = f", listing exactly {_rows(spec['rows'])}" if "rows" in spec else ""
    return f"A visitor of `{spec['path']}` is served {what}{rows}."


def _canvas_component(spec: dict[str, Any]) -> str:
    tree = f"page `{spec['page']}`" if "page" in spec else f"region `{spec['region']}`"
    count = spec.get("count")
    subject = (f"exactly {count} `{spec['component_id']}`" if count is not None
               else f"a `{spec['component_id']}`")
    parts = []
    if "parent_uuid" in spec:
        parts.append(f"inside component `{spec['parent_uuid']}`")
    if "parent_component_id" in spec:
        parts.append(f"inside a `{spec['parent_component_id']}`")
    if "slot" in spec:
        parts.append(f"in slot `{spec['slot']}`")
    if spec.get("inputs"):
        exact = " and no other" if spec.get("inputs_exact") else ""
        parts.append(f"with inputs {', '.join(f'{k} {_value(v)}' for k, v in spec['inputs'].items())}"
                     f"{exact}")
    return f"The Canvas {tree} holds {subject}" + (f" {' '.join(parts)}" if parts else "") + "."


def _canvas_tree(spec: dict[str, Any]) -> str:
    tree = f"page `{spec['page']}`" if "page" in spec else f"region `{spec['region']}`"
    status = "" if "status" not in spec else (", and is enabled" if spec["status"] else
                                              ", and is disabled")
    order = ", siblings in the listed order" if spec.get("ordered") else ""
    return (f"The Canvas {tree} holds exactly the expected tree of {len(spec['components'])} "
            f"component(s), every input compared{order}{status}.")


def _menu_tree(spec: dict[str, Any]) -> str:
    def count(links: list[dict[str, Any]]) -> int:
        return sum(1 + count(link.get("children") or []) for link in links)

    return (f"Menu `{spec['menu']}` shows a visitor exactly the expected {count(spec['links'])} "
            "enabled link(s), each by title and where it leads, nested and in order.")


def _site_unchanged(spec: dict[str, Any]) -> str:
    allow = spec.get("allow") or {}
    allowed = [f"`{name}`" for key in ("config", "content") for name in allow.get(key) or []]
    return ("Nothing else on the site changed: all of its config, its fixtures' content and "
            "how many entities of each content type and bundle it holds match the baseline"
            + (f", except {', '.join(allowed)}" if allowed else "") + ".")


def _command(spec: dict[str, Any]) -> str:
    return f"The command `{' '.join(spec['argv'])}`, run in the bed, exits 0."


DESCRIBERS: dict[str, Describer] = {
    "config_exists": _config_exists,
    "config_equals": _config_equals,
    "entity_exists": _entity_exists,
    "entity_count": _entity_count,
    "module_enabled": _module_enabled,
    "view_rows": _view_rows,
    "page_served": _page_served,
    "canvas_component": _canvas_component,
    "canvas_tree": _canvas_tree,
    "site_unchanged": _site_unchanged,
    "menu_tree": _menu_tree,
    "command": _command,
}


def describe(spec: dict[str, Any]) -> str:
    """The check in one sentence, its author's description after it."""
    kind = str(spec.get("type"))
    describer = DESCRIBERS.get(kind)
    try:
        sentence = describer(spec) if describer else f"A `{kind}` check."
    except (KeyError, TypeError):  # an entry the describer cannot read: say what it is
        sentence = f"A `{kind}` check."
    note = str(spec.get("description") or "").strip()
    return f"{sentence} {note}".strip() if note else sentence
