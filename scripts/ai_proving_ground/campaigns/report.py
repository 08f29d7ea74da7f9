"""A campaign's statistics, recomputed from its records alone (offline: no bed needed).

Reads ``campaign.json``, ``plan.jsonl`` and ``runs/*/attempt.json`` through their record
definitions (:mod:`ai_proving_ground.campaigns.records`). Every attempt has one outcome (see
:mod:`ai_proving_ground.campaigns.outcome`), counted in its own column. k/n counts the outcomes
the agent is answerable for: k the passes, n every pass, fail, timeout, tampered and
no_attempt; an ``infra_error`` is never an agent failure and stays out of n. Per cell (task x
arm x agent x model): k/n with a 95% Wilson interval, each outcome's count and the hidden
verifier's; per arm x agent x model the pooled rate and pass^k over tasks; per agent x model the
paired effect of the compared arms with a seeded case-level bootstrap interval; per arm x agent
x model the skill trigger rates (campaigns.triggers; trigger-only tasks stay out of the arms'
pooled rates and the effect) and how often each behaviour entry held (campaigns.behaviour_rates).

Completeness is checked against the plan: a planned attempt without a readable record is
``missing`` (an unreadable record is named in ``unreadable``); a record whose fields disagree
with its outcome, that repeats another attempt, or that the plan does not hold is a warning
naming the file, and is counted as recorded, never reclassified.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ai_proving_ground.campaigns import agent_usage
from ai_proving_ground.campaigns.behaviour_rates import behaviour_rows
from ai_proving_ground.campaigns.cost import cost_by_arm
from ai_proving_ground.campaigns.outcome import disagreements
from ai_proving_ground.campaigns.records import (
    JUDGED,
    OUTCOMES,
    AttemptRecord,
    CampaignFiles,
    CampaignRecord,
    read_attempt,
    read_campaign,
    read_plan,
)
from ai_proving_ground.campaigns.spec import Attempt
from ai_proving_ground.campaigns.stats import paired_effect, pass_hat_k, wilson_interval
from ai_proving_ground.campaigns.triggers import trigger_rows, trigger_tasks
from ai_proving_ground.errors import ApgError

RUNS_UNREADABLE = "APG_CAMPAIGN_RUNS_UNREADABLE"
HIDDEN_STATUSES = ("pass", "fail", "error", "absent", "not_run")
SMALL_N = 10
"""Cells with fewer judged attempts than this get a note that their intervals are wide."""
RESAMPLES = 10000
LEVEL = 0.95

CellKey = tuple[str, str, str, str | None]
GroupKey = tuple[str, str, str | None]


@dataclass
class Loaded:
    """What the report reads: the campaign, its plan, the readable records and the rest."""

    campaign: CampaignRecord
    plan: list[Attempt] | None
    records: list[tuple[str, AttemptRecord]] = field(default_factory=list)
    unreadable: list[dict[str, str]] = field(default_factory=list)


def load(campaign_dir: Path | str) -> Loaded:
    """The campaign's records; APG_CAMPAIGN_NOT_FOUND (exit 2) without campaign.json,
    APG_CAMPAIGN_INVALID when it (or plan.jsonl) breaks its schema."""
    files = CampaignFiles(Path(campaign_dir))
    if not files.campaign.is_file():
        raise ApgError("APG_CAMPAIGN_NOT_FOUND", f"no {files.campaign.name} in {campaign_dir}; "
                       "give the directory a campaign run wrote", exit_code=2)
    try:
        campaign = read_campaign(files)
        plan = read_plan(files.plan) if files.plan.is_file() else None
    except ApgError as exc:
        raise ApgError("APG_CAMPAIGN_INVALID", exc.message) from None
    loaded = Loaded(campaign=campaign, plan=plan)
    for entry in attempt_entries(files):
        name = f"{files.runs.name}/{entry.name}/attempt.json"
        try:
            loaded.records.append((name, read_attempt(entry / "attempt.json")))
        except ApgError as exc:  # named relative to the campaign, so a copy reports the same
            reason = exc.message.replace(str(entry / "attempt.json"), name)
            loaded.unreadable.append({"file": name, "reason": reason})
    return loaded


def attempt_entries(files: CampaignFiles) -> list[Path]:
    """The attempt folders under ``runs/`` (none yet: no runs/); ``runs/`` that is not a folder
    one can list raises APG_CAMPAIGN_RUNS_UNREADABLE naming it, rather than every planned
    attempt reading as missing."""
    runs = files.runs
    if not runs.exists() and not runs.is_symlink():
        return []
    problem = ("a symbolic link" if runs.is_symlink() else None if runs.is_dir()
               else "a file" if runs.is_file() else "not a folder")
    try:
        if problem is None:
            return sorted(e for e in runs.iterdir() if e.is_dir() and not e.name.startswith("."))
    except OSError as exc:
        problem = f"unreadable ({exc.strerror or exc})"
    raise ApgError(RUNS_UNREADABLE, f"{runs} is {problem}, not the folder of attempt records, so "
                   "no attempt can be read; put the campaign's runs/ folder back (or copy the "
                   "campaign directory again)")


def build_report(campaign_dir: Path | str) -> dict[str, Any]:
    """The campaign's statistics as JSON-ready data: ``campaign``, ``totals``, ``cells``,
    ``arms``, ``effects``, ``triggers``, ``behaviour``, ``unreadable``, ``missing``,
    ``warnings``, ``cost`` and ``usage`` (campaigns.agent_usage: tokens, tool calls,
    denials, asks and leaks per arm)."""
    loaded = load(campaign_dir)
    campaign = loaded.campaign
    cells = _cells(loaded)
    # Trigger-only tasks have their own rates (campaigns.triggers), not a share of the arms'.
    routing = trigger_tasks(record for _, record in loaded.records)
    groups = _groups({key: records for key, records in cells.items() if key[0] not in routing})
    usage = agent_usage.by_arm(record for _, record in loaded.records)
    return {
        "campaign": {"name": campaign.name, "seed": campaign.seed, "arms": campaign.arms,
                     "compared": campaign.compare},
        "totals": totals(loaded),
        "cells": [_cell_row(key, outcomes) for key, outcomes in _ordered(cells, campaign)],
        "arms": _arm_rows(groups, campaign),
        "effects": _effects(groups, campaign),
        "triggers": trigger_rows([record for _, record in loaded.records], campaign),
        "behaviour": behaviour_rows([record for _, record in loaded.records], campaign),
        "unreadable": loaded.unreadable,
        "missing": [a.as_plan() for a in _missing(loaded)],
        "warnings": _warnings(loaded) + agent_usage.leak_warnings(usage),
        "cost": cost_by_arm(record for _, record in loaded.records),
        "usage": usage,
    }


def totals(loaded: Loaded) -> dict[str, int | None]:
    """Planned, recorded, each outcome, judged (n), missing, unreadable and the infrastructure
    errors retried (campaigns.retry: the earlier tries, never counted as outcomes)."""
    counts = {o: 0 for o in OUTCOMES}
    for _, record in loaded.records:
        counts[record.outcome] += 1
    return {"planned": None if loaded.plan is None else len(loaded.plan),
            "recorded": len(loaded.records), **counts,
            "judged": sum(counts[o] for o in JUDGED),
            "missing": len(_missing(loaded)), "unreadable": len(loaded.unreadable),
            "retries": sum(len(record.tries) for _, record in loaded.records)}


def summary_line(counts: dict[str, int | None]) -> str:
    """How the runner and the report both say the totals (one line, every outcome)."""
    shown = ", ".join(f"{counts[o]} {o}" for o in (*OUTCOMES, "missing"))
    return f"{counts['planned']} planned: {shown}"


# ---------------------------------------------------------------------------- counting


def _cells(loaded: Loaded) -> dict[CellKey, list[AttemptRecord]]:
    cells: dict[CellKey, list[AttemptRecord]] = {}
    for _, record in loaded.records:
        cells.setdefault(record.cell, []).append(record)
    return cells


def _judged(records: Sequence[AttemptRecord]) -> list[bool]:
    return [r.outcome == "pass" for r in records if r.outcome in JUDGED]


def _cell_row(key: CellKey, records: list[AttemptRecord]) -> dict[str, Any]:
    task, arm, agent, model = key
    outcomes = {o: sum(1 for r in records if r.outcome == o) for o in OUTCOMES}
    hidden = {s: sum(1 for r in records if r.outcome in JUDGED and r.hidden["status"] == s)
              for s in HIDDEN_STATUSES}
    return {"task_id": task, "arm": arm, "agent": agent, "model": model,
            **_rate_fields(_judged(records)), "outcomes": outcomes,
            "infra_errors": outcomes["infra_error"], "hidden": hidden}


def _groups(cells: dict[CellKey, list[AttemptRecord]]) -> dict[GroupKey, dict[str, list[AttemptRecord]]]:
    groups: dict[GroupKey, dict[str, list[AttemptRecord]]] = {}
    for (task, arm, agent, model), records in cells.items():
        groups.setdefault((arm, agent, model), {})[task] = records
    return groups


def _arm_rows(groups: dict[GroupKey, dict[str, list[AttemptRecord]]],
              campaign: CampaignRecord) -> list[dict[str, Any]]:
    rows = []
    for group in sorted(groups, key=lambda g: _group_rank(g, campaign)):
        arm, agent, model = group
        by_task = {task: _judged(records) for task, records in groups[group].items()}
        pooled = [passed for outcomes in by_task.values() for passed in outcomes]
        decided = {task: outcomes for task, outcomes in by_task.items() if outcomes}
        infra = sum(1 for records in groups[group].values() for r in records
                    if r.outcome == "infra_error")
        rows.append({"arm": arm, "agent": agent, "model": model, **_rate_fields(pooled),
                     "pass_hat_k": pass_hat_k(decided) if decided else None,
                     "pass_hat_k_cases": len(decided), "infra_errors": infra})
    return rows


def _effects(groups: dict[GroupKey, dict[str, list[AttemptRecord]]],
             campaign: CampaignRecord) -> list[dict[str, Any]]:
    if not campaign.compare:
        return []  # one arm: the agents as they are, no paired effect
    baseline, treatment = campaign.compare
    pairs = sorted({(agent, model) for _, agent, model in groups},
                   key=lambda p: (_rank(p[0], campaign.agents), _rank(p[1], campaign.models)))
    effects = []
    for agent, model in pairs:
        entry: dict[str, Any] = {"agent": agent, "model": model, "baseline": baseline,
                                 "treatment": treatment}
        a = {t: _judged(r) for t, r in groups.get((baseline, agent, model), {}).items()}
        b = {t: _judged(r) for t, r in groups.get((treatment, agent, model), {}).items()}
        if not any(a.get(task) and b.get(task) for task in a):
            entry.update(difference=None, low=None, high=None, cases=0, resamples=RESAMPLES,
                         seed=campaign.seed, level=LEVEL, baseline_rate=None, treatment_rate=None,
                         reason=f"no task has a judged attempt in both {baseline} and {treatment}")
        else:
            effect = paired_effect(a, b, seed=campaign.seed, resamples=RESAMPLES, level=LEVEL)
            entry.update(effect.to_dict(), reason=None)
        effects.append(entry)
    return effects


def _missing(loaded: Loaded) -> list[Attempt]:
    orders = {record.order for _, record in loaded.records}
    return [a for a in loaded.plan or [] if a.order not in orders]


def _warnings(loaded: Loaded) -> list[str]:
    warnings = []
    if loaded.plan is None:
        warnings.append("no plan.jsonl: completeness cannot be checked")
    planned = {a.order: a for a in loaded.plan or []}
    seen: dict[tuple[Any, ...], str] = {}
    for file, record in loaded.records:
        warnings += [f"{file}: {problem}" for problem in disagreements(record)]
        entry = planned.get(record.order)
        if loaded.plan is not None and (entry is None or entry.as_plan() != {
                k: v for k, v in record.as_json().items() if k in entry.as_plan()}):
            warnings.append(f"{file}: attempt {record.order} is not the plan's attempt "
                            f"{record.order}")
        if record.identity in seen:
            warnings.append(f"{file} repeats the attempt of {seen[record.identity]}")
        seen.setdefault(record.identity, file)
        if record.arm not in loaded.campaign.arms:
            warnings.append(f"{file}: arm {record.arm!r} is not declared in campaign.json")
    return warnings


def _rate_fields(outcomes: Sequence[bool]) -> dict[str, Any]:
    k, n = sum(1 for passed in outcomes if passed), len(outcomes)
    low, high = wilson_interval(k, n)
    return {"k": k, "n": n, "rate": k / n if n else None, "wilson": [low, high]}


def _ordered(cells: dict[CellKey, list[AttemptRecord]],
             campaign: CampaignRecord) -> list[tuple[CellKey, list[AttemptRecord]]]:
    def rank(key: CellKey) -> tuple[Any, ...]:
        task, arm, agent, model = key
        return (_rank(task, campaign.tasks), *_group_rank((arm, agent, model), campaign))

    return [(key, cells[key]) for key in sorted(cells, key=rank)]


def _group_rank(group: GroupKey, campaign: CampaignRecord) -> tuple[Any, ...]:
    arm, agent, model = group
    return (_rank(arm, campaign.arms), _rank(agent, campaign.agents),
            _rank(model, campaign.models))


def _rank(value: Any, declared: Sequence[Any]) -> tuple[int, int, str]:
    """Declared order first, then anything undeclared by name."""
    if value in declared:
        return (0, list(declared).index(value), "")
    return (1, 0, "" if value is None else str(value))
