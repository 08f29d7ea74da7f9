"""``apg task verify``: the reference through the whole path an agent's build takes, on a fresh
embedded bed and, when one is given, on a DDEV bed: reset, ``apg run --agent oracle`` (the
oracle adapter, confined as any adapter is), then ``apg grade --run`` (the public checks and
the hidden verifier). Each bed's verdict is one :class:`BedVerdict`; the task is verified when
every bed's run recorded an attempt and its grade passed.

The DDEV bed must already hold the task's fixture set's baseline (``apg provision``); it is
reset before the run and left as the reference made it, to be looked at.
"""

from __future__ import annotations

import dataclasses
import io
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ai_proving_ground import report
from ai_proving_ground.baselines.reset import reset
from ai_proving_ground.errors import ApgError
from ai_proving_ground.mutation.beds import ProvingBed, bed_settings, ddev_bed_settings
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.base import driver_for
from ai_proving_ground.tasks.dataset import Dataset, Task, resolve_task
from ai_proving_ground.tasks.grade import GradeRequest, grade
from ai_proving_ground.tasks.run import ORACLE, RunOptions, run_task


@dataclass(frozen=True)
class BedVerdict:
    """What the reference got on one bed."""

    bed: str  # "embedded" or "ddev"
    approot: str
    passed: bool
    run_id: str | None = None
    run_status: str | None = None
    verdict: str | None = None
    hidden_verifier: str | None = None
    failed_checks: list[str] = field(default_factory=list)
    message: str = ""

    def as_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def verify(task_id: str, dataset_ref: str | None, approot: Path, settings: Settings,
           ddev_bed: Path | None = None) -> list[BedVerdict]:
    dataset, task = resolve_task(task_id, dataset_ref, approot, settings)
    if not task.reference_steps:
        raise ApgError("APG_TASK_VERIFY_UNPROVABLE", f"task {task.id} has no reference_solution "
                       "to verify; add one to the dataset", exit_code=2)
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="apg-verify-") as scratch:
        bed_opts = bed_settings(settings, dataset.path, task.fixtures, approot)
        with report.redirected(io.StringIO(), io.StringIO()):
            bed = ProvingBed.make(Path(scratch), task.fixtures, bed_opts)
        verdicts.append(_on_bed("embedded", bed.path, dataset, task, bed_opts))
    if ddev_bed is not None:
        ddev_opts = ddev_bed_settings(settings, dataset.path, task.fixtures, approot)
        verdicts.append(_on_bed("ddev", ddev_bed, dataset, task, ddev_opts))
    return verdicts


def _on_bed(kind: str, approot: Path, dataset: Dataset, task: Task,
            settings: Settings) -> BedVerdict:
    base = BedVerdict(bed=kind, approot=str(approot), passed=False)
    log = io.StringIO()
    with report.redirected(log, log):  # the run's and grade's lines stay in the log
        try:
            outcome = reset(approot, task.fixtures, driver_for(approot, settings), settings)
            if outcome.failures:
                return dataclasses.replace(base, message="reset failed: " + "; ".join(outcome.failures))
            run = run_task(RunOptions(task_id=task.id, approot=approot, agent=ORACLE,
                                      dataset=str(dataset.path), settings=settings))
            run_id = str(run.record.get("run_id"))
            base = dataclasses.replace(base, run_id=run_id, run_status=run.record.get("status"))
            if run.exit_code != 0:
                return dataclasses.replace(base, message=f"the oracle's run recorded no attempt "
                                           f"(exit {run.exit_code}); see {run.run_dir}")
            envelope = grade(GradeRequest(approot=approot, task_id=task.id,
                                          dataset=str(dataset.path), run_id=run_id,
                                          settings=settings), driver_for(approot, settings))
        except ApgError as exc:
            return dataclasses.replace(base, message=str(exc))
    details = envelope["evaluation_results"][0]["score_details"]["details"]
    failed = [c for c in str(details["failed_checks"]).split(", ") if c]
    return dataclasses.replace(base, passed=details["verdict"] == "pass",
                               verdict=str(details["verdict"]), failed_checks=failed,
                               hidden_verifier=str(details.get("hidden_verifier")))
