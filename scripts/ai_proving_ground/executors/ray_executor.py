"""The Ray executor (``executor: ray``, ``--executor ray [--address ADDR]``): one actor per bed.

Each job becomes one Ray actor holding one unit of the custom ``bed`` resource for its life, so
a node never holds more attempts than the beds it declares (``ray start --resources='{"bed":
N}'``). The driver makes no bed (:func:`prepare_jobs` only plans the jobs): the actor makes its
own on its node, in a scratch folder of the node's temporary directory: a fresh clone of the
campaign's template (a DDEV job: its project, which must be on that node: :func:`node_resource`,
first reset to its baseline there, as a resume needs after a killed run), escrowed there and
reset; a bed whose fingerprints (provenance.NODE_KEYS) differ from the campaign record's is
refused (:data:`BED_DIFFERS`). Then it takes that job's attempts one at a time, running the
local executor's bed work (:func:`executors.base.run_on_bed`) with a campaign directory of its
own in that scratch folder. Each attempt's files come back to the driver as data
(:mod:`executors.attempt_files`, bounded, every path and record checked) and the driver writes
them under its campaign directory: no actor reads or writes the driver's campaign
directory, so nodes share no filesystem with it; the agent's sandbox hides it as well, for a
node that is the driver's own machine. The template, the dataset, skill folders, hidden
verifiers and custom fixtures are read by the actors at the paths the driver names (README, Ray).

Without ``--address`` the executor starts a local cluster bound to 127.0.0.1 (no dashboard) with
as many ``bed`` units as jobs, and stops it at the end; with one it joins that cluster. A Ray
already initialised in this process (a test's cluster) is used as it is and left running.

No remote wait is unbounded: results are polled with ``ray.wait(..., timeout=...)`` and read
with ``ray.get(..., timeout=...)``; an attempt still running :data:`ATTEMPT_MARGIN_S` past its
agent's timeout has its actor killed. An actor lost mid-attempt (killed, its node gone) gives
that attempt an infrastructure error, recorded by the driver. With the spec's ``retries:
{infra_error: N}`` it is tried again (campaigns.retry: the lost try kept in ``tries/``) in a new
actor, which Ray places on any node with a free bed and which makes a fresh bed; otherwise (or
for a DDEV job, whose project cannot be cloned) its job takes no more attempts
(``APG_CAMPAIGN_JOB_LOST``) and the other jobs go on.
"""

from __future__ import annotations

import dataclasses
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground.campaigns import beds, provenance, retry
from ai_proving_ground.campaigns.attempt import AttemptRun, Context, SiteStep
from ai_proving_ground.campaigns.records import AttemptRecord, CampaignFiles, read_campaign
from ai_proving_ground.campaigns.spec import Attempt, Campaign
from ai_proving_ground.errors import ApgError
from ai_proving_ground.executors import attempt_files, ray_provenance
from ai_proving_ground.executors.base import Finished, run_on_bed
from ai_proving_ground.executors.ray_cluster import BED, GET_TIMEOUT_S, connect, disconnect, node_resource
from ai_proving_ground.layout import is_ddev_project
from ai_proving_ground.settings import Settings

ACTOR_START_S = 120.0  # every bed actor placed on a node, its bed made (the campaign's start)
# How long past the agent's own timeout an attempt may run (reset, verify, grade, hidden
# verifier) before its actor is taken for lost; without an agent timeout, this alone.
ATTEMPT_MARGIN_S = 1800.0
PROJECT_ABSENT = "APG_CAMPAIGN_RAY_PROJECT_ABSENT"
BED_DIFFERS = "APG_CAMPAIGN_RAY_BED_DIFFERS"
# Each actor makes its bed on its node (executors.base): the driver only plans the jobs.
BEDS_ON_NODES = True


def prepare_jobs(campaign: Campaign, template: Path, tag: str, bed_root: Path, escrow_root: Path,
                 count: int, settings: Settings) -> list[beds.Job]:
    """The jobs, planned, no bed made or touched here: each actor makes its own (a DDEV job's
    bed is its project's path on the node that declares it; an embedded job's, a clone in the
    actor's scratch folder, so ``bed_root`` stays empty)."""
    projects = list(campaign.spec.ddev_beds[:count])
    return [beds.Job(number=n, bed=projects[n] if projects else bed_root / f"job-{n}",
                     escrow_root=escrow_root / f"job-{n}", settings=settings, tag=tag)
            for n in range(count)]


def collect_bed_facts(campaign: Campaign, settings: Settings, address: str | None,
                      count: int) -> tuple[str, dict[str, Any]] | None:
    """A DDEV campaign's baseline tag and bed facts, read on its projects' nodes
    (:mod:`executors.ray_provenance`); None for embedded beds (the driver reads its template)."""
    projects = list(campaign.spec.ddev_beds[:count])
    return ray_provenance.collect(campaign, projects, settings, address) if projects else None


@dataclass(frozen=True)
class _Outcome:
    """What an actor hands back for one attempt: plain data, never the actor's own objects.
    ``carried``: the attempt's files (None: it never ran, or the bed work broke first)."""

    carried: attempt_files.Carried | None
    lost: str | None
    error: str | None


class BedWorker:
    """One job's bed in a Ray actor process (made a remote class by :func:`_actor_class`).
    ``scratch_root``: where its scratch folder goes (None: the node's temporary directory)."""

    def __init__(self, campaign: Campaign, template: str, settings: Settings,
                 site_step: SiteStep, job: beds.Job, scratch_root: str | None = None,
                 expected: Mapping[str, Any] | None = None) -> None:
        # The campaign's fingerprints (provenance.fingerprints) the bed made here must match.
        self._expected = dict(expected or {})
        if scratch_root is not None:
            Path(scratch_root).mkdir(parents=True, exist_ok=True)
        self._scratch = Path(tempfile.mkdtemp(prefix=f"apg-ray-{job.name}-", dir=scratch_root))
        self._context = Context(campaign=campaign, files=CampaignFiles(self._scratch / "campaign"),
                                template=Path(template), settings=settings, site_step=site_step)
        self._job = dataclasses.replace(job, escrow_root=self._scratch / "escrow")

    def ready(self) -> tuple[str, str | None]:
        """The bed this actor made (its path on its node), and None, or why it could not."""
        job, campaign = self._job, self._context.campaign
        if job.ddev:
            if not is_ddev_project(job.bed):
                return str(job.bed), (
                    f"{PROJECT_ABSENT} {job.name}: the DDEV project {job.bed} is not on the node "
                    f"{socket.gethostname()} its actor was placed on; declare each project only "
                    f"on its own node (ray start --resources='{{\"{BED}\": 1, "
                    f"\"{node_resource(job.bed)}\": 1}}')")
            try:  # back to its baseline first: a killed run leaves it as its agent did
                beds.reset_ddev_beds(campaign, [job.bed], job.settings)
            except beds.CannotRun as exc:
                return str(job.bed), f"{job.name}: {exc}"
            return str(job.bed), beds.ready_ddev_job(campaign, job) or self._differs()
        self._job = job = dataclasses.replace(job, bed=self._scratch / "beds" / job.name)
        problem = beds.prepare_job(campaign, self._context.template, job)
        return str(job.bed), problem or self._differs()

    def _differs(self) -> str | None:
        """Why the bed made here is not the campaign's (provenance.NODE_KEYS), or None."""
        if not self._expected:
            return None
        job = self._job
        try:
            found = provenance.bed_fingerprints(job.bed, self._context.campaign.fixtures,
                                                job.settings)
        except ApgError as exc:
            return f"{BED_DIFFERS} {job.name}: the bed {job.bed} has no readable baseline: {exc}"
        changed = provenance.bed_changes(self._expected, found)
        if not changed:
            return None
        return (f"{BED_DIFFERS} {job.name}: the bed {job.bed} on the node "
                f"{socket.gethostname()} differs from the campaign's: {'; '.join(changed)}; give "
                "every node the same template or project, provisioned the same, and the same "
                "version of this package (README: Ray)")

    def run(self, attempt: Attempt, earlier: list[dict[str, Any]]) -> _Outcome:
        files = self._context.files
        try:
            finished = run_on_bed(self._context, self._job, attempt, earlier)
            carried = None if finished.record is None else attempt_files.pack(files, attempt.order)
        except BaseException as exc:  # a bug: reported by name, the job stops
            return _Outcome(None, None, f"{type(exc).__name__}: {exc}")
        finally:  # the driver holds the attempt's files from now on
            shutil.rmtree(files.attempt_dir(attempt.order), ignore_errors=True)
        error = finished.error
        return _Outcome(carried, finished.lost,
                        None if error is None else f"{type(error).__name__}: {error}")

    def cancel(self) -> None:
        self._context.stop.set()
        self._context.children.interrupt_all()

    def release(self) -> None:
        """The bed, its escrow and the scratch folder removed (the campaign is over)."""
        shutil.rmtree(self._scratch, ignore_errors=True)


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

    def __init__(self, context: Context, jobs: list[beds.Job], address: str | None,
                 scratch_root: str | None = None) -> None:
        import ray  # for start-up time and an optional extra: only when this executor runs

        self._ray, self._context, self._scratch_root = ray, context, scratch_root
        self._started = connect(ray, address, len(jobs), [job.bed for job in jobs if job.ddev])
        self._worker = self._worker_class(ray)
        # What each actor's bed must match: the campaign record's fingerprints (a resume's too).
        found = provenance.fingerprints(read_campaign(context.files).as_json())
        self._expected = {key: found.get(key) for key in provenance.NODE_KEYS}
        self._actors: dict[int, Any] = {}
        self.beds: dict[int, str] = {}  # each job's bed as its actor made it (on its node)
        self._answered: set[int] = set()  # jobs whose actor answered ready() (its scratch exists)
        for job in jobs:
            self._start_actor(job)
        self._await_actors(list(self._actors))
        agent = context.campaign.spec.agent_timeout_s
        self._budget = (agent or 0.0) + ATTEMPT_MARGIN_S
        self._running: dict[Any, _Running] = {}
        self._earlier: dict[int, list[dict[str, Any]]] = {}  # tries lost with their actor
        self._lock = threading.Lock()

    def _worker_class(self, ray: Any) -> Any:
        return _actor_class(ray)

    def _await_actors(self, numbers: list[int]) -> None:
        """Every actor placed and its bed made within :data:`ACTOR_START_S`, else the campaign
        stops (a cluster short of ``bed`` units would leave them pending for ever)."""
        problem = self._made(numbers)
        if problem is not None:
            self.close()
            raise ApgError("APG_CAMPAIGN_RAY_NO_BED", problem, exit_code=1)

    def _made(self, numbers: list[int]) -> str | None:
        """None when the actors of jobs ``numbers`` made their beds (then in :attr:`beds`)."""
        ray, refs = self._ray, [self._actors[n].ready.remote() for n in numbers]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=ACTOR_START_S)
        # Those that answered hold a scratch folder to release, whatever the others do.
        self._answered.update(n for n, ref in zip(numbers, refs, strict=True) if ref in ready)
        if len(ready) < len(refs):
            return (f"{len(refs)} bed actors wanted, {len(refs) - len(ready)} of {len(refs)} did "
                    f"not start in {ACTOR_START_S:g}s: the cluster needs a free 'bed' unit per "
                    "job (ray start --resources='{\"bed\": N}' on each node; a DDEV job also "
                    "its project's resource, README: Ray) and this package on every node")
        try:
            made: list[tuple[str, str | None]] = ray.get(refs, timeout=GET_TIMEOUT_S)
        except ray.exceptions.RayError as exc:
            return f"{len(refs)} bed actors wanted, one failed to start: {exc}"
        problems = [why for _, why in made if why]
        if problems:
            return f"a bed actor could not make its bed: {'; '.join(problems)}"
        self.beds.update({n: bed for n, (bed, _) in zip(numbers, made, strict=True)})
        return None

    def _start_actor(self, job: beds.Job) -> None:
        # The actor makes its own bed and escrow on its node: the driver's handles stay here.
        shipped = dataclasses.replace(job, _site=None, escrowed=None, tree=None, snapshot=None,
                                      judged=None)
        context = self._context
        # Where the driver keeps the campaign (records, escrow): hidden from every agent, for a
        # node that is the driver's own machine (a path absent on a node hides nothing there).
        settings = dataclasses.replace(job.settings, sandbox_hide=(
            *job.settings.sandbox_hide, str(context.files.directory)))
        shipped = dataclasses.replace(shipped, settings=settings)
        resources = {BED: 1.0, **({node_resource(job.bed): 1.0} if job.ddev else {})}
        self._actors[job.number] = self._worker.options(resources=resources, num_cpus=0).remote(
            context.campaign, str(context.template), settings, context.site_step, shipped,
            self._scratch_root, self._expected)

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
        earlier = self._earlier.pop(running.attempt.order, [])
        record = None if outcome.carried is None else self._write_back(running, outcome.carried,
                                                                        earlier)
        error = None if outcome.error is None else RuntimeError(outcome.error)
        return Finished(running.job, running.attempt, record, outcome.lost, error)

    def _write_back(self, running: _Running, carried: attempt_files.Carried,
                    earlier: list[dict[str, Any]]) -> AttemptRecord:
        """The attempt's files under the driver's campaign directory; what cannot be written so
        is the attempt's infrastructure error, recorded here."""
        try:
            return attempt_files.write_back(self._context.files, running.attempt, carried)
        except (OSError, ApgError) as exc:
            why = f"its files could not be written back from its bed actor: {exc}"
            return AttemptRun(self._context, running.job, running.attempt, earlier).fail(why)

    def _lost(self, running: _Running, why: str) -> Finished | None:
        """The attempt's infra_error, recorded here; tried again, when the spec's retries allow,
        in a new actor (placed on any node with a free bed, where it makes a fresh bed): then
        None, its result to come."""
        job, attempt, context = running.job, running.attempt, self._context
        earlier = self._earlier.pop(attempt.order, [])
        record = AttemptRun(context, job, attempt, earlier).fail(why)
        if job.ddev or not retry.again(context, record):  # a DDEV project has no fresh clone
            return Finished(job, attempt, record, lost=why)
        tries = retry.keep_try(context, record)
        self._start_actor(job)
        problem = self._made([job.number])
        if problem is not None:
            return Finished(job, attempt, record, lost=f"{why}; no new bed actor: {problem}")
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
        ray, actors = self._ray, dict(self._actors)
        self._actors.clear()
        # Each actor that answered removes its bed and scratch folder (one never placed has
        # nothing to remove and would not answer; a lost one cannot: its node's temp keeps it).
        released = [actor.release.remote() for n, actor in actors.items() if n in self._answered]
        if released:
            ray.wait(released, num_returns=len(released), timeout=GET_TIMEOUT_S)
        for actor in actors.values():
            ray.kill(actor, no_restart=True)
        if self._started:
            disconnect(ray)


def open_executor(context: Context, jobs: list[beds.Job], address: str | None = None) -> RayExecutor:
    """(The runner's preflight has refused a campaign with no Ray installed: registry.missing.)"""
    return RayExecutor(context, jobs, address)
