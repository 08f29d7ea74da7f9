"""The agent streams an attempt keeps, hashed when it is recorded and checked before a regrade.

``apg campaign regrade`` re-scores a trigger or behaviour entry on apg's own capture of the
agent CLI's stdout (``run/stdout.log``, each later turn's ``run/turns/<n>/stdout.log``, and
Codex's session part beside each), so those files are evidence as much as the final state is:
attempt.json's ``streams`` records each one's size and SHA-256 (the final state's fingerprint,
:func:`final_state.fingerprint`) when the attempt is written, and a regrade refuses a stream
that differs, was added or was removed since (:data:`TAMPERED`, :data:`MISSING`). A record
written before streams were hashed has none: it is regraded with a warning (:data:`UNHASHED`),
since nothing then can tell its streams from others.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_proving_ground import transcripts
from ai_proving_ground.campaigns.final_state import fingerprint
from ai_proving_ground.tasks.run_files import STDOUT_LOG
from ai_proving_ground.transcripts.turns import TURNS_DIR

MISSING = "APG_REGRADE_TRANSCRIPT_MISSING"
TAMPERED = "APG_REGRADE_TRANSCRIPT_TAMPERED"
UNHASHED = "APG_REGRADE_TRANSCRIPT_UNHASHED"
RUN_FOLDER = "run"  # where the runner moves the attempt's run directory (campaigns.attempt)
# The files of a run (or turn) folder a regrade parses: apg's capture and Codex's session part.
NAMES = (STDOUT_LOG, *sorted({s[2] for s in transcripts.SESSION_DIRS.values()}))


class StreamChanged(Exception):
    def __init__(self, token: str, reason: str) -> None:
        super().__init__(f"{token} {reason}")
        self.token, self.reason = token, reason


def recorded(attempt_dir: Path) -> dict[str, dict[str, Any]]:
    """Each kept stream's fingerprint, by its path under ``attempt_dir`` (``run/stdout.log``);
    regular files only (a link is never a stream, and a regrade refuses one anyway)."""
    run = attempt_dir / RUN_FOLDER
    found = {}
    for folder in [run, *(run / TURNS_DIR / str(n) for n in turn_numbers(run))]:
        for name in NAMES:
            path = folder / name
            if path.is_file() and not path.is_symlink():
                found[path.relative_to(attempt_dir).as_posix()] = fingerprint(path)
    return found


def turn_numbers(run: Path) -> list[int]:
    """The later turns whose folders ``run`` holds: a turn's folder is made when it is sent
    (tasks/turns.py), so each one's stream must be there."""
    turns = run / TURNS_DIR
    if not turns.is_dir() or turns.is_symlink():
        return []
    return sorted(int(n.name) for n in turns.iterdir() if n.name.isdigit() and n.name != "1")


def check(attempt_dir: Path, path: Path, streams: dict[str, dict[str, Any]]) -> str:
    """``path`` (a regular file under ``attempt_dir``) is the stream the attempt recorded, else
    :class:`StreamChanged`; its key in ``streams``."""
    key = path.relative_to(attempt_dir).as_posix()
    expected = streams.get(key)
    if expected is None:
        raise StreamChanged(TAMPERED, f"{path} is not a stream the attempt kept (attempt.json's "
                            "streams does not list it): it was added since")
    found = fingerprint(path)
    if found != {"bytes": expected.get("bytes"), "sha256": expected.get("sha256")}:
        raise StreamChanged(TAMPERED, f"{path} is not the stream the attempt kept (its record "
                            f"has {expected.get('bytes')} bytes, sha256 {expected.get('sha256')}; "
                            f"found {found['bytes']} bytes, sha256 {found['sha256']})")
    return key


def all_read(attempt_dir: Path, streams: dict[str, dict[str, Any]], read: set[str]) -> None:
    """Every recorded stream was read: one left unread was removed with its folder (a later
    turn's, say), which would drop that turn's verdicts."""
    unread = sorted(set(streams) - read)
    if unread:
        raise StreamChanged(MISSING, f"{attempt_dir / unread[0]} is missing: attempt.json's "
                            "streams lists it, so the attempt kept it")
