"""Folding a task's behaviour results into a grade's score details (``apg grade --run``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ai_proving_ground import transcripts
from ai_proving_ground.baselines.store import baseline_dir
from ai_proving_ground.scorers.base import score_behaviour
from ai_proving_ground.scorers.judge import Judge, Votes, anthropic_ask
from ai_proving_ground.settings import Settings


def judge_for(entries: list[dict[str, Any]], approot: Path, settings: Settings,
              votes: Votes | None = None) -> Judge | None:
    """The judge model the settings name, its votes cached in the bed's baseline directory (and
    served from, and kept in, ``votes``); None when no entry needs one or none is configured
    (its entries are then undecided)."""
    if settings.judge_model is None or not any(e["kind"] == "judge" for e in entries):
        return None
    ask = anthropic_ask(settings.judge_model, settings.judge_base_url, settings.judge_api_key)
    return Judge(settings.judge_model, ask, baseline_dir(approot, settings), votes)


def apply_behaviour(score_details: dict[str, Any], run_dir: Path, entries: list[dict[str, Any]],
                    approot: Path, settings: Settings, votes: Votes | None = None) -> None:
    """Score ``entries`` on ``run_dir``'s transcript.json; a scored one that fails fails the
    verdict. Recorded apart: ``behaviour`` (a JSON list), ``behaviour_passed`` (k/n) and
    ``behaviour_undecided`` (how many a judge could not decide, never passes)."""
    found = (transcripts.load(run_dir) if (run_dir / transcripts.TRANSCRIPT_FILE).is_file()
             else None)
    results = score_behaviour(entries, found, judge_for(entries, approot, settings, votes))
    details = score_details["details"]
    details["behaviour"] = json.dumps([r.as_json() for r in results], sort_keys=True)
    details["behaviour_passed"] = f"{sum(1 for r in results if r.passed)}/{len(results)}"
    details["behaviour_undecided"] = str(sum(1 for r in results if r.undecided))
    if any(r.scored and not r.passed for r in results):
        score_details["score"] = 0.0
        details["verdict"] = "fail"
