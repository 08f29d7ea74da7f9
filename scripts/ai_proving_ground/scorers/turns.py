"""Each later turn's behaviour scorers, on that turn's own transcript (``apg grade --run``).

A task of several turns (``tasks.turns``) may give a later turn its own ``behaviour``; it is
scored on ``turns/<n>/transcript.json`` alone, for the turns run.json says were sent. A skipped
turn's entries are not scored (nothing happened in it): they are listed as skipped. A scored
entry that fails fails the verdict, as the task's own do; the task's ``behaviour`` is scored on
the whole conversation (``transcript.json`` beside run.json).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ai_proving_ground import transcripts
from ai_proving_ground.scorers.base import score_behaviour
from ai_proving_ground.scorers.grading import judge_for
from ai_proving_ground.scorers.judge import Votes
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.dataset import Task
from ai_proving_ground.tasks.turns import TurnEntry, turn_dir


def apply_turns(score_details: dict[str, Any], run_dir: Path, run: dict[str, Any] | None,
                task: Task, approot: Path, settings: Settings, votes: Votes | None = None) -> None:
    """Record which turns were sent (``turns_sent``, ``turns_skipped``) and score each sent
    turn's behaviour (``turn_behaviour``, a JSON list; ``turn_behaviour_passed``, k/n)."""
    entries = {e.turn: e for e in map(TurnEntry.from_json, (run or {}).get("turns") or [])}
    details = score_details["details"]
    details["turns_sent"] = ",".join(str(n) for n, e in sorted(entries.items()) if e.sent)
    details["turns_skipped"] = "; ".join(f"{n}: {e.skipped or ''}"
                                         for n, e in sorted(entries.items()) if not e.sent)
    found: list[dict[str, Any]] = []
    for number, turn in enumerate(task.turns, start=2):
        behaviour = list(turn.get("behaviour") or [])
        if not behaviour:
            continue
        entry = entries.get(number)
        if entry is None or not entry.sent:
            found.extend({"turn": number, "id": b.get("id"), "kind": b["kind"], "skipped": True}
                         for b in behaviour)
            continue
        folder = run_dir / turn_dir(number)
        transcript = (transcripts.load(folder)
                      if (folder / transcripts.TRANSCRIPT_FILE).is_file() else None)
        results = score_behaviour(behaviour, transcript, judge_for(behaviour, approot, settings,
                                                                 votes))
        found.extend({"turn": number, **r.as_json()} for r in results)
    scored = [r for r in found if not r.get("skipped")]
    details["turn_behaviour"] = json.dumps(found, sort_keys=True)
    details["turn_behaviour_passed"] = f"{sum(1 for r in scored if r['passed'])}/{len(scored)}"
    if any(r["scored"] and not r["passed"] for r in scored):
        score_details["score"] = 0.0
        details["verdict"] = "fail"
