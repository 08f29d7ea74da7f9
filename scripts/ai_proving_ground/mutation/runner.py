"""``apg task mutate``'s flow: nop and the reference graded on fresh resets, then every mutant.

1. a bed of the task's fixtures (:mod:`.beds`); its baseline state read;
2. nop: the fresh bed graded as it is (it must fail);
3. the reference applied as the oracle applies it, its state read, what it changed listed and
   its behaviour recorded; the database dumped, so every mutant starts from exactly this state;
4. the mutants derived from it (:mod:`.registry`), each on a fresh reset with the reference's
   database restored and its writes made, its behaviour compared with the reference's
   (:mod:`.behaviour`: equal is ``equivalent``) and graded as ``apg grade`` grades (public checks
   and the hidden verifier);
5. the reference graded (it must pass).

The bed is an embedded one of our own, or the operator's provisioned DDEV bed
(``MutateOptions.ddev_bed``, :mod:`.ddev_bed`): the same steps through its driver, the same report.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ai_proving_ground import report
from ai_proving_ground.errors import ApgError
from ai_proving_ground.mutation.beds import Bed, ProvingBed, bed_settings, ddev_bed_settings
from ai_proving_ground.mutation.behaviour import PAGE, Behaviour, behaviour, served_paths
from ai_proving_ground.mutation.inputs import Inputs, view_inputs
from ai_proving_ground.mutation.registry import Context, Mutant, derive
from ai_proving_ground.mutation.result import (
    DEFAULT_THRESHOLD,
    UNPROVABLE,
    BuildResult,
    MutationReport,
)
from ai_proving_ground.mutation.views_ops import VIEW_PREFIX
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.embedded.router import rebuilds_router
from ai_proving_ground.tasks.dataset import Dataset, Task, resolve_task
from ai_proving_ground.tasks.grade import GradeRequest, grade

REFERENCE_DUMP = "reference.dump"


@dataclass(frozen=True)
class MutateOptions:
    task_id: str
    dataset: str | None
    approot: Path  # the project: a relative --dataset and its fixtures are found from it
    settings: Settings
    env: Mapping[str, str]  # the oracle's steps' environment (the edge's, child-safe)
    threshold: float = DEFAULT_THRESHOLD
    operators: tuple[str, ...] = ()  # operator name prefixes to derive; empty: every operator
    ddev_bed: Path | None = None  # a provisioned DDEV bed to prove on instead of an embedded one


def provable(task_id: str, dataset: str | None, approot: Path,
             settings: Settings) -> tuple[Dataset, Task]:
    """The task, refused (exit 2) when it has no checks or no reference to derive from."""
    found, task = resolve_task(task_id, dataset, approot, settings)
    if not task.checks:
        raise ApgError(UNPROVABLE, f"task {task.id} has no checks: nothing grades "
                       "a build; add checks to it in the dataset", exit_code=2)
    if not task.reference_steps:
        raise ApgError(UNPROVABLE, f"task {task.id} has no reference_solution: "
                       "wrong builds are derived from it; add one to the dataset", exit_code=2)
    return found, task


def mutate(options: MutateOptions) -> MutationReport:
    """Every build graded; the beds' own diagnostics (provision, each reset) are not the
    report's, so they stay out of the caller's streams."""
    dataset, task = provable(options.task_id, options.dataset, options.approot, options.settings)
    with report.redirected(io.StringIO(), io.StringIO()):
        return _mutate(options, dataset, task)


def _mutate(options: MutateOptions, dataset: Dataset, task: Task) -> MutationReport:
    with tempfile.TemporaryDirectory(prefix="apg-mutate-") as scratch:
        bed = _bed(options, dataset, task, Path(scratch))
        judge = Judge(dataset, task, bed, bed.settings)
        bed.fresh()
        baseline = bed.read()
        nop = judge.build("nop", "nop", "nothing done (the nop adapter)", "nop")
        bed.fresh()
        failure = bed.apply_steps(task.reference_steps, options.env)
        if failure is not None:
            raise ApgError("APG_MUTATE_REFERENCE_FAILED", f"task {task.id}'s reference solution "
                           f"does not apply on a fresh bed: {failure}")
        state = bed.read()
        changed = (*state.changed_config(baseline), *state.changed_entities(baseline))
        served = frozenset(served_paths({n: state.config.get(n) for n in changed},
                                        {u: state.entities.get(u) for u in changed}))
        expected = behaviour(bed.site, state, changed, served)
        # What a visitor may give the reference's views, chosen from the rows they list.
        inputs = view_inputs(state, changed, _view_rows(expected), task.checks)
        if inputs:
            expected = behaviour(bed.site, state, changed, served, inputs)
        context = Context(baseline=baseline, reference=state,
                          changed_config=tuple(state.changed_config(baseline)),
                          changed_entities=tuple(state.changed_entities(baseline)),
                          view_rows=_view_rows(expected))
        keep = options.operators
        mutants = derive(context, lambda name: not keep or name.startswith(keep))
        extra = {n for m in mutants for n in m.writes.names()} - set(changed)
        elsewhere = set().union(*(_paths(m) for m in mutants)) - served
        expected.update(behaviour(bed.site, state, extra, elsewhere))
        dump = Path(scratch) / REFERENCE_DUMP
        bed.site.dump_database(dump)
        reference = judge.build("reference", "reference", "the task's reference solution",
                                "reference")
        against = Reference(changed, served, inputs, expected,
                            rebuilds_router(task.reference_steps))
        results = [judge.mutant(mutant, dump, against) for mutant in mutants]
    return MutationReport(task_id=task.id, dataset=dataset.name, dataset_sha256=dataset.sha256,
                          task_sha256=task.sha256, threshold=options.threshold,
                          reference=reference, nop=nop, mutants=results, bed=bed.kind)


def _bed(options: MutateOptions, dataset: Dataset, task: Task, scratch: Path) -> Bed:
    if options.ddev_bed is not None:
        # Lazy for start-up time: the DDEV bed imports the ddev driver.
        from ai_proving_ground.mutation.ddev_bed import DdevBed

        return DdevBed.make(options.ddev_bed, task.fixtures, ddev_bed_settings(
            options.settings, dataset.path, task.fixtures, options.approot))
    settings = bed_settings(options.settings, dataset.path, task.fixtures, options.approot)
    return ProvingBed.make(scratch, task.fixtures, settings)


def _paths(mutant: Mutant) -> set[str]:
    """The paths a mutant's writes would serve."""
    return served_paths(mutant.writes.config, mutant.writes.entities)


def _view_rows(found: Behaviour) -> dict[tuple[str, str], tuple[str, ...]]:
    return {(name.removeprefix(VIEW_PREFIX), display): tuple(result["rows"])
            for name, displays in found.items()
            if name.startswith(VIEW_PREFIX) and isinstance(displays, dict)
            for display, result in displays.items() if isinstance(result, dict)}


@dataclass(frozen=True)
class Reference:
    """What a mutant is compared with: the objects the reference changed, the paths they serve,
    the inputs its views get, its behaviour (the mutants' own objects' included), and whether
    its steps rebuild the router (a ``cr``): then a mutant, the reference's build with one thing
    changed, is followed by the same rebuild, or a view it moves or disables keeps its route."""

    changed: tuple[str, ...]
    served: frozenset[str]
    inputs: Inputs
    behaviour: Behaviour
    rebuilds_router: bool = False


@dataclass
class Judge:
    """Grades the bed as ``apg grade`` does: the public checks, then the hidden verifier."""

    dataset: Dataset
    task: Task
    bed: Bed
    settings: Settings

    def verdict(self) -> tuple[str | None, list[str], str]:
        """(pass/fail or None, the failed checks, why it could not be graded)."""
        request = GradeRequest(approot=self.bed.path, task_id=self.task.id,
                               dataset=str(self.dataset.path), settings=self.settings)
        # A build's diagnostics are not the report's: they would bury it.
        with report.redirected(io.StringIO(), io.StringIO()):
            try:
                envelope = grade(request, self.bed.site)
            except ApgError as exc:
                return None, [], str(exc)
        details = envelope["evaluation_results"][0]["score_details"]["details"]
        failed = [c for c in str(details["failed_checks"]).split(", ") if c]
        if details.get("hidden_verifier") == "fail":
            failed.append("hidden-verifier")
        return str(details["verdict"]), failed, ""

    def build(self, name: str, operator: str, description: str, status: str) -> BuildResult:
        verdict, failed, message = self.verdict()
        return BuildResult(name=name, operator=operator, description=description,
                           status=status if verdict else "error", verdict=verdict,
                           failed_checks=failed, message=message)

    def mutant(self, mutant: Mutant, dump: Path, reference: Reference) -> BuildResult:
        site = self.bed.fresh()
        site.restore_database(dump)
        base = BuildResult(name=mutant.name, operator=mutant.operator,
                           description=mutant.description, status="error")
        try:
            self.bed.write(mutant.writes)
        except ApgError as exc:  # the site refuses it, as it would refuse an agent's write
            return dataclasses.replace(base, status="stillborn", message=str(exc))
        if reference.rebuilds_router:
            # A cache rebuild the mutant's config makes fail leaves the router as it was, as
            # on Drupal; the build is graded as it stands, as an agent's would be.
            with contextlib.suppress(ApgError):
                site.rebuild_caches()
        names = {*reference.changed, *mutant.writes.names()}
        paths = reference.served | _paths(mutant)
        found = behaviour(site, self.bed.read_names(names), names, paths, reference.inputs)
        same = found == {key: reference.behaviour.get(key)
                         for key in [*names, *(PAGE + p for p in paths)]}
        verdict, failed, message = self.verdict()
        if verdict is None:
            status = "error"
        elif same:
            status = "equivalent"
        else:
            status = "killed" if verdict == "fail" else "survived"
        return dataclasses.replace(base, status=status, verdict=verdict, failed_checks=failed,
                                   message=message)
