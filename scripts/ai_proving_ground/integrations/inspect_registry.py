"""What the ``inspect_ai`` entry point registers: the task ``ai_proving_ground/build_tasks`` and
the scripted model API ``apg`` (``apg/oracle``, ``apg/nop``).

    inspect eval ai_proving_ground/build_tasks --model apg/oracle
    inspect eval ai_proving_ground/build_tasks -T tasks=dv01_view_build,cv01_footer_heading \\
        --model anthropic/claude-sonnet-4-0
"""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.model import ModelAPI, modelapi

from ai_proving_ground.integrations.inspect_ai import apg_task
from ai_proving_ground.integrations.inspect_models import ScriptedModel


def task_ids(tasks: str | list[str] | None) -> list[str] | None:
    """``-T tasks=a,b`` arrives as a list (Inspect splits on commas), ``-T tasks=a`` as a string."""
    if tasks is None:
        return None
    items = [tasks] if isinstance(tasks, str) else [str(item) for item in tasks]
    chosen = [part.strip() for item in items for part in item.split(",") if part.strip()]
    return chosen or None


@task
def build_tasks(dataset: str | None = None, tasks: str | list[str] | None = None,
                template: str | None = None, work_dir: str | None = None,
                message_limit: int = 60) -> Task:
    """The dataset's tasks (default: the shipped build_tasks), each sample on its own bed."""
    return apg_task(dataset=dataset, tasks=task_ids(tasks), template=template,
                    work_dir=Path(work_dir) if work_dir else None, message_limit=message_limit)


@modelapi(name="apg")
def apg_models() -> type[ModelAPI]:
    return ScriptedModel
