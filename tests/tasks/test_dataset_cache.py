"""A dataset is parsed once per path and exact bytes (a campaign loads it for every run and
grade): a reload gives what parsing the file now would give, never an older parse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.tasks.dataset import load_dataset

TASK = {"id": "c01", "prompt": "Do it.", "fixtures": [],
        "checks": [{"type": "module_enabled", "module": "node"}]}


def write(path: Path, tasks: list[dict[str, object]]) -> Path:
    lines = ["dataset: unit", "version: 1", "tasks:", *(f"- {json.dumps(t)}" for t in tasks)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_same_bytes_are_parsed_once(tmp_path: Path) -> None:
    path = write(tmp_path / "tasks.yml", [TASK])
    first = load_dataset(path)
    assert load_dataset(path) is first


def test_changed_bytes_are_parsed_again(tmp_path: Path) -> None:
    path = write(tmp_path / "tasks.yml", [TASK])
    first = load_dataset(path)
    write(path, [{**TASK, "prompt": "Do it otherwise."}])
    again = load_dataset(path)
    assert again.task("c01").prompt == "Do it otherwise." and again.sha256 != first.sha256
    write(path, [TASK, TASK])  # a repeated id: refused now, though the old bytes parsed
    with pytest.raises(ApgError, match="repeats tasks"):
        load_dataset(path)


def test_a_hidden_patch_is_looked_for_at_every_load(tmp_path: Path) -> None:
    """Whether the patch exists is the file system's fact now, not the dataset bytes'."""
    patch = tmp_path / "hv.patch"
    patch.write_text("", encoding="utf-8")
    path = write(tmp_path / "tasks.yml",
                 [{**TASK, "hidden_verifier": {"patch": "hv.patch", "commands": ["true"]}}])
    load_dataset(path)
    patch.unlink()
    with pytest.raises(ApgError, match="is not a file") as caught:
        load_dataset(path)
    assert caught.value.token == "APG_DATASET_INVALID"
