"""``apg campaign run --task T --agent A [--agent B] [--repeats N]``: a quick matrix, no spec file.

The spec it writes is an ordinary one, kept as the campaign's spec.yml like any other: the named
tasks (ids or globs) for each named agent, one arm (``as_is``: the bed as the baseline left it),
so the report gives each agent's pass rate per task with its Wilson interval and no paired
effect (an effect needs two arms, which is what a spec file is for).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground import yamldump
from ai_proving_ground.fsutil import atomic_write_text

ARM = "as_is"
DEFAULT_REPEATS = 3
DEFAULT_SEED = 1


def quick_spec(tasks: Sequence[str], agents: Sequence[str], repeats: int, dataset: str | None,
               models: Sequence[str], seed: int) -> dict[str, Any]:
    chosen = list(dict.fromkeys(agents))
    return {"name": "quick", "dataset": dataset or "build_tasks",
            "tasks": list(dict.fromkeys(tasks)),
            "arms": {ARM: {"description": "the bed as the baseline left it"}},
            "agents": chosen, "models": list(dict.fromkeys(models)) or [None],
            "repeats": repeats, "seed": seed, "jobs": 1}


def write_quick_spec(folder: Path, spec: dict[str, Any]) -> Path:
    path = folder / "quick.yml"
    atomic_write_text(path, "# written by apg campaign run --task/--agent\n" + yamldump.dumps(spec))
    return path
