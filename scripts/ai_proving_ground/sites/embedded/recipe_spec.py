"""Read a Drupal recipe directory and check it the way core's ``Recipe::parse()`` does.

Nothing here touches a site: checks that need one (is a module on disk, is a config
action's provider installed) belong to the driver that applies the recipe.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NoReturn

from ai_proving_ground import yamlio
from ai_proving_ground.errors import ApgError
from ai_proving_ground.yamlio import PathPart, YamlDocument

TOKEN = "APG_RECIPE_INVALID"

ALLOWED_KEYS = (
    "name", "type", "description", "recipes", "install", "config", "content", "extra", "input",
)
CONFIG_KEYS = ("import", "actions", "strict")
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

_CONFIG_NAME = re.compile(r"^.+\.")  # core's Regex('/^.+\./'): something, then a dot
_EXTENSION_NAME = re.compile(r"^[a-zA-Z_\x7f-\xff][a-zA-Z0-9_\x7f-\xff]*$")
_PLACEHOLDER = re.compile(r"\$\{([^{}]+)\}")


@dataclass(frozen=True)
class RecipeSpec:
    """A parsed, validated recipe; ``config_files`` maps config name to its data."""

    path: Path
    name: str
    type: str | None
    description: str | None
    recipes: tuple[str, ...]
    install: tuple[str, ...]
    config_import: dict[str, str | list[str] | None]
    config_actions: dict[str, dict[str, Any]]
    config_strict: bool | tuple[str, ...]
    config_files: dict[str, Any]
    content_dir: Path | None
    extra: dict[str, Any]
    input: dict[str, Any]


# ---------------------------------------------------------------------------- errors


def _fail(doc: YamlDocument, parts: Sequence[PathPart], message: str) -> NoReturn:
    yamlio.fail_at(doc, TOKEN, parts, message)


def _fail_at(spec: RecipeSpec, parts: Sequence[PathPart], message: str) -> NoReturn:
    """Fail with a position in an already-loaded recipe (re-read only to locate the node)."""
    path = spec.path / "recipe.yml"
    try:
        where = yamlio.load_document(path, TOKEN).where(parts)
    except ApgError:  # the file changed under us; the path alone still helps
        where = f"{path}:1:1: {yamlio.json_path(parts)}"
    raise ApgError(TOKEN, f"{where}: {message}", exit_code=1)


# ---------------------------------------------------------------------------- scalar checks


def _has_control(text: str, allowed: str = "") -> bool:
    # Core rejects Unicode category C (control, format, unassigned...) in labels.
    return any(unicodedata.category(ch).startswith("C") and ch not in allowed for ch in text)


def _string(doc: YamlDocument, parts: Sequence[PathPart], value: Any) -> str:
    if not isinstance(value, str):
        _fail(doc, parts, f"must be a string, not {_kind(value)}")
    if not value.strip():
        _fail(doc, parts, "must not be blank")
    return value


def _label(doc: YamlDocument, parts: Sequence[PathPart], value: Any) -> str:
    text = _string(doc, parts, value)
    if _has_control(text):
        _fail(doc, parts, "must be a single line without control characters")
    return text


def _text(doc: YamlDocument, parts: Sequence[PathPart], value: Any) -> str:
    text = _string(doc, parts, value)
    if _has_control(text, allowed="\t\n\r"):
        _fail(doc, parts, "must not contain control characters")
    return text


def _config_name(doc: YamlDocument, parts: Sequence[PathPart], value: Any) -> str:
    name = _string(doc, parts, value)
    if not _CONFIG_NAME.match(name):
        _fail(doc, parts, f"{name!r} is not a config name (it needs a '.')")
    return name


def _kind(value: Any) -> str:
    return yamlio.describe_kind(value)


# ---------------------------------------------------------------------------- container checks


def _mapping(doc: YamlDocument, parts: Sequence[PathPart], value: Any) -> dict[str, Any]:
    return yamlio.require_mapping(doc, TOKEN, parts, value)


def _keys(
    doc: YamlDocument, parts: Sequence[PathPart], data: Mapping[str, Any], allowed: Sequence[str]
) -> None:
    for key in data:
        if key not in allowed:
            _fail(doc, [*parts, key],
                  f"unknown key {key!r}; allowed keys: {', '.join(allowed)}")


def _string_list(
    doc: YamlDocument, parts: Sequence[PathPart], value: Any, *, null_ok: bool = False
) -> tuple[str, ...]:
    if value is None and null_ok:
        return ()
    if not isinstance(value, list):
        _fail(doc, parts, f"must be a list of strings, not {_kind(value)}")
    return tuple(_string(doc, [*parts, i], item) for i, item in enumerate(value))


# ---------------------------------------------------------------------------- sections


def _parse_recipes(doc: YamlDocument, value: Any, own_name: str) -> tuple[str, ...]:
    # Core treats a null `recipes:` as empty (createFromDirectory's is_array check).
    names = _string_list(doc, ["recipes"], value, null_ok=True)
    for index, name in enumerate(names):
        if name == own_name:
            _fail(doc, ["recipes", index], f"the {name} recipe cannot depend on itself")
    return names


def _parse_import(doc: YamlDocument, value: Any) -> dict[str, str | list[str] | None]:
    if value is None:
        return {}
    data = _mapping(doc, ["config", "import"], value)
    out: dict[str, str | list[str] | None] = {}
    for extension, names in data.items():
        parts: list[PathPart] = ["config", "import", extension]
        if names is None or names == "*":
            out[extension] = names
        elif isinstance(names, list):
            out[extension] = [_config_name(doc, [*parts, i], n) for i, n in enumerate(names)]
        else:
            _fail(doc, parts, "must be '*', a list of config names or null")
    return out


def _parse_strict(doc: YamlDocument, value: Any) -> bool | tuple[str, ...]:
    if value is None:  # core validates null as absent, and absent means strict
        return True
    if isinstance(value, bool):
        return value
    if not isinstance(value, list):
        _fail(doc, ["config", "strict"], "must be a boolean, or a list of config names")
    return tuple(_config_name(doc, ["config", "strict", i], n) for i, n in enumerate(value))


def _parse_actions(doc: YamlDocument, value: Any) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    data = _mapping(doc, ["config", "actions"], value)
    out: dict[str, dict[str, Any]] = {}
    for config_name, actions in data.items():
        # A leading '?' marks the target optional (core 11.3+); the key keeps it.
        parts: list[PathPart] = ["config", "actions", config_name]
        _string(doc, parts, config_name.removeprefix("?"))
        out[config_name] = _mapping(doc, parts, actions)
        if not actions:
            _fail(doc, parts, "must name at least one action")
    return out


def _parse_config(
    doc: YamlDocument, value: Any
) -> tuple[dict[str, str | list[str] | None], dict[str, dict[str, Any]], bool | tuple[str, ...]]:
    data = _mapping(doc, ["config"], value)
    _keys(doc, ["config"], data, CONFIG_KEYS)
    strict = _parse_strict(doc, data.get("strict"))
    return _parse_import(doc, data.get("import")), _parse_actions(doc, data.get("actions")), strict


def _parse_extra(doc: YamlDocument, value: Any) -> dict[str, Any]:
    data = _mapping(doc, ["extra"], value)
    for key in data:
        if not _EXTENSION_NAME.match(key):
            _fail(doc, ["extra", key], f"{key!r} is not a valid extension name")
    return data


# ---------------------------------------------------------------------------- input


def _check_prompt(doc: YamlDocument, parts: list[PathPart], value: Any) -> None:
    data = _mapping(doc, parts, value)
    _keys(doc, parts, data, PROMPT_KEYS)
    if data.get("method") not in PROMPT_METHODS:
        _fail(doc, [*parts, "method"], f"must be one of: {', '.join(PROMPT_METHODS)}")
    if "arguments" in data:
        _mapping(doc, [*parts, "arguments"], data["arguments"])


def _check_form(doc: YamlDocument, parts: list[PathPart], value: Any) -> None:
    # Inputs are primitives, so a form element may carry only '#properties'.
    for key in _mapping(doc, parts, value):
        if not key.startswith("#"):
            _fail(doc, [*parts, key], "form elements for recipe inputs cannot have child elements")


def _check_default(doc: YamlDocument, parts: list[PathPart], value: Any) -> None:
    data = _mapping(doc, parts, value)
    _keys(doc, parts, data, DEFAULT_KEYS)
    source = data.get("source")
    if source not in DEFAULT_SOURCES:
        _fail(doc, [*parts, "source"], f"must be one of: {', '.join(DEFAULT_SOURCES)}")
    if source not in data:
        _fail(doc, parts, f"the {source!r} key is required when source is {source!r}")
    if "config" in data:
        pair = data["config"]
        if not isinstance(pair, list) or len(pair) != 2:
            _fail(doc, [*parts, "config"], "must be a list of [config name, property path]")
        for i, item in enumerate(pair):
            _string(doc, [*parts, "config", i], item)
    if "env" in data:
        _string(doc, [*parts, "env"], data["env"])


def _check_input(doc: YamlDocument, name: str, value: Any) -> None:
    parts: list[PathPart] = ["input", name]
    data = _mapping(doc, parts, value)
    _keys(doc, parts, data, INPUT_KEYS)
    for required in ("data_type", "description", "default"):
        if required not in data:
            _fail(doc, [*parts, required], "is required")
    _string(doc, [*parts, "description"], data["description"])
    if data["data_type"] not in PRIMITIVE_TYPES:
        _fail(doc, [*parts, "data_type"],
              f"must be a primitive data type: {', '.join(PRIMITIVE_TYPES)}")
    if "constraints" in data:
        _mapping(doc, [*parts, "constraints"], data["constraints"])
    if "prompt" in data:
        _check_prompt(doc, [*parts, "prompt"], data["prompt"])
    if "form" in data:
        _check_form(doc, [*parts, "form"], data["form"])
    _check_default(doc, [*parts, "default"], data["default"])


def _parse_input(doc: YamlDocument, value: Any) -> dict[str, Any]:
    data = _mapping(doc, ["input"], value)
    for name, definition in data.items():
        _check_input(doc, name, definition)
    return data


# ---------------------------------------------------------------------------- files


def _load_config_files(recipe_dir: Path) -> dict[str, Any]:
    config_dir = recipe_dir / "config"
    if not config_dir.is_dir():
        return {}
    out: dict[str, Any] = {}
    for path in sorted(config_dir.glob("*.yml")):
        doc = yamlio.load_document(path, TOKEN)
        if not isinstance(doc.data, dict):
            _fail(doc, [], f"a config object must be a mapping, not {_kind(doc.data)}")
        out[path.name.removesuffix(".yml")] = doc.data
    return out


def _load_recipe_document(recipe_dir: Path) -> YamlDocument:
    path = recipe_dir / "recipe.yml"
    if not path.is_file():
        raise ApgError(TOKEN, f"{recipe_dir}: not a recipe: there is no recipe.yml in this "
                              "directory", exit_code=1)
    return yamlio.load_document(path, TOKEN)


def load_recipe(recipe_dir: Path) -> RecipeSpec:
    """Parse ``recipe_dir/recipe.yml`` and ``config/*.yml``; raise APG_RECIPE_INVALID."""
    doc = _load_recipe_document(recipe_dir)
    data = _mapping(doc, [], doc.data)
    _keys(doc, [], data, ALLOWED_KEYS)
    if "name" not in data:
        _fail(doc, ["name"], "is required")
    config_import, config_actions, config_strict = (
        _parse_config(doc, data["config"]) if "config" in data else ({}, {}, True))
    if "content" in data and not isinstance(data["content"], dict | list):
        _fail(doc, ["content"], f"must be a mapping or a list, not {_kind(data['content'])}")
    content_dir = recipe_dir / "content"
    return RecipeSpec(
        path=recipe_dir,
        name=_label(doc, ["name"], data["name"]),
        type=_label(doc, ["type"], data["type"]) if "type" in data else None,
        description=(_text(doc, ["description"], data["description"])
                     if "description" in data else None),
        recipes=_parse_recipes(doc, data.get("recipes"), recipe_dir.name),
        install=_string_list(doc, ["install"], data["install"]) if "install" in data else (),
        config_import=config_import,
        config_actions=config_actions,
        config_strict=config_strict,
        config_files=_load_config_files(recipe_dir),
        content_dir=content_dir if content_dir.is_dir() else None,
        extra=_parse_extra(doc, data["extra"]) if "extra" in data else {},
        input=_parse_input(doc, data["input"]) if "input" in data else {},
    )


# ---------------------------------------------------------------------------- sub-recipes


def resolve_subrecipe(parent: RecipeSpec, name: str, drupal_root: Path) -> Path:
    """Where a ``recipes:`` entry lives: a sibling dir, or a Drupal-root path if it has '/'."""
    parts: list[PathPart] = ["recipes"]
    if name in parent.recipes:
        parts.append(parent.recipes.index(name))
    candidate = drupal_root / name if "/" in name else parent.path.parent / name
    if name == parent.path.name or candidate.resolve() == parent.path.resolve():
        _fail_at(parent, parts, f"the {name} recipe cannot depend on itself")
    if not (candidate / "recipe.yml").is_file():
        _fail_at(parent, parts,
                 f"the {name} recipe does not exist (no recipe.yml in {candidate})")
    return candidate


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
    _fail_at(spec, ["input", name], f"the value for input {name!r} must be a primitive, "
                                    f"not {_kind(value)}")


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
            _fail_at(spec, [*parts, "env"],
                     f"environment variable {default['env']} is not set (input {name!r})")
        return os.environ[default["env"]]
    _fail_at(spec, [*parts, "source"],
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
