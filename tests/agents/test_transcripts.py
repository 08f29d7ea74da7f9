"""The parsers on raw output the real CLIs produced (tests/agents/transcripts, see its README),
the record's schema round trip, and ``apg transcript`` offline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ai_proving_ground.cli.main import main as apg_main
from ai_proving_ground.errors import ApgError
from ai_proving_ground.transcripts import (
    TRANSCRIPT_FILE,
    claude_code,
    codex,
    load,
    no_attempt_reason,
    parse_run,
    record_run,
)
from ai_proving_ground.transcripts.record import Transcript
from support.model_server import Usage

DATA = Path(__file__).parent / "transcripts"
SET = "apg site config:set views.view.kb_billing '?'"
VIEW = "apg site views:execute kb_billing page_1 --format=json"


def sent(steps: int) -> tuple[int, int]:
    """The tokens the scripted server reports for a run of ``steps`` model turns."""
    usages = [Usage.for_step(i) for i in range(steps)]
    return sum(u.input_tokens for u in usages), sum(u.output_tokens for u in usages)


def parsed(agent: str, case: str) -> Transcript:
    transcript = parse_run(DATA / agent / case, agent)
    assert transcript is not None
    return transcript


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
@pytest.mark.parametrize("case", ["reference", "wrong-order"])
def test_a_build_lists_exactly_the_scripted_commands(agent: str, case: str) -> None:
    t = parsed(agent, case)
    assert [c.command.split(" '{")[0] for c in t.commands] == [SET, VIEW]
    assert ("order: DESC" in t.commands[0].command) == (case == "wrong-order")
    assert [c.exit_code for c in t.commands] == [0, 0]
    assert (t.usage.input_tokens, t.usage.output_tokens) == sent(3)
    assert (t.turns, t.tool_calls, t.permission_denials) == (3, 2, ())
    assert t.completed and t.errors == () and t.final_reply and t.final_reply.startswith(
        "The kb_billing view is saved")
    assert no_attempt_reason(t) is None


def test_claude_code_names_its_model_version_and_cost() -> None:
    t = parsed("claude-code", "reference")
    assert (t.model, t.model_id, t.cli_version) == (
        "claude-opus-5-5", "anthropic/claude-opus-5-5", "2.1.332")
    assert t.tools_used == {"Bash": 2} and t.cost_usd is not None and t.cost_usd > 0
    assert [c.tool for c in t.commands] == ["Bash", "Bash"]


def test_codex_model_and_version_come_from_its_session_file(tmp_path: Path) -> None:
    t = parsed("codex", "reference")
    assert (t.model_id, t.cli_version, t.cost_usd) == ("openai/gpt-6.1-sol", "0.169.0", None)
    assert t.tools_used == {"exec_command": 2}
    # Without the session file --json alone still gives the commands and tokens, not the model.
    shutil.copy(DATA / "codex" / "reference" / codex.RAW_FILE, tmp_path / codex.RAW_FILE)
    alone = parse_run(tmp_path, "codex")
    assert alone is not None and alone.model is None and alone.commands == t.commands
    assert alone.usage == t.usage and alone.turns == 3


def test_claude_code_all_denied() -> None:
    t = parsed("claude-code", "all-denied")
    assert t.commands == () and t.tool_calls == 2
    assert [d.detail.split(" ")[0] for d in t.permission_denials] == ["touch", "python3"]
    assert all(d.tool == "Bash" and d.reason for d in t.permission_denials)
    reason = no_attempt_reason(t)
    assert reason is not None and reason.startswith("every tool call (2) was denied permission:")


def test_claude_code_allowed_by_extra_args() -> None:
    t = parsed("claude-code", "allowed-by-args")
    assert [(c.command, c.exit_code) for c in t.commands] == [("touch made.txt", 0)]
    assert t.permission_denials == ()


def test_codex_read_only_write_fails_with_exit_1() -> None:
    t = parsed("codex", "read-only")
    assert [c.exit_code for c in t.commands] == [1, 1]  # the write, then the missing view
    assert t.commands[0].command.startswith(SET)
    raw = (DATA / "codex" / "read-only" / codex.RAW_FILE).read_text(encoding="utf-8")
    assert "APG_SITE_READONLY" in raw and "Traceback" not in raw


def test_codex_a_command_its_stream_dropped_is_only_unconfirmed() -> None:
    # A real read-only run in which Codex's --json stream (and its session's CommandExecution
    # items) left out the failed write: the session's own exec call and its output still hold
    # it, but the session is the agent's to write, so the call is kept apart, never scored.
    raw = (DATA / "codex" / "read-only-dropped" / codex.RAW_FILE).read_text(encoding="utf-8")
    assert SET.split(" ")[2] not in raw.split("views:execute")[0]  # the stream really lacks it
    t = parsed("codex", "read-only-dropped")
    assert [(c.command, c.exit_code) for c in t.commands] == [(VIEW, 1)]
    assert [(c.command.split(" '{")[0], c.exit_code) for c in t.unconfirmed_commands] == [(SET, 1)]
    assert t.tool_calls == 2 and t.permission_denials == ()
    assert set(t.unverified) == {"model", "cli_version", "turns", "tool_calls"}


def test_codex_session_calls_the_stream_misses_are_unconfirmed() -> None:
    # Synthetic, in the real shapes: a stream item declined stays a denial, not a command, and a
    # function_call (argv form) the stream missed is unconfirmed, with its output's exit code.
    stream = [{"type": "item.completed", "item": {
        "id": "item_0", "type": "command_execution", "command": "/bin/bash -c 'rm -rf web'",
        "aggregated_output": "", "exit_code": None, "status": "declined"}},
        {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 1}}]
    session = [
        {"type": "response_item", "payload": {
            "type": "custom_tool_call", "call_id": "c1", "name": "exec",
            "input": 'text(await tools.exec_command({cmd: "rm -rf web"}));'}},
        {"type": "response_item", "payload": {
            "type": "function_call", "call_id": "c2", "name": "shell",
            "arguments": json.dumps({"command": ["bash", "-lc", "apg site status"]})}},
        {"type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "c2",
            "output": json.dumps({"output": "x", "metadata": {"exit_code": 3}})}}]
    t = codex.parse("\n".join(json.dumps(e) for e in stream),
                    "\n".join(json.dumps(e) for e in session))
    assert t.commands == ()
    assert [(c.command, c.exit_code) for c in t.unconfirmed_commands] == [("apg site status", 3)]
    assert [d.detail for d in t.permission_denials] == ["rm -rf web"]
    assert not t.all_denied  # two calls, one refused


def test_a_session_of_refusals_cannot_void_a_run_whose_stream_shows_work() -> None:
    # The agent rewrote its session to hold only calls Codex refused: the stream, apg's own
    # capture, shows a command that ran, so the run is no "every call denied" no-attempt.
    stream = [{"type": "item.completed", "item": {
        "id": "item_0", "type": "command_execution", "command": "/bin/bash -c 'apg site cr'",
        "aggregated_output": "", "exit_code": 1, "status": "completed"}},
        {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 1}}]
    refused = 'exec_command failed: CreateProcess { message: "Rejected(\\"no\\")" }'
    session = [{"type": "response_item", "payload": {
        "type": "custom_tool_call", "call_id": "c1", "name": "exec",
        "input": 'text(await tools.exec_command({cmd: "rm -rf web"}));'}},
        {"type": "response_item", "payload": {
            "type": "custom_tool_call_output", "call_id": "c1", "output": refused}}]
    text = "\n".join(json.dumps(e) for e in stream)
    t = codex.parse(text, "\n".join(json.dumps(e) for e in session))
    assert [d.detail for d in t.permission_denials] == ["rm -rf web"]
    assert t.tool_calls == 2 and not t.all_denied
    assert "permission_denials" in t.unverified and "tool_calls" in t.unverified
    alone = codex.parse(text)
    assert (alone.tool_calls, alone.unverified) == (1, ())


def test_a_stopped_claude_code_run_still_counts_what_happened() -> None:
    # Cut before the result event: no totals from the CLI, so the messages' own usage is summed.
    lines = (DATA / "claude-code" / "reference" / claude_code.RAW_FILE).read_text(
        encoding="utf-8").splitlines()
    t = claude_code.parse("\n".join(lines[:-1]) + "\nnot json\n")
    assert [c.exit_code for c in t.commands] == [0, 0] and not t.completed
    assert t.turns == 3 and t.usage.input_tokens == sent(3)[0]
    assert f"line {len(lines)}: not JSON: not json" in t.errors
    assert any("no result event" in e for e in t.errors)


def cut_before_result(case: str) -> str:
    """A captured Claude Code stream as a stop leaves it: everything up to its result event."""
    lines = (DATA / "claude-code" / case / claude_code.RAW_FILE).read_text(
        encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if json.loads(line).get("type") != "result")


def test_a_stopped_claude_code_run_counts_each_responses_final_usage() -> None:
    # Captured with --include-partial-messages: each response's message_delta after its
    # assistant event gives the final output tokens (the assistant event says 1).
    whole = parsed("claude-code", "partial-messages")
    assert (whole.usage_source, whole.partial, whole.cost_usd) == ("result", False, 0.01338)
    assert (whole.usage.input_tokens, whole.usage.output_tokens) == sent(3)
    stopped = claude_code.parse(cut_before_result("partial-messages"))
    assert (stopped.usage.input_tokens, stopped.usage.output_tokens) == sent(3)
    # One source for tokens and cost: without the CLI's totals there is no cost to pair them with.
    assert (stopped.usage_source, stopped.partial, stopped.cost_usd) == ("messages", True, None)
    # A stream without the deltas (captured before the adapter asked for them) undercounts output
    # as the CLI reported it, one token a response, never more than it said.
    old = claude_code.parse(cut_before_result("reference"))
    assert (old.usage.input_tokens, old.usage.output_tokens) == (sent(3)[0], 3)


def test_claude_code_model_context_tag_is_its_own_field() -> None:
    text = (DATA / "claude-code" / "reference" / claude_code.RAW_FILE).read_text(encoding="utf-8")
    tagged = claude_code.parse(text.replace('"model":"claude-opus-5-5"',
                                            '"model":"claude-opus-5-5[1m]"'))
    assert '"model":"claude-opus-5-5"' in text
    assert (tagged.model, tagged.model_tag, tagged.model_id) == (
        "claude-opus-5-5", "1m", "anthropic/claude-opus-5-5")
    plain = parsed("claude-code", "reference")
    assert (plain.model, plain.model_tag) == ("claude-opus-5-5", None)


def test_garbage_is_a_record_with_errors_not_an_exception() -> None:
    for parse in (claude_code.parse, codex.parse):
        t = parse("[1]\n{\"type\": 3}\n\x00\n")
        assert t.commands == () and t.turns == 0 and len(t.errors) >= 2


@pytest.mark.parametrize(("agent", "case"), [("claude-code", "reference"), ("codex", "reference"),
                                             ("claude-code", "all-denied")])
def test_the_record_round_trips_through_its_schema(agent: str, case: str, tmp_path: Path) -> None:
    shutil.copytree(DATA / agent / case, tmp_path / "run")
    written = record_run(tmp_path / "run", agent)
    assert written is not None and load(tmp_path / "run") == written


def test_an_invalid_record_is_refused(tmp_path: Path) -> None:
    (tmp_path / TRANSCRIPT_FILE).write_text(json.dumps({"agent": "x"}), encoding="utf-8")
    with pytest.raises(ApgError) as caught:
        load(tmp_path)
    assert caught.value.token == "APG_TRANSCRIPT_INVALID"


def test_apg_transcript_reparses_offline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "apg-run-20261201T095041Z-9f63fc"
    shutil.copytree(DATA / "codex" / "reference", run_dir)
    (run_dir / "run.json").write_text(json.dumps({"adapter": {"name": "codex"}}), encoding="utf-8")
    assert apg_main(["transcript", str(run_dir), "--write"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == load(run_dir).as_json() and printed["model"] == "gpt-6.1-sol"
    assert apg_main(["transcript", str(run_dir), "--check"]) == 0
    stored = json.loads((run_dir / TRANSCRIPT_FILE).read_text(encoding="utf-8"))
    stored["turns"] = 99
    (run_dir / TRANSCRIPT_FILE).write_text(json.dumps(stored), encoding="utf-8")
    capsys.readouterr()
    assert apg_main(["transcript", str(run_dir), "--check"]) == 1
    assert capsys.readouterr().err.startswith("APG_TRANSCRIPT_DIFFERS")


def test_apg_transcript_without_raw_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert apg_main(["transcript", str(tmp_path), "--agent=claude-code"]) == 1
    assert capsys.readouterr().err.startswith("APG_TRANSCRIPT_NONE")
    assert apg_main(["transcript", str(tmp_path)]) == 2  # no run.json names the adapter
    assert apg_main(["transcript", str(tmp_path / "missing")]) == 2


def test_claude_code_files_read_and_written_are_the_ones_that_worked() -> None:
    t = parsed("claude-code", "files")
    assert [Path(p).name for p in t.files_read] == [".gitignore"]  # not the missing file
    assert [Path(p).name for p in t.files_written] == ["notes.txt"]
    assert [(d.tool, Path(d.detail).name) for d in t.permission_denials] == [("Write", "x.txt")]
    assert t.tools_used == {"Read": 2, "Write": 2, "Bash": 1} and t.tool_calls == 5
    assert no_attempt_reason(t) is None


def test_codex_declined_commands_are_denials_not_commands() -> None:
    # Codex 0.169 exec never declined a command in our runs (it has no one to ask); its JSON
    # still has the status, so a declined item is read as a denial. Synthetic, in its shape.
    declined = {"type": "item.completed", "item": {
        "id": "item_0", "type": "command_execution", "command": "/bin/bash -c 'rm -rf web'",
        "aggregated_output": "", "exit_code": None, "status": "declined"}}
    t = codex.parse("\n".join(json.dumps(e) for e in [
        {"type": "thread.started", "thread_id": "t"}, declined,
        {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 1}}]))
    assert t.commands == () and [d.detail for d in t.permission_denials] == ["rm -rf web"]
    assert no_attempt_reason(t) == "every tool call (1) was denied permission: exec_command(rm -rf web)"


def test_codex_calls_its_policy_rejected_are_denials_not_commands() -> None:
    t = parsed("codex", "rejected")
    assert t.commands == () and t.tool_calls == 2
    assert [(d.tool, d.detail) for d in t.permission_denials] == [
        ("exec_command", "rm -f composer.json"), ("exec_command", "rm -rf web/sites")]
    assert t.permission_denials[0].reason == (
        "`/bin/bash -c 'rm -f composer.json'` rejected: rm -f style commands are not permitted. "
        "Use a safer approach")
    assert t.all_denied and (no_attempt_reason(t) or "").startswith(
        "every tool call (2) was denied permission: exec_command(rm -f composer.json)")
