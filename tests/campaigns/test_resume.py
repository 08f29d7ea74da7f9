"""``apg campaign resume``: a campaign killed with SIGKILL anywhere finishes, each attempt once.

The runner is a real ``apg campaign run`` process killed by SIGKILL: at a named crash point
(``AI_PG_CRASH_AT``, :mod:`ai_proving_ground.faults`) or from here while an agent runs. The
resumed campaign must hold every planned attempt exactly once, and its report must equal that of
an uninterrupted run of the same spec and seed (report.json without ``cost``, the only timings).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from campaign_kit import attempts, write_spec

from ai_proving_ground.campaigns.records import CampaignFiles
from ai_proving_ground.campaigns.spec import load_spec, plan, resolve
from ai_proving_ground.paths import PROJECT_ROOT

PLANNED = 4  # 2 arms x 2 repeats of dv01


def spec_body(template: Path, **more: Any) -> dict[str, Any]:
    return {"name": "resumable", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
            # b's oracle passes where a's sleeper fails: the report has an effect to compare
            "arms": {"a": {}, "b": {"adapter": "oracle"}}, "agents": ["sleeps"], "repeats": 2,
            "seed": 17,
            "jobs": 1, "bed": str(template), **more}


def runner(spec: Path, out: Path, crash_at: str | None = None) -> subprocess.Popen[bytes]:
    """``apg campaign run`` as its own process (the operator's AI_PG_*/APG_* left out)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AI_PG_", "APG_"))}
    if crash_at is not None:
        env["AI_PG_CRASH_AT"] = crash_at
    return subprocess.Popen(
        [sys.executable, "-m", "ai_proving_ground.cli.main", "campaign", "run", str(spec),
         "--out", str(out), "--beds", str(out.with_name(out.name + "-beds"))],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def killed_at(spec: Path, out: Path, point: str) -> None:
    process = runner(spec, out, point)
    _, err = process.communicate(timeout=300)
    assert process.returncode == -signal.SIGKILL, (point, process.returncode, err.decode())


def stopped_while_an_agent_runs(spec: Path, out: Path, order: int, signum: int) -> None:
    """``signum`` from outside once attempt ``order``'s agent has started (its agent.log exists;
    the adapter then sleeps half a second): SIGKILL, or SIGINT (Ctrl-C: the runner records the
    running attempt as interrupted and writes a report)."""
    process = runner(spec, out)
    log = out / "runs" / f"{order:04d}" / "agent.log"
    deadline = time.monotonic() + 300
    try:
        while not log.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert log.exists(), "attempt never started"
    finally:
        process.send_signal(signum)
        _, err = process.communicate(timeout=300)
    record = out / "runs" / f"{order:04d}" / "attempt.json"
    if signum == signal.SIGKILL:
        assert process.returncode == -signal.SIGKILL
        assert not record.exists(), "killed too late"
    else:
        assert process.returncode == 130, err.decode()
        assert json.loads(record.read_text("utf-8"))["reason"].startswith("interrupted")


def report_of(out: Path) -> dict[str, Any]:
    report = json.loads((out / "report.json").read_text("utf-8"))
    del report["cost"]  # wall-clock seconds: the only part that differs from run to run
    return report


@pytest.fixture(scope="module")
def uninterrupted(template: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("uninterrupted")
    spec = write_spec(root / "spec.yml", spec_body(template))
    process = runner(spec, root / "out")
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err.decode()
    report = report_of(root / "out")
    assert report["totals"]["recorded"] == PLANNED
    assert (report["totals"]["pass"], report["totals"]["fail"]) == (2, 2)
    return report


def resumed(apg: Any, out: Path) -> Any:
    result = apg("campaign", "resume", str(out), "--beds", str(out.with_name("resume-beds")))
    assert result.rc == 0, result.err
    assert result.out == f"{out}\n"
    return result


def started(out: Path) -> dict[int, str]:
    """When each recorded attempt started: a resume must leave every one of them as it was."""
    return {r["order"]: r["started_at"] for r in attempts(out)}


def assert_each_attempt_once(out: Path, before: dict[int, str]) -> None:
    records = attempts(out)  # orders 0..n-1, each once
    assert len(records) == PLANNED
    assert len({(r["task_id"], r["arm"], r["agent"], r["repeat"]) for r in records}) == PLANNED
    assert all(r["outcome"] == ("pass" if r["arm"] == "b" else "fail") and not r["tries"]
               for r in records)
    assert {order: started(out)[order] for order in before} == before  # none run again


@pytest.mark.parametrize(("point", "discarded"), [
    # before any attempt: campaign.json written, the plan not yet; then the beds made
    ("atomic-write:plan.jsonl", []),
    ("campaign.started", []),
    # mid-attempt: the first attempt's record written, not yet renamed into place
    ("atomic-write:attempt.json", ["0000.1"]),
    # between attempts: the first recorded, the second not started
    ("campaign.attempt-collected", []),
    # every attempt recorded, the report being written
    ("campaign.attempts-done", []),
    ("atomic-write:report.json", []),
])
def test_a_campaign_killed_at_a_crash_point_resumes_to_the_uninterrupted_report(
        apg: Any, tmp_path: Path, template: Path, uninterrupted: dict[str, Any], point: str,
        discarded: list[str]) -> None:
    spec = write_spec(tmp_path / "spec.yml", spec_body(template))
    out = tmp_path / "out"
    killed_at(spec, out, point)
    before = started(out)
    result = resumed(apg, out)
    assert_each_attempt_once(out, before)
    assert report_of(out) == uninterrupted
    assert (out / "report.txt").read_text("utf-8").startswith("Campaign resumable (seed 17)")
    found = sorted(p.name for p in (out / "discarded").iterdir()) if (out / "discarded").exists() else []
    assert found == discarded
    for name in discarded:
        assert f"APG_CAMPAIGN_RESUME_DISCARDED runs/{name.split('.')[0]}" in result.err
    # A finished campaign resumed again runs nothing and says the same.
    again = resumed(apg, out)
    assert "all 4 planned attempts are recorded" in again.err
    assert report_of(out) == uninterrupted


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT])
def test_a_campaign_stopped_while_its_agent_runs_resumes_to_the_uninterrupted_report(
        apg: Any, tmp_path: Path, template: Path, uninterrupted: dict[str, Any],
        signum: int) -> None:
    spec = write_spec(tmp_path / "spec.yml", spec_body(template))
    out = tmp_path / "out"
    # The first attempt after the first whose agent sleeps (arm a): the window to kill in.
    order = next(a.order for a in plan(resolve(load_spec(spec))) if a.order > 0 and a.arm == "a")
    stopped_while_an_agent_runs(spec, out, order, signum)
    before = {o: at for o, at in started(out).items() if o < order}
    assert sorted(before) == list(range(order))  # those before recorded; this one half-done
    result = resumed(apg, out)
    assert (f"{order} of 4 attempts recorded, {PLANNED - order} to run (1 discarded to "
            "discarded/)") in result.err
    assert_each_attempt_once(out, before)
    assert report_of(out) == uninterrupted
    assert sorted(p.name for p in (out / "discarded").iterdir()) == [f"{order:04d}.1"]
    # Half-written (no record) after SIGKILL; recorded as interrupted after Ctrl-C.
    assert (out / "discarded" / f"{order:04d}.1" / "attempt.json").exists() == \
        (signum == signal.SIGINT)
    campaign = json.loads((out / "campaign.json").read_text("utf-8"))
    assert [(r["forced"], r["redone"]) for r in campaign["resumes"]] == [([], [order])]


def test_a_campaign_killed_before_its_first_record_leaves_nothing_to_resume(
        apg: Any, tmp_path: Path, template: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", spec_body(template))
    out = tmp_path / "out"
    killed_at(spec, out, "atomic-write:campaign.json")
    [leftover] = out.iterdir()  # campaign.json's new file, never renamed into place
    assert leftover.name.startswith(".campaign.json.") and leftover.name.endswith(".new")
    result = apg("campaign", "resume", str(out))
    assert result.rc == 2
    assert result.err.startswith(f"APG_CAMPAIGN_NOT_FOUND no campaign.json in {out}")
    assert f"apg campaign run SPEC --out {out}" in result.err
    # As it says: the campaign starts there again.
    result = apg("campaign", "run", str(spec), "--out", str(out), "--beds", str(tmp_path / "b2"))
    assert result.rc == 0, result.err
    assert len(attempts(out)) == PLANNED


# ---------------------------------------------------------------------------- refusals


@pytest.fixture
def half_done(apg: Any, tmp_path: Path, template: Path) -> tuple[Path, Path]:
    """A campaign whose runner died after its first two attempts (its spec, its directory)."""
    dataset = tmp_path / "tasks.yml"
    dataset.write_bytes((PROJECT_ROOT / "datasets" / "build_tasks.yml").read_bytes())
    shutil.copytree(PROJECT_ROOT / "datasets" / "hidden", tmp_path / "hidden")  # its patches
    spec = write_spec(tmp_path / "spec.yml", spec_body(template, agents=["nop"],
                                                        dataset=str(dataset)))
    out = tmp_path / "out"
    killed_at(spec, out, "campaign.attempt-collected")
    assert len(attempts(out)) == 1
    return spec, out


def test_a_changed_spec_or_dataset_is_refused_unless_forced(
        apg: Any, half_done: tuple[Path, Path]) -> None:
    spec, out = half_done
    before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    body = json.loads(spec.read_text("utf-8"))
    write_spec(spec, {**body, "description": "edited after the start"})
    dataset = Path(body["dataset"])
    dataset.write_text(dataset.read_text("utf-8") + "# a comment\n", encoding="utf-8")
    result = apg("campaign", "resume", str(out))
    assert result.rc == 1
    assert result.err.startswith(f"APG_CAMPAIGN_RESUME_CHANGED {out}: changed since the campaign "
                                 "started: dataset.sha256 (")
    assert "; spec.sha256 (" in result.err and "--force" in result.err
    assert "tasks." not in result.err  # a comment changes no task
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before  # nothing moved

    forced = apg("campaign", "resume", str(out), "--force")
    assert forced.rc == 0, forced.err
    assert "forced past: dataset.sha256" in forced.err
    assert len(attempts(out)) == PLANNED
    campaign = json.loads((out / "campaign.json").read_text("utf-8"))
    [entry] = campaign["resumes"]
    assert [change.split(" ")[0] for change in entry["forced"]] == ["dataset.sha256", "spec.sha256"]


def test_a_changed_plan_is_refused_even_when_forced(apg: Any, half_done: tuple[Path, Path]) -> None:
    spec, out = half_done
    write_spec(spec, {**json.loads(spec.read_text("utf-8")), "repeats": 3})
    result = apg("campaign", "resume", str(out), "--force")
    assert result.rc == 1
    assert result.err.startswith(f"APG_CAMPAIGN_RESUME_PLAN_CHANGED {out / 'plan.jsonl'}: the spec "
                                 "now plans 6 attempts and the campaign planned 4")


def test_a_campaign_being_run_is_not_resumed(apg: Any, half_done: tuple[Path, Path]) -> None:
    import fcntl

    _, out = half_done
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        result = apg("campaign", "resume", str(out))
    finally:
        os.close(fd)
    assert result.rc == 1
    assert result.err.startswith(f"APG_CAMPAIGN_BUSY another apg campaign run is writing into {out}")
    assert len(attempts(out)) == 1


def test_runs_that_is_a_file_is_named_by_report_and_resume(
        apg: Any, half_done: tuple[Path, Path]) -> None:
    _, out = half_done
    runs = CampaignFiles(out).runs
    shutil.rmtree(runs)
    runs.write_text("not a folder\n", encoding="utf-8")
    for command in ("report", "resume"):
        result = apg("campaign", command, str(out))
        assert result.rc == 1, (command, result.err)
        assert result.err.startswith(f"APG_CAMPAIGN_RUNS_UNREADABLE {runs} is a file, not the "
                                     "folder of attempt records"), (command, result.err)
        assert "missing" not in result.out


@pytest.mark.parametrize("template_left", [True, False])
def test_a_resume_reuses_the_template_the_run_made_or_makes_an_equal_one(
        apg: Any, tmp_path: Path, template_left: bool) -> None:
    """No bed in the spec: the run made its template. A resume clones that one while it still
    checks; gone, a new one has the same fingerprints (the baseline's commit aside)."""
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "made", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {"adapter": "oracle"}}, "agents": ["nop"], "repeats": 1, "seed": 3})
    out = tmp_path / "out"
    killed_at(spec, out, "campaign.attempt-collected")
    made = Path(json.loads((out / "setup.json").read_text("utf-8"))["template"])
    if not template_left:
        shutil.rmtree(made)
    result = resumed(apg, out)
    assert len(attempts(out)) == 2
    template = Path(json.loads((out / "setup.json").read_text("utf-8"))["template"])
    if template_left:
        assert template == made and "making a new one" not in result.err
    else:
        assert "the run's template cannot be reused" in result.err
        assert template == tmp_path / "resume-beds" / "template"
        assert "APG_CAMPAIGN_RESUME_CHANGED" not in result.err
