"""Campaign specs: schema errors with file:line:col, semantic checks, the seeded plan, --dry-run."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.campaigns.spec import (
    SPEC_INVALID,
    Campaign,
    expand,
    load_spec,
    plan,
    resolve,
    shuffled,
)
from ai_proving_ground.errors import ApgError
from ai_proving_ground.paths import PROJECT_ROOT

EXAMPLE = PROJECT_ROOT / "campaigns" / "example.yml"

BASE = """\
name: unit
dataset: build_tasks
tasks: [dv01_view_build, cv01_footer_heading]
arms:
  without: {}
  with:
    agent_env: {APG_ARM_SKILL: views}
    setup:
      - [pm:list]
agents: [nop]
repeats: 2
seed: 7
"""



def write(tmp_path: Path, text: str, name: str = "spec.yml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def spec_error(path: Path) -> ApgError:
    with pytest.raises(ApgError) as caught:
        resolve(load_spec(path))
    assert caught.value.token == SPEC_INVALID
    assert caught.value.exit_code == 2
    return caught.value


def campaign(tmp_path: Path, text: str = BASE) -> Campaign:
    return resolve(load_spec(write(tmp_path, text)))


# ---------------------------------------------------------------------------- loading


def test_a_valid_spec_gets_its_defaults(tmp_path: Path) -> None:
    resolved = campaign(tmp_path)
    spec = resolved.spec
    assert [a.name for a in spec.arms] == ["without", "with"]
    assert spec.compare == ("without", "with")  # the first two arms
    assert spec.models == (None,)
    assert spec.jobs == 1
    assert spec.bed is None
    assert spec.arm("with").agent_env == {"APG_ARM_SKILL": "views"}
    assert spec.arm("with").setup == (("pm:list",),)
    assert [t.id for t in resolved.tasks] == ["dv01_view_build", "cv01_footer_heading"]
    assert resolved.fixtures == ("kb_docs", "canvas_home")  # the tasks' own, first seen first
    assert resolved.verifiers == {}


def test_star_means_every_task_in_dataset_order(tmp_path: Path) -> None:
    resolved = campaign(tmp_path, BASE.replace("[dv01_view_build, cv01_footer_heading]", '"*"'))
    assert [t.id for t in resolved.tasks] == [t.id for t in resolved.dataset.tasks]


def test_the_shipped_example_is_valid() -> None:
    resolved = resolve(load_spec(EXAMPLE))
    assert resolved.spec.compare == ("nop", "oracle")
    assert len(plan(resolved)) == 4


@pytest.mark.parametrize(("change", "where"), [
    (("repeats: 2", "repeats: 0"), ":11:10: $.repeats: 0 is less than the minimum of 1"),
    (("seed: 7", "seed: 7\ncolour: blue"), ":1:1: $: Additional properties are not allowed"),
    (("without: {}", "without: {agent_env: {BAD-NAME: x}}"), ":5:24: $.arms.without.agent_env"),
    (("[pm:list]", "[--approot=/elsewhere, pm:list]"), ":9:10: $.arms.with.setup[0][0]"),
    (("agents: [nop]", "agents: []"), ":10:9: $.agents: [] should be non-empty"),
])
def test_schema_errors_name_file_line_and_column(tmp_path: Path, change: tuple[str, str],
                                                  where: str) -> None:
    path = write(tmp_path, BASE.replace(*change))
    error = spec_error(path)
    assert f"{path}{where}" in error.message


def test_compare_must_name_arms(tmp_path: Path) -> None:
    path = write(tmp_path, BASE + "compare: [without, sideways]\n")
    assert spec_error(path).message == (
        f"{path}:13:20: $.compare[1]: 'sideways' is not an arm; arms: without, with")


def test_unknown_tasks_are_named_where_they_are_listed(tmp_path: Path) -> None:
    path = write(tmp_path, BASE.replace("cv01_footer_heading", "zz99_missing"))
    message = spec_error(path).message
    assert message.startswith(f"{path}:3:26: $.tasks[1]: dataset build_tasks (")
    assert "has no task 'zz99_missing'" in message


def test_an_unknown_dataset_is_a_spec_error(tmp_path: Path) -> None:
    path = write(tmp_path, BASE.replace("build_tasks", "no_such_dataset"))
    assert spec_error(path).message.startswith(f"{path}:2:10: $.dataset: APG_DATASET_NOT_FOUND")


def test_invalid_yaml_has_a_position(tmp_path: Path) -> None:
    path = write(tmp_path, "name: [unclosed\n")
    with pytest.raises(ApgError) as caught:
        load_spec(path)
    assert caught.value.message.startswith(f"{path}:2:1: $: invalid YAML")


def test_a_dataset_path_is_relative_to_the_spec(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_dataset(data / "tasks.yml", {"patch": "hv.patch", "commands": [["true"]]})
    (data / "hv.patch").write_text("", encoding="utf-8")
    resolved = campaign(tmp_path, BASE.replace("build_tasks", "data/tasks.yml")
                        .replace("[dv01_view_build, cv01_footer_heading]", "[hv01]"))
    verifier = resolved.verifiers["hv01"]
    assert verifier.patch == (data / "hv.patch").resolve()
    assert verifier.commands == (("true",),)
    assert verifier.timeout_s == 60.0


@pytest.mark.parametrize(("patch", "expected"), [
    ("../outside.patch", "has a '..' part"),
    ("/etc/outside.patch", "must be a relative path"),
    ("missing.patch", "is not a file"),
])
def test_hidden_patches_must_exist_inside_the_dataset_folder(tmp_path: Path, patch: str,
                                                             expected: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (tmp_path / "outside.patch").write_text("", encoding="utf-8")
    write_dataset(data / "tasks.yml", {"patch": patch, "commands": [["true"]]})
    path = write(tmp_path, BASE.replace("build_tasks", "data/tasks.yml")
                 .replace("[dv01_view_build, cv01_footer_heading]", "[hv01]"))
    message = spec_error(path).message
    # Refused as the dataset loads, at the patch's own position in the dataset file.
    assert message.startswith(f"{path}:2:10: $.dataset: APG_DATASET_INVALID {data / 'tasks.yml'}:1:")
    assert "$.tasks[0].hidden_verifier.patch: " in message and expected in message


def test_tasks_without_checks_cannot_be_campaigned(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_dataset(data / "tasks.yml", None, checks=False)
    path = write(tmp_path, BASE.replace("build_tasks", "data/tasks.yml")
                 .replace("[dv01_view_build, cv01_footer_heading]", "[hv01]"))
    assert "task hv01 has no checks" in spec_error(path).message


def write_dataset(path: Path, verifier: dict[str, Any] | None, checks: bool = True) -> None:
    task: dict[str, Any] = {"id": "hv01", "prompt": "Do it.", "fixtures": ["kb_docs"]}
    if checks:
        task["checks"] = [{"type": "module_enabled", "module": "node"}]
    if verifier is not None:
        task["hidden_verifier"] = verifier
    path.write_text(json.dumps({"dataset": "unit", "version": 1, "tasks": [task]}), encoding="utf-8")


# ---------------------------------------------------------------------------- the plan


def test_the_matrix_nests_task_arm_agent_model_repeat(tmp_path: Path) -> None:
    resolved = campaign(tmp_path, BASE.replace("agents: [nop]", "agents: [nop, oracle]"))
    cells = [(a.index, a.task_id, a.arm, a.agent, a.repeat) for a in expand(resolved)]
    assert cells[:5] == [(0, "dv01_view_build", "without", "nop", 0),
                         (1, "dv01_view_build", "without", "nop", 1),
                         (2, "dv01_view_build", "without", "oracle", 0),
                         (3, "dv01_view_build", "without", "oracle", 1),
                         (4, "dv01_view_build", "with", "nop", 0)]
    assert len(cells) == 2 * 2 * 2 * 2


def test_the_seeded_order_is_deterministic_and_depends_on_the_seed(tmp_path: Path) -> None:
    resolved = campaign(tmp_path, BASE.replace("agents: [nop]", "agents: [nop, oracle]"))
    first, again = plan(resolved), plan(resolved)
    assert first == again
    assert [a.order for a in first] == list(range(16))
    assert sorted(a.index for a in first) == list(range(16))
    other = shuffled(expand(resolved), seed=8)
    assert [a.index for a in other] != [a.index for a in first]
    # The index names the same cell and repeat whatever the seed.
    by_index = {a.index: (a.task_id, a.arm, a.agent, a.repeat) for a in first}
    assert all(by_index[a.index] == (a.task_id, a.arm, a.agent, a.repeat) for a in other)


def test_dry_run_prints_the_ordered_plan(tmp_path: Path, apg: Any) -> None:
    path = write(tmp_path, BASE)
    result = apg("campaign", "run", str(path), "--dry-run", "--json")
    assert (result.rc, result.err) == (0, "")
    lines = [json.loads(line) for line in result.out.splitlines()]
    assert [line["order"] for line in lines] == list(range(8))
    planned = [a.as_plan() for a in plan(resolve(load_spec(path)))]
    assert [{k: line[k] for k in planned[0]} for line in lines] == planned
    # What each would get beside it (tests/campaigns/test_dry_run.py).
    assert set(lines[0]) == {"index", "order", "task_id", "arm", "agent", "model", "repeat",
                             "setup", "given", "timeout_s", "cwd", "command", "adapter",
                             "sandbox", "confined", "env", "installs", "refused"}
    assert list(tmp_path.iterdir()) == [path]  # nothing written


def test_a_bad_spec_exits_2_on_the_command_line(tmp_path: Path, apg: Any) -> None:
    path = write(tmp_path, BASE.replace("seed: 7", "seed: seven"))
    result = apg("campaign", "run", str(path), "--dry-run")
    assert result.rc == 2
    assert result.err.startswith(f"{SPEC_INVALID} {path}:12:7: $.seed: 'seven' is not of type")
