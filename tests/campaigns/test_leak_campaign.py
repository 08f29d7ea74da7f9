"""A leak in a real campaign: an adapter named claude-code whose stream's start-up lists an MCP
server and a skill its arm did not give. The attempt record keeps both (``leaks``) and what the
transcript says it used (``usage``), the runner says APG_CAMPAIGN_LEAK, and the report warns per
arm; the outcome is the agent's as ever (a warning, not a verdict)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from campaign_kit import FIXTURES, attempts, run_campaign, write_spec

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

# What Claude Code 2.1.332 prints, cut down: its init event (one bundled skill, which is no
# leak) and a result whose reply asks before doing anything.
STREAM = [
    {"type": "system", "subtype": "init", "session_id": "s-1", "model": "claude-opus-5-5",
     "claude_code_version": "2.1.332", "skills": ["deep-research", "stray-skill"],
     "mcp_servers": [{"name": "claude_ai_Gmail", "status": "connected", "source": "claudeai"}],
     "plugins": [{"name": "cc-plugin-telemetry", "path": "builtin"}]},
    {"type": "result", "subtype": "success", "is_error": False, "num_turns": 1,
     "result": "Which section should the view list?", "total_cost_usd": 0.25,
     "usage": {"input_tokens": 100, "output_tokens": 9}, "permission_denials": []},
]


@pytest.fixture(scope="module")
def template(fixtures_template_bed: Path, tmp_path_factory: pytest.TempPathFactory,
             copy_template: Callable[[Path, Path], Path]) -> Path:
    """A provisioned bed whose own claude-code adapter prints :data:`STREAM`."""
    bed = copy_template(fixtures_template_bed, tmp_path_factory.mktemp("leak_template") / "bed")
    agents = bed / ".ddev" / "agents"
    agents.mkdir(parents=True)
    lines = "\n".join(json.dumps(event) for event in STREAM)
    (agents / "claude-code").write_text(f"#!/bin/sh\n## Credentials: none\ncat <<'EOF'\n{lines}\n"
                                        "EOF\n", encoding="utf-8")
    (agents / "claude-code").chmod(0o755)
    provision(bed, FIXTURES, EmbeddedSite(bed))
    return bed


def test_a_leaking_start_up_is_kept_said_and_reported(template: Path, tmp_path: Path,
                                                      apg: Any) -> None:
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "leaky", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"solo": {}}, "agents": ["claude-code"], "repeats": 1, "seed": 1, "jobs": 1,
        "bed": str(template), "fixtures": FIXTURES})
    out = tmp_path / "out"
    result = run_campaign(apg, spec, out)
    [record] = attempts(out)
    assert record["outcome"] == "fail", record  # nothing built: the leak changes no verdict
    leaks = [{"kind": "mcp_server", "name": "claude_ai_Gmail"},
             {"kind": "skill", "name": "stray-skill"}]
    assert record["leaks"] == leaks
    assert record["usage"] == {"input_tokens": 100, "output_tokens": 9, "tool_calls": 0,
                               "commands": 0, "permission_denials": 0, "cost_usd": 0.25,
                               "asked_first": True}
    said = [line for line in result.err.splitlines() if line.startswith("APG_CAMPAIGN_LEAK")]
    assert said == ["APG_CAMPAIGN_LEAK attempt 0000 (arm solo): the agent's start-up showed what "
                    "its arm did not give it: mcp_server claude_ai_Gmail, skill stray-skill"]
    report = json.loads((out / "report.json").read_text("utf-8"))
    assert report["usage"]["solo"]["leaks"] == {
        "attempts": [0], "names": ["mcp_server claude_ai_Gmail", "skill stray-skill"]}
    assert report["usage"]["solo"]["asked_first"]["k"] == 1
    assert any(w.startswith("APG_CAMPAIGN_LEAK arm solo") for w in report["warnings"])
    run = json.loads((out / "runs" / "0000" / "run.json").read_text("utf-8"))
    assert run["agent_transcript"]["leaks"] == leaks
