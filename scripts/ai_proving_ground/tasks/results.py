"""The results store: every emitted envelope, kept under the baseline directory (reset keeps it).

Keyed by evaluation ID. Storing an identical measurement again is a no-op ("already stored");
a different measurement under the same ID is a conflict and is not stored.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ai_proving_ground.baselines.store import baseline_dir
from ai_proving_ground.errors import ApgError
from ai_proving_ground.records import parse_record
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.tasks.envelope import Envelope, read_envelope, write_envelope

# Set when the record is written, so two identical measurements may differ in it.
_VOLATILE = ("retrieved_timestamp",)


def results_dir(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> Path:
    return baseline_dir(approot, settings) / "results"


def _path(approot: Path, evaluation_id: str, settings: Settings) -> Path:
    return results_dir(approot, settings) / f"{hashlib.sha256(evaluation_id.encode()).hexdigest()[:32]}.json"


def _measurement(envelope: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in envelope.items() if k not in _VOLATILE}


def store(approot: Path, envelope: dict[str, Any], settings: Settings = DEFAULT_SETTINGS) -> str:
    """Store ``envelope``; returns "stored" or "already stored"; a conflict raises."""
    record = parse_record(envelope, Envelope, "the envelope to store")
    path = _path(approot, record.evaluation_id, settings)
    if path.is_file():
        existing = read_envelope(path).as_json()
        if _measurement(existing) == _measurement(envelope):
            return "already stored"
        raise ApgError("APG_GRADE_NOT_STORED", f"conflict: {record.evaluation_id} is "
                       f"already stored with a different measurement ({path})")
    write_envelope(path, record)
    return "stored"


def list_results(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> list[dict[str, Any]]:
    """One summary row per stored envelope, oldest first."""
    rows: list[dict[str, Any]] = []
    directory = results_dir(approot, settings)
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            envelope = read_envelope(path)
        except ApgError as exc:
            rows.append({"evaluation_id": "", "file": str(path),
                         "error": f"unreadable: {exc.message}"})
            continue
        rows.append({"evaluation_id": envelope.evaluation_id, "task": envelope.task_id,
                     "model": envelope.model_id, "score": envelope.score,
                     "verdict": envelope.verdict, "run": envelope.run_id or "",
                     "retrieved": envelope.retrieved_timestamp, "file": str(path)})
    return sorted(rows, key=lambda r: str(r.get("retrieved", "")))
