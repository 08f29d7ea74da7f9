"""The Ray executor (``executor: ray``, ``--executor ray [--address ADDR]``): one actor per bed.

Each job becomes one Ray actor that receives the job's prepared bed once (cloned, escrowed and
reset by the runner, as for the local executor) and then takes that job's attempts one at a
time, running the same bed work (:func:`executors.base.run_on_bed`) in its own process, with a
campaign context of its own (its stop flag, its children). Every actor holds one unit of the
custom ``bed`` resource for its life, so a node never holds more attempts than the beds it
declares (``ray start --resources='{"bed": N}'``). The records are the local executor's, written
under the campaign directory's own path: on one machine that is the driver's directory; across
machines the campaign and beds folders must be the same shared path on every node (README, Ray).

Without ``--address`` the executor starts a local cluster bound to 127.0.0.1 (no dashboard) with
as many ``bed`` units as jobs, and stops it at the end; with one it joins that cluster. A Ray
already initialised in this process (a test's cluster) is used as it is and left running.

No remote wait is unbounded: results are polled with ``ray.wait(..., timeout=...)`` and read
with ``ray.get(..., timeout=...)``; an attempt still running :data:`ATTEMPT_MARGIN_S` past its
agent's timeout has its actor killed. An actor lost mid-attempt (killed, its node gone) gives
that attempt an infrastructure error, recorded by the driver. With the spec's ``retries:
{infra_error: N}`` it is tried again (campaigns.retry: the lost try kept in ``tries/``) on a fresh
clone of the template in a new actor, which Ray places on any node with a free bed; otherwise
(or when no fresh bed can be made) its job takes no more attempts (``APG_CAMPAIGN_JOB_LOST``)
and the other jobs go on.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground.campaigns import beds, retry
from ai_proving_ground.campaigns.attempt import AttemptRun, Context, SiteStep
from ai_proving_ground.campaigns.records import AttemptRecord, CampaignFiles
from ai_proving_ground.campaigns.spec import Attempt, Campaign
from ai_proving_ground.errors import ApgError
from ai_proving_ground.executors.base import Finished, run_on_bed

BED = "bed"  # the custom resource: one unit per bed a node can hold
GET_TIMEOUT_S = 60.0  # reading a result Ray says is ready, or a call on an idle actor
ACTOR_START_S = 120.0  # every bed actor placed on a node and built (the campaign's start)
# How long past the agent's own timeout an attempt may run (reset, verify, grade, hidden
# verifier) before its actor is taken for lost; without an agent timeout, this alone.
ATTEMPT_MARGIN_S = 1800.0


@dataclass(frozen=True)
class _Outcome:
    """What an actor hands back for one attempt: plain data, never the actor's own objects."""

    record: AttemptRecord | None
    lost: str | None
    error: str | None


class BedWorker:
    """One job's bed in a Ray actor process (made a remote class by :func:`_actor_class`)."""

    def __init__(self, campaign: Campaign, directory: str, template: str, settings: Any,
                 site_step: SiteStep, job: beds.Job) -> None:
        self._context = Context(campaign=campaign, files=CampaignFiles(Path(directory)),
                                template=Path(template), settings=settings, site_step=site_step)
        self._job = job

    def ready(self) -> str:
        return self._job.name

    def run(self, attempt: Attempt, earlier: list[dict[str, Any]]) -> _Outcome:
        try:
            finished = run_on_bed(self._context, self._job, attempt, earlier)
        except BaseException as exc:  # a bug: reported by name, the job stops
            return _Outcome(None, None, f"{type(exc).__name__}: {exc}")
        error = finished.error
        return _Outcome(finished.record, finished.lost,
                        None if error is None else f"{type(error).__name__}: {error}")

    def cancel(self) -> None:
        self._context.stop.set()
        self._context.children.interrupt_all()


def _actor_class(ray: Any) -> Any:
    # max_concurrency 2: a cancel reaches the actor while its attempt runs.
    return ray.remote(max_concurrency=2)(BedWorker)


@dataclass
class _Running:
    job: beds.Job
    attempt: Attempt
    ref: Any
    deadline: float


class RayExecutor:
    """:class:`executors.base.Executor` on Ray actors, one per job."""

    def __init__(self, context: Context, jobs: list[beds.Job], address: str | None) -> None:
        import ray  # for start-up time and an optional extra: only when this executor runs

        self._ray, self._context = ray, context
        self._started = not ray.is_initialized()
        if self._started:
            _connect(ray, address, len(jobs))
        self._worker = _actor_class(ray)
        self._actors: dict[int, Any] = {}
        for job in jobs:
            self._start_actor(job)
        self._await_actors()
        agent = context.campaign.spec.agent_timeout_s
        self._budget = (agent or 0.0) + ATTEMPT_MARGIN_S
        self._running: dict[Any, _Running] = {}
        self._earlier: dict[int, list[dict[str, Any]]] = {}  # tries lost with their actor
        self._lock = threading.Lock()

    def _await_actors(self) -> None:
        """Every actor placed and built within :data:`ACTOR_START_S`, else the campaign stops
        (a cluster short of ``bed`` units would leave them pending for ever)."""
        ray, refs = self._ray, [actor.ready.remote() for actor in self._actors.values()]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=ACTOR_START_S)
        problem = f"{len(refs) - len(ready)} of {len(refs)} did not start in {ACTOR_START_S:g}s"
        if len(ready) == len(refs):
            try:
                ray.get(ready, timeout=GET_TIMEOUT_S)
                return
            except ray.exceptions.RayError as exc:
                problem = f"one failed to start: {exc}"
        self.close()
        raise ApgError("APG_CAMPAIGN_RAY_NO_BED", f"{len(refs)} bed actors wanted, {problem}: "
                       "the cluster needs a free 'bed' unit per job (ray start "
                       "--resources='{\"bed\": N}' on each node) and this package on every node",
                       exit_code=1)

    def _start_actor(self, job: beds.Job) -> None:
        # The driver's handle on the bed (a site driver) stays here; the actor opens its own.
        shipped, context = dataclasses.replace(job, _site=None), self._context
        self._actors[job.number] = self._worker.options(resources={BED: 1}, num_cpus=0).remote(
            context.campaign, str(context.files.directory), str(context.template),
            context.settings, context.site_step, shipped)

    def submit(self, job: beds.Job, attempt: Attempt,
               earlier: list[dict[str, Any]] | None = None) -> None:
        ref = self._actors[job.number].run.remote(attempt, earlier or [])
        with self._lock:
            self._running[ref] = _Running(job, attempt, ref, time.monotonic() + self._budget)

    def collect(self, timeout: float) -> list[Finished]:
        with self._lock:
            refs = list(self._running)
        if not refs:
            if timeout > 0:
                time.sleep(min(timeout, 0.1))
            return []
        ready, _ = self._ray.wait(refs, num_returns=len(refs), timeout=timeout)
        with self._lock:
            taken = [self._running.pop(ref) for ref in ready]
        got = [f for f in map(self._take, taken) if f is not None]
        now = time.monotonic()
        for running in [r for r in self._running.values() if r.deadline < now]:
            # Past every budget: taken for lost; its result arrives as an actor error.
            self._ray.kill(self._actors[running.job.number], no_restart=True)
        return got

    def _take(self, running: _Running) -> Finished | None:
        ray = self._ray
        try:
            outcome: _Outcome = ray.get(running.ref, timeout=GET_TIMEOUT_S)
        except (ray.exceptions.RayActorError, ray.exceptions.GetTimeoutError) as exc:
            return self._lost(running, f"its bed actor was lost mid-attempt ({type(exc).__name__})")
        except ray.exceptions.RayTaskError as exc:
            return Finished(running.job, running.attempt, None, error=RuntimeError(str(exc)))
        error = None if outcome.error is None else RuntimeError(outcome.error)
        return Finished(running.job, running.attempt, outcome.record, outcome.lost, error)

    def _lost(self, running: _Running, why: str) -> Finished | None:
        """The attempt's infra_error, recorded here; tried again, when the spec's retries allow,
        on a fresh clone of the template in a new actor (placed on any node with a free bed):
        then None, its result to come."""
        job, attempt, context = running.job, running.attempt, self._context
        earlier = self._earlier.pop(attempt.order, [])
        record = AttemptRun(context, job, attempt, earlier).fail(why)
        if job.ddev or not retry.again(context, record):  # a DDEV project has no fresh clone
            return Finished(job, attempt, record, lost=why)
        tries = retry.keep_try(context, record)
        try:
            beds.replace_bed(context.campaign, context.template, job, f"lost-{attempt.order:04d}")
        except (OSError, ApgError) as exc:
            return Finished(job, attempt, record, lost=f"{why}; could not replace its bed: {exc}")
        self._start_actor(job)
        self._earlier[attempt.order] = tries
        self.submit(job, attempt, tries)
        return None

    def busy(self) -> bool:
        with self._lock:
            return bool(self._running)

    def cancel(self) -> None:
        self._context.stop.set()
        with self._lock:
            jobs = [r.job.number for r in self._running.values()]
        for number in jobs:
            self._actors[number].cancel.remote()  # fire and forget: its result is the attempt's

    def close(self) -> None:
        for actor in self._actors.values():
            self._ray.kill(actor, no_restart=True)
        self._actors.clear()
        if self._started:
            self._ray.shutdown()


def _connect(ray: Any, address: str | None, beds_wanted: int) -> None:
    """Join the cluster at ``address``, else start a local one on the loopback only."""
    try:
        if address is None:
            ray.init(address="local", include_dashboard=False, _node_ip_address="127.0.0.1",
                     num_cpus=max(1, beds_wanted), resources={BED: beds_wanted},
                     log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = address or "a local cluster"
        raise ApgError("APG_CAMPAIGN_RAY_UNREACHABLE", f"cannot start or join Ray at {where}: "
                       f"{exc}; pass --address of a running cluster (ray start --head)",
                       exit_code=1) from exc


def open_executor(context: Context, jobs: list[beds.Job], address: str | None = None) -> RayExecutor:
    """(The runner's preflight has refused a campaign with no Ray installed: registry.missing.)"""
    return RayExecutor(context, jobs, address)
