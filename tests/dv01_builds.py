"""dv01's view builds, wrong and right, as changes to the reference solution's view config: one
table that both drivers' discrimination tests apply (tests/tasks/test_discrimination.py on the
embedded site, tests/ddev/test_ddev_discrimination.py through the DDEV driver and its stub).

Each build is its views written with ``config:set`` and then, as the reference does, ``drush cr``:
on Drupal a view written so has no route until the router is rebuilt. The builds in
``WITHOUT_CR`` stop before the ``cr``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from ai_proving_ground.paths import project_dir
from ai_proving_ground.tasks.dataset import load_dataset

Change = Callable[[dict[str, Any]], None]
# name -> ([(view id, change to the reference view)], the score the build must get)
ViewBuild = tuple[list[tuple[str, Change]], int]


def reference_view() -> dict[str, Any]:
    """The kb_billing view the shipped reference solution sets."""
    task = load_dataset(project_dir("datasets") / "build_tasks.yml").task("dv01_view_build")
    view: dict[str, Any] = yaml.safe_load(task.reference_steps[0][3])
    return view


def built(view_id: str, change: Change) -> dict[str, Any]:
    data = reference_view()
    data["id"] = view_id
    change(data)
    return data


def master(data: dict[str, Any]) -> dict[str, Any]:
    options: dict[str, Any] = data["display"]["default"]["display_options"]
    return options


def same(data: dict[str, Any]) -> None:
    return None


def set_sorts(sorts: dict[str, Any]) -> Change:
    return lambda data: master(data).__setitem__("sorts", sorts)


def drop_filter(name: str) -> Change:
    return lambda data: master(data)["filters"].pop(name)


def set_pager(pager: dict[str, Any] | None) -> Change:
    def change(data: dict[str, Any]) -> None:
        if pager is None:
            master(data).pop("pager")
        else:
            master(data)["pager"] = pager
    return change


def page_option(key: str, value: Any) -> Change:
    return lambda data: data["display"]["page_1"]["display_options"].__setitem__(key, value)


def filters_on_the_page(data: dict[str, Any]) -> None:
    page = data["display"]["page_1"]["display_options"]
    page["defaults"] = {"filters": False, "filter_groups": False}
    page["filters"] = master(data).pop("filters")
    master(data)["filters"] = {}


def tie_break(data: dict[str, Any]) -> None:
    master(data)["sorts"]["nid"] = {"id": "nid", "table": "node_field_data", "field": "nid",
                                    "order": "ASC"}


def sort(table: str, field: str, order: str = "ASC") -> Change:
    return set_sorts({field: {"id": field, "table": table, "field": field, "order": order}})


VIEW_BUILDS: dict[str, ViewBuild] = {
    "no sort": ([("kb_billing", set_sorts({}))], 0),
    "sorted by creation date": ([("kb_billing", sort("node_field_data", "created"))], 0),
    "sorted by creation date, newest first": (
        [("kb_billing", sort("node_field_data", "created", "DESC"))], 0),
    "sorted on a missing field": (
        [("kb_billing", sort("node__field_kb_order", "field_kb_order_value"))], 0),
    "heaviest first": (
        [("kb_billing", sort("node__field_kb_weight", "field_kb_weight_value", "DESC"))], 0),
    "sorted by title": ([("kb_billing", sort("node_field_data", "title"))], 0),
    "no published filter": ([("kb_billing", drop_filter("status"))], 0),
    "no content-type filter": ([("kb_billing", drop_filter("type"))], 0),
    "no section filter": ([("kb_billing", drop_filter("field_kb_section_value"))], 0),
    "Drupal's default 10-item pager": ([("kb_billing", set_pager(
        {"type": "mini", "options": {"items_per_page": 10, "offset": 0}}))], 0),
    "no pager option (Views' default)": ([("kb_billing", set_pager(None))], 0),
    "an offset": ([("kb_billing", set_pager({"type": "none", "options": {"offset": 1}}))], 0),
    "the page display disabled": ([("kb_billing", page_option("enabled", False))], 0),
    "the view disabled": ([("kb_billing", lambda data: data.__setitem__("status", False))], 0),
    "another path": ([("kb_billing", page_option("path", "billing"))], 0),
    "a second view on the same path": ([("kb_billing", same), ("kb_billing_copy", same)], 0),
    "the reference": ([("kb_billing", same)], 1),
    "filters overridden on the page display": ([("kb_billing", filters_on_the_page)], 1),
    "a tie-break sort": ([("kb_billing", tie_break)], 1),
    "another pager that still shows everything": ([("kb_billing", set_pager(
        {"type": "some", "options": {"items_per_page": 50, "offset": 0}}))], 1),
    "a full pager of 0 items (all)": ([("kb_billing", set_pager(
        {"type": "full", "options": {"items_per_page": 0, "offset": 0}}))], 1),
    "another uuid": ([("kb_billing", lambda data: data.__setitem__(
        "uuid", "0f0f0f0f-0000-4000-8000-000000000001"))], 1),
    "a corrected first try": ([("kb_billing", set_sorts({})), ("kb_billing", drop_filter("status")),
                               ("kb_billing", same)], 1),
    "a path with a leading slash": ([("kb_billing", page_option("path", "/kb/billing"))], 1),
    # The view an agent that forgets the cache rebuild leaves: right config, no route, /kb/billing
    # a 404 (on Drupal 10.3.7: every build's as_stored phase in tests/ddev/real_dv01/).
    "the right view, no cr": ([("kb_billing", same)], 0),
}
# The builds that end at their config:set, with no cache rebuild after it.
WITHOUT_CR = frozenset({"the right view, no cr"})
