"""JSON Schemas kept as data beside this loader; errors read ``file:line:col: $.path: message``.

A schema may refer to a definition in another one by its file name (``"$ref":
"hidden_record.schema.json#/$defs/check"``): every schema here is registered under its ``$id``,
so one shape has one definition.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.schemas.quick import Check, Unsupported, compile_schema
from ai_proving_ground.yamlio import YamlDocument, json_path

if TYPE_CHECKING:
    import jsonschema
    import referencing

SCHEMA_DIR = Path(__file__).resolve().parent


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    """The schema ``<name>.schema.json`` from this folder."""
    data: dict[str, Any] = json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text("utf-8"))
    return data


# The one format our schemas use: ``"format": "finite"``, a number that is not nan or infinite
# (YAML's .nan and .inf are numbers, and every comparison with nan is false, so no minimum or
# maximum refuses it).
def _finite(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


@functools.cache
def format_checker() -> jsonschema.FormatChecker:
    """The checker for our formats (``finite``)."""
    # A document the quick checks accept never needs jsonschema, which is slow to import:
    # lazy for start-up time.
    import jsonschema

    checker = jsonschema.FormatChecker(formats=())
    checker.checks("finite")(_finite)
    return checker


@functools.cache
def _registry() -> referencing.Registry[Any]:
    """Every schema in this folder, by its ``$id``."""
    import referencing  # lazy for start-up time, as jsonschema (which depends on it) is

    schemas = [load_schema(path.name.removesuffix(".schema.json"))
               for path in sorted(SCHEMA_DIR.glob("*.schema.json"))]
    return referencing.Registry().with_resources(
        (schema["$id"], referencing.Resource.from_contents(schema)) for schema in schemas)


@functools.cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    import jsonschema  # lazy for start-up time, as in format_checker

    return jsonschema.Draft202012Validator(load_schema(name), format_checker=format_checker(),
                                           registry=_registry())


@functools.cache
def _quick(name: str) -> Check | None:
    try:
        return compile_schema(load_schema(name))
    except Unsupported:
        return None


def schema_errors(data: Any, name: str) -> list[jsonschema.ValidationError]:
    """Every violation, in document order.

    A document the quick checks accept is valid; any other goes to jsonschema for the verdict.
    """
    quick = _quick(name)
    if quick is not None and quick(data):
        return []
    return sorted(_validator(name).iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])


def validate_document(doc: YamlDocument, name: str, token: str) -> None:
    """Raise one ApgError listing every violation with its file, line, column and JSON path."""
    errors = schema_errors(doc.data, name)
    if not errors:
        return
    lines = []
    for error in errors:
        parts = list(error.absolute_path)
        line, col = doc.position(parts)
        lines.append(f"{doc.path}:{line}:{col}: {json_path(parts)}: {error.message}")
    raise ApgError(token, "\n".join(lines))
