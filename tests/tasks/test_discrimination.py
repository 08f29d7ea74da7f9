"""The shipped tasks tell builds apart: each wrong build the issue lists (written from the prompts'
own words) is rejected, and each right build that differs from the reference still passes.

One case per build. Each is applied with ``apg site`` commands to a fresh bed (a copy of one
made with the task's fixtures and provisioned, so its baseline holds a config export) and graded
with the task's own checks, as ``apg grade`` grades it; the reference solution must score 1 and
doing nothing 0. Before provision the bed gains a view no fixture owns (``views.view.content``,
as Drupal's standard install has one): editing it, or adding any config object, is a change
``site_unchanged`` sees only by comparing the whole config with the baseline's export. It also
gains a content type and a vocabulary no fixture ships (``page``, ``tags``): a node or term in
them, or a file entity, is a change ``site_unchanged`` sees only by comparing every content type's
and bundle's count with the counts provision recorded.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.bed import init_bed
from ai_proving_ground.paths import project_dir
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.checks import run_checks
from ai_proving_ground.tasks.dataset import Task, load_dataset
from dv01_builds import VIEW_BUILDS, WITHOUT_CR, Change, built, reference_view

DATASET = load_dataset(project_dir("datasets") / "build_tasks.yml")
HOME = "ca0a5000-0000-4000-8000-000000000001"
FOOTER = "canvas.page_region.olivero.footer"
HEADER = "canvas.page_region.olivero.header"
ARTICLE = "6b0d0c00-0000-4000-8000-000000000002"  # accounts: no task touches it
Site = Callable[..., tuple[int, str, str]]
Build = Callable[[Site, Path], None]


def task(task_id: str) -> Task:
    return DATASET.task(task_id)


def run(site: Site, bed: Path, *args: str) -> None:
    rc, out, err = site(bed, *args)
    assert rc == 0, (args, out, err)


def reference(task_id: str) -> Build:
    def build(site: Site, bed: Path) -> None:
        for step in task(task_id).reference_steps:
            run(site, bed, *step)
    return build


def nothing(site: Site, bed: Path) -> None:
    return None


def then(*builds: Build) -> Build:
    def build(site: Site, bed: Path) -> None:
        for one in builds:
            one(site, bed)
    return build


def steps(*commands: list[str]) -> Build:
    def build(site: Site, bed: Path) -> None:
        for command in commands:
            run(site, bed, *command)
    return build


# ---------------------------------------------------------------------------- the bed

# A view no fixture owns, saved before provision: the baseline holds it, no fixture file does.
CONTENT_VIEW = {
    "id": "content", "label": "Content", "status": True, "base_table": "node_field_data",
    "display": {"default": {"id": "default", "display_plugin": "default", "display_options": {
        "sorts": {"changed": {"id": "changed", "table": "node_field_data", "field": "changed",
                              "order": "DESC"}}}},
        "page_1": {"id": "page_1", "display_plugin": "page",
                   "display_options": {"path": "admin/content/list"}}}}


# Bundles no fixture ships, defined before provision (Drupal's standard install has both).
PAGE_TYPE = {"langcode": "en", "status": True, "dependencies": {}, "name": "Basic page",
             "type": "page", "description": "", "help": None, "new_revision": True,
             "preview_mode": 1, "display_submitted": False}
TAGS = {"langcode": "en", "status": True, "dependencies": {}, "name": "Tags", "vid": "tags",
        "description": "", "weight": 0, "new_revision": False}


class Templates:
    """One bed a fixture set, made, given CONTENT_VIEW and provisioned; a test gets a copy."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.beds: dict[tuple[str, ...], Path] = {}

    def copy(self, fixtures: tuple[str, ...] | list[str], target: Path) -> Path:
        key = tuple(sorted(fixtures))
        if key not in self.beds:
            template = self.root / "-".join(key) / "bed"
            init_bed(template, list(key))
            driver = EmbeddedSite(template)
            with driver.session() as store:
                driver.config_save(store, "views.view.content", CONTENT_VIEW)
                driver.config_save(store, "node.type.page", PAGE_TYPE)
                driver.config_save(store, "taxonomy.vocabulary.tags", TAGS)
            provision(template, list(key), driver)
            self.beds[key] = template
        shutil.copytree(self.beds[key], target, symlinks=True)
        return target


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Templates:
    return Templates(tmp_path_factory.mktemp("discrimination"))


def unrelated_view_edited(site: Site, bed: Path) -> None:
    run(site, bed, "config:set", "views.view.content", "label", "All content")


def unrelated_config_added(site: Site, bed: Path) -> None:
    run(site, bed, "config:set", "user.role.reviewer", "?", json.dumps(
        {"id": "reviewer", "label": "Reviewer", "weight": 3, "is_admin": False,
         "permissions": ["access content"]}), "--input-format=yaml")


def anonymous_role_changed(site: Site, bed: Path) -> None:
    run(site, bed, "config:set", "user.role.anonymous", "permissions",
        json.dumps(["access content", "access site reports"]), "--input-format=yaml")


# Beyond the task, whichever it is: closed by site_unchanged comparing all config.
OUTSIDE = {"an unrelated view edited": unrelated_view_edited,
           "an unrelated config object created": unrelated_config_added,
           "a role no fixture owns changed": anonymous_role_changed}


# Content no fixture declares, whichever the task: closed by site_unchanged comparing every
# content type's and bundle's count with the baseline's (the embedded site has no user entity;
# tests/ddev/test_ddev_discrimination.py creates one through the DDEV driver).
CONTENT = {
    "a file entity created": steps(["entity:create", "file", "--values",
                                    '{"filename": "notes.txt", "uri": "public://notes.txt"}']),
    "a term in an unrelated vocabulary": steps(["entity:create", "taxonomy_term", "tags",
                                                "--values", '{"name": "Billing"}']),
    "a node of an unrelated bundle": steps(["entity:create", "node", "page", "--values",
                                            '{"title": "Billing help"}']),
}


def outside(task_id: str, content: bool = False) -> dict[str, Build]:
    changes = {**OUTSIDE, **(CONTENT if content else {})}
    return {name: then(reference(task_id), change) for name, change in changes.items()}


# ---------------------------------------------------------------------------- dv01

def views(parts: list[tuple[str, Change]], rebuild: bool = True) -> Build:
    """Each (view id, change) of a dv01 view build, saved as ``config:set`` saves it, then the
    cache rebuild that gives it its route (unless ``rebuild`` is off)."""
    def build(site: Site, bed: Path) -> None:
        for view_id, change in parts:
            run(site, bed, "config:set", f"views.view.{view_id}", "?",
                json.dumps(built(view_id, change)), "--input-format=yaml")
        if rebuild:
            run(site, bed, "cr")
    return build


def by_config_import(site: Site, bed: Path) -> None:
    run(site, bed, "config:export")
    sync = bed / "config" / "sync" / "views.view.kb_billing.yml"
    sync.write_text(yaml.safe_dump(reference_view()), encoding="utf-8")
    run(site, bed, "config:import")


def by_recipe(site: Site, bed: Path) -> None:
    recipe = bed / "recipes" / "kb_billing_view"
    (recipe / "config").mkdir(parents=True)
    (recipe / "recipe.yml").write_text("name: Billing view\ntype: Site\ninstall:\n  - views\n",
                                       encoding="utf-8")
    (recipe / "config" / "views.view.kb_billing.yml").write_text(
        yaml.safe_dump(reference_view()), encoding="utf-8")
    run(site, bed, "recipe", str(recipe))


DV01_WRONG: dict[str, Build] = {
    "nothing": nothing,
    **{name: views(parts, name not in WITHOUT_CR)
       for name, (parts, score) in VIEW_BUILDS.items() if score == 0},
    "an article retitled": then(reference("dv01_view_build"), steps(
        ["entity:update", "node", ARTICLE, "--values", '{"title": "Reset it"}'])),
    "the front page changed": then(reference("dv01_view_build"), steps(
        ["config:set", "system.site", "page.front", "/kb/billing"])),
    **outside("dv01_view_build", content=True),
}
DV01_RIGHT: dict[str, Build] = {
    "the reference solution": reference("dv01_view_build"),
    **{name: views(parts, name not in WITHOUT_CR)
       for name, (parts, score) in VIEW_BUILDS.items() if score == 1},
    "the view saved through config import": by_config_import,
    "the view saved through a recipe": by_recipe,
}


# ---------------------------------------------------------------------------- cv01

PARAGRAPH = {"uuid": "ca0a5000-c000-4000-8000-000000000007", "component_id": "sdc.apg.paragraph",
             "inputs": {"text": "Still stuck? Contact support and we will get back to you within "
                                "one working day."}}
HEADING = {"uuid": "ca0a5000-c000-4000-8000-0000000000f1", "component_id": "sdc.apg.heading",
           "inputs": {"text": "Need more help?", "level": "h2"}}


def footer(*items: dict[str, Any]) -> Build:
    return steps(["config:set", FOOTER, "component_tree", json.dumps(list(items)),
                  "--input-format=yaml"])


def header_plus(item: dict[str, Any]) -> Build:
    def build(site: Site, bed: Path) -> None:
        rc, out, _ = site(bed, "config:get", HEADER, "component_tree", "--format=json")
        assert rc == 0
        tree = json.loads(out)
        tree = tree.get(f"{HEADER}:component_tree", tree) if isinstance(tree, dict) else tree
        run(site, bed, "config:set", HEADER, "component_tree", json.dumps([*tree, item]),
            "--input-format=yaml")
    return build


UNPUBLISH_HOME = steps(["entity:update", "canvas_page", HOME, "--values", '{"status": false}'])
MOVE_HOME = steps(["entity:update", "canvas_page", HOME, "--values",
                   '{"path": [{"alias": "/start"}]}'])
DELETE_ARTICLE = steps(["entity:delete", "node", ARTICLE])
CV01_WRONG: dict[str, Build] = {
    "nothing": nothing,
    "the kept paragraph's text rewritten": footer(
        {**PARAGRAPH, "inputs": {"text": "Need help? Contact support."}}, HEADING),
    "the heading added twice": footer(PARAGRAPH, HEADING, {**HEADING, "uuid": "c-2"}),
    "an extra component": footer(PARAGRAPH, HEADING, {
        "uuid": "c-3", "component_id": "sdc.apg.paragraph", "inputs": {"text": "We reply fast."}}),
    "the paragraph replaced": footer(HEADING),
    "the heading at another level": footer(PARAGRAPH, {**HEADING, "inputs": {
        "text": "Need more help?", "level": "h3"}}),
    "the heading also in the header": then(reference("cv01_footer_heading"),
                                           header_plus({**HEADING, "uuid": "c-4"})),
    "the heading only in the header": header_plus(HEADING),
    "the footer region disabled": then(reference("cv01_footer_heading"), steps(
        ["config:set", FOOTER, "status", "false", "--input-format=yaml"])),
    "the front page unpublished": then(reference("cv01_footer_heading"), UNPUBLISH_HOME),
    "the front page moved off /home": then(reference("cv01_footer_heading"), MOVE_HOME),
    "an article deleted": then(reference("cv01_footer_heading"), DELETE_ARTICLE),
    **outside("cv01_footer_heading", content=True),
}
CV01_RIGHT: dict[str, Build] = {
    "the reference": reference("cv01_footer_heading"),
    "other UUIDs": footer({**PARAGRAPH, "uuid": "7b1e0000-0000-4000-8000-000000000001"},
                          {**HEADING, "uuid": "7b1e0000-0000-4000-8000-000000000002"}),
    "the heading first": footer(HEADING, PARAGRAPH),
    "a corrected first try": then(footer(HEADING), footer(PARAGRAPH, HEADING,
                                                          {**HEADING, "uuid": "c-9"}),
                                  reference("cv01_footer_heading")),
}


# ---------------------------------------------------------------------------- cv02

def home_components() -> list[dict[str, Any]]:
    step = task("cv02_front_page_card").reference_steps[0]
    components: list[dict[str, Any]] = json.loads(step[4])["components"]
    return components


def home(change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> Build:
    return lambda site, bed: run(site, bed, "entity:update", "canvas_page", HOME, "--values",
                                 json.dumps({"components": change(copy.deepcopy(home_components()))}))


NEW_CARD = "ca0a5000-c000-4000-8000-0000000000f2"


def edit_card(inputs: dict[str, Any]) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    def change(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for item in items:
            if item["uuid"] == NEW_CARD:
                item["inputs"] = inputs
        return items
    return change


def card_in_new_section(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    section = {"uuid": "c-s2", "component_id": "sdc.apg.section",
               "inputs": {"title": "Popular topics"}}
    for item in items:
        if item["uuid"] == NEW_CARD:
            item["parent_uuid"] = section["uuid"]
    return [*items, section]


def without(uuid: str) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    return lambda items: [i for i in items if i["uuid"] != uuid]


def renamed_section(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for item in items:
        if item["component_id"] == "sdc.apg.section":
            item["inputs"] = {"title": "Topics"}
    return items


def card_twice(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    card = next(i for i in items if i["uuid"] == NEW_CARD)
    return [*items, {**card, "uuid": "c-f3"}]


def card_first(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    card = next(i for i in items if i["uuid"] == NEW_CARD)
    return [card, *(i for i in items if i is not card)]


def other_uuid(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for item in items:
        if item["uuid"] == NEW_CARD:
            item["uuid"] = "7b1e0000-0000-4000-8000-00000000000c"
    return items


TROUBLE = {"title": "Troubleshooting", "body": "Fix sync errors and other common problems.",
           "url": "/kb/troubleshooting"}
CV02_WRONG: dict[str, Build] = {
    "nothing": nothing,
    "the card in a new section instead of the named one": home(card_in_new_section),
    "the card's body wrong": home(edit_card({**TROUBLE, "body": "Fix sync errors."})),
    "the card's body missing": home(edit_card({k: v for k, v in TROUBLE.items() if k != "body"})),
    "the card at the top level": home(lambda items: [
        {k: v for k, v in i.items() if i["uuid"] != NEW_CARD or k not in ("parent_uuid", "slot")}
        for i in items]),
    "an existing card removed": home(without("ca0a5000-c000-4000-8000-000000000004")),
    "the hero removed": home(without("ca0a5000-c000-4000-8000-000000000001")),
    "the section renamed": home(renamed_section),
    "the card added twice": home(card_twice),
    "the front page unpublished": then(reference("cv02_front_page_card"), UNPUBLISH_HOME),
    "the front page moved off /home": then(reference("cv02_front_page_card"), MOVE_HOME),
    "an article deleted": then(reference("cv02_front_page_card"), DELETE_ARTICLE),
    "the footer changed too": then(reference("cv02_front_page_card"), footer(HEADING)),
    **outside("cv02_front_page_card"),
}
CV02_RIGHT: dict[str, Build] = {
    "the reference": reference("cv02_front_page_card"),
    "other UUIDs": home(other_uuid),
    "the card first in its section": home(card_first),
    "a corrected first try": then(home(edit_card({**TROUBLE, "body": "x"})),
                                  reference("cv02_front_page_card")),
}


# ---------------------------------------------------------------------------- the table

def cases(task_id: str, builds: dict[str, Build], score: int) -> list[Any]:
    return [pytest.param(task_id, build, score, id=f"{task_id}: {name}")
            for name, build in builds.items()]


TABLE = [*cases("dv01_view_build", DV01_WRONG, 0), *cases("dv01_view_build", DV01_RIGHT, 1),
         *cases("cv01_footer_heading", CV01_WRONG, 0),
         *cases("cv01_footer_heading", CV01_RIGHT, 1),
         *cases("cv02_front_page_card", CV02_WRONG, 0),
         *cases("cv02_front_page_card", CV02_RIGHT, 1)]


def grade(bed: Path, task_id: str) -> tuple[int, list[str]]:
    """The task's score on ``bed`` (1 when every check passes) and the failed checks' messages."""
    graded = task(task_id)
    driver = EmbeddedSite(bed)
    results = run_checks(graded.checks, driver, bed, graded.fixtures)
    assert driver.round_trips == 1
    failed = [f"{r.id}: {r.message}" for r in results if not r.passed]
    return (0 if failed else 1), failed


@pytest.mark.parametrize(("task_id", "build", "score"), TABLE)
def test_build_is_graded_as_it_behaves(templates: Templates, tmp_path: Path, site: Site,
                                       task_id: str, build: Build, score: int) -> None:
    bed = templates.copy(task(task_id).fixtures, tmp_path / "bed")
    build(site, bed)
    got, failed = grade(bed, task_id)
    assert got == score, failed


@pytest.mark.parametrize("name", sorted(OUTSIDE))
def test_a_change_outside_the_fixtures_passes_a_baseline_without_an_export(
        templates: Templates, tmp_path: Path, site: Site, name: str) -> None:
    """What closed the hole: without the baseline's config export (a baseline captured before
    provision recorded one) only the fixtures' config is compared and these builds pass."""
    bed = templates.copy(task("dv01_view_build").fixtures, tmp_path / "bed")
    then(reference("dv01_view_build"), OUTSIDE[name])(site, bed)
    assert grade(bed, "dv01_view_build")[0] == 0
    for export in (bed / ".ai-proving-ground").glob("config.*.json"):
        export.unlink()
    assert grade(bed, "dv01_view_build") == (1, [])


@pytest.mark.parametrize("task_id", ["dv01_view_build", "cv01_footer_heading"])
@pytest.mark.parametrize("name", sorted(CONTENT))
def test_content_outside_the_fixtures_passes_a_baseline_without_counts(
        templates: Templates, tmp_path: Path, site: Site, task_id: str, name: str) -> None:
    """What closed the hole: without the baseline's recorded counts (a baseline captured before
    provision recorded them) only the fixtures' bundles are counted and these builds pass."""
    bed = templates.copy(task(task_id).fixtures, tmp_path / "bed")
    then(reference(task_id), CONTENT[name])(site, bed)
    assert grade(bed, task_id)[0] == 0
    (counts,) = (bed / ".ai-proving-ground").glob("counts.*.json")
    counts.unlink()
    assert grade(bed, task_id) == (1, [])


NEW_DOC = "0dd0c000-0000-4000-8000-0000000000a1"


@pytest.mark.parametrize(("allow", "score"), [([], 0), ([NEW_DOC], 1), ([ARTICLE], 1),
                                              (["node.kb_doc"], 0)])
def test_an_allowed_uuid_created_or_deleted_is_not_counted(
        templates: Templates, tmp_path: Path, site: Site, allow: list[str], score: int) -> None:
    """An entity the task's ``allow`` names by UUID is left out of the counts where it is now
    or was: one created with it passes, another bundle allowed does not excuse it."""
    bed = templates.copy(task("dv01_view_build").fixtures, tmp_path / "bed")
    create = steps(["entity:create", "node", "page", "--uuid", NEW_DOC, "--values",
                    '{"title": "Billing FAQ"}'])
    then(reference("dv01_view_build"), DELETE_ARTICLE if allow == [ARTICLE] else create)(site, bed)
    (unchanged,) = [c for c in task("dv01_view_build").checks if c["type"] == "site_unchanged"]
    check = {**unchanged, "allow": {**unchanged["allow"], "content": allow}}
    results = run_checks([check], EmbeddedSite(bed), bed, task("dv01_view_build").fixtures)
    assert (1 if results[0].passed else 0) == score, results[0].message
