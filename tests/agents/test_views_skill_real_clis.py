"""The shipped skill evaluation (campaigns/views_skill.yml), small: three of its cases, both
arms, the real Claude Code and Codex CLIs, one repeat, against a scripted model that loads
drupal-views-build only when the CLI offers it (Claude Code by its Skill tool, Codex by reading
the SKILL.md its skill list names), and on the near miss too for Codex (an over-eager router, so
a false load has to show). The report gives each arm's hit and false-load rates, keeps the
trigger-only cases out of the paired effect, and the outcome case's judge criterion is graded
by a scripted judge model and reported per arm."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import FIXTURES, provider_env

from ai_proving_ground.paths import project_dir
from ai_proving_ground.tasks.dataset import load_dataset
from support.model_server import Call, Decide, Reply, ScriptedModelServer, Shell

SKILL = "drupal-views-build"
OUTCOME, SHOULD_LOAD, NEAR_MISS = ("dv01_view_build", "tl01_getting_started_page",
                                   "tn01_unpublish_faq_item")
# A phrase of each case's prompt, so the scripted model knows which case it is in.
PHRASES = {OUTCOME: "machine name kb_billing", SHOULD_LOAD: "kb/getting-started",
           NEAR_MISS: "Why was I charged twice?"}
REPLY = "The kb_billing view is saved; its page is live at /kb/billing."


def case_of(text: str) -> str:
    [case] = [c for c, phrase in PHRASES.items() if json.dumps(phrase)[1:-1] in text]
    return case


def load_step(body: dict[str, Any], text: str) -> Shell | Call:
    """How each CLI's model loads a skill: Claude Code's Skill tool; Codex has none, so it reads
    the file its skill list names (``(file: r0/NAME/SKILL.md)``, ``r0`` in its roots table)."""
    if "input" not in body:
        return Call("Skill", {"skill": SKILL})
    alias = re.search(rf"\(file: (r\d+)/{SKILL}/SKILL\.md\)", text)
    assert alias is not None, "codex listed the skill without its file"
    root = re.search(rf"`{alias.group(1)}` = `([^`]+)`", text)
    assert root is not None, "codex named no root for the skill's alias"
    return Shell(f"cat {root.group(1)}/{SKILL}/SKILL.md")


def steps_for(body: dict[str, Any]) -> list[Shell | Call | Reply]:
    text = json.dumps(body)
    case, codex = case_of(text), "input" in body
    # The catalog lists the skill's name only in the arm that installs it.
    loads = SKILL in text and (case != NEAR_MISS or codex)
    steps: list[Shell | Call | Reply] = [load_step(body, text)] if loads else []
    if case == OUTCOME:
        task = load_dataset(project_dir("datasets") / "views_skill.yml").task(OUTCOME)
        steps += [Shell("apg site " + shlex.join(step)) for step in task.reference_steps]
        return [*steps, Reply(REPLY)]
    return [*steps, Reply("Done.")]


def turn(index: int) -> Decide:
    def choose(body: Any) -> Shell | Call | Reply:
        steps = steps_for(body)
        return steps[index] if index < len(steps) else Reply("Done.")
    return Decide(choose)


def spec(tmp_path: Path, bed: Path) -> Path:
    """campaigns/views_skill.yml, small: three cases, one repeat, the test's bed."""
    data = yaml.safe_load((project_dir("campaigns") / "views_skill.yml").read_text("utf-8"))
    for arm in data["arms"].values():
        arm["skills"]["catalog"] = str(project_dir("skills"))
    data.update(tasks=[OUTCOME, SHOULD_LOAD, NEAR_MISS], repeats=1, jobs=2, bed=str(bed),
                fixtures=FIXTURES, agent_timeout_s=200)
    path = tmp_path / "views_skill.yml"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_views_skill_campaign_on_both_clis(apg: Any, tmp_path: Path, cli_bed: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    with ScriptedModelServer([turn(i) for i in range(6)], timeout_s=400) as model, \
            ScriptedModelServer([], side_replies=["YES"] * 12) as judge:
        for agent in ("claude-code", "codex"):
            for variable, value in provider_env(agent, model.url).items():
                monkeypatch.setenv(variable, value)
        for name, value in {"AI_PG_JUDGE_MODEL": "judge-1", "AI_PG_JUDGE_BASE_URL": judge.url,
                            "AI_PG_JUDGE_API_KEY": "scripted-dummy-key"}.items():
            monkeypatch.setenv(name, value)
        result = apg("campaign", "run", str(spec(tmp_path, cli_bed)), "--out", str(out),
                     "--beds", str(tmp_path / "beds"))
        votes = judge.requests
    assert result.rc == 0, result.err
    records = {(r["task_id"], r["arm"], r["agent"]): r for r in (
        json.loads(p.read_text("utf-8")) for p in out.glob("runs/*/attempt.json"))}
    outcomes = {key: r["outcome"] for key, r in records.items()}
    assert outcomes == {
        **{(OUTCOME, arm, agent): "pass" for arm in ("with", "without")
           for agent in ("claude-code", "codex")},
        (SHOULD_LOAD, "with", "claude-code"): "pass", (SHOULD_LOAD, "with", "codex"): "pass",
        (SHOULD_LOAD, "without", "claude-code"): "fail",
        (SHOULD_LOAD, "without", "codex"): "fail",
        (NEAR_MISS, "with", "claude-code"): "pass", (NEAR_MISS, "with", "codex"): "fail",
        (NEAR_MISS, "without", "claude-code"): "pass",
        (NEAR_MISS, "without", "codex"): "pass"}, result.err
    # What showed each load: Claude Code's Skill tool (direct), Codex's read of the file.
    claude = records[(SHOULD_LOAD, "with", "claude-code")]["trigger"]
    assert (claude["loaded"], claude["heuristic"]) == (True, False)
    assert claude["evidence"] == [f"skill tool: {SKILL}"]
    codex = records[(SHOULD_LOAD, "with", "codex")]["trigger"]
    assert (codex["loaded"], codex["heuristic"]) == (True, True)
    assert codex["evidence"][0].startswith("command: cat ") and codex["evidence"][0].endswith(
        f"/{SKILL}/SKILL.md")
    assert records[(SHOULD_LOAD, "without", "codex")]["trigger"]["loaded"] is False
    assert records[(OUTCOME, "with", "codex")]["trigger"]["graded"] is False  # reported only

    report = json.loads((out / "report.json").read_text("utf-8"))
    rows = {(r["arm"], r["agent"]): r for r in report["triggers"]}

    def said(row: dict[str, Any], part: str) -> tuple[int, int]:
        return row[part]["k"], row[part]["n"]

    # Per arm: the hit rate over the should-load cases (the trigger case and the outcome case),
    # the false-load rate over the near miss; Wilson intervals beside each.
    expected = {("with", "claude-code"): ((2, 2), (0, 1)), ("with", "codex"): ((2, 2), (1, 1)),
                ("without", "claude-code"): ((0, 2), (0, 1)),
                ("without", "codex"): ((0, 2), (0, 1))}
    assert {key: (said(r, "hit"), said(r, "false_load")) for key, r in rows.items()} == expected
    assert said(rows[("with", "codex")], "near_miss_false_load") == (1, 1)
    assert rows[("with", "codex")]["heuristic_loads"] == 3
    assert rows[("with", "claude-code")]["heuristic_loads"] == 0
    assert rows[("without", "codex")]["hit"]["wilson"][0] == 0.0
    # The arms and the paired effect count the outcome case only: a should-load case fails by
    # construction where the skill is not installed.
    assert {(a["arm"], a["agent"]): (a["k"], a["n"]) for a in report["arms"]} == {
        (arm, agent): (1, 1) for arm in ("without", "with") for agent in ("claude-code", "codex")}
    assert [(e["agent"], e["cases"], e["difference"]) for e in report["effects"]] == [
        ("claude-code", 1, 0.0), ("codex", 1, 0.0)]
    markdown = (out / "report.md").read_text("utf-8")
    assert "## Skill triggers" in markdown
    assert f"| with | codex | (default) | {SKILL} | 2/2 |" in markdown
    assert (out / "report.html").read_text("utf-8").count('<tr class="trigger">') == 4
    text = apg("campaign", "report", str(out))
    assert f"with / codex: {SKILL} loaded in 2/2" in text.out, text.out

    # The judge criterion on the outcome case's reply: graded by the scripted judge (three
    # votes, cached by content, so the four identical replies ask three times in all per bed).
    assert votes and len(votes) % 3 == 0 and len(votes) <= 12
    assert {(r["id"], r["arm"], r["agent"]): (r["held"]["k"], r["held"]["n"], r["undecided"],
                                              r["scored"]) for r in report["behaviour"]} == {
        ("says-where", arm, agent): (1, 1, 0, False) for arm in ("with", "without")
        for agent in ("claude-code", "codex")}
    assert "## Behaviour, per arm" in markdown

    # Re-graded offline: a trigger case is graded again on its stream (stdout.log, parsed anew),
    # the outcome case from its kept state and its stream. The judge is gone now, yet the
    # criterion and reply are unchanged, so each attempt's own kept votes (judge_votes) serve it
    # and nothing asks the stopped judge; with no judge configured it is undecided, reported
    # only, so each outcome stands.
    regraded = apg("campaign", "regrade", str(out), "--json")
    assert regraded.rc == 0, regraded.err
    statuses = {(a["task_id"], a["arm"], a["agent"]): (a["status"], a["token"], a["changed"])
                for a in json.loads(regraded.out)["attempts"]}
    assert statuses == {key: ("regraded", None, []) for key in outcomes}
    assert "APG_JUDGE_FAILED" not in regraded.err
    monkeypatch.delenv("AI_PG_JUDGE_MODEL")
    regraded = apg("campaign", "regrade", str(out), "--json")
    assert regraded.rc == 0, regraded.err
    statuses = {(a["task_id"], a["arm"], a["agent"]): (a["status"], a["new"]["outcome"],
                                                        a["changed"])
                for a in json.loads(regraded.out)["attempts"]}
    assert statuses == {key: ("regraded", outcome, ["behaviour:says-where"] if key[0] == OUTCOME
                              else []) for key, outcome in outcomes.items()}
    for arm in ("with", "without"):
        for agent in ("claude-code", "codex"):
            folder = out / "runs" / f"{records[(OUTCOME, arm, agent)]['order']:04d}"
            details = json.loads((folder / "grade.json").read_text("utf-8"))[
                "evaluation_results"][0]["score_details"]["details"]
            [judged] = json.loads(details["behaviour"])
            assert (judged["id"], judged["passed"], judged["scored"]) == ("says-where", True,
                                                                           False), judged
