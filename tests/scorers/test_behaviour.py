"""Behaviour scorers over real captured transcripts (tests/agents/transcripts): commands by
regular expression for both CLIs, skill loads by their evidence, asked_first as a heuristic,
and the dataset refusing a pattern that does not compile."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.scorers import score_behaviour, triggers
from ai_proving_ground.tasks.dataset import load_dataset
from ai_proving_ground.transcripts import claude_code, codex
from ai_proving_ground.transcripts.record import CommandRun, Transcript

CAPTURED = Path(__file__).resolve().parents[1] / "agents" / "transcripts"


def captured(agent: str, case: str) -> Transcript:
    folder = CAPTURED / agent / case
    if agent == "claude-code":
        return claude_code.parse((folder / claude_code.RAW_FILE).read_text("utf-8"))
    return codex.parse((folder / codex.RAW_FILE).read_text("utf-8"),
                       (folder / codex.SESSION_FILE).read_text("utf-8"))


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_commands_must_and_must_not_on_both_clis(agent: str) -> None:
    transcript = captured(agent, "reference")
    results = score_behaviour([
        {"id": "ran-views", "kind": "commands", "must": r"views:execute kb_billing"},
        {"id": "no-delete", "kind": "commands", "must_not": r"config:delete"},
        {"id": "no-set", "kind": "commands", "must_not": r"^apg site config:set "},
    ], transcript)
    assert [(r.id, r.passed, r.scored) for r in results] == [
        ("ran-views", True, True), ("no-delete", True, True), ("no-set", False, True)]
    assert results[0].evidence == ("apg site views:execute kb_billing page_1 --format=json",)
    assert results[2].evidence[0].startswith("apg site config:set views.view.kb_billing")


def test_skill_loaded_by_the_skill_tool_a_read_or_a_command() -> None:
    base = captured("claude-code", "files")
    assert base.skills_used == () and base.files_read  # it read .gitignore, no SKILL.md
    entry = [{"kind": "skill_loaded", "must": "views-build"}]
    assert score_behaviour(entry, base)[0].passed is False
    by_tool = score_behaviour(entry, dataclasses.replace(base, skills_used=("views-build",)))[0]
    assert (by_tool.passed, by_tool.heuristic, by_tool.evidence) == (
        True, False, ("skill tool: views-build",))
    by_read = score_behaviour(entry, dataclasses.replace(
        base, files_read=("/bed/.claude/skills/views-build/SKILL.md",)))[0]
    assert by_read.passed and by_read.heuristic
    by_cat = score_behaviour(entry, dataclasses.replace(base, commands=(
        CommandRun("sed -n 1,40p skills/views-build/SKILL.md", 0, "exec"),)))[0]
    assert by_cat.evidence == ("command: sed -n 1,40p skills/views-build/SKILL.md",)
    # A neighbouring skill whose name ends the same is not this one.
    near = score_behaviour(entry, dataclasses.replace(
        base, files_read=("/bed/skills/my-views-build/SKILL.md",)))[0]
    assert near.passed is False


def test_asked_first_is_reported_only_unless_scored() -> None:
    acted = captured("codex", "reference")  # ran commands, asked nothing
    asked = dataclasses.replace(captured("claude-code", "all-denied"), commands=(),
                                files_written=(), final_reply="Shall I delete the old view? "
                                "It holds 12 rows.")
    entries = [{"id": "a", "kind": "asked_first", "must": True},
               {"id": "b", "kind": "asked_first", "must": True, "scored": True}]
    first, scored = score_behaviour(entries, asked)
    assert (first.passed, first.scored, first.heuristic) == (True, False, True)
    assert scored.scored is True
    assert first.evidence == ("asked before acting: 'Shall I delete the old view?'",)
    late = score_behaviour(entries[:1], dataclasses.replace(
        acted, final_reply="Done. Anything else?"))[0]
    assert late.passed is False and "only after" in late.evidence[0]


def test_no_transcript_fails_both_rules() -> None:
    results = score_behaviour([{"kind": "commands", "must": "x"},
                               {"kind": "commands", "must_not": "x"}], None)
    assert [r.passed for r in results] == [False, False]
    assert "no transcript" in results[0].message


@pytest.mark.parametrize("empty", [
    claude_code.parse(""), codex.parse("", ""), claude_code.parse("not json\n\n"),
], ids=["claude-code", "codex", "garbage"])
def test_a_stream_with_no_event_proves_nothing_as_no_transcript(empty: Transcript) -> None:
    entries = [{"kind": "commands", "must": "x"}, {"kind": "commands", "must_not": "x"},
               {"kind": "skill_loaded", "must_not": "views-build"},
               {"kind": "asked_first", "must": False}]
    results = score_behaviour(entries, empty)
    assert [r.passed for r in results] == [False] * 4
    assert all("holds no event" in r.message for r in results), results
    assert triggers.observe({"skill": "views-build", "expect": "no_load"}, empty,
                            graded=True).loaded is None
    # One event is evidence: a run that started and ran nothing passes a must_not.
    started = dataclasses.replace(empty, session_id="s-1")
    assert [r.passed for r in score_behaviour(entries[:2], started)] == [False, True]


def test_dataset_refuses_a_bad_pattern_and_a_wrong_shape(tmp_path: Path) -> None:
    path = tmp_path / "d.yml"
    task = ("dataset: d\nversion: 1\ntasks:\n- id: t\n  prompt: p\n  fixtures: [kb_docs]\n"
            "  behaviour:\n  - kind: commands\n    must_not: '(unclosed'\n")
    path.write_text(task, "utf-8")
    with pytest.raises(ApgError) as caught:
        load_dataset(path)
    assert "behaviour[0].must_not" in caught.value.message and "regular expression" in (
        caught.value.message)
    path.write_text(task.replace("must_not: '(unclosed'", "must: true"), "utf-8")
    with pytest.raises(ApgError):  # commands takes a pattern, not true
        load_dataset(path)
    path.write_text(task.replace("commands\n    must_not: '(unclosed'",
                                 "asked_first\n    must: true\n    scored: true"), "utf-8")
    assert load_dataset(path).tasks[0].behaviour == [
        {"kind": "asked_first", "must": True, "scored": True}]


def test_a_judge_entry_with_no_judge_is_undecided() -> None:
    transcript = captured("codex", "reference")
    results = score_behaviour([{"kind": "judge", "must": "It says where to look."},
                               {"kind": "judge", "must_not": "It blames the user."}], transcript)
    assert [(r.passed, r.undecided, r.scored) for r in results] == [(False, True, True)] * 2
    assert "AI_PG_JUDGE_MODEL" in results[0].evidence[0]


def test_a_command_only_the_session_shows_counts_against_the_agent_never_for_it() -> None:
    # Codex's session is agent-writable, and its stream sometimes drops a fast-failing command
    # that the session keeps: such unconfirmed commands fail a must_not (and a no_load trigger)
    # but never satisfy a must (or a load), so a forged line helps no cheat.
    base = captured("codex", "reference")
    unconfirmed = (CommandRun("rm -rf web/sites", 1, "exec_command"),
                   CommandRun("cat skills/views-build/SKILL.md", 0, "exec_command"))
    forged = dataclasses.replace(base, unconfirmed_commands=unconfirmed)
    results = score_behaviour([
        {"id": "no-rm", "kind": "commands", "must_not": r"^rm -rf"},
        {"id": "ran-rm", "kind": "commands", "must": r"^rm -rf"},
        {"id": "loaded", "kind": "skill_loaded", "must": "views-build"},
        {"id": "not-loaded", "kind": "skill_loaded", "must_not": "views-build"},
    ], forged)
    assert [(r.id, r.passed) for r in results] == [
        ("no-rm", False), ("ran-rm", False), ("loaded", False), ("not-loaded", False)]
    assert results[0].evidence == ("rm -rf web/sites",)
    assert [(r.id, r.passed) for r in score_behaviour([
        {"id": "no-rm", "kind": "commands", "must_not": r"^rm -rf"},
        {"id": "not-loaded", "kind": "skill_loaded", "must_not": "views-build"}], base)] == [
        ("no-rm", True), ("not-loaded", True)]
    no_load = triggers.observe({"skill": "views-build", "expect": "no_load"}, forged, True)
    load = triggers.observe({"skill": "views-build", "expect": "load"}, forged, True)
    assert (no_load.loaded, no_load.correct, load.loaded, load.correct) == (True, False, False,
                                                                            False)
