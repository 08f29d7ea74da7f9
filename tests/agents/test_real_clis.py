"""The real Claude Code and Codex CLIs build the Views task through ``apg run``, driven by a
scripted model: the reference script scores 1, a wrong sort order 0, an all-denied script is no
attempt; the normalized transcripts list exactly the scripted commands with the model and the
token counts the server sent, and re-parsing the raw output offline gives the same record."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from cli_kit import NEEDS_BWRAP, TASK, Drive, Driven, bwrap_works

from ai_proving_ground.paths import project_dir
from ai_proving_ground.sandbox import isolate, landlock
from ai_proving_ground.tasks.dataset import load_dataset
from ai_proving_ground.transcripts import TRANSCRIPT_FILE, claude_code, load, parse_run
from support.model_server import Call, Reply, Shell, Step

AGENTS = ["claude-code", "codex"]
# Both backends that can cut the network and relay the model: bwrap, Landlock with namespaces.
SANDBOXES = [pytest.param("bwrap", marks=pytest.mark.skipif(not bwrap_works(), reason=NEEDS_BWRAP)),
             pytest.param("landlock", marks=pytest.mark.skipif(
                 landlock.abi_version() == 0 or isolate.available(True) is not None,
                 reason="needs Landlock and namespaces (root, or unprivileged user namespaces)"))]
# The view's write; the script runs the reference's cache rebuild (cr) in the same command, as
# the view has no route (its page a 404) until the router is rebuilt, as on Drupal.
REFERENCE_STEP = next(t for t in load_dataset(project_dir("datasets") / "build_tasks.yml").tasks
                      if t.id == TASK).reference_steps[0]


def build_script(order: str) -> list[Step]:
    """Set the view through the site command, look at its rows, say it is done."""
    step = [part.replace("order: ASC", f"order: {order}") for part in REFERENCE_STEP]
    assert step != REFERENCE_STEP or order == "ASC"
    return [Shell("apg site " + shlex.join(step) + " && apg site cr"),
            Shell("apg site views:execute kb_billing page_1 --format=json"),
            Reply(f"The kb_billing view is saved ({order}).")]


def score(envelope: dict[str, Any]) -> float:
    return float(envelope["evaluation_results"][0]["score_details"]["score"])


def check_transcript(driven: Driven, agent: str, script: list[Step]) -> dict[str, Any]:
    """transcript.json: exactly the scripted commands, the model, the server's token counts."""
    transcript = load(driven.run_dir)
    assert [c.command for c in transcript.commands] == [s.command for s in script
                                                        if isinstance(s, Shell)]
    api = "anthropic" if agent == "claude-code" else "openai"
    sent = driven.server.tokens_sent(api)
    assert (transcript.usage.input_tokens, transcript.usage.output_tokens) == (
        sent.input_tokens, sent.output_tokens)
    assert transcript.turns == len(driven.server.main_requests(api)) == len(script)
    models = {r.body["model"] for r in driven.server.main_requests(api)}
    assert models == {transcript.model}
    assert transcript.final_reply == script[-1].text  # type: ignore[union-attr]
    # Offline: the raw output alone gives the same record.
    assert parse_run(driven.run_dir, agent) == transcript
    assert (transcript.usage_source, transcript.partial) == (
        "result" if agent == "claude-code" else "turns", False)
    if agent == "claude-code":
        # Stopped before its result event, the stream still holds every response's final usage.
        raw = (driven.run_dir / claude_code.RAW_FILE).read_text(encoding="utf-8").splitlines()
        cut = claude_code.parse("\n".join(r for r in raw if json.loads(r).get("type") != "result"))
        assert (cut.usage.input_tokens, cut.usage.output_tokens, cut.usage_source) == (
            sent.input_tokens, sent.output_tokens, "messages")
    summary: dict[str, Any] = driven.record["agent_transcript"]
    assert summary["file"] == TRANSCRIPT_FILE and summary["model"] == transcript.model_id
    assert summary["turns"] == transcript.turns and summary["usage"]["input_tokens"] == (
        sent.input_tokens)
    return summary


def drive_and_grade(agent: str, drive: Drive, capsys: pytest.CaptureFixture[str],
                    order: str) -> tuple[Driven, dict[str, Any], dict[str, Any]]:
    """``agent`` runs the script for ``order`` and exits 0: the run, its transcript summary
    (checked against the script) and the envelope grade gives."""
    script = build_script(order)
    driven = drive(agent, script)
    assert driven.rc == 0, driven.err
    summary = check_transcript(driven, agent, script)
    return driven, summary, driven.grade(capsys)


@pytest.mark.parametrize("agent", AGENTS)
def test_reference_script_scores_one(agent: str, drive: Drive,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    driven, summary, envelope = drive_and_grade(agent, drive, capsys, "ASC")
    assert driven.record["status"] == "attempted"
    transcript = load(driven.run_dir)
    assert [c.exit_code for c in transcript.commands] == [0, 0], transcript.commands
    assert score(envelope) == 1.0
    # With no --model, the envelope names the model the CLI's transcript names.
    info = envelope["model_info"]
    assert info["id"] == summary["model"] and info["id"] != "unknown/unknown"
    details = envelope["evaluation_results"][0]["score_details"]["details"]
    assert details["agent_turns"] == str(summary["turns"])
    assert details["agent_input_tokens"] == str(summary["usage"]["input_tokens"])
    assert info["additional_details"]["agent_output_tokens"] == str(
        summary["usage"]["output_tokens"])


@pytest.mark.parametrize("agent", AGENTS)
def test_wrong_sort_order_scores_zero(agent: str, drive: Drive,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    envelope = drive_and_grade(agent, drive, capsys, "DESC")[2]
    assert score(envelope) == 0.0
    details = envelope["evaluation_results"][0]["score_details"]["details"]
    assert details["failed_checks"] == "rows-in-order, page-served"


def test_claude_code_all_denied_is_no_attempt(drive: Drive) -> None:
    # Outside the adapter's default rule (Bash(apg site:*)): headless Claude Code refuses both.
    script: list[Step] = [Shell("touch web/sites/default/files/x.txt"),
                          Shell("python3 -c 'open(\"y.txt\", \"w\").write(\"y\")'"),
                          Reply("I could not change anything.")]
    driven = drive("claude-code", script)
    assert driven.rc == 1
    assert driven.record["status"] == "no_attempt" and driven.record["attempted"] is False
    assert driven.record["adapter_exit_code"] == 0  # the CLI itself says it succeeded
    reason = driven.record["no_attempt_reason"]
    assert reason.startswith("every tool call (2) was denied permission: Bash(touch ")
    assert "APG_RUN_NO_ATTEMPT" in driven.err and "denied" in driven.err
    transcript = load(driven.run_dir)
    assert transcript.commands == ()
    assert [d.detail for d in transcript.permission_denials] == [
        s.command for s in script if isinstance(s, Shell)]
    assert not (driven.run_dir.parents[2] / "y.txt").exists()


def test_claude_code_extra_args_are_a_list(drive: Drive) -> None:
    # A scoped rule with spaces survives (it used to be split on spaces).
    script: list[Step] = [Shell("touch made.txt"), Reply("done")]
    driven = drive("claude-code", script, env={
        "APG_CLAUDE_ALLOWED_TOOLS": "", "APG_CLAUDE_ARGS": json.dumps(
            ["--allowedTools", "Bash(touch made.txt)"])})
    assert driven.rc == 0, driven.err
    assert [c.command for c in load(driven.run_dir).commands] == ["touch made.txt"]
    assert (driven.run_dir.parents[2] / "made.txt").is_file()


def test_codex_read_only_sandbox_gets_a_token(drive: Drive,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # Codex's own read-only sandbox: the bed is read-only, so the site write fails; the model
    # reads a token saying why, not a Python traceback. Codex's sandbox (a bwrap) cannot start
    # inside apg's, so apg runs this one unconfined (opted out).
    script = build_script("ASC")
    driven = drive("codex", script, env={"APG_CODEX_SANDBOX": "read-only", "AI_PG_SANDBOX": "none",
                                         "AI_PG_ALLOW_UNCONFINED": "1"})
    assert driven.rc == 0, driven.err
    transcript = load(driven.run_dir)
    # Codex's stream sometimes leaves this fast-failing command out; its session keeps it, so
    # it is then among the unconfirmed commands (which a must_not counts, scorers/base.py).
    first = (*transcript.commands, *transcript.unconfirmed_commands)
    wanted = build_script("ASC")[0].command  # type: ignore[union-attr]
    assert [c.exit_code for c in first if c.command == wanted] == [1], first
    # The model saw the token: in the --json stream's item, or (when Codex's stream left the
    # fast-failing command out, see transcripts/codex.py) in the session's call output.
    raw = "".join((driven.run_dir / name).read_text(encoding="utf-8")
                  for name in ("codex.jsonl", "codex-session.jsonl"))
    assert "APG_SITE_READONLY" in raw and "Traceback" not in raw
    assert score(driven.grade(capsys)) == 0.0


def test_claude_code_files_read_and_written(drive: Drive, cli_bed: Path) -> None:
    # Read is allowed headless; Write only where a rule allows it: the first is denied.
    notes, other = cli_bed / "web" / "sites" / "default" / "files" / "notes.txt", cli_bed / "x.txt"
    script: list[Step] = [
        Call("Read", {"file_path": str(cli_bed / ".gitignore")}),
        Call("Read", {"file_path": str(cli_bed / "missing.txt")}),
        Call("Write", {"file_path": str(other), "content": "no\n"}),
        Call("Write", {"file_path": str(notes), "content": "kb_billing next\n"}),
        Shell("apg site status --format=json"),
        Reply("Noted.")]
    driven = drive("claude-code", script, env={
        "APG_CLAUDE_ALLOWED_TOOLS": f"Bash(apg site:*) Edit(/{notes})"})
    assert driven.rc == 0, driven.err
    transcript = load(driven.run_dir)
    assert transcript.files_read == (str(cli_bed / ".gitignore"),)  # not the missing one
    assert transcript.files_written == (str(notes),)
    assert notes.read_text(encoding="utf-8") == "kb_billing next\n" and not other.exists()
    assert [(d.tool, d.detail) for d in transcript.permission_denials] == [("Write", str(other))]
    assert transcript.tools_used == {"Read": 2, "Write": 2, "Bash": 1}
    assert [(c.command, c.exit_code) for c in transcript.commands] == [
        ("apg site status --format=json", 0)]
    assert driven.record["status"] == "attempted"  # one denial among five calls is an attempt


@pytest.mark.skipif(not bwrap_works(), reason=NEEDS_BWRAP)
@pytest.mark.parametrize("agent", AGENTS)
def test_inside_bubblewrap_the_build_still_works(agent: str, drive: Drive,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # In apg's bubblewrap sandbox: PID 1 is bwrap, every capability dropped, /tmp private.
    # Codex's own sandbox (a nested bwrap) cannot start there; its adapter sees that and leaves
    # the confining to the outer sandbox.
    script = build_script("ASC")
    driven = drive(agent, script, env={"AI_PG_SANDBOX": "bwrap"})
    assert driven.rc == 0, driven.err
    assert driven.record["sandbox"]["backend"] == "bwrap", driven.record["sandbox"]
    check_transcript(driven, agent, script)
    assert [c.exit_code for c in load(driven.run_dir).commands] == [0, 0]
    assert score(driven.grade(capsys)) == 1.0


@pytest.mark.parametrize("backend", SANDBOXES)
@pytest.mark.parametrize("agent", AGENTS)
def test_with_the_network_cut_the_model_is_relayed_and_the_build_works(
        agent: str, backend: str, drive: Drive, capsys: pytest.CaptureFixture[str]) -> None:
    # apg run --unshare-net: the sandbox has a network of its own; the scripted model server on
    # the host's 127.0.0.1 is reached only through the model relay, at the URL's own address.
    script = build_script("ASC")
    env = {"AI_PG_SANDBOX": backend}
    if agent == "codex" and backend == "landlock":
        # Codex's own sandbox (a nested bwrap) cannot start under apg's Landlock either (no
        # capabilities, no_new_privs); its adapter only sees apg's bwrap, so say it here.
        env["APG_CODEX_SANDBOX"] = "danger-full-access"
    driven = drive(agent, script, "--unshare-net", env=env)
    assert driven.rc == 0, driven.err
    sandbox = driven.record["sandbox"]
    assert (sandbox["backend"], sandbox["network"]) == (backend, False)
    variable = "ANTHROPIC_BASE_URL" if agent == "claude-code" else "OPENAI_BASE_URL"
    port = driven.server.url.rsplit(":", 1)[1]
    assert [(r["variable"], r["address"]) for r in sandbox["model_relay"]] == [
        (variable, f"127.0.0.1:{port}")]
    assert "APG_RUN_NET_RELAYED" in driven.err and variable in driven.err
    check_transcript(driven, agent, script)
    assert [c.exit_code for c in load(driven.run_dir).commands] == [0, 0]
    assert score(driven.grade(capsys)) == 1.0
