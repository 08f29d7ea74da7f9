"""A campaign's provenance asks the real Claude Code and Codex CLIs their versions.

The shipped adapters' ``## Commands:`` headers name the CLIs; :func:`provenance.cli_versions`
runs each ``--version`` once through proc.py, as the runner does before campaign.json.
"""

from __future__ import annotations

import os
from pathlib import Path

from ai_proving_ground.campaigns import provenance
from ai_proving_ground.tasks.adapters import find_adapter
from support.agent_clis import PINS, AgentClis


def test_the_shipped_adapters_clis_are_recorded_with_their_versions(
        agent_clis: AgentClis, tmp_path: Path) -> None:
    host = {"PATH": f"{agent_clis.bin_dir}{os.pathsep}{os.environ['PATH']}"}
    expected = {executable: first_line for _, executable, first_line in PINS.values()}
    for name, cli in (("claude-code", "claude"), ("codex", "codex")):
        commands = find_adapter(name, tmp_path).header.commands  # shipped: no bed needed
        assert cli in commands, (name, commands)
        found = provenance.cli_versions(commands, host)
        assert found[cli] == {"status": "ok", "path": str(agent_clis.bin_dir / cli),
                              "version": expected[cli]}
        assert found["node"]["status"] == "ok" and found["node"]["version"].startswith("v")
