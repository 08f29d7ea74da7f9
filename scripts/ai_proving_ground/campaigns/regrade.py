"""Re-grading a finished campaign offline: every attempt's kept final state, graded again with
the current checks of the current dataset. No agent runs and no bed of the campaign is touched.

Each state (:mod:`campaigns.final_state`) is checked against its attempt's record, then restored
into a scratch bed: an embedded one in a temporary folder (the files archive unpacked, the
database image put where the embedded site keeps it, the attempt's run.json where grade reads
it), or for a DDEV state the scratch DDEV project ``--ddev-bed`` names
(:mod:`campaigns.regrade_ddev`: checked against the campaign's set key and baseline, reset
before each state and at the end). It is graded there in-process, as the runner grades: the
public checks, then the task's hidden verifier when it has one (it needs only the bed's files
and site, so it runs again, on the scratch bed; its commands, and on DDEV the ``ddev`` calls,
are the only child processes). An attempt's new outcome is decided by
:func:`campaigns.outcome.decide` from its recorded run and the new verdicts; a ``timeout`` or
``no_attempt`` is graded again as evidence and keeps its outcome, which its run decided.

Per attempt, ``status`` is ``regraded``, ``kept`` (an outcome no check decided: ``tampered``, an
``infra_error``, or a fail whose site could not be read; it stands as recorded) or
``not_regradable`` with a token: the state is missing (``APG_REGRADE_STATE_MISSING``) or not the
one kept (``APG_REGRADE_STATE_TAMPERED``), the dataset has no such task or it has neither checks
nor a trigger (``APG_REGRADE_TASK_MISSING``), the agent's stream a trigger or behaviour entry is
graded on is missing or unreadable (``APG_REGRADE_TRANSCRIPT_*``, :mod:`campaigns.regrade_transcript`:
parsed again from apg's ``stdout.log``, so a changed trigger, behaviour entry or detector is
re-scored), the state was kept on DDEV and no ``--ddev-bed`` was given
(``APG_REGRADE_NEEDS_DDEV``), or grading failed for a reason that is not the site's
(``APG_REGRADE_NOT_GRADED``). A state that cannot be graded is never a pass.

The originals are never written. Each regrade is a folder of its own, ``regrades/<UTC time>/``:
``regrade.json`` (:class:`RegradeRecord`, ``schemas/campaign_regrade.schema.json``: the dataset
graded with, then per attempt the old and new verdicts and each check's), ``runs/<order>/``
with the new ``grade.json``, ``hidden.json`` and ``attempt.json`` (the new verdict; a ``kept``
attempt's record as it was; none for one not regradable), and copies of ``campaign.json`` and
``plan.jsonl``, so ``apg campaign report regrades/<time>`` gives the statistics under the new
verdicts (an attempt not regradable is reported missing there).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from ai_proving_ground import proc
from ai_proving_ground.baselines.store import runs_dir
from ai_proving_ground.campaigns import final_state, regrade_ddev
from ai_proving_ground.campaigns import regrade_entries as compare
from ai_proving_ground.campaigns import regrade_transcript as transcript
from ai_proving_ground.campaigns.evidence import HIDDEN_FILE, HiddenRecord, read_hidden
from ai_proving_ground.campaigns.lock import Busy, only_campaign
from ai_proving_ground.campaigns.outcome import UNREADABLE, Facts, decide
from ai_proving_ground.campaigns.records import AttemptRecord, CampaignFiles, read_setup
from ai_proving_ground.campaigns.report import load
from ai_proving_ground.errors import ApgError
from ai_proving_ground.records import FieldsRecord, write_record
from ai_proving_ground.scorers.judge import Votes
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.sites.base import SiteDriver, get_driver
from ai_proving_ground.tasks import hidden
from ai_proving_ground.tasks.dataset import Dataset, load_dataset
from ai_proving_ground.tasks.envelope import Envelope, read_envelope, write_envelope
from ai_proving_ground.tasks.grade import GradeRequest, check_envelope, grade
from ai_proving_ground.tasks.run import now_iso, site_command

REGRADES = "regrades"
RECORD = "regrade.json"
GRADE_FILE = "grade.json"  # as the runner names the envelope it keeps per attempt
STATUSES = compare.STATUSES
# Outcomes no check decides: they stand as recorded.
KEPT = ("tampered", "infra_error")
# Outcomes the run decided: graded again as evidence, the outcome unchanged.
RUN_DECIDED = ("timeout", "no_attempt")
TASK_MISSING = "APG_REGRADE_TASK_MISSING"
NEEDS_DDEV = "APG_REGRADE_NEEDS_DDEV"
NOT_GRADED = "APG_REGRADE_NOT_GRADED"


@dataclass(frozen=True)
class RegradeRecord(FieldsRecord):
    """regrade.json: one regrade of a campaign, what it graded with and what changed."""

    SCHEMA: ClassVar[str] = "campaign_regrade"

    campaign: str
    started_at: str
    finished_at: str
    dataset: dict[str, str]  # path and sha256 graded with now
    original_dataset: dict[str, str]  # what the campaign ran with (campaign.json)
    totals: dict[str, int]
    attempts: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class RegradeOptions:
    """``directory``: the campaign; ``dataset``: another dataset file (default the campaign's);
    ``ddev_bed``: the scratch DDEV project DDEV states are graded in (none: not regradable)."""

    directory: Path
    dataset: Path | None = None
    ddev_bed: Path | None = None
    settings: Settings = field(default=DEFAULT_SETTINGS, compare=False)


@dataclass
class _Verdict:
    """One attempt graded on its restored state."""

    outcome: str
    reason: str
    score: float | None
    hidden: dict[str, Any]
    envelope: Envelope | None = None
    hidden_record: HiddenRecord | None = None
    judge_votes: dict[str, list[str]] | None = None  # what its judge entries were served


@dataclass(frozen=True)
class _Bed:
    """Where one state was restored: the bed, its driver and the settings that grade it."""

    path: Path
    site: SiteDriver
    settings: Settings


class _NotRegradable(Exception):
    def __init__(self, token: str, reason: str) -> None:
        super().__init__(f"{token} {reason}")
        self.token, self.reason = token, reason


def regrade(options: RegradeOptions) -> tuple[RegradeRecord, Path]:
    """Grade every recorded attempt's kept state again; the record and the regrade's folder.
    Under the campaign directory's lock (:mod:`campaigns.lock`), so that no run or resume
    writes an attempt while it is read: ``APG_CAMPAIGN_BUSY`` (exit 1) while one does."""
    files = CampaignFiles(options.directory.absolute())
    if not files.campaign.is_file():
        load(files.directory)  # raises APG_CAMPAIGN_NOT_FOUND, as the report does
    try:
        with only_campaign(files.directory):
            return _regrade(options, files)
    except Busy:
        raise ApgError("APG_CAMPAIGN_BUSY", f"an apg campaign run or resume is writing into "
                       f"{files.directory}; nothing was regraded. Wait for it to finish, then "
                       "regrade") from None


def _regrade(options: RegradeOptions, files: CampaignFiles) -> tuple[RegradeRecord, Path]:
    started = now_iso()
    loaded = load(files.directory)
    try:
        fixtures = read_setup(files).fixtures
    except ApgError as exc:
        raise ApgError("APG_CAMPAIGN_INVALID", exc.message) from None
    path = (options.dataset or Path(loaded.campaign.dataset["path"])).absolute()
    dataset = load_dataset(path)
    graded = replace(options.settings, approot=None, dataset=str(path), fixtures=tuple(fixtures),
                     no_import=True)
    settings = replace(graded, baseline_dir=None, site_driver="sqlite")
    entries = []
    # The scratch project is checked before the regrade's folder exists: a refusal writes nothing.
    with regrade_ddev.opened(options.ddev_bed, fixtures, loaded.campaign.provenance,
                             graded) as ddev, \
            tempfile.TemporaryDirectory(prefix="apg-regrade-") as scratch:
        out = _new_folder(files.directory / REGRADES)
        try:
            for _name, record in sorted(loaded.records, key=lambda item: item[1].order):
                entry = _one(files, record, dataset, settings, _Scratch(Path(scratch), ddev), out)
                entries.append(entry)
                compare.said(entry)
        except BaseException:
            shutil.rmtree(out, ignore_errors=True)  # no half a regrade: it is run again whole
            raise
    for name in (files.campaign, files.plan):
        if name.is_file():
            shutil.copyfile(name, out / name.name)
    result = RegradeRecord(
        campaign=loaded.campaign.name, started_at=started, finished_at=now_iso(),
        dataset={"path": str(path), "sha256": dataset.sha256},
        original_dataset={"path": loaded.campaign.dataset["path"],
                          "sha256": loaded.campaign.dataset["sha256"]},
        totals=compare.totals(entries), attempts=entries)
    write_record(out / RECORD, result)
    return result, out


def _new_folder(root: Path) -> Path:
    """``regrades/<UTC time>`` (``-2``, ``-3``... when two regrades share a second), made new."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    root.mkdir(exist_ok=True)
    for number in range(1, 1000):
        candidate = root / (stamp if number == 1 else f"{stamp}-{number}")
        try:
            candidate.mkdir()
        except FileExistsError:
            continue
        return candidate
    raise ApgError("APG_REGRADE_BUSY", f"{root} holds 999 regrades of {stamp}")


@dataclass(frozen=True)
class _Scratch:
    """Where states are restored: an embedded bed in ``folder``, DDEV states into ``ddev``."""

    folder: Path
    ddev: regrade_ddev.ScratchProject | None


def _one(files: CampaignFiles, record: AttemptRecord, dataset: Dataset, settings: Settings,
         scratch: _Scratch, out: Path) -> dict[str, Any]:
    """One attempt's entry in regrade.json; its new files under ``out``/runs/<order>/."""
    attempt_dir = files.attempt_dir(record.order)
    old = _old_checks(attempt_dir)
    entry: dict[str, Any] = {**record.as_plan(), "old": compare.summary(record), "new": None,
                             "token": None, "checks": [], "changed": []}
    if _kept(record):
        _write_attempt(out, record)
        return {**entry, "status": "kept", "new": compare.summary(record),
                "reason": f"{record.outcome} is no check's verdict: it stands as recorded",
                "checks": compare.pairs(old, old)}
    try:
        verdict = _grade(attempt_dir, record, dataset, settings, scratch)
    except _NotRegradable as exc:
        return {**entry, "status": "not_regradable", "token": exc.token, "reason": exc.reason,
                "checks": compare.pairs(old, {})}
    new_record = transcript.rescored(replace(
        record, outcome=verdict.outcome, reason=verdict.reason, score=verdict.score,
        hidden=verdict.hidden, judge_votes=verdict.judge_votes), verdict.envelope)
    folder = out / "runs" / f"{record.order:04d}"
    if verdict.envelope is not None:
        write_envelope(folder / GRADE_FILE, verdict.envelope)
    if verdict.hidden_record is not None:
        write_record(folder / HIDDEN_FILE, verdict.hidden_record)
    _write_attempt(out, new_record)
    pairs = compare.pairs(old, _checks_of(verdict.envelope, verdict.hidden["checks"]))
    return {**entry, "status": "regraded", "reason": verdict.reason, "new": compare.summary(new_record),
            "checks": pairs, "changed": [p["id"] for p in pairs if p["old"] != p["new"]]}


def _kept(record: AttemptRecord) -> bool:
    unreadable = record.outcome == "fail" and record.score is None and record.state is None \
        and record.reason.startswith(UNREADABLE)
    return record.outcome in KEPT or unreadable


def _grade(attempt_dir: Path, record: AttemptRecord, dataset: Dataset, settings: Settings,
           scratch: _Scratch) -> _Verdict:
    try:
        state = final_state.checked_state(attempt_dir, record.state)
    except final_state.StateUnusable as exc:
        raise _NotRegradable(exc.token, exc.reason) from None
    if state.driver != "sqlite" and scratch.ddev is None:
        raise _NotRegradable(NEEDS_DDEV, "the state is a DDEV dump, which only a Drupal site "
                             "loads: pass --ddev-bed PROJECT_DIR, a scratch DDEV project "
                             "provisioned with the campaign's fixtures (README: re-grading "
                             "offline)")
    try:
        task = dataset.task(record.task_id)
    except ApgError as exc:
        raise _NotRegradable(TASK_MISSING, exc.message) from None
    if not task.checks and task.trigger is None:
        raise _NotRegradable(TASK_MISSING, f"task {task.id} has no checks and no trigger in "
                             f"{dataset.path}")
    bed = _restore(attempt_dir, record, state, scratch, settings)
    if transcript.needed(task):  # graded on what the agent did: its stream, parsed again
        run_dir = None if record.run_id is None else runs_dir(bed.path, bed.settings) / record.run_id
        try:
            transcript.restore(attempt_dir, record.agent, run_dir, settings.log_limit_bytes,
                               record.streams)
        except transcript.TranscriptUnusable as exc:
            raise _NotRegradable(exc.token, exc.reason) from None
    envelope, unreadable, judged = _public(bed, record)
    score = None if envelope is None else envelope.score
    status, hidden_record = "absent", None
    verifier = hidden.resolve_verifier(dataset, task)
    if verifier is not None and record.run_status == "attempted" and unreadable is None:
        shutil.rmtree(scratch.folder / "hidden", ignore_errors=True)
        result = hidden.run_hidden(bed.path, verifier, proc.child_env(os.environ),
                                   scratch.folder / "hidden", site_command(bed.path))
        status, hidden_record = result.status, HiddenRecord.of(result, verifier)
    elif verifier is not None:
        status = "not_run"
    hidden_summary = {"status": status,
                      "checks": [] if hidden_record is None else hidden_record.checks}
    if record.outcome in RUN_DECIDED:
        return _Verdict(record.outcome, record.reason, score, hidden_summary, envelope,
                        hidden_record, judged)
    outcome, reason = decide(Facts(run_status=record.run_status,
                                   adapter_exit_code=record.adapter_exit_code,
                                   unreadable=unreadable, score=score, hidden_status=status))
    return _Verdict(outcome, reason, score, hidden_summary, envelope, hidden_record, judged)


def _restore(attempt_dir: Path, record: AttemptRecord, state: final_state.StateRecord,
             scratch: _Scratch, settings: Settings) -> _Bed:
    """A scratch bed holding the attempt's state (and its run.json, for the envelope)."""
    run: Path | None = attempt_dir / "run.json"
    if record.run_id is None or run is None or not run.is_file() or run.is_symlink():
        run = None
    if scratch.ddev is not None and state.driver == regrade_ddev.DDEV:
        try:
            scratch.ddev.load(attempt_dir, state, run, record.run_id)
        except final_state.StateUnusable as exc:
            raise _NotRegradable(exc.token, exc.reason) from None
        except ApgError as exc:
            if exc.token == regrade_ddev.BED_UNUSABLE:
                raise  # the project, not this state: the regrade stops
            raise _NotRegradable(NOT_GRADED, f"{exc.token} {exc.message}") from None
        ddev = scratch.ddev
        return _Bed(ddev.project, ddev.site(), ddev.settings)
    bed = scratch.folder / "bed"
    shutil.rmtree(bed, ignore_errors=True)
    bed.mkdir()
    try:
        final_state.restore_files(attempt_dir, state, bed)
        final_state.restore_embedded_database(attempt_dir, state, bed)
    except final_state.StateUnusable as exc:
        raise _NotRegradable(exc.token, exc.reason) from None
    if run is not None and record.run_id is not None:
        target = runs_dir(bed, settings) / record.run_id / "run.json"
        target.parent.mkdir(parents=True)
        shutil.copyfile(run, target)
    return _Bed(bed, get_driver("sqlite", bed), settings)


def _public(bed: _Bed, record: AttemptRecord
            ) -> tuple[Envelope | None, str | None, dict[str, list[str]] | None]:
    """The public checks' envelope, or why the site could not be read (the agent's fail), and
    the judge votes it was served: the attempt's own kept ones first, so the judge is asked only
    for a criterion or reply (a content hash) the attempt's grade never had."""
    votes = Votes(kept=record.judge_votes or {})
    settings = bed.settings
    run_id = record.run_id if (runs_dir(bed.path, settings) / str(record.run_id)).is_dir() \
        else None
    request = GradeRequest(approot=bed.path, task_id=record.task_id, dataset=settings.dataset,
                           run_id=run_id, settings=settings, force=True, hidden=False,
                           votes=votes)
    try:
        return check_envelope(grade(request, bed.site)), None, votes.used or None
    except ApgError as exc:
        if exc.token.startswith("APG_SITE_"):
            return None, str(exc), None
        raise _NotRegradable(NOT_GRADED, f"{exc.token} {exc.message}") from None


def _old_checks(attempt_dir: Path) -> dict[str, bool]:
    """Each check's verdict when the campaign graded it (grade.json, hidden.json), the
    trigger's and each behaviour entry's too."""
    checks: dict[str, bool] = {}
    # Not graded (or unreadable), no hidden verifier ran: no verdicts of those to compare with.
    with contextlib.suppress(ApgError):
        checks.update(transcript.verdicts(read_envelope(attempt_dir / GRADE_FILE)))
    with contextlib.suppress(ApgError):
        checks.update(_hidden_ids(read_hidden(attempt_dir / HIDDEN_FILE).checks))
    return checks


def _checks_of(envelope: Envelope | None, hidden_checks: list[dict[str, Any]]) -> dict[str, bool]:
    checks = transcript.verdicts(envelope)
    checks.update(_hidden_ids(hidden_checks))
    return checks


def _hidden_ids(checks: list[dict[str, Any]]) -> dict[str, bool]:
    """Hidden verifier steps, named apart from public checks of the same id."""
    return {f"hidden:{c['id']}": bool(c["passed"]) for c in checks}


def _write_attempt(out: Path, record: AttemptRecord) -> None:
    write_record(out / "runs" / f"{record.order:04d}" / "attempt.json", record)
