"""A bench case: one view display executed through the driver over many nodes.

The view is the shape a grader checks: status and bundle filters, a filter on a field, a sort
on a field then on the title, and a pager. The bench reports the best of several wall times.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from ai_proving_ground.sites.base import EntityRecord, StateQuery, ViewQuery
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

VIEW_ID = "bench_listing"
BUNDLE = "bench_doc"


def _handler(table: str, field: str, plugin: str, **options: Any) -> dict[str, Any]:
    return {"id": field, "table": table, "field": field, "plugin_id": plugin, **options}


def bench_view() -> dict[str, Any]:
    """The view config the bench executes."""
    filters = {
        "status": _handler("node_field_data", "status", "boolean", operator="=", value="1"),
        "type": _handler("node_field_data", "type", "bundle", operator="in",
                         value={BUNDLE: BUNDLE}),
        "field_bench_rank_value": _handler("node__field_bench_rank", "field_bench_rank_value",
                                           "numeric", operator=">=", value={"value": "10"}),
    }
    sorts = {
        "field_bench_rank_value": _handler("node__field_bench_rank", "field_bench_rank_value",
                                           "standard", order="DESC"),
        "title": _handler("node_field_data", "title", "standard", order="ASC"),
    }
    options = {"filters": filters, "sorts": sorts,
               "pager": {"type": "some", "options": {"items_per_page": 10, "offset": 0}}}
    return {"id": VIEW_ID, "status": True, "base_table": "node_field_data", "base_field": "nid",
            "display": {"default": {"id": "default", "display_plugin": "default",
                                    "display_options": options}}}


def _populate(site: EmbeddedSite, nodes: int) -> None:
    site.install_modules(["node", "views"])
    with site.session() as store:
        site.config_save(store, f"node.type.{BUNDLE}", {"type": BUNDLE, "name": "Bench doc"})
        site.config_save(store, "field.storage.node.field_bench_rank", {
            "entity_type": "node", "field_name": "field_bench_rank", "type": "integer"})
        site.config_save(store, f"field.field.node.{BUNDLE}.field_bench_rank", {
            "entity_type": "node", "bundle": BUNDLE, "field_name": "field_bench_rank",
            "label": "Rank"})
        site.config_save(store, f"views.view.{VIEW_ID}", bench_view())
        for index in range(1, nodes + 1):
            # Direct inserts: the bench times the view, not validation of 10,000 creates.
            store.entity_insert(EntityRecord(
                "node", f"be0c0000-0000-4000-8000-{index:012d}", index, BUNDLE,
                f"Bench document {index}", True,
                {"field_bench_rank": [{"value": index % 97}]}, 1_700_000_000, 1_700_000_000))


def measure_view(nodes: int, repeat: int = 5) -> dict[str, Any]:
    """Best wall time of executing the bench view over ``nodes`` nodes, and what it returned."""
    with tempfile.TemporaryDirectory(prefix="apg-view-bench-") as tmp:
        site = EmbeddedSite.install(Path(tmp))
        _populate(site, nodes)
        query = StateQuery(views=(ViewQuery(VIEW_ID, "default"),))
        best = float("inf")
        rows = 0
        for _ in range(repeat):
            start = time.perf_counter()
            answer = site.read_state(query)
            best = min(best, time.perf_counter() - start)
            result = answer.views[0]
            if result.error:
                raise SystemExit(f"bench view failed: {result.error}")
            rows = len(result.rows)
        return {"nodes": nodes, "view_s": round(best, 4), "rows": rows}
