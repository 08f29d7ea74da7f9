"""Job beds: the template, one clone per parallel job, its escrow, and a fresh clone after damage.

Beds live in their own directory (``--beds``, default a new folder in the system's temporary
directory), never inside the campaign directory: no path from a bed leads to the records or the
escrow. Each job's settings are the caller's with the bed's own baseline directory and the
campaign's dataset and fixtures, so jobs run side by side in one process.

A DDEV site cannot be cloned, so a spec's ``ddev_beds`` are the jobs themselves: one job per
DDEV project given, each already provisioned, escrowed by the campaign like a clone and reset
through its ddev driver (``site_driver`` pinned to ``ddev`` in the job's settings, so nothing an
attempt writes in the project changes which driver judges it, or where its baseline lies: outside
the project). A DDEV job whose attempt tampered cannot be swapped for a fresh copy: its judging
files in the bed are put back from the baseline tag's files read when it was escrowed, and the
bed is escrowed again; what cannot be put back so loses the job (``APG_CAMPAIGN_JOB_LOST``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ai_proving_ground import proc, report
from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.baselines.reset import read_snapshot, require_baseline, reset
from ai_proving_ground.baselines.snapshot import BedSnapshot
from ai_proving_ground.baselines.tree import BaselineTree, read_tree
from ai_proving_ground.bed import clone_bed, init_bed
from ai_proving_ground.campaigns import judging
from ai_proving_ground.campaigns.escrowed import Escrowed
from ai_proving_ground.campaigns.spec import Campaign
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import volatile
from ai_proving_ground.layout import BedLayout, is_ddev_project
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.base import SiteDriver, driver_for

DDEV, EMBEDDED = "ddev", "sqlite"  # the site drivers' names (sites.base.DRIVERS)


class CannotRun(Exception):
    """The campaign cannot run at all (exit 1)."""


def job_settings(settings: Settings, campaign: Campaign) -> Settings:
    """The caller's settings for a campaign bed: runs and baselines stay with their bed, the
    dataset is the campaign's (judged code: escrow and verify fingerprint it), the harness
    keeps its own copy of every envelope (parallel beds must not share a store), and the
    driver is the one the campaign chose, never one a file an attempt planted chooses."""
    driver = DDEV if campaign.spec.ddev_beds else EMBEDDED
    return dataclasses.replace(settings, approot=None, baseline_dir=None,
                               dataset=str(campaign.dataset.path), fixtures=campaign.fixtures,
                               no_import=True, site_driver=driver)


@dataclass
class Job:
    """One parallel lane: its bed, its escrow, the baseline tag's files and its settings."""

    number: int
    bed: Path
    escrow_root: Path
    settings: Settings
    tag: str
    escrowed: Escrowed | None = None
    # Read from git when the bed is escrowed: an attempt resets and diffs against it, no git.
    tree: BaselineTree | None = None
    # The whole-bed snapshot, read when the bed is escrowed: each reset reads no listing, and
    # none the agent could have reached.
    snapshot: BedSnapshot | None = None
    # A DDEV job's judging files as escrowed, to put back after tampering (campaigns.judging).
    judged: judging.JudgedFiles | None = None
    _site: SiteDriver | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return f"job-{self.number}"

    @property
    def ddev(self) -> bool:
        return self.settings.site_driver == DDEV

    def disposable(self) -> contextlib.AbstractContextManager[None]:
        """Where writes into this job's bed need not survive a power loss (no fsync; used for
        reset, whose marker file lives a few ms): an embedded job bed is a clone made for this
        campaign run and removed at its end, and after a crash nothing reads it (a resume
        clones new beds into a new or empty folder; an attempt's evidence, its run folder
        included, is written durably). A DDEV project is the operator's and outlives the
        campaign: its writes stay durable."""
        return contextlib.nullcontext() if self.ddev else volatile()

    def site(self) -> SiteDriver:
        """The bed's driver, as the job's settings chose it. A DDEV job keeps one: its driver
        reads ``ddev describe`` and ``core:status`` once, where a new one per step costs a
        ``ddev`` call each (20 of 68 calls in a four-attempt campaign through the stub)."""
        if not self.ddev:
            return driver_for(self.bed, self.settings)
        if self._site is None:
            self._site = driver_for(self.bed, self.settings)
        return self._site


def make_template(campaign: Campaign, template: Path, settings: Settings) -> Path:
    """A new bed with the campaign's fixtures, provisioned."""
    try:
        site = init_bed(template, campaign.fixtures, settings)
        provision(template, campaign.fixtures, site, settings)
    except ApgError as exc:
        raise CannotRun(f"could not make the template bed {template}: {exc}") from None
    return template


def check_template(campaign: Campaign, template: Path, settings: Settings) -> tuple[str, str]:
    """The set key and tag; a template that cannot be cloned and reset cannot run anything."""
    fixtures = " ".join(campaign.fixtures)
    if settings.site_driver == DDEV:
        return check_ddev_bed(campaign, template, settings)
    if not BedLayout(template).database.is_file():
        raise CannotRun(f"{template} is not an embedded bed (no {BedLayout(template).database}); "
                        f"create one: apg bed init {template} {fixtures}")
    if is_ddev_project(template):
        raise CannotRun(f"{template} is a DDEV project; campaigns clone their bed, which only "
                        "the embedded site allows: name DDEV projects as the spec's ddev_beds "
                        "(one job each) instead")
    return _baseline_of(template, campaign, settings, "be a campaign's template")


def check_ddev_bed(campaign: Campaign, bed: Path, settings: Settings) -> tuple[str, str]:
    """The set key and tag of a provisioned DDEV project a job runs on as it is."""
    if not is_ddev_project(bed):
        raise CannotRun(f"{bed} (ddev_beds) is not a DDEV project (no .ddev/config.yaml); set one "
                        "up as the README's DDEV section says")
    if any(arm.setup for arm in campaign.spec.arms):
        raise CannotRun("arm setup steps run apg site, the embedded site's command line; a "
                        "campaign on ddev_beds takes arms without setup")
    return _baseline_of(bed, campaign, settings, "run a campaign's attempts")


def _baseline_of(bed: Path, campaign: Campaign, settings: Settings, role: str) -> tuple[str, str]:
    """The set key and tag of the bed's baseline for the campaign's fixtures (reset's own check),
    or why the bed cannot take that role."""
    try:
        baseline = require_baseline(bed, campaign.fixtures, settings)
    except ApgError as exc:
        raise CannotRun(f"{bed} cannot {role}: {exc}") from None
    return baseline.set_key, baseline.tag


def prepare_ddev_jobs(campaign: Campaign, projects: list[Path], tag: str, escrow_root: Path,
                      settings: Settings) -> list[Job]:
    """One job per DDEV project, escrowed and reset in place (one after another: each is a
    round of ``ddev exec`` calls, and DDEV projects share the host's Docker)."""
    jobs = []
    for number, project in enumerate(projects):
        _key, project_tag = check_ddev_bed(campaign, project, settings)
        if project_tag != tag:
            raise CannotRun(f"{project} is provisioned with tag {project_tag}, the first of "
                            f"ddev_beds with {tag}: every job must run the same fixture set")
        job = Job(number=number, bed=project, escrow_root=escrow_root / f"job-{number}",
                  settings=settings, tag=tag)
        problem = ready_ddev_job(campaign, job)
        if problem:
            raise CannotRun(problem)
        jobs.append(job)
    return jobs


def reset_ddev_beds(campaign: Campaign, projects: list[Path], settings: Settings) -> None:
    """Reset each DDEV project to its baseline, before a resume fingerprints and escrows it: a
    runner killed mid-attempt or mid-reset leaves the project as the agent or the reset left it
    (its database half-changed, a recipe in the bed, the reset marker), and the fingerprints
    and the escrow must see the baseline, never that. CannotRun when one does not reset."""
    for project in projects:
        check_ddev_bed(campaign, project, settings)
        try:
            outcome = reset(project, campaign.fixtures, driver_for(project, settings), settings)
        except ApgError as exc:
            raise CannotRun(f"the bed {project} cannot be reset: {exc}") from None
        if outcome.failures:
            raise CannotRun(f"the bed {project} does not reset: {'; '.join(outcome.failures)}")


def ready_ddev_job(campaign: Campaign, job: Job) -> str | None:
    """Escrow a DDEV job's bed and reset it; None when it is ready, else why not."""
    try:
        _escrow(campaign, job)
        outcome = reset(job.bed, campaign.fixtures, job.site(), job.settings, job.tree)
    except ApgError as exc:
        return f"{job.name}: the bed {job.bed} cannot be escrowed and reset: {exc}"
    if outcome.failures:
        return f"{job.name}: the bed {job.bed} does not reset: {'; '.join(outcome.failures)}"
    return None


def prepare_jobs(campaign: Campaign, template: Path, tag: str, beds: Path, escrow_root: Path,
                 count: int, settings: Settings) -> list[Job]:
    """Clone, escrow and reset one bed per job (``settings``: :func:`job_settings`), side by
    side; any failure stops the campaign (the clones are identical, so one that cannot reset
    means none can)."""
    jobs = [Job(number=n, bed=beds / f"job-{n}", escrow_root=escrow_root / f"job-{n}",
                settings=settings, tag=tag) for n in range(count)]
    with ThreadPoolExecutor(max_workers=count) as pool:
        problems = [p for p in pool.map(lambda job: prepare_job(campaign, template, job), jobs) if p]
    if problems:
        raise CannotRun("; ".join(problems))
    return jobs


def prepare_job(campaign: Campaign, template: Path, job: Job) -> str | None:
    """A fresh clone of ``template`` at the job's bed, escrowed and reset: None when it is
    ready; else why not."""
    try:
        fresh_bed(campaign, template, job)
        outcome = reset(job.bed, campaign.fixtures, job.site(), job.settings, job.tree)
    except OSError as exc:
        return f"{job.name}: could not copy {template}: {exc}"
    except ApgError as exc:
        return f"{job.name}: the bed cannot be escrowed and reset: {exc}"
    if outcome.failures:
        return f"{job.name}: the bed does not reset: {'; '.join(outcome.failures)}"
    return None


def fresh_bed(campaign: Campaign, template: Path, job: Job) -> None:
    """A new copy of the template for the job, escrowed anew (the old escrow may have been
    reached by the attempt that damaged the bed), and its baseline tag's files read with it."""
    clone_bed(template, job.bed, job.settings)
    _escrow(campaign, job)


def _escrow(campaign: Campaign, job: Job) -> None:
    job.escrowed = Escrowed.make(job.bed, campaign.fixtures, job.escrow_root, job.settings)
    job.tree = read_tree(job.bed, job.tag)
    job.snapshot = read_snapshot(job.bed, campaign.fixtures, job.settings)
    if job.ddev:
        job.judged = judging.capture(job.bed, campaign.fixtures, job.settings)


def replace_bed(campaign: Campaign, template: Path, job: Job, label: str) -> None:
    """After tampering or a failed reset the bed's state is unknown: keep it as evidence
    (``<beds>/job-<n>.<label>``) and give the job a fresh, freshly escrowed copy (a DDEV job:
    its own bed, repaired; see the module doc)."""
    if job.ddev:
        repair_ddev_bed(campaign, job)
        return
    job.bed.rename(job.bed.with_name(f"{job.bed.name}.{label}"))
    fresh_bed(campaign, template, job)


def repair_ddev_bed(campaign: Campaign, job: Job) -> None:
    """Put the bed's judging files back as they were escrowed and check the bed against the
    same escrow (never a new one: that would accept what the attempt left); ApgError when the
    escrowed verifier still finds it changed."""
    assert job.judged is not None and job.escrowed is not None
    restored = judging.restore(job.bed, job.judged)
    report.say("APG_CAMPAIGN_BED_REPAIRED", f"{job.name}: {job.bed}: put back {len(restored)} "
               f"judging path(s) as escrowed: {', '.join(restored[:10]) or 'none'}")
    verdict = job.escrowed.verify(job.bed, True, proc.child_env(os.environ))
    if not verdict.ok:
        raise ApgError("APG_CAMPAIGN_BED_UNREPAIRED", f"{job.bed} still does not verify after its "
                       f"judging files were put back: {verdict.tokens()}; repair it by hand "
                       "(reinstall the add-on, re-provision, escrow) and run again")


def default_beds_dir(name: str) -> Path:
    """A new folder for the beds in the system's temporary directory, apart from the records."""
    return Path(tempfile.mkdtemp(prefix=f"apg-campaign-{name}-"))
