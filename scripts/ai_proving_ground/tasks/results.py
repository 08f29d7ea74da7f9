"""The results store: every emitted envelope, kept under the baseline directory (reset keeps it).

Keyed by evaluation ID. Storing an identical measurement again is a no-op ("already stored");
a different measurement under the same ID is a conflict and is not stored. Listing goes through
the SQLite index beside the files (:mod:`ai_proving_ground.results.index`).
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


def result_path(approot: Path, evaluation_id: str, settings: Settings = DEFAULT_SETTINGS) -> Path:
    """Where the envelope of ``evaluation_id`` is stored."""
    return results_dir(approot, settings) / f"{hashlib.sha256(evaluation_id.encode()).hexdigest()[:32]}.json"


def _measurement(envelope: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in envelope.items() if k not in _VOLATILE}


def store(approot: Path, envelope: dict[str, Any], settings: Settings = DEFAULT_SETTINGS) -> str:
    """Store ``envelope``; returns "stored" or "already stored"; a conflict raises."""
    record = parse_record(envelope, Envelope, "the envelope to store")
    path = result_path(approot, record.evaluation_id, settings)
    if path.is_file():
        existing = read_envelope(path).as_json()
        if _measurement(existing) == _measurement(envelope):
            return "already stored"
        raise ApgError("APG_GRADE_NOT_STORED", f"conflict: {record.evaluation_id} is "
                       f"already stored with a different measurement ({path})")
    write_envelope(path, record)
    return "stored"
