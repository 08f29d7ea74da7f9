"""The content model: bundles and fields defined by config, and enforced on every write."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.base import EntityRecord
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

Site = Callable[..., tuple[int, str, str]]

GOOD = ("--set", "title=Fine", "--set", "field_topic=kb")


def snapshot(approot: Path) -> tuple[dict[str, object], list[EntityRecord], str]:
    """Config, every node and the id sequences: all that a refused write must leave alone."""
    driver = EmbeddedSite(approot)
    with driver.session() as store:
        nodes = store.entities_of("node") + store.entities_of("canvas_page")
        sequences = json.dumps([tuple(r) for r in store.conn.execute(
            "SELECT entity_type, value FROM sequences ORDER BY entity_type")])
    return driver.all_config(), nodes, sequences


REFUSALS: dict[str, tuple[list[str], list[str]]] = {
    # case: (entity:create arguments, fragments of the message)
    "unknown bundle": (["node", "blog", *GOOD],
                       ["node bundle 'blog' does not exist", "config node.type.blog"]),
    "disallowed list value": (["node", "article", "--set", "title=T", "--set",
                               "field_topic=sports"],
                              ["field 'field_topic' value 'sports' is not allowed",
                               "allowed: kb, news"]),
    "cardinality 1": (["node", "article", *GOOD, "--set", "field_rank=1", "--set",
                       "field_rank=2"],
                      ["field 'field_rank' holds at most 1 value(s), got 2"]),
    "cardinality 2": (["node", "article", *GOOD, "--values",
                       "{field_tags: [a, b, c]}"],
                      ["field 'field_tags' holds at most 2 value(s), got 3"]),
    "required field": (["node", "article", "--set", "title=No topic"],
                       ["field 'field_topic' is required on node bundle article"]),
    "wrong integer": (["node", "article", *GOOD, "--set", "field_rank=three"],
                      ["field 'field_rank' needs an integer, got 'three'"]),
    "missing label": (["node", "article", "--set", "field_topic=kb"],
                      ["node needs a title"]),
    "unknown entity type": (["widget", "--set", "title=W"],
                            ["unknown entity type 'widget'",
                             "canvas_page, file, menu_link_content, node, taxonomy_term"]),
    "reference without a target": (["node", "article", *GOOD, "--values",
                                    "{field_related: [{label: x}]}"],
                                   ["field 'field_related' item", "lacks its 'target_uuid'"]),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_invalid_entity_is_refused_and_nothing_is_written(case: str, content_bed: Path,
                                                          site: Site) -> None:
    args, fragments = REFUSALS[case]
    before = snapshot(content_bed)
    rc, out, err = site(content_bed, "entity:create", *args)
    assert (rc, out) == (1, ""), err
    assert err.startswith("APG_ENTITY_INVALID "), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert snapshot(content_bed) == before
    # The refused write took no serial id.
    rc, out, err = site(content_bed, "entity:create", "node", "article", *GOOD[:2],
                        "--set", "field_topic=news")
    assert rc == 0, err
    assert json.loads(out)["id"] == 1


def test_entity_type_whose_module_is_not_installed_is_refused(content_bed: Path,
                                                              site: Site) -> None:
    rc, _, err = site(content_bed, "pm:uninstall", "canvas")
    assert rc == 0, err
    before = snapshot(content_bed)
    rc, _, err = site(content_bed, "entity:create", "canvas_page", "--set", "title=Home")
    assert rc == 1
    assert err == ("APG_ENTITY_INVALID entity type canvas_page needs module canvas; install it "
                   "with `apg site pm:install canvas`\n")
    assert snapshot(content_bed) == before
    rc, _, err = site(content_bed, "entity:list", "canvas_page")
    assert rc == 0, err  # listing is a read; it shows nothing
    rc, _, err = site(content_bed, "pm:install", "canvas")
    assert (rc, err) == (0, "APG_SITE_OK [success] Installed: canvas\n")
    rc, out, err = site(content_bed, "entity:create", "canvas_page", "--set", "title=Home",
                        "--format=json")
    assert rc == 0, err
    assert json.loads(out)["bundle"] == "canvas_page"


def test_field_type_whose_module_is_not_installed_is_refused(content_bed: Path) -> None:
    driver = EmbeddedSite(content_bed)
    with driver.session() as store:
        driver.config_save(store, "field.storage.node.field_link", {
            "entity_type": "node", "field_name": "field_link", "type": "link"})
        driver.config_save(store, "field.field.node.page.field_link", {
            "entity_type": "node", "bundle": "page", "field_name": "field_link"})
        # Simulate a site whose link module went away under the field (no validator ran).
        extension = store.config_get("core.extension")
        del extension["module"]["link"]
        store.config_set("core.extension", extension)
    with driver.session() as store, pytest.raises(ApgError) as info:
        driver.create_entity(store, "node", "page",
                             {"title": "x", "field_link": [{"uri": "https://example.com"}]})
    assert info.value.token == "APG_ENTITY_INVALID"
    assert "field 'field_link' has type 'link', which no installed module provides" in str(
        info.value)


def test_values_are_normalised_to_field_items(content_bed: Path) -> None:
    driver = EmbeddedSite(content_bed)
    target = "cccccccc-0000-4000-8000-000000000001"
    with driver.session() as store:
        driver.create_entity(store, "node", "page", {"title": "Target"}, uuid=target)
        record = driver.create_entity(store, "node", "article", {
            "title": "Normalised", "status": "false", "field_topic": "news",
            "field_rank": " 12 ", "field_tags": ["x", {"value": 5}],
            "field_related": [{"entity": target}], "promote": [{"value": 1}],
            "created": 5, "langcode": "en",
        })
    assert record.label == "Normalised"
    assert record.status is False
    assert record.fields == {
        "field_topic": [{"value": "news"}], "field_rank": [{"value": 12}],
        "field_tags": [{"value": "x"}, {"value": "5"}],
        "field_related": [{"target_uuid": target}], "promote": [{"value": 1}]}
    assert driver.entities([record.uuid])[record.uuid] == record


@pytest.mark.parametrize("args", [["node", "article", *GOOD, "--set", "field_nope=x"],
                                  ["node", "page", "--set", "title=P", "--set", "field_rank=1"],
                                  ["canvas_page", "--set", "title=x", "--set", "field_nope=y"]],
                         ids=["undefined field", "field of another bundle", "single bundle"])
def test_create_drops_a_value_of_a_field_the_bundle_lacks_and_says_so(args: list[str],
                                                                      content_bed: Path,
                                                                      site: Site) -> None:
    """As Drupal's Entity::create() does (golden case 055): the entity is saved without it."""
    if args[0] == "canvas_page":
        EmbeddedSite(content_bed).install_modules(["canvas"])
    field = args[-1].split("=")[0]
    rc, out, err = site(content_bed, "entity:create", *args, "--format=json")
    assert rc == 0, err
    assert err.startswith(f"APG_ENTITY_FIELD_DROPPED {field}: "), err
    assert "create the field" in err
    uuid = json.loads(out)["uuid"]
    record = EmbeddedSite(content_bed).entities([uuid])[uuid]
    assert record is not None and field not in record.fields


def test_update_validates_the_merged_entity_and_keeps_identity(content_bed: Path,
                                                               site: Site) -> None:
    rc, out, err = site(content_bed, "entity:create", "node", "article", "--set", "title=A",
                        "--set", "field_topic=kb", "--set", "field_rank=1", "--format=json")
    assert rc == 0, err
    made = json.loads(out)
    driver = EmbeddedSite(content_bed)
    original = driver.entities([made["uuid"]])[made["uuid"]]
    assert original is not None

    for args, fragment in (
        (["--set", "field_topic=sports"], "value 'sports' is not allowed"),
        (["--set", "field_nope=1"], "field 'field_nope' is not defined"),
        (["--values", "{field_topic: []}"], "field 'field_topic' is required"),
        (["--set", "field_rank=1.5"], "needs an integer"),
    ):
        rc, _, err = site(content_bed, "entity:update", "node", made["uuid"], *args)
        assert rc == 1
        assert err.startswith("APG_ENTITY_INVALID ") and fragment in err, err
        assert driver.entities([made["uuid"]])[made["uuid"]] == original

    rc, out, err = site(content_bed, "entity:update", "node", str(made["id"]), "--set",
                        "field_topic=news", "--set", "status=0", "--format=json")
    assert rc == 0, err
    assert json.loads(out) == made
    updated = driver.entities([made["uuid"]])[made["uuid"]]
    assert updated is not None
    assert (updated.id, updated.uuid, updated.bundle, updated.label, updated.status,
            updated.created) == (original.id, original.uuid, "article", "A", False,
                                 original.created)
    assert updated.fields == {"field_topic": [{"value": "news"}], "field_rank": [{"value": 1}]}


def test_get_list_and_delete_by_id_and_by_uuid(content_bed: Path, site: Site) -> None:
    made = []
    for title in ("One", "Two", "Three"):
        rc, out, err = site(content_bed, "entity:create", "node", "page", "--set",
                            f"title={title}", "--format=json")
        assert rc == 0, err
        made.append(json.loads(out))
    for key in (str(made[1]["id"]), made[1]["uuid"]):
        rc, out, err = site(content_bed, "entity:get", "node", key, "--format=json")
        assert rc == 0, err
        assert json.loads(out)["label"] == "Two"
    # A key of another entity type does not resolve.
    rc, _, err = site(content_bed, "entity:get", "taxonomy_term", made[1]["uuid"])
    assert rc == 1 and err.startswith("APG_ENTITY_MISSING "), err

    rc, _, err = site(content_bed, "entity:delete", "node", str(made[0]["id"]))
    assert (rc, err) == (0, "APG_SITE_OK [success] Deleted 1 node entity.\n")
    rc, _, err = site(content_bed, "entity:delete", "node", made[2]["uuid"])
    assert rc == 0, err
    rc, out, _ = site(content_bed, "entity:list", "node", "--format=json")
    assert json.loads(out) == {"2": {"id": 2, "uuid": made[1]["uuid"], "bundle": "page",
                                     "label": "Two", "status": True}}
    # The table format is drush's: a header then one row per entity, in id order.
    rc, out, _ = site(content_bed, "entity:list", "node")
    assert [line.split() for line in out.splitlines()] == [
        ["id", "uuid", "bundle", "label", "status"], ["2", made[1]["uuid"], "page", "Two", "True"]]

    # Deleting several where one is missing deletes none.
    rc, _, err = site(content_bed, "entity:delete", "node", made[1]["uuid"], "77")
    assert rc == 1 and err.startswith("APG_ENTITY_MISSING no node entity 77"), err
    rc, out, _ = site(content_bed, "entity:list", "node", "--format=json")
    assert list(json.loads(out)) == ["2"]


def test_taxonomy_terms_use_vocabularies_as_bundles(content_bed: Path, site: Site) -> None:
    rc, _, err = site(content_bed, "entity:create", "taxonomy_term", "tags", "--set", "name=x")
    assert rc == 1 and "taxonomy_term bundle 'tags' does not exist" in err
    rc, _, err = site(content_bed, "config:set", "taxonomy.vocabulary.tags", "?",
                      "{vid: tags, name: Tags}", "--input-format=yaml")
    assert rc == 0, err
    rc, out, err = site(content_bed, "entity:create", "taxonomy_term", "tags", "--set",
                        "name=Python", "--format=json")
    assert rc == 0, err
    assert json.loads(out)["label"] == "Python" and json.loads(out)["id"] == 1
    rc, _, err = site(content_bed, "config:delete", "taxonomy.vocabulary.tags")
    assert rc == 1 and err.startswith("APG_CONFIG_IN_USE taxonomy_term entities of bundle tags")
