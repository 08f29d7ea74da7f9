"""request.json and reference_solution.json: what an adapter is handed, as values.

The adapter-facing contract of ``apg run`` (README, "Tasks, runs and grades"): every adapter
finds :class:`RunRequest` at ``APG_REQUEST_FILE`` (``schemas/run_request.schema.json``); only the
oracle also gets :class:`ReferenceSolution` at ``APG_REFERENCE_FILE``
(``schemas/reference_solution.schema.json``), named in the request as
``reference_solution_file`` and absent from every other request. Both are closed shapes: a key
neither the dataclass nor the schema declares is refused on write (a bug) and on read.
The request names the dataset by name and hash, never its path, and never carries the checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ai_proving_ground.records import FieldsRecord, read_record, write_record
from ai_proving_ground.tasks.dataset import Dataset, Task
from ai_proving_ground.tasks.site_access import site_command

REQUEST_FILE = "request.json"
PROMPT_FILE = "prompt.txt"
REFERENCE_FILE = "reference_solution.json"


@dataclass(frozen=True)
class ReferenceSolution(FieldsRecord):
    """The task's reference solution: ``apg site`` argument lists, applied in order."""

    SCHEMA: ClassVar[str] = "reference_solution"

    task_id: str
    steps: list[list[str]]


@dataclass(frozen=True)
class RunRequest(FieldsRecord):
    """What an adapter is asked to do, and where its files are."""

    SCHEMA: ClassVar[str] = "run_request"

    run_id: str
    task_id: str
    dataset: dict[str, Any]  # name, sha256, version: never the path
    task_sha256: str
    model: str | None
    adapter: str
    approot: str
    ddev_project: str
    run_dir: str  # the adapter's work folder (APG_RUN_DIR), the one part of the run it writes
    prompt_file: str
    site_command: list[str]
    # The oracle's alone; absent from every other adapter's request.
    reference_solution_file: str | None = None
    # A later turn (tasks.turns): its number, and the agent's session to resume; absent else.
    turn: int | None = None
    resume_session: str | None = None

    def as_json(self) -> dict[str, Any]:
        data = super().as_json()
        for name in ("reference_solution_file", "turn", "resume_session"):
            if data[name] is None:
                del data[name]
        return data


def write_request(run_dir: Path, work: Path, dataset: Dataset, task: Task, adapter: str,
                  model: str | None, approot: Path, ddev_project: str, oracle: bool) -> Path:
    """``run_dir/request.json``, and with ``oracle`` the reference solution beside it; the
    request's path. ``work`` is the adapter's own folder, which the request names as its
    ``run_dir``."""
    reference = None
    if oracle:
        reference = run_dir / REFERENCE_FILE
        write_record(reference, ReferenceSolution(task_id=task.id, steps=task.reference_steps))
    request = RunRequest(
        run_id=run_dir.name, task_id=task.id,
        dataset={"name": dataset.name, "sha256": dataset.sha256, "version": dataset.version},
        task_sha256=task.sha256, model=model or None, adapter=adapter, approot=str(approot),
        ddev_project=ddev_project, run_dir=str(work), prompt_file=str(run_dir / PROMPT_FILE),
        site_command=site_command(approot),
        reference_solution_file=None if reference is None else str(reference))
    path = run_dir / REQUEST_FILE
    write_record(path, request)
    return path


def read_request(path: Path) -> RunRequest:
    return read_record(path, RunRequest)


def read_reference(path: Path) -> ReferenceSolution:
    return read_record(path, ReferenceSolution)
