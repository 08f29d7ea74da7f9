"""A scripted model server for driving the real agent CLIs offline (test support).

It listens on 127.0.0.1 only and speaks just enough of two wire protocols for the CLIs:

- the Anthropic Messages API (``POST /v1/messages``, streaming SSE and plain JSON, plus
  ``/v1/messages/count_tokens``) for Claude Code, pointed here with ``ANTHROPIC_BASE_URL``;
- the OpenAI Responses API (``POST /v1/responses``, streaming SSE) for Codex, pointed here
  with a custom model provider (``-c model_providers.<name>.base_url=...``).

A script is a list of steps, one per model turn of the agent's main conversation: ``Shell`` asks
the CLI to run a command through its own shell tool (Claude Code's ``Bash``, Codex's shell
tool), ``Call`` calls another tool by name, ``Reply`` ends the turn with text, ``Decide`` picks
one of those from the request (what the CLI offered, which prompt it sent). Which step
answers a request is decided by the request itself (how many assistant turns its conversation
already holds: calls and replies), so a retried request gets the same answer, and a resumed
session's next request (its earlier turns in it) gets the step after the last reply. Requests outside the main
conversation (Claude Code's side queries, such as a title for the session, or a judge's votes)
get the server's ``side_replies`` in the order they arrive, then a short text reply, and are
recorded apart.

Bounded: at most ``max_requests`` requests and ``timeout_s`` seconds; past either, every
request is answered with a non-retryable 400 error, so a confused CLI stops instead of looping.
Every request is recorded (path, headers with secrets dropped, body) for the tests to inspect.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Shell:
    """One model turn that asks the CLI to run ``command`` in its shell tool."""

    command: str


@dataclass(frozen=True)
class Reply:
    """One model turn that answers with text and asks for nothing more."""

    text: str


@dataclass(frozen=True)
class Call:
    """One model turn that calls another of the CLI's tools (Claude Code's Read, Write, ...)."""

    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Decide:
    """One model turn chosen from the request itself: ``choose`` gets the request's JSON body and
    returns the step, so one script can act on what the CLI offered (a skill it lists or not)."""

    choose: Callable[[Any], Shell | Reply | Call]


Step = Shell | Reply | Call | Decide
# Headers whose values are never kept in the record.
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "cookie"})


@dataclass(frozen=True)
class Usage:
    """The token counts one answer reports (a function of the step, so tests can sum them)."""

    input_tokens: int
    output_tokens: int

    @classmethod
    def for_step(cls, index: int) -> Usage:
        return cls(input_tokens=1000 + 10 * index, output_tokens=20 + index)


@dataclass
class Recorded:
    """One request as the server saw it, and what it answered."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    api: str  # "anthropic", "openai" or "other"
    main: bool = False  # part of the agent's main conversation
    step: int | None = None
    usage: Usage | None = None
    status: int = 200


@dataclass
class _State:
    script: tuple[Step, ...]
    model_name: str
    max_requests: int
    deadline: float
    side_replies: list[str] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))


class ScriptedModelServer:
    """``with ScriptedModelServer(script) as server:`` then point a CLI at ``server.url``."""

    def __init__(self, script: Sequence[Step], *, model_name: str = "scripted-model",
                 max_requests: int = 200, timeout_s: float = 300.0,
                 side_replies: Sequence[str] = ()) -> None:
        self._state = _State(script=tuple(script), model_name=model_name,
                             max_requests=max_requests, deadline=time.monotonic() + timeout_s,
                             side_replies=list(side_replies))
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.state = self._state  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[Recorded]:
        with self._state.lock:
            return list(self._state.requests)

    def main_requests(self, api: str) -> list[Recorded]:
        return [r for r in self.requests if r.main and r.api == api]

    def tokens_sent(self, api: str) -> Usage:
        """The sum of the usage the main conversation's answers reported."""
        answered = [r.usage for r in self.main_requests(api) if r.usage is not None]
        return Usage(sum(u.input_tokens for u in answered), sum(u.output_tokens for u in answered))

    def __enter__(self) -> ScriptedModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


# ---------------------------------------------------------------------------- the handler


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the record is the log

    @property
    def state(self) -> _State:
        return self.server.state  # type: ignore[attr-defined, no-any-return]

    def do_GET(self) -> None:
        self._handle(None)

    def do_HEAD(self) -> None:
        self._handle(None)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", errors="replace")
        self._handle(body)

    def _handle(self, body: Any) -> None:
        path = self.path.split("?", 1)[0]
        api = ("anthropic" if path.startswith("/v1/messages")
               else "openai" if path.endswith("/responses") else "other")
        headers = {k.lower(): v for k, v in self.headers.items()
                   if k.lower() not in SECRET_HEADERS}
        record = Recorded(self.command, self.path, headers, body, api)
        state = self.state
        with state.lock:
            state.requests.append(record)
            over = len(state.requests) > state.max_requests or time.monotonic() > state.deadline
        if over:
            self._json(400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "scripted server: budget exhausted"}},
                record)
        elif path == "/v1/messages/count_tokens":
            self._json(200, {"input_tokens": 1000}, record)
        elif path == "/v1/messages" and isinstance(body, dict):
            self._anthropic(body, record)
        elif api == "openai" and isinstance(body, dict):
            self._openai(body, record)
        else:
            self._json(404, {"type": "error", "error": {
                "type": "not_found_error", "message": f"scripted server: no {path}"}}, record)

    # ------------------------------------------------------------------ plumbing

    def _json(self, status: int, payload: Any, record: Recorded) -> None:
        record.status = status
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _sse(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        data = "".join(f"event: {name}\ndata: {json.dumps(payload)}\n\n"
                       for name, payload in events).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _next_id(self, prefix: str) -> str:
        with self.state.lock:
            return f"{prefix}_{next(self.state.ids):06d}"

    def _step(self, index: int, body: Any) -> Shell | Reply | Call:
        script = self.state.script
        step = script[index] if index < len(script) else Reply("scripted server: script ended")
        return step.choose(body) if isinstance(step, Decide) else step

    # ------------------------------------------------------------------ Anthropic Messages

    def _anthropic(self, body: dict[str, Any], record: Recorded) -> None:
        tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
        model = str(body.get("model") or self.state.model_name)
        if "Bash" in tools:
            messages = body.get("messages") or []
            index = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
            step: Shell | Reply | Call = self._step(index, body)
            record.main, record.step, record.usage = True, index, Usage.for_step(index)
        else:
            with self.state.lock:
                side = self.state.side_replies.pop(0) if self.state.side_replies else "ok"
            step, record.usage = Reply(side), Usage(10, 1)
        usage = record.usage
        if isinstance(step, Shell):
            step = Call("Bash", {"command": step.command, "description": "run a command"})
        if isinstance(step, Call):
            block: dict[str, Any] = {"type": "tool_use", "id": self._next_id("toolu"),
                                     "name": step.name, "input": step.input}
            stop = "tool_use"
        else:
            block, stop = {"type": "text", "text": step.text}, "end_turn"
        message = {"id": self._next_id("msg"), "type": "message", "role": "assistant",
                   "model": model, "content": [block], "stop_reason": stop,
                   "stop_sequence": None,
                   "usage": {"input_tokens": usage.input_tokens,
                             "output_tokens": usage.output_tokens,
                             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
        if not body.get("stream"):
            self._json(200, message, record)
            return
        self._sse(_anthropic_events(message, block))

    # ------------------------------------------------------------------ OpenAI Responses

    def _openai(self, body: dict[str, Any], record: Recorded) -> None:
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        # The model's earlier answers: its calls, and its replies (a resumed session's request
        # holds the turns before, each ended by a reply), as Anthropic's assistant messages.
        index = sum(1 for i in items if str(i.get("type", "")).endswith("_call")
                    or (i.get("type") == "message" and i.get("role") == "assistant"))
        step = self._step(index, body)
        record.main, record.step, record.usage = True, index, Usage.for_step(index)
        usage = record.usage
        if isinstance(step, Shell):
            item = _openai_shell_call(_offered_tools(body), step.command, self._next_id("call"))
        elif isinstance(step, Call):
            call_id = self._next_id("call")
            item = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id,
                    "name": step.name, "arguments": json.dumps(step.input), "status": "completed"}
        else:
            item = {"type": "message", "role": "assistant", "id": self._next_id("msg"),
                    "status": "completed",
                    "content": [{"type": "output_text", "text": step.text, "annotations": []}]}
        response_id = self._next_id("resp")
        model = str(body.get("model") or self.state.model_name)
        response = {"id": response_id, "object": "response", "model": model,
                    "status": "completed", "output": [item],
                    "usage": {"input_tokens": usage.input_tokens,
                              "input_tokens_details": {"cached_tokens": 0},
                              "output_tokens": usage.output_tokens,
                              "output_tokens_details": {"reasoning_tokens": 0},
                              "total_tokens": usage.input_tokens + usage.output_tokens}}
        created = {**response, "status": "in_progress", "output": [], "usage": None}
        events = [("response.created", {"type": "response.created", "response": created}),
                  ("response.output_item.added", {"type": "response.output_item.added",
                                                  "output_index": 0, "item": item}),
                  ("response.output_item.done", {"type": "response.output_item.done",
                                                 "output_index": 0, "item": item}),
                  ("response.completed", {"type": "response.completed", "response": response})]
        record.status = 200
        self._sse(events)


def _anthropic_events(message: dict[str, Any], block: dict[str, Any]) -> list[
        tuple[str, dict[str, Any]]]:
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None,
             "usage": {**usage, "output_tokens": 1}}
    if block["type"] == "tool_use":
        opening = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        opening = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    return [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": opening}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                           "usage": {"output_tokens": usage["output_tokens"]}}),
        ("message_stop", {"type": "message_stop"}),
    ]


def _offered_tools(body: dict[str, Any]) -> set[str]:
    """Names of the tools a Responses request offers: top level, or (Codex's "lite" requests)
    in ``additional_tools`` input items, namespaces flattened."""
    found: set[str] = set()
    pending = list(body.get("tools") or [])
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "additional_tools":
            pending.extend(item.get("tools") or [])
    while pending:
        tool = pending.pop()
        if isinstance(tool, dict):
            if tool.get("type") == "namespace":
                pending.extend(tool.get("tools") or [])
            else:
                found.add(str(tool.get("name") or tool.get("type")))
    return found


def _openai_shell_call(names: set[str], command: str, call_id: str) -> dict[str, Any]:
    """A call of whichever shell tool the CLI offered, in that tool's argument shape."""
    if "exec_command" not in names and "exec" in names:
        # Code mode: the only top-level tool runs JavaScript that calls the nested tools.
        source = f"text(await tools.exec_command({{cmd: {json.dumps(command)}}}));"
        return {"type": "custom_tool_call", "id": f"ctc_{call_id}", "call_id": call_id,
                "name": "exec", "input": source, "status": "completed"}
    if "shell_command" in names:
        arguments: dict[str, Any] = {"command": command}
        name = "shell_command"
    elif "exec_command" in names:
        arguments, name = {"cmd": command}, "exec_command"
    elif "local_shell" in names:
        return {"type": "local_shell_call", "call_id": call_id, "status": "completed",
                "action": {"type": "exec", "command": ["bash", "-c", command]}}
    else:
        arguments, name = {"command": ["bash", "-c", command]}, "shell"
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments), "status": "completed"}
