"""State checks: each type passes on a matching bed and fails on a mismatching one, reporting
exactly what it expected and what it found; a task's checks cost one driver round trip."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.paths import project_dir
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.checks import build_checks, dig, run_checks
from ai_proving_ground.tasks.dataset import load_dataset

FOOTER = "canvas.page_region.olivero.footer"
HOME = "ca0a5000-0000-4000-8000-000000000001"
PAYMENT = "6b0d0c00-0000-4000-8000-000000000007"  # billing, weight 1
INVOICE = "6b0d0c00-0000-4000-8000-000000000003"  # billing, weight 3
PASSWORD = "6b0d0c00-0000-4000-8000-000000000002"  # accounts, weight 2
# The 12 published billing articles by weight, as the shipped dv01 task lists them.
BILLING_BY_WEIGHT = [str(r) for r in next(
    c for c in load_dataset(project_dir("datasets") / "build_tasks.yml").task("dv01_view_build").checks
    if c["id"] == "rows-in-order")["rows"]]
ACCOUNTS_BY_WEIGHT = ["Enable two-factor authentication", "Reset your password",
                      "Change your email address"]


def evaluate(bed: Path, *specs: dict[str, Any]) -> list[dict[str, Any]]:
    """Every check's JSON result; also asserts the whole batch took one round trip."""
    driver = EmbeddedSite(bed)
    results = [r.as_json() for r in run_checks(list(specs), driver, bed)]
    assert driver.round_trips == 1
    return results


def one(bed: Path, spec: dict[str, Any]) -> dict[str, Any]:
    result = evaluate(bed, spec)[0]
    del result["type"]
    assert result.pop("id") == spec.get("id", f"{spec['type']}#0")
    return result


def ok(site: Any, bed: Path, *args: str) -> None:
    rc, out, err = site(bed, *args)
    assert rc == 0, (out, err)


def reference_view_yaml() -> str:
    """The kb_billing view of the shipped reference solution."""
    dataset = load_dataset(project_dir("datasets") / "build_tasks.yml")
    step = dataset.task("dv01_view_build").reference_steps[0]
    assert step[:3] == ["config:set", "views.view.kb_billing", "?"]
    return step[3]


# ---------------------------------------------------------------------------- config


def test_config_exists(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "config_exists", "id": "footer", "name": FOOTER}
    assert one(fixtures_bed, spec) == {"passed": True, "expected": "present", "found": "present",
                                       "message": ""}
    ok(site, fixtures_bed, "config:delete", FOOTER)
    assert one(fixtures_bed, spec) == {"passed": False, "expected": "present", "found": "missing",
                                       "message": f"config {FOOTER} does not exist"}


def test_config_equals_at_a_path(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "config_equals", "name": FOOTER, "path": "region", "value": "footer"}
    assert one(fixtures_bed, spec) == {"passed": True, "expected": "footer", "found": "footer",
                                       "message": ""}
    ok(site, fixtures_bed, "config:set", FOOTER, "region", "header")
    assert one(fixtures_bed, spec) == {"passed": False, "expected": "footer", "found": "header",
                                       "message": f"{FOOTER}:region differs"}


def test_config_equals_reads_list_items_by_index(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "config_equals", "name": FOOTER, "path": "component_tree.0.component_id",
            "value": "sdc.apg.paragraph"}
    assert one(fixtures_bed, spec)["found"] == "sdc.apg.paragraph"
    assert one(fixtures_bed, spec)["passed"] is True
    ok(site, fixtures_bed, "config:set", FOOTER, "component_tree", "[]", "--input-format=yaml")
    assert one(fixtures_bed, spec) == {
        "passed": False, "expected": "sdc.apg.paragraph", "found": "<missing>",
        "message": f"{FOOTER}:component_tree.0.component_id differs"}


def test_config_equals_missing_object_and_whole_value(fixtures_bed: Path) -> None:
    missing = {"type": "config_equals", "name": "views.view.kb_billing", "path": "status",
               "value": True}
    assert one(fixtures_bed, missing) == {
        "passed": False, "expected": True, "found": "<missing>",
        "message": "views.view.kb_billing:status differs"}
    whole = {"type": "config_equals", "name": FOOTER, "path": "component_tree.0.inputs",
             "value": {"text": "Still stuck? Contact support and we will get back to you "
                               "within one working day."}}
    assert one(fixtures_bed, whole)["passed"] is True


def test_dig() -> None:
    data = {"a": {"b": [{"c": 1}, {"c": 2}]}, "n": {3: "int key"}}
    assert dig(data, "a.b.1.c") == 2
    assert dig(data, "n.3") == "int key"
    assert dig(data, "a.b.2.c") == "<missing>"
    assert dig(data, "a.x") == "<missing>"
    assert dig(data, None) is data


# ---------------------------------------------------------------------------- entities


def test_entity_exists_by_uuid(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "entity_exists", "uuid": PAYMENT, "entity_type": "node", "bundle": "kb_doc",
            "label": "Update your payment method", "status": True,
            "fields": {"field_kb_section": "billing", "field_kb_weight": 1}}
    expected = {k: spec[k] for k in ("entity_type", "bundle", "label", "status", "fields")}
    assert one(fixtures_bed, spec) == {"passed": True, "expected": expected, "found": expected,
                                       "message": ""}
    ok(site, fixtures_bed, "entity:update", "node", PAYMENT, "--values",
       json.dumps({"title": "Pay", "status": False, "field_kb_weight": 5}))
    assert one(fixtures_bed, spec) == {
        "passed": False, "expected": expected, "message": "",
        "found": {"entity_type": "node", "bundle": "kb_doc", "label": "Pay", "status": False,
                  "fields": {"field_kb_section": "billing", "field_kb_weight": 5}}}


def test_entity_exists_compares_field_values_as_drupal_stores_them(fixtures_bed: Path) -> None:
    # Real Drupal reads 1 back as "1": a check written either way must grade either site alike.
    for weight in (1, "1", 1.0):
        spec = {"type": "entity_exists", "uuid": PAYMENT, "fields": {"field_kb_weight": weight}}
        assert one(fixtures_bed, spec)["passed"] is True, weight
    for weight in (2, "1.5", "one", None):
        spec = {"type": "entity_exists", "uuid": PAYMENT, "fields": {"field_kb_weight": weight}}
        assert one(fixtures_bed, spec)["passed"] is False, weight


def test_entity_exists_by_uuid_compares_only_what_it_names(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "entity_exists", "uuid": HOME, "label": "Home"}
    assert one(fixtures_bed, spec) == {"passed": True, "expected": {"label": "Home"},
                                       "found": {"label": "Home"}, "message": ""}
    ok(site, fixtures_bed, "entity:delete", "canvas_page", HOME)
    assert one(fixtures_bed, spec) == {"passed": False, "expected": {"label": "Home"},
                                       "found": None, "message": f"no entity {HOME}"}


def test_entity_exists_by_type_and_label(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "entity_exists", "entity_type": "node", "bundle": "kb_doc",
            "label": "Update your payment method", "status": True,
            "fields": {"field_kb_section": "billing"}}
    expected = {"entity_type": "node", "bundle": "kb_doc", "label": "Update your payment method",
                "status": True, "fields": {"field_kb_section": "billing"}, "matches": ">= 1"}
    assert one(fixtures_bed, spec) == {"passed": True, "expected": expected,
                                       "found": {"matches": 1}, "message": ""}
    ok(site, fixtures_bed, "entity:update", "node", PAYMENT, "--values", '{"status": false}')
    assert one(fixtures_bed, spec) == {"passed": False, "expected": expected,
                                       "found": {"matches": 0}, "message": ""}
    # Without the status condition the unpublished article still matches by label.
    loose = {k: v for k, v in spec.items() if k != "status"}
    assert one(fixtures_bed, loose)["found"] == {"matches": 1}
    wrong_label = {**loose, "label": "Update your card"}
    assert one(fixtures_bed, wrong_label)["found"] == {"matches": 0}
    assert one(fixtures_bed, wrong_label)["passed"] is False


@pytest.mark.parametrize(("bounds", "before", "after"), [
    ({"equals": 12}, True, False),
    ({"min": 12}, True, False),
    ({"max": 11}, False, True),
    ({"min": 11, "max": 12}, True, True),
    ({"min": 12, "max": 12}, True, False),
])
def test_entity_count_bounds_and_conditions(fixtures_bed: Path, site: Any, bounds: dict[str, int],
                                            before: bool, after: bool) -> None:
    spec = {"type": "entity_count", "entity_type": "node", "bundle": "kb_doc",
            "conditions": [{"field": "field_kb_section", "operator": "=", "value": "billing"},
                           {"field": "status", "operator": "=", "value": "1"}], **bounds}
    assert one(fixtures_bed, spec) == {"passed": before, "expected": bounds, "found": 12,
                                       "message": ""}
    ok(site, fixtures_bed, "entity:update", "node", INVOICE, "--values", '{"status": false}')
    assert one(fixtures_bed, spec) == {"passed": after, "expected": bounds, "found": 11,
                                       "message": ""}


def test_entity_count_without_conditions(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "entity_count", "entity_type": "node", "bundle": "kb_doc", "equals": 23}
    assert one(fixtures_bed, spec)["passed"] is True
    ok(site, fixtures_bed, "entity:delete", "node", PASSWORD)
    assert one(fixtures_bed, spec) == {"passed": False, "expected": {"equals": 23}, "found": 22,
                                       "message": ""}


# ---------------------------------------------------------------------------- modules


def test_module_enabled(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "module_enabled", "module": "views"}
    assert one(fixtures_bed, spec) == {"passed": True, "expected": "enabled", "found": "enabled",
                                       "message": ""}
    ok(site, fixtures_bed, "pm:uninstall", "views")
    assert one(fixtures_bed, spec) == {"passed": False, "expected": "enabled", "found": "disabled",
                                       "message": ""}
    unknown = {"type": "module_enabled", "module": "no_such_module"}
    assert one(fixtures_bed, unknown) == {"passed": False, "expected": "enabled",
                                          "found": "missing", "message": ""}


# ---------------------------------------------------------------------------- views


def test_view_rows(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "view_rows", "view": "kb_billing", "display": "page_1",
            "rows": BILLING_BY_WEIGHT}
    assert one(fixtures_bed, spec) == {
        "passed": False, "expected": BILLING_BY_WEIGHT, "found": None,
        "message": "the view did not execute: view kb_billing does not exist"}
    ok(site, fixtures_bed, "config:set", "views.view.kb_billing", "?", reference_view_yaml(),
       "--input-format=yaml")
    assert one(fixtures_bed, spec) == {"passed": True, "expected": BILLING_BY_WEIGHT,
                                       "found": BILLING_BY_WEIGHT, "message": ""}
    ok(site, fixtures_bed, "config:set", "views.view.kb_billing",
       "display.default.display_options.sorts.field_kb_weight_value.order", "DESC")
    reversed_order = one(fixtures_bed, spec)
    assert (reversed_order["passed"], reversed_order["found"]) == (False, BILLING_BY_WEIGHT[::-1])
    assert reversed_order["message"] == (
        "executing kb_billing/page_1 gave the same rows in another order")
    ok(site, fixtures_bed, "config:set", "views.view.kb_billing",
       "display.default.display_options.filters.field_kb_section_value.value",
       "{accounts: accounts}", "--input-format=yaml")
    found = one(fixtures_bed, spec)
    assert found["passed"] is False
    assert found["message"].startswith("executing kb_billing/page_1 gave other rows")
    assert len(found["found"]) == 3
    assert PASSWORD in found["found"]


def test_view_rows_by_label(fixtures_bed: Path, site: Any) -> None:
    ok(site, fixtures_bed, "config:set", "views.view.kb_billing", "?", reference_view_yaml(),
       "--input-format=yaml")
    ok(site, fixtures_bed, "config:set", "views.view.kb_billing",
       "display.default.display_options.filters.field_kb_section_value.value",
       "{accounts: accounts}", "--input-format=yaml")
    labels = ACCOUNTS_BY_WEIGHT
    spec = {"type": "view_rows", "view": "kb_billing", "display": "page_1", "match": "label",
            "rows": labels}
    result = one(fixtures_bed, spec)
    assert result == {"passed": True, "expected": labels, "found": labels, "message": ""}
    wrong = {**spec, "rows": sorted(labels)}
    wrong_result = one(fixtures_bed, wrong)
    assert (wrong_result["passed"], wrong_result["found"]) == (False, labels)
    assert wrong_result["message"].startswith(
        "executing kb_billing/page_1 gave the same rows in another order")


# ---------------------------------------------------------------------------- canvas

CARD_SPEC = {"type": "canvas_component", "page": HOME, "component_id": "sdc.apg.card",
             "slot": "content", "parent_component_id": "sdc.apg.section",
             "inputs": {"title": "Billing", "url": "/kb/billing"}}


def home_components(bed: Path, site: Any) -> list[dict[str, Any]]:
    rc, out, err = site(bed, "entity:get", "canvas_page", HOME, "--format=json")
    assert rc == 0, err
    components: list[dict[str, Any]] = json.loads(out)["values"]["components"]
    return components


def test_canvas_component_on_a_page(fixtures_bed: Path, site: Any) -> None:
    result = one(fixtures_bed, CARD_SPEC)
    expected = {k: CARD_SPEC[k] for k in ("component_id", "inputs", "slot", "parent_component_id")}
    assert result["passed"] is True
    assert result["expected"] == expected
    assert result["message"] == ""
    billing = {"uuid": "ca0a5000-c000-4000-8000-000000000004", "component_id": "sdc.apg.card",
               "inputs": {"title": "Billing", "body": "Invoices, payment methods and refunds.",
                          "url": "/kb/billing"},
               "slot": "content", "parent_uuid": "ca0a5000-c000-4000-8000-000000000002",
               "parent_component_id": "sdc.apg.section"}
    assert billing in result["found"]
    assert [c["component_id"] for c in result["found"]] == ["sdc.apg.card", "sdc.apg.card"]

    # The same card moved out of the section: top level, no slot, no parent.
    components = home_components(fixtures_bed, site)
    for item in components:
        if item["uuid"] == billing["uuid"]:
            item.pop("parent_uuid", None)
            item.pop("slot", None)
    ok(site, fixtures_bed, "entity:update", "canvas_page", HOME, "--values",
       json.dumps({"components": components}))
    result = one(fixtures_bed, CARD_SPEC)
    assert result["passed"] is False
    assert {**billing, "slot": None, "parent_uuid": None,
            "parent_component_id": None} in result["found"]
    assert result["message"] == f"no matching sdc.apg.card in page {HOME}"
    # Without slot and parent the moved card matches again: each key is really compared.
    loose = {k: v for k, v in CARD_SPEC.items() if k not in ("slot", "parent_component_id")}
    assert one(fixtures_bed, loose)["passed"] is True
    assert one(fixtures_bed, {**loose, "slot": "content"})["passed"] is False
    assert one(fixtures_bed, {**loose, "parent_component_id": "sdc.apg.section"})["passed"] is False


def test_canvas_component_inputs_are_a_subset_match(fixtures_bed: Path) -> None:
    assert one(fixtures_bed, {**CARD_SPEC, "inputs": {"title": "Billing"}})["passed"] is True
    wrong = one(fixtures_bed, {**CARD_SPEC, "inputs": {"title": "Billing", "url": "/billing"}})
    assert wrong["passed"] is False
    assert wrong["expected"]["inputs"] == {"title": "Billing", "url": "/billing"}


def test_canvas_component_in_a_region(fixtures_bed: Path, site: Any) -> None:
    spec = {"type": "canvas_component", "region": FOOTER, "component_id": "sdc.apg.paragraph"}
    paragraph = {"uuid": "ca0a5000-c000-4000-8000-000000000007",
                 "component_id": "sdc.apg.paragraph",
                 "inputs": {"text": "Still stuck? Contact support and we will get back to you "
                                    "within one working day."},
                 "slot": None, "parent_uuid": None, "parent_component_id": None}
    assert one(fixtures_bed, spec) == {"passed": True, "expected": {"component_id":
                                       "sdc.apg.paragraph"}, "found": [paragraph], "message": ""}
    ok(site, fixtures_bed, "config:set", FOOTER, "component_tree",
       "[{uuid: ca0a5000-c000-4000-8000-0000000000f1, component_id: sdc.apg.heading, "
       "inputs: {text: Help, level: h2}}]", "--input-format=yaml")
    assert one(fixtures_bed, spec) == {
        "passed": False, "expected": {"component_id": "sdc.apg.paragraph"}, "found": [],
        "message": f"no matching sdc.apg.paragraph in region {FOOTER}"}


def test_canvas_component_without_its_tree(fixtures_bed: Path) -> None:
    page = {"type": "canvas_component", "page": "ca0a5000-0000-4000-8000-0000000000ff",
            "component_id": "sdc.apg.card"}
    assert one(fixtures_bed, page) == {
        "passed": False, "expected": {"component_id": "sdc.apg.card"}, "found": None,
        "message": "no Canvas page ca0a5000-0000-4000-8000-0000000000ff"}
    region = {"type": "canvas_component", "region": "canvas.page_region.olivero.sidebar",
              "component_id": "sdc.apg.card"}
    assert one(fixtures_bed, region)["message"] == \
        "no Canvas region canvas.page_region.olivero.sidebar"
    # A node UUID is not a Canvas page.
    assert one(fixtures_bed, {**page, "page": PAYMENT})["found"] is None


# ---------------------------------------------------------------------------- command


def test_command_runs_in_the_bed(fixtures_bed: Path) -> None:
    spec = {"type": "command", "argv": ["sh", "-c", "test -f marker || { echo no marker >&2; exit 4; }"]}
    assert one(fixtures_bed, spec) == {"passed": False, "expected": 0, "found": 4,
                                       "message": "no marker"}
    (fixtures_bed / "marker").write_text("", encoding="utf-8")
    assert one(fixtures_bed, spec) == {"passed": True, "expected": 0, "found": 0, "message": ""}


def test_command_failures_are_verdicts_not_crashes(fixtures_bed: Path) -> None:
    missing = {"type": "command", "argv": ["no-such-command-apg"]}
    assert one(fixtures_bed, missing) == {"passed": False, "expected": 0, "found": None,
                                          "message": "no-such-command-apg not found"}
    script = fixtures_bed / "not-executable.sh"
    script.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    os.chmod(script, 0o644)
    result = one(fixtures_bed, {"type": "command", "argv": ["./not-executable.sh"]})
    assert result["passed"] is False
    assert result["found"] is None
    assert result["message"].startswith("./not-executable.sh could not run: ")
    started = time.monotonic()
    slow = one(fixtures_bed, {"type": "command", "argv": ["sleep", "5"], "timeout_s": 0.2})
    assert time.monotonic() - started < 3
    assert slow == {"passed": False, "expected": 0, "found": None,
                    "message": "timed out after 0.2s"}


def test_command_timeout_stops_what_the_command_started(fixtures_bed: Path) -> None:
    # The shell's child would otherwise outlive the grade and change the bed afterwards.
    spec = {"type": "command", "argv": ["sh", "-c", "(sleep 0.6; touch late) & wait"],
            "timeout_s": 0.2}
    assert one(fixtures_bed, spec)["message"] == "timed out after 0.2s"
    time.sleep(0.9)
    assert not (fixtures_bed / "late").exists()


# ---------------------------------------------------------------------------- batching


def every_type(view_yaml_installed: bool = True) -> list[dict[str, Any]]:
    return [
        {"type": "config_exists", "name": FOOTER},
        {"type": "config_exists", "name": "views.view.kb_billing"},
        {"type": "config_equals", "name": FOOTER, "path": "region", "value": "footer"},
        {"type": "config_equals", "name": "system.site", "path": "name", "value": "x"},
        {"type": "entity_exists", "uuid": PAYMENT, "label": "Update your payment method"},
        {"type": "entity_exists", "uuid": HOME, "label": "Home"},
        {"type": "entity_exists", "entity_type": "node", "label": "Fix sync errors"},
        {"type": "entity_count", "entity_type": "node", "bundle": "kb_doc", "equals": 23},
        {"type": "entity_count", "entity_type": "node", "bundle": "kb_doc", "min": 1,
         "conditions": [{"field": "field_kb_section", "operator": "in",
                         "value": ["billing", "accounts"]}]},
        {"type": "module_enabled", "module": "views"},
        {"type": "module_enabled", "module": "canvas"},
        {"type": "view_rows", "view": "kb_billing", "display": "page_1", "rows": BILLING_BY_WEIGHT},
        {"type": "view_rows", "view": "kb_billing", "rows": BILLING_BY_WEIGHT},
        CARD_SPEC,
        {"type": "canvas_component", "region": FOOTER, "component_id": "sdc.apg.paragraph"},
        {"type": "canvas_component", "region": "canvas.page_region.olivero.header",
         "component_id": "sdc.apg.paragraph"},
    ]


@pytest.mark.parametrize("repeat", [1, 3])
def test_all_checks_cost_one_round_trip(fixtures_bed: Path, site: Any, repeat: int) -> None:
    ok(site, fixtures_bed, "config:set", "views.view.kb_billing", "?", reference_view_yaml(),
       "--input-format=yaml")
    specs = every_type() * repeat + [{"type": "command", "argv": ["true"]}] * repeat
    driver = EmbeddedSite(fixtures_bed)
    results = run_checks(specs, driver, fixtures_bed)
    assert driver.round_trips == 1
    assert len(results) == len(specs)
    passed = [r.passed for r in results[:len(every_type())]]
    assert passed == [True, True, True, False, True, True, True, True, True, True, True, True,
                      True, True, True, False]


def test_shipped_tasks_cost_one_round_trip(fixtures_bed: Path) -> None:
    dataset = load_dataset(project_dir("datasets") / "build_tasks.yml")
    for task in dataset.tasks:
        driver = EmbeddedSite(fixtures_bed)
        run_checks(task.checks, driver, fixtures_bed, task.fixtures)
        assert driver.round_trips == 1, task.id


def test_check_ids_default_to_type_and_index() -> None:
    checks = build_checks([{"type": "module_enabled", "module": "views"},
                           {"type": "module_enabled", "module": "node", "id": "node-on"}])
    assert [c.id for c in checks] == ["module_enabled#0", "node-on"]


def test_unknown_check_type_is_refused() -> None:
    with pytest.raises(ApgError) as caught:
        build_checks([{"type": "config_looks_nice"}])
    assert caught.value.token == "APG_DATASET_INVALID"
    assert "unknown check type 'config_looks_nice'" in caught.value.message


def test_view_rows_passes_arguments_and_fails_what_a_visitor_is_not_served(
        fixtures_bed: Path, site: Any) -> None:
    ok(site, fixtures_bed, "config:set", "views.view.kb_billing", "?", reference_view_yaml(),
       "--input-format=yaml")
    ok(site, fixtures_bed, "config:set", "views.view.kb_billing",
       "display.default.display_options.arguments", json.dumps(
           {"nid": {"table": "node_field_data", "field": "nid", "plugin_id": "node_nid",
                    "default_action": "not found", "break_phrase": True}}),
       "--input-format=json")
    spec = {"type": "view_rows", "view": "kb_billing", "display": "page_1",
            "rows": [PAYMENT, INVOICE], "arguments": ["3+7"]}
    assert one(fixtures_bed, spec)["passed"] is True
    without = one(fixtures_bed, {**spec, "arguments": []})
    assert without["passed"] is False
    assert without["message"].startswith("a visitor of kb_billing/page_1 gets not served (404)")


def test_view_rows_judges_the_tasks_order_not_the_agents_ties(fixtures_bed: Path,
                                                              site: Any) -> None:
    ok(site, fixtures_bed, "config:set", "views.view.kb_billing", "?", reference_view_yaml(),
       "--input-format=yaml")
    # Sorting on the section alone: all three billing articles tie in the agent's view. That
    # excuses nothing: the task's order is by weight, and the database's order is not it.
    ok(site, fixtures_bed, "config:set", "views.view.kb_billing",
       "display.default.display_options.sorts", json.dumps(
           {"s": {"table": "node__field_kb_section", "field": "field_kb_section_value",
                  "plugin_id": "standard", "order": "ASC"}}), "--input-format=json")
    spec = {"type": "view_rows", "view": "kb_billing", "display": "page_1",
            "rows": BILLING_BY_WEIGHT}
    result = one(fixtures_bed, spec)
    assert result["passed"] is False
    assert result["message"] == ("executing kb_billing/page_1 gave the same rows in another "
                                 "order")
    # Where the task itself leaves rows unordered (a group), any order of them passes...
    grouped = one(fixtures_bed, {**spec, "rows": [BILLING_BY_WEIGHT]})
    assert grouped["passed"] is True
    assert grouped["message"].startswith("rows the task lists as a sort tie came in another")
    assert grouped["expected"] == [BILLING_BY_WEIGHT]
    # ...in its place only: the rows outside the group are still judged in order.
    found = grouped["found"]
    assert one(fixtures_bed, {**spec, "rows": [found[1], [found[0], *found[2:]]]})[
        "passed"] is False
    assert one(fixtures_bed, {**spec, "rows": [found[0], found[1:][::-1]]})["passed"] is True
    assert one(fixtures_bed, {**spec, "rows": [BILLING_BY_WEIGHT[:2]]})["passed"] is False


def test_view_rows_failure_names_the_filter_drupal_dropped(fixtures_bed: Path, site: Any) -> None:
    ok(site, fixtures_bed, "config:set", "views.view.kb_billing", "?", reference_view_yaml(),
       "--input-format=yaml")
    # 'in' is not a list field's operator: Drupal adds no condition and validate() says so.
    ok(site, fixtures_bed, "config:set", "views.view.kb_billing",
       "display.default.display_options.filters.field_kb_section_value.operator", "in")
    spec = {"type": "view_rows", "view": "kb_billing", "display": "page_1",
            "rows": BILLING_BY_WEIGHT}
    result = one(fixtures_bed, spec)
    assert result["passed"] is False and len(result["found"]) == 21  # every published article
    assert "default: The operator is invalid on filter: Content: Section." in result["message"]
