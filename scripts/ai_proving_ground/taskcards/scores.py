"""The last mutation score of each task of a dataset, in one small JSON file per dataset
(schema ``mutation_scores``), written by ``apg task mutate --record-score`` (``nox -s mutate``)
and read by the task cards. The shipped dataset's file is ``docs/tasks/mutation-scores.json``;
another dataset's sits beside it as ``<dataset>.mutation-scores.json``.

Each entry keeps the task's hash, so a card can say when the task changed after its score.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ai_proving_ground.mutation.result import MutationReport
from ai_proving_ground.paths import PROJECT_ROOT, project_dir
from ai_proving_ground.records import FieldsRecord, read_record, write_record
from ai_proving_ground.tasks.dataset import DEFAULT_DATASET, Dataset

SCORES_FILE = "mutation-scores.json"
CARDS_DIR = Path("docs") / "tasks"  # relative to the project root


@dataclass(frozen=True)
class ScoresRecord(FieldsRecord):
    """Task id -> its last score summary (see :func:`entry`)."""

    SCHEMA: ClassVar[str] = "mutation_scores"

    dataset: str
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)


def scores_path(dataset: Dataset) -> Path:
    if dataset.path.resolve() == (project_dir("datasets") / f"{DEFAULT_DATASET}.yml").resolve():
        return PROJECT_ROOT / CARDS_DIR / SCORES_FILE
    return dataset.path.with_name(f"{dataset.path.stem}.{SCORES_FILE}")


def read_scores(path: Path, dataset: Dataset) -> ScoresRecord:
    if not path.is_file():
        return ScoresRecord(dataset=dataset.name)
    return read_record(path, ScoresRecord)


def entry(report: MutationReport) -> dict[str, Any]:
    return {"task_sha256": report.task_sha256, "score": report.score,
            "killed": report.count("killed"),
            "counted": report.count("killed") + report.count("survived"),
            "equivalent": report.count("equivalent"), "stillborn": report.count("stillborn"),
            "reference": report.reference.verdict, "nop": report.nop.verdict,
            "survivors": report.survivors()}


def record_score(path: Path, dataset: Dataset, report: MutationReport) -> None:
    """Replace the task's entry, keeping the others, new-then-rename."""
    current = read_scores(path, dataset)
    tasks = {**current.tasks, report.task_id: entry(report)}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_record(path, ScoresRecord(dataset=dataset.name, tasks=dict(sorted(tasks.items()))))
