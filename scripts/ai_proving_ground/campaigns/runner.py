"""Running a campaign: every attempt of the plan, each on a freshly reset clone of one bed.

Layout of the campaign directory (``--out``, default ``build/campaigns/<name>-<UTC time>``):

``campaign.json``   the campaign (name, seed, dataset, arms, compare, tasks, agents, models,
                    repeats, jobs, created_at), written before the first attempt
``spec.yml``        the spec as it was read; ``plan.jsonl`` the ordered plan
``setup.json``      the fixture set, its key and tag, the template bed and each job's bed and escrow
``template/``       the bed the runner made (when the spec names none), provisioned
``beds/job-<n>/``   job n's bed, a copy of the template (the embedded site copies cheaply)
``escrow/job-<n>/`` job n's escrow, outside its bed; ``logs/job-<n>.log`` how the bed was made
``runs/<order>/``   one attempt (``order`` 4 digits): ``attempt.json`` (the record, written last,
                    new-then-rename), ``run.json``, ``grade.json``, ``hidden.json``, ``model.diff``,
                    ``config.json``, ``verify.json``, ``steps.log`` and ``run/`` (the run directory,
                    moved out of the bed so later attempts on that bed cannot read it)
``report.json``, ``report.txt``  written by ``campaigns.report`` when that module is installed

Per attempt, on its job's bed, every step a subprocess with the job's explicit environment
(nothing process-wide is changed, so jobs run side by side in threads):

1. verify --restore against the job's escrow (the escrowed verifier run directly);
2. reset; 3. the arm's setup steps (``apg site``); 4. the adapter (``apg run``, with the arm's
   ``agent_env`` via ``RunOptions.extra_env``), then everything it started is stopped;
5. verify again: tampering fails the attempt; a baseline mismatch is restored and recorded in
   ``verify.json``;
6. ``model.diff`` and ``config.json``: what the model left, before any hidden overlay;
7. grade (public checks, ``AI_PG_NO_IMPORT=1``); 8. the hidden verifier, when the task has one.

After tampering or a failed reset the job's bed is set aside as ``beds/job-<n>.<why>-<order>``
and replaced by a fresh copy of the template, so one bad attempt costs one attempt, not a lane.

Where the line between an infrastructure error and a failed attempt runs (``status``):

* ``infra_error`` (not an outcome; the next attempt runs): verify before, reset or an arm setup
  step failed; the adapter could not be resolved, was refused by the credential preflight, could
  not be started, or exited 126/127 (the shell's "cannot execute" / "not found": the agent CLI is
  missing, the agent never ran); capturing the diff or grading failed; the hidden verifier could
  not start a command (``hidden.status`` ``error``); the run was interrupted.
* ``fail``: the agent ran and the result is not a pass: the public score is 0, or the hidden
  verifier failed, or the adapter exited non-zero (anything but 126/127: the agent ran and gave
  up or crashed, which is the agent's failure; its result is still graded and the score kept),
  or verify after found tampering (``tampered: true``, score 0.0, neither graded nor verified).
* ``pass``: the adapter exited 0, the public score is 1 and the hidden verifier, when the task
  has one, passed.

``hidden.status`` is ``absent`` when the task has no hidden verifier; when it has one that did
not run it is ``error`` for an infrastructure error and ``fail`` for a tampered attempt.

Beds sit inside the campaign directory, so an agent that walks up from its app root can read
earlier attempts' records, and the request names the dataset file. As the escrow docs say of
ground truth: nothing here hides it from an agent that runs as the same user; it is only never
handed to one.

Exit codes of ``run_campaign``: 0 the matrix was completed (whatever the attempts gave); 1 it
could not run at all (no usable bed, the output directory exists); 2 usage (a bad spec);
130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import queue
import re
import shlex
import shutil
import sys
import threading
import traceback
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ai_proving_ground import proc
from ai_proving_ground.baselines.store import DEFAULT_SUBDIR, Baseline
from ai_proving_ground.baselines.tree import tag_commit
from ai_proving_ground.bed import clone_bed
from ai_proving_ground.campaigns import hidden
from ai_proving_ground.campaigns.spec import Attempt, Campaign, CampaignSpec, load_spec, plan, resolve
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixtures import load_set
from ai_proving_ground.fsutil import atomic_write_bytes, atomic_write_json, atomic_write_text
from ai_proving_ground.layout import BedLayout, is_ddev_project
from ai_proving_ground.report import say
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.tasks.adapters import find_adapter
from ai_proving_ground.tasks.run import check_extra_env, now_iso, site_command
from ai_proving_ground.yamlio import load_yaml

BASELINE_SUBDIR = DEFAULT_SUBDIR
# The shell's conventions for "found but cannot execute" and "not found": the agent never ran.
NOT_STARTED_EXIT_CODES = frozenset({126, 127})
INTERRUPTED = 130
REPORT_MODULE = "ai_proving_ground.campaigns.report"
# Variables a campaign sets itself for every step; the caller's values must not leak in.
_OWN_VARIABLES = ("AI_PG_APPROOT", "AI_PG_AGENT", "AI_PG_BASELINE_DIR", "AI_PG_ESCROW_DIR",
                  "AI_PG_DATASET", "AI_PG_FIXTURES", "AI_PG_NO_IMPORT")
_TOKEN_LINE = re.compile(r"^APG_[A-Z0-9_]+ ")


@dataclass(frozen=True)
class RunnerOptions:
    """What ``apg campaign run`` was asked to do."""

    spec_path: Path
    out: Path | None = None
    jobs: int | None = None
    dry_run: bool = False
    settings: Settings = field(default=DEFAULT_SETTINGS, compare=False)


class _Infra(Exception):
    """An infrastructure error: the attempt is recorded as such and the campaign goes on."""


class _CannotRun(Exception):
    """The campaign cannot run at all (exit 1)."""


# ---------------------------------------------------------------------------- subprocesses


def apg_argv(*args: str) -> list[str]:
    """``apg ARGS`` as this interpreter runs it; -P keeps the working directory off sys.path."""
    return [sys.executable, "-P", "-m", "ai_proving_ground.cli.main", *args]


@dataclass(frozen=True)
class _Step:
    """One finished subprocess: its exit code (None: it could not start) and output."""

    argv: list[str]
    exit_code: int | None
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def tokens(self, limit: int = 3) -> str:
        """The last token lines of stderr (the reason, in the project's own words)."""
        lines = [line for line in self.stderr.decode(errors="replace").splitlines()
                 if _TOKEN_LINE.match(line)]
        shown = lines[-limit:] or self.stderr.decode(errors="replace").strip().splitlines()[-1:]
        return " | ".join(shown) or f"exit {self.exit_code}"

    def has_token(self, token: str) -> bool:
        return any(line.startswith(token + " ")
                   for line in self.stderr.decode(errors="replace").splitlines())


def run_step(argv: Sequence[str], env: Mapping[str, str], cwd: Path, log: Path) -> _Step:
    """Run one step to completion and append its command line, stderr and exit code to ``log``."""
    finished = proc.run(argv, cwd=cwd, env=env, guard=False)
    step = _Step(list(argv), finished.exit_code, finished.stdout,
                 finished.stderr if finished.error is None else finished.error.encode())
    _log(log, step)
    return step


def _log(log: Path, step: _Step) -> None:
    with log.open("ab") as handle:
        handle.write(f"$ {shlex.join(step.argv)}\n".encode())
        handle.write(step.stderr)
        handle.write(f"[exit {step.exit_code}]\n\n".encode())


# ---------------------------------------------------------------------------- the campaign


@dataclass
class _Context:
    """What every job shares; read-only once the attempts start, except the stop flag."""

    campaign: Campaign
    directory: Path
    template: Path
    set_key: str
    tag: str
    stop: threading.Event = field(default_factory=threading.Event)
    agents: proc.Children = field(default_factory=proc.Children)
    print_lock: threading.Lock = field(default_factory=threading.Lock)
    done: int = 0


@dataclass
class _Job:
    """One parallel lane: its bed, its escrow and the environment every step gets."""

    number: int
    bed: Path
    escrow_root: Path
    env: dict[str, str]
    log: Path
    escrow_set: Path | None = None

    @property
    def name(self) -> str:
        return f"job-{self.number}"


def run_campaign(options: RunnerOptions) -> int:
    """Run (or, with ``dry_run``, print) the campaign; the exit code."""
    spec = load_spec(options.spec_path.absolute())
    campaign = resolve(spec, options.settings)
    attempts = plan(campaign)
    if options.dry_run:
        sys.stdout.write("".join(json.dumps(a.as_plan(), sort_keys=True) + "\n" for a in attempts))
        return 0
    jobs = max(1, min(options.jobs or spec.jobs, len(attempts)))
    try:
        # Everything that can refuse does so before anything is written.
        directory = _campaign_dir(spec, options.out)
        if spec.bed is not None:
            _check_template(campaign, spec.bed, options.settings)
        _check_agents(spec, spec.bed or directory / "template")
        directory.mkdir(parents=True, exist_ok=True)
        context = _start(campaign, directory, attempts, jobs, options.settings)
        job_list = _prepare_jobs(context, jobs)
    except _CannotRun as exc:
        say("APG_CAMPAIGN_CANNOT_RUN", str(exc))
        return 1
    interrupted = _run_attempts(context, job_list, attempts)
    _write_reports(directory)
    _summary(directory, attempts)
    print(directory)
    return INTERRUPTED if interrupted else 0


def _campaign_dir(spec: CampaignSpec, out: Path | None) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    directory = (out or Path.cwd() / "build" / "campaigns" / f"{spec.name}-{stamp}").absolute()
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise _CannotRun(f"{directory} exists and is not empty; pass a new --out directory")
    return directory


def _start(campaign: Campaign, directory: Path, attempts: list[Attempt], jobs: int,
           settings: Settings) -> _Context:
    """The template bed, the campaign's own records, and the checks that need the bed."""
    spec = campaign.spec
    template = spec.bed or _make_template(campaign, directory)
    set_key, tag = _check_template(campaign, template, settings)
    shutil.copyfile(spec.path, directory / "spec.yml")
    atomic_write_text(directory / "plan.jsonl",
                      "".join(json.dumps(a.as_plan(), sort_keys=True) + "\n" for a in attempts))
    atomic_write_json(directory / "campaign.json", _campaign_record(campaign, jobs))
    return _Context(campaign=campaign, directory=directory, template=template, set_key=set_key,
                    tag=tag)


def _campaign_record(campaign: Campaign, jobs: int) -> dict[str, Any]:
    spec, dataset = campaign.spec, campaign.dataset
    return {
        "name": spec.name,
        "seed": spec.seed,
        "dataset": {"name": dataset.name, "path": str(dataset.path), "sha256": dataset.sha256},
        "arms": [arm.name for arm in spec.arms],
        "compare": list(spec.compare),
        "tasks": [task.id for task in campaign.tasks],
        "agents": list(spec.agents),
        "models": list(spec.models),
        "repeats": spec.repeats,
        "jobs": jobs,
        "created_at": now_iso(),
    }


def _base_env(campaign: Campaign, bed: Path, escrow_root: Path) -> dict[str, str]:
    """The caller's environment with the campaign's own variables set for this bed."""
    env = {k: v for k, v in os.environ.items() if k not in _OWN_VARIABLES}
    env.update({
        # Runs and baselines stay with their bed, whatever the caller's AI_PG_BASELINE_DIR says.
        "AI_PG_BASELINE_DIR": str(bed / BASELINE_SUBDIR),
        "AI_PG_ESCROW_DIR": str(escrow_root),
        # The dataset is judged code: escrow and verify fingerprint the file this names.
        "AI_PG_DATASET": str(campaign.dataset.path),
        "AI_PG_FIXTURES": " ".join(campaign.fixtures),
        # The harness keeps its own copy of every envelope; parallel beds must not share a store.
        "AI_PG_NO_IMPORT": "1",
    })
    return env


def _make_template(campaign: Campaign, directory: Path) -> Path:
    template = directory / "template"
    env = _base_env(campaign, template, directory / "escrow")
    log = directory / "logs" / "template.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    fixtures = list(campaign.fixtures)
    for what, args in (("bed init", ["bed", "init", str(template), *fixtures]),
                       ("provision", ["provision", "--approot", str(template), *fixtures])):
        step = run_step(apg_argv(*args), env, directory, log)
        if not step.ok:
            raise _CannotRun(f"could not make the template bed ({what}): {step.tokens()}; "
                             f"see {log}")
    return template


def _check_template(campaign: Campaign, template: Path, settings: Settings) -> tuple[str, str]:
    """The set key and tag; a template that cannot be cloned and reset cannot run anything."""
    if not BedLayout(template).database.is_file():
        raise _CannotRun(f"{template} is not an embedded bed (no {BedLayout(template).database}); "
                         f"create one: apg bed init {template} {' '.join(campaign.fixtures)}")
    if is_ddev_project(template):
        raise _CannotRun(f"{template} is a DDEV project; campaigns clone their bed, which only "
                         "the embedded site allows")
    try:
        fixture_set = load_set(campaign.fixtures, template, settings=settings)
    except ApgError as exc:
        raise _CannotRun(str(exc)) from None
    baseline = Baseline(template / BASELINE_SUBDIR, fixture_set.key)
    if not baseline.dump.is_file() or tag_commit(template, baseline.tag) is None:
        raise _CannotRun(f"{template} has no baseline for {' '.join(campaign.fixtures)} in "
                         f"{baseline.directory}; provision it: apg provision --approot {template} "
                         f"{' '.join(campaign.fixtures)}")
    return fixture_set.key, baseline.tag


def _check_agents(spec: CampaignSpec, template: Path) -> None:
    """Every agent resolves on the template (one the runner is yet to make has only the shipped
    adapters), and every arm's env passes each adapter's allow-list."""
    for position, name in enumerate(spec.agents):
        try:
            adapter = find_adapter(name, template)
        except ApgError as exc:
            spec.fail(["agents", position], str(exc))
        for arm in spec.arms:
            try:
                check_extra_env(arm.agent_env, adapter)
            except ApgError as exc:
                spec.fail(["arms", arm.name, "agent_env"], str(exc))


# ---------------------------------------------------------------------------- job beds


def _prepare_jobs(context: _Context, jobs: int) -> list[_Job]:
    """Clone, escrow and reset one bed per job, side by side; any failure stops the campaign
    (the clones are identical, so one that cannot reset means none can)."""
    job_list = [_new_job(context, n) for n in range(jobs)]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        problems = [p for p in pool.map(lambda job: _prepare(context, job), job_list) if p]
    if problems:
        raise _CannotRun("; ".join(problems))
    atomic_write_json(context.directory / "setup.json", _setup_record(context, job_list))
    return job_list


def _new_job(context: _Context, number: int) -> _Job:
    directory = context.directory
    bed = directory / "beds" / f"job-{number}"
    escrow_root = directory / "escrow" / f"job-{number}"
    log = directory / "logs" / f"job-{number}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    return _Job(number=number, bed=bed, escrow_root=escrow_root, log=log,
                env=_base_env(context.campaign, bed, escrow_root))


def _prepare(context: _Context, job: _Job) -> str | None:
    """None when the job's bed is ready; else why not."""
    try:
        clone_bed(context.template, job.bed)
    except OSError as exc:
        return f"{job.name}: could not copy {context.template}: {exc}"
    fixtures = list(context.campaign.fixtures)
    escrowed = run_step(apg_argv("escrow", "--approot", str(job.bed), *fixtures), job.env,
                        context.directory, job.log)
    printed = escrowed.stdout.decode(errors="replace").strip().splitlines()
    if not escrowed.ok or not printed:
        return f"{job.name}: escrow failed: {escrowed.tokens()}"
    job.escrow_set = Path(printed[-1])  # the harness keeps the set it made, never looks it up
    reset = run_step(apg_argv("reset", "--approot", str(job.bed), *fixtures), job.env,
                     context.directory, job.log)
    if not reset.ok:
        return f"{job.name}: the bed does not reset: {reset.tokens()}; see {job.log}"
    return None


def _drifted(verdict_json: bytes) -> str:
    """The failing doctor checks and their subjects, in one line."""
    try:
        verdict = json.loads(verdict_json)
        failing = [c for c in verdict["checks"] if c.get("status") == "fail"]
        return "; ".join(f"{c['name']}: " + ", ".join(str(d.get("subject")) for d in
                                                      c.get("drift", [])[:5]) for c in failing)
    except (ValueError, KeyError, TypeError):
        return "no readable verdict"


def _setup_record(context: _Context, job_list: list[_Job]) -> dict[str, Any]:
    return {"fixtures": list(context.campaign.fixtures), "set_key": context.set_key,
            "tag": context.tag, "template": str(context.template),
            "jobs": [{"job": job.number, "bed": str(job.bed), "escrow": str(job.escrow_set)}
                     for job in job_list]}


def _replace_bed(context: _Context, job: _Job, label: str) -> None:
    """After tampering or a failed reset the bed's state is unknown: keep it as evidence
    (``beds/job-<n>.<label>``) and give the job a fresh copy of the template, which is what the
    job's escrow describes. The next attempt verifies and resets it like any other."""
    job.bed.rename(job.bed.with_name(f"{job.bed.name}.{label}"))
    clone_bed(context.template, job.bed)


# ---------------------------------------------------------------------------- the attempts


def _run_attempts(context: _Context, job_list: list[_Job], attempts: list[Attempt]) -> bool:
    """Workers pull attempts in plan order; True when interrupted."""
    pending: queue.Queue[Attempt] = queue.Queue()
    for attempt in attempts:
        pending.put(attempt)
    interrupted = False
    with ThreadPoolExecutor(max_workers=len(job_list)) as pool:
        futures = [pool.submit(_worker, context, job, pending) for job in job_list]
        try:
            _wait_all(futures)
        except KeyboardInterrupt:
            interrupted = True
            context.stop.set()
            context.agents.interrupt_all()
            say("APG_INTERRUPTED", "stopping: the running attempts are recorded as interrupted")
            _wait_all(futures)
    if not interrupted:  # an interrupted campaign is incomplete, not full of infra errors
        _record_leftovers(context, pending, "no usable bed was left to run it")
    return interrupted


def _wait_all(futures: list[Future[None]]) -> None:
    # A timeout keeps the main thread waking up, so Ctrl-C is seen while workers run.
    while not all(f.done() for f in futures):
        wait(futures, timeout=0.5)
    for number, future in enumerate(futures):
        problem = future.exception()
        if problem is not None:  # a bug: that lane stops, the others went on
            say("APG_CAMPAIGN_JOB_LOST", f"job-{number}: {type(problem).__name__}: {problem}")


def _worker(context: _Context, job: _Job, pending: queue.Queue[Attempt]) -> None:
    while not context.stop.is_set():
        try:
            attempt = pending.get_nowait()
        except queue.Empty:
            return
        run = _AttemptRun(context, job, attempt)
        record = run.run()
        _progress(context, attempt, record)
        if run.set_aside is not None:
            try:
                _replace_bed(context, job, f"{run.set_aside}-{attempt.order:04d}")
            except OSError as exc:
                say("APG_CAMPAIGN_JOB_LOST", f"{job.name}: could not replace its bed: {exc}; "
                    "the other jobs go on")
                return


def _record_leftovers(context: _Context, pending: queue.Queue[Attempt], reason: str) -> None:
    """Attempts no worker took are infrastructure errors too: the matrix is complete on disk."""
    while True:
        try:
            attempt = pending.get_nowait()
        except queue.Empty:
            return
        run = _AttemptRun(context, None, attempt)
        run.fail_infra(reason)
        run.write()


def _progress(context: _Context, attempt: Attempt, record: dict[str, Any]) -> None:
    detail = f" ({record['infra_error']})" if record["infra_error"] else ""
    with context.print_lock:
        context.done += 1
        say("APG_CAMPAIGN_ATTEMPT", f"{context.done} done; #{attempt.order:04d} {attempt.task_id} "
            f"arm={attempt.arm} agent={attempt.agent} model={attempt.model or '-'} "
            f"repeat={attempt.repeat}: {record['status']}{detail}")


class _AttemptRun:
    """One attempt on one job's bed, phase by phase; an ``_Infra`` ends it as an infra error."""

    def __init__(self, context: _Context, job: _Job | None, attempt: Attempt) -> None:
        self.context = context
        self.job = job
        self.attempt = attempt
        self.directory = context.directory / "runs" / f"{attempt.order:04d}"
        self.directory.mkdir(parents=True, exist_ok=True)
        self.log = self.directory / "steps.log"
        self.verifier = context.campaign.verifiers.get(attempt.task_id)
        self.verify: dict[str, Any] = {}
        self.bed_run_dir: Path | None = None
        self.agent_log = self.directory / "agent.log"
        self.agent_exit: int | None = None
        self.model_diff = b""
        # Why the job's bed must be replaced after this attempt ("tampered", "reset-failed").
        self.set_aside: str | None = None
        self.record: dict[str, Any] = {
            "index": attempt.index, "order": attempt.order, "task_id": attempt.task_id,
            "arm": attempt.arm, "agent": attempt.agent, "model": attempt.model,
            "repeat": attempt.repeat, "status": None, "score": None, "infra_error": None,
            "hidden": {"status": "absent" if self.verifier is None else "error", "checks": []},
            "run_id": None, "adapter_exit_code": None, "tampered": False,
            "started_at": now_iso(), "finished_at": None,
        }

    # -- driving

    def run(self) -> dict[str, Any]:
        try:
            self._phases()
        except _Infra as exc:
            self.fail_infra(str(exc))
        except Exception as exc:  # a bug in one attempt must not take the campaign down
            with self.log.open("a", encoding="utf-8") as handle:
                handle.write(traceback.format_exc())
            self.fail_infra(f"unexpected {type(exc).__name__}: {exc}")
        finally:
            self._collect_run_dir()
        self.write()
        return self.record

    def fail_infra(self, reason: str) -> None:
        if self.context.stop.is_set() and not reason.startswith("interrupted"):
            reason = f"interrupted ({reason})"
        self.record.update(status="infra_error", infra_error=reason)

    def write(self) -> None:
        self.record["finished_at"] = now_iso()
        if self.verify:
            atomic_write_json(self.directory / "verify.json", self.verify)
        atomic_write_json(self.directory / "attempt.json", self.record)

    def _phases(self) -> None:
        assert self.job is not None
        self._verify_before()
        self._reset()
        self._arm_setup()
        agent_exit = self._run_agent()
        if self._verify_after():
            # Failed by the agent's own doing: not graded, not verified (verify's rule).
            self.record.update(status="fail", score=0.0, tampered=True)
            self.set_aside = "tampered"
            if self.verifier is not None:
                self.record["hidden"] = {"status": "fail", "checks": []}
            with contextlib.suppress(_Infra):
                self._capture()  # evidence only
            return
        self._capture()
        score = self._grade()
        hidden_status = self._hidden()
        self._conclude(agent_exit, score, hidden_status)

    def _conclude(self, agent_exit: int, score: float, hidden_status: str) -> None:
        self.record["score"] = score
        if hidden_status == "error":
            raise _Infra("the hidden verifier could not run a command (see hidden.json)")
        passed = agent_exit == 0 and score == 1.0 and hidden_status in {"pass", "absent"}
        self.record["status"] = "pass" if passed else "fail"

    def _step(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> _Step:
        assert self.job is not None
        return run_step(argv, env or self.job.env, self.context.directory, self.log)

    # -- phases

    def _verify_before(self) -> None:
        step = self._escrow_verify(restore=True)
        self.verify["before"] = self._verify_record(step)
        if not step.ok:
            raise _Infra(f"verify before the attempt failed: {step.tokens()}")

    def _reset(self) -> None:
        assert self.job is not None
        step = self._step(apg_argv("reset", "--approot", str(self.job.bed),
                                   *self.context.campaign.fixtures))
        if not step.ok:
            self.set_aside = "reset-failed"
            raise _Infra(f"reset failed: {step.tokens()}")
        # The known state must hold before an agent sees the bed: drift here is the bed's fault.
        doctor = self._step(apg_argv("doctor", "--approot", str(self.job.bed),
                                     *self.context.campaign.fixtures))
        if not doctor.ok:
            self.set_aside = "reset-failed"
            raise _Infra(f"the doctor found drift after reset: {_drifted(doctor.stdout)}")

    def _arm_setup(self) -> None:
        assert self.job is not None
        arm = self.context.campaign.spec.arm(self.attempt.arm)
        for number, args in enumerate(arm.setup, start=1):
            step = self._step(apg_argv("site", "--approot", str(self.job.bed), *args))
            if not step.ok:
                raise _Infra(f"arm {arm.name} setup step {number} ({args[0]}) failed: "
                             f"{step.tokens()}")

    def _run_agent(self) -> int:
        """The adapter's exit code; an attempt that never reached the agent raises ``_Infra``."""
        earlier = self._run_dirs()
        run = self._spawn_agent()
        # Whatever apg run left in the bed is collected, even when it printed no record.
        made = sorted(self._run_dirs() - earlier)
        self.bed_run_dir = self._bed_runs() / made[0] if len(made) == 1 else None
        if self.agent_exit == INTERRUPTED or (run or {}).get("status") == "interrupted":
            raise _Infra("interrupted while the agent ran")
        if run is None:
            raise _Infra(f"apg run recorded nothing (exit {self.agent_exit}): "
                         f"{self._agent_reason()}")
        self.record.update(run_id=run.get("run_id"), adapter_exit_code=run.get("adapter_exit_code"))
        status, code = run.get("status"), run.get("adapter_exit_code")
        if status == "refused":
            raise _Infra(f"the credential preflight refused the adapter: {self._agent_reason()}")
        if not isinstance(code, int):
            raise _Infra(f"the adapter could not be started: {self._agent_reason()}")
        if code in NOT_STARTED_EXIT_CODES:
            raise _Infra(f"the adapter exited {code}: its agent could not start "
                         f"({self._adapter_said()})")
        return code

    def _spawn_agent(self) -> dict[str, Any] | None:
        """``apg run`` (through :func:`child_main`, which adds the arm's env) in its own session,
        so that whatever the agent started can be stopped as a group once it exits."""
        assert self.job is not None
        arm = self.context.campaign.spec.arm(self.attempt.arm)
        argv = [sys.executable, "-P", "-m", "ai_proving_ground.campaigns.runner", "--approot",
                str(self.job.bed), "--agent", self.attempt.agent, "--dataset",
                str(self.context.campaign.dataset.path), self.attempt.task_id]
        argv += ["--model", self.attempt.model] if self.attempt.model else []
        timeout = self.context.campaign.spec.agent_timeout_s
        argv += ["--timeout", str(timeout)] if timeout else []
        for name in arm.agent_env:
            argv += ["--arm-env", name]
        env = {**self.job.env, **arm.agent_env}  # values by environment, never on a command line
        self.agent_log = self.directory / "agent.log"
        with self.agent_log.open("wb") as errors:
            try:
                child = proc.Child(argv, cwd=self.context.directory, env=env, stderr=errors)
            except proc.CannotStart as exc:
                raise _Infra(str(exc)) from None
            with self.context.agents.holding(child):
                out, _ = child.communicate()
            child.kill()  # whatever the agent left running in its group stops with it
        self.agent_exit = child.returncode
        _log(self.log, _Step(argv, child.returncode, b"", f"(output: {self.agent_log})\n".encode()))
        try:
            record = json.loads(out)
        except ValueError:
            return None
        return record if isinstance(record, dict) else None

    def _agent_reason(self) -> str:
        text = self.agent_log.read_bytes() if self.agent_log.is_file() else b""
        return _Step([], self.agent_exit, b"", text).tokens()

    def _adapter_said(self) -> str:
        """The last line the adapter wrote to stderr (it says why, e.g. which CLI is missing)."""
        if self.bed_run_dir is None:
            return "no run directory"
        try:
            text = (self.bed_run_dir / "stderr.log").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "no stderr transcript"
        lines = [line for line in text.splitlines() if line.strip()]
        return lines[-1][-300:] if lines else "it printed nothing on stderr"

    def _verify_after(self) -> bool:
        """True when the agent tampered with judging code; a baseline mismatch is restored."""
        step = self._escrow_verify(restore=False)
        self.verify["after"] = self._verify_record(step)
        if step.ok:
            return False
        if step.has_token("APG_TAMPERED"):
            say("APG_CAMPAIGN_TAMPERED", f"attempt {self.attempt.order:04d}: {step.tokens()}")
            return True
        restored = self._escrow_verify(restore=True)
        self.verify["after_restore"] = self._verify_record(restored)
        if not restored.ok:
            raise _Infra(f"verify after the attempt failed and --restore did not repair it: "
                         f"{restored.tokens()}")
        return False

    def _escrow_verify(self, restore: bool) -> _Step:
        """The job's escrowed verifier copy, run directly: never the bed's own code."""
        assert self.job is not None and self.job.escrow_set is not None
        copy = self.job.escrow_set / "escrow_verify.py"
        argv = [sys.executable, "-I", str(copy), str(self.job.bed), str(self.job.escrow_set)]
        return self._step(argv + (["--restore"] if restore else []))

    @staticmethod
    def _verify_record(step: _Step) -> dict[str, Any]:
        lines = [line for line in step.stderr.decode(errors="replace").splitlines() if line]
        return {"exit_code": step.exit_code, "ok": step.ok, "lines": lines}

    def _capture(self) -> None:
        """model.diff and config.json: the model's own work, before any hidden overlay."""
        assert self.job is not None
        try:
            diff = hidden.model_diff(self.job.bed, self.context.tag, self.job.env,
                                     self.directory / ".scratch")
        except ApgError as exc:
            raise _Infra(f"could not capture the model's diff: {exc.message}") from None
        atomic_write_bytes(self.directory / "model.diff", diff)
        self.model_diff = diff
        export = self.directory / ".scratch" / "config"
        step = self._step(apg_argv("site", "--approot", str(self.job.bed), "config:export",
                                   "--destination", str(export)))
        if not step.ok:
            raise _Infra(f"could not export the active config: {step.tokens()}")
        config = {p.name[:-4]: load_yaml(p) for p in sorted(export.glob("*.yml"))}
        atomic_write_json(self.directory / "config.json", config)
        shutil.rmtree(export, ignore_errors=True)

    def _grade(self) -> float:
        assert self.job is not None
        step = self._step(apg_argv("grade", "--approot", str(self.job.bed), self.attempt.task_id,
                                   "--dataset", str(self.context.campaign.dataset.path),
                                   "--run", str(self.record["run_id"])))
        if not step.ok:
            raise _Infra(f"grade failed (exit {step.exit_code}): {step.tokens()}")
        try:
            envelope = json.loads(step.stdout)
            score = float(envelope["evaluation_results"][0]["score_details"]["score"])
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _Infra(f"grade printed no envelope: {exc}") from None
        # The harness's own capture of what grade printed (the bed's copy can be rewritten).
        atomic_write_json(self.directory / "grade.json", envelope)
        return score

    def _hidden(self) -> str:
        assert self.job is not None
        if self.verifier is None:
            return "absent"
        outcome = hidden.run_hidden(self.job.bed, self.verifier, self.job.env,
                                    self.directory / ".scratch", site_command())
        after = hidden.model_diff(self.job.bed, self.context.tag, self.job.env,
                                  self.directory / ".scratch")
        if after != self.model_diff:
            outcome.warnings.append("APG_CAMPAIGN_HIDDEN_RESIDUE the bed's diff differs from "
                                    "model.diff after restoring the snapshot")
        self.record["hidden"] = outcome.summary()
        atomic_write_json(self.directory / "hidden.json", {
            **outcome.summary(), "patch": self.verifier.patch_ref,
            "commands": [list(c) for c in self.verifier.commands],
            "timeout_s": self.verifier.timeout_s, "restore_warnings": outcome.warnings})
        return outcome.status

    # -- the run directory

    def _bed_runs(self) -> Path:
        assert self.job is not None
        return self.job.bed / BASELINE_SUBDIR / "runs"

    def _run_dirs(self) -> set[str]:
        runs = self._bed_runs()
        return set(os.listdir(runs)) if runs.is_dir() else set()

    def _collect_run_dir(self) -> None:
        """Move the bed's run directory here (the next agent on this bed must not read this
        attempt's prompt, transcripts or grade) and keep a copy of run.json beside the record."""
        shutil.rmtree(self.directory / ".scratch", ignore_errors=True)
        source = self.bed_run_dir
        if source is None or not source.is_dir():
            return
        try:
            shutil.move(str(source), str(self.directory / "run"))
            shutil.copy2(self.directory / "run" / "run.json", self.directory / "run.json")
        except OSError as exc:
            say("APG_CAMPAIGN_RUN_NOT_COLLECTED", f"{source}: {exc}")


# ---------------------------------------------------------------------------- after the matrix


def _write_reports(directory: Path) -> None:
    """report.json and report.txt through ``apg campaign report``, when the module exists."""
    if importlib.util.find_spec(REPORT_MODULE) is None:
        say("APG_CAMPAIGN_REPORT_SKIPPED", f"{REPORT_MODULE} is not installed; the records are in "
            f"{directory / 'runs'}")
        return
    log = directory / "logs" / "report.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    for name, extra in (("report.json", ["--json"]), ("report.txt", [])):
        step = run_step(apg_argv("campaign", "report", str(directory), *extra), dict(os.environ),
                        directory, log)
        if step.ok:
            atomic_write_bytes(directory / name, step.stdout)
        else:
            say("APG_CAMPAIGN_REPORT_FAILED", f"{name}: {step.tokens()}; see {log}")


def _summary(directory: Path, attempts: list[Attempt]) -> None:
    counts: dict[str, int] = {}
    for attempt in attempts:
        path = directory / "runs" / f"{attempt.order:04d}" / "attempt.json"
        status = json.loads(path.read_text("utf-8"))["status"] if path.is_file() else "missing"
        counts[status] = counts.get(status, 0) + 1
    shown = ", ".join(f"{counts.get(s, 0)} {s}" for s in ("pass", "fail", "infra_error"))
    say("APG_CAMPAIGN_DONE", f"{len(attempts)} attempts: {shown}; records in {directory}")


# ---------------------------------------------------------------------------- the agent step


def child_main(argv: Sequence[str] | None = None) -> int:
    """``apg run --json`` with ``RunOptions.extra_env``: the values of the ``--arm-env`` names
    come from this process's environment (so they never appear on a command line)."""
    # Lazy for start-up time: only the attempt's child process needs these.
    from ai_proving_ground.cli.common import ArgumentParser, run
    from ai_proving_ground.tasks.run import RunOptions, dumps_record, run_task  # start-up: as above

    parser = ArgumentParser(prog="ai_proving_ground.campaigns.runner",
                            description="one campaign attempt's apg run (internal)")
    parser.add_argument("--approot", required=True)
    parser.add_argument("--agent", required=True)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--model")
    parser.add_argument("--arm-env", action="append", default=[], metavar="NAME")
    parser.add_argument("--timeout", type=float)
    parser.add_argument("task_id")
    args = parser.parse_args(argv)

    def act() -> int:
        extra = {name: os.environ.get(name, "") for name in args.arm_env}
        options = RunOptions(task_id=args.task_id, approot=Path(args.approot), agent=args.agent,
                             dataset=args.dataset, model=args.model, echo_stdout_to_stderr=True,
                             extra_env=extra, timeout_s=args.timeout,
                             settings=Settings.from_environ())
        outcome = run_task(options)
        sys.stdout.write(dumps_record(outcome.record))
        return outcome.exit_code

    return run(act)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``apg campaign run``'s options."""
    parser.add_argument("spec", metavar="SPEC", help="the campaign spec (YAML)")
    parser.add_argument("--out", help="the campaign directory (new or empty; default "
                        "build/campaigns/<name>-<UTC time>)")
    parser.add_argument("--jobs", type=int, help="parallel beds (default: the spec's jobs)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the ordered plan as JSON lines and exit")


if __name__ == "__main__":
    raise SystemExit(child_main())
