"""A quick yes for valid documents: a schema compiled to plain checks, for a subset of keywords.

jsonschema spends tens of microseconds per item (a validator object per descent); a fixture's
facts hold tens of thousands of machine-written records. The checks compiled here answer only
"certainly valid" or "not sure": a document they accept is one jsonschema accepts, and anything
else (an error, or a keyword outside the subset) goes to jsonschema, which gives the verdict and
the messages. The schema file stays the one definition; nothing here restates it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

# Keywords that only annotate: they never make a document invalid.
ANNOTATIONS = frozenset({"$schema", "$id", "title", "description", "$comment", "examples"})
SUPPORTED = ANNOTATIONS | {"type", "properties", "required", "additionalProperties", "items",
                           "pattern", "minimum", "uniqueItems"}


class Unsupported(Exception):
    """The schema uses a keyword (or a form of one) that this module does not compile."""


def _type_check(name: str) -> Check:
    # Stricter than JSON Schema where that is simpler (an integer-valued float is "not sure").
    checks: dict[str, Check] = {
        "object": lambda v: type(v) is dict,
        "array": lambda v: type(v) is list,
        "string": lambda v: type(v) is str,
        "boolean": lambda v: type(v) is bool,
        "integer": lambda v: type(v) is int,
        "null": lambda v: v is None,
    }
    if name not in checks:
        raise Unsupported(f"type {name!r}")
    return checks[name]


def compile_schema(schema: Any) -> Check:
    """Checks for ``schema``; raises Unsupported when it needs a keyword outside the subset."""
    if not isinstance(schema, dict) or not set(schema) <= SUPPORTED:
        raise Unsupported(str(sorted(set(schema) - SUPPORTED)) if isinstance(schema, dict)
                          else "a boolean schema")
    checks: list[Check] = []
    if "type" in schema:
        if not isinstance(schema["type"], str):
            raise Unsupported("a list of types")
        checks.append(_type_check(schema["type"]))
    # Each keyword below, like jsonschema's, says nothing about a value of another type.
    if "pattern" in schema:
        search = re.compile(schema["pattern"]).search
        checks.append(lambda v: not isinstance(v, str) or search(v) is not None)
    if "minimum" in schema:
        minimum = schema["minimum"]
        if type(minimum) not in (int, float):
            raise Unsupported("a minimum that is not a number")
        checks.append(lambda v: not isinstance(v, (int, float)) or type(v) is bool
                      or v >= minimum)
    if schema.get("uniqueItems") is True:
        # Only lists of strings are judged here; other items are "not sure".
        checks.append(lambda v: not isinstance(v, list) or (
            all(type(i) is str for i in v) and len(set(v)) == len(v)))
    elif "uniqueItems" in schema and schema["uniqueItems"] is not False:
        raise Unsupported("uniqueItems")
    if "items" in schema:
        item = compile_schema(schema["items"])
        checks.append(lambda v: not isinstance(v, list) or all(map(item, v)))
    if {"properties", "required", "additionalProperties"} & set(schema):
        checks.append(_object_check(schema))
    # Called once per item of a large list: one or two checks (a type and one keyword) are the
    # common case, and are joined without a generator.
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)
    return lambda value: all(check(value) for check in checks)


def _object_check(schema: dict[str, Any]) -> Check:
    properties = {name: compile_schema(sub) for name, sub in schema.get("properties", {}).items()}
    required = tuple(schema.get("required", ()))
    extra = schema.get("additionalProperties", True)
    extra_check = None if extra is True or extra is False else compile_schema(extra)
    closed = extra is False

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for name in required:
            if name not in value:
                return False
        for key, item in value.items():
            sub = properties.get(key)
            if sub is not None:
                if not sub(item):
                    return False
            elif closed or (extra_check is not None and not extra_check(item)):
                return False
        return True

    return check
