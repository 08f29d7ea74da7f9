"""A conversation of several turns: one turn's part of a growing session file, and the turns'
transcripts summed into the record of the whole conversation.

Each later turn of a task resumes the agent's own session (``tasks.turns``), and each CLI run
writes its own raw output, parsed into that turn's transcript. Claude Code's stream-json is the
turn's alone; Codex's session file is the whole conversation's, appended to by every turn
(``codex exec resume`` keeps the file and the session id), so a turn keeps only its own part of
it (:func:`session_part`), and its turn totals are the session's so far, so a turn's usage is
what they grew by (:func:`own_usage`): each turn's transcript counts that turn alone (a stored
later turn's usage is that difference, where a re-parse of its raw output alone gives the total).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ai_proving_ground.transcripts import codex, parse_run
from ai_proving_ground.transcripts.record import TokenUsage, Transcript
from ai_proving_ground.transcripts.startup import Startup

# Agent -> the type of its session file's header lines, which name the session, the CLI and its
# version once at the top: kept in every turn's part, so each part parses on its own.
SESSION_HEADER: dict[str, str] = {codex.AGENT: "session_meta"}
# Where a later turn's files are, under the run directory: turns/<n>/.
TURNS_DIR = "turns"
# The source a conversation's summed record names: each turn's own, turns/<n>/transcript.json.
MERGED_SOURCE = f"{TURNS_DIR}/*/transcript.json"
# Agents whose resumed run reports the whole session's usage so far in its turn totals, not the
# turn's: Codex 0.169's ``turn.completed`` after ``exec resume`` (a first turn of 1000/20 tokens
# and a second of 3060/66, one server's figures: the second reported 4060/86).
CUMULATIVE_TURN_USAGE = frozenset({codex.AGENT})


def session_part(agent: str, whole: bytes, previous: int) -> bytes:
    """The header lines of ``whole`` and what was appended after its first ``previous`` bytes
    (the size it had after the turn before). A file that did not grow from that one (a new
    session) is the turn's whole."""
    if previous <= 0 or len(whole) < previous:
        return whole
    header = SESSION_HEADER.get(agent)
    head = [line for line in whole[:previous].splitlines(keepends=True)
            if header is not None and _line_type(line) == header]
    return b"".join(head) + whole[previous:]


def _line_type(line: bytes) -> object:
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event.get("type") if isinstance(event, dict) else None


def own_usage(agent: str, transcript: Transcript, before: Sequence[Transcript]) -> Transcript:
    """``transcript`` of a later turn with the turn's own usage: for an agent that reports the
    session's running total (:data:`CUMULATIVE_TURN_USAGE`), less what the turns ``before`` used."""
    if agent not in CUMULATIVE_TURN_USAGE or not before or transcript.usage_source != "turns":
        return transcript
    own = {name: max(0, getattr(transcript.usage, name)
                     - sum(getattr(t.usage, name) for t in before))
           for name in TokenUsage.__dataclass_fields__}
    return replace(transcript, usage=TokenUsage(**own))


def parse_turns(run_dir: Path, agent: str, sent: Sequence[int]) -> list[Transcript]:
    """The transcript of each turn in ``sent`` parsed again from its raw output (turn 1's beside
    run.json, a later one's in ``turns/<n>/``), each with its own usage: what apg run stored."""
    found: list[Transcript] = []
    for number in sent:
        parsed = parse_run(run_dir if number == 1 else run_dir / TURNS_DIR / str(number), agent)
        if parsed is not None:
            found.append(own_usage(agent, parsed, found))
    return found


def merge(turns: Sequence[Transcript]) -> Transcript:
    """The conversation's record: the turns' counts and usage summed, their lists joined in
    order, the model and session of the first that names them, the last turn's reply. Cost is
    the sum when every turn reports one (None when none does). Its ``source`` is
    :data:`MERGED_SOURCE`, the turns' own records; of one turn, that turn's record."""
    if len(turns) == 1:
        return turns[0]
    return replace(turns[0], **summed_fields(turns))


# What every turn of one agent's conversation shares, taken from the first.
KEPT_FROM_FIRST = frozenset({"agent", "developer"})


def summed_fields(turns: Sequence[Transcript]) -> dict[str, Any]:
    """Every other field of the conversation's record (a test holds that none is left out)."""
    usage = TokenUsage(**{name: sum(getattr(t.usage, name) for t in turns)
                          for name in TokenUsage.__dataclass_fields__})
    costs = [t.cost_usd for t in turns if t.cost_usd is not None]
    sources = {t.usage_source for t in turns if t.usage_source is not None}
    return {
        "source": MERGED_SOURCE,
        "model": next((t.model for t in turns if t.model), None),
        "model_tag": next((t.model_tag for t in turns if t.model_tag), None),
        "cli_version": next((t.cli_version for t in turns if t.cli_version), None),
        "session_id": next((t.session_id for t in turns if t.session_id), None),
        "turns": sum(t.turns for t in turns), "tool_calls": sum(t.tool_calls for t in turns),
        "commands": tuple(c for t in turns for c in t.commands),
        "files_read": tuple(dict.fromkeys(f for t in turns for f in t.files_read)),
        "files_written": tuple(dict.fromkeys(f for t in turns for f in t.files_written)),
        "tools_used": dict(sum((Counter(t.tools_used) for t in turns), Counter())),
        "skills_used": tuple(dict.fromkeys(s for t in turns for s in t.skills_used)),
        "permission_denials": tuple(d for t in turns for d in t.permission_denials),
        "usage": usage,
        "cost_usd": round(sum(costs), 10) if len(costs) == len(turns) else None,
        "errors": tuple(e for t in turns for e in t.errors),
        "final_reply": turns[-1].final_reply,
        "completed": all(t.completed for t in turns),
        # One source when the turns agree; else the last turn's (a turn stopped part-way).
        "usage_source": sources.pop() if len(sources) == 1 else turns[-1].usage_source,
        "partial": any(t.partial for t in turns),
        "unconfirmed_commands": tuple(c for t in turns for c in t.unconfirmed_commands),
        "unverified": tuple(dict.fromkeys(u for t in turns for u in t.unverified)),
        "startup": _startups([t.startup for t in turns if t.startup is not None]),
    }


def _startups(found: Sequence[Startup]) -> Startup | None:
    """What every turn's start-up showed, together (each launch of the CLI could show a leak)."""
    if not found:
        return None
    return Startup(seen=any(s.seen for s in found),
                   mcp_servers=tuple(dict.fromkeys(m for s in found for m in s.mcp_servers)),
                   skills=tuple(dict.fromkeys(k for s in found for k in s.skills)),
                   plugins=tuple(dict.fromkeys(p for s in found for p in s.plugins)))
