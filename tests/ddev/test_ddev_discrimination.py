"""dv01 tells builds apart through the DDEV driver too: every wrong view build the issue lists
scores 0 and every right-but-different one 1 (the table in tests/dv01_builds.py, which the
embedded site's test applies as well), graded by the task's own checks in one probe round trip.

kb_docs is provisioned once into the stub's site model; each build starts from a copy of that
state (the database), is stored as ``drush config:set VIEW ? YAML`` stores it, its router rebuilt
as ``drush cr`` rebuilds it (but for the table's builds without a cr), and is graded with the
ddev driver. The stub executes a stored view with the embedded Views engine, which
tests/embedded/test_golden_views.py holds to what Drupal 10.3.7 returned; everything between the
grader and that answer (the request, probe.php's answer shapes, decoding) is the driver's own.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import stub_views
import yaml
from ddev_stub import Cli, Stub

from ai_proving_ground.cli import drush as drush_cli
from ai_proving_ground.cli import provision as provision_cli
from ai_proving_ground.paths import project_dir
from ai_proving_ground.sites.ddev import DdevSite
from ai_proving_ground.tasks.checks import run_checks
from ai_proving_ground.tasks.dataset import load_dataset
from dv01_builds import VIEW_BUILDS, WITHOUT_CR, Change, built

pytestmark = pytest.mark.skipif(shutil.which("php") is None, reason="php not found: apt-get install php-cli")

TASK = load_dataset(project_dir("datasets") / "build_tasks.yml").task("dv01_view_build")
ARTICLE = "6b0d0c00-0000-4000-8000-000000000002"
State = dict[str, Any]


def retitled(state: State) -> None:
    state["entities"][ARTICLE]["fields"]["title"] = [{"value": "Reset it"}]


def front_page_moved(state: State) -> None:
    state["config"]["system.site"]["page"]["front"] = "/kb/billing"


# A view no fixture owns, on the site before provision (Drupal's standard install has it).
CONTENT_VIEW = {"id": "content", "label": "Content", "status": True, "base_table": "node_field_data",
                "display": {"default": {"id": "default", "display_plugin": "default",
                                        "display_options": {}}}}


def unrelated_view_edited(state: State) -> None:
    state["config"]["views.view.content"]["label"] = "All content"


def unrelated_config_added(state: State) -> None:
    state["config"]["user.role.reviewer"] = {"id": "reviewer", "label": "Reviewer",
                                             "permissions": ["access content"]}


# Builds beyond the view: the reference, then a change elsewhere on the site. The last two are
# seen only by comparing the whole config with the baseline's export.
SITE_BUILDS: dict[str, tuple[Callable[[State], None], int]] = {
    "an article retitled": (retitled, 0),
    "the front page changed": (front_page_moved, 0),
    "an unrelated view edited": (unrelated_view_edited, 0),
    "an unrelated config object created": (unrelated_config_added, 0),
}


def _view_build(parts: list[tuple[str, Change]], rebuild: bool) -> Callable[[State], None]:
    """A dv01 view build's config:set steps on the stub's state, then its ``drush cr``."""
    def build(state: State) -> None:
        for view_id, change in parts:
            state["config"][f"views.view.{view_id}"] = built(view_id, change)
        if rebuild:
            stub_views.rebuild_router(state)
    return build


def grade(bed: Path) -> tuple[int, list[str], int]:
    driver = DdevSite(bed)
    results = run_checks(TASK.checks, driver, bed, TASK.fixtures)
    failed = [f"{r.id}: {r.message}" for r in results if not r.passed]
    return (0 if failed else 1), failed, driver.round_trips


def test_dv01_tells_builds_apart_through_the_ddev_driver(bed: Path, stub: Stub, cli: Cli,
                                                          tmp_path: Path) -> None:
    assert stub.site is not None
    before: State = json.loads(stub.site.read_text(encoding="utf-8"))
    before["config"]["views.view.content"] = CONTENT_VIEW
    stub.site.write_text(json.dumps(before), encoding="utf-8")
    rc, _out, err = cli(provision_cli.main, "--approot", str(bed), *TASK.fixtures)
    assert rc == 0, err
    assert stub.site is not None
    provisioned: State = json.loads(stub.site.read_text(encoding="utf-8"))
    assert "views" not in provisioned  # nothing is listed by hand: the stored view executes
    builds: dict[str, tuple[Callable[[State], None], int]] = {
        name: (_view_build(parts, name not in WITHOUT_CR), score)
        for name, (parts, score) in VIEW_BUILDS.items()}
    for name, (change, score) in SITE_BUILDS.items():
        builds[name] = (lambda state, change=change: [builds["the reference"][0](state),
                                                        change(state)], score)
    builds["nothing"] = (lambda state: None, 0)
    wrongly_graded = {}
    for index, (name, (build, score)) in enumerate(builds.items()):
        state = copy.deepcopy(provisioned)
        build(state)
        site = tmp_path / f"state-{index}.json"
        site.write_text(json.dumps(state), encoding="utf-8")
        stub.use_site(site)
        got, failed, round_trips = grade(bed)
        assert round_trips == 1, name
        if got != score:
            wrongly_graded[name] = failed
    assert wrongly_graded == {}
    assert len(builds) == len(VIEW_BUILDS) + len(SITE_BUILDS) + 1


# ---------------------------------------------------------------------------- other tasks

SHIPPED = load_dataset(project_dir("datasets") / "build_tasks.yml")
Steps = list[list[str]]


def _reference(task_id: str) -> Steps:
    return [list(step) for step in SHIPPED.task(task_id).reference_steps]


def _flow(data: Any) -> str:
    return yaml.safe_dump(data, default_flow_style=True, sort_keys=False, width=10**6).strip()


def _header_steps(order: Callable[[list[Any]], list[Any]]) -> Steps:
    header_step, footer_step = _reference("nk02_move_paragraph_to_header")
    header = yaml.safe_load(header_step[3])
    return [[*header_step[:3], _flow(order(header)), *header_step[4:]], footer_step]


def _page_steps(task_id: str, order: Callable[[list[Any]], list[Any]]) -> Steps:
    (step,) = _reference(task_id)
    values = json.loads(step[4])
    return [[*step[:4], json.dumps({**values, "components": order(values["components"])})]]


def _role_steps(permissions: list[str]) -> Steps:
    (step,) = _reference("ng02_notice_editor_role")
    role = yaml.safe_load(step[3])
    return [[*step[:3], _flow({**role, "permissions": permissions}), *step[4:]]]


def _view_steps(task_id: str, change: Callable[[dict[str, Any]], None]) -> Steps:
    step, *rest = _reference(task_id)  # the view's config:set, then the reference's cr
    view = yaml.safe_load(step[3])
    change(view)
    return [[*step[:3], _flow(view), *step[4:]], *rest]


def _master(view: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = view["display"]["default"]["display_options"]
    return options


def _product_filter(**changes: Any) -> Callable[[dict[str, Any]], None]:
    return lambda view: _master(view)["filters"]["field_notice_products_value"].update(changes)


def _filters_on_the_page(view: dict[str, Any]) -> None:
    page = view["display"]["page_1"]["display_options"]
    page["defaults"] = {"filters": False}
    page["filters"] = _master(view).pop("filters")


def _products(*products: str) -> Steps:
    return [["entity:update", "node", "7e0a1c00-0000-4000-8000-000000000005", "--values",
             json.dumps({"field_notice_priority": 5, "field_notice_products": list(products)})]]


def _menu_steps(**changes: dict[str, Any]) -> Steps:
    """ng04's reference with the values of some links changed (by link title)."""
    steps = _reference("ng04_help_menu")
    for step in steps[1:]:
        values = json.loads(step[-1])
        step[-1] = json.dumps({**values, **changes.get(values["title"], {})})
    return steps


NOTICES_LINK = "menu_link_content:4d3e0000-0000-4000-8000-000000000101"

# (task, build, steps, score): the builds tests/tasks/test_dataset_tasks.py grades on the
# embedded site whose checks read order or sets, applied here with drush through the stub.
TASK_BUILDS: list[tuple[str, str, Steps, int]] = [
    ("nk02_move_paragraph_to_header", "reference", _reference("nk02_move_paragraph_to_header"), 1),
    ("nk02_move_paragraph_to_header", "paragraph at the top",
     _header_steps(lambda h: [h[-1], *h[:-1]]), 0),
    ("nk03_add_status_section", "new section before Popular topics",
     _page_steps("nk03_add_status_section", lambda c: [c[0], *c[4:], *c[1:4]]), 0),
    ("nv04_exposed_product_filter", "filter inverted",
     _view_steps("nv04_exposed_product_filter", _product_filter(operator="not")), 0),
    ("nv04_exposed_product_filter", "filters on the page display",
     _view_steps("nv04_exposed_product_filter", _filters_on_the_page), 1),
    ("nv01_release_notes_pager", "no pager links", _view_steps(
        "nv01_release_notes_pager", lambda v: _master(v)["pager"].update(type="some")), 0),
    ("nv01_release_notes_pager", "mini pager", _view_steps(
        "nv01_release_notes_pager", lambda v: _master(v)["pager"].update(type="mini")), 1),
    ("nc01_update_notice", "products in another order", _products("dashboard", "api", "mobile"), 1),
    ("nc01_update_notice", "products replaced", _products("dashboard"), 0),
    ("ng02_notice_editor_role", "permissions unsorted", _role_steps(
        ["edit any kb_notice content", "create kb_notice content", "access content overview"]), 1),
    ("ng04_help_menu", "reference", _menu_steps(), 1),
    ("ng04_help_menu", "children swapped", _menu_steps(**{"Database upgrade": {"weight": 2}}), 0),
    ("ng04_help_menu", "not nested", _menu_steps(**{"Backup window": {"parent": ""}}), 0),
    ("ng04_help_menu", "retargeted", _menu_steps(**{"Backup window": {"link": "entity:node/5"}}), 0),
    ("ng04_help_menu", "home disabled", _menu_steps(Home={"enabled": False}), 0),
    ("ng04_help_menu", "internal paths, other weights", _menu_steps(
        Home={"link": "internal:/", "weight": 30}, Notices={"weight": -10},
        **{"Database upgrade": {"link": "internal:/node/1", "weight": -5, "parent": NOTICES_LINK},
           "Backup window": {"link": "internal:/node/14", "weight": 5}}), 1),
    ("ng04_help_menu", "a Support link disabled", [*_menu_steps(), [
        "entity:update", "menu_link_content", "4d3e0000-0000-4000-8000-000000000001", "--values",
        '{"enabled": false}']], 0),
    ("ng02_notice_editor_role", "may delete too", _role_steps(
        ["access content overview", "create kb_notice content", "delete any kb_notice content",
         "edit any kb_notice content"]), 0),
]


@pytest.mark.parametrize(("task_id", "name", "steps", "score"), TASK_BUILDS,
                         ids=[f"{t}:{n}" for t, n, _s, _score in TASK_BUILDS])
def test_shipped_tasks_tell_builds_apart_through_the_ddev_driver(
        bed: Path, stub: Stub, cli: Cli, task_id: str, name: str, steps: Steps, score: int) -> None:
    task = SHIPPED.task(task_id)
    rc, _out, err = cli(provision_cli.main, "--approot", str(bed), *task.fixtures)
    assert rc == 0, err
    for step in steps:
        rc, _out, err = cli(drush_cli.main, "--approot", str(bed), *step)
        assert rc == 0, (step[0], err)
    driver = DdevSite(bed)
    results = run_checks(task.checks, driver, bed, task.fixtures)
    failed = [f"{r.id}: {r.message}" for r in results if not r.passed]
    assert ((0 if failed else 1), driver.round_trips) == (score, 1), failed


# ---------------------------------------------------------------------------- content outside

# Bundles no fixture ships, on the site before provision (Drupal's standard install has both).
BUNDLES = {"node.type.page": {"type": "page", "name": "Basic page"},
           "taxonomy.vocabulary.tags": {"vid": "tags", "name": "Tags"}}


def _added(entity_type: str, bundle: str, label: dict[str, Any]) -> Callable[[State], None]:
    """An entity the task never asks for, stored as the probe's entity_create stores one."""
    def build(state: State) -> None:
        uuid = f"0dd0c000-0000-4000-8000-{len(state['entities']) + 1:012d}"
        state["next_id"] = state.get("next_id", 0) + 1
        state["entities"][uuid] = {"entity_type": entity_type, "uuid": uuid,
                                   "id": state["next_id"], "bundle": bundle, "fields": label}
    return build


# Seen only by comparing every content type's and bundle's count with the recorded counts.
CONTENT_BUILDS = {
    "a new user created": _added("user", "user", {"name": [{"value": "eve"}]}),
    "a term in an unrelated vocabulary": _added("taxonomy_term", "tags",
                                                {"name": [{"value": "Billing"}]}),
    "a node of an unrelated bundle": _added("node", "page", {"title": [{"value": "Billing help"}]}),
}


@pytest.mark.parametrize("task_id", ["dv01_view_build", "cv01_footer_heading"])
def test_content_outside_the_task_is_a_change_through_the_ddev_driver(
        bed: Path, stub: Stub, cli: Cli, tmp_path: Path, task_id: str) -> None:
    task = SHIPPED.task(task_id)
    assert stub.site is not None
    before: State = json.loads(stub.site.read_text(encoding="utf-8"))
    before["config"].update(BUNDLES)
    stub.site.write_text(json.dumps(before), encoding="utf-8")
    rc, _out, err = cli(provision_cli.main, "--approot", str(bed), *task.fixtures)
    assert rc == 0, err
    for step in _reference(task_id):
        rc, _out, err = cli(drush_cli.main, "--approot", str(bed), *step)
        assert rc == 0, (step[0], err)
    built_state: State = json.loads(stub.site.read_text(encoding="utf-8"))
    graded = {}
    for index, (name, build) in enumerate({"the reference": lambda state: None,
                                           **CONTENT_BUILDS}.items()):
        state = copy.deepcopy(built_state)
        build(state)
        site = tmp_path / f"content-{index}.json"
        site.write_text(json.dumps(state), encoding="utf-8")
        stub.use_site(site)
        driver = DdevSite(bed)
        results = run_checks(task.checks, driver, bed, task.fixtures)
        failed = [r.id for r in results if not r.passed]
        graded[name] = ((0 if failed else 1), failed, driver.round_trips)
    assert graded == {"the reference": (1, [], 1),
                      **{name: (0, ["rest-unchanged"], 1) for name in CONTENT_BUILDS}}
