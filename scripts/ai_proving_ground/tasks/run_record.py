"""run.json: the record of one ``apg run``, as a value (``schemas/run.schema.json``).

Written by :mod:`ai_proving_ground.tasks.run` (first ``status: running``, then the final status)
and read by grade and the campaign runner through :func:`read_run`, so every reader gets the same
checked value. ``status`` is ``running``, then ``attempted`` (the adapter exited 0),
``no_attempt`` (it exited non-zero or could not start), ``refused`` (the credential preflight),
``timed_out`` (it outlived ``timeout_s`` and was stopped) or ``interrupted``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ai_proving_ground.records import read_record, write_record

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
    # What other parts of the product record beside these (the sandbox, the agent's transcript).
    details: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {**{k: v for k, v in data.items() if k != "details"}, **self.details}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRecord:
        known = {f for f in cls.__dataclass_fields__ if f != "details"}
        return cls(**{k: v for k, v in data.items() if k in known},
                   details={k: v for k, v in data.items() if k not in known})


def read_run(path: Path) -> RunRecord:
    return read_record(path, RunRecord)


def write_run(run_dir: Path, record: dict[str, Any]) -> None:
    """``run_dir/run.json`` from the writer's working copy, through :class:`RunRecord`."""
    write_record(run_dir / "run.json", RunRecord.from_json(record))


def dumps_record(record: Mapping[str, Any]) -> str:
    """run.json as ``apg run --json`` prints it: the same canonical form as the file."""
    return json.dumps(record, indent=2, sort_keys=True) + "\n"
