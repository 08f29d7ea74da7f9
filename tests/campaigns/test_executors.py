"""The executor seam: the runner reaches the attempts only through the executor the registry
names (the spec's ``executor`` or ``--executor``), and an interrupt reaches it as a cancel.

A recording executor, registered here for the test only, logs every call the runner makes; one
runs each attempt itself on the calling thread (no pool at all), one wraps the local executor.
"""

from __future__ import annotations

import subprocess
import sys
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from campaign_kit import attempts, reference_steps, write_spec

from ai_proving_ground.campaigns import beds
from ai_proving_ground.campaigns.attempt import Context
from ai_proving_ground.campaigns.spec import Attempt
from ai_proving_ground.executors import registry
from ai_proving_ground.executors.base import Finished, run_on_bed
from ai_proving_ground.executors.local import LocalExecutor
from ai_proving_ground.paths import PROJECT_ROOT

Calls = list[tuple[Any, ...]]


def spec_body(template: Path, agents: list[str], **extra: Any) -> dict[str, Any]:
    return {"name": "seam", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
            "arms": {"plain": {}, "solved": {"setup": reference_steps()}}, "agents": agents,
            "repeats": 1, "seed": 7, "jobs": 2, "bed": str(template), **extra}


class InlineExecutor:
    """Runs each submitted attempt at once, on the runner's own thread, and logs every call."""

    def __init__(self, context: Context, jobs: list[beds.Job], calls: Calls,
                 interrupt_at: int | None) -> None:
        self.context, self.calls, self.interrupt_at = context, calls, interrupt_at
        self.done: list[Finished] = []
        calls.append(("open", [job.number for job in jobs]))

    def submit(self, job: beds.Job, attempt: Attempt) -> None:
        self.calls.append(("submit", job.number, attempt.order))
        self.done.append(run_on_bed(self.context, job, attempt))

    def collect(self, timeout: float) -> list[Finished]:
        got, self.done = self.done, []
        self.calls.append(("collect", [f.attempt.order for f in got]))
        if len(self.calls) == self.interrupt_at:  # Ctrl-C while the runner waits here
            self.done = got  # nothing taken: what finished is still to be collected
            raise KeyboardInterrupt
        return got

    def busy(self) -> bool:
        return False

    def cancel(self) -> None:
        self.calls.append(("cancel",))
        self.context.stop.set()

    def close(self) -> None:
        self.calls.append(("close",))


class WrappedLocal(LocalExecutor):
    """The local executor, with a Ctrl-C once the adapter (``hangs``) is running."""

    def __init__(self, context: Context, jobs: list[beds.Job], calls: Calls) -> None:
        super().__init__(context, jobs)
        self.calls, self.runs, self.fired = calls, context.files.directory / "runs", False

    def collect(self, timeout: float) -> list[Finished]:
        got = super().collect(timeout)
        self.calls.append(("collect", [f.attempt.order for f in got]))
        if not self.fired and list(self.runs.glob("*/agent.log")):  # opened for the adapter
            self.fired = True
            time.sleep(1)  # the adapter is under way, not starting
            raise KeyboardInterrupt
        return got

    def cancel(self) -> None:
        self.calls.append(("cancel",))
        super().cancel()


@pytest.fixture
def register(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """``add(name, factory, beds_from=None)``: an executor module whose ``open_executor`` is
    ``factory``; its beds are made (and their facts read) as ``beds_from``'s (an executor
    module) are, else locally."""
    def add(name: str, factory: Callable[..., Any], beds_from: Any = None) -> None:
        module = types.ModuleType(f"apg_test_executor_{name}")
        module.open_executor = factory  # type: ignore[attr-defined]
        if beds_from is not None:
            module.prepare_jobs = beds_from.prepare_jobs  # type: ignore[attr-defined]
            module.BEDS_ON_NODES = beds_from.BEDS_ON_NODES  # type: ignore[attr-defined]
            if hasattr(beds_from, "collect_bed_facts"):  # the beds' facts read where they are
                module.collect_bed_facts = beds_from.collect_bed_facts  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module.__name__, module)
        monkeypatch.setitem(registry.EXECUTORS, name, module.__name__)

    yield add


def test_the_runner_goes_only_through_the_executor_the_spec_names(
        apg: Any, tmp_path: Path, template: Path, register: Any) -> None:
    calls: Calls = []
    register("inline", lambda context, jobs: InlineExecutor(context, jobs, calls, None))
    spec = write_spec(tmp_path / "spec.yml", spec_body(template, ["nop"], executor="inline"))
    out = tmp_path / "out"
    result = apg("campaign", "run", str(spec), "--out", str(out), "--beds", str(tmp_path / "beds"))
    assert result.rc == 0, result.err
    records = attempts(out)
    assert {(r["arm"], r["outcome"]) for r in records} == {("plain", "fail"), ("solved", "pass")}
    # Both jobs get an attempt in plan order; nothing else is submitted; all is collected once.
    assert calls == [("open", [0, 1]), ("submit", 0, 0), ("submit", 1, 1), ("collect", [0, 1]),
                     ("collect", []), ("close",)]
    assert result.err.count("APG_CAMPAIGN_ATTEMPT") == 2 and "2/2 done (1 pass, 1 fail)" in result.err


def test_an_interrupt_reaches_the_executor_as_a_cancel(
        apg: Any, tmp_path: Path, template: Path, register: Any) -> None:
    calls: Calls = []
    register("inline", lambda context, jobs: InlineExecutor(context, jobs, calls, 3))
    spec = write_spec(tmp_path / "spec.yml", spec_body(template, ["nop"], jobs=1))
    out = tmp_path / "out"
    result = apg("campaign", "run", str(spec), "--out", str(out), "--beds",
                 str(tmp_path / "beds"), "--executor", "inline")
    assert result.rc == 130, result.err
    assert "APG_INTERRUPTED stopping" in result.err
    # The first attempt was collected after the cancel; the second was never submitted, and an
    # interrupted campaign does not record it as lacking a bed.
    assert calls == [("open", [0]), ("submit", 0, 0), ("collect", [0]), ("cancel",),
                     ("collect", [0]), ("collect", []), ("close",)]
    assert [r["order"] for r in attempts(out)] == [0]
    # Interrupted or not, the beds go at the end and the line says so.
    assert f"APG_CAMPAIGN_BEDS_REMOVED {tmp_path / 'beds'}" in result.err.splitlines()
    assert not (tmp_path / "beds").exists()


def test_the_local_executor_cancel_stops_the_running_agent(
        apg: Any, tmp_path: Path, template: Path, register: Any) -> None:
    calls: Calls = []
    register("wrapped", lambda context, jobs: WrappedLocal(context, jobs, calls))
    spec = write_spec(tmp_path / "spec.yml", spec_body(template, ["hangs"], jobs=1,
                                                       executor="wrapped"))
    out = tmp_path / "out"
    started = time.monotonic()
    result = apg("campaign", "run", str(spec), "--out", str(out), "--beds", str(tmp_path / "beds"))
    assert result.rc == 130, result.err
    assert time.monotonic() - started < 50, "the agent (sleep 60) was not stopped"
    assert ("cancel",) in calls
    [record] = attempts(out)
    assert record["outcome"] == "infra_error" and "interrupted" in record["reason"], record


@pytest.mark.parametrize(("where", "token", "position"), [
    ("spec", "APG_CAMPAIGN_SPEC_INVALID", "$.executor"), ("option", "APG_USAGE", "--executor")])
def test_an_unknown_executor_is_refused_with_the_known_names(
        apg: Any, tmp_path: Path, template: Path, where: str, token: str, position: str) -> None:
    extra = {"executor": "cluster"} if where == "spec" else {}
    spec = write_spec(tmp_path / "spec.yml", spec_body(template, ["nop"], **extra))
    out = tmp_path / "out"
    args = ["--executor", "cluster"] if where == "option" else []
    result = apg("campaign", "run", str(spec), "--out", str(out), "--dry-run", *args)
    assert result.rc == 2, result.err
    assert token in result.err and position in result.err and "known: local, ray" in result.err
    assert result.out == "" and not out.exists()


def test_the_registry_imports_an_executor_only_when_it_is_looked_up() -> None:
    # The local executor, the default, needs no Ray: checking the ray executor's extra (as every
    # run's preflight does) imports neither its module nor ray, whether the extra is installed
    # (the check passes) or not (it refuses, as the tests-matrix sessions, without the extra, see).
    code = ("import sys, ai_proving_ground.executors.registry as r\n"
            "from ai_proving_ground.errors import ApgError\n"
            "try:\n    r.check_usable('ray', None)\n"
            "except ApgError as exc:\n    assert exc.token == 'APG_CAMPAIGN_EXECUTOR_MISSING'\n"
            "print('ai_proving_ground.executors.local' in sys.modules, r.DEFAULT in r.EXECUTORS, "
            "'ray' in sys.modules, 'ai_proving_ground.executors.ray_executor' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=PROJECT_ROOT)
    assert done.stdout.split() == ["False", "True", "False", "False"]


def test_an_address_is_refused_for_an_executor_that_joins_no_cluster(
        apg: Any, tmp_path: Path, template: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", spec_body(template, ["nop"]))
    out = tmp_path / "out"
    result = apg("campaign", "run", str(spec), "--out", str(out), "--dry-run",
                 "--address", "127.0.0.1:6379")
    assert result.rc == 2, result.err
    assert "APG_USAGE --address is for the executors that join a cluster (ray), not 'local'" \
        in result.err and not out.exists()


def test_an_executor_whose_extra_is_absent_is_refused_before_anything_is_written(
        apg: Any, tmp_path: Path, template: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As on a machine without the ray extra: its module is not found.
    monkeypatch.setitem(registry.REQUIRES, "ray", ("apg_no_such_module", "ray"))
    spec = write_spec(tmp_path / "spec.yml", spec_body(template, ["nop"], executor="ray"))
    out = tmp_path / "out"
    result = apg("campaign", "run", str(spec), "--out", str(out))
    assert result.rc == 2, result.err
    assert "APG_CAMPAIGN_EXECUTOR_MISSING" in result.err
    assert "pip install 'ai-proving-ground[ray]'" in result.err and not out.exists()
