"""Leaks between arms, with the real Claude Code and Codex CLIs against the scripted model server.

A bed adapter that plants, in the run's own HOME, a skill no arm gave and an MCP server in the
user's configuration, then starts the shipped adapter with one more MCP server among its
arguments: the start-up lists the planted skill and the argument's server, so run.json's
``agent_transcript.leaks`` names both and apg run says ``APG_RUN_LEAK``; the user's server never
reaches Claude Code (``--strict-mcp-config``), so it is no leak. (That an arm-given skill is no
leak is proven in test_arms_real_clis.py, by the same campaign that shows it reaches the CLI.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_kit import RUN_TIMEOUT_S, TASK, provider_env

from ai_proving_ground.cli import run as run_cli
from ai_proving_ground.transcripts import load
from support.model_server import Reply, ScriptedModelServer

SHIPPED = Path(__file__).resolve().parents[2] / "ddev" / "agents"
# The smallest MCP server over stdio Codex lists: one tool (a server that fails to start, or
# offers no tool, it leaves out).
MCP_STUB = r'''import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    result = {"tools": [{"name": "ping", "description": "Answers nothing.",
                         "inputSchema": {"type": "object", "properties": {}}}]} \
        if msg["method"] == "tools/list" else {}
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "stub", "version": "1"}}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
'''
SKILL_DIRS = {"claude-code": ".claude/skills", "codex": ".codex/skills"}
SERVER = "argsmcp"
# The shipped adapter's extra arguments, naming one MCP server no arm gave (STUB: its script).
SERVER_ARGS = {
    "claude-code": ("APG_CLAUDE_ARGS", ["--mcp-config", json.dumps(
        {"mcpServers": {SERVER: {"command": "python3", "args": ["STUB"]}}})]),
    "codex": ("APG_CODEX_ARGS", ["-c", f'mcp_servers.{SERVER}.command="python3"',
                                 "-c", f'mcp_servers.{SERVER}.args=["STUB"]']),
}


def planting_adapter(bed: Path, agent: str) -> str:
    """The bed's adapter named ``agent`` (it comes before the shipped one, and its name picks the
    transcript's parser): it plants a skill and a user-level MCP server in the run's HOME, then
    runs the shipped adapter with one more MCP server among its arguments."""
    name = agent
    variables = ",".join(provider_env(agent, "x"))
    variable, arguments = SERVER_ARGS[agent]
    user_mcp = json.dumps({"mcpServers": {"usermcp": {"command": "python3", "args": ["STUB"]}}})
    script = f"""#!/usr/bin/env bash
## Credentials: bed-scoped
## Env: {variables}
## Commands: claude,codex,node
set -eu
skill="$HOME/{SKILL_DIRS[agent]}/planted-skill"
mkdir -p "$skill"
printf -- '---\\nname: planted-skill\\ndescription: Planted.\\n---\\n\\n# planted\\n' >"$skill/SKILL.md"
cat >"$HOME/mcp_stub.py" <<'EOF'
{MCP_STUB}EOF
printf '%s' '{user_mcp}' | sed "s|STUB|$HOME/mcp_stub.py|" >"$HOME/.claude.json"
{variable}="$(printf '%s' '{json.dumps(arguments)}' | sed "s|STUB|$HOME/mcp_stub.py|")"
export {variable}
exec "{SHIPPED / agent}"
"""
    folder = bed / ".ddev" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(script, encoding="utf-8")
    (folder / name).chmod(0o755)
    return name


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_skill_and_an_mcp_server_no_arm_gave_are_leaks(
        agent: str, cli_bed: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = planting_adapter(cli_bed, agent)
    with ScriptedModelServer([Reply("Nothing to build here.")], timeout_s=RUN_TIMEOUT_S) as server:
        for name, value in provider_env(agent, server.url).items():
            monkeypatch.setenv(name, value)
        capsys.readouterr()
        rc = run_cli.main(["--approot", str(cli_bed), TASK, f"--agent={adapter}", "--json",
                           f"--timeout={RUN_TIMEOUT_S}"])
        captured = capsys.readouterr()
    assert rc == 0, captured.err
    record = json.loads(captured.out)
    run_dir = cli_bed / ".ai-proving-ground" / "runs" / record["run_id"]
    summary = record["agent_transcript"]
    assert summary["leaks"] == [{"kind": "mcp_server", "name": SERVER},
                                {"kind": "skill", "name": "planted-skill"}], summary
    said = [line for line in captured.err.splitlines() if line.startswith("APG_RUN_LEAK")]
    assert len(said) == 1 and "skill planted-skill" in said[0], captured.err
    startup = load(run_dir).startup
    assert startup is not None and startup.seen
    # The user's own MCP server: kept out of Claude Code by --strict-mcp-config; Codex never
    # reads ~/.claude.json (its CODEX_HOME is fresh, holding only what the run's HOME has).
    assert "usermcp" not in startup.mcp_servers
    assert os.path.isfile(run_dir / "home" / ".claude.json")  # it was there to be read
