"""The Ray executor (issue 23) on a real local Ray cluster, loopback only: one module-scoped
cluster with two ``bed`` units, so two bed actors; the campaigns run in-process through
``apg campaign run --executor ray``, which uses the cluster this process already joined."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from campaign_kit import EXAMPLE, attempts, run_campaign, write_spec
from test_executors import register  # noqa: F401  # the fixture that registers an executor

from ai_proving_ground.campaigns import beds
from ai_proving_ground.campaigns.attempt import Context
from ai_proving_ground.campaigns.records import CampaignFiles
from ai_proving_ground.executors.base import Finished

ray = pytest.importorskip("ray", reason="the ray extra is not installed "
                          "(pip install -e '.[ray]'); the Ray executor's tests need it")

from ai_proving_ground.executors.ray_executor import RayExecutor  # noqa: E402  # needs ray


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Iterator[None]:
    """One local cluster for the module (Ray's start-up is seconds): 127.0.0.1, no dashboard."""
    ray.init(address="local", include_dashboard=False, num_cpus=2, resources={"bed": 2},
             _node_ip_address="127.0.0.1", log_to_driver=False, configure_logging=False)
    try:
        yield
    finally:
        ray.shutdown()


def example_on(template: Path, path: Path, **extra: Any) -> Path:
    """The example campaign (oracle vs nop on dv01, two jobs) on the test template."""
    raw: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text("utf-8"))
    return write_spec(path, {**raw, "bed": str(template), **extra})


def untimed(out: Path) -> dict[str, Any]:
    """report.json minus its timings (the cost section's seconds; its attempt counts stay)."""
    report: dict[str, Any] = json.loads((out / "report.json").read_text("utf-8"))
    report["cost"] = {arm: {k: v for k, v in row.items() if not k.endswith("_s")}
                      for arm, row in report["cost"].items()}
    return report


def verdicts(out: Path) -> list[tuple[int, str, str, str]]:
    return [(r["order"], r["arm"], r["task_id"], r["outcome"]) for r in attempts(out)]


def test_the_example_campaign_on_two_bed_actors_equals_the_local_executor(
        apg: Any, tmp_path: Path, template: Path) -> None:
    spec = example_on(template, tmp_path / "spec.yml")
    run_campaign(apg, spec, tmp_path / "local")
    result = run_campaign(apg, spec, tmp_path / "ray", "--executor", "ray")
    assert verdicts(tmp_path / "ray") == verdicts(tmp_path / "local")
    assert {o for *_, o in verdicts(tmp_path / "ray")} == {"pass", "fail"}
    # Both jobs took attempts: two actors ran them (each job's line names it).
    assert "job-0" in result.err and "job-1" in result.err
    local, remote = (untimed(tmp_path / d) for d in ("local", "ray"))
    assert remote == local
    # apg campaign report reads the Ray campaign's records as it reads the local one's.
    assert apg("campaign", "report", str(tmp_path / "ray")).rc == 0


class KillsOneActor(RayExecutor):
    """The Ray executor, killing the actor of the first attempt whose agent is under way."""

    def __init__(self, context: Context, jobs: list[beds.Job]) -> None:
        super().__init__(context, jobs, None)
        self.runs, self.killed = context.files.directory / "runs", None

    def collect(self, timeout: float) -> list[Finished]:
        if self.killed is None:
            for running in list(self._running.values()):
                log = CampaignFiles(self.runs.parent).attempt_dir(running.attempt.order)
                if (log / "agent.log").exists():  # the adapter (sleep 4) runs
                    self.killed = running.attempt.order
                    ray.kill(self._actors[running.job.number], no_restart=True)
                    break
        return super().collect(timeout)


def test_a_bed_actor_killed_mid_attempt_gives_that_attempt_an_infra_error(
        apg: Any, tmp_path: Path, template: Path, register: Any) -> None:  # noqa: F811
    executors: list[KillsOneActor] = []

    def factory(context: Context, jobs: list[beds.Job]) -> KillsOneActor:
        executors.append(KillsOneActor(context, jobs))
        return executors[0]

    register("ray-kills", factory)
    spec = example_on(template, tmp_path / "spec.yml", agents=["dozes"])
    out = tmp_path / "out"
    result = run_campaign(apg, spec, out, "--executor", "ray-kills")
    [executor] = executors
    assert executor.killed is not None, "no actor was killed"
    records = {r["order"]: r for r in attempts(out)}
    assert len(records) == 4, "the campaign did not complete"
    lost = records.pop(executor.killed)
    assert lost["outcome"] == "infra_error" and "bed actor was lost" in lost["reason"], lost
    # The other job's actor ran every other attempt to its verdict.
    assert {(r["arm"], r["outcome"]) for r in records.values()} <= {("nop", "fail"),
                                                                     ("oracle", "pass")}
    assert "APG_CAMPAIGN_JOB_LOST" in result.err
    totals = json.loads((out / "report.json").read_text("utf-8"))["totals"]
    assert totals["infra_error"] == 1 and totals["recorded"] == 4


def test_a_lost_attempt_is_tried_again_on_a_fresh_bed_in_a_new_actor(
        apg: Any, tmp_path: Path, template: Path, register: Any) -> None:  # noqa: F811
    executors: list[KillsOneActor] = []

    def factory(context: Context, jobs: list[beds.Job]) -> KillsOneActor:
        executors.append(KillsOneActor(context, jobs))
        return executors[0]

    register("ray-kills", factory)
    spec = example_on(template, tmp_path / "spec.yml", agents=["dozes"],
                      retries={"infra_error": 1})
    out = tmp_path / "out"
    result = run_campaign(apg, spec, out, "--executor", "ray-kills")
    [executor] = executors
    assert executor.killed is not None, "no actor was killed"
    records = {r["order"]: r for r in attempts(out)}
    # Every attempt has its arm's verdict, the lost one too, on its second try.
    assert {(r["arm"], r["outcome"]) for r in records.values()} == {("nop", "fail"),
                                                                     ("oracle", "pass")}
    [lost] = records[executor.killed]["tries"]
    assert lost["outcome"] == "infra_error" and "bed actor was lost" in lost["reason"], lost
    assert (out / "runs" / f"{executor.killed:04d}" / "tries" / "1" / "attempt.json").is_file()
    # The lost actor's bed was set aside, never reused: the second try had a fresh clone.
    assert len(list((tmp_path / "out-beds").glob(f"job-*.lost-{executor.killed:04d}"))) == 1
    assert "APG_CAMPAIGN_RETRY" in result.err and "APG_CAMPAIGN_JOB_LOST" not in result.err
    totals = json.loads((out / "report.json").read_text("utf-8"))["totals"]
    assert totals["retries"] == 1 and totals["infra_error"] == 0 and totals["recorded"] == 4


def test_the_ray_bench_measures_both_bed_counts_and_both_executors(tmp_path: Path) -> None:
    from ai_proving_ground.bench.ray_campaign import describe, measure_ray

    results = measure_ray(tmp_path, attempts=4, sleep_s=0.05)
    assert results["attempts"] == 4 and results["beds_ratio_goal"] == 1.8
    assert results["beds1_attempts_per_s"] > 0 and results["beds2_attempts_per_s"] > 0
    assert results["beds_ratio"] > 0 and results["ray_overhead_s"] > 0
    assert results["local_overhead_s"] > 0
    ratio, overhead = describe(results)
    assert "ratio" in ratio and "ray" in overhead and "local" in overhead


def test_a_cluster_short_of_beds_stops_the_campaign_saying_so(
        apg: Any, tmp_path: Path, template: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ai_proving_ground.executors.ray_executor as ray_executor

    monkeypatch.setattr(ray_executor, "ACTOR_START_S", 5.0)
    # Three jobs on a cluster of two bed units: the third actor is never placed.
    spec = example_on(template, tmp_path / "spec.yml", jobs=3, repeats=2)
    out = tmp_path / "out"
    result = apg("campaign", "run", str(spec), "--out", str(out), "--beds", str(tmp_path / "b"),
                 "--executor", "ray")
    assert result.rc == 1, result.err
    assert "APG_CAMPAIGN_RAY_NO_BED 3 bed actors wanted, 1 of 3 did not start in 5s" in result.err
    assert not list(out.glob("runs/*/attempt.json"))  # no attempt ran


def test_a_ray_campaign_resumes_on_ray_to_the_uninterrupted_report(
        apg: Any, tmp_path: Path, template: Path, register: Any) -> None:  # noqa: F811
    submitted: list[int] = []

    class Counting(RayExecutor):
        def submit(self, job: beds.Job, attempt: Any, earlier: Any = None) -> None:
            submitted.append(attempt.order)
            super().submit(job, attempt, earlier)

    register("ray-counts", lambda context, jobs: Counting(context, jobs, None))
    spec = example_on(template, tmp_path / "spec.yml")
    out = tmp_path / "out"
    run_campaign(apg, spec, out, "--executor", "ray")
    whole = untimed(out)
    # As a runner killed mid-attempt leaves it: one attempt without its record, no report.
    (out / "runs" / "0002" / "attempt.json").unlink()
    (out / "report.json").unlink()
    result = apg("campaign", "resume", str(out), "--beds", str(tmp_path / "again"),
                 "--executor", "ray-counts")
    assert result.rc == 0, result.err
    assert submitted == [2], "the attempt left was not run on the Ray executor"
    assert untimed(out) == whole


def test_resume_refuses_an_address_for_the_local_executor(
        apg: Any, tmp_path: Path, template: Path) -> None:
    spec = example_on(template, tmp_path / "spec.yml")
    out = tmp_path / "out"
    run_campaign(apg, spec, out)
    (out / "runs" / "0001" / "attempt.json").unlink()
    result = apg("campaign", "resume", str(out), "--address", "127.0.0.1:6379")
    assert result.rc == 2, result.err
    assert "APG_USAGE --address is for the executors that join a cluster" in result.err
    assert not (out / "runs" / "0001" / "attempt.json").exists()
