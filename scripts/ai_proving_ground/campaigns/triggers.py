"""A campaign's skill trigger rates per arm, from the attempts' recorded trigger results.

A trigger case (scorers/triggers.py) asks whether the agent loaded a skill. Per arm x agent x
model x skill the report gives the **hit rate** (should-load cases in which the skill loaded)
and the **false-load rate** (should-not cases, near misses included, in which it loaded anyway),
and the near misses' false-load rate apart; each k/n with its 95% Wilson interval. Only judged
attempts count (an ``infra_error`` is never the agent's), and an attempt with no transcript says
nothing either way: it is counted in ``unknown``, outside n. ``heuristic_loads`` counts the loads
that rest on a read of SKILL.md rather than Claude Code's Skill tool (all of Codex's).

Trigger-only tasks (graded on the trigger, no state checks) are left out of the arms' pooled
pass rates and the paired effect: in an arm without the skill a should-load case fails by
construction, which says nothing about outcomes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ai_proving_ground.campaigns.records import JUDGED, AttemptRecord, CampaignRecord
from ai_proving_ground.campaigns.stats import wilson_interval

TriggerKey = tuple[str, str, str | None, str]


def trigger_only(record: AttemptRecord) -> bool:
    """Whether the attempt's verdict was its trigger (a task with no state checks)."""
    return record.trigger is not None and record.trigger.get("graded") is True


def trigger_tasks(records: Iterable[AttemptRecord]) -> set[str]:
    """The tasks graded on their trigger alone."""
    return {r.task_id for r in records if trigger_only(r)}


def trigger_rows(records: Sequence[AttemptRecord], campaign: CampaignRecord) -> list[dict[str, Any]]:
    """One row per arm x agent x model x skill that has a trigger result, in declared order."""
    found: dict[TriggerKey, list[dict[str, Any]]] = {}
    for record in records:
        if record.trigger is not None and record.outcome in JUDGED:
            key = (record.arm, record.agent, record.model, str(record.trigger["skill"]))
            found.setdefault(key, []).append(record.trigger)
    return [_row(key, found[key]) for key in sorted(found, key=lambda k: _rank(k, campaign))]


def _row(key: TriggerKey, results: list[dict[str, Any]]) -> dict[str, Any]:
    arm, agent, model, skill = key
    known = [r for r in results if r["loaded"] is not None]
    should = [r["loaded"] is True for r in known if r["expect"] == "load"]
    should_not = [r["loaded"] is True for r in known if r["expect"] == "no_load"]
    near = [r["loaded"] is True for r in known if r["expect"] == "no_load" and r.get("owner")]
    return {"arm": arm, "agent": agent, "model": model, "skill": skill,
            "hit": rate(should), "false_load": rate(should_not), "near_miss_false_load": rate(near),
            "unknown": len(results) - len(known),
            "heuristic_loads": sum(1 for r in known if r["loaded"] and r["heuristic"])}


def rate(outcomes: Sequence[bool]) -> dict[str, Any]:
    """k/n (k: the True ones), the rate and its 95% Wilson interval."""
    k, n = sum(1 for o in outcomes if o), len(outcomes)
    low, high = wilson_interval(k, n)
    return {"k": k, "n": n, "rate": k / n if n else None, "wilson": [low, high]}


def _rank(key: TriggerKey, campaign: CampaignRecord) -> tuple[Any, ...]:
    arm, agent, model, skill = key

    def at(value: Any, declared: Sequence[Any]) -> tuple[int, str]:
        return ((list(declared).index(value), "") if value in declared
                else (len(declared), "" if value is None else str(value)))

    return (at(arm, campaign.arms), at(agent, campaign.agents), at(model, campaign.models), skill)


def trigger_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """How report.md and the command line say each row (one line each)."""
    return [f"{r['arm']} / {r['agent']}" + (f" / {r['model']}" if r["model"] else "")
            + f": {r['skill']} loaded in {_said(r['hit'])} should-load cases (hit rate), in "
            f"{_said(r['false_load'])} should-not cases (false loads; near misses "
            f"{_said(r['near_miss_false_load'])})"
            + (f", {r['unknown']} with no transcript" if r["unknown"] else "")
            + (f", {r['heuristic_loads']} by a SKILL.md read (heuristic)"
               if r["heuristic_loads"] else "") for r in rows]


def _said(part: dict[str, Any]) -> str:
    if not part["n"]:
        return "0/0"
    low, high = part["wilson"]
    return f"{part['k']}/{part['n']} ({part['rate']:.2f}, 95% {low:.2f}-{high:.2f})"
