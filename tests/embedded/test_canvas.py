"""Canvas on the embedded site: page entities and page-region config holding component trees."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.base import CanvasRef, CanvasTree, ComponentItem, StateQuery
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

Site = Callable[..., tuple[int, str, str]]
MakeRecipe = Callable[..., Path]

PAGE_UUID = "dddddddd-0000-4000-8000-000000000001"
REGION = "canvas.page_region.olivero.header"

TREE: list[dict[str, Any]] = [
    {"uuid": "hero", "component_id": "sdc.apg.hero",
     "inputs": {"heading": "Welcome", "cta_text": "Start"}},
    {"uuid": "cols", "component_id": "sdc.apg.two_column", "inputs": {"ratio": "33-67"}},
    {"uuid": "left", "component_id": "sdc.apg.heading", "parent_uuid": "cols", "slot": "first",
     "inputs": {"text": "Left", "level": "h2"}},
    {"uuid": "right", "component_id": "sdc.apg.section", "parent_uuid": "cols",
     "slot": "second", "inputs": {}},
    {"uuid": "card", "component_id": "sdc.apg.card", "parent_uuid": "right", "slot": "content",
     "inputs": {"title": "Nested card", "body": "Two levels down"}},
]

REGION_CONFIG: dict[str, Any] = {
    "id": "olivero.header", "label": "Header", "theme": "olivero", "region": "header",
    "component_tree": [
        {"uuid": "brand", "component_id": "block.system_branding_block",
         "inputs": {"use_site_logo": False, "use_site_name": True}},
        {"uuid": "menu", "component_id": "block.system_menu_block.main",
         "inputs": {"level": 1, "depth": 2}},
    ],
}


def create_page(site: Site, approot: Path, tree: list[dict[str, Any]],
                uuid: str = PAGE_UUID) -> tuple[int, str, str]:
    values = json.dumps({"title": "Home", "components": tree})
    return site(approot, "entity:create", "canvas_page", "--uuid", uuid, "--values", values,
                "--format=json")


def items(tree: list[dict[str, Any]]) -> tuple[ComponentItem, ...]:
    return tuple(ComponentItem(uuid=c["uuid"], component_id=c["component_id"],
                               parent_uuid=c.get("parent_uuid"), slot=c.get("slot"),
                               inputs=c.get("inputs", {})) for c in tree)


def test_page_and_region_trees_are_accepted_and_read_back_in_one_round_trip(
    bed: Path, site: Site
) -> None:
    rc, out, err = create_page(site, bed, TREE)
    assert rc == 0, err
    assert json.loads(out) == {"id": 1, "uuid": PAGE_UUID, "bundle": "canvas_page",
                               "label": "Home"}
    rc, _, err = site(bed, "config:set", REGION, "?", json.dumps(REGION_CONFIG),
                      "--input-format=json")
    assert (rc, err) == (0, f"APG_SITE_OK [success] Saved {REGION}.\n")

    driver = EmbeddedSite(bed)
    answer = driver.read_state(StateQuery(canvas=(
        CanvasRef("page", PAGE_UUID), CanvasRef("region", REGION),
        CanvasRef("page", "no-such-page"), CanvasRef("region", "canvas.page_region.olivero.x"),
    )))
    assert driver.round_trips == 1
    assert answer.canvas == [
        CanvasTree("page", PAGE_UUID, "Home", items(TREE)),
        CanvasTree("region", REGION, "Header", items(REGION_CONFIG["component_tree"])),
        None,
        None,
    ]
    # entity:get shows the stored tree in its stored shape.
    rc, out, _ = site(bed, "entity:get", "canvas_page", PAGE_UUID, "--format=json")
    stored = json.loads(out)["values"]["components"]
    assert [c["uuid"] for c in stored] == ["hero", "cols", "left", "right", "card"]
    assert stored[2] == {"uuid": "left", "component_id": "sdc.apg.heading",
                         "parent_uuid": "cols", "slot": "first",
                         "inputs": {"text": "Left", "level": "h2"}}


def test_inputs_may_be_a_json_string_as_canvas_stores_them(bed: Path, site: Site) -> None:
    tree = [{"uuid": "p", "component_id": "sdc.apg.paragraph",
             "inputs": json.dumps({"text": "Stored as a string"})}]
    rc, _, err = create_page(site, bed, tree)
    assert rc == 0, err
    page = EmbeddedSite(bed).read_state(StateQuery(canvas=(CanvasRef("page", PAGE_UUID),)))
    tree_read = page.canvas[0]
    assert tree_read is not None
    assert tree_read.components == (ComponentItem("p", "sdc.apg.paragraph", None, None,
                                                  {"text": "Stored as a string"}),)


def replace(index: int, **changes: Any) -> list[dict[str, Any]]:
    tree = [dict(c) for c in TREE]
    tree[index] = {**tree[index], **changes}
    return tree


BAD_TREES: dict[str, tuple[list[dict[str, Any]], str]] = {
    "unknown component": (replace(0, component_id="sdc.apg.marquee"),
                          "canvas_page.components[0] (hero): unknown component 'sdc.apg.marquee'"),
    "bad slot": (replace(2, slot="third"),
                 "canvas_page.components[2] (left): slot 'third' is not a slot of "
                 "sdc.apg.two_column (slots: first, second)"),
    "slot on a component without slots": (
        replace(2, parent_uuid="hero", slot="first"),
        "slot 'first' is not a slot of sdc.apg.hero (slots: none)"),
    "missing required input": (replace(0, inputs={"cta_text": "Start"}),
                               "canvas_page.components[0] (hero): input 'heading' of "
                               "sdc.apg.hero is required"),
    "parent not in tree": (replace(4, parent_uuid="nowhere"),
                           "canvas_page.components[4] (card): parent_uuid nowhere is not in "
                           "this tree"),
    "root with a slot": (replace(0, slot="first"), "a root component has no slot"),
    "unknown input": (replace(0, inputs={"heading": "H", "colour": "red"}),
                      "sdc.apg.hero has no input 'colour'"),
    "wrong input type": (replace(1, inputs={"ratio": 50}), "input 'ratio' must be of type string"),
    "value outside enum": (replace(1, inputs={"ratio": "10-90"}),
                           "input 'ratio' must be one of ['50-50', '33-67', '67-33']"),
    "duplicate uuid": (replace(4, uuid="hero"), "component uuid hero appears twice"),
    "cycle": ([{"uuid": "a", "component_id": "sdc.apg.section", "parent_uuid": "b",
                "slot": "content"},
               {"uuid": "b", "component_id": "sdc.apg.section", "parent_uuid": "a",
                "slot": "content"}], "parent_uuid links form a cycle"),
    "no component id": ([{"uuid": "x"}], "canvas_page.components[0]: component_id is required"),
    "inputs not json": ([{"uuid": "x", "component_id": "sdc.apg.paragraph", "inputs": "{nope"}],
                        "inputs is not valid JSON"),
}


@pytest.mark.parametrize("case", list(BAD_TREES))
def test_invalid_page_trees_are_refused_and_nothing_is_written(case: str, bed: Path,
                                                               site: Site) -> None:
    tree, message = BAD_TREES[case]
    rc, out, err = create_page(site, bed, tree)
    assert (rc, out) == (1, "")
    assert err.startswith("APG_CANVAS_INVALID "), err
    assert message in err, err
    assert EmbeddedSite(bed).entities([PAGE_UUID]) == {PAGE_UUID: None}


def test_page_update_is_validated_too(bed: Path, site: Site) -> None:
    assert create_page(site, bed, TREE)[0] == 0
    driver = EmbeddedSite(bed)
    before = driver.entities([PAGE_UUID])
    values = json.dumps({"components": replace(4, slot="sidebar")})
    rc, _, err = site(bed, "entity:update", "canvas_page", PAGE_UUID, "--values", values)
    assert rc == 1
    assert "slot 'sidebar' is not a slot of sdc.apg.section" in err
    assert driver.entities([PAGE_UUID]) == before

    rc, _, err = site(bed, "entity:update", "canvas_page", "1", "--values",
                      json.dumps({"components": TREE[:1]}))
    assert rc == 0, err
    tree = driver.read_state(StateQuery(canvas=(CanvasRef("page", PAGE_UUID),))).canvas[0]
    assert tree is not None and tree.components == items(TREE[:1])


def test_canvas_page_is_a_single_bundle_type_and_refuses_undefined_fields(bed: Path,
                                                                          site: Site) -> None:
    rc, _, err = site(bed, "entity:create", "canvas_page", "landing", "--set", "title=x")
    assert rc == 1
    assert err.startswith("APG_ENTITY_INVALID canvas_page bundle 'landing' does not exist")
    rc, out, _ = site(bed, "entity:create", "canvas_page", "--set", "title=x", "--format=json")
    assert rc == 0
    rc, _, err = site(bed, "entity:update", "canvas_page", json.loads(out)["uuid"], "--set",
                      "field_body=y")
    assert rc == 1
    assert err.startswith("APG_ENTITY_INVALID field 'field_body' is not defined on canvas_page")


def test_region_config_is_validated_on_save(bed: Path, site: Site) -> None:
    driver = EmbeddedSite(bed)
    before = driver.all_config()
    broken = {**REGION_CONFIG, "component_tree": [
        {"uuid": "menu", "component_id": "block.system_menu_block.main",
         "inputs": {"level": "one"}}]}
    rc, _, err = site(bed, "config:set", REGION, "?", json.dumps(broken), "--input-format=json")
    assert rc == 1
    assert err == (f"APG_CANVAS_INVALID {REGION}.component_tree[0] (menu): input 'level' must "
                   "be of type integer\n")
    missing = {**REGION_CONFIG, "component_tree": [{"uuid": "x", "component_id": "block.nope"}]}
    rc, _, err = site(bed, "config:set", REGION, "?", json.dumps(missing), "--input-format=json")
    assert rc == 1 and "unknown component 'block.nope'" in err
    assert driver.all_config() == before

    # A valid region, then a dotted-key edit that breaks it, is refused as a whole.
    assert site(bed, "config:set", REGION, "?", json.dumps(REGION_CONFIG),
                "--input-format=json")[0] == 0
    saved = driver.config_get(REGION)
    rc, _, err = site(bed, "config:set", REGION, "component_tree", "[{uuid: a}]",
                      "--input-format=yaml")
    assert rc == 1 and "component_id is required" in err
    assert driver.config_get(REGION) == saved


def test_canvas_content_and_regions_from_a_recipe(bed: Path, make_recipe: MakeRecipe,
                                                  site: Site) -> None:
    page_doc = {"_meta": {"version": "1.0", "entity_type": "canvas_page", "uuid": PAGE_UUID,
                          "bundle": "canvas_page", "default_langcode": "en"},
                "default": {"title": [{"value": "Landing"}], "components": TREE}}
    recipe = make_recipe("landing", "name: Landing\n", {
        f"content/canvas_page/{PAGE_UUID}.yml": page_doc,
        f"config/{REGION}.yml": REGION_CONFIG,
    })
    rc, _, err = site(bed, "recipe", str(recipe))
    assert rc == 0, err
    answer = EmbeddedSite(bed).read_state(StateQuery(canvas=(
        CanvasRef("page", PAGE_UUID), CanvasRef("region", REGION))))
    assert answer.canvas == [CanvasTree("page", PAGE_UUID, "Landing", items(TREE)),
                             CanvasTree("region", REGION, "Header",
                                        items(REGION_CONFIG["component_tree"]))]
    # Canvas cannot be uninstalled while its pages exist.
    rc, _, err = site(bed, "pm:uninstall", "canvas")
    assert (rc, err) == (1, "APG_MODULE_HAS_CONTENT module canvas provides canvas_page "
                            "entities that still exist; delete them first\n")

    bad = make_recipe("bad_landing", "name: Bad landing\n", {
        f"content/canvas_page/{PAGE_UUID[:-1]}2.yml": {
            **page_doc, "_meta": {**page_doc["_meta"], "uuid": PAGE_UUID[:-1] + "2"},
            "default": {"title": [{"value": "Bad"}],
                        "components": [{"uuid": "x", "component_id": "sdc.apg.nope"}]}}})
    rc, _, err = site(bed, "recipe", str(bad))
    assert rc == 1
    assert err.startswith(f"APG_RECIPE_FAILED {bad}/content/canvas_page/"), err
    assert "APG_CANVAS_INVALID" in err and "unknown component 'sdc.apg.nope'" in err


def test_unknown_canvas_reference_kind_is_a_usage_error(bed: Path) -> None:
    with pytest.raises(ApgError) as info:
        EmbeddedSite(bed).read_state(StateQuery(canvas=(CanvasRef("block", "x"),)))
    assert (info.value.token, info.value.exit_code) == ("APG_USAGE", 2)
