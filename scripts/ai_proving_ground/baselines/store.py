"""Where a set's baseline lives: the files beside the dump and the git tag, and the lock.

``baseline.<key>.json``, written last before the tag, is a :class:`BaselineRecord`
(``schemas/baseline.schema.json``), written and read through :mod:`records`; ``bed.<key>.json``
and ``objects/`` (written after the tag) are the whole-bed snapshot (:mod:`baselines.snapshot`).
The baseline and runs directories are trusted paths: :func:`baseline_dir` and :func:`runs_dir`
refuse (APG_BED_PATH_UNSAFE) when a folder of theirs inside the bed is a link or not a folder.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ai_proving_ground.errors import ApgError
from ai_proving_ground.escrow.locations import baseline_location
from ai_proving_ground.fsutil import safe_name
from ai_proving_ground.layout import BedLayout, read_driver
from ai_proving_ground.records import FieldsRecord, read_record, write_record
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.sites.base import ddev_record

TAG_PREFIX = "apg-baseline-"
RUNS_SUBDIR = "runs"
UNSAFE = "APG_BED_PATH_UNSAFE"


def baseline_dir(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> Path:
    """Where the bed's baselines and records live; ``escrow.locations.baseline_location`` is the
    one owner of that rule (a DDEV bed's lies outside the project). Checked before use: a folder
    of it inside the bed that is a link or not a folder is refused (:func:`unsafe_step`)."""
    path = baseline_location(approot, settings).directory
    refuse_unsafe(approot, path, "the baseline directory")
    return path


def unsafe_step(approot: Path, path: Path) -> Path | None:
    """The first folder from ``approot`` down to ``path`` (those inside the bed) that exists and
    is not a real folder (a link, a file, anything else), or None. Absent folders are fine:
    they are made when first written."""
    root = next((r for r in (approot, Path(os.path.realpath(approot))) if r in path.parents), None)
    if root is None:
        return None
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return None
        if not stat.S_ISDIR(mode):
            return current
    return None


def refuse_unsafe(approot: Path, path: Path, what: str) -> None:
    """APG_BED_PATH_UNSAFE unless ``path`` is safe to use (:func:`unsafe_step`)."""
    step = unsafe_step(approot, path)
    if step is not None:
        raise ApgError(UNSAFE, f"{step} is a symlink or not a folder, so {what} ({path}) cannot be "
                       f"trusted; an attempt may have replaced it. Run `apg reset --approot "
                       f"{approot}` to repair the bed (it never writes through a link)")


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
    def bed_snapshot(self) -> Path:
        return self._file("bed", ".json")

    @property
    def config_export(self) -> Path:
        """Every config object the baseline holds (baselines/config_export.py)."""
        return self._file("config", ".json")

    @property
    def content_counts(self) -> Path:
        """How many entities of each content type and bundle it holds (baselines/content_counts.py)."""
        return self._file("counts", ".json")

    @property
    def objects(self) -> Path:
        """The snapshot's file contents by sha256, shared by every set of the bed."""
        return self.directory / "objects"

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


def provisioned_sets(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> list[list[str]]:
    """The fixture sets the bed has baselines of (each as its provision named it), in set-key
    order: what doctor, reset and verify act on when no fixture is named. A record that does not
    read is skipped here; the commands that use the set check its baseline themselves."""
    directory = baseline_dir(approot, settings)
    sets: list[list[str]] = []
    for path in sorted(directory.glob("baseline.*.json")):
        try:
            names = read_record(path, BaselineRecord).fixtures
        except ApgError:
            continue
        if names not in sets:
            sets.append(names)
    return sets


def runs_dir(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> Path:
    """Where run records live: in the baseline directory, which reset keeps. Checked before use
    (a link there is refused; reset repairs it: :func:`repair_runs_dir`)."""
    path = baseline_dir(approot, settings) / RUNS_SUBDIR
    refuse_unsafe(approot, path, "the runs directory")
    return path


def repair_runs_dir(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> str | None:
    """Make the runs directory a real folder again when it is a link or a file (the link is
    removed, never followed: what it pointed to is left alone); the path repaired, or None."""
    path = baseline_dir(approot, settings) / RUNS_SUBDIR
    if unsafe_step(approot, path) != path:
        return None
    path.unlink()
    path.mkdir()
    return str(path)


@dataclass(frozen=True)
class BedRecord(FieldsRecord):
    """bed.json: the driver a bed was made with; an embedded bed's in ``.ai-proving-ground/``, a
    DDEV bed's outside the project (``sites.base.ddev_record``). Read by ``layout.read_driver``,
    which the driver choice (``sites.base.driver_name_for``) goes through."""

    SCHEMA: ClassVar[str] = "bed_record"

    format: int
    driver: str


def record_driver(approot: Path, driver: str) -> None:
    """Write ``bed.json`` (bed init, provision): a config planted later cannot change the driver."""
    # A DDEV project's web container can write the whole project: its record lies outside.
    path = ddev_record(approot) if driver == "ddev" else BedLayout(approot).bed_record
    if read_driver(path) == driver:
        return  # written once: a provision that is a no-op changes nothing
    refuse_unsafe(approot, path.parent, "the bed's records")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_record(path, BedRecord(format=1, driver=driver))
