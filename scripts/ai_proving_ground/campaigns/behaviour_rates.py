"""A campaign's behaviour results per arm: how often each ``behaviour`` entry held, apart from
the state checks.

An attempt's grade keeps its behaviour results in the envelope's details (scorers/grading.py);
the attempt record keeps their short form (``behaviour``: id, kind, passed, scored, undecided)
so the report can count them offline. Per arm x agent x model x entry: k/n with its 95% Wilson
interval, k the attempts in which the entry held, n the judged attempts that scored it and were
decided; a judge's undecided results (a split vote, no judge model configured) are counted
apart, never as a pass or a fail. Reported-only entries (``scored: false``, ``asked_first``)
are listed the same way: this is where a judge criterion or friction is read per arm.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ai_proving_ground.campaigns.records import JUDGED, AttemptRecord, CampaignRecord
from ai_proving_ground.campaigns.triggers import rate

SHORT = ("id", "kind", "passed", "scored", "undecided")
BehaviourKey = tuple[str, str, str | None, str]


def recorded(details: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The short form of the behaviour results an envelope's details hold (None: the task has
    no behaviour entries, or they were not scored)."""
    text = details.get("behaviour")
    if not isinstance(text, str):
        return None
    try:
        found = json.loads(text)
    except ValueError:
        return None
    if not isinstance(found, list):
        return None
    return [{key: entry.get(key) for key in SHORT} for entry in found if isinstance(entry, dict)]


def behaviour_rows(records: Sequence[AttemptRecord],
                   campaign: CampaignRecord) -> list[dict[str, Any]]:
    """One row per arm x agent x model x behaviour entry, in the campaign's declared order."""
    found: dict[BehaviourKey, list[dict[str, Any]]] = {}
    kinds: dict[str, tuple[str, bool]] = {}
    for record in records:
        if record.outcome not in JUDGED:
            continue
        for entry in record.behaviour or []:
            name = str(entry["id"])
            found.setdefault((record.arm, record.agent, record.model, name), []).append(entry)
            kinds.setdefault(name, (str(entry["kind"]), bool(entry["scored"])))
    rows = []
    for key in sorted(found, key=lambda k: _rank(k, campaign)):
        arm, agent, model, name = key
        entries = found[key]
        decided = [e["passed"] is True for e in entries if not e.get("undecided")]
        kind, scored = kinds[name]
        rows.append({"arm": arm, "agent": agent, "model": model, "id": name, "kind": kind,
                     "scored": scored, "held": rate(decided),
                     "undecided": len(entries) - len(decided)})
    return rows


def _rank(key: BehaviourKey, campaign: CampaignRecord) -> tuple[Any, ...]:
    arm, agent, model, name = key

    def at(value: Any, declared: Sequence[Any]) -> tuple[int, str]:
        return ((list(declared).index(value), "") if value in declared
                else (len(declared), "" if value is None else str(value)))

    return (name, at(arm, campaign.arms), at(agent, campaign.agents), at(model, campaign.models))


def behaviour_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """How the command line says each row."""
    lines = []
    for r in rows:
        held = r["held"]
        said = (f"{held['k']}/{held['n']} ({held['rate']:.2f}, 95% {held['wilson'][0]:.2f}-"
                f"{held['wilson'][1]:.2f})" if held["n"] else "0/0")
        lines.append(f"{r['id']} ({r['kind']}{'' if r['scored'] else ', reported only'}) "
                     f"{r['arm']} / {r['agent']}" + (f" / {r['model']}" if r["model"] else "")
                     + f": held in {said}" + (f", {r['undecided']} undecided"
                                               if r["undecided"] else ""))
    return lines
