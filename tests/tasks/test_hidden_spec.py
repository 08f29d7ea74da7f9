"""A hidden verifier is checked as the dataset loads, strictly as its design says: the patch
required, relative, inside the dataset's folder, a .patch or .diff file that exists; commands a
non-empty list of command strings or argument lists. So ``apg run`` refuses a malformed one
before any adapter starts, at the position of the offending key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.baselines.store import runs_dir
from ai_proving_ground.errors import ApgError
from ai_proving_ground.tasks.dataset import load_dataset
from ai_proving_ground.tasks.hidden_spec import command_argv

TASK = {"id": "hv01", "prompt": "Do it.", "fixtures": [],
        "checks": [{"type": "module_enabled", "module": "node"}]}


def dataset(folder: Path, verifier: Any) -> Path:
    """A dataset in ``folder`` whose one task has ``verifier``, written as YAML lines so errors
    have real positions; ``hv.patch`` and ``hv.txt`` exist beside it, ``outside.patch`` above."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("hv.patch", "hv.txt", "hv.diff"):
        (folder / name).write_text("", encoding="utf-8")
    (folder.parent / "outside.patch").write_text("", encoding="utf-8")
    task = {**TASK, "hidden_verifier": verifier}
    lines = ["dataset: unit", "version: 1", "tasks:", f"- {json.dumps(task)}"]
    path = folder / "tasks.yml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def refusal(path: Path) -> str:
    with pytest.raises(ApgError) as caught:
        load_dataset(path)
    assert caught.value.token == "APG_DATASET_INVALID"
    assert caught.value.exit_code == 2
    return caught.value.message


@pytest.mark.parametrize(("verifier", "where", "why"), [
    ({"commands": ["true"]}, "$.tasks[0].hidden_verifier", "'patch' is a required property"),
    ({"patch": "hv.patch"}, "$.tasks[0].hidden_verifier", "'commands' is a required property"),
    ({"patch": "hv.patch", "commands": []}, "$.tasks[0].hidden_verifier.commands",
     "should be non-empty"),
    ({"patch": "hv.patch", "commands": [[]]}, "$.tasks[0].hidden_verifier.commands[0]", "valid"),
    ({"patch": "hv.patch", "commands": [""]}, "$.tasks[0].hidden_verifier.commands[0]", "valid"),
    ({"patch": "hv.patch", "commands": ["   "]}, "$.tasks[0].hidden_verifier.commands[0]",
     "the command is empty"),
    ({"patch": "hv.patch", "commands": ["echo 'open"]}, "$.tasks[0].hidden_verifier.commands[0]",
     "cannot be split into words"),
    ({"patch": "hv.txt", "commands": ["true"]}, "$.tasks[0].hidden_verifier.patch",
     "does not match"),
    ({"patch": "/etc/hv.patch", "commands": ["true"]}, "$.tasks[0].hidden_verifier.patch",
     "must be a relative path"),
    ({"patch": "../outside.patch", "commands": ["true"]}, "$.tasks[0].hidden_verifier.patch",
     "has a '..' part"),
    ({"patch": "sub/../hv.patch", "commands": ["true"]}, "$.tasks[0].hidden_verifier.patch",
     "has a '..' part"),
    ({"patch": "missing.patch", "commands": ["true"]}, "$.tasks[0].hidden_verifier.patch",
     "is not a file"),
    ({"patch": "hv.patch", "commands": ["true"], "test": "x"}, "$.tasks[0].hidden_verifier",
     "Additional properties"),
])
def test_a_malformed_verifier_is_refused_where_it_is_written(tmp_path: Path, verifier: Any,
                                                             where: str, why: str) -> None:
    path = dataset(tmp_path / "data", verifier)
    message = refusal(path)
    assert message.startswith(f"{path}:4:"), message  # the task's line, with its column
    assert f": {where}: " in message and why in message, message


def test_a_patch_linked_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    path = dataset(tmp_path / "data", {"patch": "linked.patch", "commands": ["true"]})
    (tmp_path / "data" / "linked.patch").symlink_to(tmp_path / "outside.patch")
    assert "leads out of the dataset's folder" in refusal(path)


@pytest.mark.parametrize("patch", ["hv.patch", "hv.diff", "./hv.patch"])
def test_a_well_formed_verifier_loads(tmp_path: Path, patch: str) -> None:
    path = dataset(tmp_path / "data", {"patch": patch, "commands": ["make check", ["true"]]})
    assert load_dataset(path).task("hv01").hidden_verifier == {
        "patch": patch, "commands": ["make check", ["true"]]}


def test_command_strings_split_as_shell_words_without_a_shell() -> None:
    assert command_argv("pytest -q 'tests/a b.py'") == ("pytest", "-q", "tests/a b.py")
    # No shell: a pipe and a variable are words like any other.
    assert command_argv("echo $HOME | cat") == ("echo", "$HOME", "|", "cat")
    assert command_argv(["make", "check all"]) == ("make", "check all")


def test_apg_run_refuses_before_any_adapter_starts(apg: Any, fixtures_bed: Path,
                                                   tmp_path: Path) -> None:
    path = dataset(tmp_path / "data", {"patch": "../outside.patch", "commands": ["true"]})
    result = apg("run", "hv01", "--approot", str(fixtures_bed), "--agent", "nop",
                 "--dataset", str(path))
    assert result.rc == 2
    assert result.err.startswith(f"APG_DATASET_INVALID {path}:4:"), result.err
    assert not runs_dir(fixtures_bed).exists() or not any(runs_dir(fixtures_bed).iterdir())
    graded = apg("grade", "hv01", "--approot", str(fixtures_bed), "--dataset", str(path))
    assert graded.rc == 2 and "APG_DATASET_INVALID" in graded.err


def test_inspect_refuses_it_before_any_sample_exists(tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    from ai_proving_ground.integrations.inspect_ai import apg_dataset
    from ai_proving_ground.settings import Settings

    path = dataset(tmp_path / "data", {"patch": "hv.txt", "commands": ["true"]})
    with pytest.raises(ApgError) as caught:
        apg_dataset(str(path), settings=Settings())
    assert caught.value.token == "APG_DATASET_INVALID"
    assert "$.tasks[0].hidden_verifier.patch: " in caught.value.message
