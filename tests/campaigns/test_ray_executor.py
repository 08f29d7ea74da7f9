"""The Ray executor (issue 23) on a real local Ray cluster, loopback only: one module-scoped
cluster with two ``bed`` units, so two bed actors; the campaigns run in-process through
``apg campaign run --executor ray``, which uses the cluster this process already joined."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from campaign_kit import EXAMPLE, attempts, run_campaign, write_spec
from test_executors import register  # noqa: F401  # the fixture that registers an executor

from ai_proving_ground.campaigns import beds
from ai_proving_ground.campaigns.attempt import Context
from ai_proving_ground.errors import ApgError
from ai_proving_ground.executors.base import Finished

ray = pytest.importorskip("ray", reason="the ray extra is not installed "
                          "(pip install -e '.[ray]'); the Ray executor's tests need it")

from ai_proving_ground.campaigns import provenance  # noqa: E402
from ai_proving_ground.campaigns.spec import load_spec, resolve  # noqa: E402
from ai_proving_ground.executors import ray_executor, ray_provenance  # noqa: E402
from ai_proving_ground.executors.ray_executor import BedWorker, RayExecutor  # noqa: E402
from ai_proving_ground.settings import Settings  # noqa: E402

# The watching worker below is defined here: Ray's workers get it by value, not by import.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def ddev_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the DDEV test's project lives: the cluster's one node declares it (below)."""
    return tmp_path_factory.mktemp("ray-ddev")


@pytest.fixture(scope="module", autouse=True)
def cluster(ddev_root: Path) -> Iterator[None]:
    """One local cluster for the module (Ray's start-up is seconds): 127.0.0.1, no dashboard;
    its node holds the DDEV test's project (README, Ray: a node declares each project it has)."""
    project = ray_executor.node_resource(ddev_root / "bed")
    ray.init(address="local", include_dashboard=False, num_cpus=2,
             resources={"bed": 2, project: 1}, _node_ip_address="127.0.0.1",
             log_to_driver=False, configure_logging=False)
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


class WatchedWorker(BedWorker):
    """A bed actor that records every file operation of its process on ``watched`` (an audit
    hook: open, mkdir, rename, remove, listing, copy, sqlite, a child's working directory)."""

    EVENTS = ("open", "os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.listdir",
              "os.scandir", "shutil.copyfile", "shutil.rmtree", "sqlite3.connect",
              "os.chmod", "os.utime")

    def __init__(self, *args: Any, watched: str = "") -> None:
        self.touched: list[str] = []
        root = os.path.realpath(watched)

        def hook(event: str, args: tuple[Any, ...]) -> None:
            paths = args[:2] if event in self.EVENTS else args[2:3] \
                if event == "subprocess.Popen" else ()
            for path in paths:
                if isinstance(path, str | bytes | os.PathLike):
                    text = os.path.abspath(os.fsdecode(path))
                    if text == root or text.startswith(root + os.sep):
                        self.touched.append(f"{event} {text}")

        sys.addaudithook(hook)
        super().__init__(*args)

    def seen(self) -> list[str]:
        return self.touched


class Watched(RayExecutor):
    """The Ray executor whose actors watch the driver's campaign directory."""

    def __init__(self, context: Context, jobs: list[beds.Job], scratch: Path) -> None:
        self.touched: list[str] = []
        self._watched = str(context.files.directory)
        super().__init__(context, jobs, None, scratch_root=str(scratch))

    def _worker_class(self, ray: Any) -> Any:
        remote = ray.remote(max_concurrency=2)(WatchedWorker)
        watched = self._watched

        class Bound:  # the watched directory given to every actor it starts
            @staticmethod
            def options(**options: Any) -> Any:
                started = remote.options(**options)

                class Start:
                    @staticmethod
                    def remote(*args: Any) -> Any:
                        return started.remote(*args, watched=watched)
                return Start
        return Bound

    def close(self) -> None:
        refs = [actor.seen.remote() for actor in self._actors.values()]
        self.touched = [t for seen in ray.get(refs, timeout=60) for t in seen]
        super().close()


def no_bed_made_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process (the driver) fails the test if it clones, escrows or resets a job's bed or
    a DDEV project; the actors' processes import their own, unpatched."""
    def made_here(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"the driver made a bed: {args[:3]}")

    for name in ("prepare_jobs", "prepare_job", "prepare_ddev_jobs", "ready_ddev_job",
                 "reset_ddev_beds", "fresh_bed", "clone_bed", "reset"):
        monkeypatch.setattr(beds, name, made_here)


# What this process (the driver) does under the roots it watches now: (root, what it touched).
_WATCHING: list[tuple[str, list[str]]] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _WATCHING:
        return
    if event in WatchedWorker.EVENTS:
        paths: list[Any] = list(args[:2])
    elif event == "subprocess.Popen":  # its working directory and every argument (git -C DIR)
        given = args[1] if isinstance(args[1], list | tuple) else [args[1]]
        paths = [args[2], *given]
    else:
        return
    for path in paths:
        if not isinstance(path, str | bytes | os.PathLike):
            continue
        text = os.path.abspath(os.fsdecode(path))
        for root, touched in _WATCHING:
            if text == root or text.startswith(root + os.sep):
                touched.append(f"{event} {text}")


sys.addaudithook(_audit)  # for this process's life (a hook cannot be removed): idle unless watching


@contextlib.contextmanager
def driver_watching(root: Path) -> Iterator[list[str]]:
    """What this process opens, lists, changes or runs a child in under ``root`` meanwhile."""
    entry: tuple[str, list[str]] = (os.path.realpath(root), [])
    _WATCHING.append(entry)
    try:
        yield entry[1]
    finally:
        _WATCHING.remove(entry)


def no_project_read_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process (the driver) fails the test if it checks a DDEV project's baseline, reads
    its provenance or looks up its adapters (what a node's own stat of a path would miss)."""
    from ai_proving_ground.campaigns import agents_check, provenance

    def read_here(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"the driver read a bed: {[a for a in args if isinstance(a, Path)]}")

    for module, name in ((beds, "check_ddev_bed"), (beds, "check_template"),
                         (provenance, "bed_facts"), (provenance, "_bed"),
                         (provenance, "adapters"), (agents_check, "find_adapter")):
        monkeypatch.setattr(module, name, read_here)


def files_of(out: Path) -> list[str]:
    """Every attempt's files, by path under runs/ (the run's id, a time, left out)."""
    return sorted({"/".join("RUN" if part.startswith("20") else part for part in
                            p.relative_to(out / "runs").parts)
                   for p in (out / "runs").rglob("*") if p.is_file()})


def test_the_example_campaign_on_two_bed_actors_equals_the_local_executor(
        apg: Any, tmp_path: Path, template: Path, register: Any,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The actors make their beds and run their attempts in their own scratch folder and never
    touch the driver's campaign directory; the driver writes every file back, so the records,
    the report, apg campaign report and regrade are the local executor's."""
    executors: list[Watched] = []

    def factory(context: Context, jobs: list[beds.Job]) -> Watched:
        executors.append(Watched(context, jobs, tmp_path / "scratch"))
        return executors[0]

    register("ray-watched", factory, beds_from=ray_executor)
    spec = example_on(template, tmp_path / "spec.yml")
    run_campaign(apg, spec, tmp_path / "local")
    no_bed_made_here(monkeypatch)
    result = run_campaign(apg, spec, tmp_path / "ray", "--executor", "ray-watched")
    [executor] = executors
    # The driver made no bed: its --beds folder is empty, setup.json names none of its own.
    assert list((tmp_path / "ray-beds").iterdir()) == []
    setup = json.loads((tmp_path / "ray" / "setup.json").read_text("utf-8"))
    assert {(j["bed"], j["escrow"]) for j in setup["jobs"]} == {
        ("made where its executor runs the job",) * 2}
    assert executor.touched == [], executor.touched[:10]
    assert sorted(executor.beds.values()) and all(
        bed.startswith(str(tmp_path / "scratch")) for bed in executor.beds.values())
    assert not list((tmp_path / "scratch").iterdir()), "an actor left its scratch folder"
    assert verdicts(tmp_path / "ray") == verdicts(tmp_path / "local")
    assert {o for *_, o in verdicts(tmp_path / "ray")} == {"pass", "fail"}
    # Both jobs took attempts: two actors ran them (each job's line names it).
    assert "job-0" in result.err and "job-1" in result.err
    local, remote = (untimed(tmp_path / d) for d in ("local", "ray"))
    assert remote == local
    assert files_of(tmp_path / "ray") == files_of(tmp_path / "local")
    # apg campaign report and regrade read the Ray campaign's records as the local one's.
    assert apg("campaign", "report", str(tmp_path / "ray")).rc == 0
    regraded = apg("campaign", "regrade", str(tmp_path / "ray"), "--json")
    assert regraded.rc == 0, regraded.err


def test_an_actor_refuses_a_ddev_project_absent_from_its_node(tmp_path: Path) -> None:
    settings = Settings(site_driver=beds.DDEV)
    job = beds.Job(number=0, bed=tmp_path / "site-a", escrow_root=tmp_path / "e",
                   settings=settings, tag="apg-baseline-x")
    worker = BedWorker(None, str(tmp_path / "template"), settings,  # type: ignore[arg-type]
                       lambda bed, args: (0, ""), job, scratch_root=str(tmp_path))
    bed, problem = worker.ready()
    assert bed == str(tmp_path / "site-a")
    assert problem is not None and problem.startswith(
        f"APG_CAMPAIGN_RAY_PROJECT_ABSENT job-0: the DDEV project {tmp_path / 'site-a'} is not "
        "on the node"), problem
    assert '"ddev:' + str(tmp_path / "site-a") + '": 1' in problem


def test_an_actor_refuses_a_bed_whose_fingerprints_differ_from_the_campaigns(
        tmp_path: Path, template: Path) -> None:
    campaign = resolve(load_spec(example_on(template, tmp_path / "spec.yml")), Settings())
    settings = beds.job_settings(Settings(), campaign)
    _, tag = beds.check_template(campaign, template, settings)
    found = provenance.bed_fingerprints(template, campaign.fixtures, settings)
    job = beds.Job(number=0, bed=tmp_path / "unused", escrow_root=tmp_path / "e",
                   settings=settings, tag=tag)

    def made(expected: dict[str, Any]) -> tuple[str, str | None]:
        worker = BedWorker(campaign, str(template), settings, lambda bed, args: (0, ""), job,
                           str(tmp_path / "scratch"), expected)
        try:
            return worker.ready()
        finally:
            worker.release()

    bed, problem = made(found)  # the template's own: the clone matches it
    assert problem is None and bed.startswith(str(tmp_path / "scratch"))
    bed, problem = made({**found, "grader_tree_sha256": "0" * 64})
    assert problem is not None and problem.startswith(
        f"APG_CAMPAIGN_RAY_BED_DIFFERS job-0: the bed {bed} on the node "), problem
    assert "differs from the campaign's: grader_tree_sha256 (000000000000… -> " in problem
    _, problem = made({**found, "product.code_sha256": "1" * 64})
    assert problem is not None and "product.code_sha256 (111111111111… -> " in problem


class KillsOneActor(RayExecutor):
    """The Ray executor, killing the actor of the first attempt whose agent is under way (its
    agent.log is in the actor's scratch folder, under ``scratch``)."""

    def __init__(self, context: Context, jobs: list[beds.Job], scratch: Path) -> None:
        super().__init__(context, jobs, None, scratch_root=str(scratch))
        self.scratch, self.killed, self.lost_bed = scratch, None, ""

    def collect(self, timeout: float) -> list[Finished]:
        if self.killed is None:
            for running in list(self._running.values()):
                runs = f"apg-ray-{running.job.name}-*/campaign/runs"
                log = f"{runs}/{running.attempt.order:04d}/agent.log"
                if list(self.scratch.glob(log)):  # the adapter (sleep 4) runs
                    self.killed = running.attempt.order
                    self.lost_bed = self.beds[running.job.number]
                    ray.kill(self._actors[running.job.number], no_restart=True)
                    break
        return super().collect(timeout)


def test_a_bed_actor_killed_mid_attempt_gives_that_attempt_an_infra_error(
        apg: Any, tmp_path: Path, template: Path, register: Any) -> None:  # noqa: F811
    executors: list[KillsOneActor] = []

    def factory(context: Context, jobs: list[beds.Job]) -> KillsOneActor:
        executors.append(KillsOneActor(context, jobs, tmp_path / "scratch"))
        return executors[0]

    register("ray-kills", factory, beds_from=ray_executor)
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
        executors.append(KillsOneActor(context, jobs, tmp_path / "scratch"))
        return executors[0]

    register("ray-kills", factory, beds_from=ray_executor)
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
    # The lost actor's bed was never reused: the new actor made a fresh clone of its own.
    job = next(n for n, bed in executor.beds.items() if f"job-{n}" in executor.lost_bed)
    assert executor.beds[job] != executor.lost_bed and executor.lost_bed
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
    # The third never starts; under load the two placed may not have made their beds in 5 s.
    assert re.search(r"APG_CAMPAIGN_RAY_NO_BED 3 bed actors wanted, [123] of 3 did not start "
                     r"in 5s", result.err), result.err
    assert not list(out.glob("runs/*/attempt.json"))  # no attempt ran


def test_a_ray_campaign_resumes_on_ray_to_the_uninterrupted_report(
        apg: Any, tmp_path: Path, template: Path, register: Any) -> None:  # noqa: F811
    submitted: list[int] = []

    class Counting(RayExecutor):
        def submit(self, job: beds.Job, attempt: Any, earlier: Any = None) -> None:
            submitted.append(attempt.order)
            super().submit(job, attempt, earlier)

    register("ray-counts", lambda context, jobs: Counting(context, jobs, None),
             beds_from=ray_executor)
    spec = example_on(template, tmp_path / "spec.yml")
    out = tmp_path / "out"
    run_campaign(apg, spec, out, "--executor", "ray")
    whole = untimed(out)
    # As a driver killed while writing an attempt back leaves it: its files half staged
    # (runs/.0002.incoming/, never renamed into place), no report.
    (out / "runs" / "0002").rename(out / "runs" / ".0002.incoming")
    (out / "runs" / ".0002.incoming" / "attempt.json").unlink()
    (out / "report.json").unlink()
    result = apg("campaign", "resume", str(out), "--beds", str(tmp_path / "again"),
                 "--executor", "ray-counts")
    assert result.rc == 0, result.err
    assert submitted == [2], "the attempt left was not run on the Ray executor"
    assert untimed(out) == whole
    assert not (out / "runs" / ".0002.incoming").exists()


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


class NodeEnv(RayExecutor):
    """The Ray executor whose actors get ``env`` (what a node has installed: here the stub
    ``ddev`` on PATH and its settings, set after the cluster started)."""

    def __init__(self, context: Context, jobs: list[beds.Job], env: dict[str, str]) -> None:
        self._env = env
        super().__init__(context, jobs, None)

    def _worker_class(self, ray: Any) -> Any:
        remote, env = super()._worker_class(ray), self._env

        class Bound:
            @staticmethod
            def options(**options: Any) -> Any:
                return remote.options(runtime_env={"env_vars": env}, **options)
        return Bound


def test_a_ddev_campaign_runs_and_resumes_on_ray_its_project_made_ready_by_its_actor(
        apg: Any, tmp_path: Path, ddev_root: Path, register: Any,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A DDEV job through the stub ddev: the driver neither escrows nor resets the project (its
    bed functions fail here); the actor, on the node declaring it, resets, escrows and checks it
    there, on the run and on a resume after an agent left a recipe in the project."""
    if shutil.which("php") is None:
        pytest.skip("php not found: apt-get install php-cli")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ddev"))
    from ddev_stub import STUB_SOURCE, Stub, fresh_site_state, new_project

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ddev").write_text(f"#!{sys.executable}\n" + STUB_SOURCE.read_text("utf-8"))
    (bin_dir / "ddev").chmod(0o755)
    stub = Stub(tmp_path)
    stub_env = {"APG_STUB_DDEV_SCENARIO": str(stub.scenario), "APG_STUB_DDEV_LOG": str(stub.log),
                "APG_STUB_DDEV_LIB": str(STUB_SOURCE.parent)}
    (bin_dir / "ddev-stub.json").write_text(json.dumps(stub_env))
    (tmp_path / "home").mkdir()
    # The node's own: the stub on PATH, a HOME holding the project's baselines; a Ray worker
    # finds its cluster's token in HOME unless told where.
    token = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.expanduser("~/.ray/auth_token")
    env = {**stub_env, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "HOME": str(tmp_path / "home"), **({"RAY_AUTH_TOKEN_PATH": token}
                                              if os.path.isfile(token) else {})}
    driver_env = {**env, "AI_PG_SITE_DRIVER": "ddev",
                  **{f"GIT_{who}_{what}": "t" for who in ("AUTHOR", "COMMITTER")
                     for what in ("NAME", "EMAIL")}}
    for name, value in driver_env.items():
        monkeypatch.setenv(name, value)
    bed = new_project(ddev_root / "bed")
    (tmp_path / "site-state.json").write_text(json.dumps(fresh_site_state()))
    stub.use_site(tmp_path / "site-state.json")
    assert apg("provision", "--approot", str(bed), "kb_docs").rc == 0
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "ddev-ray", "dataset": str(EXAMPLE.parents[1] / "datasets" / "build_tasks.yml"),
        "tasks": ["dv01_view_build"], "arms": {"plain": {}}, "agents": ["nop", "oracle"],
        "repeats": 1, "seed": 19, "fixtures": ["kb_docs"], "ddev_beds": [str(bed)]})
    # What the local executor records for this project, read here before the driver may not.
    campaign = resolve(load_spec(spec), Settings.from_environ(os.environ))
    local = provenance.collect(campaign, bed, beds.job_settings(
        Settings.from_environ(os.environ), campaign), os.environ)
    register("ray-node", lambda context, jobs: NodeEnv(context, jobs, env),
             beds_from=ray_executor)
    # The node's facts are read in its environment, as its actors run.
    monkeypatch.setattr(sys.modules["apg_test_executor_ray-node"], "collect_bed_facts",
                        lambda campaign, settings, address, count: ray_provenance.collect(
                            campaign, list(campaign.spec.ddev_beds[:count]), settings, address,
                            runtime_env={"env_vars": env}))
    no_bed_made_here(monkeypatch)
    no_project_read_here(monkeypatch)
    out = tmp_path / "out"
    with driver_watching(bed) as touched:  # it sees what this process reads there
        (bed / ".ddev" / "config.yaml").read_text("utf-8")
    assert touched == [f"open {os.path.realpath(bed / '.ddev' / 'config.yaml')}"], touched
    with driver_watching(bed) as touched:
        run_campaign(apg, spec, out, "--executor", "ray-node")
    assert touched == [], touched[:10]
    # campaign.json's provenance is the node's reading, equal to the local executor's.
    recorded = json.loads((out / "campaign.json").read_text("utf-8"))["provenance"]
    assert recorded == local
    assert sorted((r["agent"], r["outcome"]) for r in attempts(out)) == [("nop", "fail"),
                                                                          ("oracle", "pass")]
    setup = json.loads((out / "setup.json").read_text("utf-8"))
    assert [(j["bed"], j["escrow"]) for j in setup["jobs"]] == [
        (str(bed), "made where its executor runs the job")]
    # As a runner killed mid-attempt leaves it: an attempt unrecorded, a recipe in the project
    # (judged code: the grader tree differs until the project is reset).
    whole = untimed(out)
    (out / "runs" / "0001" / "attempt.json").unlink()
    (out / "report.json").unlink()
    (bed / "recipes" / "half_done").mkdir(parents=True)
    (bed / "recipes" / "half_done" / "recipe.yml").write_text("name: half done\n")
    with driver_watching(bed) as touched:
        result = apg("campaign", "resume", str(out), "--executor", "ray-node")
    assert result.rc == 0, result.err
    assert touched == [], touched[:10]
    assert untimed(out) == whole
    assert not (bed / "recipes" / "half_done").exists()
    # An adapter of the project's own (.ddev/agents), with a CLI its header names, as the node
    # reads it: its file's hash and the CLI's version on the node's PATH, as read here.
    mine = bed / ".ddev" / "agents" / "mine"
    mine.parent.mkdir(exist_ok=True)
    mine.write_text("#!/bin/sh\n## Credentials: none\n## Commands: git\nexit 0\n")
    mine.chmod(0o755)
    spec = write_spec(tmp_path / "mine.yml", {**yaml.safe_load(spec.read_text("utf-8")),
                                               "agents": ["nop", "mine"]})
    campaign = resolve(load_spec(spec), Settings.from_environ(os.environ))
    settings = beds.job_settings(Settings.from_environ(os.environ), campaign)
    monkeypatch.undo()  # the driver may read it now, to compare (in the node's environment)
    for name, value in driver_env.items():
        monkeypatch.setenv(name, value)
    here = provenance.bed_facts(campaign, bed, settings, os.environ)
    assert here["adapters"]["mine"]["source"] == "bed", here["adapters"]
    assert here["adapters"]["mine"]["commands"]["git"]["status"] == "ok"
    assert ray_provenance.collect(campaign, [bed], settings, None,
                                  runtime_env={"env_vars": env})[1] == here


def test_ddev_projects_whose_nodes_read_other_facts_refuse_the_campaign() -> None:
    """Every project's facts must be the first's but for paths and commits; one that differs is
    refused naming its node, its project and each fact."""
    facts = {"set_key": "k", "baseline": {"tag": "apg-baseline-k", "commit": "c1"},
             "grader_tree_sha256": "a" * 64,
             "adapters": {"nop": {"path": "/srv/a/.ddev/agents/nop", "source": "bed",
                                  "sha256": "b" * 64, "commands": {}}}}
    first = ray_provenance.NodeFacts("node-a", "/srv/a", "apg-baseline-k", facts)
    moved = {**facts, "baseline": {"tag": "apg-baseline-k", "commit": "c2"},
             "adapters": {"nop": {**facts["adapters"]["nop"], "path": "/srv/b/.ddev/agents/nop"}}}
    same = ray_provenance.NodeFacts("node-b", "/srv/b", "apg-baseline-k", moved)
    assert ray_provenance.agreed([first, same]) == ("apg-baseline-k", facts)
    other = {**moved, "grader_tree_sha256": "c" * 64,
             "adapters": {"nop": {**moved["adapters"]["nop"], "sha256": "d" * 64}}}
    with pytest.raises(ApgError) as refused:
        ray_provenance.agreed([first, ray_provenance.NodeFacts("node-b", "/srv/b", "t", other)])
    assert refused.value.token == "APG_CAMPAIGN_RAY_NODES_DIFFER"
    assert refused.value.message.startswith(
        "the DDEV project /srv/b on the node node-b differs from /srv/a on the node node-a: "
        "adapters.nop.sha256 (bbbbbbbbbbbb… -> dddddddddddd…); grader_tree_sha256 "
        "(aaaaaaaaaaaa… -> cccccccccccc…)"), refused.value.message
    # A node that could not read its project refuses as the local runner would, naming it.
    with pytest.raises(beds.CannotRun, match=r"^on the node node-b: /srv/b \(ddev_beds\) is not"):
        ray_provenance.agreed([first, ray_provenance.NodeFacts("node-b", "/srv/b", refused=(
            "APG_CAMPAIGN_CANNOT_RUN", "/srv/b (ddev_beds) is not a DDEV project", 1))])


def test_a_ddev_project_no_node_declares_stops_the_campaign_in_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ray_provenance, "FACTS_TIMEOUT_S", 1.0)
    with pytest.raises(ApgError) as refused:
        ray_provenance.collect(None, [tmp_path / "nowhere"], Settings(),  # type: ignore[arg-type]
                               None)
    assert refused.value.token == "APG_CAMPAIGN_RAY_NO_FACTS"
    assert refused.value.message.startswith(
        f"no node read the DDEV project(s) {tmp_path / 'nowhere'} in 1s: a node must declare "
        f"each project it holds (ray start --resources='{{\"bed\": 1, \"ddev:{tmp_path}/nowhere"
        '\": 1}\''), refused.value.message
