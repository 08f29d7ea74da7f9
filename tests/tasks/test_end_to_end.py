"""The loop a user runs, for every shipped task: reset, run an adapter, grade the recorded run.

The oracle (the task's reference solution) must score 1 and nop (the floor) must score 0, each
through the real commands: reset, run (a subprocess adapter), grade --run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.cli import grade as grade_cli
from ai_proving_ground.cli import reset as reset_cli
from ai_proving_ground.cli import run as run_cli
from ai_proving_ground.paths import project_dir
from ai_proving_ground.tasks.dataset import load_dataset

SHIPPED = load_dataset(project_dir("datasets") / "build_tasks.yml")


def attempt(capsys: pytest.CaptureFixture[str], bed: Path, task_id: str, agent: str,
            check_schemas: Callable[[Any], None]) -> dict[str, object]:
    """reset, run --agent, grade --run; returns the envelope printed on stdout."""
    approot = ["--approot", str(bed)]
    fixtures = SHIPPED.task(task_id).fixtures
    assert reset_cli.main([*approot, *fixtures]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert run_cli.main([*approot, task_id, f"--agent={agent}", "--json"]) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert grade_cli.main([*approot, task_id, f"--run={run_id}"]) == 0
    envelope: dict[str, object] = json.loads(capsys.readouterr().out)
    check_schemas(envelope)  # the project's schema and, when present, the official 0.2.2 one
    details = envelope["source_metadata"]["additional_details"]  # type: ignore[index]
    assert details["apg_run_id"] == run_id
    return envelope


def score(envelope: dict[str, object]) -> float:
    return float(envelope["evaluation_results"][0]["score_details"]["score"])  # type: ignore[index]


@pytest.mark.parametrize("task_id", [t.id for t in SHIPPED.tasks])
def test_oracle_scores_one_and_nop_scores_zero(
        task_id: str, provisioned_set: Callable[[Sequence[str], Path], Path], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        check_envelope_schemas: Callable[[Any], None]) -> None:
    monkeypatch.setenv("AI_PG_NO_IMPORT", "1")
    # A bed of the task's own fixture set, provisioned once per session for every task on it.
    bed = provisioned_set(SHIPPED.task(task_id).fixtures, tmp_path / "bed")
    check = check_envelope_schemas
    assert score(attempt(capsys, bed, task_id, "oracle", check)) == 1.0
    assert score(attempt(capsys, bed, task_id, "nop", check)) == 0.0
