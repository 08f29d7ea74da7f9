"""For tests proving that something (a regrade) runs no agent: every child process is recorded by
its argv, and starting an adapter fails the test."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest


def watch_children(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The list every child process started from now on is appended to, by its argv; any call
    of ``run_task`` (the adapter's start, from ``apg run`` or a campaign attempt) raises."""
    started: list[list[str]] = []
    real = subprocess.Popen.__init__

    def recording(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        started.append([str(a) for a in args] if isinstance(args, list | tuple) else [str(args)])
        real(self, args, *rest, **kwargs)

    def no_agent(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("regrade ran an agent")

    monkeypatch.setattr(subprocess.Popen, "__init__", recording)
    monkeypatch.setattr("ai_proving_ground.tasks.run.run_task", no_agent)
    monkeypatch.setattr("ai_proving_ground.campaigns.attempt.run_task", no_agent)
    return started
