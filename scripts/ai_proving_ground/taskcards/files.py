"""The cards of every task of a dataset as files, DIR/<task>.md: written, or checked as current."""

from __future__ import annotations

from pathlib import Path

from ai_proving_ground.fsutil import atomic_write_text
from ai_proving_ground.taskcards.card import render_card
from ai_proving_ground.taskcards.scores import ScoresRecord
from ai_proving_ground.tasks.dataset import Dataset


def card_path(directory: Path, task_id: str) -> Path:
    return directory / f"{task_id}.md"


def write_cards(dataset: Dataset, scores: ScoresRecord, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for task in dataset.tasks:
        path = card_path(directory, task.id)
        atomic_write_text(path, render_card(dataset, task, scores))
        written.append(path)
    return written


def stale_cards(dataset: Dataset, scores: ScoresRecord, directory: Path) -> list[str]:
    """Each card in ``directory`` that is missing or differs from what would be written."""
    problems = []
    for task in dataset.tasks:
        path = card_path(directory, task.id)
        try:
            current = path.read_text(encoding="utf-8")
        except OSError:
            problems.append(f"{path} is missing")
            continue
        if current != render_card(dataset, task, scores):
            problems.append(f"{path} is stale")
    return problems
