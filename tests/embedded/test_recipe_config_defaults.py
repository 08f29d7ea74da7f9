"""A recipe's config files are stored as Drupal stores them once it has created the entities:
kb_docs' first version, applied as Drupal got it, becomes the golden config exactly (values and
key order), and what the file left out is filled in as Drupal fills it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground import yamldump, yamlio
from ai_proving_ground.sites.base import StateQuery
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

Site = Callable[..., tuple[int, str, str]]
HERE = Path(__file__).parent
V1 = HERE / "data" / "kb_docs_v1_config"
NAMES = sorted(p.stem for p in V1.glob("*.yml"))


def _empties_alike(value: Any) -> Any:
    """PHP has one empty array: drush prints it as {} and a file may say []."""
    if isinstance(value, dict):
        return [[k, _empties_alike(v)] for k, v in value.items()] if value else []
    if isinstance(value, list):
        return [_empties_alike(v) for v in value]
    return value


def _apply(site: Site, bed: Path, tmp_path: Path, config: dict[str, Any]) -> None:
    recipe = tmp_path / "recipe"
    (recipe / "config").mkdir(parents=True)
    (recipe / "recipe.yml").write_text("name: Config defaults\ninstall: [node, text, options]\n")
    for name, data in config.items():
        (recipe / "config" / f"{name}.yml").write_text(yamldump.dumps(data), encoding="utf-8")
    rc, _, err = site(bed, "recipe", str(recipe))
    assert rc == 0, err


def _stored(bed: Path, names: list[str]) -> dict[str, Any]:
    return dict(EmbeddedSite(bed).read_state(StateQuery(config=tuple(names))).config)


def test_kb_docs_first_version_is_stored_as_drupal_stored_it(bed: Path, site: Site,
                                                              tmp_path: Path) -> None:
    _apply(site, bed, tmp_path, {n: yamlio.load_yaml(V1 / f"{n}.yml") for n in NAMES})
    stored = _stored(bed, NAMES)
    for name in NAMES:
        golden = yamlio.load_yaml(HERE / "golden" / "config" / f"{name}.yml")
        golden = {k: v for k, v in golden.items() if k not in ("uuid", "_core")}
        assert _empties_alike(stored[name]) == _empties_alike(golden), name


def test_what_a_file_leaves_out_is_filled_and_unknown_settings_go(bed: Path, site: Site,
                                                                 tmp_path: Path) -> None:
    _apply(site, bed, tmp_path, {
        "node.type.note": {"type": "note", "name": "Note", "description": " "},
        "field.storage.node.field_score": {
            "id": "node.field_score", "field_name": "field_score", "entity_type": "node",
            "type": "decimal", "settings": {"scale": 3, "bogus": 1}},
        "field.field.node.note.field_score": {
            "id": "node.note.field_score", "field_name": "field_score", "entity_type": "node",
            "bundle": "note", "label": "Score", "field_type": "decimal",
            "settings": {"suffix": " pts"}},
    })
    stored = _stored(bed, ["node.type.note", "field.storage.node.field_score",
                           "field.field.node.note.field_score"])
    assert stored["node.type.note"] == {
        "langcode": "en", "status": True, "dependencies": {}, "name": "Note", "type": "note",
        "description": None, "help": None, "new_revision": True, "preview_mode": 1,
        "display_submitted": True}
    storage = stored["field.storage.node.field_score"]
    assert storage["settings"] == {"precision": 10, "scale": 3}
    assert (storage["module"], storage["cardinality"], storage["indexes"]) == ("core", 1, {})
    field = stored["field.field.node.note.field_score"]
    assert field["settings"] == {"min": "", "max": "", "prefix": "", "suffix": " pts"}
    assert (field["required"], field["default_value"], field["description"]) == (False, {}, "")


@pytest.mark.parametrize("name", NAMES)
def test_the_first_version_differs_from_the_golden_only_where_drupal_fills_in(name: str) -> None:
    """The replay above proves something: a plain copy of these files would not pass it."""
    given = yamlio.load_yaml(V1 / f"{name}.yml")
    golden = yamlio.load_yaml(HERE / "golden" / "config" / f"{name}.yml")
    golden = {k: v for k, v in golden.items() if k not in ("uuid", "_core")}
    same = _empties_alike(given) == _empties_alike(golden)
    assert same is (name not in ("node.type.kb_doc", "field.field.node.kb_doc.field_kb_weight"))


def test_a_recipe_applies_again_over_what_it_created(bed: Path, site: Site,
                                                     tmp_path: Path) -> None:
    """What the file creates is compared with the active config, so the first version applies
    again (Drupal 10.3 compares the file as written and refuses: a known difference, kept so
    that fixtures written short re-apply on provision), as does the shipped second version;
    a file that would create something else is refused."""
    config = {n: yamlio.load_yaml(V1 / f"{n}.yml") for n in NAMES}
    _apply(site, bed, tmp_path / "first", config)
    recipe = tmp_path / "first" / "recipe"
    rc, _, err = site(bed, "recipe", str(recipe))
    assert rc == 0, err
    shipped = Path(__file__).parents[2] / "fixtures" / "fixture_kb_docs" / "config"
    for name in NAMES:
        shutil.copyfile(shipped / f"{name}.yml", recipe / "config" / f"{name}.yml")
    rc, _, err = site(bed, "recipe", str(recipe))
    assert rc == 0, err
    changed = {**config["field.field.node.kb_doc.field_kb_weight"], "settings": {"min": 1}}
    (recipe / "config" / "field.field.node.kb_doc.field_kb_weight.yml").write_text(
        yamldump.dumps(changed), encoding="utf-8")
    rc, _, err = site(bed, "recipe", str(recipe))
    assert rc == 1 and "APG_RECIPE_PREEXISTING_CONFIG" in err, err


def test_simple_config_is_stored_as_given(bed: Path, site: Site, tmp_path: Path) -> None:
    _apply(site, bed, tmp_path, {"system.performance": {"cache": {"page": {"max_age": 0}}}})
    assert _stored(bed, ["system.performance"])["system.performance"] == {"cache": {
        "page": {"max_age": 0}}}
