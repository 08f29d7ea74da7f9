"""Datasets: YAML files of tasks, resolved and hashed the same way by run and grade.

``task_sha256`` is the SHA-256 of the task's canonical JSON: the task mapping as parsed from the
dataset file, keys sorted at every depth, list order kept, compact separators (``,`` and ``:``),
non-ASCII kept as UTF-8. ``dataset_sha256`` is the SHA-256 of the file's bytes.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground import phpjson
from ai_proving_ground.errors import ApgError
from ai_proving_ground.paths import portable_path, project_dir
from ai_proving_ground.schemas import validate_document
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.tasks.hidden_spec import check_hidden
from ai_proving_ground.tasks.view_ties import tie_warnings
from ai_proving_ground.yamlio import YamlDocument, load_document

DEFAULT_DATASET = "build_tasks"


@dataclass(frozen=True)
class Task:
    """One task as the dataset defines it."""

    id: str
    data: dict[str, Any]

    @property
    def prompt(self) -> str:
        return str(self.data["prompt"])

    @property
    def fixtures(self) -> list[str]:
        return list(self.data["fixtures"])

    @property
    def checks(self) -> list[dict[str, Any]]:
        """The state checks that grade the end state: the ``final`` block's when the task has
        one (a case of several turns), else its ``checks``."""
        final = self.data.get("final")
        return list(final["checks"] if final else self.data.get("checks") or [])

    @property
    def turns(self) -> list[dict[str, Any]]:
        """The later turns after ``prompt`` (``tasks.turns`` sends them); none for most tasks."""
        return list(self.data.get("turns") or [])

    @property
    def behaviour(self) -> list[dict[str, Any]]:
        """The task's behaviour scorers (scorers/), over the agent's transcript."""
        return list(self.data.get("behaviour") or [])

    @property
    def trigger(self) -> dict[str, str] | None:
        """The task's skill trigger case (``{skill, expect, owner?}``), if it is one."""
        found = self.data.get("trigger")
        return {str(k): str(v) for k, v in found.items()} if found else None

    @property
    def reference_steps(self) -> list[list[str]]:
        solution = self.data.get("reference_solution") or {}
        return [list(step) for step in solution.get("steps") or []]

    def site_allow(self, settings: Settings) -> tuple[str, ...]:
        """Drush commands and options the site broker runs for this task beyond its policy: the
        operator's (AI_PG_SITE_ALLOW), then the task's own ``site_allow``."""
        return (*settings.site_allow, *(self.data.get("site_allow") or ()))

    @property
    def hidden_verifier(self) -> dict[str, Any] | None:
        verifier = self.data.get("hidden_verifier")
        return dict(verifier) if verifier else None

    @property
    def sha256(self) -> str:
        # The original system's canonical form (PHP's ksort and json_encode), so a harness
        # comparing task hashes across the two implementations agrees on every task.
        return hashlib.sha256(phpjson.canonical(self.data).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset file and its tasks."""

    path: Path
    name: str
    version: int
    sha256: str
    tasks: tuple[Task, ...]
    # What the validator warns about but does not refuse (a view_rows order resting on a tie).
    warnings: tuple[str, ...] = ()

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        known = ", ".join(t.id for t in self.tasks)
        raise ApgError("APG_TASK_UNKNOWN", f"dataset {self.name} ({self.path}) has no task "
                       f"{task_id!r}; its tasks: {known}", exit_code=2)

    def portable_path(self, approot: Path) -> str:
        """How records handed to others name the dataset: never by a host path
        (:func:`paths.portable_path`)."""
        return portable_path(self.path, approot)

    def display_path(self, approot: Path) -> str:
        """Relative to the app root when inside it, otherwise absolute (this host's records)."""
        try:
            return self.path.resolve().relative_to(approot.resolve()).as_posix()
        except ValueError:
            return str(self.path.resolve())


def resolve_dataset_path(reference: str | None, approot: Path,
                         settings: Settings = DEFAULT_SETTINGS) -> Path:
    """``--dataset``, then ``AI_PG_DATASET``, then the shipped datasets/ (a name or a path)."""
    chosen = reference or settings.dataset or DEFAULT_DATASET
    as_path = Path(chosen).expanduser()
    candidates = [as_path if as_path.is_absolute() else approot / as_path, Path.cwd() / as_path]
    if as_path.suffix not in {".yml", ".yaml"}:
        candidates = [project_dir("datasets") / f"{chosen}.yml"]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    raise ApgError("APG_DATASET_NOT_FOUND", f"dataset {chosen!r} not found (looked at "
                   f"{', '.join(str(c) for c in candidates)}); pass --dataset PATH.yml or a name "
                   "from datasets/", exit_code=2)


def load_dataset(path: Path) -> Dataset:
    """Parse and validate a dataset; errors carry file:line:col: $.path. A dataset that cannot
    be read or is invalid is bad input, as an unknown one is: exit 2 (APG_DATASET_INVALID)."""
    try:
        return _read_dataset(path)
    except ApgError as exc:
        raise ApgError(exc.token, exc.message, exit_code=2) from None


def _read_dataset(path: Path) -> Dataset:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ApgError("APG_DATASET_INVALID", f"{path}: file not found") from None
    dataset, doc = _parsed(path, raw)
    # Outside the cache: whether each hidden patch is a file inside the dataset's folder is a
    # fact of the file system now, not of the dataset's bytes.
    for index, task in enumerate(doc.data["tasks"]):
        check_hidden(task, index, path.parent, doc.where)
    return dataset


# A campaign loads its dataset once per run and once per grade of every attempt, and parsing it
# (YAML, the JSON Schema, the reference views executed for tie warnings) was about 0.12 s of the
# 0.29 s an attempt cost: so the parse is kept per path and exact bytes. A hit needs bytes equal
# to those parsed, so what is returned is what parsing the file now would give. The tie warnings
# also read the shipped fixtures, files of this installation as its code is.
@functools.lru_cache(maxsize=8)
def _parsed(path: Path, raw: bytes) -> tuple[Dataset, YamlDocument]:
    doc = load_document(path, token="APG_DATASET_INVALID")
    validate_document(doc, "dataset", token="APG_DATASET_INVALID")
    data = doc.data
    where = _not_json(data, [])
    if where is not None:
        parts, value = where
        # YAML reads e.g. 2026-01-01 as a date: it has no canonical JSON, so no task hash.
        raise ApgError("APG_DATASET_INVALID", f"{doc.where(parts)}: {value!r} is not a JSON value "
                       "(a string, number, boolean, null, list or mapping with string keys); quote it")
    seen: dict[str, int] = {}
    for index, task in enumerate(data["tasks"]):
        if task["id"] in seen:
            raise ApgError("APG_DATASET_INVALID", f"{doc.where(['tasks', index, 'id'])}: task id "
                           f"{task['id']!r} repeats tasks[{seen[task['id']]}]")
        seen[task["id"]] = index
        _check_patterns(task, index, doc)
    if not _unchanged(path, raw):
        # dataset_sha256 and the parsed tasks must come from the same bytes.
        raise ApgError("APG_DATASET_INVALID", f"{path}: changed while it was being read; try again")
    tasks = tuple(Task(id=str(t["id"]), data=t) for t in data["tasks"])
    dataset = Dataset(
        path=path,
        name=str(data["dataset"]),
        version=int(data["version"]),
        sha256=hashlib.sha256(raw).hexdigest(),
        tasks=tasks,
        warnings=tuple(w for t in tasks for w in tie_warnings(
            t.id, t.checks, t.reference_steps, _shipped_fixtures(t.fixtures))),
    )
    return dataset, doc


def _check_patterns(task: dict[str, Any], index: int, doc: YamlDocument) -> None:
    """A ``commands`` behaviour's pattern must compile, or the grade would fail on it later
    (the task's own and each turn's); a task with a ``final`` block has no ``checks`` beside it."""
    if "final" in task and "checks" in task:
        raise ApgError("APG_DATASET_INVALID", f"{doc.where(['tasks', index, 'checks'])}: a task "
                       "with a final block grades final.checks; move these checks there")
    places: list[list[str | int]] = [["tasks", index, "behaviour"]]
    places += [["tasks", index, "turns", n, "behaviour"] for n in range(len(task.get("turns") or []))]
    for place in places:
        entries = task.get("behaviour") if len(place) == 3 else task["turns"][place[3]].get("behaviour")
        for number, entry in enumerate(entries or []):
            rule = "must" if "must" in entry else "must_not"
            if entry["kind"] != "commands":
                continue
            try:
                re.compile(entry[rule])
            except re.error as exc:
                raise ApgError("APG_DATASET_INVALID", f"{doc.where([*place, number, rule])}: "
                               f"{entry[rule]!r} is not a regular expression: {exc}") from None


def _shipped_fixtures(names: list[str]) -> list[Path]:
    """The shipped fixture directories of ``names`` (a project's own fixtures are not known here)."""
    root = project_dir("fixtures")
    return [root / f"fixture_{n}" for n in names if (root / f"fixture_{n}" / "recipe.yml").is_file()]


def _unchanged(path: Path, raw: bytes) -> bool:
    try:
        return path.read_bytes() == raw
    except OSError:
        return False


def _not_json(value: Any, parts: list[str | int]) -> tuple[list[str | int], Any] | None:
    """The path and value of the first thing in ``value`` that JSON cannot represent."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return parts, key
            found = _not_json(item, [*parts, key])
            if found is not None:
                return found
        return None
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _not_json(item, [*parts, index])
            if found is not None:
                return found
        return None
    if value is None or isinstance(value, (str, bool, int)):
        return None
    if isinstance(value, float) and math.isfinite(value):
        return None
    return parts, value


def resolve_task(task_id: str, reference: str | None, approot: Path,
                 settings: Settings = DEFAULT_SETTINGS) -> tuple[Dataset, Task]:
    """The one loader run and grade share."""
    dataset = load_dataset(resolve_dataset_path(reference, approot, settings))
    return dataset, dataset.task(task_id)
