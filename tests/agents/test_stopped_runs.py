"""A run apg stops at its time limit keeps its transcript: the real CLIs, a scripted model that
asks for a command outliving the limit, and the server's own log to compare with. Codex's
session file is collected by apg (the adapter's exit trap never runs when apg stops it)."""

from __future__ import annotations

import pytest
from cli_kit import Drive

from ai_proving_ground.transcripts import TRANSCRIPT_FILE, load
from support.model_server import Reply, Shell, Step

LONG = "python3 -c 'import time; time.sleep(300)'"
# Far above each CLI's start-up and first answer, far below the command's length.
LIMIT_S = 25


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_timed_out_run_keeps_the_tokens_and_calls_the_server_logged(agent: str,
                                                                       drive: Drive) -> None:
    # Codex's exec_command hands a command still running back to the model after a while (and
    # the model asks for the next): every one of them outlives the run.
    script: list[Step] = [*(Shell(LONG) for _ in range(8)), Reply("done")]
    driven = drive(agent, script, f"--timeout={LIMIT_S}",
                   env={"APG_CLAUDE_ALLOWED_TOOLS": "Bash"})
    assert driven.rc == 1 and driven.record["status"] == "timed_out", driven.err
    assert "APG_RUN_TIMED_OUT" in driven.err
    api = "anthropic" if agent == "claude-code" else "openai"
    requests = driven.server.main_requests(api)
    sent = driven.server.tokens_sent(api)
    assert 1 <= len(requests) < len(script) and sent.input_tokens > 0
    transcript = load(driven.run_dir)
    assert (transcript.usage.input_tokens, transcript.usage.output_tokens) == (
        sent.input_tokens, sent.output_tokens)
    assert transcript.turns == transcript.tool_calls == len(requests)
    # In flight when apg stopped it: each command, with no exit code.
    assert [(c.command, c.exit_code) for c in transcript.commands] == [(LONG, None)] * len(
        requests)
    assert transcript.partial and not transcript.completed
    assert transcript.model == requests[0].body["model"]
    assert transcript.usage_source == ("messages" if agent == "claude-code" else "session")
    summary = driven.record["agent_transcript"]
    assert summary["file"] == TRANSCRIPT_FILE and summary["partial"] is True
    assert summary["usage"]["output_tokens"] == sent.output_tokens
