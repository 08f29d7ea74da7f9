"""request.json and reference_solution.json through their one definition
(``tasks/request.py``): the adapter-facing files keep their exact bytes, and a file that breaks
its schema is refused on write and on read, naming the file and the JSON path."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

from ai_proving_ground.schemas import load_schema
from ai_proving_ground.tasks.dataset import load_dataset
from ai_proving_ground.tasks.request import (
    ReferenceSolution,
    RunRequest,
    read_reference,
    read_request,
    write_request,
)
from ai_proving_ground.tasks.site_access import site_command
from ai_proving_ground.yamldump import dumps
from support.record_kit import canonical, refused_on_read, refused_on_write

RUN_ID = "apg-run-20260718T101500Z-a1b2c3"
STEPS = [["status"], ["config:get", "system.site"]]


def _written(tmp_path: Path, oracle: bool) -> tuple[Path, Path, dict[str, object]]:
    path = tmp_path / "datasets" / "tasks.yml"
    path.parent.mkdir()
    path.write_text(dumps({"dataset": "tasks", "version": 3, "tasks": [
        {"id": "t_echo", "prompt": "p", "fixtures": [],
         "checks": [{"id": "secret-check", "type": "config_exists", "name": "system.site"}],
         "reference_solution": {"steps": STEPS}}]}), encoding="utf-8")
    dataset = load_dataset(path)
    task = dataset.task("t_echo")
    run_dir, approot = tmp_path / "runs" / RUN_ID, tmp_path / "bed"
    run_dir.mkdir(parents=True)
    approot.mkdir()
    written = write_request(run_dir, run_dir / "work", dataset, task,
                            "oracle" if oracle else "nop", "", approot, "", oracle=oracle)
    # The request as apg run has always written it, key for key.
    expected: dict[str, object] = {
        "run_id": RUN_ID, "task_id": "t_echo",
        "dataset": {"name": "tasks", "sha256": dataset.sha256, "version": 3},
        "task_sha256": task.sha256, "model": None, "adapter": "oracle" if oracle else "nop",
        "approot": str(approot), "ddev_project": "", "run_dir": str(run_dir / "work"),
        "prompt_file": str(run_dir / "prompt.txt"), "site_command": site_command(approot)}
    if oracle:
        expected["reference_solution_file"] = str(run_dir / "reference_solution.json")
    return written, run_dir, expected


def test_the_request_keeps_its_bytes_and_reads_back(tmp_path: Path) -> None:
    path, run_dir, expected = _written(tmp_path, oracle=False)
    assert path == run_dir / "request.json"
    assert path.read_text(encoding="utf-8") == canonical(expected)
    request = read_request(path)
    assert request.as_json() == expected and request.reference_solution_file is None
    assert not (run_dir / "reference_solution.json").exists()


def test_the_oracle_request_names_its_reference_solution(tmp_path: Path) -> None:
    path, run_dir, expected = _written(tmp_path, oracle=True)
    assert path.read_text(encoding="utf-8") == canonical(expected)
    reference = run_dir / "reference_solution.json"
    assert read_request(path).reference_solution_file == str(reference)
    assert reference.read_text(encoding="utf-8") == canonical({"task_id": "t_echo", "steps": STEPS})
    assert read_reference(reference) == ReferenceSolution(task_id="t_echo", steps=STEPS)


def test_a_request_breaking_its_schema_is_refused_on_write_and_on_read(tmp_path: Path) -> None:
    path, _, _ = _written(tmp_path, oracle=False)
    request = read_request(path)
    refused_on_write(tmp_path / "w" / "request.json",
                     replace(request, dataset={"name": "tasks", "version": 3}), "$.dataset")
    data = request.as_json()
    refused_on_read(path, {**data, "checks": []}, read_request, "$")  # never the answers
    refused_on_read(path, {**data, "dataset": {**request.dataset, "path": "/x"}}, read_request,
                    "$.dataset")
    refused_on_read(path, {**data, "site_command": "apg site"}, read_request, "$.site_command")
    message = refused_on_read(path, {k: v for k, v in data.items() if k != "run_dir"},
                              read_request, "$")
    assert "'run_dir' is a required property" in message


def test_a_reference_solution_breaking_its_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "reference_solution.json"
    refused_on_write(path, ReferenceSolution(task_id="t", steps=[[]]), "$.steps[0]")
    good = {"task_id": "t", "steps": STEPS}
    refused_on_read(path, {**good, "steps": [["status", 1]]}, read_reference, "$.steps[0][1]")
    refused_on_read(path, {**good, "checks": []}, read_reference, "$")


def test_request_fields_are_the_schema_properties() -> None:
    for cls in (RunRequest, ReferenceSolution):
        declared = set(load_schema(cls.SCHEMA)["properties"])
        assert declared == {f.name for f in fields(cls)}, cls.__name__
