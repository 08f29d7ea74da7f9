"""Datasets: the shipped one, schema errors as file:line:col: $.path: message, the canonical task
hash, and resolution (--dataset, then AI_PG_DATASET, then the shipped datasets/)."""

from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from ai_proving_ground.errors import ApgError
from ai_proving_ground.paths import project_dir
from ai_proving_ground.schemas import load_schema
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.checks import CHECK_TYPES
from ai_proving_ground.tasks.dataset import (
    load_dataset,
    resolve_dataset_path,
    resolve_task,
)

SHIPPED = project_dir("datasets") / "build_tasks.yml"



def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def invalid(path: Path) -> ApgError:
    with pytest.raises(ApgError) as caught:
        load_dataset(path)
    assert caught.value.token == "APG_DATASET_INVALID"
    return caught.value


def canonical_sha(task: Any) -> str:
    text = json.dumps(task, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------- the shipped dataset


def test_shipped_dataset() -> None:
    dataset = load_dataset(SHIPPED)
    assert (dataset.name, dataset.version) == ("build_tasks", 1)
    assert dataset.sha256 == hashlib.sha256(SHIPPED.read_bytes()).hexdigest()
    ids = [t.id for t in dataset.tasks]
    assert {"dv01_view_build", "cv01_footer_heading", "cv02_front_page_card"} <= set(ids)
    raw = yaml.safe_load(SHIPPED.read_bytes())
    for task, entry in zip(dataset.tasks, raw["tasks"], strict=True):
        assert task.checks, task.id
        assert task.reference_steps, task.id
        # What the first tasks use: dv01 lists kb_docs articles only, cv01/cv02 need canvas_home;
        # every other task names fixtures the project ships.
        first = {"dv01_view_build": ["kb_docs"], "cv01_footer_heading": ["kb_docs", "canvas_home"],
                 "cv02_front_page_card": ["kb_docs", "canvas_home"]}
        assert task.fixtures == first.get(task.id, task.fixtures)
        assert all((project_dir("fixtures") / f"fixture_{name}" / "recipe.yml").is_file()
                   for name in task.fixtures), task.id
        assert task.sha256 == canonical_sha(entry)
    view = dataset.task("dv01_view_build")
    assert [c["type"] for c in view.checks].count("view_rows") == 1


def test_task_hash_is_canonical_json(tmp_path: Path) -> None:
    body = """
    dataset: canon
    version: 1
    tasks:
    - id: t1
      prompt: "Café / naïve: build it"
      fixtures: [kb_docs]
      checks:
      - {type: config_equals, name: a.b, path: x, value: 1.0}
      - {type: config_equals, value: {z: 1, a: [3, 2]}, name: a.c}
    """
    reordered = """
    version: 1
    dataset: canon
    # comments and key order do not change the task hash; they change the file hash
    tasks:
    - fixtures: [kb_docs]
      checks:
      - {value: 1.0, path: x, name: a.b, type: config_equals}
      - {name: a.c, type: config_equals, value: {a: [3, 2], z: 1}}
      prompt: "Café / naïve: build it"
      id: t1
    """
    first = load_dataset(write(tmp_path / "a.yml", body))
    second = load_dataset(write(tmp_path / "b.yml", reordered))
    assert first.tasks[0].sha256 == second.tasks[0].sha256
    assert first.sha256 != second.sha256
    expected_text = ('{"checks":[{"name":"a.b","path":"x","type":"config_equals","value":1.0},'
                     '{"name":"a.c","type":"config_equals","value":{"a":[3,2],"z":1}}],'
                     '"fixtures":["kb_docs"],"id":"t1","prompt":"Café / naïve: build it"}')
    assert first.tasks[0].sha256 == hashlib.sha256(expected_text.encode("utf-8")).hexdigest()
    # List order is kept: swapping the two checks is a different task.
    first_check = "  - {type: config_equals, name: a.b, path: x, value: 1.0}\n"
    second_check = "  - {type: config_equals, value: {z: 1, a: [3, 2]}, name: a.c}\n"
    swapped = textwrap.dedent(body).replace(first_check + second_check, second_check + first_check)
    assert swapped != textwrap.dedent(body)
    third = load_dataset(write(tmp_path / "c.yml", swapped))
    assert third.tasks[0].sha256 != first.tasks[0].sha256


# ---------------------------------------------------------------------------- schema errors


def test_unknown_check_type(tmp_path: Path) -> None:
    path = write(tmp_path / "ds.yml", """
    dataset: bad
    version: 1
    tasks:
    - id: t1
      prompt: p
      fixtures: [kb_docs]
      checks:
      - type: config_looks_nice
        name: x
    """)
    message = invalid(path).message
    assert message.startswith(f"{path}:8:11: $.tasks[0].checks[0].type: 'config_looks_nice' is "
                              "not one of ['config_exists', ")
    assert len(message.splitlines()) == 1


def test_missing_prompt_and_several_errors_at_once(tmp_path: Path) -> None:
    path = write(tmp_path / "ds.yml", """
    dataset: bad
    version: 1
    tasks:
    - id: t1
      prompt: p
      fixtures: [kb_docs]
    - id: t2
      fixtures: [kb_docs]
      checks:
      - type: entity_count
        entity_type: node
    """)
    assert invalid(path).message.splitlines() == [
        f"{path}:7:3: $.tasks[1]: 'prompt' is a required property",
        f"{path}:10:5: $.tasks[1].checks[0]: {{'type': 'entity_count', 'entity_type': 'node'}} is "
        "not valid under any of the given schemas",
    ]


def test_duplicate_task_id(tmp_path: Path) -> None:
    path = write(tmp_path / "ds.yml", """
    dataset: dup
    version: 1
    tasks:
    - id: t1
      prompt: p
      fixtures: [kb_docs]
    - id: t1
      prompt: again
      fixtures: []
    """)
    assert invalid(path).message == f"{path}:7:7: $.tasks[1].id: task id 't1' repeats tasks[0]"


def test_misspelt_check_key_is_refused(tmp_path: Path) -> None:
    # A typo must not quietly loosen a check: 'input' would otherwise drop the inputs match.
    path = write(tmp_path / "ds.yml", """
    dataset: typo
    version: 1
    tasks:
    - id: t1
      prompt: p
      fixtures: [canvas_home]
      checks:
      - id: heading
        type: canvas_component
        region: canvas.page_region.olivero.footer
        component_id: sdc.apg.heading
        input: {text: Help}
    """)
    assert invalid(path).message == (f"{path}:8:5: $.tasks[0].checks[0]: Additional properties "
                                      "are not allowed ('input' was unexpected)")


def test_value_without_json_form_is_refused(tmp_path: Path) -> None:
    # YAML reads an unquoted date as a date, which has no canonical JSON (and no task hash).
    path = write(tmp_path / "ds.yml", """
    dataset: dated
    version: 1
    tasks:
    - id: t1
      prompt: p
      fixtures: [kb_docs]
      checks:
      - type: config_equals
        name: system.site
        path: created
        value: 2026-01-01
    """)
    message = invalid(path).message
    assert message.startswith(f"{path}:11:12: $.tasks[0].checks[0].value: datetime.date(2026, 1, 1) "
                              "is not a JSON value")
    quoted = path.read_text(encoding="utf-8").replace("2026-01-01", "'2026-01-01'")
    assert load_dataset(write(tmp_path / "quoted.yml", quoted)).tasks[0].checks[0]["value"] == \
        "2026-01-01"


def test_schema_lists_exactly_the_registered_check_types() -> None:
    enum = load_schema("dataset")["$defs"]["check"]["properties"]["type"]["enum"]
    assert sorted(enum) == sorted(CHECK_TYPES)


def test_yaml_syntax_error(tmp_path: Path) -> None:
    path = write(tmp_path / "ds.yml", "dataset: x\ntasks: [\n")
    assert invalid(path).message.startswith(f"{path}:3:1: $: invalid YAML")


# ---------------------------------------------------------------------------- resolution


def small_dataset(path: Path, name: str) -> Path:
    return write(path, f"""
    dataset: {name}
    version: 1
    tasks:
    - id: t1
      prompt: p
      fixtures: [kb_docs]
    """)


def test_resolution_order(tmp_path: Path) -> None:
    approot = tmp_path / "bed"
    option = small_dataset(tmp_path / "option.yml", "from_option")
    env = small_dataset(tmp_path / "env.yml", "from_env")
    assert resolve_dataset_path(None, approot, Settings.from_environ({})) == SHIPPED.resolve()
    settings = Settings.from_environ({"AI_PG_DATASET": str(env)})
    assert resolve_dataset_path(None, approot, settings) == env.resolve()
    assert resolve_dataset_path(str(option), approot, settings) == option.resolve()
    dataset, task = resolve_task("t1", None, approot, settings)
    assert (dataset.name, task.id) == ("from_env", "t1")
    dataset, _ = resolve_task("t1", str(option), approot, settings)
    assert dataset.name == "from_option"
    # A name is looked up in the shipped datasets/.
    by_name = Settings.from_environ({"AI_PG_DATASET": "build_tasks"})
    assert resolve_dataset_path(None, approot, by_name) == SHIPPED.resolve()


def test_relative_paths_resolve_against_the_approot_then_the_cwd(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    approot = tmp_path / "bed"
    in_bed = small_dataset(approot / "datasets" / "mine.yml", "in_bed")
    elsewhere = tmp_path / "cwd"
    in_cwd = small_dataset(elsewhere / "datasets" / "mine.yml", "in_cwd")
    only_cwd = small_dataset(elsewhere / "other.yml", "only_cwd")
    monkeypatch.chdir(elsewhere)
    assert resolve_dataset_path("datasets/mine.yml", approot) == in_bed.resolve()
    assert resolve_dataset_path("other.yml", approot) == only_cwd.resolve()
    in_bed.unlink()
    assert resolve_dataset_path("datasets/mine.yml", approot) == in_cwd.resolve()


@pytest.mark.parametrize("reference", ["no_such_dataset", "missing/ds.yml"])
def test_unknown_dataset(tmp_path: Path, reference: str) -> None:
    with pytest.raises(ApgError) as caught:
        resolve_dataset_path(reference, tmp_path)
    assert (caught.value.token, caught.value.exit_code) == ("APG_DATASET_NOT_FOUND", 2)
    assert repr(reference) in caught.value.message


def test_unknown_task(tmp_path: Path) -> None:
    with pytest.raises(ApgError) as caught:
        resolve_task("no_such_task", None, tmp_path)
    assert (caught.value.token, caught.value.exit_code) == ("APG_TASK_UNKNOWN", 2)
    assert "its tasks: dv01_view_build, " in caught.value.message


def test_display_path(tmp_path: Path) -> None:
    approot = tmp_path / "bed"
    inside = load_dataset(small_dataset(approot / "datasets" / "mine.yml", "mine"))
    assert inside.display_path(approot) == "datasets/mine.yml"
    outside = load_dataset(small_dataset(tmp_path / "outside.yml", "outside"))
    assert outside.display_path(approot) == str((tmp_path / "outside.yml").resolve())


def test_hash_and_tasks_come_from_the_same_bytes(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from ai_proving_ground.tasks import dataset as dataset_module

    path = small_dataset(tmp_path / "ds.yml", "first")
    real = dataset_module.load_document

    def racing(target: Path, token: str) -> Any:
        doc = real(target, token)
        small_dataset(target, "second")  # rewritten between parse and hash
        return doc

    with monkeypatch.context() as patch:
        patch.setattr(dataset_module, "load_document", racing)
        error = invalid(path)
    assert error.message == f"{path}: changed while it was being read; try again"
    assert load_dataset(path).name == "second"
    assert load_dataset(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
