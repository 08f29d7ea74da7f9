"""The executors by name: each a module whose ``open_executor(context, jobs)`` gives an
:class:`executors.base.Executor`; the module is imported only when its name is looked up (a
distributed engine is an optional extra the local executor never needs)."""

from __future__ import annotations

import importlib
from typing import cast

from ai_proving_ground.campaigns import beds
from ai_proving_ground.campaigns.attempt import Context
from ai_proving_ground.executors.base import Executor

DEFAULT = "local"
EXECUTORS: dict[str, str] = {
    "local": "ai_proving_ground.executors.local",
}


def known() -> str:
    return ", ".join(sorted(EXECUTORS))


def open_executor(name: str, context: Context, jobs: list[beds.Job]) -> Executor:
    """The executor called ``name`` (a key of :data:`EXECUTORS`), ready to take attempts."""
    module = importlib.import_module(EXECUTORS[name])
    return cast(Executor, module.open_executor(context, jobs))
