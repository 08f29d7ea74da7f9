"""The scripted model server on its own: both wire protocols, the step a request gets, what it
records, and its bounds."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from support.model_server import Reply, ScriptedModelServer, Shell, Usage

SCRIPT = [Shell("apg site status"), Reply("done")]
BASH = [{"name": "Bash", "input_schema": {"type": "object"}}]


def post(server: ScriptedModelServer, path: str, body: dict[str, Any],
         headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(server.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json",
                                              **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in text.strip().split("\n\n"):
        name, data = chunk.split("\n", 1)
        events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


def test_it_listens_on_loopback_only() -> None:
    with ScriptedModelServer(SCRIPT) as server:
        assert server.url.startswith("http://127.0.0.1:")


def test_anthropic_json_answers_the_step_its_conversation_is_at() -> None:
    with ScriptedModelServer(SCRIPT) as server:
        status, text = post(server, "/v1/messages", {
            "model": "claude-x", "tools": BASH, "messages": [{"role": "user", "content": "go"}]},
            headers={"x-api-key": "secret-value"})
        first = json.loads(text)
        assert status == 200 and first["stop_reason"] == "tool_use"
        [block] = first["content"]
        assert (block["name"], block["input"]["command"]) == ("Bash", "apg site status")
        assert first["usage"]["input_tokens"] == Usage.for_step(0).input_tokens
        assert first["model"] == "claude-x"
        # One assistant turn in the history: the next step, the final reply.
        later = {"model": "claude-x", "tools": BASH, "messages": [
            {"role": "user", "content": "go"}, {"role": "assistant", "content": [block]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": block["id"]}]}]}
        second = json.loads(post(server, "/v1/messages", later)[1])
        assert second["content"] == [{"type": "text", "text": "done"}]
        assert second["stop_reason"] == "end_turn"
        # Retried: the same step again, not the next one.
        assert json.loads(post(server, "/v1/messages", later)[1])["content"] == second["content"]
        recorded = server.requests
    assert [r.step for r in recorded] == [0, 1, 1]
    assert "x-api-key" not in recorded[0].headers
    assert server.tokens_sent("anthropic") == Usage(1000 + 2 * 1010, 20 + 2 * 21)


def test_anthropic_stream_and_side_queries() -> None:
    with ScriptedModelServer(SCRIPT) as server:
        status, text = post(server, "/v1/messages?beta=true", {
            "model": "m", "stream": True, "tools": BASH, "messages": []})
        names = [name for name, _ in sse(text)]
        assert status == 200 and names == [
            "message_start", "content_block_start", "content_block_delta", "content_block_stop",
            "message_delta", "message_stop"]
        delta = sse(text)[2][1]["delta"]
        assert json.loads(delta["partial_json"])["command"] == "apg site status"
        # A request without the Bash tool is a side query: answered, not a step.
        side = json.loads(post(server, "/v1/messages", {"model": "m", "messages": []})[1])
        assert side["content"][0]["type"] == "text"
        assert json.loads(post(server, "/v1/messages/count_tokens", {"messages": []})[1]) == {
            "input_tokens": 1000}
        assert [r.main for r in server.requests] == [True, False, False]


@pytest.mark.parametrize(("tools", "expected"), [
    ([{"type": "function", "name": "exec_command"}], ("function_call", "exec_command")),
    ([{"type": "function", "name": "shell"}], ("function_call", "shell")),
    ([{"type": "function", "name": "shell_command"}], ("function_call", "shell_command")),
])
def test_responses_calls_the_shell_tool_offered(tools: list[dict[str, Any]],
                                                expected: tuple[str, str]) -> None:
    with ScriptedModelServer(SCRIPT) as server:
        status, text = post(server, "/v1/responses", {"model": "gpt-x", "stream": True,
                                                      "tools": tools, "input": []})
    events = sse(text)
    assert status == 200 and [n for n, _ in events][-1] == "response.completed"
    item = events[2][1]["item"]
    assert (item["type"], item["name"]) == expected
    arguments = json.loads(item["arguments"])
    assert "apg site status" in json.dumps(arguments)
    assert events[-1][1]["response"]["usage"]["output_tokens"] == Usage.for_step(0).output_tokens


def test_responses_code_mode_runs_the_command_through_exec_command() -> None:
    nested = {"type": "additional_tools", "tools": [{"type": "namespace", "name": "functions",
                                                      "tools": [{"type": "custom", "name": "exec"}]}]}
    call = {"type": "custom_tool_call", "call_id": "c1", "name": "exec", "input": "..."}
    with ScriptedModelServer(SCRIPT) as server:
        first = sse(post(server, "/v1/responses", {"model": "g", "input": [nested]})[1])
        second = sse(post(server, "/v1/responses", {"model": "g", "input": [nested, call]})[1])
    item = first[2][1]["item"]
    assert (item["type"], item["name"]) == ("custom_tool_call", "exec")
    assert 'tools.exec_command({cmd: "apg site status"})' in item["input"]
    assert second[2][1]["item"]["content"][0]["text"] == "done"


def test_past_its_budget_every_request_is_refused() -> None:
    with ScriptedModelServer(SCRIPT, max_requests=1) as server:
        assert post(server, "/v1/messages", {"tools": BASH, "messages": []})[0] == 200
        status, text = post(server, "/v1/messages", {"tools": BASH, "messages": []})
    assert status == 400 and "budget exhausted" in text
    with ScriptedModelServer(SCRIPT, timeout_s=0) as server:
        assert post(server, "/v1/responses", {"input": []})[0] == 400


def test_past_the_script_the_answer_says_so_and_unknown_paths_are_404() -> None:
    with ScriptedModelServer([]) as server:
        answer = json.loads(post(server, "/v1/messages", {"tools": BASH, "messages": []})[1])
        assert answer["content"][0]["text"] == "scripted server: script ended"
        assert post(server, "/api/hello", {})[0] == 404
