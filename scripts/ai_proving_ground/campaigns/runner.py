"""Running a campaign: a flow over every attempt of the plan, each on a freshly reset bed.

Layout of the campaign directory (``--out``, default
``$XDG_DATA_HOME/ai-proving-ground/campaigns/<name>-<UTC time>``, ``~/.local/share`` without
``XDG_DATA_HOME``, whatever directory the command runs in; :class:`records.CampaignFiles` owns it):

``campaign.json``   the campaign record (``schemas/campaign_record.schema.json``) with its
                    provenance (:mod:`campaigns.provenance`), written first
``spec.yml``        the spec as it was read; ``plan.jsonl`` the ordered plan
``setup.json``      the fixture set, its key and tag, the template, each job's bed and escrow
``escrow/job-<n>/`` job n's escrow (the runner keeps every file's hash and checks it before use)
``runs/<order>/``   one attempt: ``attempt.json`` (``schemas/attempt.schema.json``, written last),
                    ``steps.log``, ``agent.log``, ``verify.json``, ``model.diff``, ``config.json``,
                    ``grade.json``, ``hidden.json``, ``run.json`` and ``run/`` (the run directory,
                    moved out of the bed so later attempts on that bed cannot read it);
                    verify.json and hidden.json are records (:mod:`campaigns.evidence`);
                    ``state/``: the final site state (:mod:`campaigns.final_state`)
``regrades/<time>/`` one ``apg campaign regrade`` (:mod:`campaigns.regrade`); runs/ untouched
                    ``tries/<k>/`` the earlier tries of an infra error retried
                    (:mod:`campaigns.retry`)
``discarded/``      half-written attempts a resume set aside (:mod:`campaigns.resume`)
``report.json``     the report, recomputed from the records (``records.ReportRecord``;
                    ``report.txt`` beside it)

The beds live apart (``--beds``, default a new folder in the system's temporary directory):
``template/`` (the bed the runner made, when the spec names none), ``job-<n>/`` (a copy of the
template per job) and ``job-<n>.<why>-<order>/`` (a bed set aside after tampering or a failed
reset). No path from a bed leads to the campaign directory. Where they are is said at the start,
and they are removed at the end unless kept (:mod:`campaigns.bed_folder`). Progress goes to a
:class:`progress.Progress` (the edge picks plain lines or a live display).

Reset, the doctor, the arm's setup steps, the config capture, grade and the report run
in-process for each job's bed, with that job's :class:`Settings`; the only child processes of
an attempt are the adapter (under the keeper, so its whole tree dies with the runner), the
escrowed verifier and, for a task with a hidden verifier, that verifier's own commands. Reset
and the model's diff use the baseline tag's files, read from git once per bed, and the hidden
patch is applied in-process. Each attempt's one outcome is decided by
:mod:`ai_proving_ground.campaigns.outcome`.

One campaign writes into one directory: the runner holds an exclusive lock on ``--out``
(:mod:`campaigns.lock`) from before its first record to its report; a second runner (or a
resume) on the same directory refuses (``APG_CAMPAIGN_BUSY``) and writes nothing there. A runner
killed at any point leaves a directory ``apg campaign resume`` finishes (:mod:`campaigns.resume`);
the crash points ``campaign.started``, ``campaign.attempt-collected`` and
``campaign.attempts-done`` (:mod:`faults`) let tests kill it between those steps.

Exit codes of ``run_campaign``: 0 the matrix was completed (whatever the attempts gave); 1 it
could not run at all (no usable bed, the output directory exists or another campaign holds it);
2 usage (a bad spec); 130 interrupted.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ai_proving_ground.campaigns import bed_folder, beds, dry_run, provenance
from ai_proving_ground.campaigns.agents_check import check_agents
from ai_proving_ground.campaigns.attempt import AttemptRun, Context, SiteStep
from ai_proving_ground.campaigns.lock import Busy, only_campaign
from ai_proving_ground.campaigns.progress import PlainProgress, Progress
from ai_proving_ground.campaigns.records import (
    CampaignFiles,
    CampaignRecord,
    ReportRecord,
    SetupRecord,
    write_plan,
)
from ai_proving_ground.campaigns.report import build_report, summary_line
from ai_proving_ground.campaigns.spec import Attempt, Campaign, CampaignSpec, load_spec, plan, resolve
from ai_proving_ground.errors import ApgError
from ai_proving_ground.executors import registry
from ai_proving_ground.executors.base import Executor, Finished
from ai_proving_ground.faults import crashpoint
from ai_proving_ground.records import write_record
from ai_proving_ground.report import say
from ai_proving_ground.sandbox.confine import SandboxOptions, choose_backend
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.tasks.run import now_iso

INTERRUPTED = 130


def _no_site_steps(bed: Path, argv: Any) -> tuple[int, str]:
    return 2, "APG_USAGE this harness runs no apg site steps\n"


@dataclass(frozen=True)
class RunnerOptions:
    """What ``apg campaign run`` was asked to do; ``site_step`` runs an arm's setup steps."""

    spec_path: Path
    out: Path | None = None
    jobs: int | None = None
    dry_run: bool = False
    beds: Path | None = None
    executor: str | None = None  # None: the spec's (default local); executors.registry
    address: str | None = None  # the cluster an executor of registry.ADDRESSED joins
    keep_beds: bool = False  # else the beds the runner made are removed at the end
    json: bool = False  # the dry run as JSON lines (campaigns.dry_run)
    settings: Settings = field(default=DEFAULT_SETTINGS, compare=False)
    site_step: SiteStep = field(default=_no_site_steps, compare=False)
    progress: Progress = field(default_factory=PlainProgress, compare=False)


@dataclass(frozen=True)
class CampaignResult:
    """The exit code, the campaign directory and its report (None: nothing ran)."""

    exit_code: int
    directory: Path | None = None
    report: dict[str, Any] | None = None
    counts: dict[str, int] = field(default_factory=dict)


def run_campaign(options: RunnerOptions) -> CampaignResult:
    """Run (or, with ``dry_run``, describe) the campaign; both refuse what the other would."""
    try:
        ready = _preflight(options)
        if options.dry_run:
            entries = dry_run.describe_attempts(ready.campaign, ready.attempts, ready.template,
                                                beds.job_settings(options.settings, ready.campaign))
            sys.stdout.write((dry_run.json_lines if options.json else dry_run.text)(entries))
            return CampaignResult(0)
        ready.directory.mkdir(parents=True, exist_ok=True)
        with only_campaign(ready.directory):
            return _run_locked(ready.campaign, CampaignFiles(ready.directory), ready.attempts,
                               ready.jobs, options)
    except beds.CannotRun as exc:
        say("APG_CAMPAIGN_CANNOT_RUN", str(exc))
        return CampaignResult(1)
    except Busy as exc:
        say("APG_CAMPAIGN_BUSY", str(exc))
        return CampaignResult(1)


@dataclass(frozen=True)
class _Ready:
    """A campaign every check passed, not yet started."""

    campaign: Campaign
    attempts: list[Attempt]
    jobs: int
    directory: Path
    template: Path  # where the agents are looked up (it may be the template yet to make)


def _preflight(options: RunnerOptions) -> _Ready:
    """Everything that can refuse, before anything is written (the dry run's checks too): the
    spec, its dataset and skills (load_spec, resolve), the executor, the settings, the output
    and beds folders, the templates and the agents."""
    spec = load_spec(options.spec_path.absolute())
    campaign = resolve(spec, options.settings)
    attempts = plan(campaign)
    # An unknown executor, an address it takes none, its extra absent: usage, nothing written.
    registry.check_usable(executor_name(spec, options), options.address)
    # DDEV projects on Ray's nodes: checked there, before campaign.json (executors.ray_provenance);
    # a dry run runs nothing there, so it reads them here.
    elsewhere = not options.dry_run and registry.reads_on_nodes(executor_name(spec, options),
                                                                campaign)
    jobs = max(1, min(options.jobs or spec.jobs, len(attempts)))
    if spec.ddev_beds:  # one job per DDEV project given (campaigns.beds)
        jobs = min(len(spec.ddev_beds), len(attempts))
    options.settings.log_limit_bytes  # noqa: B018  # a bad AI_PG_LOG_LIMIT: usage, before any record
    directory = _campaign_dir(spec, options.out, options.settings)
    bed_folder.check(options.beds)
    if directory.is_dir():
        with only_campaign(directory):  # held by a running campaign: say so, not "not empty"
            pass
    _refuse_used(directory)
    for bed in (spec.bed, *([] if elsewhere else spec.ddev_beds[:jobs])):
        if bed is not None:
            beds.check_template(campaign, bed, beds.job_settings(options.settings, campaign))
    # A template the runner is yet to make: where it will be (only shipped adapters are there).
    template = spec.bed or next(iter(spec.ddev_beds), (options.beds or directory).absolute() / "template")
    if not elsewhere:
        check_agents(spec, template)
    return _Ready(campaign, attempts, jobs, directory, template)


def _run_locked(campaign: Campaign, files: CampaignFiles, attempts: list[Attempt], jobs: int,
                options: RunnerOptions) -> CampaignResult:
    """The campaign itself, under the directory's lock."""
    _refuse_used(files.directory)  # again, now that no other runner can be filling it
    folder = bed_folder.open_folder(campaign.spec, options.beds, options.keep_beds)
    try:
        context, job_list = _start(campaign, files, attempts, jobs, options, folder.path)
        interrupted = run_attempts(context, job_list, attempts, executor_name(campaign.spec, options),
                                   options.progress, address=options.address)
    finally:
        folder.close()
    return report_and_say(files, interrupted)


def report_and_say(files: CampaignFiles, interrupted: bool = False) -> CampaignResult:
    """Write report.json from every record in the directory (a resume's, and those of the run it
    resumes) and say the totals; the directory on stdout."""
    report = build_report(files.directory)
    write_record(files.report, ReportRecord.from_json(report))
    counts = report["totals"]
    say("APG_CAMPAIGN_DONE", f"{summary_line(counts)}; records in {files.directory}")
    print(files.directory)
    return CampaignResult(INTERRUPTED if interrupted else 0, files.directory, report, counts)


def executor_name(spec: CampaignSpec, options: RunnerOptions) -> str:
    """``--executor``, else the spec's ``executor``, else the default; a name the registry lacks
    is refused (the spec's even when ``--executor`` overrides it: the spec must stay runnable)."""
    if spec.executor is not None and spec.executor not in registry.EXECUTORS:
        spec.fail(["executor"], f"no executor called {spec.executor!r}; known: {registry.known()}")
    if options.executor is not None and options.executor not in registry.EXECUTORS:
        raise ApgError("APG_USAGE", f"--executor {options.executor!r}: no such executor; "
                       f"known: {registry.known()}", exit_code=2)
    return options.executor or spec.executor or registry.DEFAULT


def _campaign_dir(spec: CampaignSpec, out: Path | None, settings: Settings) -> Path:
    """``--out``, else a new folder under the user's data directory: never under whatever
    directory the command happens to run in."""
    if out is not None:
        return out.absolute()
    if settings.data_home is None:
        raise ApgError("APG_USAGE", "neither XDG_DATA_HOME nor HOME is set, so there is no default "
                       "campaign directory; pass --out DIR", exit_code=2)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return Path(settings.data_home, "ai-proving-ground", "campaigns", f"{spec.name}-{stamp}")


def _refuse_used(directory: Path) -> None:
    """A used directory is refused. The new file of a campaign.json a killed runner never
    renamed into place (fsutil's ``.<name>.*.new``) does not count: nothing was recorded."""
    leftover = f".{CampaignFiles(directory).campaign.name}."
    if directory.exists() and (not directory.is_dir() or any(
            not (e.name.startswith(leftover) and e.name.endswith(".new"))
            for e in directory.iterdir())):
        raise beds.CannotRun(f"{directory} exists and is not empty; pass a new --out directory")


def _start(campaign: Campaign, files: CampaignFiles, attempts: list[Attempt], jobs: int,
           options: RunnerOptions, folder: Path | None) -> tuple[Context, list[beds.Job]]:
    """The template, the campaign's own records (campaign.json first: a directory holding it is
    one ``apg campaign resume`` can finish) and one ready bed per job (in ``folder``; None: DDEV
    projects, used in place)."""
    settings = beds.job_settings(options.settings, campaign)
    # The beds' own facts as the executor reads them where they are (None: read here).
    remote = registry.bed_facts(executor_name(campaign.spec, options), campaign, settings,
                                options.address, jobs)
    beds_at = template_for(campaign, settings, folder, tag=None if remote is None else remote[0])
    # PATH as the adapters get it: provenance asks each agent CLI its --version.
    found = provenance.collect(campaign, beds_at.template, settings, os.environ,
                               None if remote is None else remote[1])
    write_record(files.campaign, CampaignRecord.of(campaign, jobs, now_iso(), found))
    shutil.copyfile(campaign.spec.path, files.spec)
    write_plan(files.plan, attempts)
    return open_jobs(campaign, files, beds_at, jobs, options)


@dataclass(frozen=True)
class BedsAt:
    """Where the job beds go, the template they are cloned from and its baseline tag."""

    root: Path
    template: Path
    tag: str


def template_for(campaign: Campaign, settings: Settings, folder: Path | None,
                 made: Path | None = None, tag: str | None = None) -> BedsAt:
    """The spec's bed, else ``made`` (a template an earlier run made), else a new one in
    ``folder`` (None: DDEV projects, used in place); checked to clone and reset
    (beds.CannotRun when it cannot), unless its ``tag`` was read where it is (registry.bed_facts)."""
    spec = campaign.spec
    if folder is None:  # DDEV projects are used in place: no template to make, no bed folder
        root, template = spec.ddev_beds[0].parent, spec.ddev_beds[0]
    else:
        root = folder
        template = spec.bed or made or beds.make_template(campaign, root / "template", settings)
    if tag is None:
        _, tag = beds.check_template(campaign, template, settings)
    return BedsAt(root, template, tag)


def open_jobs(campaign: Campaign, files: CampaignFiles, beds_at: BedsAt, jobs: int,
              options: RunnerOptions) -> tuple[Context, list[beds.Job]]:
    """One bed per job, as its executor makes them (executors.base); setup.json."""
    settings = beds.job_settings(options.settings, campaign)
    template, tag, bed_root = beds_at.template, beds_at.tag, beds_at.root
    job_list = registry.prepare_jobs(executor_name(campaign.spec, options), campaign, template,
                                     tag, bed_root, files.escrow, jobs, settings)
    # The sandbox's probe is a child: made once a process, here, so an attempt's only children
    # are the adapter and the verifier (a machine with no sandbox is each attempt's to report).
    with contextlib.suppress(ApgError):
        choose_backend(SandboxOptions.from_settings(settings))
    write_record(files.setup, SetupRecord(
        fixtures=list(campaign.fixtures), tag=tag, template=str(template), beds=str(bed_root),
        jobs=[{"job": j.number, **_where(j)} for j in job_list]))
    context = Context(campaign=campaign, files=files, template=template,
                      settings=settings, site_step=options.site_step)
    return context, job_list


# ---------------------------------------------------------------------------- the attempts


def run_attempts(context: Context, job_list: list[beds.Job], attempts: list[Attempt],
                 executor: str, progress: Progress, planned: int | None = None,
                 recorded: Mapping[str, int] | None = None, address: str | None = None) -> bool:
    """Attempts start in plan order, each job taking the next when its last is collected; every
    step goes through the executor (:mod:`ai_proving_ground.executors`). Whether it was
    interrupted. A resume gives the whole plan's size and the outcomes already ``recorded``."""
    crashpoint("campaign.started")
    lanes = _Lanes(registry.open_executor(executor, context, job_list, address),
                   deque(attempts), progress)
    progress.begin(context.campaign.spec.name, planned or len(attempts), recorded)
    try:  # the display comes down however the attempts end
        try:
            for job in job_list:
                lanes.give(job)
            lanes.drain()
        except KeyboardInterrupt:
            lanes.stopping = True
            lanes.executor.cancel()
            say("APG_INTERRUPTED", "stopping: the running attempts are recorded as interrupted")
            lanes.drain()
        finally:
            lanes.executor.close()
        while lanes.pending and not lanes.stopping:  # interrupted: incomplete, not infra errors
            attempt = lanes.pending.popleft()
            record = AttemptRun(context, None, attempt).fail("no usable bed was left to run it")
            progress.finished("no bed", attempt, record.outcome, record.reason)
    finally:
        progress.close()
    crashpoint("campaign.attempts-done")
    return lanes.stopping


@dataclass
class _Lanes:
    """The runner's side of the executor: what is still to start and how many are done."""

    executor: Executor
    pending: deque[Attempt]
    progress: Progress
    stopping: bool = False

    def give(self, job: beds.Job) -> None:
        if self.pending and not self.stopping:
            attempt = self.pending.popleft()
            self.executor.submit(job, attempt)
            self.progress.started(job.name, attempt)

    def drain(self) -> None:
        """Take results until nothing submitted is left (the wait ends every 0.5 s, so the main
        thread sees Ctrl-C while attempts run)."""
        while True:
            idle = not self.executor.busy()  # before collecting: then every result is queued
            got = self.executor.collect(0 if idle else 0.5)
            for finished in got:
                self._take(finished)
            if idle and not got:
                return

    def _take(self, finished: Finished) -> None:
        job, attempt, record = finished.job, finished.attempt, finished.record
        self.progress.finished(job.name, attempt, None if record is None else record.outcome,
                               "" if record is None else record.reason)
        if record is not None:
            crashpoint("campaign.attempt-collected")
        if finished.error is not None:  # a bug: that lane stops, the others go on
            problem = finished.error
            say("APG_CAMPAIGN_JOB_LOST", f"{job.name}: {type(problem).__name__}: {problem}")
        elif finished.lost is not None:
            say("APG_CAMPAIGN_JOB_LOST", f"{job.name}: {finished.lost}; the other jobs go on")
        elif record is not None:
            self.give(job)


def _where(job: beds.Job) -> dict[str, str]:
    """setup.json's bed and escrow; neither is here for an executor that makes its beds where
    it runs the job (executors.base; a DDEV job's bed: its project's path, on its node)."""
    if job.escrowed is None:
        elsewhere = "made where its executor runs the job"
        return {"bed": str(job.bed) if job.ddev else elsewhere, "escrow": elsewhere}
    return {"bed": str(job.bed), "escrow": str(job.escrowed.set_dir)}
