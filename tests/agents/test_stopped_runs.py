"""A run apg stops (its time limit, Ctrl-C) keeps its transcript: the real CLIs, a scripted
model that asks for a command outliving the run, and the server's own log to compare with. Codex's
session file is collected by apg (the adapter's exit trap never runs when apg stops it)."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pytest
from cli_kit import RUN_TIMEOUT_S, TASK, Drive, provider_env

from ai_proving_ground.cli import run as run_cli
from ai_proving_ground.transcripts import TRANSCRIPT_FILE, load
from support.model_server import Reply, ScriptedModelServer, Shell, Step

LONG = "python3 -c 'import time; time.sleep(300)'"
# Far above each CLI's start-up and first answer (1-2 s; 5 s under a load of 9 on 2 cores), far
# below the command's length.
LIMIT_S = 12
# Ctrl-C this long after the model handed out the command: time for the CLI to start it.
INTERRUPT_AFTER_S = 2


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


def test_an_interrupted_run_keeps_its_transcript(cli_bed: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C while the command runs: SIGINT to this process, as a terminal sends it; apg stops
    # the CLI, exits 130 and keeps what the CLI did.
    script: list[Step] = [Shell(LONG), Reply("done")]
    with ScriptedModelServer(script, timeout_s=RUN_TIMEOUT_S) as server:
        for name, value in {**provider_env("claude-code", server.url),
                            "APG_CLAUDE_ALLOWED_TOOLS": "Bash"}.items():
            monkeypatch.setenv(name, value)
        done = threading.Event()

        def interrupt() -> None:  # once the command is handed out, not after a guessed time
            while not done.is_set() and not server.main_requests("anthropic"):
                done.wait(0.1)
            if not done.wait(INTERRUPT_AFTER_S):
                os.kill(os.getpid(), signal.SIGINT)

        watcher = threading.Thread(target=interrupt, daemon=True)
        watcher.start()
        try:
            rc = run_cli.main(["--approot", str(cli_bed), TASK, "--agent=claude-code",
                               f"--timeout={RUN_TIMEOUT_S}"])
        finally:
            done.set()
            watcher.join()
    assert rc == 130
    [run_dir] = (cli_bed / ".ai-proving-ground" / "runs").iterdir()
    record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert record["status"] == "interrupted"
    transcript = load(run_dir)
    sent = server.tokens_sent("anthropic")
    assert [(c.command, c.exit_code) for c in transcript.commands] == [(LONG, None)]
    assert (transcript.usage.input_tokens, transcript.usage.output_tokens) == (
        sent.input_tokens, sent.output_tokens)
    assert transcript.partial and record["agent_transcript"]["partial"] is True
