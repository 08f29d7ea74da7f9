"""Job beds: the template, one clone per parallel job, its escrow, and a fresh clone after damage.

Beds live in their own directory (``--beds``, default a new folder in the system's temporary
directory), never inside the campaign directory: no path from a bed leads to the records or the
escrow. Each job's settings are the caller's with the bed's own baseline directory and the
campaign's dataset and fixtures, so jobs run side by side in one process.
"""

from __future__ import annotations

import dataclasses
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.baselines.reset import require_baseline, reset
from ai_proving_ground.baselines.tree import BaselineTree, read_tree
from ai_proving_ground.bed import clone_bed, init_bed
from ai_proving_ground.campaigns.escrowed import Escrowed
from ai_proving_ground.campaigns.spec import Campaign
from ai_proving_ground.errors import ApgError
from ai_proving_ground.layout import BedLayout, is_ddev_project
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.embedded.driver import EmbeddedSite


class CannotRun(Exception):
    """The campaign cannot run at all (exit 1)."""


def job_settings(settings: Settings, campaign: Campaign) -> Settings:
    """The caller's settings for a campaign bed: runs and baselines stay with their bed, the
    dataset is the campaign's (judged code: escrow and verify fingerprint it), and the harness
    keeps its own copy of every envelope (parallel beds must not share a store)."""
    return dataclasses.replace(settings, approot=None, baseline_dir=None,
                               dataset=str(campaign.dataset.path), fixtures=campaign.fixtures,
                               no_import=True, site_driver=None)


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

    @property
    def name(self) -> str:
        return f"job-{self.number}"


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
    if not BedLayout(template).database.is_file():
        raise CannotRun(f"{template} is not an embedded bed (no {BedLayout(template).database}); "
                        f"create one: apg bed init {template} {fixtures}")
    if is_ddev_project(template):
        raise CannotRun(f"{template} is a DDEV project; campaigns clone their bed, which only "
                        "the embedded site allows")
    try:
        baseline = require_baseline(template, campaign.fixtures, settings)
    except ApgError as exc:
        raise CannotRun(f"{template} cannot be a campaign's template: {exc}") from None
    return baseline.set_key, baseline.tag


def prepare_jobs(campaign: Campaign, template: Path, tag: str, beds: Path, escrow_root: Path,
                 count: int, settings: Settings) -> list[Job]:
    """Clone, escrow and reset one bed per job (``settings``: :func:`job_settings`), side by
    side; any failure stops the campaign (the clones are identical, so one that cannot reset
    means none can)."""
    jobs = [Job(number=n, bed=beds / f"job-{n}", escrow_root=escrow_root / f"job-{n}",
                settings=settings, tag=tag) for n in range(count)]
    with ThreadPoolExecutor(max_workers=count) as pool:
        problems = [p for p in pool.map(lambda job: _prepare(campaign, template, job), jobs) if p]
    if problems:
        raise CannotRun("; ".join(problems))
    return jobs


def _prepare(campaign: Campaign, template: Path, job: Job) -> str | None:
    """None when the job's bed is ready; else why not."""
    try:
        fresh_bed(campaign, template, job)
        outcome = reset(job.bed, campaign.fixtures, EmbeddedSite(job.bed), job.settings, job.tree)
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
    job.escrowed = Escrowed.make(job.bed, campaign.fixtures, job.escrow_root, job.settings)
    job.tree = read_tree(job.bed, job.tag)


def replace_bed(campaign: Campaign, template: Path, job: Job, label: str) -> None:
    """After tampering or a failed reset the bed's state is unknown: keep it as evidence
    (``<beds>/job-<n>.<label>``) and give the job a fresh, freshly escrowed copy."""
    job.bed.rename(job.bed.with_name(f"{job.bed.name}.{label}"))
    fresh_bed(campaign, template, job)


def default_beds_dir(name: str) -> Path:
    """A new folder for the beds in the system's temporary directory, apart from the records."""
    return Path(tempfile.mkdtemp(prefix=f"apg-campaign-{name}-"))
