"""Agent transcripts: each real agent CLI's raw output turned into one normalized record.

An adapter prints its CLI's event stream on its stdout, which apg captures (``stdout.log``,
outside the work folder the agent can write) and copies to the stream's name in the run
directory (``claude-code.jsonl``, ``codex.jsonl``): never the copy the adapter tees into its
work folder, which the agent's own commands can rewrite. Codex also keeps a session file, which
it must write as it goes, so under ``codex-sessions/`` in the work folder: ``apg run`` copies it
as ``codex-session.jsonl``, and the parser takes from it only what it marks unverified (see
:mod:`ai_proving_ground.transcripts.codex`). :func:`record_run` parses them into
``transcript.json`` (:class:`~ai_proving_ground.transcripts.record.Transcript`). Parsing reads
only those files, so it can be re-run offline at any time (``apg transcript RUN``) and gives
the same record.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ai_proving_ground.errors import ApgError
from ai_proving_ground.records import read_record, write_record
from ai_proving_ground.transcripts import claude_code, codex
from ai_proving_ground.transcripts.record import Transcript

TRANSCRIPT_FILE = "transcript.json"
TRANSCRIPT_INVALID = "APG_TRANSCRIPT_INVALID"
# How a no-attempt reason for an all-denied run begins (campaign outcomes recognise it).
ALL_DENIED = "every tool call"


def _parse_claude_code(run_dir: Path) -> Transcript:
    return claude_code.parse(_read(run_dir / claude_code.RAW_FILE))


def _parse_codex(run_dir: Path) -> Transcript:
    session = run_dir / codex.SESSION_FILE
    return codex.parse(_read(run_dir / codex.RAW_FILE),
                       _read(session) if session.is_file() else None)


# Adapter name -> (the raw file it writes, the parser of its run directory).
PARSERS: dict[str, tuple[str, Callable[[Path], Transcript]]] = {
    claude_code.AGENT: (claude_code.RAW_FILE, _parse_claude_code),
    codex.AGENT: (codex.RAW_FILE, _parse_codex),
}

# Each agent's event stream: the run directory's name for apg's capture of the adapter's stdout.
STREAM_FILES: dict[str, str] = {claude_code.AGENT: claude_code.RAW_FILE, codex.AGENT: codex.RAW_FILE}
# An agent whose CLI keeps its own session file in a folder of the work folder as it goes:
# (that folder, the pattern of its files' names, the run directory's name for the newest).
# apg copies it, not the adapter's exit trap, which never runs when apg stops the adapter.
SESSION_DIRS: dict[str, tuple[str, str, str]] = {
    codex.AGENT: ("codex-sessions", "rollout-*.jsonl", codex.SESSION_FILE),
}


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ApgError("APG_TRANSCRIPT_UNREADABLE", f"{path}: {exc.strerror or exc}") from None


def parse_run(run_dir: Path, agent: str) -> Transcript | None:
    """The normalized record of ``agent``'s raw output in ``run_dir``; None when the agent has
    no parser or wrote no raw output (it never started, or it is not a known CLI)."""
    known = PARSERS.get(agent)
    if known is None or not (run_dir / known[0]).is_file():
        return None
    return known[1](run_dir)


def record_run(run_dir: Path, agent: str) -> Transcript | None:
    """Parse and write ``transcript.json`` (new-then-rename); None when there is nothing to parse."""
    transcript = parse_run(run_dir, agent)
    if transcript is not None:
        write_record(run_dir / TRANSCRIPT_FILE, transcript)
    return transcript


def load(run_dir: Path) -> Transcript:
    """``transcript.json`` as written, checked against its schema (APG_TRANSCRIPT_INVALID)."""
    return read_record(run_dir / TRANSCRIPT_FILE, Transcript, TRANSCRIPT_INVALID)


def no_attempt_reason(transcript: Transcript) -> str | None:
    """Why a run whose CLI exited 0 still tried nothing, or None when it tried."""
    if not transcript.all_denied:
        return None
    asked = "; ".join(f"{d.tool}({d.detail})" for d in transcript.permission_denials[:3])
    more = len(transcript.permission_denials) - 3
    return (f"{ALL_DENIED} ({transcript.tool_calls}) was denied permission: {asked}"
            + (f" and {more} more" if more > 0 else ""))


def review_run(run_dir: Path, agent: str) -> tuple[dict[str, object] | None, str | None]:
    """After the adapter exits: write transcript.json and say what run.json should carry.

    Returns the summary for run.json (or a note of why the raw output could not be parsed;
    None when the agent has no parser or wrote nothing) and, when every tool call was denied,
    the reason the run is no attempt. Never raises: a parse problem must not lose the run.
    """
    try:
        transcript = record_run(run_dir, agent)
    except (ApgError, OSError) as exc:
        return {"error": str(exc)}, None
    if transcript is None:
        return None, None
    return transcript.summary(TRANSCRIPT_FILE), no_attempt_reason(transcript)
