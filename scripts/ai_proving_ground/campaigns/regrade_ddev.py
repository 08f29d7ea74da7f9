"""Re-grading attempts a DDEV campaign kept: each state loaded into a scratch DDEV project.

A DDEV attempt keeps drush's ``sql:dump --gzip`` and the judged folders' archive
(:mod:`campaigns.final_state`), which only a Drupal site can load. ``apg campaign regrade DIR
--ddev-bed PROJECT`` names such a site: a DDEV project the operator provisioned with the
campaign's fixture set (``apg provision --approot PROJECT <fixtures>``). :class:`ScratchProject`
checks it before anything is written (a DDEV project, :data:`BED_INVALID`; whose fixtures give
the campaign's set key and baseline tag, as ``campaign.json``'s provenance names them, with that
baseline captured, :data:`BED_MISMATCH`), then, per attempt: resets the project to its baseline
(the same reset a campaign's job gets, so nothing one attempt left reaches the next), empties the
judged folders and unpacks the archive there, imports the dump (``ddev import-db`` through the
driver's ``restore_database``), syncs Mutagen, and hands the project to the grader. No cache
rebuild: the dump holds the cache tables the attempt left, as its grade saw them. When the
regrade ends, by success or by an error, the project is reset to its baseline once more.

The project runs what the attempt left (its custom modules' code, its database) as the
campaign's own grade did, so it must be a scratch project, used by nothing else meanwhile. The
attempt's ``run.json`` is put in the project's runs folder for the grade to read and taken away
after. A reset that fails (the project's judging code or database differ from its baseline) stops
the regrade: :data:`BED_UNUSABLE`, nothing written.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ai_proving_ground.baselines.reset import require_baseline, reset
from ai_proving_ground.baselines.store import Baseline, runs_dir
from ai_proving_ground.campaigns import final_state
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixtures import load_set
from ai_proving_ground.layout import is_ddev_project
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.base import SiteDriver, get_driver

BED_INVALID = "APG_REGRADE_BED_INVALID"
BED_MISMATCH = "APG_REGRADE_BED_MISMATCH"
BED_UNUSABLE = "APG_REGRADE_BED_UNUSABLE"
DDEV = "ddev"  # the driver's name (sites.base.DRIVERS)


class ScratchProject:
    """The operator's scratch DDEV project, checked against the campaign's provenance."""

    def __init__(self, project: Path, fixtures: Sequence[str], provenance: Mapping[str, Any],
                 settings: Settings) -> None:
        self.project = project.absolute()
        self.fixtures = tuple(fixtures)
        # Pinned to ddev: nothing a restored state holds chooses the driver that judges it.
        self.settings = replace(settings, approot=None, site_driver=DDEV)
        self._site: SiteDriver | None = None
        # Reset before the first state (the project may hold anything) and after each one; a
        # regrade that loads no state leaves the project as it found it.
        self._at_baseline = False
        self._used = False
        self._runs: list[Path] = []
        self._check(provenance)

    def _check(self, provenance: Mapping[str, Any]) -> None:
        fixtures = " ".join(self.fixtures)
        provision = f"apg provision --approot {self.project} {fixtures}"
        if not is_ddev_project(self.project):
            raise ApgError(BED_INVALID, f"--ddev-bed {self.project} is not a DDEV project (no "
                           ".ddev/config.yaml); make a scratch project (ddev config "
                           f"--project-type=drupal10, ddev start), then: {provision}",
                           exit_code=2)
        wanted_key = provenance.get("set_key")
        wanted_tag = (provenance.get("baseline") or {}).get("tag")
        if not wanted_key or not wanted_tag:
            raise ApgError(BED_MISMATCH, "campaign.json's provenance names no set key and "
                           "baseline, so no scratch project can be shown to match the campaign's; "
                           "it cannot be regraded on DDEV", exit_code=2)
        try:
            key = load_set(self.fixtures, self.project, settings=self.settings).key
            tag = Baseline.of(self.project, key, self.settings).tag
        except ApgError as exc:
            raise ApgError(BED_MISMATCH, f"--ddev-bed {self.project}: the campaign's fixtures "
                           f"({fixtures}) do not load there: {exc}", exit_code=2) from None
        if (key, tag) != (wanted_key, wanted_tag):
            raise ApgError(BED_MISMATCH, f"--ddev-bed {self.project}: its fixtures give set {key} "
                           f"(baseline {tag}); the campaign ran set {wanted_key} (baseline "
                           f"{wanted_tag}). Give the project the campaign's fixture versions "
                           f"(its recipes/, AI_PG_FIXTURE_PATH), then: {provision}", exit_code=2)
        try:
            require_baseline(self.project, self.fixtures, self.settings)
        except ApgError as exc:
            raise ApgError(BED_MISMATCH, f"--ddev-bed {self.project} has no baseline of the "
                           f"campaign's set {key}: {exc.message}", exit_code=2) from None

    def site(self) -> SiteDriver:
        """One driver for the regrade (it reads ``ddev describe`` and ``core:status`` once)."""
        if self._site is None:
            self._site = get_driver(DDEV, self.project)
        return self._site

    def load(self, attempt_dir: Path, state: final_state.StateRecord,
             run: Path | None, run_id: str | None) -> None:
        """The project at its baseline, then holding ``state`` (and the attempt's run.json)."""
        self._used = True  # a reset that fails half-way is tried again when the regrade ends
        self._clean()
        self._at_baseline = False  # from here it holds (part of) an attempt's state
        site = self.site()
        _clear(self.project, final_state.judged_folders(self.project, site))
        final_state.restore_files(attempt_dir, state, self.project)
        site.host_files_changed()
        site.restore_database(final_state.state_dir(attempt_dir) / state.database)
        if run is not None and run_id is not None:
            target = runs_dir(self.project, self.settings) / run_id
            if not target.exists():  # never over a run the project recorded itself
                target.mkdir(parents=True)
                shutil.copyfile(run, target / "run.json")
                self._runs.append(target)

    def _clean(self) -> None:
        for folder in self._runs:
            shutil.rmtree(folder, ignore_errors=True)
        self._runs.clear()
        if self._at_baseline:
            return
        try:
            outcome = reset(self.project, self.fixtures, self.site(), self.settings)
        except ApgError as exc:
            raise ApgError(BED_UNUSABLE, f"--ddev-bed {self.project} could not be reset to its "
                           f"baseline: {exc}") from None
        if outcome.failures:
            raise ApgError(BED_UNUSABLE, f"--ddev-bed {self.project} does not reset cleanly "
                           f"({', '.join(outcome.failures)}); repair or re-provision it")
        self._at_baseline = True

    def finish(self) -> None:
        """Back to the baseline when a state was loaded since the last reset."""
        if self._used:
            self._clean()


@contextlib.contextmanager
def opened(project: Path | None, fixtures: Sequence[str], provenance: Mapping[str, Any],
           settings: Settings) -> Iterator[ScratchProject | None]:
    """The checked scratch project (None without ``--ddev-bed``), reset when the block ends."""
    if project is None:
        yield None
        return
    scratch = ScratchProject(project, fixtures, provenance, settings)
    try:
        yield scratch
    except BaseException:
        with contextlib.suppress(ApgError):  # the first error is the one to report
            scratch.finish()
        raise
    scratch.finish()


def _clear(bed: Path, folders: Sequence[str]) -> None:
    """Remove each folder (bed-relative) that is a real folder; a link is removed, never
    followed (a restored archive holds real folders only)."""
    for relative in folders:
        path = bed / relative
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(mode):
            shutil.rmtree(path)
        else:
            path.unlink()
