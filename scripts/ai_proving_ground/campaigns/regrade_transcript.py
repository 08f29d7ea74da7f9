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
(``APG_REGRADE_TRANSCRIPT_UNREADABLE``) makes the attempt not regradable, never a pass.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from ai_proving_ground import transcripts
from ai_proving_ground.campaigns import behaviour_rates
from ai_proving_ground.campaigns.records import AttemptRecord
from ai_proving_ground.errors import ApgError
from ai_proving_ground.scorers import triggers
from ai_proving_ground.tasks.dataset import Task
from ai_proving_ground.tasks.envelope import Envelope
from ai_proving_ground.tasks.run_files import STDOUT_LOG, RunFiles
from ai_proving_ground.tasks.run_transcript import TRUNCATION_ROOM

MISSING = "APG_REGRADE_TRANSCRIPT_MISSING"
UNREADABLE = "APG_REGRADE_TRANSCRIPT_UNREADABLE"
RUN_FOLDER = "run"  # where the runner moves the attempt's run directory (campaigns.attempt)


class TranscriptUnusable(Exception):
    def __init__(self, token: str, reason: str) -> None:
        super().__init__(f"{token} {reason}")
        self.token, self.reason = token, reason


def needed(task: Task) -> bool:
    """Whether grading ``task`` reads the run's transcript (its trigger or behaviour)."""
    return task.trigger is not None or bool(task.behaviour)


def restore(attempt_dir: Path, agent: str, run_dir: Path | None, limit: int) -> None:
    """Parse the attempt's kept stream into ``run_dir``/transcript.json, as ``apg run`` did
    (``run_dir``: where the regrade's scratch bed holds the run's run.json; None: not kept)."""
    kept = attempt_dir / RUN_FOLDER
    stream = transcripts.STREAM_FILES.get(agent)
    where = f"{kept / STDOUT_LOG}"
    if run_dir is None or not run_dir.is_dir():
        raise TranscriptUnusable(MISSING, f"{attempt_dir}: the attempt kept no run.json, so no "
                                 "run whose transcript the task's trigger or behaviour is graded on")
    if (run_dir / transcripts.TRANSCRIPT_FILE).exists():  # a DDEV project's own run, say
        raise TranscriptUnusable(UNREADABLE, f"{run_dir} already holds a transcript.json this "
                                 "regrade did not parse; it is never graded on or overwritten")
    if stream is None:
        raise TranscriptUnusable(MISSING, f"agent {agent!r} has no transcript parser, so its run "
                                 "has no transcript to grade the task's trigger or behaviour on")
    if not (kept / STDOUT_LOG).exists() and not (kept / STDOUT_LOG).is_symlink():
        raise TranscriptUnusable(MISSING, f"{where} is missing: the agent's stream, which the "
                                 "task's trigger or behaviour is graded on, was not kept")
    files = RunFiles(run_dir)
    pairs = [(STDOUT_LOG, stream)]
    session = transcripts.SESSION_DIRS.get(agent)
    if session is not None and (kept / session[2]).is_file():
        pairs.append((session[2], session[2]))
    skipped = files.collect_as(kept, tuple(pairs), limit + TRUNCATION_ROOM)
    if skipped or not (run_dir / stream).is_file():
        raise TranscriptUnusable(UNREADABLE, f"{kept}: {'; '.join(skipped) or 'not copied'}")
    try:
        transcripts.record_run(run_dir, agent)
    except (ApgError, OSError, ValueError) as exc:
        raise TranscriptUnusable(UNREADABLE, f"{where} could not be parsed: {exc}") from None


def verdicts(envelope: Envelope | None) -> dict[str, bool]:
    """Each check's verdict in ``envelope``, then its trigger's and each behaviour entry's, named
    apart from the checks (``trigger``, ``behaviour:<id>``), for regrade.json's comparison."""
    if envelope is None:
        return {}
    found = {c.id: c.passed for c in envelope.checks}
    details = details_of(envelope.document)
    trigger = triggers.recorded(details)
    if trigger is not None:
        found["trigger"] = bool(trigger.get("correct"))
    for entry in behaviour_rates.recorded(details) or []:
        found[f"behaviour:{entry.get('id')}"] = bool(entry.get("passed"))
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
