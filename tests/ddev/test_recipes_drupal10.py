"""Issue 10, point 2: the shipped recipes apply on every Drupal DDEV's drupal10/drupal11 serve.

Drupal 10.3's recipe validator (core/lib/Drupal/Core/Recipe/Recipe.php) is a Symfony Collection
constraint: unknown keys are refused. ``config.strict`` and ``input`` arrived in 10.4/11.1, a
top-level ``extra`` in 11.2 (reference/drupal-ddev-facts.md, section 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ai_proving_ground import fixtures
from ai_proving_ground.bed import init_bed
from ai_proving_ground.errors import ApgError
from ai_proving_ground.paths import base_recipe_dir, project_dir
from ai_proving_ground.yamlio import load_yaml

DRUPAL_10_3_KEYS = {"name", "description", "type", "recipes", "install", "config", "content"}
DRUPAL_10_3_CONFIG_KEYS = {"import", "actions"}

SHIPPED = [base_recipe_dir(), *sorted(project_dir("fixtures").glob("fixture_*"))]


@pytest.mark.parametrize("recipe", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_recipe_uses_only_keys_drupal_10_3_accepts(recipe: Path) -> None:
    data = load_yaml(recipe / "recipe.yml")
    assert set(data) <= DRUPAL_10_3_KEYS, set(data) - DRUPAL_10_3_KEYS
    assert set(data.get("config") or {}) <= DRUPAL_10_3_CONFIG_KEYS


def test_canvas_comes_only_with_the_fixture_that_needs_it() -> None:
    installers = {
        recipe.name
        for recipe in SHIPPED
        if "canvas" in (load_yaml(recipe / "recipe.yml").get("install") or [])
    }
    assert installers == {"fixture_canvas_home"}


def test_the_base_version_lives_beside_the_recipe(tmp_path: Path) -> None:
    assert fixtures.base_version(tmp_path) == str(load_yaml(base_recipe_dir() / "apg.yml")["version"])


def bed_copy(tmp_path: Path, recipe_yml: str, sidecar: str | None) -> Path:
    copy = tmp_path / "recipes" / "apg_base"
    copy.mkdir(parents=True)
    (copy / "recipe.yml").write_text(recipe_yml)
    if sidecar is not None:
        (copy / "apg.yml").write_text(sidecar)
    return tmp_path


def test_a_beds_copy_without_a_version_has_the_shipped_one(tmp_path: Path) -> None:
    approot = bed_copy(tmp_path, (base_recipe_dir() / "recipe.yml").read_text(), None)
    assert fixtures.base_version(approot) == fixtures.base_version(tmp_path / "elsewhere")


def test_a_beds_own_version_wins(tmp_path: Path) -> None:
    approot = bed_copy(tmp_path, "name: base\n", "version: '7'\n")
    assert fixtures.base_version(approot) == "7"


def test_an_older_beds_extra_version_still_counts(tmp_path: Path) -> None:
    approot = bed_copy(tmp_path, "name: base\nextra:\n  ai_proving_ground:\n    version: '1'\n", None)
    assert fixtures.base_version(approot) == "1"


def test_a_sidecar_without_a_version_is_refused_with_its_place(tmp_path: Path) -> None:
    approot = bed_copy(tmp_path, "name: base\n", "other: 1\n")
    with pytest.raises(ApgError) as caught:
        fixtures.base_version(approot)
    assert caught.value.token == "APG_RECIPE_INVALID"
    assert "apg.yml" in caught.value.message


def test_the_base_recipe_and_both_fixtures_apply_on_the_embedded_site(tmp_path: Path) -> None:
    site = init_bed(tmp_path / "bed", ["kb_docs", "canvas_home"])
    assert (tmp_path / "bed" / "recipes" / "apg_base" / "apg.yml").is_file()
    assert {"views", "canvas", "node"} <= {n for n, m in site.modules().items() if m.enabled}
