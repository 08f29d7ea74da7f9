"""The real Codex CLI with a scripted model asking only for commands Codex refuses to start (its
built-in execution policy rejects ``rm -f`` and ``rm -rf``): the refusals are permission denials,
not commands, and the run is ``no_attempt``, as the same all-denied Claude Code run is
(test_real_clis.test_claude_code_all_denied_is_no_attempt)."""

from __future__ import annotations

import pytest
from cli_kit import Drive

from ai_proving_ground.transcripts import load
from support.model_server import Reply, Shell, Step


def test_codex_all_rejected_is_no_attempt(drive: Drive) -> None:
    script: list[Step] = [Shell("rm -f web/index.php"), Shell("rm -rf web/sites"),
                          Reply("I could not change anything.")]
    driven = drive("codex", script)
    assert driven.rc == 1
    assert driven.record["status"] == "no_attempt" and driven.record["attempted"] is False
    assert driven.record["adapter_exit_code"] == 0  # the CLI itself says it succeeded
    reason = driven.record["no_attempt_reason"]
    assert reason.startswith("every tool call (2) was denied permission: exec_command(rm -f ")
    assert "APG_RUN_NO_ATTEMPT" in driven.err
    transcript = load(driven.run_dir)
    assert transcript.commands == () and transcript.tool_calls == 2
    assert [d.detail for d in transcript.permission_denials] == [
        s.command for s in script if isinstance(s, Shell)]
    assert all("rejected: rm -f style commands are not permitted" in d.reason
               for d in transcript.permission_denials)
    assert driven.record["agent_transcript"]["permission_denials"] == 2
    assert (driven.run_dir.parents[2] / "web" / "sites").is_dir()


def test_codex_a_command_whose_sandbox_cannot_start_is_a_command(drive: Drive) -> None:
    # Codex's own sandbox (a nested bwrap) cannot start inside apg's: the command failed, it was
    # not refused, so it is a command with its exit code and the run is an attempt. Codex's
    # stream often misses such a fast failure: then only its session (the agent's to write)
    # holds it, and it is an unconfirmed command, never scored, but still no denial.
    script: list[Step] = [Shell("touch made.txt"), Reply("done")]
    driven = drive("codex", script, env={"APG_CODEX_SANDBOX": "workspace-write"})
    transcript = load(driven.run_dir)
    if driven.record["sandbox"]["backend"] != "bwrap":
        pytest.skip("apg ran Codex outside bwrap, where Codex's own sandbox starts")
    found = [*transcript.commands, *transcript.unconfirmed_commands]
    assert [(c.command, c.exit_code) for c in found] == [("touch made.txt", 1)]
    assert transcript.permission_denials == ()
    assert driven.record["status"] == "attempted"
