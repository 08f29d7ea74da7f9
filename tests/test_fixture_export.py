"""Fixture export and the shipped fixtures: round trip, selectors, refusals, scaffold, bed init.

The source site is built once per module by ``scripts/build_fixture_source.py`` (the same script
the shipped fixtures come from); tests that change it work on a copy.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from ai_proving_ground import yamldump, yamlio
from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.fixture_export import export_fixture, split_fragment
from ai_proving_ground.fixture_plan import comparable_config, strip_config
from ai_proving_ground.fixtures import load_fixture, load_fragment, record_value
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.schemas import schema_errors
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.base import StateQuery
from ai_proving_ground.sites.embedded.default_content import load_content_dir
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.sites.embedded.recipe_spec import load_recipe

# conftest's in-process runners: ``runner(*args) -> (rc, stdout, stderr)``.
MainRunner = Callable[..., tuple[int, str, str]]

SHIPPED = PROJECT_ROOT / "fixtures"
REAL_NOTICES = PROJECT_ROOT / "tests" / "ddev" / "real_kb_notices"
SCRIPTS = PROJECT_ROOT / "scripts"
KB = "6b0d0c00-0000-4000-8000-0000000000"  # + two digits


def kb(n: int) -> str:
    return f"{KB}{n:02d}"


def load_script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


builder = load_script("build_fixture_source")



@pytest.fixture(scope="module")
def template_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("source") / "site"
    assert builder.main([str(target)]) == 0
    return target


@pytest.fixture
def source(template_source: Path, tmp_path: Path, copy_template: Callable[[Path, Path], Path]) -> Path:
    """A private copy of the source site, free to change."""
    return copy_template(template_source, tmp_path / "source")


def tree(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` by relative path, with its bytes."""
    return {p.relative_to(directory).as_posix(): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def copy_fixture(name: str, into: Path) -> Path:
    """A copy of a shipped fixture under ``into``, with everything export writes made stale:
    config and content removed or changed, a stale file of each kind, and empty facts."""
    target = into / f"fixture_{name}"
    shutil.copytree(SHIPPED / f"fixture_{name}", target)
    shutil.rmtree(target / "content")
    config_files = sorted((target / "config").glob("*.yml"))
    if len(config_files) > 1:  # kb_menus ships one config object: it is made stale
        config_files[0].unlink()
    config_files[-1].write_text("stale: true\n", encoding="utf-8")
    (target / "config" / "old.gone.yml").write_text("id: gone\n", encoding="utf-8")
    stale = target / "content" / "node" / "00000000-0000-4000-8000-000000000000.yml"
    stale.parent.mkdir(parents=True)
    stale.write_text("_meta: {}\n", encoding="utf-8")
    fragment = target / "manifest" / "fragment.yml"
    fragment.write_text(split_fragment(fragment) + "facts: {modules: [], config: [], counts: {}, "
                        "content: []}\n", encoding="utf-8")
    return target


def export_cli(apg: MainRunner, *args: str) -> tuple[int, dict[str, Any], str]:
    rc, out, err = apg("fixture-export", *args)
    return rc, (json.loads(out) if out.strip() else {}), err


def edit_fragment(directory: Path, **changes: Any) -> None:
    """Replace hand-kept keys of a fragment (its facts are dropped)."""
    path = directory / "manifest" / "fragment.yml"
    data = yamlio.load_yaml(path)
    data.pop("facts", None)
    for key, value in changes.items():
        target = data
        parts = key.split("__")
        for part in parts[:-1]:
            target = target[part]
        target[parts[-1]] = value
    path.write_text(yamldump.dumps(data), encoding="utf-8")


# ---------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("name", ["kb_docs", "canvas_home", "kb_notices", "kb_menus"])
def test_export_reproduces_the_shipped_fixture(apg: MainRunner, source: Path, tmp_path: Path,
                                               name: str) -> None:
    target = copy_fixture(name, tmp_path / "work")
    assert tree(target) != tree(SHIPPED / f"fixture_{name}")
    rc, summary, err = export_cli(apg, name, "--approot", str(source), "--into", str(target))
    assert rc == 0, err
    assert tree(target) == tree(SHIPPED / f"fixture_{name}")
    assert summary["fixture"] == name
    assert summary["directory"] == str(target)
    assert "manifest/fragment.yml" in summary["changed"]
    assert sorted(summary["removed"]) == [
        "config/old.gone.yml", "content/node/00000000-0000-4000-8000-000000000000.yml"]
    # An export that changes nothing writes nothing, and --check agrees.
    rc, again, err = export_cli(apg, name, "--approot", str(source), "--into", str(target))
    assert rc == 0, err
    assert again["changed"] == [] and again["removed"] == []
    assert export_cli(apg, name, "--approot", str(source), "--into", str(target), "--check")[0] == 0


@pytest.mark.parametrize("name", ["kb_docs", "canvas_home", "kb_notices", "kb_menus"])
def test_check_is_clean_on_the_embedded_source_site(apg: MainRunner, source: Path,
                                                    tmp_path: Path, name: str) -> None:
    """The shipped fixture, as shipped, is what the source site exports: nothing to write."""
    target = tmp_path / f"fixture_{name}"
    shutil.copytree(SHIPPED / f"fixture_{name}", target)
    rc, summary, err = export_cli(apg, name, "--approot", str(source), "--into", str(target),
                                  "--check")
    assert rc == 0, err
    assert "APG_EXPORT_STALE" not in err
    assert summary["changed"] == [] and summary["removed"] == []
    assert tree(target) == tree(SHIPPED / f"fixture_{name}")


@pytest.mark.parametrize("name", ["kb_docs", "canvas_home"])
def test_check_is_clean_right_after_provision(apg: MainRunner, provisioned_bed: Path,
                                              name: str) -> None:
    """Imported and read back by the embedded site, each shipped fixture exports as shipped."""
    rc, summary, err = export_cli(apg, name, "--approot", str(provisioned_bed), "--check")
    assert rc == 0, err
    assert summary["changed"] == [] and summary["removed"] == []


def test_kb_menus_checks_clean_right_after_provision(apg: MainRunner, bed: Path) -> None:
    """The Support menu, imported beside the notices its links lead to, exports as shipped."""
    provision(bed, ["kb_notices", "kb_menus"], EmbeddedSite(bed))
    rc, summary, err = export_cli(apg, "kb_menus", "--approot", str(bed), "--check")
    assert rc == 0, err
    assert summary["changed"] == [] and summary["removed"] == []
    assert len(summary["content"]) == 4


@pytest.fixture
def provisioned_bed(fixtures_bed: Path) -> Path:
    provision(fixtures_bed, ["kb_docs", "canvas_home"], EmbeddedSite(fixtures_bed))
    return fixtures_bed


def test_check_reports_drift_and_writes_nothing(apg: MainRunner, source: Path,
                                                tmp_path: Path) -> None:
    target = tmp_path / "fixture_kb_docs"
    shutil.copytree(SHIPPED / "fixture_kb_docs", target)
    site = EmbeddedSite(source)
    with site.session() as store:
        site.update_entity(store, site.find_entity(store, "node", kb(7)),
                           {"title": "Change your payment method"})
    before = tree(target)
    rc, summary, err = export_cli(apg, "kb_docs", "--approot", str(source), "--into", str(target),
                                  "--check")
    assert rc == 1
    assert err.startswith("APG_EXPORT_STALE")
    assert f"content/node/{kb(7)}.yml" in err
    assert summary["changed"] == [f"content/node/{kb(7)}.yml", "manifest/fragment.yml"]
    assert tree(target) == before


def test_shipped_fixtures_are_schema_valid_and_facts_come_last() -> None:
    for name in ("kb_docs", "canvas_home"):
        directory = SHIPPED / f"fixture_{name}"
        fragment = load_fragment(directory / "manifest" / "fragment.yml")
        assert list(fragment)[-1] == "facts"
        # kb_docs 2: its config re-exported in the shape Drupal 10.3 stores it.
        assert fragment["name"] == name and fragment["version"] == {"kb_docs": 3}.get(name, 1)
        load_recipe(directory)  # the hand-written recipe parses as Drupal's would


def _in_order(value: Any) -> Any:
    """A mapping as PHP's ``===`` compares arrays: its keys in their order, each with its value."""
    if isinstance(value, dict):
        return [(k, _in_order(v)) for k, v in value.items()] if value else []
    if isinstance(value, list):
        return [_in_order(v) for v in value]
    return value


def test_kb_notices_exports_from_a_real_drupal_as_shipped() -> None:
    """kb_notices 2 is re-exported from Drupal 10.3.7 (tests/ddev/real_kb_notices/: the view as
    Drupal stored it on provision, its dependencies recalculated, display_extenders added): the
    export of that stored view is the shipped file byte for byte, so ``fixture-export --check`` is
    clean there; and without uuid and _core it is the recipe's file key for key, in order, which
    is what Drupal 10.3's recipe runner demands of existing config when the recipe is applied
    again (kb_notices 1 failed it: recipe-applied-again.json)."""
    real = yaml.safe_load((REAL_NOTICES / "views.view.notices.yml").read_text(encoding="utf-8"))
    shipped = SHIPPED / "fixture_kb_notices" / "config" / "views.view.notices.yml"
    assert yamldump.dumps(comparable_config(real)) == shipped.read_text(encoding="utf-8")
    recipe = yaml.safe_load(shipped.read_text(encoding="utf-8"))
    assert _in_order(strip_config(real)) == _in_order(recipe)
    assert load_fragment(shipped.parent.parent / "manifest" / "fragment.yml")["version"] == 2


def test_kb_docs_data_tells_builds_apart() -> None:
    """kb_docs version 3 can tell a filter from its absence and one sort key from another."""
    fixture = load_fixture("kb_docs", PROJECT_ROOT)
    facts = fixture.facts
    assert facts["counts"] == {"node": {"kb_doc": 23, "kb_faq": 1}}
    assert facts["modules"] == ["field", "node", "options", "text"]
    records = facts["content"]
    assert [r["uuid"] for r in records] == [kb(n) for n in range(1, 25)]
    created = {doc.uuid: doc.values["created"][0]["value"]
               for doc in load_content_dir(fixture.directory / "content")}
    assert len(set(created.values())) == len(records)  # every item its own creation time
    unpublished = [r for r in records if not r["status"]]
    assert [(r["bundle"], r["fields"]["field_kb_section"]) for r in unpublished] == [
        ("kb_doc", "billing")] * 2
    faq = [r for r in records if r["bundle"] == "kb_faq"]
    assert [r["fields"]["field_kb_section"] for r in faq] == ["billing"]
    articles = [r for r in records if r["bundle"] == "kb_doc" and r["status"]]
    sections: dict[str, list[dict[str, Any]]] = {}
    for record in articles:  # records are in UUID order, which is id order
        sections.setdefault(record["fields"]["field_kb_section"], []).append(record)
    assert sorted(sections) == ["accounts", "billing", "getting_started", "troubleshooting"]
    assert len(sections["billing"]) == 12  # more than a default 10-item pager shows
    for section, members in sections.items():
        by_id = [r["label"] for r in members]
        by_title = sorted(by_id)
        by_created = [r["label"] for r in sorted(members, key=lambda r: created[r["uuid"]])]
        by_weight = [r["label"] for r in sorted(members, key=lambda r: r["fields"]
                                                ["field_kb_weight"])]
        weights = [r["fields"]["field_kb_weight"] for r in members]
        assert len(set(weights)) == len(weights), section  # no tie in the task's own order
        others = [by_id, by_title, by_created]
        assert by_weight not in [*others, *(o[::-1] for o in others)], section
        # Three items have six orders: creation order must differ from id and title order, but
        # may be one of them reversed (no order is left for it otherwise).
        assert by_created not in (by_id, by_title), section
    lightest = min(r["fields"]["field_kb_weight"] for r in sections["billing"])
    assert all(r["fields"]["field_kb_weight"] < lightest for r in [*faq, unpublished[0]])


# ---------------------------------------------------------------------------- selectors


def test_prefixes_expand_and_exact_names_do_not(apg: MainRunner, source: Path,
                                                tmp_path: Path) -> None:
    site = EmbeddedSite(source)
    with site.session() as store:
        site.config_save(store, "field.storage.node.field_kb_extra", {
            "entity_type": "node", "field_name": "field_kb_extra", "type": "string"})
        site.config_save(store, "field.field.node.kb_doc.field_kb_extra", {
            "entity_type": "node", "bundle": "kb_doc", "field_name": "field_kb_extra",
            "label": "Extra"})
        site.config_save(store, "canvas.page_region.olivero.sidebar", {
            "id": "olivero.sidebar", "theme": "olivero", "region": "sidebar", "status": True,
            "component_tree": []})
    kb_dir = shutil.copytree(SHIPPED / "fixture_kb_docs", tmp_path / "fixture_kb_docs")
    rc, summary, err = export_cli(apg, "kb_docs", "--approot", str(source), "--into", str(kb_dir))
    assert rc == 0, err
    # field.field.node.kb_doc. is a prefix; the storages are listed by exact name.
    assert "field.field.node.kb_doc.field_kb_extra" in summary["config"]
    assert "field.storage.node.field_kb_extra" not in summary["config"]
    assert (kb_dir / "config" / "field.field.node.kb_doc.field_kb_extra.yml").is_file()
    home_dir = shutil.copytree(SHIPPED / "fixture_canvas_home", tmp_path / "fixture_canvas_home")
    rc, summary, err = export_cli(apg, "canvas_home", "--approot", str(source),
                                  "--into", str(home_dir))
    assert rc == 0, err
    assert summary["config"] == ["canvas.page_region.olivero.footer",
                                 "canvas.page_region.olivero.header",
                                 "canvas.page_region.olivero.sidebar"]
    facts = load_fragment(home_dir / "manifest" / "fragment.yml")["facts"]
    assert facts["config"] == summary["config"]


def test_a_prefix_that_matches_nothing_warns_and_drops_the_files(apg: MainRunner, source: Path,
                                                                 tmp_path: Path) -> None:
    site = EmbeddedSite(source)
    with site.session() as store:
        for region in ("header", "footer"):
            site.config_delete(store, f"canvas.page_region.olivero.{region}")
    target = shutil.copytree(SHIPPED / "fixture_canvas_home", tmp_path / "fixture_canvas_home")
    rc, summary, err = export_cli(apg, "canvas_home", "--approot", str(source),
                                  "--into", str(target))
    assert rc == 0, err
    assert "APG_EXPORT_PREFIX_EMPTY" in err and "canvas.page_region.olivero." in err
    assert summary["config"] == []
    assert summary["removed"] == ["config/canvas.page_region.olivero.footer.yml",
                                  "config/canvas.page_region.olivero.header.yml"]
    assert list((target / "config").iterdir()) == []
    assert load_fragment(target / "manifest" / "fragment.yml")["facts"]["config"] == []


def test_exported_config_drops_uuid_and_core(source: Path) -> None:
    site = EmbeddedSite(source)
    assert site.config_get("node.type.kb_doc")["uuid"]  # the source has one, as Drupal does
    exported = yamlio.load_yaml(SHIPPED / "fixture_kb_docs" / "config" / "node.type.kb_doc.yml")
    assert "uuid" not in exported and "_core" not in exported
    assert exported["name"] == "Knowledge base article"


def test_content_selectors_select(source: Path, tmp_path: Path) -> None:
    # The source holds a page node no fixture exports; the uuids selector takes one page only.
    target = shutil.copytree(SHIPPED / "fixture_canvas_home", tmp_path / "fixture_canvas_home")
    site = EmbeddedSite(source)
    with site.session() as store:
        site.create_entity(store, "canvas_page", None, {"title": "Other"},
                           "ca0a5000-0000-4000-8000-000000000099")
    result = export_fixture("canvas_home", source, into=target, driver=site)
    assert result.content == ["ca0a5000-0000-4000-8000-000000000001"]
    assert sorted(p.name for p in (target / "content").rglob("*.yml")) == [
        "ca0a5000-0000-4000-8000-000000000001.yml"]


def test_export_asks_the_driver_in_a_constant_number_of_round_trips(source: Path,
                                                                     tmp_path: Path) -> None:
    site = EmbeddedSite(source)
    with site.session() as store:
        for n in range(25, 52):
            site.create_entity(store, "node", "kb_doc", {
                "title": f"Extra {n}", "field_kb_section": "billing", "field_kb_weight": n},
                kb(n))
    target = shutil.copytree(SHIPPED / "fixture_kb_docs", tmp_path / "fixture_kb_docs")
    result = export_fixture("kb_docs", source, into=target, driver=site)
    assert len(result.content) == 51
    assert site.round_trips == 2  # read_state: config + modules, then the entity records


def test_record_value_shapes() -> None:
    assert record_value([]) is None
    assert record_value([{"value": 3}]) == 3
    assert record_value([{"value": "a"}, {"value": "b"}]) == ["a", "b"]
    assert record_value([{"target_uuid": "u-1", "target_id": 4}]) == "u-1"
    assert record_value([{"alias": "/home"}]) == "/home"


# ---------------------------------------------------------------------------- refusals


def test_export_never_writes_or_deletes_through_a_symlink_out_of_the_fixture(
        apg: MainRunner, source: Path, tmp_path: Path) -> None:
    target = copy_fixture("kb_docs", tmp_path / "work")
    outside = tmp_path / "outside"
    (target / "config").rename(outside)  # the stale config now lies outside, behind a link
    (target / "config").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    rc, summary, err = export_cli(apg, "kb_docs", "--approot", str(source), "--into", str(target))
    assert (rc, summary) == (1, {})
    assert err.startswith("APG_PATH_UNSAFE "), err
    assert tree(outside) == before


def test_export_never_reads_a_fragment_that_links_out(apg: MainRunner, source: Path,
                                                      tmp_path: Path) -> None:
    target = copy_fixture("kb_docs", tmp_path / "work")
    secret = tmp_path / "secret.yml"
    secret.write_text("name: kb_docs\nversion: s3cret-42\n", encoding="utf-8")
    fragment = target / "manifest" / "fragment.yml"
    fragment.unlink()
    fragment.symlink_to(secret)
    rc, _, err = export_cli(apg, "kb_docs", "--approot", str(source), "--into", str(target))
    assert rc == 1 and err.startswith("APG_PATH_UNSAFE "), err
    assert "s3cret" not in err


def test_missing_exact_config_is_refused_and_nothing_changes(apg: MainRunner, source: Path,
                                                             tmp_path: Path) -> None:
    target = copy_fixture("kb_docs", tmp_path)
    edit_fragment(target, export__config=[
        "node.type.kb_doc", "field.storage.node.field_kb_", "field.field.node.kb_doc."])
    before = tree(target)
    rc, summary, err = export_cli(apg, "kb_docs", "--approot", str(source), "--into", str(target))
    assert rc == 1
    assert summary == {}
    assert err.startswith("APG_EXPORT_CONFIG_MISSING")
    assert "field.storage.node.field_kb_" in err and "node.type.kb_doc," not in err
    assert tree(target) == before


def test_content_outside_the_namespace_is_refused(apg: MainRunner, source: Path,
                                                  tmp_path: Path) -> None:
    stray = "11111111-0000-4000-8000-000000000001"
    site = EmbeddedSite(source)
    with site.session() as store:
        site.create_entity(store, "node", "kb_doc", {
            "title": "Stray", "field_kb_section": "billing", "field_kb_weight": 9}, stray)
    target = copy_fixture("kb_docs", tmp_path)
    before = tree(target)
    rc, _, err = export_cli(apg, "kb_docs", "--approot", str(source), "--into", str(target))
    assert rc == 1
    assert err.startswith("APG_EXPORT_NAMESPACE")
    assert stray in err and kb(1) not in err
    assert tree(target) == before


def test_config_the_fixture_does_not_own_is_refused(apg: MainRunner, source: Path,
                                                    tmp_path: Path) -> None:
    target = copy_fixture("kb_docs", tmp_path)
    edit_fragment(target, export__config=["node.type.kb_doc", "node.type.page"])
    before = tree(target)
    rc, _, err = export_cli(apg, "kb_docs", "--approot", str(source), "--into", str(target))
    assert rc == 1
    assert err.startswith("APG_EXPORT_NOT_OWNED") and "node.type.page" in err
    assert tree(target) == before


def test_facts_must_be_the_last_key(apg: MainRunner, source: Path, tmp_path: Path) -> None:
    target = copy_fixture("canvas_home", tmp_path)
    fragment = target / "manifest" / "fragment.yml"
    fragment.write_text(fragment.read_text(encoding="utf-8") + "extra_note: 1\n",
                        encoding="utf-8")
    rc, _, err = export_cli(apg, "canvas_home", "--approot", str(source), "--into", str(target))
    assert rc == 1
    assert err.startswith("APG_FRAGMENT_INVALID")


@pytest.mark.parametrize(("args", "token"), [
    (["Bad-Name"], "APG_FIXTURE_INVALID"),
    (["kb_docs", "--into", "/nonexistent/wrong_name"], "APG_USAGE"),
    ([], "APG_USAGE"),
])
def test_bad_arguments_exit_2(apg: MainRunner, source: Path, args: list[str], token: str) -> None:
    rc, _, err = export_cli(apg, *args, "--approot", str(source))
    assert rc == 2
    assert token in err


def test_two_directories_of_one_name_that_differ_are_ambiguous(apg: MainRunner, source: Path) -> None:
    copy = shutil.copytree(SHIPPED / "fixture_kb_docs", source / "recipes" / "fixture_kb_docs")
    (copy / "recipe.yml").write_text((copy / "recipe.yml").read_text() + "# a local edit\n")
    before = tree(SHIPPED / "fixture_kb_docs")
    rc, _, err = export_cli(apg, "kb_docs", "--approot", str(source))
    assert rc == 2
    assert err.startswith("APG_FIXTURE_AMBIGUOUS")
    assert tree(SHIPPED / "fixture_kb_docs") == before


# ---------------------------------------------------------------------------- scaffold


def test_a_new_name_gets_a_valid_scaffold_in_recipes(apg: MainRunner, source: Path,
                                                     tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    rc, summary, err = export_cli(apg, "help_pages", "--approot", str(project),
                                  "--source", str(source))
    assert rc == 0, err
    directory = project / "recipes" / "fixture_help_pages"
    assert summary["scaffolded"] is True and summary["directory"] == str(directory)
    assert "APG_EXPORT_SCAFFOLD" in err and "owns" in err and "export" in err
    fixture = load_fixture("help_pages", project)  # resolvable and schema-valid
    assert fixture.directory == directory
    assert fixture.fragment["owns"]["config"] == [] and fixture.fragment["export"]["content"] == []
    assert load_recipe(directory).install == ()
    # Filled in and exported again, it captures from the source site.
    fragment = directory / "manifest" / "fragment.yml"
    text = fragment.read_text(encoding="utf-8")
    text = text.replace("  config: []\n  # Every", "  config: [node.type.kb_doc]\n  # Every", 1)
    text = text.replace(f"content_namespace: {fixture.namespace}", "content_namespace: 6b0d0c00-")
    text = text.replace("  config: []\n", "  config: [node.type.kb_doc]\n", 1)
    text = text.replace("  content: []\n", "  content: [{entity_type: node, uuids: ["
                        f"{kb(1)}, {kb(2)}]}}]\n", 1)
    fragment.write_text(text, encoding="utf-8")
    rc, summary, err = export_cli(apg, "help_pages", "--approot", str(project),
                                  "--source", str(source))
    assert rc == 0, err
    assert summary["scaffolded"] is False
    assert summary["config"] == ["node.type.kb_doc"] and summary["content"] == [kb(1), kb(2)]
    facts = load_fixture("help_pages", project).facts
    assert facts["counts"] == {"node": {"kb_doc": 2}}
    assert facts["modules"] == ["node"]
    assert fragment.read_text(encoding="utf-8").startswith(text)


def test_scaffold_goes_to_the_first_fixture_path_entry(apg: MainRunner, source: Path,
                                                       tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("AI_PG_FIXTURE_PATH", f"my-fixtures:{tmp_path / 'other'}")
    rc, summary, err = export_cli(apg, "help_pages", "--approot", str(project),
                                  "--source", str(source))
    assert rc == 0, err
    directory = project / "my-fixtures" / "fixture_help_pages"
    assert summary["directory"] == str(directory)
    assert load_fixture("help_pages", project, settings=Settings.from_environ()).directory == directory
    assert not (project / "recipes").exists()


def test_scaffold_refuses_a_non_empty_directory(apg: MainRunner, source: Path,
                                                tmp_path: Path) -> None:
    target = tmp_path / "fixture_help_pages"
    target.mkdir()
    (target / "notes.txt").write_text("mine\n", encoding="utf-8")
    rc, _, err = export_cli(apg, "help_pages", "--approot", str(source), "--into", str(target))
    assert rc == 1
    assert err.startswith("APG_EXPORT_TARGET_INVALID")
    assert tree(target) == {"notes.txt": b"mine\n"}


def test_scaffold_template_is_schema_valid() -> None:
    from ai_proving_ground.fixture_export import SCAFFOLD_FRAGMENT

    data = yamlio.loads(SCAFFOLD_FRAGMENT.format(name="x_y", namespace="abcd1234-"))
    assert schema_errors(data, "fragment") == []


# ---------------------------------------------------------------------------- hand-kept text


def test_hand_kept_text_is_kept_verbatim_and_facts_rewritten(source: Path,
                                                              tmp_path: Path) -> None:
    target = shutil.copytree(SHIPPED / "fixture_canvas_home", tmp_path / "fixture_canvas_home")
    fragment = target / "manifest" / "fragment.yml"
    hand_kept = (
        "# A comment people wrote, kept as is.\n"
        "name: canvas_home   # trailing comment\n"
        "version: 1\n"
        "description: \"quoted, on purpose\"\n"
        "owns: {config: [canvas.page_region.olivero.], content_namespace: ca0a5000-}\n"
        "\n"
        "export:\n"
        "    config: ['canvas.page_region.olivero.']\n"
        "    content:\n"
        "      - {entity_type: canvas_page, uuids: [ca0a5000-0000-4000-8000-000000000001]}\n"
        "    record_fields: [path, description]\n"
        "# above facts\n"
    )
    fragment.write_text(hand_kept + "facts:\n  modules: [stale]\n  config: []\n  counts: {}\n"
                        "  content: []\n# trailing comment below facts\n", encoding="utf-8")
    export_fixture("canvas_home", source, into=target)
    text = fragment.read_text(encoding="utf-8")
    assert text.startswith(hand_kept + "facts:\n")
    facts = load_fragment(fragment)["facts"]
    assert facts["modules"] == ["canvas"]
    assert facts["content"] == [{
        "uuid": "ca0a5000-0000-4000-8000-000000000001", "entity_type": "canvas_page",
        "bundle": "canvas_page", "label": "Home", "status": True,
        "fields": {"path": "/home", "description": "The help center's front page."}}]
    assert "stale" not in text and "trailing comment below facts" not in text


# ---------------------------------------------------------------------------- entry scripts


def test_entry_script_runs_from_a_checkout(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(SCRIPTS / "fixture_export.py"), "--help"],
                          capture_output=True, text=True, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "apg fixture-export" in done.stdout
    done = subprocess.run([sys.executable, str(SCRIPTS / "fixture_export.py"), "kb_docs",
                           "--approot", str(tmp_path / "missing")],
                          capture_output=True, text=True, check=False, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("APG_APPROOT_MISSING")


def test_build_script_refuses_a_non_empty_directory(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert builder.main([str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith("APG_BED_EXISTS")


# ---------------------------------------------------------------------------- bed init


def test_bed_init_with_the_shipped_fixtures(bed_cli: MainRunner, site: MainRunner,
                                            tmp_path: Path) -> None:
    target = tmp_path / "bed"
    rc, out, err = bed_cli("init", str(target), "kb_docs", "canvas_home")
    assert rc == 0, err
    assert out.strip() == str(target)
    rc, out, err = site(target, "entity:list", "node", "--format=json")
    assert rc == 0, err
    nodes = json.loads(out)
    assert sorted(n["uuid"] for n in nodes.values()) == [kb(n) for n in range(1, 25)]
    assert {n["bundle"] for n in nodes.values()} == {"kb_doc", "kb_faq"}
    assert sum(1 for n in nodes.values() if not n["status"]) == 2
    rc, out, err = site(target, "entity:list", "canvas_page", "--format=json")
    assert [(p["uuid"], p["label"]) for p in json.loads(out).values()] == [
        ("ca0a5000-0000-4000-8000-000000000001", "Home")]
    tree_answer = EmbeddedSite(target).read_state(StateQuery(config_prefixes=(
        "canvas.page_region.",)))
    assert tree_answer.config_names["canvas.page_region."] == [
        "canvas.page_region.olivero.footer", "canvas.page_region.olivero.header"]
    # The fixture's point: sorting billing articles by weight, title, id or creation time gives
    # four orders.
    orders = {}
    for key, (table, column) in {"weight": ("node__field_kb_weight", "field_kb_weight_value"),
                                 "title": ("node_field_data", "title"),
                                 "nid": ("node_field_data", "nid"),
                                 "created": ("node_field_data", "created")}.items():
        view = billing_view(key, table, column)
        rc, _, err = site(target, "config:set", f"views.view.{view['id']}", "?",
                          json.dumps(view), "--input-format=json")
        assert rc == 0, err
        rc, out, err = site(target, "views:execute", view["id"], "--format=json")
        assert rc == 0, err
        orders[key] = [row["label"] for row in json.loads(out)]
    assert orders["weight"][:3] == ["Update your payment method", "Request a refund",
                                    "Understand your invoice"]
    assert len(orders["weight"]) == 12
    assert orders["title"] == sorted(orders["weight"])
    assert orders["nid"][:3] == ["Understand your invoice", "Update your payment method",
                                 "Request a refund"]
    assert len({tuple(order) for order in orders.values()}) == 4


def billing_view(key: str, table: str, column: str) -> dict[str, Any]:
    return {
        "id": f"kb_billing_by_{key}", "label": f"Billing by {key}",
        "base_table": "node_field_data", "status": True,
        "display": {"default": {"id": "default", "display_plugin": "default",
                                "display_options": {
            "filters": {
                "type": {"table": "node_field_data", "field": "type", "operator": "in",
                         "value": {"kb_doc": "kb_doc"}},
                "section": {"table": "node__field_kb_section", "field": "field_kb_section_value",
                            "operator": "=", "value": "billing"},
                "status": {"table": "node_field_data", "field": "status", "operator": "=",
                           "value": "1"}},
            "sorts": {key: {"table": table, "field": column, "order": "ASC"}},
            "pager": {"type": "none", "options": {"offset": 0}}}}},
    }


def test_bed_init_refuses_overlapping_fixtures_before_creating_anything(
        bed_cli: MainRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extra = tmp_path / "mine"
    clone = shutil.copytree(SHIPPED / "fixture_kb_docs", extra / "fixture_kb_clone")
    edit_fragment(clone, name="kb_clone", owns={"config": ["node.type.kb_doc"],
                                                 "content_namespace": "7c00"})
    monkeypatch.setenv("AI_PG_FIXTURE_PATH", str(extra))

    def build(*args: object) -> None:
        raise AssertionError("the set must be refused before anything is built")

    monkeypatch.setattr("ai_proving_ground.bed._build", build)
    target = tmp_path / "bed"
    rc, _, err = bed_cli("init", str(target), "kb_docs", "kb_clone")
    assert rc == 1
    assert err.startswith("APG_FIXTURE_OVERLAP")
    assert "node.type.kb_doc" in err
    assert not target.exists()
    rc, _, err = bed_cli("init", str(target), "kb_docs", "no_such_fixture")
    assert rc == 2
    assert err.startswith("APG_FIXTURE_NOT_FOUND")
    assert not target.exists()


def test_bed_init_removes_a_half_built_bed(bed_cli: MainRunner, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    extra = tmp_path / "mine"
    broken = shutil.copytree(SHIPPED / "fixture_canvas_home", extra / "fixture_broken")
    edit_fragment(broken, name="broken")
    (broken / "recipe.yml").write_text("name: Broken\ninstall: [no_such_module]\n",
                                       encoding="utf-8")
    monkeypatch.setenv("AI_PG_FIXTURE_PATH", str(extra))
    target = tmp_path / "bed"
    rc, _, err = bed_cli("init", str(target), "kb_docs", "broken")
    assert rc == 1
    assert err.startswith("APG_RECIPE_FAILED") and "no_such_module" in err
    assert not target.exists()
