"""run.json: the record of one ``apg run``, as a value (``schemas/run.schema.json``).

Written by :mod:`ai_proving_ground.tasks.run` (first ``status: running``, then the final status)
and read by grade and the campaign runner through :func:`read_run`, so every reader gets the same
checked value. ``status`` is ``running``, then ``attempted`` (the adapter exited 0),
``no_attempt`` (it exited non-zero or could not start), ``refused`` (the credential preflight),
``timed_out`` (it outlived ``timeout_s`` and was stopped) or ``interrupted``.

Every key is declared here and in the schema (``additionalProperties: false``): a key that is
neither is refused on write (a bug) and on read (``APG_RECORD_INVALID`` naming the file), so a
new field cannot reach run.json without both. The optional ones are absent until they apply:
``sandbox`` once the adapter's confinement is chosen (with ``site_broker`` inside it when a
confined adapter's DDEV site is brokered, ``ddev_global_config`` when an unconfined one's HOME
was given the operator's DDEV global config), ``agent_transcript`` once its output was parsed,
``no_attempt_reason`` when the adapter exited 0 yet tried nothing, ``turns`` for a task of several
turns once its first turn ended (``agent_transcript`` is then the turns summed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

from ai_proving_ground.errors import ApgError
from ai_proving_ground.records import RECORD_INVALID, read_record, write_record

STATUSES = ("running", "attempted", "no_attempt", "refused", "timed_out", "interrupted")


@dataclass(frozen=True)
class RunRecord:
    """What one run was asked, what it was handed and how it ended."""

    SCHEMA: ClassVar[str] = "run"

    run_id: str
    status: str
    task_id: str
    dataset: dict[str, Any]
    task_sha256: str
    adapter: dict[str, Any]
    model: str | None
    approot: str
    started_at: str
    prompt_sha256: str
    preflight: dict[str, Any]
    finished_at: str | None = None
    adapter_exit_code: int | None = None
    attempted: bool = False
    # The adapter's output files, by stream; null when nothing ran (a refused run).
    transcripts: dict[str, str] | None = None
    # The wall-clock limit the adapter ran under (null: none).
    timeout_s: float | None = None
    # What the sandbox allowed (``sandbox.confine.Confinement.as_record``, plus
    # ``tasks.site_access.SiteAccess.as_record``); absent when nothing ran confined or not (a refused run).
    sandbox: dict[str, Any] | None = None
    # The agent's transcript in brief (``transcripts.record.Transcript.summary``), or
    # ``{"error": ...}`` when its output could not be parsed; absent without a parser.
    agent_transcript: dict[str, Any] | None = None
    # Why an adapter that exited 0 recorded no attempt (every tool call was denied).
    no_attempt_reason: str | None = None
    # A task of several turns (``tasks.turns``): each turn, sent or skipped and why, in order.
    turns: list[dict[str, Any]] | None = None

    OPTIONAL: ClassVar[frozenset[str]] = frozenset(
        {"sandbox", "agent_transcript", "no_attempt_reason", "turns"})

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items()
                if v is not None or k not in self.OPTIONAL}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRecord:
        return cls(**data)


FIELDS = frozenset(f.name for f in fields(RunRecord))


def read_run(path: Path) -> RunRecord:
    return read_record(path, RunRecord)


def write_run(run_dir: Path, record: dict[str, Any]) -> None:
    """``run_dir/run.json`` from the writer's working copy, through :class:`RunRecord`."""
    path = run_dir / "run.json"
    undeclared = sorted(set(record) - FIELDS)
    if undeclared:
        raise ApgError(RECORD_INVALID, f"{path}: the run record has undeclared keys "
                       f"{', '.join(undeclared)} (a bug: declare them in tasks/run_record.py "
                       "and schemas/run.schema.json)")
    write_record(path, RunRecord.from_json(record))


def dumps_record(record: Mapping[str, Any]) -> str:
    """run.json as ``apg run --json`` prints it: the same canonical form as the file."""
    return json.dumps(record, indent=2, sort_keys=True) + "\n"
