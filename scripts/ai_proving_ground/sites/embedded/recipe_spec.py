"""Read a Drupal recipe directory and check it the way core's ``Recipe::parse()`` does.

Nothing here touches a site: checks that need one (is a module on disk, is a config
action's provider installed) belong to the driver that applies the recipe.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ai_proving_ground import yamlio
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import resolved_within
from ai_proving_ground.sites.embedded.recipe_checks import (
    TOKEN,
    RecipeSpec,
    check_config_name,
    check_keys,
    fail,
    fail_at,
    kind,
    label,
    mapping,
    string,
    string_list,
    text,
)
from ai_proving_ground.sites.embedded.recipe_input import parse_input, substitute_inputs
from ai_proving_ground.yamlio import PathPart, YamlDocument

__all__ = ["ALLOWED_KEYS", "RecipeSpec", "load_recipe", "resolve_subrecipe", "substitute_inputs"]

ALLOWED_KEYS = (
    "name", "type", "description", "recipes", "install", "config", "content", "extra", "input",
)
CONFIG_KEYS = ("import", "actions", "strict")
_EXTENSION_NAME = re.compile(r"^[a-zA-Z_\x7f-\xff][a-zA-Z0-9_\x7f-\xff]*$")


# ---------------------------------------------------------------------------- sections


def _parse_recipes(doc: YamlDocument, value: Any, own_name: str) -> tuple[str, ...]:
    # Core treats a null `recipes:` as empty (createFromDirectory's is_array check).
    names = string_list(doc, ["recipes"], value, null_ok=True)
    for index, name in enumerate(names):
        if name == own_name:
            fail(doc, ["recipes", index], f"the {name} recipe cannot depend on itself")
    return names


def _parse_import(doc: YamlDocument, value: Any) -> dict[str, str | list[str] | None]:
    if value is None:
        return {}
    data = mapping(doc, ["config", "import"], value)
    out: dict[str, str | list[str] | None] = {}
    for extension, names in data.items():
        parts: list[PathPart] = ["config", "import", extension]
        if names is None or names == "*":
            out[extension] = names
        elif isinstance(names, list):
            out[extension] = [check_config_name(doc, [*parts, i], n) for i, n in enumerate(names)]
        else:
            fail(doc, parts, "must be '*', a list of config names or null")
    return out


def _parse_strict(doc: YamlDocument, value: Any) -> bool | tuple[str, ...]:
    if value is None:  # core validates null as absent, and absent means strict
        return True
    if isinstance(value, bool):
        return value
    if not isinstance(value, list):
        fail(doc, ["config", "strict"], "must be a boolean, or a list of config names")
    return tuple(check_config_name(doc, ["config", "strict", i], n) for i, n in enumerate(value))


def _parse_actions(doc: YamlDocument, value: Any) -> dict[str, dict[str, Any]]:
    if value is None:
        return {}
    data = mapping(doc, ["config", "actions"], value)
    out: dict[str, dict[str, Any]] = {}
    for config_name, actions in data.items():
        # A leading '?' marks the target optional (core 11.3+); the key keeps it.
        parts: list[PathPart] = ["config", "actions", config_name]
        string(doc, parts, config_name.removeprefix("?"))
        out[config_name] = mapping(doc, parts, actions)
        if not actions:
            fail(doc, parts, "must name at least one action")
    return out


def _parse_config(
    doc: YamlDocument, value: Any
) -> tuple[dict[str, str | list[str] | None], dict[str, dict[str, Any]], bool | tuple[str, ...]]:
    data = mapping(doc, ["config"], value)
    check_keys(doc, ["config"], data, CONFIG_KEYS)
    strict = _parse_strict(doc, data.get("strict"))
    return _parse_import(doc, data.get("import")), _parse_actions(doc, data.get("actions")), strict


def _parse_extra(doc: YamlDocument, value: Any) -> dict[str, Any]:
    data = mapping(doc, ["extra"], value)
    for key in data:
        if not _EXTENSION_NAME.match(key):
            fail(doc, ["extra", key], f"{key!r} is not a valid extension name")
    return data


# ---------------------------------------------------------------------------- files


def _load_config_files(recipe_dir: Path) -> dict[str, Any]:
    config_dir = recipe_dir / "config"
    if not config_dir.is_dir():
        return {}
    out: dict[str, Any] = {}
    for path in sorted(config_dir.glob("*.yml")):
        resolved_within(path, "recipe config file", recipe_dir)
        doc = yamlio.load_document(path, TOKEN)
        if not isinstance(doc.data, dict):
            fail(doc, [], f"a config object must be a mapping, not {kind(doc.data)}")
        out[path.name.removesuffix(".yml")] = doc.data
    return out


def _load_recipe_document(recipe_dir: Path) -> YamlDocument:
    path = recipe_dir / "recipe.yml"
    if not path.is_file():
        raise ApgError(TOKEN, f"{recipe_dir}: not a recipe: there is no recipe.yml in this "
                              "directory", exit_code=1)
    resolved_within(path, "recipe file", recipe_dir)
    return yamlio.load_document(path, TOKEN)


def load_recipe(recipe_dir: Path) -> RecipeSpec:
    """Parse ``recipe_dir/recipe.yml`` and ``config/*.yml``; raise APG_RECIPE_INVALID."""
    doc = _load_recipe_document(recipe_dir)
    data = mapping(doc, [], doc.data)
    check_keys(doc, [], data, ALLOWED_KEYS)
    if "name" not in data:
        fail(doc, ["name"], "is required")
    config_import, config_actions, config_strict = (
        _parse_config(doc, data["config"]) if "config" in data else ({}, {}, True))
    if "content" in data and not isinstance(data["content"], dict | list):
        fail(doc, ["content"], f"must be a mapping or a list, not {kind(data['content'])}")
    content_dir = recipe_dir / "content"
    if content_dir.is_dir():
        resolved_within(content_dir, "recipe content directory", recipe_dir)
    return RecipeSpec(
        path=recipe_dir,
        name=label(doc, ["name"], data["name"]),
        type=label(doc, ["type"], data["type"]) if "type" in data else None,
        description=(text(doc, ["description"], data["description"])
                     if "description" in data else None),
        recipes=_parse_recipes(doc, data.get("recipes"), recipe_dir.name),
        install=string_list(doc, ["install"], data["install"]) if "install" in data else (),
        config_import=config_import,
        config_actions=config_actions,
        config_strict=config_strict,
        config_files=_load_config_files(recipe_dir),
        content_dir=content_dir if content_dir.is_dir() else None,
        extra=_parse_extra(doc, data["extra"]) if "extra" in data else {},
        input=parse_input(doc, data["input"]) if "input" in data else {},
    )


# ---------------------------------------------------------------------------- sub-recipes


def resolve_subrecipe(parent: RecipeSpec, name: str, drupal_root: Path, bed: Path) -> Path:
    """Where a ``recipes:`` entry lives: a sibling dir, or a Drupal-root path if it has '/'; it
    must really lie beside ``parent`` or in the ``bed`` (no symlink or ``..`` out of them)."""
    parts: list[PathPart] = ["recipes"]
    if name in parent.recipes:
        parts.append(parent.recipes.index(name))
    candidate = drupal_root / name if "/" in name else parent.path.parent / name
    if name == parent.path.name or candidate.resolve() == parent.path.resolve():
        fail_at(parent, parts, f"the {name} recipe cannot depend on itself")
    resolved_within(candidate, f"the {name} recipe", parent.path.parent, bed)  # before any look
    if not (candidate / "recipe.yml").is_file():
        fail_at(parent, parts,
                 f"the {name} recipe does not exist (no recipe.yml in {candidate})")
    return candidate


