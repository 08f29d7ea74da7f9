"""What a recipe tree declares, read on the host before ``drush recipe`` applies it.

The driver uses the plan only for its report (config written, content created or
skipped); drush does the real validation when applying.
"""

from __future__ import annotations

import dataclasses
import shutil
import uuid
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import is_within
from ai_proving_ground.yamlio import load_yaml


@dataclasses.dataclass(frozen=True)
class RecipePlan:
    """What a recipe (with its sub-recipes) declares: config it writes, content it holds."""

    config: tuple[str, ...]
    content: tuple[str, ...]


def recipe_plan(recipe: Path, approot: Path, docroot: str) -> RecipePlan:
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
            pending.append(_sub_recipe(current, str(name), approot / docroot))
    return RecipePlan(config=tuple(sorted(config)), content=tuple(dict.fromkeys(content)))


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _sub_recipe(parent: Path, name: str, drupal_root: Path) -> Path:
    # Drupal resolves a bare name as a sibling and a name with "/" from the Drupal root.
    if "/" not in name:
        return parent.parent / name
    return drupal_root / name


def stage_recipe_tree(recipe: Path, staged: Path) -> Path:
    """Copy ``recipe`` to ``staged``, with the sibling recipes it names, replacing old copies.

    Drupal looks a bare sub-recipe name up beside the recipe, so each sibling it names is
    staged beside the copy. Symlinks inside a recipe are not followed out of it.
    """
    pending, done = [recipe], set()
    while pending:
        current = pending.pop()
        if current in done or not (current / "recipe.yml").is_file():
            continue
        done.add(current)
        _replace_tree(current, staged.parent / current.name)
        recipes = _mapping(load_yaml(current / "recipe.yml")).get("recipes")
        for name in recipes if isinstance(recipes, list) else []:
            if "/" not in str(name):
                pending.append(current.parent / str(name))
    return staged


def _replace_tree(src: Path, dest: Path) -> None:
    for path in src.rglob("*"):
        if path.is_symlink() and not is_within(path.resolve(), src.resolve()):
            raise ApgError(
                "APG_PATH_UNSAFE",
                f"{path} is a symlink out of the recipe {src}; copy its target into the recipe",
            )
    fresh = dest.with_name(f".{dest.name}.{uuid.uuid4().hex}")
    shutil.copytree(src, fresh, symlinks=False)
    old = dest.with_name(f".{dest.name}.old.{uuid.uuid4().hex}")
    if dest.exists():
        dest.rename(old)
    fresh.rename(dest)
    shutil.rmtree(old, ignore_errors=True)
