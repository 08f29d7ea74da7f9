"""A recipe's ``input:`` section: its definitions checked as core does, and values substituted."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ai_proving_ground.sites.embedded.recipe_checks import (
    RecipeSpec,
    check_keys,
    fail,
    fail_at,
    kind,
    mapping,
    string,
)
from ai_proving_ground.yamlio import PathPart, YamlDocument

INPUT_KEYS = ("data_type", "description", "constraints", "prompt", "form", "default")
PROMPT_KEYS = ("method", "arguments")
PROMPT_METHODS = ("ask", "askHidden", "confirm", "choice")
DEFAULT_KEYS = ("source", "value", "config", "fallback", "env")
DEFAULT_SOURCES = ("value", "config", "env")
# Core's typed-data plugins that implement PrimitiveInterface; recipes accept only these.
PRIMITIVE_TYPES = (
    "binary", "boolean", "datetime_iso8601", "duration_iso8601", "email", "float", "integer",
    "string", "timespan", "timestamp", "uri",
)

_PLACEHOLDER = re.compile(r"\$\{([^{}]+)\}")


# ---------------------------------------------------------------------------- input


def _check_prompt(doc: YamlDocument, parts: list[PathPart], value: Any) -> None:
    data = mapping(doc, parts, value)
    check_keys(doc, parts, data, PROMPT_KEYS)
    if data.get("method") not in PROMPT_METHODS:
        fail(doc, [*parts, "method"], f"must be one of: {', '.join(PROMPT_METHODS)}")
    if "arguments" in data:
        mapping(doc, [*parts, "arguments"], data["arguments"])


def _check_form(doc: YamlDocument, parts: list[PathPart], value: Any) -> None:
    # Inputs are primitives, so a form element may carry only '#properties'.
    for key in mapping(doc, parts, value):
        if not key.startswith("#"):
            fail(doc, [*parts, key], "form elements for recipe inputs cannot have child elements")


def _check_default(doc: YamlDocument, parts: list[PathPart], value: Any) -> None:
    data = mapping(doc, parts, value)
    check_keys(doc, parts, data, DEFAULT_KEYS)
    source = data.get("source")
    if source not in DEFAULT_SOURCES:
        fail(doc, [*parts, "source"], f"must be one of: {', '.join(DEFAULT_SOURCES)}")
    if source not in data:
        fail(doc, parts, f"the {source!r} key is required when source is {source!r}")
    if "config" in data:
        pair = data["config"]
        if not isinstance(pair, list) or len(pair) != 2:
            fail(doc, [*parts, "config"], "must be a list of [config name, property path]")
        for i, item in enumerate(pair):
            string(doc, [*parts, "config", i], item)
    if "env" in data:
        string(doc, [*parts, "env"], data["env"])


def _check_input(doc: YamlDocument, name: str, value: Any) -> None:
    parts: list[PathPart] = ["input", name]
    data = mapping(doc, parts, value)
    check_keys(doc, parts, data, INPUT_KEYS)
    for required in ("data_type", "description", "default"):
        if required not in data:
            fail(doc, [*parts, required], "is required")
    string(doc, [*parts, "description"], data["description"])
    if data["data_type"] not in PRIMITIVE_TYPES:
        fail(doc, [*parts, "data_type"],
              f"must be a primitive data type: {', '.join(PRIMITIVE_TYPES)}")
    if "constraints" in data:
        mapping(doc, [*parts, "constraints"], data["constraints"])
    if "prompt" in data:
        _check_prompt(doc, [*parts, "prompt"], data["prompt"])
    if "form" in data:
        _check_form(doc, [*parts, "form"], data["form"])
    _check_default(doc, [*parts, "default"], data["default"])


def parse_input(doc: YamlDocument, value: Any) -> dict[str, Any]:
    data = mapping(doc, ["input"], value)
    for name, definition in data.items():
        _check_input(doc, name, definition)
    return data


# ---------------------------------------------------------------------------- input values


def _as_text(spec: RecipeSpec, name: str, value: Any) -> str:
    # Core str_replace()s the value into strings, so render it the way PHP would.
    if isinstance(value, bool):
        return "1" if value else ""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str | int | float):
        return str(value)
    fail_at(spec, ["input", name], f"the value for input {name!r} must be a primitive, "
                                    f"not {kind(value)}")


def _input_value(spec: RecipeSpec, name: str, values: Mapping[str, Any]) -> Any:
    # Core's CLI names inputs `<recipe>.<input>`; the bare name is accepted too.
    for key in (f"{spec.path.name}.{name}", name):
        if key in values:
            return values[key]
    default = spec.input[name]["default"]
    parts: list[PathPart] = ["input", name, "default"]
    if default["source"] == "value":
        return default["value"]
    if default["source"] == "env":
        if default["env"] not in os.environ:
            fail_at(spec, [*parts, "env"],
                     f"environment variable {default['env']} is not set (input {name!r})")
        return os.environ[default["env"]]
    fail_at(spec, [*parts, "source"],
             f"source 'config' is not supported by the embedded site; pass a value for "
             f"{spec.path.name}.{name}")


def _replace(value: Any, table: Mapping[str, str]) -> Any:
    # One pass with a regex, so a value that itself contains ${x} is not expanded again.
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: table.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {key: _replace(item, table) for key, item in value.items()}
    if isinstance(value, list):
        return [_replace(item, table) for item in value]
    return value


def substitute_inputs(spec: RecipeSpec, values: Mapping[str, Any] | None = None) -> RecipeSpec:
    """Replace ``${name}`` in config action names and args, as core does (not in config files).

    ``values`` overrides defaults, keyed ``<recipe dir name>.<input>`` or ``<input>``.
    """
    given = values or {}
    table = {name: _as_text(spec, name, _input_value(spec, name, given)) for name in spec.input}
    if not table:
        return spec
    actions = {_replace(name, table): _replace(args, table)
               for name, args in spec.config_actions.items()}
    return replace(spec, config_actions=actions)
