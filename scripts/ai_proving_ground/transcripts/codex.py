"""Codex's ``codex exec --json`` output, normalized, with its session file when there is one.

``--json`` (Codex 0.169.0) gives ``thread.started`` (the session id), ``item.*`` events whose
items are ``command_execution`` (command, ``exit_code``, ``status``: a ``declined`` one was
refused), ``file_change`` (paths written), ``mcp_tool_call``, ``web_search``,
``agent_message`` (the reply) and ``error``, then ``turn.completed`` (``usage``) or
``turn.failed``. It names neither the model nor the CLI version: the session file Codex keeps
under ``$CODEX_HOME/sessions/`` does (``session_meta``, ``turn_context``), and it counts the
model's responses (``token_usage_record``: the usage of a run stopped mid-turn, which has no
``turn.completed``) and tool calls; apg copies it to ``codex-session.jsonl``. Codex reports no
cost and no files read. Commands run through ``/bin/bash -c SCRIPT`` are listed as SCRIPT, the
command the model asked for.

Only the ``--json`` stream is evidence of what ran. apg parses its own capture of it (the
adapter's stdout, kept outside the work folder), which no file the agent can write changes. The
session file sits in the adapter's work folder: Codex writes it as it goes, so it must be inside
the sandbox, and a folder Codex can write, the agent's own commands can write too (append to it,
rewrite it): they run as Codex's account in Codex's mounts, and Codex's own sandbox, which could
keep them from its home, cannot start inside apg's bubblewrap (where it does start, its writable
roots, the bed and the temporary folders, hold the session folder anyway). So ``commands`` are the
stream's, in its order, and a session call the stream does not show is kept apart in
``unconfirmed_commands``, which no scorer reads. The stream is not complete: Codex 0.169.0
sometimes emits no ``command_execution`` item for a command that ran and failed fast (seen under
its read-only sandbox, about one run in two on a loaded machine; the session file has no
``CommandExecution`` for it either), and such a command is then only unconfirmed. What else comes
from the session (the model, the CLI version, turns, tool calls, refusals, a stopped run's tokens)
is named in ``unverified``: provenance and counts, never a verdict; the one verdict it could sway,
a run whose every call was refused being no attempt, needs a stream that shows no tool at work.

A call Codex refused before any process started (its execution policy's ``rejected: ...``, as for
``rm -rf``; an approval its ``never`` policy cannot ask for) appears only in the session: its
output says ``exec_command failed: CreateProcess { message: "Rejected(...)" }``. It is a
permission denial, not a command, so a run whose every call was refused is no attempt, as Claude
Code's is. A command whose own sandbox failed to start did start: when the stream misses it, it
is an unconfirmed command with the exit code its output gives.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from typing import Any

from ai_proving_ground.transcripts.record import (
    CommandRun,
    Denial,
    TokenUsage,
    Transcript,
    count,
    json_events,
)
from ai_proving_ground.transcripts.startup import codex as startup_of

AGENT = "codex"
RAW_FILE = "codex.jsonl"
SESSION_FILE = "codex-session.jsonl"
DEVELOPER = "openai"
SHELLS = {"bash", "sh", "zsh", "dash"}
TOOL_ITEMS = {"command_execution", "file_change", "mcp_tool_call", "web_search"}
CALL_ITEMS = {"function_call", "custom_tool_call", "local_shell_call"}
OUTPUT_ITEMS = {"function_call_output", "custom_tool_call_output"}
# Code mode's call input is JavaScript: ``text(await tools.exec_command({cmd: "SCRIPT"}))``, the
# script a JSON string literal.
CODE_MODE_COMMAND = re.compile(r'exec_command\(\{\s*cmd:\s*("(?:[^"\\]|\\.)*")')
OUTPUT_EXIT_CODE = re.compile(r'"exit_code"\s*:\s*(-?\d+)')
# A refused call's output (its message is Rust's Debug text, quotes escaped once more within).
OUTPUT_REJECTED = re.compile(r'CreateProcess \{ message: "Rejected\((.*)\)" \}', re.S)


def parse(text: str, session_text: str | None = None, source: str = RAW_FILE) -> Transcript:
    events, problems = json_events(text)
    session, session_problems = json_events(session_text or "")
    items = _completed_items(events)
    tools = [i for i in items if i.get("type") in TOOL_ITEMS]
    commands = [i for i in tools if i.get("type") == "command_execution"]
    declined = [i for i in commands if i.get("status") == "declined"]
    payloads: list[dict[str, Any]] = [e["payload"] for e in session
                                      if isinstance(e.get("payload"), dict)]
    replies = [str(i.get("text")) for i in items if i.get("type") == "agent_message"]
    ran, unconfirmed, rejected = _commands(commands, payloads)
    usage, usage_source = _usage(events, session)
    # Codex shows its start-up only in the session, which the agent could rewrite: a leak it
    # reports stands (nothing gains by forging one in), its absence is not proven (unverified).
    shown = startup_of(session)
    session_calls = sum(1 for p in payloads if p.get("type") in CALL_ITEMS)
    # Never fewer calls than the stream shows beside the session's refusals: a session rewritten
    # to hold only refused calls cannot make a run whose stream shows a tool at work "no
    # attempt" (every call denied).
    tool_calls = max(session_calls, len(tools) + len(rejected)) if session else len(tools)
    return Transcript(
        agent=AGENT, source=source, developer=DEVELOPER,
        model=_session_value(session, "turn_context", "model"),
        cli_version=_session_value(session, "session_meta", "cli_version"),
        session_id=next((str(e["thread_id"]) for e in events
                         if e.get("type") == "thread.started" and e.get("thread_id")), None),
        turns=(sum(1 for e in session if e.get("type") == "token_usage_record")
               or len(tools) + len(replies)),
        tool_calls=tool_calls,
        commands=ran,
        unconfirmed_commands=unconfirmed,
        files_read=(),
        files_written=tuple(dict.fromkeys(str(c.get("path")) for i in tools
                                          if i.get("type") == "file_change"
                                          and i.get("status") == "completed"
                                          for c in i.get("changes") or [] if isinstance(c, dict))),
        tools_used=dict(Counter(_tool_name(i) for i in tools)),
        skills_used=(),
        permission_denials=tuple([Denial(tool="exec_command",
                                         detail=_script(str(i.get("command"))),
                                         reason=str(i.get("aggregated_output") or "declined"))
                                  for i in declined] + rejected),
        usage=usage,
        usage_source=usage_source,
        cost_usd=None,
        errors=tuple(problems + [f"session: {p}" for p in session_problems] + _errors(events)),
        final_reply=replies[-1] if replies else None,
        completed=(any(e.get("type") == "turn.completed" for e in events)
                   and not any(e.get("type") == "turn.failed" for e in events)),
        partial=not any(e.get("type") in {"turn.completed", "turn.failed"} for e in events),
        unverified=(*_unverified(session, usage_source, tool_calls != len(tools), rejected),
                    *(("startup",) if shown.seen else ())),
        startup=shown,
    )


def _unverified(session: list[dict[str, Any]], usage_source: str | None, calls_from_session: bool,
                rejected: list[Denial]) -> tuple[str, ...]:
    """The record's fields whose values come, wholly or in part, from the session file."""
    if not session:
        return ()
    found = {"model": bool(_session_value(session, "turn_context", "model")),
             "cli_version": bool(_session_value(session, "session_meta", "cli_version")),
             "turns": any(e.get("type") == "token_usage_record" for e in session),
             "tool_calls": calls_from_session, "permission_denials": bool(rejected),
             "usage": usage_source == "session"}
    return tuple(name for name, taken in found.items() if taken)


def _commands(items: list[dict[str, Any]], payloads: list[dict[str, Any]]
              ) -> tuple[tuple[CommandRun, ...], tuple[CommandRun, ...], list[Denial]]:
    """The commands the stream shows ran, in its order; the session's calls it does not show
    (unconfirmed: see the module doc); and the session's calls Codex refused to start."""
    stream = [(_script(str(i.get("command", ""))),
               i.get("exit_code") if isinstance(i.get("exit_code"), int) else None,
               i.get("status") == "declined") for i in items]
    unmatched = [script for script, _, _ in stream]
    unconfirmed: list[CommandRun] = []
    rejected: list[Denial] = []
    for command, output_code, refusal in _session_calls(payloads):
        if command in unmatched:
            unmatched.remove(command)
        elif refusal is not None:
            rejected.append(Denial(tool="exec_command", detail=command, reason=refusal))
        else:
            unconfirmed.append(CommandRun(command=command, exit_code=output_code,
                                          tool="exec_command"))
    found = tuple(CommandRun(command=script, exit_code=exit_code, tool="exec_command")
                  for script, exit_code, declined in stream if not declined)
    return found, tuple(unconfirmed), rejected


def _session_calls(payloads: list[dict[str, Any]]) -> list[tuple[str, int | None, str | None]]:
    """Each shell command the session's tool calls asked for, with the exit code its output gave
    and, for a call Codex refused to start, why."""
    outputs = {str(p.get("call_id")): p for p in payloads if p.get("type") in OUTPUT_ITEMS}
    calls: list[tuple[str, int | None, str | None]] = []
    for payload in payloads:
        command = _call_command(payload) if payload.get("type") in CALL_ITEMS else None
        if command is not None:
            text = _output_text(outputs.get(str(payload.get("call_id"))))
            code = OUTPUT_EXIT_CODE.search(text)
            refused = OUTPUT_REJECTED.search(text)
            calls.append((command, int(code.group(1)) if code else None,
                          _unescape(refused.group(1)) if refused else None))
    return calls


def _call_command(payload: dict[str, Any]) -> str | None:
    if payload.get("type") == "custom_tool_call":
        found = CODE_MODE_COMMAND.search(str(payload.get("input") or ""))
        return _json_string(found.group(1)) if found else None
    if payload.get("type") != "function_call":
        return None
    try:
        arguments = json.loads(str(payload.get("arguments") or ""))
    except json.JSONDecodeError:
        return None
    command = arguments.get("cmd", arguments.get("command")) if isinstance(arguments, dict) else None
    if isinstance(command, list) and all(isinstance(part, str) for part in command):
        return _script(shlex.join(command))
    return command if isinstance(command, str) else None


def _json_string(literal: str) -> str | None:
    try:
        value = json.loads(literal)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, str) else None


def _output_text(output: dict[str, Any] | None) -> str:
    """A call's output as text: its text parts (code mode) or its plain string."""
    body = output.get("output") if output is not None else None
    parts = body if isinstance(body, list) else [body]
    return "\n".join(str(p.get("text")) if isinstance(p, dict) else str(p) for p in parts
                     if p is not None)


def _unescape(debug: str) -> str:
    """Rust's Debug quoting undone: the quoted string inside ``Rejected(...)``, unquoted."""
    text = debug.replace('\\\\', '\\').replace('\\"', '"')
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


def _completed_items(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each item once, in the order it started, its last state winning: one still in flight when
    the run stopped (only ``item.started``) is kept, a command of it with no exit code."""
    found: dict[str, dict[str, Any]] = {}
    for number, event in enumerate(events):
        item = event.get("item")
        if event.get("type") in {"item.started", "item.completed"} and isinstance(item, dict):
            found[str(item.get("id") or f"event-{number}")] = item
    return list(found.values())


def _session_value(session: list[dict[str, Any]], kind: str, key: str) -> str | None:
    for event in session:
        payload = event.get("payload")
        if event.get("type") == kind and isinstance(payload, dict) and payload.get(key):
            return str(payload[key])
    return None


def _script(command: str) -> str:
    """``/bin/bash -c SCRIPT`` (or ``-lc``) is SCRIPT; anything else as Codex printed it."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    if len(argv) == 3 and argv[0].rsplit("/", 1)[-1] in SHELLS and argv[1] in {"-c", "-lc"}:
        return argv[2]
    return command


def _tool_name(item: dict[str, Any]) -> str:
    if item.get("type") == "mcp_tool_call":
        return f"mcp:{item.get('server')}/{item.get('tool')}"
    return "exec_command" if item.get("type") == "command_execution" else str(item.get("type"))


def _usage(events: list[dict[str, Any]],
           session: list[dict[str, Any]]) -> tuple[TokenUsage, str | None]:
    """The turns' totals (``turns``); for a run stopped before its turn ended, the session's
    record of each model response (``session``); else nothing (None)."""
    usages = [e["usage"] for e in events
              if e.get("type") == "turn.completed" and isinstance(e.get("usage"), dict)]
    source = "turns" if usages else None
    if not usages:
        usages = [e["payload"]["usage"] for e in session if e.get("type") == "token_usage_record"
                  and isinstance(e.get("payload"), dict)
                  and isinstance(e["payload"].get("usage"), dict)]
        source = "session" if usages else None
    return TokenUsage(
        input_tokens=sum(count(u.get("input_tokens")) for u in usages),
        output_tokens=sum(count(u.get("output_tokens")) for u in usages),
        cache_read_input_tokens=sum(count(u.get("cached_input_tokens")) for u in usages),
        cache_creation_input_tokens=sum(count(u.get("cache_write_input_tokens")) for u in usages),
        reasoning_output_tokens=sum(count(u.get("reasoning_output_tokens")) for u in usages)
    ), source


def _errors(events: list[dict[str, Any]]) -> list[str]:
    found: list[str] = []
    for event in events:
        item = event.get("item")
        if event.get("type") == "error":
            found.append(str(event.get("message")))
        elif event.get("type") == "turn.failed":
            error = event.get("error")
            found.append(f"turn failed: {error.get('message') if isinstance(error, dict) else error}")
        elif (event.get("type") == "item.completed" and isinstance(item, dict)
              and item.get("type") == "error"):
            found.append(str(item.get("message")))
    return found
