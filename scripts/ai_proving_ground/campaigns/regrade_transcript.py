"""A regraded attempt's transcript, parsed again from apg's own capture of the agent CLI's stream.

A task with a skill trigger or behaviour entries is graded on what the agent did, so a regrade
re-derives that from the kept run folder (``runs/<order>/run/``) as ``apg run`` did: the CLI's
event stream is apg's capture of the adapter's stdout (``stdout.log``), copied to the stream's
name and parsed into a new ``transcript.json`` with the current parser (plus Codex's session
file, whose fields the parser marks unverified, as ever). The run folder's ``transcript.json``
and the copy the adapter tees into its work folder are never read: the first is what the old
parser made of it, the second the agent's to rewrite. A changed trigger, behaviour entry, load
detector or parser therefore needs no new agent run. A stream that is missing
(``APG_REGRADE_TRANSCRIPT_MISSING``) or cannot be read or parsed
(``APG_REGRADE_TRANSCRIPT_UNREADABLE``), or is not the one the attempt kept
(``APG_REGRADE_TRANSCRIPT_TAMPERED``: its hash, :mod:`campaigns.streams`) makes the attempt not
regradable, never a pass.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ai_proving_ground import transcripts
from ai_proving_ground.campaigns import behaviour_rates, streams
from ai_proving_ground.campaigns.records import AttemptRecord
from ai_proving_ground.errors import ApgError
from ai_proving_ground.records import write_record
from ai_proving_ground.report import say
from ai_proving_ground.scorers import triggers
from ai_proving_ground.tasks.dataset import Task
from ai_proving_ground.tasks.envelope import Envelope
from ai_proving_ground.tasks.run_files import STDOUT_LOG, RunFiles
from ai_proving_ground.tasks.run_transcript import TRUNCATION_ROOM
from ai_proving_ground.transcripts.record import Transcript
from ai_proving_ground.transcripts.turns import TURNS_DIR, own_usage

MISSING = streams.MISSING
UNREADABLE = "APG_REGRADE_TRANSCRIPT_UNREADABLE"
RUN_FOLDER = streams.RUN_FOLDER


class TranscriptUnusable(Exception):
    def __init__(self, token: str, reason: str) -> None:
        super().__init__(f"{token} {reason}")
        self.token, self.reason = token, reason


def needed(task: Task) -> bool:
    """Whether grading ``task`` reads the run's transcript (its trigger or behaviour, a later
    turn's behaviour included)."""
    return task.trigger is not None or bool(task.behaviour) or any(
        turn.get("behaviour") for turn in task.turns)


def restore(attempt_dir: Path, agent: str, run_dir: Path | None, limit: int,
            hashes: dict[str, dict[str, Any]] | None) -> None:
    """Parse the attempt's kept stream into ``run_dir``/transcript.json, as ``apg run`` did, and
    each later turn's into ``turns/<n>/`` (``run_dir``: where the regrade's scratch bed holds
    the run's run.json; None: not kept), each checked against ``hashes`` (attempt.json's
    ``streams``; None: a record from before streams were hashed, regraded with a warning)."""
    try:
        _restore(attempt_dir, agent, run_dir, limit, hashes)
    except streams.StreamChanged as exc:
        raise TranscriptUnusable(exc.token, exc.reason) from None


def _restore(attempt_dir: Path, agent: str, run_dir: Path | None, limit: int,
             hashes: dict[str, dict[str, Any]] | None) -> None:
    kept = attempt_dir / RUN_FOLDER
    if run_dir is None or not run_dir.is_dir():
        raise TranscriptUnusable(MISSING, f"{attempt_dir}: the attempt kept no run.json, so no "
                                 "run whose transcript the task's trigger or behaviour is graded on")
    if (run_dir / transcripts.TRANSCRIPT_FILE).exists():  # a DDEV project's own run, say
        raise TranscriptUnusable(UNREADABLE, f"{run_dir} already holds a transcript.json this "
                                 "regrade did not parse; it is never graded on or overwritten")
    if transcripts.STREAM_FILES.get(agent) is None:
        raise TranscriptUnusable(MISSING, f"agent {agent!r} has no transcript parser, so its run "
                                 "has no transcript to grade the task's trigger or behaviour on")
    if hashes is None:
        say(streams.UNHASHED, f"{attempt_dir}: attempt.json records no hash of its streams (it "
            "was written before they were hashed), so a changed run/stdout.log cannot be told "
            "apart; regraded as kept")
    read: set[str] = set()

    def check(path: Path) -> None:
        if hashes is not None:
            read.add(streams.check(attempt_dir, path, hashes))

    before = [_parsed(kept, run_dir, agent, limit, check)]
    # A later turn's stream is apg's capture of that turn's stdout (tasks/turns.py), its usage
    # its own (own_usage: the turns before it subtracted), as the run recorded it.
    for number in streams.turn_numbers(kept):
        folder = run_dir / TURNS_DIR / str(number)
        folder.mkdir(parents=True)
        parsed = _parsed(kept / TURNS_DIR / str(number), folder, agent, limit, check)
        write_record(folder / transcripts.TRANSCRIPT_FILE, own_usage(agent, parsed, before))
        before.append(parsed)
    if hashes is not None:
        streams.all_read(attempt_dir, hashes, read)


def _parsed(kept: Path, folder: Path, agent: str, limit: int,
            check: Callable[[Path], None]) -> Transcript:
    """``kept``'s stdout.log (and Codex's session part) copied into ``folder`` and parsed there,
    each ``check``ed first (its hash) once it is known to be a regular file."""
    stream = transcripts.STREAM_FILES[agent]
    if not (kept / STDOUT_LOG).exists() and not (kept / STDOUT_LOG).is_symlink():
        raise TranscriptUnusable(MISSING, f"{kept / STDOUT_LOG} is missing: the agent's stream, "
                                 "which the task's trigger or behaviour is graded on, was not kept")
    pairs = [(STDOUT_LOG, stream)]
    session = transcripts.SESSION_DIRS.get(agent)
    if session is not None and (kept / session[2]).is_file():
        pairs.append((session[2], session[2]))
    skipped = RunFiles(folder).collect_as(kept, tuple(pairs), limit + TRUNCATION_ROOM)
    if skipped or not (folder / stream).is_file():
        raise TranscriptUnusable(UNREADABLE, f"{kept}: {'; '.join(skipped) or 'not copied'}")
    for name, _copy in pairs:  # regular files: collect_as copies nothing else
        check(kept / name)
    try:
        parsed = transcripts.record_run(folder, agent)
    except (ApgError, OSError, ValueError) as exc:
        raise TranscriptUnusable(UNREADABLE, f"{kept / STDOUT_LOG} could not be parsed: "
                                 f"{exc}") from None
    if parsed is None:
        raise TranscriptUnusable(MISSING, f"{kept}: agent {agent!r} wrote no stream there")
    return parsed


def verdicts(envelope: Envelope | None) -> dict[str, bool]:
    """Each check's verdict in ``envelope``, then its trigger's and each behaviour entry's (a
    later turn's too), named apart from the checks (``trigger``, ``behaviour:<id>``,
    ``turn<n>:<id>``), for regrade.json's comparison."""
    if envelope is None:
        return {}
    found = {c.id: c.passed for c in envelope.checks}
    details = details_of(envelope.document)
    trigger = triggers.recorded(details)
    if trigger is not None:
        found["trigger"] = bool(trigger.get("correct"))
    for entry in behaviour_rates.recorded(details) or []:
        found[f"behaviour:{entry.get('id')}"] = bool(entry.get("passed"))
    with contextlib.suppress(ValueError, TypeError):  # a later turn's, when it was sent
        found.update({f"turn{e['turn']}:{e.get('id')}": bool(e.get("passed")) for e in
                      json.loads(details.get("turn_behaviour") or "[]") if not e.get("skipped")})
    return found


def details_of(document: dict[str, Any]) -> dict[str, Any]:
    """An envelope document's string details."""
    details = document["evaluation_results"][0]["score_details"]["details"]
    return details if isinstance(details, dict) else {}



def rescored(record: AttemptRecord, envelope: Envelope | None) -> AttemptRecord:
    """``record`` with the trigger and behaviour results ``envelope`` holds, as the runner
    records them (campaigns.attempt); as recorded when nothing was graded."""
    if envelope is None:
        return record
    details = details_of(envelope.document)
    return replace(record, trigger=triggers.recorded(details),
                   behaviour=behaviour_rates.recorded(details))
