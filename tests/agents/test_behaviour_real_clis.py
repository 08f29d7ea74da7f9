"""Behaviour scorers on the real Claude Code and Codex CLIs driven by a scripted model: a session
that reads the skill's SKILL.md counts as a load (Claude Code by its Read tool, Codex by a shell
command), one that does not, does not; a forbidden command fails a ``commands`` must_not and with
it the verdict, though every state check passes; a judge criterion on the final reply is asked
of a scripted judge model three times, redacted, and a second grade asks nothing."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import TASK, Drive

from ai_proving_ground.cli import grade as grade_cli
from ai_proving_ground.paths import project_dir
from ai_proving_ground.tasks.dataset import load_dataset
from support.model_server import Call, Reply, ScriptedModelServer, Shell, Step

SKILL = "views-build"
BEHAVIOUR = [{"id": "skill-read", "kind": "skill_loaded", "must": SKILL},
             {"id": "no-view-run", "kind": "commands", "must_not": r"^apg site views:execute\b"},
             {"id": "says-saved", "kind": "judge", "must": "The reply says the listing is saved.",
              "redact": ["kb_billing"]}]


def build_script() -> list[Step]:
    """The task's reference steps through the site command, a look at the rows, a reply."""
    task = load_dataset(project_dir("datasets") / "build_tasks.yml").task(TASK)
    return [*(Shell("apg site " + shlex.join(step)) for step in task.reference_steps),
            Shell("apg site views:execute kb_billing page_1 --format=json"),
            Reply("The kb_billing view is saved.")]


def behaviour_dataset(folder: Path) -> Path:
    """The shipped build task with behaviour scorers beside its state checks."""
    shipped = yaml.safe_load((project_dir("datasets") / "build_tasks.yml").read_text("utf-8"))
    task = next(t for t in shipped["tasks"] if t["id"] == TASK)
    task.pop("hidden_verifier", None)
    path = folder / "behaviour.yml"
    path.write_text(yaml.safe_dump({"dataset": "behaviour_cases", "version": 1,
                                    "tasks": [{**task, "behaviour": BEHAVIOUR}]}), "utf-8")
    return path


def grade(record: dict[str, Any], dataset: Path,
          capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], str]:
    capsys.readouterr()
    rc = grade_cli.main(["--approot", str(record["approot"]), TASK, f"--run={record['run_id']}",
                         f"--dataset={dataset}"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    return json.loads(captured.out), captured.err


@pytest.mark.parametrize("reads", [True, False], ids=["reads-skill", "no-skill"])
@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_skill_load_forbidden_command_and_judge(agent: str, reads: bool, drive: Drive,
                                                cli_bed: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    skill_md = cli_bed / "web" / "sites" / "default" / "files" / SKILL / "SKILL.md"
    skill_md.parent.mkdir(parents=True)
    skill_md.write_text("---\nname: views-build\n---\nBuild Views through apg site.\n", "utf-8")
    # Claude Code reads by its Read tool (Bash is limited to apg site); Codex by a shell command.
    read: Step = (Call("Read", {"file_path": str(skill_md)}) if agent == "claude-code"
                  else Shell(f"cat {skill_md}"))
    script = [read, *build_script()] if reads else build_script()
    dataset = behaviour_dataset(tmp_path)
    driven = drive(agent, script, f"--dataset={dataset}")
    assert driven.rc == 0, driven.err
    # The judge: another scripted server, whose three votes are YES, YES, NO.
    with ScriptedModelServer([], side_replies=["YES", "YES", "NO"]) as judge:
        for name, value in {"AI_PG_JUDGE_MODEL": "judge-1", "AI_PG_JUDGE_BASE_URL": judge.url,
                            "AI_PG_JUDGE_API_KEY": "scripted-dummy-key"}.items():
            monkeypatch.setenv(name, value)
        envelope, err = grade(driven.record, dataset, capsys)
        again = grade(driven.record, dataset, capsys)[0]
        votes = [r.body for r in judge.requests]
    assert len(votes) == 3  # three votes, and the second grade served from the cache
    assert "The kb_billing view" not in json.dumps(votes) and "[redacted]" in json.dumps(votes)
    judged = {b["id"]: b for b in json.loads(
        again["evaluation_results"][0]["score_details"]["details"]["behaviour"])}["says-saved"]
    assert judged["passed"] is True and judged["evidence"][0].endswith("yes, yes, no (cached)")
    details = envelope["evaluation_results"][0]["score_details"]["details"]
    assert details["failed_checks"] == "", details  # the state is right ...
    behaviour = {b["id"]: b for b in json.loads(details["behaviour"])}
    loaded = behaviour["skill-read"]
    assert loaded["passed"] is reads, loaded
    if reads:
        kind = "file read" if agent == "claude-code" else "command"
        assert loaded["evidence"] and loaded["evidence"][0].startswith(f"{kind}: "), loaded
        assert loaded["heuristic"] is True
    else:
        assert loaded["evidence"] == []
    forbidden = behaviour["no-view-run"]
    assert forbidden["passed"] is False
    assert forbidden["evidence"] == ["apg site views:execute kb_billing page_1 --format=json"]
    # ... but a forbidden command ran: the verdict fails.
    assert (details["verdict"], envelope["evaluation_results"][0]["score_details"]["score"]) == (
        "fail", 0.0)
    passed = 2 if reads else 1
    assert details["behaviour_passed"] == f"{passed}/3"
    assert f"behaviour {passed}/3" in err
