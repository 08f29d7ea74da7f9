"""An arm's adapter, skills and instructions in a spec: what is refused (with the spec position),
what the plan runs, what a run installs into its own HOME and records in arm.json, and that a
host-shared adapter (the operator's HOME) is refused for an arm that gives something."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from campaign_kit import attempts, run_campaign, write_spec

from ai_proving_ground.arms.given import Given, catalog_skills, install, tree_sha256
from ai_proving_ground.campaigns.spec import SPEC_INVALID, expand, load_spec, resolve
from ai_proving_ground.errors import ApgError
from ai_proving_ground.records import problems
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.run import RunOptions, run_task


def make_catalog(root: Path, *names: str) -> Path:
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d {name}\n---\n",
                                              encoding="utf-8")
    return root


def spec_file(tmp_path: Path, arms: dict[str, Any], agents: list[str] | None = None) -> Path:
    return write_spec(tmp_path / "spec.yml", {
        "name": "arms", "dataset": "build_tasks", "tasks": ["dv01_view_build"], "arms": arms,
        "agents": agents or ["nop"], "repeats": 2, "seed": 1})


def refusal(path: Path) -> str:
    with pytest.raises(ApgError) as caught:
        load_spec(path)
    assert (caught.value.token, caught.value.exit_code) == (SPEC_INVALID, 2)
    return caught.value.message


def test_an_arm_adapter_wins_over_a_single_agent(tmp_path: Path) -> None:
    campaign = resolve(load_spec(spec_file(tmp_path, {"a": {}, "b": {"adapter": "oracle"}})))
    assert [(a.arm, a.agent) for a in expand(campaign)] == [
        ("a", "nop"), ("a", "nop"), ("b", "oracle"), ("b", "oracle")]


def test_an_arm_adapter_with_several_agents_is_refused(tmp_path: Path) -> None:
    message = refusal(spec_file(tmp_path, {"a": {}, "b": {"adapter": "oracle"}},
                                agents=["nop", "manual"]))
    assert "$.arms.b.adapter" in message and "several agents" in message


def test_skills_minus_exclude_are_hashed_at_load(tmp_path: Path) -> None:
    skills = make_catalog(tmp_path / "skills", "one", "two")
    spec = load_spec(spec_file(tmp_path, {
        "none": {"skills": None}, "all": {"skills": {"catalog": "skills"}},
        "some": {"skills": {"catalog": "skills", "exclude": ["two"]},
                 "instructions": {"text": "be brief", "to": "prompt"}}}))
    assert spec.arm("none").given == Given()
    assert [(s.name, s.sha256) for s in spec.arm("all").given.skills] == [
        ("one", tree_sha256(skills / "one")), ("two", tree_sha256(skills / "two"))]
    some = spec.arm("some").given
    assert [s.name for s in some.skills] == ["one"] and some.excluded == ("two",)
    assert (some.instructions, some.instructions_to) == ("be brief", "prompt")


@pytest.mark.parametrize(("arm", "expected"), [
    ({"skills": {"catalog": "missing"}}, "is not a directory"),
    ({"skills": {"catalog": "skills", "exclude": ["nine"]}}, "has no skill nine to exclude"),
    ({"skills": {"catalog": "broken"}}, "empty/ has no SKILL.md"),
    ({"skills": {"catalog": "linked"}}, "one/notes.md is a symbolic link"),
    ({"skills": {"catalog": "borrowed"}}, "two is a symbolic link"),
    ({"instructions": {"text": "x", "to": "elsewhere"}}, "$.arms.b.instructions"),
])
def test_bad_skills_or_instructions_name_the_arm(tmp_path: Path, arm: dict[str, Any],
                                                 expected: str) -> None:
    make_catalog(tmp_path / "skills", "one")
    (tmp_path / "broken" / "empty").mkdir(parents=True)
    make_catalog(tmp_path / "linked", "one")
    (tmp_path / "linked" / "one" / "notes.md").symlink_to(tmp_path / "spec.yml")
    make_catalog(tmp_path / "borrowed", "one")
    (tmp_path / "borrowed" / "two").symlink_to(tmp_path / "skills" / "one")
    message = refusal(spec_file(tmp_path, {"a": {}, "b": arm}))
    assert expected in message and "$.arms.b" in message


def test_install_puts_skills_and_instructions_in_the_run_home_and_records_them(
        tmp_path: Path) -> None:
    skills = catalog_skills(make_catalog(tmp_path / "skills", "one", "two"), ("two",))
    home, run_dir = tmp_path / "home", tmp_path / "run"
    home.mkdir()
    run_dir.mkdir()
    env = install(Given(skills=skills, catalog=tmp_path / "skills", excluded=("two",),
                        instructions="be brief"), home, run_dir)
    assert env == {}
    for where in (".claude/skills/one/SKILL.md", ".codex/skills/one/SKILL.md"):
        assert (home / where).is_file()
    assert not list(home.rglob("two"))
    assert (home / ".claude" / "CLAUDE.md").read_text() == "be brief"
    assert (home / ".codex" / "AGENTS.md").read_text() == "be brief"
    record = json.loads((run_dir / "arm.json").read_text())
    assert problems(record, "arm") == []
    assert record["skills"] == [{"name": "one", "sha256": skills[0].sha256}]


def test_a_prompt_instruction_goes_to_the_run_directory_not_home(tmp_path: Path) -> None:
    home, run_dir = tmp_path / "home", tmp_path / "run"
    home.mkdir()
    run_dir.mkdir()
    env = install(Given(instructions="be brief", instructions_to="prompt"), home, run_dir)
    assert env == {"APG_INSTRUCTIONS_FILE": str(run_dir / "arm_prompt.txt")}
    assert (run_dir / "arm_prompt.txt").read_text() == "be brief"
    assert not list(home.iterdir())


def test_a_skill_changed_after_load_is_refused(tmp_path: Path) -> None:
    skills = catalog_skills(make_catalog(tmp_path / "skills", "one"), ())
    (tmp_path / "skills" / "one" / "SKILL.md").write_text("changed", encoding="utf-8")
    with pytest.raises(ApgError) as caught:
        install(Given(skills=skills, catalog=tmp_path / "skills"), tmp_path, tmp_path)
    assert caught.value.token == "APG_ARM_SKILL_CHANGED"


def test_a_campaign_records_each_arms_gift_in_its_attempts(apg: Any, tmp_path: Path,
                                                           template: Path) -> None:
    make_catalog(tmp_path / "skills", "one")
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "gifts", "dataset": "build_tasks", "tasks": ["dv01_view_build"], "agents": ["nop"],
        "arms": {"bare": {}, "given": {"skills": {"catalog": "skills"}, "instructions": "hi"}},
        "repeats": 1, "seed": 2, "jobs": 1, "bed": str(template)})
    out = tmp_path / "out"
    run_campaign(apg, spec, out)
    campaign = json.loads((out / "campaign.json").read_text())
    skill = tree_sha256(tmp_path / "skills" / "one")
    assert campaign["given"] == {"given": {
        "catalog": str(tmp_path / "skills"), "excluded": [],
        "skills": [{"name": "one", "sha256": skill}], "instructions_to": "file",
        "instructions_sha256": hashlib.sha256(b"hi").hexdigest()}}
    for record in attempts(out):
        [run] = [p.parent for p in out.glob("runs/*/attempt.json")
                 if json.loads(p.read_text())["order"] == record["order"]]
        given = run / "run" / "arm.json"
        home = run / "run" / "home"
        if record["arm"] == "bare":
            assert not given.exists() and not (home / ".claude").exists()
        else:
            assert json.loads(given.read_text()) == campaign["given"]["given"]
            assert (home / ".claude" / "skills" / "one" / "SKILL.md").is_file()


def test_an_arm_gift_refuses_an_adapter_in_the_operators_home(template: Path, tmp_path: Path,
                                                              copy_template: Any,
                                                              apg: Any) -> None:
    bed = copy_template(template, tmp_path / "bed")
    script = bed / ".ddev" / "agents" / "shared"
    script.write_text("#!/bin/sh\n## Description: x\n## Credentials: host-shared\ntrue\n",
                      encoding="utf-8")
    script.chmod(0o755)
    with pytest.raises(ApgError) as caught:  # apg run itself, whoever asks
        run_task(RunOptions(task_id="dv01_view_build", approot=bed, agent="shared",
                            dataset="build_tasks", arm=Given(instructions="hi"),
                            settings=Settings(allow_host_creds=True)))
    assert (caught.value.token, caught.value.exit_code) == ("APG_RUN_ARM_REFUSED", 2)
    spec = write_spec(tmp_path / "spec.yml", {  # a campaign, before any attempt
        "name": "shared", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "agents": ["shared"], "arms": {"bare": {}, "told": {"instructions": "hi"}},
        "repeats": 1, "seed": 2, "bed": str(bed)})
    result = apg("campaign", "run", str(spec), "--out", str(tmp_path / "out"),
                 "--beds", str(tmp_path / "beds"))
    assert result.rc == 2 and "$.arms.told" in result.err and "host-shared" in result.err
    assert SPEC_INVALID in result.err


def test_an_arm_adapter_runs_end_to_end_and_an_unknown_one_is_named(apg: Any, tmp_path: Path,
                                                                    template: Path) -> None:
    body = {"name": "adapters", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
            "agents": ["nop"], "arms": {"nop": {}, "oracle": {"adapter": "oracle"}},
            "repeats": 1, "seed": 2, "jobs": 1, "bed": str(template)}
    out = tmp_path / "out"
    run_campaign(apg, write_spec(tmp_path / "spec.yml", body), out)
    outcomes = {(r["arm"], r["agent"]): r["outcome"] for r in attempts(out)}
    assert outcomes == {("nop", "nop"): "fail", ("oracle", "oracle"): "pass"}
    report = apg("campaign", "report", str(out), "--json")
    assert report.rc == 0, report.err
    body["arms"]["oracle"]["adapter"] = "no-such-adapter"
    result = apg("campaign", "run", str(write_spec(tmp_path / "bad.yml", body)), "--out",
                 str(tmp_path / "out2"), "--beds", str(tmp_path / "beds2"))
    assert result.rc == 2 and "$.arms.oracle.adapter" in result.err, result.err
