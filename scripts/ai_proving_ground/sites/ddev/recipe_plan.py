"""What a recipe tree declares, read on the host before ``drush recipe`` applies it.

The driver uses the plan only for its report (config written, content created or
skipped); drush does the real validation when applying.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ai_proving_ground.yamlio import load_yaml


@dataclasses.dataclass(frozen=True)
class RecipePlan:
    """What a recipe (with its sub-recipes) declares: config it writes, content it holds."""

    config: tuple[str, ...]
    content: tuple[str, ...]


def recipe_plan(recipe: Path, approot: Path) -> RecipePlan:
    """Read the recipe tree on the host; drush does the real validation when applying."""
    config: set[str] = set()
    content: list[str] = []
    seen: set[Path] = set()
    pending = [recipe]
    while pending:
        current = pending.pop()
        if current in seen or not (current / "recipe.yml").is_file():
            continue
        seen.add(current)
        spec = _mapping(load_yaml(current / "recipe.yml"))
        config.update(p.stem for p in (current / "config").glob("*.yml"))
        actions = _mapping(_mapping(spec.get("config")).get("actions"))
        config.update(str(name).lstrip("?") for name in actions)
        for doc in sorted((current / "content").glob("**/*.yml")):
            meta = _mapping(_mapping(load_yaml(doc)).get("_meta"))
            if meta.get("uuid"):
                content.append(str(meta["uuid"]))
        recipes = spec.get("recipes")
        for name in recipes if isinstance(recipes, list) else []:
            pending.append(_sub_recipe(current, str(name), approot))
    return RecipePlan(config=tuple(sorted(config)), content=tuple(dict.fromkeys(content)))


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _sub_recipe(parent: Path, name: str, approot: Path) -> Path:
    # Drupal resolves a bare name as a sibling and a name with "/" from the Drupal root;
    # "web" (DDEV's default docroot) is assumed, as only the report depends on it.
    if "/" not in name:
        return parent.parent / name
    return approot / "web" / name
