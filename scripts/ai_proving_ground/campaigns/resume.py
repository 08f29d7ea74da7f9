"""``apg campaign resume``: finish the campaign a killed or interrupted run left in its directory.

Under the directory's lock (:mod:`campaigns.lock`; a runner still at work: ``APG_CAMPAIGN_BUSY``):

1. ``campaign.json`` is read; it names the spec file (its provenance). No campaign.json:
   ``APG_CAMPAIGN_NOT_FOUND`` (a run killed before its first record leaves the directory
   empty, so ``apg campaign run`` can start there again).
2. The spec is loaded and its plan made again; it must be ``plan.jsonl`` (when written): a
   resumed campaign keeps its plan, so a spec whose matrix or seed changed is refused even with
   ``--force`` (``APG_CAMPAIGN_RESUME_PLAN_CHANGED``; run it as a new campaign).
3. ``runs/`` is swept: an attempt is done when its ``attempt.json`` reads, validates, is the
   plan's attempt at its order and was not interrupted (Ctrl-C). Every other ``runs/<order>/``
   (no record, a half-written or broken one, an interrupted attempt) is discarded: moved to
   ``discarded/<order>.<n>/`` (kept as evidence, never read by the report) and run again.
   ``runs/`` that is not a folder refuses (``APG_CAMPAIGN_RUNS_UNREADABLE``).
4. When attempts are left: the template (the spec's ``bed``, else the one setup.json names if it
   still checks, else a new one), then the fingerprints (:func:`provenance.changes`: spec,
   dataset, tasks, set key, baseline tag, grader tree, product version and code, adapters and
   their CLIs' versions, what each arm gives). A change refuses (``APG_CAMPAIGN_RESUME_CHANGED``
   naming each one and ``--force``) before anything is moved or run; ``--force`` goes on, and
   campaign.json's ``resumes`` records what it accepted. Nothing left to run: no fingerprint is
   compared (no attempt would mix inputs), only the report is written again. A DDEV
   campaign's projects are reset to their baseline first (a killed runner leaves one as its
   agent or its reset left it: a half-changed database, files in the judged recipes), so what
   is fingerprinted and escrowed is the baseline; the reset changes only the projects, which
   every run and resume resets anyway. On an executor that makes its beds where it runs them
   (Ray: executors.base) each actor resets its project on its node and compares its bed's own
   fingerprints (set key, baseline tag, grader tree) with the campaign's there; the driver
   compares the rest.
5. Fresh job beds (clones of the template in a new beds folder, escrowed and reset; DDEV
   projects reset in place), the attempts left in plan order (retries as in a run), the report.

Every planned attempt is so recorded exactly once, whatever instant the run was killed at.
Exit codes: 0 the matrix is complete; 1 refused (changed, busy, cannot run, unreadable records);
2 usage or a bad spec, or no campaign there; 130 interrupted (resume again).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground.campaigns import bed_folder, beds, provenance, runner
from ai_proving_ground.campaigns.agents_check import check_agents
from ai_proving_ground.campaigns.lock import Busy, only_campaign
from ai_proving_ground.campaigns.records import (
    AttemptRecord,
    CampaignFiles,
    CampaignRecord,
    read_attempt,
    read_campaign,
    read_plan,
    read_setup,
    write_plan,
)
from ai_proving_ground.campaigns.report import attempt_entries
from ai_proving_ground.campaigns.spec import Attempt, Campaign, CampaignSpec, load_spec, plan, resolve
from ai_proving_ground.errors import ApgError
from ai_proving_ground.executors import registry
from ai_proving_ground.records import write_record
from ai_proving_ground.report import say
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.run import now_iso

RESUME_CHANGED = "APG_CAMPAIGN_RESUME_CHANGED"
PLAN_CHANGED = "APG_CAMPAIGN_RESUME_PLAN_CHANGED"


@dataclass(frozen=True)
class ResumeOptions:
    """What ``apg campaign resume`` was asked; ``run`` carries the settings, the arm steps,
    ``--jobs`` and ``--beds`` (its ``spec_path`` is replaced by the one campaign.json names)."""

    directory: Path
    run: runner.RunnerOptions
    force: bool = False


class _Refused(Exception):
    """The resume refuses: (token, message); nothing in the directory was changed."""


def resume_campaign(options: ResumeOptions) -> runner.CampaignResult:
    files = CampaignFiles(options.directory.absolute())
    if not files.campaign.is_file():
        raise ApgError("APG_CAMPAIGN_NOT_FOUND", f"no {files.campaign.name} in {files.directory}: "
                       "no campaign recorded anything there (a run killed before its first record "
                       "leaves it empty); start it with apg campaign run SPEC --out "
                       f"{files.directory}", exit_code=2)
    try:
        with only_campaign(files.directory):
            return _resume_locked(files, options)
    except Busy as exc:
        say("APG_CAMPAIGN_BUSY", str(exc))
    except beds.CannotRun as exc:
        say("APG_CAMPAIGN_CANNOT_RUN", str(exc))
    except _Refused as exc:
        say(*exc.args)
    return runner.CampaignResult(1)


def _resume_locked(files: CampaignFiles, options: ResumeOptions) -> runner.CampaignResult:
    recorded = _recorded(files)
    spec_path = Path(recorded.provenance["spec"]["path"])
    if not spec_path.is_file():
        raise _Refused(RESUME_CHANGED, f"{files.directory}: the campaign's spec {spec_path} is gone; "
                       "put it back to resume (a resumed campaign runs the spec it started with)")
    run_options = dataclasses.replace(options.run, spec_path=spec_path, out=files.directory)
    campaign = resolve(load_spec(spec_path), run_options.settings)
    attempts = plan(campaign)
    _check_plan(files, attempts)
    done, stale = sweep(files, attempts)
    todo = [a for a in attempts if a.order not in done]
    if not todo:
        say("APG_CAMPAIGN_RESUME", f"{files.directory}: all {len(attempts)} planned attempts are "
            "recorded; writing the report")
        return runner.report_and_say(files)
    spec, settings = campaign.spec, beds.job_settings(run_options.settings, campaign)
    name = runner.executor_name(spec, run_options)
    registry.check_usable(name, run_options.address)
    if not registry.reads_on_nodes(name, campaign):  # else checked where they are, below
        check_agents(spec, spec.bed or next(iter(spec.ddev_beds), files.directory / "template"))
    bed_folder.check(run_options.beds)
    # An executor that makes its beds where it runs them (Ray) resets and compares each there.
    on_nodes = registry.beds_on_nodes(name)
    # The beds' own facts as the executor reads them where they are (None: read here).
    remote = registry.bed_facts(name, campaign, settings, run_options.address,
                                _jobs(spec, run_options, recorded, todo))
    tag, facts = (None, None) if remote is None else remote
    if spec.ddev_beds and not on_nodes:  # used in place: first back to the baseline
        beds.reset_ddev_beds(campaign, list(spec.ddev_beds[:_jobs(spec, run_options, recorded,
                                                                  todo)]), settings)
    # A template at hand (the spec's, the run's, DDEV's projects) is compared before any bed
    # folder is made: a refusal then leaves nothing behind.
    beds_at = _reusable_template(files, campaign, settings, tag)
    changed = (None if beds_at is None else _changes(files, recorded, campaign, beds_at,
                                                     settings, options.force, on_nodes, facts))
    folder = bed_folder.open_folder(spec, run_options.beds, run_options.keep_beds)
    try:
        # The job beds go in the new folder, cloned from the template at hand or a new one.
        beds_at = runner.template_for(campaign, settings, folder.path,
                                      None if beds_at is None else beds_at.template, tag)
        if changed is None:
            changed = _changes(files, recorded, campaign, beds_at, settings, options.force,
                               on_nodes, facts)
        redone = _take_over(files, recorded, changed, stale, attempts, spec_path)
        say("APG_CAMPAIGN_RESUME", f"{files.directory}: {len(done)} of {len(attempts)} attempts "
            f"recorded, {len(todo)} to run ({len(redone)} discarded to discarded/)"
            + (f"; forced past: {'; '.join(changed)}" if changed else ""))
        context, job_list = runner.open_jobs(campaign, files, beds_at,
                                             _jobs(spec, run_options, recorded, todo), run_options)
        interrupted = runner.run_attempts(
            context, job_list, todo, runner.executor_name(spec, run_options),
            run_options.progress, len(attempts), _outcomes(done.values()),
            address=run_options.address)
    finally:
        folder.close()
    return runner.report_and_say(files, interrupted)


def _jobs(spec: CampaignSpec, options: runner.RunnerOptions, recorded: CampaignRecord,
          todo: list[Attempt]) -> int:
    """``--jobs``, else the campaign's, never more than the attempts left (DDEV: one a project)."""
    if spec.ddev_beds:
        return min(len(spec.ddev_beds), len(todo))
    return max(1, min(options.jobs or recorded.jobs, len(todo)))


def _take_over(files: CampaignFiles, recorded: CampaignRecord, changed: list[str],
               stale: list[Path], attempts: list[Attempt], spec_path: Path) -> list[int]:
    """The directory made ready to run the rest: stale attempts discarded, the resume recorded
    in campaign.json, the spec's copy and the plan written when the run died before them. The
    orders discarded."""
    redone = _discard(files, stale)
    write_record(files.campaign, dataclasses.replace(recorded, resumes=[
        *recorded.resumes, {"at": now_iso(), "forced": changed, "redone": redone}]))
    if not files.spec.is_file():
        shutil.copyfile(spec_path, files.spec)
    if not files.plan.is_file():
        write_plan(files.plan, attempts)
    return redone


def _changes(files: CampaignFiles, recorded: CampaignRecord, campaign: Campaign,
             beds_at: runner.BedsAt, settings: Settings, force: bool,
             on_nodes: bool = False, facts: Mapping[str, Any] | None = None) -> list[str]:
    """The fingerprints that changed since the campaign started; refused unless ``force``
    (``on_nodes``: the beds' own are compared where they are made, after their reset;
    ``facts``: the beds' own facts as read there, registry.bed_facts)."""
    current = CampaignRecord.of(campaign, recorded.jobs, recorded.created_at, provenance.collect(
        campaign, beds_at.template, settings, os.environ, facts))  # PATH as the adapters get it
    changed = provenance.changes(recorded.as_json(), current.as_json(),
                                 provenance.BED_KEYS if on_nodes else ())
    if changed and not force:
        raise _Refused(RESUME_CHANGED, f"{files.directory}: changed since the campaign started: "
                       f"{'; '.join(changed)}. Nothing was run or moved. Put them back, or pass "
                       "--force to resume anyway (the attempts left then run on what changed, "
                       "and campaign.json records what --force accepted)")
    return changed


def _outcomes(records: Iterable[AttemptRecord]) -> dict[str, int]:
    """Outcome -> count of the attempts already recorded (the progress counts them as done)."""
    return dict(Counter(record.outcome for record in records))


def _recorded(files: CampaignFiles) -> CampaignRecord:
    try:
        recorded = read_campaign(files)
    except ApgError as exc:
        raise _Refused("APG_CAMPAIGN_INVALID", exc.message) from None
    if not recorded.provenance:
        raise _Refused("APG_CAMPAIGN_INVALID", f"{files.campaign} has no provenance (an apg "
                       "older than resume wrote it): it names no spec and no fingerprints to "
                       "compare, so it cannot be resumed; run the campaign again")
    return recorded


def _check_plan(files: CampaignFiles, attempts: list[Attempt]) -> None:
    if not files.plan.is_file():  # killed before it was written: the spec's plan is the plan
        return
    try:
        written = read_plan(files.plan)
    except ApgError as exc:
        raise _Refused("APG_CAMPAIGN_INVALID", exc.message) from None
    if written != attempts:
        raise _Refused(PLAN_CHANGED, f"{files.plan}: the spec now plans {len(attempts)} attempts "
                       f"and the campaign planned {len(written)}, not the same ones; a resumed "
                       "campaign keeps its plan (--force cannot change that): put the spec back, "
                       "or run the changed spec as a new campaign")


def sweep(files: CampaignFiles,
          attempts: list[Attempt]) -> tuple[dict[int, AttemptRecord], list[Path]]:
    """The attempts already done (order -> record), and the plan's ``runs/`` entries to discard
    and run again."""
    planned = {a.order: a for a in attempts}
    attempt_entries(files)  # runs/ must be a folder that lists (APG_CAMPAIGN_RUNS_UNREADABLE)
    entries = sorted(files.runs.iterdir()) if files.runs.is_dir() else []
    done: dict[int, AttemptRecord] = {}
    stale = []
    for entry in entries:
        order = int(entry.name) if entry.name.isdigit() else None
        if order is None or order not in planned or entry.name != f"{order:04d}":
            continue  # not one of the plan's attempts: the report warns about it
        record = _done(entry)
        if record is not None and record.as_plan() == planned[order].as_plan():
            done[order] = record
        else:
            stale.append(entry)
    return done, stale


def _done(entry: Path) -> AttemptRecord | None:
    """The attempt's record when it is a finished one; None: half-written, broken or
    interrupted."""
    if entry.is_symlink() or not entry.is_dir():
        return None
    try:
        record = read_attempt(entry / "attempt.json")
    except ApgError:
        return None
    return None if record.interrupted else record


def _discard(files: CampaignFiles, stale: list[Path]) -> list[int]:
    """Move each stale entry to ``discarded/<name>.<n>/``; their orders."""
    files.discarded.mkdir(exist_ok=True)
    for entry in stale:
        number = 1
        while (files.discarded / f"{entry.name}.{number}").exists():
            number += 1
        entry.rename(files.discarded / f"{entry.name}.{number}")
        say("APG_CAMPAIGN_RESUME_DISCARDED", f"{files.runs.name}/{entry.name}: no finished "
            f"record; moved to {files.discarded.name}/{entry.name}.{number} and run again")
    return [int(entry.name) for entry in stale]


def _reusable_template(files: CampaignFiles, campaign: Campaign, settings: Settings,
                       tag: str | None = None) -> runner.BedsAt | None:
    """A template at hand: the spec's bed or DDEV projects (``tag``: theirs, read where they
    are), else the one the run made while it still checks (a killed run leaves its beds'
    folder; an interrupted one removed it). None: a new one must be made."""
    spec = campaign.spec
    if spec.ddev_beds:
        return runner.template_for(campaign, settings, None, tag=tag)
    if spec.bed is not None:
        return runner.template_for(campaign, settings, spec.bed.parent, spec.bed)
    try:
        made = Path(read_setup(files).template) if files.setup.is_file() else None
    except ApgError:
        made = None
    if made is None:
        return None
    try:
        return runner.template_for(campaign, settings, made.parent, made)
    except beds.CannotRun as exc:
        say("APG_CAMPAIGN_RESUME", f"the run's template cannot be reused ({exc}); making a new one")
        return None
