"""What an agent CLI's start-up shows it was given beyond the stock CLI: MCP servers, skills, plugins.

Read from each CLI's own start-up records, so a leak between campaign arms (a skill or an MCP
server the arm did not give, from the operator's account, the bed or an image) is visible in the
transcript (``arms/leaks.py`` compares it with ``arm.json``):

- Claude Code (2.1.332): the stream-json ``system``/``init`` event's ``mcp_servers`` (each
  ``name``, ``status``: a server that failed to start is listed too), ``skills`` (names only:
  the CLI's bundled skills are listed beside the user's and the project's, and are left out
  here by :data:`CLAUDE_CODE_STOCK_SKILLS`) and ``plugins`` (built-in ones have path
  ``builtin`` and are left out).
- Codex (0.169.0): its session file's skills message (``### Skill roots`` then ``### Available
  skills``, each entry naming its root), where the skills of a ``skills/.system`` root are
  Codex's own, and ``world_state``'s tool namespaces ``mcp__<server>`` (a server that failed to
  start is not listed). ``--json`` shows neither.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# The skills Claude Code 2.1.332 lists at start-up with nothing installed (an empty HOME and
# project): bundled with the CLI, the same in every arm. tests/agents/test_leaks_real_clis.py
# proves an arm that gives nothing shows exactly these, so a CLI whose bundle changes fails
# there; until this set is brought up to date, a new bundled skill reads as a leak.
CLAUDE_CODE_STOCK_SKILLS = frozenset({
    "deep-research", "design", "design-sync", "dataviz", "update-config", "verify", "debug",
    "code-review", "simplify", "batch", "fewer-permission-prompts", "doctor", "loop",
    "claude-api", "workflow-authoring", "run", "run-skill-generator", "plugin-authoring"})
BUILTIN_PLUGIN_PATH = "builtin"
# Codex's own skills sit in this root (it installs them into CODEX_HOME itself).
CODEX_STOCK_ROOT = "/skills/.system"
SKILL_ROOT = re.compile(r"^- `(?P<key>[^`]+)` = `(?P<path>[^`]+)`$", re.M)
SKILL_ENTRY = re.compile(r"^- (?P<name>[^:\n]+): .*\(file: (?P<key>[^/)]+)/[^)]*\)$", re.M)
MCP_PREFIX = "mcp__"


@dataclass(frozen=True)
class Startup:
    """What one start-up showed beyond the stock CLI (``seen``: a start-up record was found)."""

    seen: bool = False
    mcp_servers: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"seen": self.seen, "mcp_servers": list(self.mcp_servers),
                "skills": list(self.skills), "plugins": list(self.plugins)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Startup:
        return cls(seen=bool(data["seen"]), mcp_servers=tuple(data["mcp_servers"]),
                   skills=tuple(data["skills"]), plugins=tuple(data["plugins"]))


def claude_code(init: dict[str, Any]) -> Startup:
    """Claude Code's ``init`` event (``{}`` when the stream has none)."""
    if not init:
        return Startup()
    servers = [s.get("name") if isinstance(s, dict) else s for s in _list(init.get("mcp_servers"))]
    skills = [s for s in _list(init.get("skills")) if s not in CLAUDE_CODE_STOCK_SKILLS]
    plugins = [p.get("name") for p in _list(init.get("plugins"))
               if isinstance(p, dict) and p.get("path") != BUILTIN_PLUGIN_PATH]
    return Startup(seen=True, mcp_servers=_names(servers), skills=_names(skills),
                   plugins=_names(plugins))


def codex(session: list[dict[str, Any]]) -> Startup:
    """Codex's session file's events (``[]`` when there is none)."""
    skills: list[str] = []
    servers: list[str] = []
    seen = False
    for event in session:
        payload = event.get("payload")
        if not isinstance(payload, dict):
            continue
        if event.get("type") == "world_state" and isinstance(payload.get("state"), dict):
            seen = True
            state = payload["state"]
            for table in (state.get("tools"), state.get("top_level_tools")):
                servers.extend(_mcp_server(str(k)) for k in (table if isinstance(table, dict)
                                                             else {}))
        if payload.get("type") == "message" and payload.get("role") == "developer":
            for part in _list(payload.get("content")):
                text = part.get("text") if isinstance(part, dict) else None
                if isinstance(text, str) and "### Skill roots" in text:
                    seen = True
                    skills.extend(_codex_skills(text))
    return Startup(seen=seen, mcp_servers=_names(servers), skills=_names(skills))


def _codex_skills(text: str) -> list[str]:
    """The skills the message lists outside Codex's own root."""
    roots = {m.group("key"): m.group("path") for m in SKILL_ROOT.finditer(text)}
    return [m.group("name").strip() for m in SKILL_ENTRY.finditer(text)
            if not roots.get(m.group("key"), "").endswith(CODEX_STOCK_ROOT)]


def _mcp_server(key: str) -> str:
    """``mcp__server`` or ``mcp__server.tool`` or ``mcp__server__tool`` is ``server``; any other
    namespace is not an MCP server (empty)."""
    if not key.startswith(MCP_PREFIX):
        return ""
    return key[len(MCP_PREFIX):].split(".", 1)[0].split("__", 1)[0]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _names(values: list[Any]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if isinstance(v, str) and v))
