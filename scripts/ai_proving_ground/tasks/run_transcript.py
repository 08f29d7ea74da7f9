"""What the agent did, kept for every run whose adapter started, a run apg stopped included.

Once the adapter is gone (it exited, or apg stopped it at its time limit or on Ctrl-C), its
CLI's event stream is copied from apg's own capture of the adapter's stdout (``stdout.log``: the
copy the adapter tees into its work folder is the agent's to rewrite, so it is never read), the
newest session file of a CLI that keeps one as it goes is copied out of the work folder
(``transcripts.SESSION_DIRS``: Codex's, which the adapter's exit trap can no longer copy when
apg stopped it; what the parser takes from it is marked unverified), and both are parsed into
``transcript.json``. A stopped run's record says ``partial``; a command in flight when it
stopped has no exit code. What the start-up showed that the run's arm did not give (an MCP
server, a skill, a plugin: ``arms/leaks.py``) is run.json's ``agent_transcript.leaks`` and an
``APG_RUN_LEAK`` line on stderr.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Any

from ai_proving_ground.arms.leaks import LEAK_TOKEN, describe, given_skills, leaks
from ai_proving_ground.report import say
from ai_proving_ground.tasks.run_files import STDOUT_LOG, RunFiles
from ai_proving_ground.tasks.sandboxing import run_work
from ai_proving_ground.transcripts import SESSION_DIRS, STREAM_FILES, review_run

# Room for the truncation line proc.tee adds after the log limit's bytes.
TRUNCATION_ROOM = 4096


def keep(files: RunFiles, agent: str, limit: int) -> tuple[dict[str, Any] | None, str | None]:
    """Copy ``agent``'s raw output into the run directory and parse it (transcripts.review_run:
    the summary for run.json and, when every tool call was denied, the no-attempt reason)."""
    work = run_work(files.run_dir)
    stream = STREAM_FILES.get(agent)
    if stream:
        files.collect_as(files.run_dir, ((STDOUT_LOG, stream),), limit + TRUNCATION_ROOM)
    session = SESSION_DIRS.get(agent)
    newest = newest_session(work, session[0], session[1]) if session else None
    if session and newest:
        files.collect_as(work, ((newest, session[2]),), limit)
    summary, all_denied = review_run(files.run_dir, agent)
    note_leaks(files.run_dir, summary)
    return summary, all_denied


def note_leaks(run_dir: Path, summary: Any) -> None:
    """Put into run.json's ``summary`` what its start-up showed that the arm did not give
    (``leaks``), and say ``APG_RUN_LEAK`` when there is any; nothing without a start-up."""
    startup = summary.get("startup") if isinstance(summary, dict) else None
    if not isinstance(startup, dict):
        return
    summary["leaks"] = found = leaks(startup, given_skills(run_dir))
    if found:
        say(LEAK_TOKEN, f"run {run_dir.name}: the agent's start-up showed what its arm did not "
            f"give it: {describe(found)} (run.json agent_transcript.leaks)")


def keep_stopped(files: RunFiles, record: dict[str, Any], agent: str, limit: int) -> None:
    """:func:`keep` for a run apg stopped, into ``record``; nothing when apg's own files in the
    run directory are not as it left them (the caller's record reports that)."""
    if files.problems():
        return
    summary, _ = keep(files, agent, limit)
    if summary is not None:
        record["agent_transcript"] = summary


def newest_session(work: os.PathLike[str], folder: str, pattern: str) -> str | None:
    """The path, relative to ``work``, of the last-named file matching ``pattern`` under
    ``folder``; never through a link (the folder, a folder in it or the file itself)."""
    top = os.path.join(work, folder)
    if os.path.islink(top) or not os.path.isdir(top):
        return None
    found: list[str] = []
    for parent, _, names in os.walk(top):  # os.walk does not follow links to folders
        found.extend(os.path.relpath(os.path.join(parent, n), work) for n in names
                     if fnmatch.fnmatch(n, pattern) and not os.path.islink(os.path.join(parent, n)))
    # Codex names them rollout-<time>-<id>.jsonl: the last name is the newest session.
    return max(found, key=os.path.basename) if found else None
