"""Beds for the task tests: the shipped fixture set applied, copied per test.

``fixtures_bed`` is a copy of a session bed made by ``apg bed init DIR kb_docs canvas_home``;
``provisioned_fixtures_bed`` is a fresh such bed provisioned for that set (its grader fingerprint
is recorded by code that is live when the test runs). ``provisioned_set(names, target)``
copies a bed made and provisioned once per session for any fixture set (one provision a set).
``write_run_record`` writes a ``runs/<run-id>/run.json`` the way ``apg run`` records one.
``check_envelope_schemas`` asserts an envelope meets the project's schema and, when the
reference copy exists, the official every_eval_ever 0.2.2 schema, and in the eee nox session
the published every_eval_ever package.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import eee_official
from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.baselines.store import baseline_dir
from ai_proving_ground.bed import init_bed
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.schemas import schema_errors
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.dataset import load_dataset

FIXTURE_SET = ["kb_docs", "canvas_home"]
RUN_ID = "apg-run-20260718T101500Z-a1b2c3"
SHIPPED_DATASET = PROJECT_ROOT / "datasets" / "build_tasks.yml"


@pytest.fixture
def provisioned_fixtures_bed(fixtures_bed: Path) -> Path:
    """``fixtures_bed`` provisioned for kb_docs + canvas_home (baseline and grader fingerprint)."""
    provision(fixtures_bed, list(FIXTURE_SET), EmbeddedSite(fixtures_bed))
    return fixtures_bed


class ProvisionedSets:
    """``provisioned_set(names, target)``: a copy of a session bed made by ``apg bed init`` with
    ``names`` and provisioned for them; each set is built once, however many tests use it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.templates: dict[tuple[str, ...], Path] = {}

    def __call__(self, names: Sequence[str], target: Path) -> Path:
        key = tuple(sorted(names))
        if key not in self.templates:
            template = self.root / "-".join(key or ("base",)) / "bed"
            init_bed(template, list(key))
            provision(template, list(key), EmbeddedSite(template))
            self.templates[key] = template
        shutil.copytree(self.templates[key], target, symlinks=True)
        return target


@pytest.fixture(scope="session")
def provisioned_set(tmp_path_factory: pytest.TempPathFactory) -> ProvisionedSets:
    return ProvisionedSets(tmp_path_factory.mktemp("provisioned_sets"))


RunWriter = Callable[..., Path]


def write_run(approot: Path, run_id: str = RUN_ID, **fields: Any) -> Path:
    """``runs/<run_id>/run.json`` under the baseline directory; ``fields`` override the defaults."""
    task_id = fields.get("task_id", "dv01_view_build")
    record: dict[str, Any] = {
        "run_id": run_id, "status": "attempted", "task_id": task_id,
        "task_sha256": load_dataset(SHIPPED_DATASET).task(task_id).sha256,
        "model": "anthropic/claude-sonnet-4", "started_at": "2026-07-18T10:15:00.000Z",
        "finished_at": "2026-07-18T10:20:00.000Z", "adapter_exit_code": 0, "attempted": True,
        "dataset": {"name": "build_tasks", "path": str(SHIPPED_DATASET), "sha256": "0" * 64,
                    "version": 1},
        "adapter": {"name": "nop"}, "approot": str(approot), "prompt_sha256": "0" * 64,
        "preflight": {"checked": False}, "transcripts": {"stdout": "stdout.log"},
        "timeout_s": None,
    }
    record.update(fields)
    run_dir = baseline_dir(approot) / "runs" / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "run.json").write_text(json.dumps(record), encoding="utf-8")
    return run_dir


@pytest.fixture
def write_run_record() -> RunWriter:
    return write_run


# The official schema, relative to the repository root; absent outside the workspace.
OFFICIAL_SCHEMA = (Path(__file__).resolve().parents[2] / ".." / "shared" / "reference"
                   / "every_eval_ever" / "eval.schema.json")


def check_envelope(envelope: Any) -> None:
    """Both schemas accept ``envelope`` (the official one only where it exists)."""
    ours = [f"{list(e.absolute_path)}: {e.message}" for e in schema_errors(envelope, "envelope")]
    assert ours == []
    if OFFICIAL_SCHEMA.is_file():
        schema = json.loads(OFFICIAL_SCHEMA.read_text(encoding="utf-8"))
        validator = jsonschema.Draft7Validator(schema)
        official = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(envelope)]
        assert official == []
    eee_official.check(envelope)  # the published package too, in the eee nox session


@pytest.fixture
def check_envelope_schemas() -> Callable[[Any], None]:
    return check_envelope
