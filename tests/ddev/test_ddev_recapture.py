"""Issue 10, point 4: a recapture on a real site, where recipes compare existing config strictly.

The stub's site stores what Drupal stores for the kb_docs config (the real captures in
golden/config: defaults filled in, uuid and _core added) and, like Drupal 10.3, refuses a recipe
whose config exists with any difference. A fixture exported from the site through the ddev
driver holds exactly that shape, so applying it again (a recapture) succeeds.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from ddev_stub import Stub, expect_error, fresh_site_state, golden_config

from ai_proving_ground.cli import fixture_export as export_cli
from ai_proving_ground.paths import project_dir
from ai_proving_ground.sites.ddev import DdevSite

pytestmark = pytest.mark.skipif(shutil.which("php") is None, reason="php not found: apt-get install php-cli")


@pytest.fixture
def site(approot: Path, stub: Stub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DdevSite:
    state = tmp_path / "site-state.json"
    state.write_text(json.dumps(fresh_site_state()))
    stub.use_site(state)
    monkeypatch.setenv("AI_PG_SITE_DRIVER", "ddev")
    driver = DdevSite(approot)
    driver.apply_recipe(project_dir("fixtures") / "fixture_kb_docs")
    return driver


def test_an_exported_fixture_applies_again_on_the_site_it_came_from(
    site: DdevSite, approot: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = approot / "recipes" / "fixture_kb_docs"
    shutil.copytree(project_dir("fixtures") / "fixture_kb_docs", copy)
    assert export_cli.main(["--approot", str(approot), "kb_docs", "--into", str(copy)]) == 0, (
        capsys.readouterr()
    )
    exported = yaml.safe_load((copy / "config" / "field.field.node.kb_doc.field_kb_weight.yml").read_text())
    stored = yaml.safe_load(golden_config("field.field.node.kb_doc.field_kb_weight"))
    assert exported["settings"] == stored["settings"] == {"min": "", "max": "", "prefix": "", "suffix": ""}
    assert "uuid" not in exported and "_core" not in exported
    assert list(exported) == [k for k in stored if k not in ("uuid", "_core")]  # Drupal's key order

    report = site.apply_recipe(copy)  # the recapture: the recipe meets its own config
    assert report.content_skipped and not report.content_created


def test_a_recipe_whose_config_differs_fails_with_drupals_reason(site: DdevSite, approot: Path) -> None:
    recipe = approot / "recipes" / "fixture_drift"
    (recipe / "config").mkdir(parents=True)
    (recipe / "recipe.yml").write_text("name: drift\n")
    (recipe / "config" / "node.type.kb_doc.yml").write_text("type: kb_doc\nname: Changed\n")
    error = expect_error("APG_DDEV_FAILED", lambda: site.apply_recipe(recipe))
    assert "The configuration 'node.type.kb_doc' exists already and does not match" in error.message
