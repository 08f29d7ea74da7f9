"""The dataset validator warns when a view_rows check's expected order rests on a sort tie."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ai_proving_ground.tasks.dataset import load_dataset
from ai_proving_ground.yamldump import dumps

BILLING = ["6b0d0c00-0000-4000-8000-000000000003", "6b0d0c00-0000-4000-8000-000000000007",
           "6b0d0c00-0000-4000-8000-000000000011"]


def billing_view(sorts: dict[str, Any]) -> str:
    section = {"table": "node__field_kb_section", "field": "field_kb_section_value",
               "plugin_id": "list_field", "operator": "or", "value": {"billing": "billing"}}
    return json.dumps({"id": "kb_billing", "status": True, "base_table": "node_field_data",
                       "display": {"default": {"id": "default", "display_plugin": "default",
                                               "display_options": {
                                                   "filters": {"s": section}, "sorts": sorts,
                                                   "pager": {"type": "none"}}}}})


def dataset(tmp_path: Path, sorts: dict[str, Any], rows: list[Any] = BILLING) -> Path:
    task = {"id": "t1", "prompt": "Build the billing view.", "fixtures": ["kb_docs"],
            "checks": [{"id": "rows", "type": "view_rows", "view": "kb_billing", "rows": rows}],
            "reference_solution": {"steps": [["config:set", "views.view.kb_billing", "?",
                                              billing_view(sorts), "--input-format=json"]]}}
    path = tmp_path / "d.yml"
    path.write_text(dumps({"dataset": "d", "version": 1, "tasks": [task]}))
    return path


def sort(field: str, table: str = "node_field_data") -> dict[str, Any]:
    return {"table": table, "field": field, "plugin_id": "standard", "order": "ASC"}


def test_an_order_resting_on_a_tie_is_warned(tmp_path: Path) -> None:
    # All three billing articles share their section: sorting by it alone decides nothing.
    tied = {"s": sort("field_kb_section_value", "node__field_kb_section")}
    warnings = load_dataset(dataset(tmp_path, tied)).warnings
    assert len(warnings) == 1
    assert "task t1 check rows" in warnings[0] and "rests on a sort tie" in warnings[0]


def test_tied_rows_the_task_lists_as_a_group_are_not_warned(tmp_path: Path) -> None:
    tied = {"s": sort("field_kb_section_value", "node__field_kb_section")}
    assert load_dataset(dataset(tmp_path, tied, [BILLING])).warnings == ()
    # Two groups inside one tie still claim an order between them.
    assert len(load_dataset(dataset(tmp_path, tied, [BILLING[0], BILLING[1:]])).warnings) == 1


def test_a_sort_that_decides_the_order_is_not_warned(tmp_path: Path) -> None:
    decided = {"s": sort("field_kb_section_value", "node__field_kb_section"), "n": sort("nid")}
    assert load_dataset(dataset(tmp_path, decided)).warnings == ()


def test_the_shipped_dataset_has_no_tied_order() -> None:
    shipped = Path(__file__).parents[2] / "datasets" / "build_tasks.yml"
    assert load_dataset(shipped).warnings == ()
