"""A campaign's records: where each file lives, and campaign.json, setup.json, attempt.json and
report.json as values.

``CampaignFiles`` is the one owner of the campaign directory's layout; ``CampaignRecord``
(``schemas/campaign_record.schema.json``), ``SetupRecord`` (``schemas/campaign_setup.schema.json``),
``AttemptRecord`` (``schemas/attempt.schema.json``) and ``ReportRecord``
(``schemas/campaign_report.schema.json``, what :mod:`campaigns.report` computes) are written with
:func:`records.write_record` and read with :func:`records.read_record`, so the runner and the
report share one definition. The plan's lines are :class:`spec.Attempt` values
(``schemas/plan.schema.json``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ai_proving_ground.campaigns.spec import Attempt, Campaign
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_text
from ai_proving_ground.records import RECORD_INVALID, FieldsRecord, parse_record, read_record

# How the reason of an attempt stopped by an interrupt begins (campaigns.attempt says it so).
INTERRUPTED = "interrupted"
OUTCOMES = ("pass", "fail", "timeout", "tampered", "no_attempt", "infra_error")
# Outcomes the agent is answerable for: they count in k/n (only "pass" counts in k).
JUDGED = ("pass", "fail", "timeout", "tampered", "no_attempt")


@dataclass(frozen=True)
class CampaignFiles:
    """The campaign directory: the records it holds and where each attempt's files go."""

    directory: Path

    @property
    def campaign(self) -> Path:
        return self.directory / "campaign.json"

    @property
    def spec(self) -> Path:
        return self.directory / "spec.yml"

    @property
    def plan(self) -> Path:
        return self.directory / "plan.jsonl"

    @property
    def setup(self) -> Path:
        return self.directory / "setup.json"

    @property
    def report(self) -> Path:
        return self.directory / "report.json"

    @property
    def runs(self) -> Path:
        return self.directory / "runs"

    @property
    def logs(self) -> Path:
        return self.directory / "logs"

    @property
    def escrow(self) -> Path:
        return self.directory / "escrow"

    def attempt_dir(self, order: int) -> Path:
        return self.runs / f"{order:04d}"

    def attempt(self, order: int) -> Path:
        return self.attempt_dir(order) / "attempt.json"

    def tries(self, order: int) -> Path:
        """An attempt's earlier tries, ``tries/<k>/`` each (campaigns.retry)."""
        return self.attempt_dir(order) / "tries"

    @property
    def discarded(self) -> Path:
        """Half-written attempts a resume set aside, ``discarded/<order>.<n>/`` each."""
        return self.directory / "discarded"


@dataclass(frozen=True)
class CampaignRecord(FieldsRecord):
    """campaign.json: the campaign as resolved, written before the first attempt."""

    SCHEMA: ClassVar[str] = "campaign_record"

    name: str
    seed: int
    dataset: dict[str, str]
    arms: list[str]
    compare: list[str]
    tasks: list[str]
    agents: list[str]
    models: list[str | None]
    repeats: int
    jobs: int
    created_at: str
    # Arm name -> what it gives the agent, by hash (arms.given.ArmRecord); arms giving nothing
    # are absent. Each run's own arm.json says the same for that run.
    given: dict[str, dict[str, Any]] = field(default_factory=dict)
    # What the campaign ran on (campaigns.provenance.collect); absent in records written before
    # it existed, which a resume cannot compare.
    provenance: dict[str, Any] = field(default_factory=dict)
    # One entry per apg campaign resume: when, and the changed fingerprints it was forced past.
    resumes: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def of(cls, campaign: Campaign, jobs: int, created_at: str,
           provenance: dict[str, Any] | None = None) -> CampaignRecord:
        spec, dataset = campaign.spec, campaign.dataset
        return cls(name=spec.name, seed=spec.seed,
                   dataset={"name": dataset.name, "path": str(dataset.path),
                            "sha256": dataset.sha256},
                   arms=[arm.name for arm in spec.arms], compare=list(spec.compare),
                   tasks=[task.id for task in campaign.tasks], agents=list(spec.agents),
                   models=list(spec.models), repeats=spec.repeats, jobs=jobs,
                   created_at=created_at,
                   given={arm.name: arm.given.record().as_json() for arm in spec.arms
                          if arm.given.recorded},
                   provenance=provenance or {})

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CampaignRecord:
        record = super().from_json(data)
        if not record.compare and len(record.arms) == 1:
            return record  # one arm: nothing is compared
        if len(record.compare) != 2 or record.compare[0] == record.compare[1] \
                or not set(record.compare) <= set(record.arms):
            raise ApgError(RECORD_INVALID, f"compare {record.compare} must name two different "
                           f"declared arms {record.arms}")
        return record


@dataclass(frozen=True)
class SetupRecord(FieldsRecord):
    """setup.json: the fixture set and baseline tag the campaign runs on, and each job's bed."""

    SCHEMA: ClassVar[str] = "campaign_setup"

    fixtures: list[str]
    tag: str
    template: str
    beds: str  # the folder the job beds live in
    # One per job: {"job": n, "bed": path, "escrow": the job's escrow set}.
    jobs: list[dict[str, Any]]


@dataclass(frozen=True)
class AttemptRecord(Attempt):
    """attempt.json: the planned attempt, its single outcome, the reason and the facts behind it."""

    SCHEMA: ClassVar[str] = "attempt"

    outcome: str
    reason: str
    started_at: str
    finished_at: str | None = None
    score: float | None = None
    hidden: dict[str, Any] = field(default_factory=lambda: {"status": "absent", "checks": []})
    run_id: str | None = None
    run_status: str | None = None
    adapter_exit_code: int | None = None
    tampered: bool = False
    # The final site state kept for re-grading (campaigns.final_state.StateRecord: its files'
    # sizes and hashes); None: none was kept (a tampered attempt, or one that never got so far).
    state: dict[str, Any] | None = None
    # The agent streams kept in run/ for re-grading (campaigns.streams.recorded: each one's size
    # and hash, by its path under the attempt's folder); None: recorded before they were hashed.
    streams: dict[str, dict[str, Any]] | None = None
    # The judge votes its grade served or got, by content hash (scorers.judge.Votes.used), served
    # again by a regrade while criterion, reply and judge model are unchanged; None: no judge.
    judge_votes: dict[str, list[str]] | None = None
    # The earlier tries of this attempt, each an infrastructure error that was retried
    # (campaigns.retry): {"try": k, "outcome", "reason", "started_at", "finished_at"}; their
    # files are in tries/<k>/.
    tries: list[dict[str, Any]] = field(default_factory=list)
    # A skill trigger case's result (scorers.triggers.TriggerResult.as_json); None: no trigger.
    trigger: dict[str, Any] | None = None
    # Each behaviour entry's result, short (campaigns.behaviour_rates.SHORT); None: no entries.
    behaviour: list[dict[str, Any]] | None = None
    # What the agent's transcript recorded (campaigns.agent_usage.figures); None: no transcript.
    usage: dict[str, Any] | None = None
    # What its start-up showed that the arm did not give (arms.leaks, run.json's).
    leaks: list[dict[str, str]] = field(default_factory=list)

    @classmethod
    def planned(cls, attempt: Attempt, started_at: str, has_hidden: bool,
                tries: Sequence[dict[str, Any]] = ()) -> AttemptRecord:
        """The record of an attempt not yet decided (an infra error until it is)."""
        return cls(**attempt.as_plan(), outcome="infra_error", reason="not finished",
                   started_at=started_at,
                   hidden={"status": "not_run" if has_hidden else "absent", "checks": []},
                   tries=list(tries))

    def as_json(self) -> dict[str, Any]:
        # A task that is no trigger case and has no behaviour keeps the record it always had.
        data = super().as_json()
        for optional in ("trigger", "behaviour", "judge_votes"):
            if data.get(optional) is None:
                data.pop(optional, None)
        return data

    @property
    def interrupted(self) -> bool:
        """Stopped by Ctrl-C, not done: a resume runs it again."""
        return self.outcome == "infra_error" and self.reason.startswith(INTERRUPTED)

    @property
    def cell(self) -> tuple[str, str, str, str | None]:
        return (self.task_id, self.arm, self.agent, self.model)

    @property
    def identity(self) -> tuple[str, str, str, str | None, int]:
        return (*self.cell, self.repeat)


@dataclass(frozen=True)
class ReportRecord(FieldsRecord):
    """report.json: the campaign's statistics (see :mod:`campaigns.report` for each part)."""

    SCHEMA: ClassVar[str] = "campaign_report"

    campaign: dict[str, Any]
    totals: dict[str, int | None]
    cells: list[dict[str, Any]]
    arms: list[dict[str, Any]]
    effects: list[dict[str, Any]]
    unreadable: list[dict[str, str]]
    missing: list[dict[str, Any]]
    warnings: list[str]
    cost: dict[str, dict[str, Any]] = field(default_factory=dict)  # campaigns.cost, per arm
    triggers: list[dict[str, Any]] = field(default_factory=list)  # campaigns.triggers
    behaviour: list[dict[str, Any]] = field(default_factory=list)  # campaigns.behaviour_rates
    usage: dict[str, dict[str, Any]] = field(default_factory=dict)  # campaigns.agent_usage


def plan_text(attempts: list[Attempt]) -> str:
    """plan.jsonl's text: one attempt a line (what ``--dry-run`` prints too)."""
    return "".join(json.dumps(a.as_plan(), sort_keys=True) + "\n" for a in attempts)


def write_plan(path: Path, attempts: list[Attempt]) -> None:
    atomic_write_text(path, plan_text(attempts))


def read_plan(path: Path) -> list[Attempt]:
    """plan.jsonl's attempts; a bad line raises APG_RECORD_INVALID naming the file and line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ApgError(RECORD_INVALID, f"{path} is not readable ({exc})") from None
    planned = []
    for number, line in enumerate(lines, start=1):
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ApgError(RECORD_INVALID, f"{path}:{number}: not JSON ({exc})") from None
        planned.append(parse_record(data, Attempt, f"{path}:{number}"))
    return planned


def read_campaign(files: CampaignFiles) -> CampaignRecord:
    return read_record(files.campaign, CampaignRecord)


def read_setup(files: CampaignFiles) -> SetupRecord:
    return read_record(files.setup, SetupRecord)


def read_report(files: CampaignFiles) -> ReportRecord:
    return read_record(files.report, ReportRecord)


def read_attempt(path: Path) -> AttemptRecord:
    return read_record(path, AttemptRecord)
