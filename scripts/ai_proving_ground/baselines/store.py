"""Where a set's baseline lives: the files beside the dump and the git tag, and the lock.

``baseline.<key>.json``, written last before the tag, is a :class:`BaselineRecord`
(``schemas/baseline.schema.json``), written and read through :mod:`records`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ai_proving_ground.escrow.locations import baseline_location
from ai_proving_ground.fsutil import safe_name
from ai_proving_ground.records import FieldsRecord, read_record
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings

TAG_PREFIX = "apg-baseline-"
RUNS_SUBDIR = "runs"


def baseline_dir(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> Path:
    """Where the bed's baselines and records live; ``escrow.locations.baseline_location`` is the
    one owner of that rule (a DDEV bed's lies outside the project)."""
    return baseline_location(approot, settings).directory


@dataclass(frozen=True)
class Baseline:
    """The pair (dump + tag) for one set key, and the sidecars recorded with it."""

    directory: Path
    set_key: str
    ref: str | None = None  # AI_PG_BASELINE_REF: the tag's name when set

    @classmethod
    def of(cls, approot: Path, set_key: str, settings: Settings = DEFAULT_SETTINGS) -> Baseline:
        """The baseline of ``set_key`` where ``settings`` put it."""
        return cls(baseline_dir(approot, settings), set_key, settings.baseline_ref)

    def _file(self, stem: str, suffix: str) -> Path:
        return self.directory / f"{stem}.{safe_name(self.set_key, 'set key')}{suffix}"

    @property
    def dump(self) -> Path:
        return self._file("db", ".dump")

    @property
    def metadata(self) -> Path:
        return self._file("baseline", ".json")

    @property
    def grader_sha256(self) -> Path:
        return self._file("grader", ".sha256")

    @property
    def grader_files(self) -> Path:
        return self._file("grader", ".files")

    @property
    def versions(self) -> Path:
        return self._file("versions", ".json")

    @property
    def reset_marker(self) -> Path:
        # Present while a reset is under way: a killed reset leaves it, and the doctor fails on it.
        return self._file("reset", ".incomplete")

    @property
    def tag(self) -> str:
        return self.ref or f"{TAG_PREFIX}{self.set_key}"

    @property
    def lock(self) -> Path:
        return self.directory / ".lock"


@dataclass(frozen=True)
class BaselineRecord(FieldsRecord):
    """baseline.<key>.json: which set was captured, by which driver, when, under which tag."""

    SCHEMA: ClassVar[str] = "baseline"

    format: int
    set_key: str
    canonical: str  # the set key's canonical form (set_key.canonical_set)
    fixtures: list[str]  # names, as requested
    tag: str
    captured_at: int  # Unix time, seconds
    driver: str
    commit: str | None = None  # what the tag names; reset restores it (absent: older baselines)

    def as_json(self) -> dict[str, Any]:
        data = super().as_json()
        if data["commit"] is None:  # an older baseline's record keeps its shape
            del data["commit"]
        return data


def read_metadata(baseline: Baseline) -> BaselineRecord:
    return read_record(baseline.metadata, BaselineRecord)


def runs_dir(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> Path:
    """Where run records live: in the baseline directory, which reset keeps."""
    return baseline_dir(approot, settings) / RUNS_SUBDIR
