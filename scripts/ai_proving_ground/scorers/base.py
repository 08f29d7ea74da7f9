"""The behaviour result, the registry of behaviour kinds and the run that scores a task's list.

A task's ``behaviour`` entries (dataset schema, ``$defs/behaviour``) each name a ``kind`` and
exactly one of ``must`` (the behaviour must be seen) or ``must_not`` (it must not be). A kind's
module exposes ``observe(target, transcript) -> Observation``: whether the behaviour was seen
and the evidence that counted. Scored results decide the verdict with the state checks; a
reported-only one (``asked_first`` unless the entry says ``scored: true``) never does.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ai_proving_ground.scorers.judge import Judge
from ai_proving_ground.transcripts.record import Transcript

# Behaviour kind -> the module of this package that observes it, imported when a task uses it.
BEHAVIOUR_KINDS: dict[str, str] = {
    "commands": "commands",
    "asked_first": "asked",
    "skill_loaded": "skills",
    "judge": "reply",
}

# Kinds reported as friction rather than scored, unless the entry says ``scored: true``.
REPORTED_ONLY = frozenset({"asked_first"})


@dataclass(frozen=True)
class Observation:
    """Whether a behaviour was seen, what showed it, and whether that rests on a heuristic."""

    seen: bool
    evidence: tuple[str, ...] = ()
    heuristic: bool = False
    undecided: bool = False  # neither seen nor not seen (a judge's split): never a pass


@dataclass(frozen=True)
class Context:
    """What an observer may need beyond the transcript: its entry, and the judge (when set)."""

    entry: dict[str, Any]
    judge: Judge | None = None


class Observer(Protocol):
    def observe(self, target: Any, transcript: Transcript, context: Context) -> Observation: ...


@dataclass(frozen=True)
class BehaviourResult:
    """One behaviour entry's outcome."""

    id: str
    kind: str
    rule: str  # "must" or "must_not"
    target: Any  # the entry's must / must_not value
    passed: bool
    scored: bool
    evidence: tuple[str, ...]
    heuristic: bool
    message: str = ""
    undecided: bool = False

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "rule": self.rule, "target": self.target,
                "passed": self.passed, "scored": self.scored, "evidence": list(self.evidence),
                "heuristic": self.heuristic, "message": self.message,
                "undecided": self.undecided}


def _observer(kind: str) -> Observer:
    module: Observer = importlib.import_module(f"ai_proving_ground.scorers.{BEHAVIOUR_KINDS[kind]}")
    return module


def shows_nothing(transcript: Transcript) -> bool:
    """Whether ``transcript`` was parsed from a stream holding no event of the run (an empty
    stream, or lines no parser reads): no session, model, turn, tool call, command, file, skill,
    reply, usage or start-up. Such a transcript is no evidence, as a missing one is: that no
    command shows there proves nothing about the commands run. (The errors a parser adds for
    want of a result event are its own words, not the stream's.)"""
    return not (transcript.session_id or transcript.model or transcript.cli_version
                or transcript.turns or transcript.tool_calls or transcript.commands
                or transcript.unconfirmed_commands or transcript.files_read
                or transcript.files_written or transcript.tools_used or transcript.skills_used
                or transcript.permission_denials or transcript.final_reply is not None
                or transcript.completed or transcript.usage_source is not None
                or (transcript.startup is not None and transcript.startup.seen))


def evidence(transcript: Transcript | None) -> tuple[Transcript | None, str]:
    """``transcript`` when it can show anything, else None and why it cannot: the one rule every
    behaviour scorer and trigger case reads a run's transcript by."""
    if transcript is None:
        return None, "no transcript.json for this run: nothing to score"
    if shows_nothing(transcript):
        return None, (f"the run's stream ({transcript.source}) holds no event: nothing to score "
                      "(an empty stream is no evidence)")
    return transcript, ""


def against_the_agent(transcript: Transcript) -> Transcript:
    """``transcript`` with the commands only the agent-writable Codex session shows
    (``unconfirmed_commands``) counted as run, for a ``must_not`` and a ``no_load`` trigger.

    A forged session line can only make such a rule fail, never pass, so counting them helps no
    cheat; and Codex's stream sometimes leaves a fast-failing command out while its session keeps
    it (transcripts/codex.py), which would otherwise let a forbidden command go unseen. A
    ``must`` (and a ``load``) reads the stream's commands alone: there a forged line would help."""
    if not transcript.unconfirmed_commands:
        return transcript
    return replace(transcript,
                   commands=(*transcript.commands, *transcript.unconfirmed_commands))


def score_behaviour(entries: list[dict[str, Any]], transcript: Transcript | None,
                    judge: Judge | None = None) -> list[BehaviourResult]:
    """Each entry scored against ``transcript``; with no transcript, or one whose stream held
    no event (:func:`evidence`), nothing can be shown, so a ``must`` fails and a ``must_not``
    fails too (an absence of evidence proves nothing)."""
    transcript, missing = evidence(transcript)
    results = []
    for index, entry in enumerate(entries):
        kind = str(entry["kind"])
        rule = "must" if "must" in entry else "must_not"
        target = entry[rule]
        scored = bool(entry.get("scored", kind not in REPORTED_ONLY))
        name = str(entry.get("id") or f"{kind}-{index + 1}")
        if transcript is None:
            results.append(BehaviourResult(name, kind, rule, target, False, scored, (), False,
                                           missing))
            continue
        shown = against_the_agent(transcript) if rule == "must_not" else transcript
        seen = _observer(kind).observe(target, shown, Context(entry, judge))
        passed = not seen.undecided and (seen.seen if rule == "must" else not seen.seen)
        verb = "undecided" if seen.undecided else "seen" if seen.seen else "not seen"
        results.append(BehaviourResult(name, kind, rule, target, passed, scored, seen.evidence,
                                       seen.heuristic, f"{kind} {target!r} {verb}", seen.undecided))
    return results
