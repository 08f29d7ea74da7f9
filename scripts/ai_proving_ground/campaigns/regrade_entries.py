"""A regrade's entries in regrade.json: each check's old and new verdict, an attempt's summary,
the totals, and the line each attempt prints (:mod:`campaigns.regrade`)."""

from __future__ import annotations

from typing import Any

from ai_proving_ground.campaigns.records import AttemptRecord
from ai_proving_ground.report import say

STATUSES = ("regraded", "kept", "not_regradable")


def pairs(old: dict[str, bool], new: dict[str, bool]) -> list[dict[str, Any]]:
    """Each check's old and new verdict ("pass", "fail", None: not graded then), in the new
    grade's order and then the checks only the old one had."""
    ids = [*new, *(i for i in old if i not in new)]
    return [{"id": i, "old": _word(old.get(i)), "new": _word(new.get(i))} for i in ids]


def _word(passed: bool | None) -> str | None:
    return None if passed is None else "pass" if passed else "fail"


def summary(record: AttemptRecord) -> dict[str, Any]:
    return {"outcome": record.outcome, "score": record.score, "hidden": record.hidden["status"]}


def totals(entries: list[dict[str, Any]]) -> dict[str, int]:
    counts = {status: sum(e["status"] == status for e in entries) for status in STATUSES}
    return {"attempts": len(entries), **counts,
            "outcome_changed": sum(e["new"] is not None and e["new"]["outcome"] != e["old"]["outcome"]
                                   for e in entries),
            "checks_changed": sum(len(e["changed"]) for e in entries)}


def said(entry: dict[str, Any]) -> None:
    head = f"#{entry['order']:04d} {entry['task_id']} arm={entry['arm']} agent={entry['agent']}"
    if entry["status"] == "not_regradable":
        say(entry["token"], f"{head}: not regradable: {entry['reason']}")
        return
    old, new = entry["old"]["outcome"], entry["new"]["outcome"]
    changed = f"; changed: {', '.join(entry['changed'])}" if entry["changed"] else ""
    say("APG_REGRADE_ATTEMPT", f"{head}: {entry['status']} {old} -> {new}{changed}")
