"""``apg grade --run`` grades only what happened, against the task that ran, hidden verifier
included; ``apg run`` refuses a second run in flight and numbers that make no sense."""

from __future__ import annotations

import json
import shlex
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.baselines.store import baseline_dir
from ai_proving_ground.errors import ApgError
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.tasks.dataset import load_dataset
from ai_proving_ground.tasks.run_record import read_run

DV01 = "dv01_view_build"
RUN_ID = "apg-run-20260718T101500Z-a1b2c3"  # what write_run_record writes by default


def stored(bed: Path) -> list[Path]:
    """Everything grade could have stored: the run's grade.json and the results store."""
    base = baseline_dir(bed)
    return sorted(base.glob("runs/*/grade.json")) + sorted(base.glob("results/*"))


@pytest.mark.parametrize("status", ["no_attempt", "timed_out", "refused", "interrupted"])
def test_a_run_that_recorded_no_attempt_is_refused_and_nothing_is_stored(
        apg: Any, fixtures_bed: Path, status: str, write_run_record: Any) -> None:
    write_run_record(fixtures_bed, status=status, adapter_exit_code=127, attempted=False)
    result = apg("grade", "--approot", str(fixtures_bed), DV01, f"--run={RUN_ID}")
    assert result.rc == 1 and result.out == ""
    assert result.err.startswith(f"APG_GRADE_RUN_INVALID run {RUN_ID} recorded no attempt "
                                 f"(status '{status}', adapter exit 127)")
    assert "--force" in result.err and "Traceback" not in result.err
    assert stored(fixtures_bed) == []


def test_force_grades_it_and_the_envelope_says_what_the_run_was(
        apg: Any, fixtures_bed: Path, write_run_record: Any) -> None:
    write_run_record(fixtures_bed, status="timed_out", adapter_exit_code=-15, attempted=False,
              timeout_s=0.5)
    result = apg("grade", "--approot", str(fixtures_bed), DV01, f"--run={RUN_ID}", "--force")
    assert result.rc == 0, result.err
    details = json.loads(result.out)["source_metadata"]["additional_details"]
    assert {k: details[k] for k in details if k.startswith("apg_run_")} == {
        "apg_run_id": RUN_ID, "apg_run_status": "timed_out",
        "apg_run_started_at": "2026-07-18T10:15:00.000Z",
        "apg_run_finished_at": "2026-07-18T10:20:00.000Z", "apg_run_timeout_s": "0.5",
        "apg_run_adapter_exit_code": "-15"}


def test_a_run_of_another_version_of_the_task_is_refused(apg: Any, fixtures_bed: Path,
                                                         tmp_path: Path,
                                                         write_run_record: Any) -> None:
    data = json.loads(json.dumps(load_dataset(PROJECT_ROOT / "datasets" / "build_tasks.yml")
                                 .task(DV01).data))
    data["prompt"] += " Also, be quick."  # same id, another task
    dataset = tmp_path / "changed.yml"
    dataset.write_text(json.dumps({"dataset": "build_tasks", "version": 1, "tasks": [data]}))
    write_run_record(fixtures_bed)
    args = ["grade", "--approot", str(fixtures_bed), DV01, "--dataset", str(dataset),
            f"--run={RUN_ID}"]
    result = apg(*args)
    assert result.rc == 1 and result.err.startswith("APG_GRADE_RUN_INVALID")
    recorded = load_dataset(PROJECT_ROOT / "datasets" / "build_tasks.yml").task(DV01).sha256
    changed = load_dataset(dataset).task(DV01).sha256
    assert recorded in result.err and changed in result.err and recorded != changed
    assert stored(fixtures_bed) == []
    assert apg(*args, "--force").rc == 0


def hidden_dataset(directory: Path, exit_code: int) -> Path:
    """dv01 with a hidden verifier command that exits ``exit_code``."""
    task = json.loads(json.dumps(load_dataset(PROJECT_ROOT / "datasets" / "build_tasks.yml")
                                 .task(DV01).data))
    task["checks"] = [{"type": "module_enabled", "module": "node"}]  # passes on the bed
    # The design's form: a command string, split as shell words (the interpreter's path may
    # hold spaces, so it is quoted); the patch adds one file the snapshot removes again.
    command = shlex.join([sys.executable, "-c", f"raise SystemExit({exit_code})"])
    task["hidden_verifier"] = {"patch": "probe.patch", "commands": [command]}
    (directory / "probe.patch").write_text(
        "diff --git a/hidden-probe.txt b/hidden-probe.txt\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/hidden-probe.txt\n@@ -0,0 +1 @@\n+probe\n", encoding="utf-8")
    path = directory / "hidden.yml"
    path.write_text(json.dumps({"dataset": "hidden_grade", "version": 1, "tasks": [task]}))
    return path


@pytest.mark.parametrize(("exit_code", "verdict", "score"), [(0, "pass", 1.0), (1, "fail", 0.0)])
def test_grade_applies_the_hidden_verifier_by_default(apg: Any, fixtures_bed: Path, tmp_path: Path,
                                                      exit_code: int, verdict: str,
                                                      score: float) -> None:
    dataset = hidden_dataset(tmp_path, exit_code)
    result = apg("grade", "--approot", str(fixtures_bed), DV01, "--dataset", str(dataset))
    assert result.rc == 0, result.err
    details = json.loads(result.out)["evaluation_results"][0]["score_details"]
    assert (details["score"], details["details"]["verdict"]) == (score, verdict)
    assert details["details"]["hidden_verifier"] == verdict
    assert details["details"]["checks_passed"] == "1/1"  # the public checks, apart
    skipped = apg("grade", "--approot", str(fixtures_bed), DV01, "--dataset", str(dataset),
                  "--no-hidden")
    assert json.loads(skipped.out)["evaluation_results"][0]["score_details"]["score"] == 1.0


# ---------------------------------------------------------------------------- apg run guards


def test_a_second_apg_run_on_a_busy_bed_refuses(apg: Any, fixtures_bed: Path) -> None:
    agents = fixtures_bed / ".ddev" / "agents"
    agents.mkdir(parents=True)
    gate = fixtures_bed / "gate"  # inside the bed: the adapter's sandbox sees nothing else
    (agents / "waits").write_text(f"#!/bin/sh\n## Credentials: none\ntouch {gate}.started\n"
                                  f"while [ ! -e {gate} ]; do sleep 0.05; done\n")
    (agents / "waits").chmod(0o755)
    first: list[Any] = []
    runner = threading.Thread(target=lambda: first.append(
        apg("run", "--approot", str(fixtures_bed), DV01, "--agent", "waits")))
    runner.start()
    try:
        deadline = time.monotonic() + 60
        while not Path(f"{gate}.started").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        second = apg("run", "--approot", str(fixtures_bed), DV01, "--agent", "nop")
    finally:
        gate.touch()
        runner.join()
    assert second.rc == 1 and second.err.startswith("APG_RUN_BUSY another apg run is in flight")
    assert len(list((baseline_dir(fixtures_bed) / "runs").iterdir())) == 1  # only the first
    assert first[0].rc == 0


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-1", "soon"])
def test_run_timeout_must_be_a_finite_positive_number(apg: Any, fixtures_bed: Path,
                                                      value: str) -> None:
    result = apg("run", "--approot", str(fixtures_bed), DV01, f"--timeout={value}")
    assert result.rc == 2 and "APG_USAGE" in result.err and "--timeout" in result.err


@pytest.mark.parametrize("value", ["0", "-2", "nan", "1.5"])
def test_campaign_jobs_must_be_a_whole_number_of_one_or_more(apg: Any, value: str) -> None:
    spec = PROJECT_ROOT / "campaigns" / "example.yml"
    result = apg("campaign", "run", str(spec), f"--jobs={value}", "--dry-run")
    assert result.rc == 2 and "APG_USAGE" in result.err and "--jobs" in result.err


@pytest.mark.parametrize("value", [".nan", ".inf", "0", "-5"])
def test_spec_agent_timeout_must_be_finite_and_positive(apg: Any, tmp_path: Path, value: str) -> None:
    text = (PROJECT_ROOT / "campaigns" / "example.yml").read_text()
    spec = tmp_path / "spec.yml"
    spec.write_text(text + f"\nagent_timeout_s: {value}\n")
    result = apg("campaign", "run", str(spec), "--dry-run")
    assert result.rc == 2 and result.err.startswith("APG_CAMPAIGN_SPEC_INVALID")
    assert "$.agent_timeout_s" in result.err


def test_run_json_is_written_and_read_through_its_one_definition(apg: Any, fixtures_bed: Path) -> None:
    result = apg("run", "--approot", str(fixtures_bed), DV01, "--agent", "nop", "--timeout=30")
    assert result.rc == 0, result.err
    [path] = (baseline_dir(fixtures_bed) / "runs").glob("*/run.json")
    run = read_run(path)
    assert (run.status, run.attempted, run.adapter_exit_code, run.timeout_s) == \
        ("attempted", True, 0, 30.0)  # the time limit is recorded whatever the run gave
    assert run.as_json() == json.loads(path.read_text("utf-8"))
    path.write_text(json.dumps({**run.as_json(), "status": "finished"}))
    with pytest.raises(ApgError) as caught:
        read_run(path)
    assert caught.value.token == "APG_RECORD_INVALID" and "$.status" in caught.value.message
