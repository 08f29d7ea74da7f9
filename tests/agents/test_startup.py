"""What each CLI's start-up showed, read from captured raw output (tests/agents/transcripts/):
the planted runs list MCP servers and skills from every place the CLI reads, the CLI's own
skills left out; the reference runs show nothing beyond the stock CLI. ``arms.leaks`` then
names what the arm did not give."""

from __future__ import annotations

from pathlib import Path

from ai_proving_ground.arms.leaks import describe, leaks
from ai_proving_ground.transcripts import claude_code, codex
from ai_proving_ground.transcripts.record import Transcript
from ai_proving_ground.transcripts.startup import Startup

CAPTURED = Path(__file__).parent / "transcripts"


def parse(agent: str, name: str) -> Transcript:
    folder = CAPTURED / agent / name
    if agent == "claude-code":
        return claude_code.parse((folder / claude_code.RAW_FILE).read_text("utf-8"))
    session = folder / codex.SESSION_FILE
    return codex.parse((folder / codex.RAW_FILE).read_text("utf-8"),
                       session.read_text("utf-8") if session.is_file() else None)


def test_claude_code_start_up_lists_user_and_project_servers_and_skills() -> None:
    # HOME's ~/.claude.json and ~/.claude/skills, the project's .mcp.json and .claude/skills,
    # without --strict-mcp-config; the 18 bundled skills and 4 built-in plugins are left out.
    startup = parse("claude-code", "planted").startup
    assert startup == Startup(seen=True, mcp_servers=("planted-mcp", "project-mcp"),
                              skills=("planted-skill", "project-skill"))


def test_codex_start_up_lists_every_skill_root_but_its_own_and_started_servers() -> None:
    # CODEX_HOME/skills, HOME/.agents/skills, the project's .codex/skills and .agents/skills,
    # and CODEX_HOME's config.toml server (listed as its tool namespace, mcp__planted_mcp).
    startup = parse("codex", "planted").startup
    assert startup is not None and startup.seen
    assert startup.mcp_servers == ("planted_mcp",)
    assert sorted(startup.skills) == ["given-skill", "home-agents-skill", "repo-agents-skill",
                                      "repo-codex-skill"]  # not imagegen, skill-creator, ...


def test_a_stock_start_up_shows_nothing_and_old_sessions_show_no_start_up() -> None:
    assert parse("claude-code", "reference").startup == Startup(seen=True)
    # The captured Codex sessions were trimmed of their developer messages and world_state.
    assert parse("codex", "reference").startup == Startup(seen=False)


def test_the_record_keeps_the_start_up_through_its_schema(tmp_path: Path) -> None:
    transcript = parse("codex", "planted")
    assert Transcript.from_json(transcript.as_json()) == transcript
    assert transcript.summary("transcript.json")["startup"]["mcp_servers"] == ["planted_mcp"]
    old = {k: v for k, v in transcript.as_json().items() if k != "startup"}
    assert Transcript.from_json(old).startup is None  # a record parsed before start-ups


def test_what_the_arm_did_not_give_is_a_leak() -> None:
    startup = {"seen": True, "mcp_servers": ["claude_ai_Gmail"], "skills": ["given", "stray"],
               "plugins": ["operator-plugin"]}
    found = leaks(startup, {"given"})
    assert found == [{"kind": "mcp_server", "name": "claude_ai_Gmail"},
                     {"kind": "skill", "name": "stray"},
                     {"kind": "plugin", "name": "operator-plugin"}]
    assert describe(found) == "mcp_server claude_ai_Gmail, skill stray, plugin operator-plugin"
    assert leaks({"seen": True, "mcp_servers": [], "skills": ["given"], "plugins": []},
                 {"given"}) == []
