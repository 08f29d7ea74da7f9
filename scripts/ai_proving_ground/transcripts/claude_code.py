"""Claude Code's ``--output-format stream-json --verbose`` output, normalized.

The events used (as Claude Code 2.1.332 writes them): ``system``/``init`` (model, session,
``claude_code_version``), ``assistant`` (``tool_use`` and ``text`` blocks; one message may arrive
as several events sharing its id), ``user`` (``tool_result`` blocks, whose ``is_error`` and
``Exit code N`` text give a failed command's code; ``tool_result_meta`` marks refusals) and the
final ``result`` (``num_turns``, ``usage``, ``total_cost_usd``, ``permission_denials``,
``result``). A successful Bash result carries no code: it is 0. A denied call never ran, so it is
listed under ``permission_denials`` and not under ``commands``. Files read and written are those
of Read, Write, Edit, MultiEdit and NotebookEdit calls whose result is not an error.

Tokens and cost come from one source, named in ``usage_source``: the ``result`` event's totals
(``usage`` and ``total_cost_usd``) when the run finished, else each response's final usage summed
(``messages``; no cost, which the CLI reports only in its totals). A response's final usage is
the last one reported for its message id: an ``assistant`` event carries the usage the response
started with (one output token), and with ``--include-partial-messages`` (the adapter passes it)
the ``stream_event`` ``message_delta`` after it carries the final count. The model id is kept
without the context tag the CLI may append (``claude-opus-4-8[1m]``), the tag in ``model_tag``.
"""

from __future__ import annotations

import re
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
from ai_proving_ground.transcripts.startup import claude_code as startup_of

AGENT = "claude-code"
RAW_FILE = "claude-code.jsonl"
DEVELOPER = "anthropic"
SHELL_TOOL = "Bash"
READ_TOOLS = {"Read": "file_path"}
WRITE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
               "NotebookEdit": "notebook_path"}
EXIT_CODE = re.compile(r"^Exit code (\d+)")
# A context tag the CLI appends to a model's name: claude-opus-4-8[1m].
MODEL_TAG = re.compile(r"^(?P<model>[^\[\]]+)\[(?P<tag>[^\[\]]*)\]$")
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens",
              "cache_creation_input_tokens")


def parse(text: str, source: str = RAW_FILE) -> Transcript:
    events, problems = json_events(text)
    init: dict[str, Any] = next((e for e in events if e.get("type") == "system"
                                 and e.get("subtype") == "init"), {})
    result: dict[str, Any] = next((e for e in reversed(events) if e.get("type") == "result"),
                                  {})
    messages = _assistant_messages(events)
    calls = [block for message in messages for block in _blocks(message)
             if block.get("type") == "tool_use"]
    results = _tool_results(events)
    denials = _denials(result, events, results)
    denied_ids = {d[0] for d in denials}
    ran = [c for c in calls if c.get("id") not in denied_ids]
    # A file counts as read or written only when the tool says it worked.
    done = [c for c in ran if str(c.get("id")) in results
            and results[str(c.get("id"))].get("is_error") is not True]
    model, model_tag = _split_model(_string(init.get("model")) or _first_model(messages))
    usage, usage_source = _usage(result.get("usage") if result else None, events)
    return Transcript(
        agent=AGENT, source=source, developer=DEVELOPER,
        model=model, model_tag=model_tag, usage_source=usage_source,
        cli_version=_string(init.get("claude_code_version")),
        session_id=_string(init.get("session_id") or result.get("session_id")),
        turns=count(result.get("num_turns")) or len(messages),
        tool_calls=len(calls),
        commands=tuple(_command(c, results.get(str(c.get("id")))) for c in ran
                       if c.get("name") == SHELL_TOOL),
        files_read=_paths(done, READ_TOOLS),
        files_written=_paths(done, WRITE_TOOLS),
        tools_used=dict(Counter(str(c.get("name")) for c in calls)),
        skills_used=tuple(dict.fromkeys(str(_input(c).get("skill") or _input(c).get("command"))
                                        for c in ran if c.get("name") == "Skill")),
        permission_denials=tuple(d[1] for d in denials),
        usage=usage,
        cost_usd=_cost(result.get("total_cost_usd")) if usage_source == "result" else None,
        errors=tuple(problems + _errors(result, messages)),
        final_reply=_string(result.get("result")) or _last_text(messages),
        completed=result.get("subtype") == "success" and result.get("is_error") is False,
        partial=not result,
        startup=startup_of(init),
    )


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _cost(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _assistant_messages(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per assistant message (its id), content blocks of split events joined."""
    merged: dict[str, dict[str, Any]] = {}
    for number, event in enumerate(events):
        message = event.get("message")
        if event.get("type") != "assistant" or not isinstance(message, dict):
            continue
        key = str(message.get("id") or f"event-{number}")
        if key in merged:
            merged[key]["content"] = [*_blocks(merged[key]), *_blocks(message)]
        else:
            merged[key] = {**message, "content": list(_blocks(message)), "_error": event.get("error")}
    return list(merged.values())


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _input(call: dict[str, Any]) -> dict[str, Any]:
    value = call.get("input")
    return value if isinstance(value, dict) else {}


def _tool_results(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for event in events:
        message = event.get("message")
        if event.get("type") == "user" and isinstance(message, dict):
            for block in _blocks(message):
                if block.get("type") == "tool_result":
                    meta = {str(m.get("id")): m for m in event.get("tool_result_meta") or []
                            if isinstance(m, dict)}
                    tool_id = str(block.get("tool_use_id"))
                    found[tool_id] = {**block, "_meta": meta.get(tool_id, {})}
    return found


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


def _denials(result: dict[str, Any], events: list[dict[str, Any]],
             results: dict[str, dict[str, Any]]) -> list[tuple[str, Denial]]:
    """The result's list when the run finished; else the refusals the tool results record."""
    listed = result.get("permission_denials") if result else None
    if isinstance(listed, list):
        pairs = [(str(d.get("tool_use_id")), str(d.get("tool_name")), d.get("tool_input"))
                 for d in listed if isinstance(d, dict)]
    else:
        calls = {str(b.get("id")): b for m in _assistant_messages(events) for b in _blocks(m)
                 if b.get("type") == "tool_use"}
        pairs = [(tid, str(calls.get(tid, {}).get("name")), calls.get(tid, {}).get("input"))
                 for tid, r in results.items()
                 if r["_meta"].get("non_execution_kind") == "user-rejected"]
    return [(tid, Denial(tool=tool, detail=_detail(tool_input),
                         reason=_text(results.get(tid, {}).get("content")) or "denied"))
            for tid, tool, tool_input in pairs]


def _detail(tool_input: Any) -> str:
    if isinstance(tool_input, dict):
        for key in ("command", "file_path", "notebook_path", "skill", "url", "pattern"):
            if isinstance(tool_input.get(key), str):
                return str(tool_input[key])
    return "" if tool_input is None else str(tool_input)


def _command(call: dict[str, Any], result: dict[str, Any] | None) -> CommandRun:
    command = str(_input(call).get("command", ""))
    if result is None:
        return CommandRun(command=command, exit_code=None, tool=SHELL_TOOL)
    if result.get("is_error") is not True:
        return CommandRun(command=command, exit_code=0, tool=SHELL_TOOL)
    match = EXIT_CODE.match(_text(result.get("content")))
    return CommandRun(command=command, exit_code=int(match.group(1)) if match else None,
                      tool=SHELL_TOOL)


def _paths(calls: list[dict[str, Any]], tools: dict[str, str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(_input(c).get(tools[str(c.get("name"))]))
                               for c in calls if c.get("name") in tools
                               and isinstance(_input(c).get(tools[str(c.get("name"))]), str)))


def _usage(usage: Any, events: list[dict[str, Any]]) -> tuple[TokenUsage, str | None]:
    """The run's tokens and where they come from (see the module doc)."""
    if not isinstance(usage, dict):
        finals = list(_final_usages(events).values())
        return (TokenUsage(**{k: sum(count(u.get(k)) for u in finals) for k in USAGE_KEYS}),
                "messages" if finals else None)
    details = usage.get("output_tokens_details")
    thinking = count(details.get("thinking_tokens")) if isinstance(details, dict) else 0
    return TokenUsage(**{k: count(usage.get(k)) for k in USAGE_KEYS},
                      reasoning_output_tokens=thinking), "result"


def _final_usages(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each response's last reported usage, by message id, each key's latest value kept.

    A ``message_delta`` names no message: it belongs to the ``message_start`` before it.
    """
    found: dict[str, dict[str, Any]] = {}
    streaming: str | None = None
    for number, event in enumerate(events):
        key, usage = None, None
        message = event.get("message")
        inner = event.get("event")
        if event.get("type") == "assistant" and isinstance(message, dict):
            key, usage = str(message.get("id") or f"event-{number}"), message.get("usage")
        elif event.get("type") == "stream_event" and isinstance(inner, dict):
            started = inner.get("message")
            if inner.get("type") == "message_start" and isinstance(started, dict):
                streaming = str(started.get("id") or f"event-{number}")
                key, usage = streaming, started.get("usage")
            elif inner.get("type") == "message_delta":
                key, usage = streaming, inner.get("usage")
        if key is not None and isinstance(usage, dict):
            found[key] = {**found.get(key, {}), **usage}
    return found


def _split_model(model: str | None) -> tuple[str | None, str | None]:
    """claude-opus-4-8[1m] is (claude-opus-4-8, 1m); a name without a tag is itself."""
    found = MODEL_TAG.match(model) if model else None
    if found is None:
        return model, None
    return found.group("model"), found.group("tag") or None


def _errors(result: dict[str, Any], messages: list[dict[str, Any]]) -> list[str]:
    found = [f"assistant: {m['_error']}" for m in messages if m.get("_error")]
    if not result:
        return [*found, "no result event: the CLI stopped before finishing"]
    if result.get("is_error") is True or result.get("subtype") != "success":
        detail = result.get("errors") or result.get("result") or result.get("api_error_status")
        found.append(f"{result.get('subtype')}: {detail}")
    return found


def _first_model(messages: list[dict[str, Any]]) -> str | None:
    return next((str(m["model"]) for m in messages if _string(m.get("model"))), None)


def _last_text(messages: list[dict[str, Any]]) -> str | None:
    texts = [str(b.get("text")) for m in messages for b in _blocks(m) if b.get("type") == "text"]
    return texts[-1] if texts else None
