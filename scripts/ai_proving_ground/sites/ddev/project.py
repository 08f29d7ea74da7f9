"""What ``ddev describe -j`` says about the project, read once per driver.

``ddev exec`` starts a stopped project by itself (DDEV v1.25.2 and later), which can take
minutes and prints its progress on stdout; the driver asks first and refuses instead.
The docroot and whether Mutagen syncs the project come from the same answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ai_proving_ground.errors import ApgError


@dataclass(frozen=True)
class ProjectFacts:
    """The few facts the driver needs from ``ddev describe -j``'s ``raw`` object."""

    name: str
    status: str
    docroot: str
    mutagen_enabled: bool


def parse_describe(stdout: str) -> ProjectFacts:
    """The ``raw`` object of the JSON log line that carries one (other lines are logs)."""
    for line in reversed(stdout.splitlines()):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        raw = record.get("raw") if isinstance(record, dict) else None
        if isinstance(raw, dict) and "status" in raw:
            return _facts(raw)
    raise ApgError(
        "APG_DDEV_OUTPUT_INVALID",
        '`ddev describe -j` printed no project description (a JSON line with a "raw" object); '
        f"stdout began: {stdout[:200]!r}. Is this directory a DDEV project? Check with: ddev describe",
    )


def _facts(raw: dict[str, Any]) -> ProjectFacts:
    docroot = raw.get("docroot")
    return ProjectFacts(
        name=str(raw.get("name") or ""),
        status=str(raw.get("status") or ""),
        docroot=docroot if isinstance(docroot, str) else "web",
        mutagen_enabled=raw.get("mutagen_enabled") is True,
    )


def require_running(facts: ProjectFacts) -> None:
    """Refuse a project that is not running, before ``ddev exec`` starts it unasked."""
    if facts.status != "running":
        raise ApgError(
            "APG_DDEV_NOT_RUNNING",
            f"DDEV project {facts.name or '(unnamed)'} is {facts.status or 'in an unknown state'}, "
            "not running; start it with: ddev start (then run this again)",
        )
