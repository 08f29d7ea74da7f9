"""The dataset's tasks tell right builds from plausible wrong ones.

Each row is one build a task author would expect an agent to try, written from the prompt's own
words: a list of ``apg site`` steps applied to a fresh bed of the task's fixture set (a copy of a
bed provisioned once per session, so it is the baseline a reset restores), then graded by the
real grader (``apg grade`` on live state, the hidden verifier included). Wrong builds must score
0, right builds that differ from the reference must score 1. A build the checks judge wrongly
has no place here: a comment at its row says which check closed it (the six holes an earlier
session listed as strict xfails are closed and asserted plainly).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from ai_proving_ground.cli import fixture_export as export_cli
from ai_proving_ground.cli import grade as grade_cli
from ai_proving_ground.cli import site as site_cli
from ai_proving_ground.paths import project_dir
from ai_proving_ground.tasks.dataset import load_dataset

SHIPPED = load_dataset(project_dir("datasets") / "build_tasks.yml")
Steps = list[list[str]]


def notice(n: int) -> str:
    return f"7e0a1c00-0000-4000-8000-{n:012d}"


def reference(task_id: str) -> Steps:
    return [list(step) for step in SHIPPED.task(task_id).reference_steps]


def flow(data: Any) -> str:
    return yaml.safe_dump(data, default_flow_style=True, sort_keys=False, width=10**6).strip()


def edit_view(task_id: str, change: Callable[[dict[str, Any]], None]) -> Steps:
    """The reference's view (its first step, a config:set of the whole view), changed by ``change``;
    the steps after it (a ``cr``) as the reference has them."""
    step, *rest = reference(task_id)
    view = yaml.safe_load(step[3])
    change(view)
    return [[*step[:3], flow(view), *step[4:]], *rest]


def master(view: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = view["display"]["default"]["display_options"]
    return options


def display(view: dict[str, Any], display_id: str) -> dict[str, Any]:
    options: dict[str, Any] = view["display"][display_id]["display_options"]
    return options


def override(view: dict[str, Any], display_id: str, *keys: str) -> None:
    """Move ``keys`` from the master display onto ``display_id``, flagged as overridden."""
    own = display(view, display_id)
    for key in keys:
        own.setdefault("defaults", {})[key] = False
        own[key] = master(view).pop(key)


def replace_step(steps: Steps, index: int, value: str) -> Steps:
    changed = copy.deepcopy(steps)
    changed[index][3] = value
    return changed


@dataclass(frozen=True)
class Build:
    task: str
    name: str
    right: bool
    steps: Steps

    @property
    def id(self) -> str:
        return f"{self.task}:{'right' if self.right else 'wrong'}:{self.name}"


def wrong(task: str, name: str, steps: Steps) -> Build:
    return Build(task, name, False, steps)


def right(task: str, name: str, steps: Steps) -> Build:
    return Build(task, name, True, steps)


def drop_filter(name: str) -> Callable[[dict[str, Any]], None]:
    return lambda view: master(view)["filters"].pop(name)


def set_in(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set a dotted path inside the master display's options."""
    def change(view: dict[str, Any]) -> None:
        cursor = master(view)
        *parents, last = path.split(".")
        for part in parents:
            cursor = cursor[part]
        cursor[last] = value

    return change


def both(*changes: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def change(view: dict[str, Any]) -> None:
        for one in changes:
            one(view)

    return change


PUBLISHED_OR_ADMIN = {"id": "status", "table": "node_field_data", "field": "status",
                      "plugin_id": "node_status", "operator": "=", "value": "1"}
NOT_INCIDENT = {"id": "type", "table": "node_field_data", "field": "type", "plugin_id": "bundle",
                "operator": "not in", "value": {"kb_incident": "kb_incident"}}
RETITLE = ["entity:update", "node", notice(2), "--values", '{"title": "Version 3.2 is out"}']


# ---------------------------------------------------------------------------- views

def second_view(view: dict[str, Any]) -> None:
    """Another view at the same path (the reference's saved as ``release_notes_copy``)."""
    view["id"] = "release_notes_copy"


def _release_notes() -> list[Build]:
    t = "nv01_release_notes_pager"
    return [
        wrong(t, "no-published-filter", edit_view(t, drop_filter("status"))),
        wrong(t, "oldest-first", edit_view(t, set_in(
            "sorts.field_notice_date_value.order", "ASC"))),
        wrong(t, "default-ten-per-page", edit_view(t, set_in("pager.options.items_per_page", 10))),
        wrong(t, "sorted-by-title", edit_view(t, set_in("sorts", {"title": {
            "id": "title", "table": "node_field_data", "field": "title", "order": "ASC"}}))),
        # Closed by site_unchanged (main's check): before it, a change elsewhere passed.
        wrong(t, "a-notice-retitled-too", [*reference(t), RETITLE]),
        wrong(t, "page-display-disabled", edit_view(
            t, lambda v: display(v, "page_1").update(enabled=False))),
        wrong(t, "second-view-on-the-path", [*reference(t), *[
            [step[0], "views.view.release_notes_copy", *step[2:]]
            for step in edit_view(t, second_view)[:1]]]),
        right(t, "filters-and-pager-on-the-page", edit_view(
            t, lambda v: override(v, "page_1", "filters", "pager"))),
        right(t, "mini-pager", edit_view(t, set_in("pager.type", "mini"))),
        # Closed by the older-page check (page 1 executed): a pager with no links to older ones.
        wrong(t, "no-pager-links", edit_view(t, set_in("pager.type", "some"))),
    ]


def _by_category() -> list[Build]:
    t = "nv02_category_argument"
    return [
        # Closed by page-served: the view right, no cache rebuild, so no route (a 404, as on Drupal).
        wrong(t, "no-cache-rebuild", reference(t)[:1]),
        wrong(t, "no-content-type-filter", edit_view(t, drop_filter("type"))),
        wrong(t, "no-published-filter", edit_view(t, drop_filter("status"))),
        wrong(t, "empty-without-category", edit_view(t, set_in(
            "arguments.field_notice_category_value.default_action", "empty"))),
        wrong(t, "least-urgent-first", edit_view(t, set_in(
            "sorts.field_notice_priority_value.order", "ASC"))),
        # Closed by view_rows judging the task's order: the agent's own sort ties no longer excuse.
        wrong(t, "no-title-tie-break", edit_view(t, lambda v: master(v)["sorts"].pop("title"))),
        right(t, "published-or-admin-and-not-incident", edit_view(t, both(
            set_in("filters.status", PUBLISHED_OR_ADMIN), set_in("filters.type", NOT_INCIDENT)))),
        right(t, "all-as-exception", edit_view(t, set_in(
            "arguments.field_notice_category_value.exception", {"value": "all"}))),
    ]


def _urgent() -> list[Build]:
    t = "nv03_urgent_block"

    def block_pager_unflagged(view: dict[str, Any]) -> None:
        display(view, "block_1").pop("defaults")

    def pager_on_master(view: dict[str, Any]) -> None:
        override(view, "page_1", "pager")
        master(view)["pager"] = display(view, "block_1")["pager"]
        display(view, "page_1")["pager"] = {"type": "none", "options": {"offset": 0}}
        display(view, "page_1").pop("defaults")

    def block_as_page(view: dict[str, Any]) -> None:
        view["display"]["block_1"]["display_plugin"] = "page"
        display(view, "block_1")["path"] = "notices/urgent-top"

    def full_block_pager(view: dict[str, Any]) -> None:
        display(view, "block_1")["pager"] = {"type": "full",
                                             "options": {"items_per_page": 3, "offset": 0}}

    return [
        wrong(t, "block-pager-not-overridden", edit_view(t, block_pager_unflagged)),
        wrong(t, "three-on-the-page-too", edit_view(t, pager_on_master)),
        wrong(t, "above-four-only", edit_view(t, set_in(
            "filters.field_notice_priority_value.operator", ">"))),
        wrong(t, "second-page-not-block", edit_view(t, block_as_page)),
        wrong(t, "no-content-type-filter", edit_view(t, drop_filter("type"))),
        right(t, "above-three", edit_view(t, both(
            set_in("filters.field_notice_priority_value.operator", ">"),
            set_in("filters.field_notice_priority_value.value.value", "3")))),
        right(t, "full-pager-in-the-block", edit_view(t, full_block_pager)),
    ]


def _by_product() -> list[Build]:
    t = "nv04_exposed_product_filter"
    return [
        wrong(t, "not-exposed", edit_view(t, set_in(
            "filters.field_notice_products_value.exposed", False))),
        wrong(t, "other-parameter", edit_view(t, set_in(
            "filters.field_notice_products_value.expose.identifier", "products"))),
        wrong(t, "default-ten-per-page", edit_view(t, set_in("pager.options.items_per_page", 10))),
        wrong(t, "oldest-first", edit_view(t, set_in(
            "sorts.field_notice_date_value.order", "ASC"))),
        # Closed by product-typed (the view run with ?product=api): the filter inverted, and
        # the filter kept on the page display (the config checks read the master's).
        wrong(t, "not-contains", edit_view(t, set_in(
            "filters.field_notice_products_value.operator", "not"))),
        right(t, "filters-on-the-page", edit_view(t, lambda v: override(v, "page_1", "filters"))),
        right(t, "equals-operator", edit_view(t, set_in(
            "filters.field_notice_products_value.operator", "="))),
        right(t, "word-operator-and-label", edit_view(t, both(
            set_in("filters.field_notice_products_value.operator", "word"),
            set_in("filters.field_notice_products_value.expose.label", "Products")))),
    ]


def _fix_maintenance() -> list[Build]:
    t = "nv05_fix_maintenance_page"

    def only_sort(view: dict[str, Any]) -> None:
        master(view)["filters"] = {"field_notice_category_value": master(view)["filters"][
            "field_notice_category_value"]}

    def on_the_page(view: dict[str, Any]) -> None:
        fixed = copy.deepcopy(master(view))
        override(view, "page_1", "filters", "sorts")
        master(view)["filters"] = {"field_notice_category_value": fixed["filters"][
            "field_notice_category_value"]}
        master(view)["sorts"] = {"field_notice_priority_value": {
            **fixed["sorts"]["field_notice_priority_value"], "order": "ASC"}}

    def disabled(view: dict[str, Any]) -> None:
        view["status"] = False

    return [
        wrong(t, "only-the-sort", edit_view(t, only_sort)),
        wrong(t, "incidents-kept", edit_view(t, drop_filter("type"))),
        wrong(t, "moved", edit_view(t, lambda v: display(v, "page_1").update(
            path="notices/maintenance-fixed"))),
        wrong(t, "disabled", edit_view(t, disabled)),
        right(t, "fixed-on-the-page-display", edit_view(t, on_the_page)),
        right(t, "published-or-admin-and-not-incident", edit_view(t, both(
            set_in("filters.status", PUBLISHED_OR_ADMIN), set_in("filters.type", NOT_INCIDENT)))),
    ]


# ---------------------------------------------------------------------------- the broken field

def _fix_category() -> list[Build]:
    t = "nf01_fix_category_field"
    steps = reference(t)
    options = yaml.safe_load(steps[1][3])
    return [
        wrong(t, "only-required", steps[:1]),
        wrong(t, "only-the-option", steps[1:]),
        wrong(t, "security-first", replace_step(steps, 1, flow([options[-1], *options[:-1]]))),
        wrong(t, "required-on-incidents", [
            ["config:set", "field.field.node.kb_incident.field_notice_category", "required", "true",
             "--input-format=yaml"], steps[1]]),
        wrong(t, "a-notice-recategorised", [*steps, [
            "entity:update", "node", notice(5), "--values", '{"field_notice_category": "security"}']]),
        right(t, "options-before-required", [steps[1], steps[0]]),
        right(t, "whole-storage-saved", [steps[0], [
            "config:set", "field.storage.node.field_notice_category", "settings",
            flow({"allowed_values": options, "allowed_values_function": ""}),
            "--input-format=yaml"]]),
    ]


# ---------------------------------------------------------------------------- content

def _update_notice() -> list[Build]:
    t = "nc01_update_notice"
    target = notice(5)

    def update(uuid: str, **values: Any) -> list[str]:
        return ["entity:update", "node", uuid, "--values", json.dumps(values)]

    return [
        wrong(t, "products-replaced", [update(target, field_notice_priority=5,
                                              field_notice_products=["dashboard"])]),
        wrong(t, "other-notice", [update(notice(1), field_notice_priority=5),
                                  update(target, field_notice_products=["api", "mobile", "dashboard"])]),
        wrong(t, "also-retitled", [*reference(t), ["entity:update", "node", target, "--values",
                                                  '{"title": "Network maintenance"}']]),
        wrong(t, "also-unpublished", [*reference(t), ["entity:update", "node", target, "--values",
                                                     '{"status": false}']]),
        # The same products in another order: the field is compared as a set (any_order).
        right(t, "products-in-another-order", [update(target, field_notice_priority=5,
                                                      field_notice_products=["dashboard", "api",
                                                                             "mobile"])]),
        right(t, "two-updates-by-id", [
            ["entity:update", "node", "5", "--values", '{"field_notice_priority": 5}'],
            ["entity:update", "node", "5", "--values",
             '{"field_notice_products": ["api", "mobile", "dashboard"]}']]),
    ]


def _unpublish() -> list[Build]:
    t = "nc02_unpublish_low_billing"
    return [
        wrong(t, "deleted", [["entity:delete", "node", notice(3)], ["entity:delete", "node", notice(15)]]),
        wrong(t, "every-billing-notice", [*reference(t), [
            "entity:update", "node", notice(8), "--values", '{"status": false}']]),
        wrong(t, "every-low-notice", [*reference(t), *[
            ["entity:update", "node", notice(n), "--values", '{"status": false}'] for n in (2, 5, 9)]]),
        wrong(t, "only-one", reference(t)[:1]),
        right(t, "by-id", [["entity:update", "node", "3", "--values", '{"status": false}'],
                           ["entity:update", "node", "15", "--values", '{"status": 0}']]),
    ]


# ---------------------------------------------------------------------------- content model

def _faq() -> list[Build]:
    t = "nm01_faq_content_type"
    steps = reference(t)
    node_type, answer, topics, rank, options, form, view = steps

    def edited(step: list[str], change: Callable[[dict[str, Any]], None]) -> list[str]:
        data = yaml.safe_load(step[3])
        change(data)
        return [*step[:3], flow(data), *step[4:]]

    def storage(name: str, field_type: str, cardinality: int, settings: Any) -> list[str]:
        return ["config:set", f"field.storage.node.{name}", "?", flow({
            "id": f"node.{name}", "field_name": name, "entity_type": "node", "type": field_type,
            "settings": settings, "module": "core", "cardinality": cardinality}),
            "--input-format=yaml"]

    def instance(name: str, label: str, required: bool) -> list[str]:
        return ["config:set", f"field.field.node.kb_faq.{name}", "?", flow({
            "id": f"node.kb_faq.{name}", "field_name": name, "entity_type": "node",
            "bundle": "kb_faq", "label": label, "required": required}), "--input-format=yaml"]

    topics_options = yaml.safe_load(options[3])
    # Every field saved as raw config: the public checks see the config they want, but Drupal
    # makes no field tables, so no FAQ can be saved (the hidden verifier's recipe fails).
    raw_config = [node_type,
                  storage("field_faq_answer", "text_long", 1, {}),
                  storage("field_faq_topics", "list_string", -1,
                          {"allowed_values": topics_options, "allowed_values_function": ""}),
                  storage("field_faq_rank", "integer", 1, {}),
                  instance("field_faq_answer", "Answer", True),
                  instance("field_faq_topics", "Topics", False),
                  instance("field_faq_rank", "Rank", False), form, view]
    three_topics = [node_type, answer, [*topics[:-2], "--cardinality=3", "-y"], rank, options, form,
                    view]
    return [
        wrong(t, "raw-config-fields", raw_config),
        wrong(t, "three-topics-at-most", three_topics),
        wrong(t, "plain-long-text-answer", [node_type, [
            *(a for a in answer if a != "--field-type=text_long"), "--field-type=string_long"],
            topics, rank, options, form, view]),
        wrong(t, "topics-as-select", [*steps[:5], edited(form, lambda d: d["content"][
            "field_faq_topics"].update(type="options_select")), view]),
        wrong(t, "rank-shown", steps[:6]),
        right(t, "type-from-the-add-form", [
            ["node-type:create", "kb_faq", "--name", "FAQ", "--no-body", "-y"], *steps[1:]]),
        right(t, "options-given-at-creation", [node_type, answer, [
            *topics[:-1], "--storage-settings", flow({"allowed_values": topics_options}), "-y"],
            rank, form, view]),
    ]


# ---------------------------------------------------------------------------- configuration

def _site() -> list[Build]:
    t = "ng01_site_name_front_page"
    site = {"name": "Acme Help Center", "mail": "admin@example.com", "slogan": "",
            "page": {"403": "", "404": "", "front": "/notices/maintenance"},
            "default_langcode": "en"}
    return [
        wrong(t, "front-without-slash", [reference(t)[0],
                                         ["config:set", "system.site", "page.front", "notices/maintenance"]]),
        wrong(t, "settings-replaced", [["config:set", "system.site", "?", flow(
            {"name": "Acme Help Center", "page": {"front": "/notices/maintenance"}}),
            "--input-format=yaml"]]),
        wrong(t, "only-renamed", reference(t)[:1]),
        wrong(t, "view-moved-to-home", [reference(t)[0], [
            "config:set", "views.view.notices", "display.page_1.display_options.path", "home"]]),
        right(t, "whole-object", [["config:set", "system.site", "?", flow(site),
                                   "--input-format=yaml"]]),
    ]


def _role() -> list[Build]:
    t = "ng02_notice_editor_role"
    permissions = ["access content overview", "create kb_notice content", "edit any kb_notice content"]

    def role_with(perms: list[str], admin: bool = False) -> Steps:
        return [["role:create", "notice_editor", "Notice editor", "-y"],
                ["config:set", "user.role.notice_editor", "permissions", flow(perms),
                 "--input-format=yaml"],
                ["config:set", "user.role.notice_editor", "is_admin", flow(admin),
                 "--input-format=yaml"]]

    return [
        wrong(t, "edit-own-only", role_with([*permissions[:2], "edit own kb_notice content"])),
        wrong(t, "may-delete-too", role_with(sorted([*permissions, "delete any kb_notice content"]))),
        wrong(t, "administrator", role_with(permissions, admin=True)),
        wrong(t, "other-label", [["role:create", "notice_editor", "Editor", "-y"],
                                 *role_with(permissions)[1:]]),
        right(t, "role-create-then-permissions", role_with(permissions)),
        # Saved unsorted (Drupal's Role::preSave sorts, a raw config:set does not): any_order.
        right(t, "permissions-unsorted", [
            ["role:create", "notice_editor", "Notice editor", "-y"],
            ["config:set", "user.role.notice_editor", "permissions", flow(list(reversed(
                permissions))), "--input-format=yaml"]]),
    ]


def _vocabulary() -> list[Build]:
    t = "ng03_products_vocabulary"
    vocabulary, *terms = reference(t)

    def term(name: str, weight: int) -> list[str]:
        return ["entity:create", "taxonomy_term", "products", "--values",
                json.dumps({"name": name, "weight": weight})]

    return [
        wrong(t, "two-terms", [vocabulary, *terms[:2]]),
        wrong(t, "other-order", [vocabulary, term("API", 2), term("Dashboard", 1),
                                 term("Mobile app", 0)]),
        wrong(t, "other-name", [["vocabulary:create", "products", "--name", "Product list", "-y"],
                                *terms]),
        wrong(t, "a-notice-changed-too", [*reference(t), RETITLE]),
        right(t, "add-form-then-terms-backwards", [
            ["vocabulary:create", "products", "--name", "Products", "-y"],
            term("Mobile app", 2), term("Dashboard", 1), term("API", 0)]),
    ]


def _help_menu() -> list[Build]:
    t = "ng04_help_menu"
    menu, *links = reference(t)
    notices, upgrade, backup, status, home = links

    def edit(step: list[str], **changes: Any) -> list[str]:
        return [*step[:-1], json.dumps({**json.loads(step[-1]), **changes})]

    def link(title: str, uri: str, weight: int, **more: Any) -> list[str]:
        return ["entity:create", "menu_link_content", "--values", json.dumps(
            {"title": title, "link": uri, "menu_name": "help", "weight": weight, **more})]

    parent = json.loads(upgrade[-1])["parent"]
    return [
        wrong(t, "a-link-dropped", [menu, notices, upgrade, status, home]),
        wrong(t, "children-swapped", [menu, notices, edit(upgrade, weight=2), backup, status, home]),
        wrong(t, "not-nested", [menu, notices, edit(upgrade, parent=""), backup, status, home]),
        wrong(t, "retargeted", [menu, notices, upgrade, edit(backup, link={"uri": "entity:node/5"}),
                                status, home]),
        wrong(t, "home-disabled", [menu, *links[:-1], edit(home, enabled=False)]),
        wrong(t, "not-expanded", [menu, edit(notices, expanded=False), *links[1:]]),
        wrong(t, "renamed", [menu, notices, upgrade, backup, edit(status, title="Status"), home]),
        wrong(t, "last-two-swapped", [menu, notices, upgrade, backup, edit(status, weight=3), home]),
        wrong(t, "in-the-support-menu", [menu, *(edit(step, menu_name="support") for step in links)]),
        wrong(t, "support-link-disabled", [*reference(t), [
            "entity:update", "menu_link_content", "4d3e0000-0000-4000-8000-000000000001",
            "--values", '{"enabled": false}']]),
        right(t, "add-form-internal-paths-other-weights", [
            ["menu:create", "help", "--label", "Help", "-y"],
            link("Home", "internal:/", 30),
            link("Service status", "https://status.example.com", 20),
            ["entity:create", "menu_link_content", "--uuid", parent.removeprefix("menu_link_content:"),
             "--values", json.dumps({"title": "Notices", "link": "internal:/notices/maintenance",
                                     "menu_name": "help", "weight": -10, "expanded": True})],
            link("Backup window", "internal:/node/14", 5, parent=parent),
            link("Database upgrade", "internal:/node/1", -5, parent=parent)]),
        right(t, "a-corrected-first-try", [
            menu, notices, upgrade, edit(backup, link={"uri": "entity:node/5"}), status,
            edit(home, title="Front page", enabled=False),
            ["entity:update", "menu_link_content", backup[3],
             "--values", '{"link": "entity:node/14"}'],
            ["entity:update", "menu_link_content", home[3], "--values",
             '{"title": "Home", "enabled": true}']]),
    ]


def _create_notice() -> list[Build]:
    t = "nc03_create_notice"
    (step,) = reference(t)
    values = json.loads(step[-1])

    def create(**changes: Any) -> list[str]:
        return ["entity:create", "node", "kb_notice", "--values", json.dumps({**values, **changes})]

    return [
        wrong(t, "draft", [create(status=False)]),
        wrong(t, "release-category", [create(field_notice_category="release")]),
        wrong(t, "one-product", [create(field_notice_products=["api"])]),
        wrong(t, "twice", [create(), create()]),
        wrong(t, "an-incident-instead", [["entity:create", "node", "kb_incident", "--values",
                                          json.dumps({k: v for k, v in values.items()
                                                      if k not in ("field_notice_date",
                                                                   "field_notice_products")})]]),
        right(t, "no-uuid-products-reordered", [create(field_notice_products=["dashboard", "api"])]),
    ]


# ---------------------------------------------------------------------------- Canvas

HOME = "ca0a5000-0000-4000-8000-000000000001"


def components(task_id: str) -> list[dict[str, Any]]:
    (step,) = reference(task_id)
    tree: list[dict[str, Any]] = json.loads(step[4])["components"]
    return tree


def page_with(tree: list[dict[str, Any]]) -> Steps:
    return [["entity:update", "canvas_page", HOME, "--values", json.dumps({"components": tree})]]


def _hero() -> list[Build]:
    t = "nk01_edit_hero"
    tree = components(t)
    heading_only = copy.deepcopy(tree)
    heading_only[0]["inputs"]["cta_url"] = "/kb"
    no_subheading = copy.deepcopy(tree)
    del no_subheading[0]["inputs"]["subheading"]
    new_uuid = copy.deepcopy(tree)
    new_uuid[0]["uuid"] = "ca0a5000-c000-4000-8000-0000000000a1"
    hero_twice = [*tree, {**components("cv02_front_page_card")[0],
                          "uuid": "ca0a5000-c000-4000-8000-0000000000c1"}]
    return [
        # Closed by canvas_tree: a second hero beside the old one.
        wrong(t, "old-hero-kept", page_with(hero_twice)),
        wrong(t, "button-not-changed", page_with(heading_only)),
        wrong(t, "subheading-dropped", page_with(no_subheading)),
        wrong(t, "card-lost", page_with(tree[:3])),
        wrong(t, "page-unpublished", [*reference(t), ["entity:update", "canvas_page", HOME,
                                                     "--values", '{"status": false}']]),
        right(t, "hero-replaced", page_with(new_uuid)),
    ]


def _move_paragraph() -> list[Build]:
    t = "nk02_move_paragraph_to_header"
    header_step, footer_step = reference(t)
    header = yaml.safe_load(header_step[3])
    reworded = copy.deepcopy(header)
    reworded[-1]["inputs"]["text"] = "Still stuck? Contact support."
    return [
        wrong(t, "copied-not-moved", [header_step]),
        wrong(t, "reworded", replace_step([header_step, footer_step], 0, flow(reworded))),
        wrong(t, "footer-disabled", [header_step, ["config:set", "canvas.page_region.olivero.footer",
                                                   "status", "false", "--input-format=yaml"]]),
        wrong(t, "menu-lost", replace_step([header_step, footer_step], 0,
                                           flow([header[0], header[-1]]))),
        # Placed before the branding, not after the menu: the header tree is ordered.
        wrong(t, "at-the-top", replace_step([header_step, footer_step], 0,
                                            flow([header[-1], *header[:-1]]))),
        wrong(t, "between-branding-and-menu", replace_step([header_step, footer_step], 0, flow(
            [header[0], header[-1], header[1]]))),
        right(t, "footer-first-then-header", [footer_step, header_step]),
        right(t, "new-uuid", replace_step([header_step, footer_step], 0, flow(
            [*header[:-1], {**header[-1], "uuid": "ca0a5000-c000-4000-8000-0000000000a2"}]))),
    ]


def _status_section() -> list[Build]:
    t = "nk03_add_status_section"
    tree = components(t)
    top_level_card = copy.deepcopy(tree)
    del top_level_card[-1]["parent_uuid"], top_level_card[-1]["slot"]
    renamed = copy.deepcopy(tree)
    renamed[-2]["inputs"]["title"] = "Status"
    wrong_section = copy.deepcopy(tree)
    wrong_section[-1] = {**wrong_section[-1], "parent_uuid": tree[1]["uuid"]}
    return [
        # Closed by canvas_tree: the card in the other section (a parent named by type passed).
        wrong(t, "card-in-popular-topics", page_with(wrong_section)),
        wrong(t, "card-at-top-level", page_with(top_level_card)),
        # The new section before Popular topics, not after it: the page tree is ordered.
        wrong(t, "section-before-popular-topics", page_with([tree[0], *tree[4:], *tree[1:4]])),
        wrong(t, "section-renamed", page_with(renamed)),
        wrong(t, "billing-card-lost", page_with([c for c in tree if c["uuid"] != tree[3]["uuid"]])),
        wrong(t, "no-body", page_with([*tree[:-1], {**tree[-1], "inputs": {
            k: v for k, v in tree[-1]["inputs"].items() if k != "body"}}])),
        right(t, "other-uuids", page_with([
            *tree[:4], {**tree[4], "uuid": "ca0a5000-c000-4000-8000-0000000000b1"},
            {**tree[5], "uuid": "ca0a5000-c000-4000-8000-0000000000b2",
             "parent_uuid": "ca0a5000-c000-4000-8000-0000000000b1"}])),
    ]


BUILDS = [*_release_notes(), *_by_category(), *_urgent(), *_by_product(), *_fix_maintenance(),
          *_fix_category(), *_update_notice(), *_unpublish(), *_create_notice(), *_faq(), *_site(),
          *_role(), *_vocabulary(), *_help_menu(),
          *_hero(), *_move_paragraph(), *_status_section()]


BedMaker = Callable[[Sequence[str], Path], Path]


def grade(bed: Path, task_id: str, capsys: pytest.CaptureFixture[str]) -> float:
    capsys.readouterr()
    assert grade_cli.main(["--approot", str(bed), task_id]) == 0, capsys.readouterr().err
    envelope = json.loads(capsys.readouterr().out)
    return float(envelope["evaluation_results"][0]["score_details"]["score"])


def build_and_grade(build: Build, provisioned_set: BedMaker, tmp_path: Path,
                    capsys: pytest.CaptureFixture[str]) -> float:
    bed = provisioned_set(SHIPPED.task(build.task).fixtures, tmp_path / "bed")
    for step in build.steps:
        capsys.readouterr()
        rc = site_cli.main(["--approot", str(bed), *step])
        assert rc == 0, (step[0], capsys.readouterr().err)
    return grade(bed, build.task, capsys)


@pytest.fixture(autouse=True)
def _no_results_store(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_NO_IMPORT", "1")


@pytest.mark.parametrize("build", BUILDS, ids=lambda b: b.id)
def test_the_grade_tells_the_build(build: Build, provisioned_set: BedMaker, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert build_and_grade(build, provisioned_set, tmp_path, capsys) == (1.0 if build.right else 0.0)


def test_every_new_task_has_two_wrong_builds_and_a_right_one() -> None:
    counts: dict[str, list[int]] = {}
    for build in BUILDS:
        counts.setdefault(build.task, [0, 0])[build.right] += 1
    shipped_first = {"dv01_view_build", "cv01_footer_heading", "cv02_front_page_card"}
    new = [t.id for t in SHIPPED.tasks if t.id not in shipped_first]
    assert {t: counts.get(t, [0, 0]) for t in new if counts.get(t, [0, 0])[0] < 2
            or counts.get(t, [0, 0])[1] < 1} == {}


def test_the_notices_fixture_exports_clean_after_provision(
        provisioned_set: BedMaker, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What a bed provisioned with kb_notices holds is what the fixture ships: --check is clean."""
    bed = provisioned_set(["kb_notices"], tmp_path / "bed")
    capsys.readouterr()
    rc = export_cli.main(["kb_notices", "--approot", str(bed), "--check"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    summary = json.loads(out)
    assert (summary["changed"], summary["removed"]) == ([], [])
    assert len(summary["content"]) == 18
