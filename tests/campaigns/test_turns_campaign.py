"""A campaign attempt of a task of several turns runs its turns (tasks/turns.py through run_task):
the second is sent while its condition holds and sets the note the final block checks, the third
is skipped; the attempt passes and its run.json lists the turns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from campaign_kit import FIXTURES, attempts, run_campaign, write_spec

UNSET = [{"not": {"type": "config_exists", "name": "system.turns"}}]


def test_a_campaign_attempt_runs_every_turn(apg: Any, tmp_path: Path, template: Path) -> None:
    dataset = tmp_path / "turns.yml"
    dataset.write_text(json.dumps({"dataset": "turn_cases", "version": 1, "tasks": [{
        "id": "t01", "prompt": "Have a look first.", "fixtures": FIXTURES,
        "final": {"checks": [{"type": "config_exists", "name": "system.turns"}]},
        "turns": [{"prompt": "Now set the note.", "only_if": UNSET},
                  {"prompt": "Is it set?", "only_if": UNSET}]}]}), "utf-8")
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "turns", "dataset": str(dataset), "tasks": ["t01"], "arms": {"plain": {}},
        "agents": ["turner"], "repeats": 1, "seed": 3, "jobs": 1, "bed": str(template)})
    out = tmp_path / "out"
    run_campaign(apg, spec, out)
    [attempt] = attempts(out)
    assert attempt["outcome"] == "pass", attempt
    run = json.loads((out / "runs" / "0000" / "run.json").read_text("utf-8"))
    assert [(t["turn"], t["sent"]) for t in run["turns"]] == [(1, True), (2, True), (3, False)]
    config = json.loads((out / "runs" / "0000" / "config.json").read_text("utf-8"))
    assert config["system.turns"] == {"value": "yes"}
