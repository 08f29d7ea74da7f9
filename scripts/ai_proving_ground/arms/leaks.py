"""Leaks between arms: what an agent's start-up showed that its arm did not give it.

An arm gives skills (``arm.json``'s names) and nothing else the start-up lists: every MCP
server and every plugin beyond the stock CLI is a leak (the operator's claude.ai connectors, an
image's config, the bed's ``.mcp.json``), and so is every skill beyond the CLI's own that is not
one of the arm's (a skill planted in the run's HOME, the bed's ``.claude/skills``, the other
arm's). The start-up record is :class:`~ai_proving_ground.transcripts.startup.Startup`; a run
with no ``arm.json`` was given nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_proving_ground.arms.given import ARM_RECORD, ArmRecord
from ai_proving_ground.errors import ApgError
from ai_proving_ground.records import read_record

LEAK_TOKEN = "APG_RUN_LEAK"
KINDS = ("mcp_server", "skill", "plugin")


def given_skills(run_dir: Path) -> set[str]:
    """The skill names ``arm.json`` in ``run_dir`` records; none without one. An unreadable one
    (apg's own file, checked after the adapter ran) counts as nothing given, so that every
    skill shown is reported rather than none."""
    if not (run_dir / ARM_RECORD).exists():
        return set()
    try:
        record = read_record(run_dir / ARM_RECORD, ArmRecord, "APG_ARM_RECORD_INVALID")
    except ApgError:
        return set()
    return {skill["name"] for skill in record.skills}


def leaks(startup: dict[str, Any], given: set[str]) -> list[dict[str, str]]:
    """Each MCP server, plugin and not-given skill ``startup`` (a Startup as JSON) lists."""
    found = [{"kind": "mcp_server", "name": name} for name in startup.get("mcp_servers", [])]
    found += [{"kind": "skill", "name": name} for name in startup.get("skills", [])
              if name not in given]
    found += [{"kind": "plugin", "name": name} for name in startup.get("plugins", [])]
    return found


def describe(found: list[dict[str, str]]) -> str:
    """``mcp_server planted, skill other`` for a stderr line."""
    return ", ".join(f"{leak['kind']} {leak['name']}" for leak in found)
