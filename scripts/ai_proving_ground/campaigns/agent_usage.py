"""What each attempt's agent used and showed, and the same per arm: tokens, cost, tool calls,
commands, denials, how often it asked first (friction), and leaks between arms.

An attempt's figures come from its run's ``agent_transcript`` summary (run.json) and, for
``asked_first``, the ``asked_first`` scorer's heuristic over its ``transcript.json`` (the reply
puts a question before any command or write), so friction is reported for every attempt
whether or not its task scores it. They are kept in the attempt record (``usage``, ``leaks``),
so the report recomputes the arm rows from the records alone. An attempt whose adapter writes
no transcript (nop, oracle, manual) has ``usage`` null and counts only in ``attempts``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ai_proving_ground.campaigns.records import AttemptRecord
from ai_proving_ground.campaigns.stats import wilson_interval
from ai_proving_ground.errors import ApgError
from ai_proving_ground.scorers import asked
from ai_proving_ground.scorers.base import Context
from ai_proving_ground.transcripts import TRANSCRIPT_FILE, load

LEAK_TOKEN = "APG_CAMPAIGN_LEAK"
TOKENS = ("input_tokens", "output_tokens")
COUNTS = ("tool_calls", "commands", "permission_denials")


def figures(run_dir: Path, summary: Any) -> dict[str, Any] | None:
    """One attempt's figures from run.json's ``agent_transcript`` (None: there is none, or it
    says the output could not be parsed)."""
    if not isinstance(summary, dict) or "error" in summary:
        return None
    usage: dict[str, Any] = summary["usage"] if isinstance(summary.get("usage"), dict) else {}
    found: dict[str, Any] = {name: _count(usage.get(name)) for name in TOKENS}
    found.update({name: _count(summary.get(name)) for name in COUNTS})
    cost = summary.get("cost_usd")
    found["cost_usd"] = float(cost) if isinstance(cost, int | float) else None
    found["asked_first"] = _asked_first(run_dir)
    return found


def _asked_first(run_dir: Path) -> bool | None:
    if not (run_dir / TRANSCRIPT_FILE).is_file():
        return None
    try:
        transcript = load(run_dir)
    except ApgError:
        return None
    return asked.observe(True, transcript, Context(entry={})).seen


def by_arm(records: Iterable[AttemptRecord]) -> dict[str, dict[str, Any]]:
    """arm -> attempts, with_transcript, summed tokens, cost (null when no attempt reported
    one), tool calls, commands and denials, asked_first k/n with its rate and 95% Wilson
    interval, and the attempts whose start-up leaked (their orders and what leaked)."""
    return grouped(records, lambda record: record.arm)


def grouped(records: Iterable[AttemptRecord],
            key: Callable[[AttemptRecord], str]) -> dict[str, dict[str, Any]]:
    """:func:`by_arm`'s rows, grouped by ``key`` (the viewer's per-agent table too: one sum
    of the records' ``usage`` for report.json and every page)."""
    rows: dict[str, dict[str, Any]] = {}
    for record in records:
        row = rows.setdefault(key(record), _empty())
        row["attempts"] += 1
        if record.leaks:
            row["leaks"]["attempts"].append(record.order)
            row["leaks"]["names"] = sorted({*row["leaks"]["names"],
                                           *(f"{leak['kind']} {leak['name']}"
                                             for leak in record.leaks)})
        agent = record.usage
        if not agent:
            continue
        row["with_transcript"] += 1
        for name in (*TOKENS, *COUNTS):
            row[name] += _count(agent.get(name))
        if isinstance(agent.get("cost_usd"), int | float):
            row["cost_usd"] = round((row["cost_usd"] or 0.0) + agent["cost_usd"], 6)
        if isinstance(agent.get("asked_first"), bool):
            row["asked_first"]["n"] += 1
            row["asked_first"]["k"] += int(agent["asked_first"])
    for row in rows.values():
        k, n = row["asked_first"]["k"], row["asked_first"]["n"]
        row["asked_first"]["rate"] = round(k / n, 4) if n else None
        row["asked_first"]["wilson"] = list(wilson_interval(k, n)) if n else None
    return dict(sorted(rows.items()))


def _empty() -> dict[str, Any]:
    return {"attempts": 0, "with_transcript": 0, **{name: 0 for name in (*TOKENS, *COUNTS)},
            "cost_usd": None, "asked_first": {"k": 0, "n": 0},
            "leaks": {"attempts": [], "names": []}}


def usage_line(usage: dict[str, dict[str, Any]]) -> str:
    """One line for report.txt: per arm tokens, tool calls, denials, asks and leaks."""
    shown = "; ".join(
        f"{arm} {row['input_tokens']}/{row['output_tokens']} tokens in/out, "
        f"{row['tool_calls']} tool calls, {row['permission_denials']} denials, asked first "
        f"{row['asked_first']['k']}/{row['asked_first']['n']}, "
        f"{len(row['leaks']['attempts'])} leaking" for arm, row in usage.items())
    return f"What the agents used: {shown or 'no attempts'}"


def leak_warnings(usage: dict[str, dict[str, Any]]) -> list[str]:
    """A warning per arm whose attempts' start-ups showed what the arm did not give."""
    return [f"{LEAK_TOKEN} arm {arm}: {len(row['leaks']['attempts'])} attempt(s) "
            f"({', '.join(f'#{o}' for o in row['leaks']['attempts'])}) started with what the arm "
            f"did not give: {', '.join(row['leaks']['names'])}"
            for arm, row in usage.items() if row["leaks"]["attempts"]]


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
