"""Modules on disk: install with dependencies, refusals, uninstall, schema versions and updates."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from ai_proving_ground.sites.base import PendingUpdate, StateQuery
from ai_proving_ground.sites.embedded import modules
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

Site = Callable[..., tuple[int, str, str]]
MakeModule = Callable[..., Path]


def enabled(approot: Path) -> list[str]:
    return sorted(EmbeddedSite(approot).config_get("core.extension")["module"])


def expect(result: tuple[int, str, str], rc: int, err: str, out: str = "") -> None:
    assert (result[0], result[2], result[1]) == (rc, err, out)


def test_custom_module_installs_with_its_dependency_and_config(
    bed: Path, site: Site, make_module: MakeModule
) -> None:
    make_module(bed, "bar", {"version": "1.0.0", "package": "Custom"},
                {"install/bar.settings": {"enabled": True}})
    make_module(bed, "foo", {"version": "2.1.0", "package": "Custom",
                             "dependencies": ["custom:bar", "drupal:node (>=11)"]}, {
        # Alphabetical order would install the field before its storage and bundle.
        "install/field.field.node.foo_doc.field_foo": {
            "entity_type": "node", "bundle": "foo_doc", "field_name": "field_foo",
            "label": "Foo", "dependencies": {"config": ["field.storage.node.field_foo",
                                                        "node.type.foo_doc"]}},
        "install/field.storage.node.field_foo": {
            "entity_type": "node", "field_name": "field_foo", "type": "string",
            "dependencies": {"module": ["foo", "node"]}},
        "install/node.type.foo_doc": {"type": "foo_doc", "name": "Foo doc",
                                      "dependencies": {"enforced": {"module": ["foo"]}}},
        "install/foo.settings": {"colour": "blue"},
    })
    before = enabled(bed)
    expect(site(bed, "pm:install", "foo", "-y"), 0, "APG_SITE_OK [success] Installed: bar, foo\n")
    assert enabled(bed) == sorted([*before, "bar", "foo"])
    driver = EmbeddedSite(bed)
    shipped = driver.read_state(StateQuery(config=(
        "foo.settings", "bar.settings", "node.type.foo_doc", "field.storage.node.field_foo",
        "field.field.node.foo_doc.field_foo"))).config
    assert all(shipped.values()), shipped
    assert shipped["foo.settings"] == {"colour": "blue"}

    rc, out, err = site(bed, "pm:list", "--format=json")
    assert rc == 0, err
    listing = json.loads(out)
    assert listing["foo"] == {"package": "Custom", "display_name": "foo", "name": "foo",
                              "type": "module", "path": "web/modules/custom/foo",
                              "status": "Enabled", "version": "2.1.0"}
    assert listing["bar"]["version"] == "1.0.0"
    expect(site(bed, "en", "foo"), 0, "APG_SITE_OK [success] Already installed.\n")

    # The module's field works: content can use it.
    rc, out, err = site(bed, "entity:create", "node", "foo_doc", "--set", "title=F",
                        "--set", "field_foo=bar", "--format=json")
    assert rc == 0, err

    # Uninstalling foo would delete the foo_doc bundle, which content still uses.
    before_refusal = driver.all_config()
    rc, _, err = site(bed, "pm:uninstall", "foo")
    assert (rc, err) == (1, "APG_CONFIG_IN_USE node entities of bundle foo_doc exist; delete "
                            "them before node.type.foo_doc\n")
    assert driver.all_config() == before_refusal
    # With the content gone it can be uninstalled; it takes the config it provides or that
    # depends on it (directly or through other config).
    rc, _, err = site(bed, "entity:delete", "node", json.loads(out)["uuid"])
    assert rc == 0, err
    expect(site(bed, "pm:uninstall", "foo"), 0, "APG_SITE_OK [success] Uninstalled: foo\n")
    gone = driver.read_state(StateQuery(config=(
        "foo.settings", "field.storage.node.field_foo", "field.field.node.foo_doc.field_foo",
        "node.type.foo_doc", "bar.settings"))).config
    assert gone == {"foo.settings": None, "field.storage.node.field_foo": None,
                    "field.field.node.foo_doc.field_foo": None, "node.type.foo_doc": None,
                    "bar.settings": {"enabled": True}}
    assert enabled(bed) == sorted([*before, "bar"])
    # What is left is consistent: it exports and imports again.
    assert site(bed, "config:export")[0] == 0
    rc, _, err = site(bed, "config:import")
    assert rc == 0, err


def test_missing_module_or_dependency_fails_naming_them(bed: Path, site: Site,
                                                        make_module: MakeModule) -> None:
    make_module(bed, "needy", {"version": "1.0.0", "dependencies": ["custom:ghost"]})
    before = EmbeddedSite(bed).all_config()
    rc, _, err = site(bed, "pm:install", "nosuch")
    assert rc == 1
    assert err == ("APG_MODULE_MISSING module nosuch is not on disk; put it under "
                   "web/modules/custom/nosuch/ with a nosuch.info.yml, or fix the name\n")
    rc, _, err = site(bed, "pm:install", "options", "needy")
    assert rc == 1
    assert err.startswith("APG_MODULE_MISSING module ghost (a dependency of needy) is not on "
                          "disk"), err
    assert EmbeddedSite(bed).all_config() == before


def test_uninstall_refusals(content_bed: Path, site: Site, make_module: MakeModule) -> None:
    make_module(content_bed, "bar", {"version": "1.0.0"})
    make_module(content_bed, "foo", {"version": "1.0.0", "dependencies": ["custom:bar"]})
    assert site(content_bed, "pm:install", "foo")[0] == 0
    assert site(content_bed, "config:set", "taxonomy.vocabulary.tags", "?", "{vid: tags}",
                "--input-format=yaml")[0] == 0
    assert site(content_bed, "entity:create", "taxonomy_term", "tags", "--set", "name=T")[0] == 0
    before = EmbeddedSite(content_bed).all_config()

    for args, token, message in (
        (["bar"], "APG_MODULE_DEPENDED_ON", "module foo depends on bar; uninstall foo first"),
        (["node"], "APG_MODULE_DEPENDED_ON",
         "module canvas depends on node; uninstall canvas first"),
        (["taxonomy"], "APG_MODULE_HAS_CONTENT",
         "module taxonomy provides taxonomy_term entities that still exist; delete them first"),
        (["options"], "APG_MODULE_IN_USE",
         "module options provides field type list_string, used by "
         "field.storage.node.field_topic; delete that field first"),
        (["system"], "APG_MODULE_REQUIRED", "module system is required by the site"),
        (["forum"], "APG_MODULE_NOT_INSTALLED", "module forum is not installed"),
        (["foo", "forum"], "APG_MODULE_NOT_INSTALLED", "module forum is not installed"),
    ):
        rc, out, err = site(content_bed, "pm:uninstall", *args)
        assert (rc, out, err) == (1, "", f"{token} {message}\n"), args
    assert EmbeddedSite(content_bed).all_config() == before

    # Together, a module and the one depending on it can go.
    expect(site(content_bed, "pmu", "foo", "bar"), 0, "APG_SITE_OK [success] Uninstalled: foo, bar\n")
    assert "bar" not in enabled(content_bed)


def test_schema_version_bump_gives_pending_updates_until_updatedb(
    bed: Path, site: Site, make_module: MakeModule
) -> None:
    updates = {1: "Create the table", 2: "Add a column", 3: "Backfill the column"}
    info = {"version": "1.0.0", "schema_version": 1, "updates": updates}
    make_module(bed, "foo", info)
    assert site(bed, "pm:install", "foo")[0] == 0
    expect(site(bed, "updatedb:status", "--format=json"), 0,
           "APG_SITE_OK [success] No database updates required.\n")
    driver = EmbeddedSite(bed)
    assert driver.modules()["foo"].schema_installed == 1

    make_module(bed, "foo", {**info, "version": "1.1.0", "schema_version": 3})
    rc, out, err = site(bed, "updbst", "--format=json")
    assert (rc, err) == (0, "")
    assert json.loads(out) == {
        "foo_update_2": {"module": "foo", "update_id": 2, "description": "Add a column",
                         "type": "hook_update_n"},
        "foo_update_3": {"module": "foo", "update_id": 3,
                         "description": "Backfill the column", "type": "hook_update_n"},
    }
    assert list(json.loads(out)) == ["foo_update_2", "foo_update_3"]
    assert driver.read_state(StateQuery(pending_updates=True)).pending_updates == [
        PendingUpdate("foo", "foo_update_2", "Add a column"),
        PendingUpdate("foo", "foo_update_3", "Backfill the column")]
    state = driver.modules()["foo"]
    assert (state.version, state.schema_installed, state.schema_code) == ("1.1.0", 1, 3)

    expect(site(bed, "updatedb", "-y"), 0, "APG_SITE_OK [success] Ran 2 update(s).\n")
    expect(site(bed, "updbst"), 0, "APG_SITE_OK [success] No database updates required.\n")
    expect(site(bed, "updb"), 0, "APG_SITE_OK [success] No database updates required.\n")
    assert driver.modules()["foo"].schema_installed == 3


def test_a_module_that_gains_a_schema_after_install_has_pending_updates(
    bed: Path, site: Site, make_module: MakeModule
) -> None:
    make_module(bed, "late", {"version": "1.0.0"})
    assert site(bed, "pm:install", "late")[0] == 0
    expect(site(bed, "updbst"), 0, "APG_SITE_OK [success] No database updates required.\n")
    make_module(bed, "late", {"version": "1.1.0", "updates": {1: "First update"}})
    rc, out, _ = site(bed, "updbst", "--format=json")
    assert rc == 0
    assert json.loads(out) == {"late_update_1": {"module": "late", "update_id": 1,
                                                 "description": "First update",
                                                 "type": "hook_update_n"}}
    expect(site(bed, "updb"), 0, "APG_SITE_OK [success] Ran 1 update(s).\n")
    expect(site(bed, "updbst"), 0, "APG_SITE_OK [success] No database updates required.\n")


def test_malformed_info_files_name_the_file(bed: Path, site: Site,
                                            make_module: MakeModule) -> None:
    module = make_module(bed, "broken", {"version": "1.0.0", "schema_version": "two"})
    rc, _, err = site(bed, "pm:list")
    assert rc == 1
    assert err.startswith(f"APG_MODULE_INVALID {module / 'broken.info.yml'}:"), err
    assert "$.schema_version: must be an integer" in err
    make_module(bed, "broken", {"version": "1.0.0", "dependencies": ["not a module name!"]})
    rc, _, err = site(bed, "pm:install", "broken")
    assert rc == 1
    assert "$.dependencies[0]: cannot read dependency 'not a module name!'" in err
    make_module(bed, "broken", {"version": "1.0.0", "updates": ["one"]})
    rc, _, err = site(bed, "pm:list")
    assert rc == 1
    assert err.startswith(f"APG_MODULE_INVALID {module / 'broken.info.yml'}:5:1: "), err
    assert "$.updates: updates must map numbers to descriptions" in err


def test_a_good_info_file_is_read_without_its_node_tree(
        bed: Path, make_module: MakeModule, monkeypatch: pytest.MonkeyPatch) -> None:
    """Positions (the node tree) are found only for a message: composing it was most of the
    cost of reading an info.yml, which the doctor and reset do for every module."""
    from ai_proving_ground import yamlio

    module = make_module(bed, "good", {"version": "1.0.0", "schema_version": 2,
                                       "updates": {2: "Two"}, "dependencies": ["drupal:node"]})

    def composed(text: str) -> None:
        raise AssertionError("the node tree was composed")

    monkeypatch.setattr(yamlio, "_compose", composed)
    info = modules.parse_info(module / "good.info.yml", "custom")
    assert (info.version, info.schema_version, info.updates, info.dependencies) == (
        "1.0.0", 2, {2: "Two"}, ("node",))


def test_installed_module_gone_from_disk_is_still_listed(bed: Path, site: Site,
                                                        make_module: MakeModule) -> None:
    module = make_module(bed, "fleeting", {"version": "3.0.0"})
    assert site(bed, "pm:install", "fleeting")[0] == 0
    shutil.rmtree(module)
    rc, out, err = site(bed, "pm:list", "--format=json")
    assert rc == 0, err
    assert json.loads(out)["fleeting"] == {
        "package": None, "display_name": "fleeting", "name": "fleeting", "type": "module",
        "path": None, "status": "Enabled", "version": None}


def test_one_state_query_reads_the_module_files_once(
    bed: Path, make_module: MakeModule, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_module(bed, "foo", {"version": "1.0.0", "schema_version": 1, "updates": {1: "One"}})
    reads: list[Path] = []
    discover = modules.discover

    def counted(approot: Path) -> dict[str, modules.ModuleInfo]:
        reads.append(approot)
        return discover(approot)

    monkeypatch.setattr(modules, "discover", counted)
    # What reset asks (and the doctor, with modules): one walk of the module directories.
    answer = EmbeddedSite(bed).read_state(
        StateQuery(modules=True, versions=True, pending_updates=True))
    assert reads == [bed]
    assert answer.modules["foo"].schema_code == 1
    assert "foo" not in answer.versions.modules  # on disk, not installed
    assert answer.pending_updates == []
