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
    return f"Config {where} equals {_value(spec['value'])}."


def _entity_exists(spec: dict[str, Any]) -> str:
    subject = (f"Entity `{spec['uuid']}`" if "uuid" in spec else
               f"At least one {spec['entity_type']} {spec.get('bundle', '')} entity".replace("  ", " "))
    facts = [f"{key} {_value(spec[key])}" for key in ("label", "bundle", "status") if key in spec
             and not (key == "bundle" and "uuid" not in spec)]
    facts += [f"field `{name}` {_value(value)}" for name, value in (spec.get("fields") or {}).items()]
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


def _view_rows(spec: dict[str, Any]) -> str:
    display = spec.get("display", "default")
    arguments = f" with arguments {_value(spec['arguments'])}" if spec.get("arguments") else ""
    key = spec.get("match", "uuid")
    return (f"Executing view `{spec['view']}` display `{display}`{arguments} lists exactly "
            f"{len(spec['rows'])} row(s), matched by {key}, in the expected order.")


def _canvas_component(spec: dict[str, Any]) -> str:
    tree = f"page `{spec['page']}`" if "page" in spec else f"region `{spec['region']}`"
    parts = []
    if "parent_component_id" in spec:
        parts.append(f"inside a `{spec['parent_component_id']}`")
    if "slot" in spec:
        parts.append(f"in slot `{spec['slot']}`")
    if spec.get("inputs"):
        parts.append(f"with inputs {', '.join(f'{k} {_value(v)}' for k, v in spec['inputs'].items())}")
    return f"The Canvas {tree} holds a `{spec['component_id']}`" + \
        (f" {' '.join(parts)}" if parts else "") + "."


def _command(spec: dict[str, Any]) -> str:
    return f"The command `{' '.join(spec['argv'])}`, run in the bed, exits 0."


DESCRIBERS: dict[str, Describer] = {
    "config_exists": _config_exists,
    "config_equals": _config_equals,
    "entity_exists": _entity_exists,
    "entity_count": _entity_count,
    "module_enabled": _module_enabled,
    "view_rows": _view_rows,
    "canvas_component": _canvas_component,
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
