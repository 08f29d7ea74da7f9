"""The results listing over many stored envelopes: the first listing (which builds the index),
then warm listings, plain and filtered, beside parsing every file as the store once did."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from ai_proving_ground.bed import init_bed
from ai_proving_ground.results.index import Filters, list_rows, row_of
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.grade import GradeRequest, grade
from ai_proving_ground.tasks.results import result_path, results_dir

# A listing or filter of 10,000 stored results must take under this (warm index).
LISTING_GOAL_S = 0.3


def _envelope(index: int, template: dict[str, Any]) -> dict[str, Any]:
    envelope: dict[str, Any] = json.loads(json.dumps(template))
    envelope["evaluation_id"] = f"bench/t{index % 20:02d}/dev/m{index % 3}/{index}"
    envelope["retrieved_timestamp"] = f"{1_700_000_000 + index}.0"
    envelope["evaluation_results"][0]["source_data"]["additional_details"]["task_id"] = (
        f"t{index % 20:02d}")
    envelope["model_info"]["id"] = f"dev/m{index % 3}"
    return envelope


def measure_results(count: int, workdir: Path, repeat: int = 3) -> dict[str, Any]:
    """``count`` copies of one real envelope (dv01 graded on a fresh bed), each its own id."""
    approot = workdir / "results-bed"
    init_bed(approot, ["kb_docs"])
    template = grade(GradeRequest(approot=approot, task_id="dv01_view_build",
                                  settings=Settings()), EmbeddedSite(approot))
    directory = results_dir(approot)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        envelope = _envelope(index, template)
        path = result_path(approot, envelope["evaluation_id"])
        path.write_text(json.dumps(envelope, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        paths.append(path)
    start = time.perf_counter()
    rows = list_rows(directory)
    first_s = time.perf_counter() - start
    if len(rows) != count or any(row.error for row in rows):
        raise SystemExit(f"bench results: listed {len(rows)} of {count}, or some unreadable")
    warm_s = min(_time(lambda: list_rows(directory)) for _ in range(repeat))
    filtered_s = min(_time(lambda: list_rows(directory, Filters(task="t0*", model="dev/m1")))
                     for _ in range(repeat))
    start = time.perf_counter()
    for path in paths:  # what every listing cost before the index
        row_of(path)
    parse_all_s = time.perf_counter() - start
    return {"results": count, "first_listing_s": round(first_s, 4),
            "listing_s": round(warm_s, 4), "filtered_s": round(filtered_s, 4),
            "parse_every_file_s": round(parse_all_s, 4), "listing_goal_s": LISTING_GOAL_S}


def _time(action: Any) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start
