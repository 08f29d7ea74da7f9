"""Skill trigger cases: did the agent load the skill a case names, as the case expected.

A task's ``trigger: {skill, expect, owner}`` says whether the agent should load ``skill``
(``expect: load``) or leave it out (``no_load``; with ``owner``, a near miss that belongs to a
neighbouring skill). A load is what ``skill_loaded`` sees (Claude Code's Skill tool, or a read
of ``<skill>/SKILL.md``; for Codex a heuristic, recorded as such). A case is a question about
routing, not about the site, so it needs no state checks: a task with a trigger and no checks
is graded on the trigger alone (its envelope's score is 1 when the load went as expected);
beside checks the trigger is reported in the details and never changes the verdict. The
result is kept in the envelope's details as the JSON ``trigger``; a campaign copies it into
``attempt.json`` and its report gives each arm's hit and false-load rates (campaigns/triggers).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground import transcripts
from ai_proving_ground.scorers import skills
from ai_proving_ground.scorers.base import Context, against_the_agent, evidence
from ai_proving_ground.transcripts.record import Transcript

DETAILS_KEY = "trigger"


@dataclass(frozen=True)
class TriggerResult:
    """One trigger case's outcome; ``loaded`` None: no transcript (or one whose stream held no
    event), so nothing shows either way."""

    skill: str
    expect: str
    owner: str | None
    loaded: bool | None
    evidence: tuple[str, ...] = ()
    heuristic: bool = False
    graded: bool = True  # the case's verdict (no state checks) or reported beside them

    @property
    def correct(self) -> bool:
        return self.loaded is not None and self.loaded == (self.expect == "load")

    def as_json(self) -> dict[str, Any]:
        return {"skill": self.skill, "expect": self.expect, "owner": self.owner,
                "loaded": self.loaded, "correct": self.correct, "evidence": list(self.evidence),
                "heuristic": self.heuristic, "graded": self.graded}



def observe(trigger: dict[str, str], transcript: Transcript | None,
            graded: bool) -> TriggerResult:
    skill, expect, owner = trigger["skill"], trigger["expect"], trigger.get("owner")
    transcript, _missing = evidence(transcript)  # an empty stream shows no load either way
    if transcript is None:
        return TriggerResult(skill, expect, owner, None, graded=graded)
    # A no_load case counts a load the session alone shows: a forged one can only fail it.
    shown = against_the_agent(transcript) if expect == "no_load" else transcript
    seen = skills.observe(skill, shown, Context({"kind": "skill_loaded", "must": skill}))
    return TriggerResult(skill, expect, owner, seen.seen, seen.evidence, seen.heuristic, graded)


def apply_trigger(score_details: dict[str, Any], run_dir: Path, trigger: dict[str, str],
                  graded: bool) -> TriggerResult:
    """Observe ``trigger`` on ``run_dir``'s transcript.json and record it in the details; when
    ``graded`` (the task has no state checks) it decides the score and the verdict."""
    found = (transcripts.load(run_dir) if (run_dir / transcripts.TRANSCRIPT_FILE).is_file()
             else None)
    result = observe(trigger, found, graded)
    details = score_details["details"]
    details[DETAILS_KEY] = json.dumps(result.as_json(), sort_keys=True)
    if graded:
        score_details["score"] = 1.0 if result.correct else 0.0
        details["verdict"] = "pass" if result.correct else "fail"
        details["failed_checks"] = "" if result.correct else DETAILS_KEY
    return result


def said(result: dict[str, Any]) -> str:
    """A trigger result in words, for the verdict line: ``trigger NAME expected load: loaded``."""
    seen = ("no transcript" if result.get("loaded") is None else "loaded" if result["loaded"]
            else "not loaded")
    graded = "" if result.get("graded") else " (reported)"
    return f"trigger {result.get('skill')} expected {result.get('expect')}: {seen}{graded}"


def recorded(details: dict[str, Any]) -> dict[str, Any] | None:
    """The trigger result an envelope's details hold (None: the task is no trigger case)."""
    text = details.get(DETAILS_KEY)
    if not isinstance(text, str):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
