"""The normalized transcript: what one agent CLI run did, whatever CLI produced it.

One dataclass tree, written to ``transcript.json`` in the run directory and read back through
the same schema (``schemas/transcript.schema.json``). Counts and lists are what the raw output
states, never guesses: a field the CLI does not report stays empty (see each parser's docstring).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from ai_proving_ground.transcripts.startup import Startup

FORMAT_VERSION = 1


@dataclass(frozen=True)
class CommandRun:
    """A shell command the agent's tool ran, and how it ended (None: the CLI did not say)."""

    command: str
    exit_code: int | None
    tool: str


@dataclass(frozen=True)
class Denial:
    """A tool call the CLI refused to run."""

    tool: str
    detail: str  # the command or input the model asked for
    reason: str


@dataclass(frozen=True)
class TokenUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    reasoning_output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Transcript:
    """One normalized record of an agent run."""

    SCHEMA: ClassVar[str] = "transcript"

    agent: str  # the adapter's name: claude-code, codex
    source: str  # the raw file it was parsed from, relative to the run directory
    developer: str  # who makes the models this CLI talks to (anthropic, openai)
    model: str | None  # the model the CLI names, bare (claude-opus-5-5)
    cli_version: str | None = None
    session_id: str | None = None
    turns: int = 0  # model responses in the main conversation
    tool_calls: int = 0  # tool calls the model asked for, denied ones included
    commands: tuple[CommandRun, ...] = ()
    files_read: tuple[str, ...] = ()
    files_written: tuple[str, ...] = ()
    tools_used: dict[str, int] = field(default_factory=dict)
    skills_used: tuple[str, ...] = ()
    permission_denials: tuple[Denial, ...] = ()
    usage: TokenUsage = TokenUsage()
    cost_usd: float | None = None
    errors: tuple[str, ...] = ()
    final_reply: str | None = None
    completed: bool = False  # the CLI reported a finished run (not an error stop)
    # What the CLI appended to the model's name, without brackets (claude-opus-4-8[1m] -> 1m).
    model_tag: str | None = None
    # Where usage and cost_usd both come from, so they never disagree: "result" (the CLI's own
    # totals for the finished run), "messages" (each model response's final usage, summed, when
    # the run stopped before its totals), "turns" (Codex's per-turn totals), "session" (a Codex
    # run stopped mid-turn: its session's record of each response); None: no usage seen.
    usage_source: str | None = None
    # The run was stopped before the CLI finished: usage counts the responses seen so far.
    partial: bool = False
    # Shell commands only a file the agent could write claims were run (a Codex session call its
    # stream does not show): kept to be read, never scored.
    unconfirmed_commands: tuple[CommandRun, ...] = ()
    # The fields whose values come, wholly or in part, from a file the agent could write (Codex's
    # session): provenance and counts, never a verdict.
    unverified: tuple[str, ...] = ()
    # What the CLI's start-up showed beyond the stock CLI (transcripts/startup.py); None: a
    # record parsed before apg read start-ups.
    startup: Startup | None = None

    @property
    def model_id(self) -> str | None:
        """developer/model, the form envelopes use."""
        return f"{self.developer}/{self.model}" if self.model else None

    @property
    def all_denied(self) -> bool:
        """The model asked for tools and every single call was refused: nothing was tried."""
        return self.tool_calls > 0 and len(self.permission_denials) >= self.tool_calls

    def as_json(self) -> dict[str, Any]:
        # Through JSON once, so tuples are lists and the value equals what a reader loads.
        data: dict[str, Any] = json.loads(json.dumps(asdict(self)))
        data["format_version"] = FORMAT_VERSION
        return data

    def summary(self, file_name: str) -> dict[str, Any]:
        """What run.json carries: the headline numbers and where the full record is."""
        return {"file": file_name, "source": self.source, "model": self.model_id,
                "cli_version": self.cli_version, "turns": self.turns,
                "tool_calls": self.tool_calls, "commands": len(self.commands),
                "permission_denials": len(self.permission_denials),
                "usage": asdict(self.usage), "cost_usd": self.cost_usd,
                "errors": len(self.errors), "completed": self.completed,
                "usage_source": self.usage_source, "partial": self.partial,
                "unconfirmed_commands": len(self.unconfirmed_commands),
                "unverified": list(self.unverified),
                **({"startup": self.startup.as_json()} if self.startup is not None else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Transcript:
        """The record ``data`` holds (already checked against the schema)."""
        fields = {k: v for k, v in data.items() if k != "format_version"}
        return cls(**{
            **fields,
            "commands": tuple(CommandRun(**c) for c in fields["commands"]),
            "unconfirmed_commands": tuple(CommandRun(**c)
                                          for c in fields.get("unconfirmed_commands", ())),
            "unverified": tuple(fields.get("unverified", ())),
            "files_read": tuple(fields["files_read"]),
            "files_written": tuple(fields["files_written"]),
            "skills_used": tuple(fields["skills_used"]),
            "permission_denials": tuple(Denial(**d) for d in fields["permission_denials"]),
            "usage": TokenUsage(**fields["usage"]),
            "errors": tuple(fields["errors"]),
            "startup": (Startup.from_json(fields["startup"]) if fields.get("startup") is not None
                        else None),
        })


def json_events(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The JSON objects of a JSON-lines text, and a note for each line that is not one.

    CLIs print other things on stdout now and then (a warning, a progress line); such a line is
    reported, not fatal, so one stray line never loses the rest of the record.
    """
    events: list[dict[str, Any]] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            problems.append(f"line {number}: not JSON: {line[:80]}")
            continue
        if isinstance(event, dict):
            events.append(event)
        else:
            problems.append(f"line {number}: not a JSON object")
    return events, problems


def count(value: Any) -> int:
    """A token count as the CLI wrote it; anything that is not a non-negative integer is 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
