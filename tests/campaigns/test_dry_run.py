"""``apg campaign run --dry-run``: what each attempt would get, and the real run's own refusals.

Every refusal is asked of the dry run and of the real run with the same spec: both must exit
with the same code and say the same line, and neither may write anything.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from campaign_kit import write_spec

from ai_proving_ground.arms.given import tree_sha256
from ai_proving_ground.campaigns.spec import load_spec, plan, resolve
from ai_proving_ground.paths import PROJECT_ROOT

SHIPPED_AGENTS = PROJECT_ROOT / "ddev" / "agents"
SECRET = "sk-ant-dry-run-never-printed"


def catalog(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    for name in ("views-helper", "other"):
        (skills / name).mkdir(parents=True)
        (skills / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: helps\n---\n",
                                                encoding="utf-8")
    return skills


def body(**arms: Any) -> dict[str, Any]:
    return {"name": "dry", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
            "arms": arms or {"a": {}, "b": {}}, "agents": ["nop"], "repeats": 2, "seed": 4}


def given_spec(tmp_path: Path) -> Path:
    catalog(tmp_path)
    return write_spec(tmp_path / "spec.yml", {**body(
        plain={},
        given={"agent_env": {"APG_ARM_FLAVOUR": "b"}, "setup": [["pm:list"]],
               "skills": {"catalog": "skills", "exclude": ["other"]},
               "instructions": "Prefer the Views UI defaults."}),
        "agents": ["claude-code"], "agent_timeout_s": 90})


def test_each_attempt_shows_its_command_environment_setup_and_what_it_is_given(
        apg: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)  # the adapter declares it: from the host
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    spec = given_spec(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    result = apg("campaign", "run", str(spec), "--dry-run", "--json")
    assert (result.rc, result.err) == (0, "")
    assert sorted(tmp_path.rglob("*")) == before  # nothing written, not even the data directory
    assert SECRET not in result.out
    entries = [json.loads(line) for line in result.out.splitlines()]
    planned = [a.as_plan() for a in plan(resolve(load_spec(spec)))]
    assert [{k: e[k] for k in planned[0]} for e in entries] == planned
    given = next(e for e in entries if e["arm"] == "given")
    plain = next(e for e in entries if e["arm"] == "plain")
    for entry in (given, plain):
        assert entry["command"] == [str(SHIPPED_AGENTS / "claude-code")]
        assert (entry["cwd"], entry["sandbox"], entry["timeout_s"], entry["refused"]) == \
            ("<bed>", "bwrap", 90, None)
        assert entry["adapter"] == {"name": "claude-code", "credentials": "bed-scoped"}
        env = entry["env"]
        assert env["ANTHROPIC_API_KEY"] == "(from the host)"
        assert {k: env[k] for k in ("HOME", "TMPDIR", "APG_APPROOT", "APG_TASK_ID",
                                    "APG_ADAPTER", "APG_RUN_ID", "APG_PROMPT_FILE")} == {
            "HOME": "<run>/home", "TMPDIR": "<run>/tmp", "APG_APPROOT": "<bed>",
            "APG_TASK_ID": "dv01_view_build", "APG_ADAPTER": "claude-code",
            "APG_RUN_ID": "<run id>", "APG_PROMPT_FILE": "<run>/prompt.txt"}
    assert given["env"]["APG_ARM_FLAVOUR"] == "b" and "APG_ARM_FLAVOUR" not in plain["env"]
    assert given["setup"] == [["apg", "site", "pm:list"]] and plain["setup"] == []
    text = "Prefer the Views UI defaults."
    assert given["given"] == {
        "catalog": str(tmp_path / "skills"), "excluded": ["other"],
        "skills": [{"name": "views-helper", "sha256": tree_sha256(tmp_path / "skills" / "views-helper")}],
        "instructions_to": "file",
        "instructions_sha256": hashlib.sha256(text.encode()).hexdigest()}
    # Installed by the real install code into a scratch HOME, where each CLI reads them.
    assert given["installs"] == ["<run>/home/.claude/CLAUDE.md",
                                 "<run>/home/.claude/skills/views-helper/SKILL.md",
                                 "<run>/home/.codex/AGENTS.md",
                                 "<run>/home/.codex/skills/views-helper/SKILL.md"]
    assert (plain["given"], plain["installs"]) == (None, [])


def test_the_text_form_shows_each_cell_once(apg: Any, tmp_path: Path) -> None:
    spec = given_spec(tmp_path)
    result = apg("campaign", "run", str(spec), "--dry-run")
    assert result.rc == 0, result.err
    lines = result.out.splitlines()
    heads = [line for line in lines if line.startswith("#")]
    assert len(heads) == 4 and sum(line.endswith(("as #0000", "as #0001")) for line in heads) == 2
    assert "  setup: apg site pm:list" in lines
    assert f"  command: {SHIPPED_AGENTS / 'claude-code'} (in <bed>, sandbox bwrap, timeout 90.0)" in lines
    assert "  env: HOME=<run>/home" in lines and "  env: APG_ARM_FLAVOUR=b" in lines
    assert "  installs: <run>/home/.claude/skills/views-helper/SKILL.md" in lines
    assert any(line.startswith("  skill: views-helper sha256 ") for line in lines)


def refusals(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Specs the real run refuses before writing anything, and what it says after the place."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "tasks.yml").write_text(json.dumps({"dataset": "unit", "version": 1, "tasks": [{
        "id": "hv01", "prompt": "Do it.", "fixtures": ["kb_docs"],
        "checks": [{"type": "module_enabled", "module": "node"}],
        "hidden_verifier": {"patch": "../outside.patch", "commands": [["true"]]}}]}))
    specs = {
        "unknown adapter": ({**body(), "agents": ["no-such-agent"]},
                            "$.agents[0]: APG_RUN_AGENT_UNKNOWN no adapter 'no-such-agent'"),
        "undeclared arm variable": (body(a={}, b={"agent_env": {"SECRET_THING": "1"}}),
                                    "$.arms.b.agent_env: APG_RUN_ENV_REFUSED adapter 'nop' does "
                                    "not declare SECRET_THING"),
        "missing skill catalog": (body(a={}, b={"skills": {"catalog": "nowhere"}}),
                                  "$.arms.b.skills: "),
        "malformed hidden verifier": ({**body(), "dataset": "data/tasks.yml", "tasks": ["hv01"]},
                                      "$.dataset: APG_DATASET_INVALID"),
        "bad task id": ({**body(), "tasks": ["dv01_view_build", "zz99_missing"]},
                        "$.tasks[1]: dataset build_tasks"),
        "unknown executor": ({**body(), "executor": "moon"}, "$.executor: no executor called 'moon'"),
    }
    out: dict[str, tuple[Path, str]] = {}
    for number, (name, (spec_body, said)) in enumerate(specs.items()):
        out[name] = (write_spec(tmp_path / f"spec-{number}.yml", spec_body), said)
    return out


@pytest.mark.parametrize("case", ["unknown adapter", "undeclared arm variable",
                                  "missing skill catalog", "malformed hidden verifier",
                                  "bad task id", "unknown executor"])
def test_the_dry_run_refuses_what_the_real_run_refuses_with_the_same_words(
        apg: Any, tmp_path: Path, case: str) -> None:
    spec, said = refusals(tmp_path)[case]
    where = ["--out", str(tmp_path / "out"), "--beds", str(tmp_path / "beds")]
    dry = apg("campaign", "run", str(spec), *where, "--dry-run")
    real = apg("campaign", "run", str(spec), *where)
    assert (dry.rc, dry.out) == (2, "")
    assert dry.err.startswith(f"APG_CAMPAIGN_SPEC_INVALID {spec}:"), dry.err
    assert said in dry.err.splitlines()[0], dry.err
    assert (real.rc, real.err) == (dry.rc, dry.err)
    assert not (tmp_path / "out").exists() and not (tmp_path / "beds").exists()


def test_the_dry_run_refuses_an_output_directory_the_run_would_refuse(
        apg: Any, tmp_path: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", body())
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old.txt").write_text("x", encoding="utf-8")
    dry = apg("campaign", "run", str(spec), "--out", str(tmp_path / "out"), "--dry-run")
    assert dry.rc == 1
    assert dry.err.startswith(f"APG_CAMPAIGN_CANNOT_RUN {tmp_path / 'out'} exists and is not empty")


def test_json_without_a_dry_run_is_usage(apg: Any, tmp_path: Path) -> None:
    result = apg("campaign", "run", str(write_spec(tmp_path / "spec.yml", body())), "--json")
    assert result.rc == 2 and "APG_USAGE apg campaign: --json goes with --dry-run" in result.err


def test_on_a_bed_the_spec_names_the_whole_confined_command_is_shown(
        apg: Any, tmp_path: Path, template: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", {**body(), "agents": ["exit3"], "bed": str(template)})
    result = apg("campaign", "run", str(spec), "--dry-run", "--json")
    assert result.rc == 0, result.err
    entry = json.loads(result.out.splitlines()[0])
    assert entry["command"] == ["<bed>/.ddev/agents/exit3"]  # the bed's own adapter
    confined = entry["confined"]
    # bubblewrap's line as apg run builds it: the bed writable, the run's HOME its own.
    assert Path(confined[0]).name == "bwrap" and confined[-1] == "<bed>/.ddev/agents/exit3"
    binds = {tuple(confined[i:i + 3]) for i, arg in enumerate(confined) if arg == "--bind"}
    assert {("--bind", "<bed>", "<bed>"), ("--bind", "<run>/home", "<run>/home")} <= binds
    assert str(template) not in result.out  # every path of the bed is a placeholder
