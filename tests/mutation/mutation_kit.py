"""Datasets for proving tasks: the shipped tasks with other checks, written beside the test."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.tasks.dataset import load_dataset

SHIPPED = PROJECT_ROOT / "datasets" / "build_tasks.yml"


def shipped_task(task_id: str) -> dict[str, Any]:
    return copy.deepcopy(load_dataset(SHIPPED).task(task_id).data)


# dv01's reference as these tests know it, so the mutant names they look for (a filter's id, a
# sort's) stay what they are when the shipped reference is rewritten; the prompt fixes the rest
# (the view kb_billing, its page_1 at kb/billing).
FILTERS = {
    "status": {"id": "status", "table": "node_field_data", "field": "status",
               "plugin_id": "boolean", "operator": "=", "value": "1"},
    "type": {"id": "type", "table": "node_field_data", "field": "type", "plugin_id": "bundle",
             "operator": "in", "value": {"kb_doc": "kb_doc"}},
    "field_kb_section_value": {"id": "field_kb_section_value", "table": "node__field_kb_section",
                               "field": "field_kb_section_value", "plugin_id": "list_field",
                               "operator": "or", "value": {"billing": "billing"}},
}
SORTS = {"field_kb_weight_value": {"id": "field_kb_weight_value", "table": "node__field_kb_weight",
                                   "field": "field_kb_weight_value", "order": "ASC"}}
DV01_VIEW = {
    "id": "kb_billing", "label": "Billing articles", "status": True, "base_table": "node_field_data",
    "display": {
        "default": {"display_plugin": "default", "id": "default", "display_options": {
            "filters": FILTERS, "sorts": SORTS, "pager": {"type": "none", "options": {"offset": 0}}}},
        "page_1": {"display_plugin": "page", "id": "page_1",
                   "display_options": {"path": "kb/billing"}}}}
# JSON is YAML; the cache rebuild gives the view its route, as the shipped reference's does.
DV01_REFERENCE = [["config:set", "views.view.kb_billing", "?", json.dumps(DV01_VIEW),
                   "--input-format=yaml"], ["cr"]]


def dv01() -> dict[str, Any]:
    """The shipped dv01 (prompt, fixtures, checks) with the reference these tests know."""
    task = shipped_task("dv01_view_build")
    task["reference_solution"] = {"steps": copy.deepcopy(DV01_REFERENCE)}
    return task


def write_dataset(path: Path, *tasks: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"dataset": "proving", "version": 1, "tasks": list(tasks)}),
                    encoding="utf-8")
    return path
