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


def write_dataset(path: Path, *tasks: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"dataset": "proving", "version": 1, "tasks": list(tasks)}),
                    encoding="utf-8")
    return path
