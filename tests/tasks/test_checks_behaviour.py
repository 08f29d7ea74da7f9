"""The checks that read behaviour: the page a visitor gets at a path, a whole Canvas tree with
its region's status, components counted, and the rest of the site against its baseline. Each
passes on the build it describes and fails, naming why, on a build that differs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.checks import CHECK_TYPES, check_class, run_checks

FOOTER = "canvas.page_region.olivero.footer"
HOME = "ca0a5000-0000-4000-8000-000000000001"
PAYMENT = "6b0d0c00-0000-4000-8000-000000000007"
FIXTURES = ("kb_docs", "canvas_home")
PARAGRAPH = {"component_id": "sdc.apg.paragraph", "inputs": {
    "text": "Still stuck? Contact support and we will get back to you within one working day."}}
HEADING = {"component_id": "sdc.apg.heading", "inputs": {"text": "Need more help?", "level": "h2"}}
VIEW = ("{id: %s, label: Billing, status: true, base_table: node_field_data, display: {default: "
        "{display_plugin: default, id: default, display_options: {filters: {type: {id: type, "
        "table: node_field_data, field: type, plugin_id: bundle, operator: in, value: {kb_doc: "
        "kb_doc}}}, sorts: {nid: {id: nid, table: node_field_data, field: nid, order: ASC}}, "
        "pager: {type: none, options: {offset: 0}}}}, page_1: {display_plugin: page, id: page_1, "
        "display_options: {path: %s}}}}")


def evaluate(bed: Path, *specs: dict[str, Any]) -> list[dict[str, Any]]:
    driver = EmbeddedSite(bed)
    results = [r.as_json() for r in run_checks(list(specs), driver, bed, FIXTURES)]
    assert driver.round_trips == 1
    return results


def one(bed: Path, spec: dict[str, Any]) -> dict[str, Any]:
    return evaluate(bed, spec)[0]


def ok(site: Any, bed: Path, *args: str) -> None:
    rc, out, err = site(bed, *args)
    assert rc == 0, (out, err)


def set_view(site: Any, bed: Path, view_id: str = "kb_list", path: str = "kb/list") -> None:
    """The view written with config:set, then the cache rebuild that gives it its route."""
    ok(site, bed, "config:set", f"views.view.{view_id}", "?", VIEW % (view_id, path),
       "--input-format=yaml")
    ok(site, bed, "cr")


def test_every_check_type_is_registered_and_importable() -> None:
    for name in CHECK_TYPES:
        cls = check_class(name)
        assert cls is not None and cls.type == name


# ---------------------------------------------------------------------------- page_served


def test_page_served_by_a_view(fixtures_bed: Path, site: Any) -> None:
    set_view(site, fixtures_bed)
    spec = {"type": "page_served", "path": "/kb/list/", "view": "kb_list", "display": "page_1"}
    result = one(fixtures_bed, spec)
    assert result["passed"] is True, result
    assert result["found"]["claims"] == ["view:kb_list/page_1"]
    assert result["found"]["outcome"] == "rows" and len(result["found"]["rows"]) == 23
    first = result["found"]["rows"][0]
    assert one(fixtures_bed, {**spec, "rows": [first]})["message"] == (
        "executing the page /kb/list gave other rows")


def test_page_served_fails_a_disabled_display_or_view(fixtures_bed: Path, site: Any) -> None:
    set_view(site, fixtures_bed)
    spec = {"type": "page_served", "path": "kb/list", "view": "kb_list"}
    ok(site, fixtures_bed, "config:set", "views.view.kb_list",
       "display.page_1.display_options.enabled", "false", "--input-format=yaml")
    # config:set rebuilds no route: the one built before still claims the path, and serves the
    # display as it is now, disabled (as the probe answers on Drupal).
    result = one(fixtures_bed, spec)
    assert result["passed"] is False
    assert result["found"]["claims"] == ["view:kb_list/page_1"]
    assert result["message"] == ("a visitor of /kb/list gets not served (display disabled: page "
                                 "path 404) (display page_1 is disabled)")
    ok(site, fixtures_bed, "cr")  # the rebuilt router has no route for a disabled display
    result = one(fixtures_bed, spec)
    assert result["passed"] is False
    assert result["message"] == "nothing is served at /kb/list (a visitor gets not served (404))"
    # Executing the disabled display is no way round it either.
    rows = one(fixtures_bed, {"type": "view_rows", "view": "kb_list", "display": "page_1",
                              "rows": []})
    assert rows["passed"] is False
    assert rows["message"] == "the view did not execute: display page_1 is disabled"
    ok(site, fixtures_bed, "config:set", "views.view.kb_list",
       "display.page_1.display_options.enabled", "true", "--input-format=yaml")
    assert one(fixtures_bed, spec)["found"]["claims"] == []  # no route until the rebuild
    ok(site, fixtures_bed, "cr")
    assert one(fixtures_bed, spec)["passed"] is True
    ok(site, fixtures_bed, "config:set", "views.view.kb_list", "status", "false",
       "--input-format=yaml")
    ok(site, fixtures_bed, "cr")
    assert one(fixtures_bed, spec)["found"]["claims"] == []


def test_page_served_catches_a_second_view_on_the_path(fixtures_bed: Path, site: Any) -> None:
    set_view(site, fixtures_bed, "kb_list")
    set_view(site, fixtures_bed, "kb_other")
    result = one(fixtures_bed, {"type": "page_served", "path": "kb/list", "view": "kb_list"})
    assert result["passed"] is False
    assert result["found"]["claims"] == ["view:kb_list/page_1", "view:kb_other/page_1"]
    assert result["message"] == "/kb/list is also claimed by view:kb_other/page_1"
    # The router tries routes by name: a view that sorts first takes the path.
    set_view(site, fixtures_bed, "a_list")
    result = one(fixtures_bed, {"type": "page_served", "path": "kb/list", "view": "kb_list"})
    assert result["message"] == ("a visitor of /kb/list gets view:a_list/page_1, "
                                 "not view:kb_list/page_1")


def test_page_served_by_an_alias(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "page_served", "path": "/home", "entity_type": "canvas_page", "uuid": HOME}
    assert one(fixtures_bed, spec)["passed"] is True
    # An alias wins over a view at the same path, but the view still claims it.
    set_view(site, fixtures_bed, "kb_home", "home")
    result = one(fixtures_bed, spec)
    assert result["found"]["served"] == f"canvas_page:{HOME}"
    assert result["message"] == "/home is also claimed by view:kb_home/page_1"
    ok(site, fixtures_bed, "config:delete", "views.view.kb_home")
    ok(site, fixtures_bed, "cr")  # a route outlives its view's config until the rebuild
    ok(site, fixtures_bed, "entity:update", "canvas_page", HOME, "--values",
       json.dumps({"status": False}))
    assert one(fixtures_bed, spec)["message"] == "a visitor of /home gets not served (403)"
    ok(site, fixtures_bed, "entity:update", "canvas_page", HOME, "--values",
       json.dumps({"status": True, "path": [{"alias": "/start"}]}))
    assert one(fixtures_bed, spec)["message"] == (
        "nothing is served at /home (a visitor gets not served (404))")


# ---------------------------------------------------------------------------- canvas


def footer(site: Any, bed: Path, tree: list[dict[str, Any]]) -> None:
    ok(site, bed, "config:set", FOOTER, "component_tree", json.dumps(tree),
       "--input-format=json")


def test_canvas_tree_is_the_whole_tree(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "canvas_tree", "region": FOOTER, "components": [PARAGRAPH, HEADING]}
    paragraph = {"uuid": "ca0a5000-c000-4000-8000-000000000007", **PARAGRAPH}
    heading = {"uuid": "ca0a5000-c000-4000-8000-0000000000f1", **HEADING}
    assert one(fixtures_bed, spec)["message"] == (
        'missing: sdc.apg.heading {"level":"h2","text":"Need more help?"}')
    footer(site, fixtures_bed, [heading, paragraph])  # siblings in any order
    assert one(fixtures_bed, spec)["passed"] is True
    assert one(fixtures_bed, {**spec, "components": [
        {**PARAGRAPH, "uuid": paragraph["uuid"]}, HEADING]})["passed"] is True
    assert one(fixtures_bed, {**spec, "components": [
        {**PARAGRAPH, "uuid": "ca0a5000-c000-4000-8000-000000000099"}, HEADING]})[
            "passed"] is False
    footer(site, fixtures_bed, [paragraph, heading, {**heading, "uuid": "x-2"}])
    assert one(fixtures_bed, spec)["message"] == (
        'unexpected: sdc.apg.heading {"level":"h2","text":"Need more help?"}')
    rewritten = {**paragraph, "inputs": {"text": "Contact us."}}
    footer(site, fixtures_bed, [rewritten, heading])
    message = one(fixtures_bed, spec)["message"]
    assert message.startswith("missing: sdc.apg.paragraph") and "unexpected: sdc.apg.paragraph" \
        in message
    footer(site, fixtures_bed, [paragraph, {**heading, "inputs": {**HEADING["inputs"],
                                                                  "level": "h3"}}])
    assert one(fixtures_bed, spec)["passed"] is False  # every input compared


def test_canvas_tree_reads_the_region_status(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "canvas_tree", "region": FOOTER, "components": [PARAGRAPH]}
    assert one(fixtures_bed, spec)["passed"] is True
    ok(site, fixtures_bed, "config:set", FOOTER, "status", "false", "--input-format=yaml")
    result = one(fixtures_bed, spec)
    assert result["passed"] is False and result["message"] == "the region is disabled"
    assert one(fixtures_bed, {**spec, "status": False})["passed"] is True


def test_canvas_tree_names_the_parent(fixtures_bed: Path, site: Any) -> None:
    rc, out, _ = site(fixtures_bed, "entity:get", "canvas_page", HOME, "--format=json")
    assert rc == 0
    items = json.loads(out)["values"]["components"]
    section = next(i for i in items if i["component_id"] == "sdc.apg.section")
    cards = [{"component_id": i["component_id"], "inputs": i["inputs"]} for i in items
             if i.get("parent_uuid") == section["uuid"]]
    hero = next({"component_id": i["component_id"], "inputs": i["inputs"]} for i in items
                if i["component_id"] == "sdc.apg.hero")
    spec = {"type": "canvas_tree", "page": HOME, "components": [
        hero, {"component_id": "sdc.apg.section", "inputs": section["inputs"],
               "slots": {"content": cards}}]}
    assert one(fixtures_bed, spec)["passed"] is True, one(fixtures_bed, spec)
    # A card moved out of its section is a different tree.
    moved = [{**i, "parent_uuid": None, "slot": None} if i["uuid"] == items[-1]["uuid"] else i
             for i in items]
    ok(site, fixtures_bed, "entity:update", "canvas_page", HOME, "--values",
       json.dumps({"components": moved}))
    message = one(fixtures_bed, spec)["message"]
    assert "missing: sdc.apg.section[content] > sdc.apg.card" in message
    assert "unexpected: sdc.apg.card" in message


def test_canvas_component_counts(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "canvas_component", "page": HOME, "component_id": "sdc.apg.card",
            "count": 2}
    assert one(fixtures_bed, spec)["passed"] is True
    result = one(fixtures_bed, {**spec, "count": 1})
    assert result["message"] == f"2 matching sdc.apg.card in page {HOME}, expected 1"
    exact = {"type": "canvas_component", "region": FOOTER, "component_id": "sdc.apg.paragraph",
             "inputs": {}, "inputs_exact": True}
    assert one(fixtures_bed, exact)["passed"] is False
    assert one(fixtures_bed, {**exact, **PARAGRAPH})["passed"] is True


# ---------------------------------------------------------------------------- site_unchanged


UNCHANGED = {"type": "site_unchanged", "allow": {"config": ["views.view.kb_list"]}}


def test_site_unchanged_on_a_fresh_bed(fixtures_bed: Path, site: Any) -> None:
    assert one(fixtures_bed, UNCHANGED) == {
        "id": "site_unchanged#0", "type": "site_unchanged", "passed": True,
        "expected": {"unchanged_but": UNCHANGED["allow"]}, "found": {"changed": []},
        "message": ""}
    set_view(site, fixtures_bed)  # allowed
    assert one(fixtures_bed, UNCHANGED)["passed"] is True


@pytest.mark.parametrize(("change", "message"), [
    (["entity:update", "node", PAYMENT, "--values", '{"title": "Pay"}'],
     f"node {PAYMENT} was retitled 'Pay' (the baseline has 'Update your payment method')"),
    (["entity:update", "node", PAYMENT, "--values", '{"field_kb_weight": 9}'],
     f"node {PAYMENT} field field_kb_weight was changed"),
    (["entity:update", "node", PAYMENT, "--values", '{"status": false}'],
     f"node {PAYMENT} was unpublished"),
    (["entity:delete", "node", PAYMENT], f"node {PAYMENT} was deleted"),
    (["config:set", "system.site", "page.front", "/node/1"],
     "config system.site:page.front is '/node/1', the baseline has '/home'"),
    (["config:set", FOOTER, "status", "false", "--input-format=yaml"],
     f"config {FOOTER} was changed (at status)"),
    (["config:set", "node.type.kb_doc", "name", "Article"],
     "config node.type.kb_doc was changed (at name)"),
    (["entity:update", "canvas_page", HOME, "--values", '{"path": [{"alias": "/start"}]}'],
     f"canvas_page:{HOME} is no longer what a visitor of /home gets (not served (404))"),
    (["entity:update", "canvas_page", HOME, "--values", '{"status": false}'],
     f"canvas_page:{HOME} is no longer what a visitor of /home gets (not served (403))"),
])
def test_site_unchanged_names_what_changed(fixtures_bed: Path, site: Any, change: list[str],
                                           message: str) -> None:
    ok(site, fixtures_bed, *change)
    result = one(fixtures_bed, UNCHANGED)
    assert result["passed"] is False
    assert message in result["found"]["changed"], result["found"]


def test_site_unchanged_counts_added_content_and_allows_what_the_task_names(
        fixtures_bed: Path, site: Any) -> None:
    ok(site, fixtures_bed, "entity:create", "node", "kb_doc", "--values", json.dumps(
        {"title": "New", "field_kb_section": "billing", "field_kb_weight": 4}))
    result = one(fixtures_bed, UNCHANGED)
    assert any(c == "node kb_doc: 24 items, the baseline has 23"
               for c in result["found"]["changed"]), result
    allowed = {**UNCHANGED, "allow": {"content": ["node.kb_doc"]}}
    assert one(fixtures_bed, allowed)["passed"] is True
    ok(site, fixtures_bed, "entity:update", "node", PAYMENT, "--values", '{"title": "Pay"}')
    assert one(fixtures_bed, {**UNCHANGED, "allow": {"content": [PAYMENT]}})["found"][
        "changed"] == [c for c in result["found"]["changed"]]


def test_new_checks_cost_one_round_trip(fixtures_bed: Path, site: Any) -> None:
    set_view(site, fixtures_bed)
    specs = [UNCHANGED, {"type": "page_served", "path": "kb/list", "view": "kb_list"},
             {"type": "canvas_tree", "region": FOOTER, "components": [PARAGRAPH]},
             {"type": "page_served", "path": "/home", "entity_type": "canvas_page",
              "uuid": HOME}] * 2
    assert all(r["passed"] for r in evaluate(fixtures_bed, *specs))
