"""The beds a task is proven on: a provisioned template of the task's fixtures, a clone of it
(cheap: the embedded site is a directory) that every build is graded on after a fresh reset, and
the reference applied as the oracle applies it: each step through the bed's site command line,
a child process, stopping at the first that fails. A DDEV bed the operator provisioned serves
the same way (:mod:`.ddev_bed`); :class:`Bed` is what the runner asks of either.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ai_proving_ground import proc
from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.baselines.reset import require_baseline, reset
from ai_proving_ground.baselines.tree import BaselineTree, read_tree
from ai_proving_ground.bed import clone_bed, init_bed
from ai_proving_ground.errors import ApgError
from ai_proving_ground.mutation.state import SiteState, Writes, apply_writes, read_site
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.base import SiteDriver
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.site_access import site_command

STEP_TIMEOUT_S = 120.0


def bed_settings(settings: Settings, dataset: Path, fixtures: Sequence[str],
                 project: Path) -> Settings:
    """The caller's settings for a bed of our own: its baseline lives in it, the dataset is the
    one being proven, nothing is stored in the results store, and fixtures are found where the
    ``project`` finds them (its ``AI_PG_FIXTURE_PATH`` entries and ``recipes/``, made absolute:
    relative to a temporary bed they would name nothing)."""
    entries = [entry if os.path.isabs(entry) else str(project / entry)
               for entry in settings.fixture_path]
    lookup = (*entries, str(project / "recipes"))
    return dataclasses.replace(settings, approot=None, baseline_dir=None, dataset=str(dataset),
                               fixtures=tuple(fixtures), fixture_path=lookup, no_import=True,
                               site_driver=None)


def ddev_bed_settings(settings: Settings, dataset: Path, fixtures: Sequence[str],
                      project: Path) -> Settings:
    """:func:`bed_settings` for the operator's DDEV bed: its baseline is where the operator's
    settings put it (by default under HOME, outside the project), not in the bed."""
    return dataclasses.replace(bed_settings(settings, dataset, fixtures, project),
                               baseline_dir=settings.baseline_dir)


class Bed(Protocol):
    """A bed every build is graded on: reset, built, read and written through its site."""

    kind: str  # "embedded" or "ddev", as reports name it
    path: Path
    settings: Settings

    @property
    def site(self) -> SiteDriver: ...

    def fresh(self) -> SiteDriver:
        """Reset to the baseline (a bed that does not reset proves nothing: APG_MUTATE_BED)."""

    def read(self) -> SiteState:
        """Every config object and entity of the site."""

    def read_names(self, names: Iterable[str]) -> SiteState:
        """At least the named config objects and entity UUIDs (what a mutant's behaviour reads)."""

    def write(self, writes: Writes) -> None:
        """Make a mutant's writes; a refusal raises the site's ApgError (a stillborn mutant)."""

    def apply_steps(self, steps: Sequence[Sequence[str]], env: Mapping[str, str]) -> str | None:
        """Run the reference's steps as the oracle does; None, or why the first one failed."""


def apply_steps(path: Path, steps: Sequence[Sequence[str]], env: Mapping[str, str]) -> str | None:
    """Run the steps through the bed's site command line (``apg site``, or ``apg drush`` on a
    DDEV project), as the oracle does; None, or why the first failing step failed."""
    command = site_command(path)
    for number, step in enumerate(steps, start=1):
        done = proc.run([*command, "--approot", str(path), *step], cwd=path,
                        env=env, timeout_s=STEP_TIMEOUT_S)
        if not done.ok:
            tail = (done.error or done.stderr.decode(errors="replace")).strip()[-500:]
            return f"step {number}/{len(steps)} ({step[0]}) failed: {tail}"
    return None


@dataclass
class ProvingBed:
    """A clone of a provisioned template, reset before every build."""

    kind = "embedded"
    path: Path
    fixtures: tuple[str, ...]
    settings: Settings
    tree: BaselineTree  # the baseline tag's files, read once: reset then runs no git

    @classmethod
    def make(cls, scratch: Path, fixtures: Sequence[str], settings: Settings) -> ProvingBed:
        template, path = scratch / "template", scratch / "bed"
        try:
            site = init_bed(template, fixtures, settings)
            provision(template, fixtures, site, settings)
            clone_bed(template, path, settings)
            baseline = require_baseline(path, fixtures, settings)
            tree = read_tree(path, baseline.tag)
        except OSError as exc:
            raise ApgError("APG_MUTATE_BED", f"could not make a bed in {scratch}: {exc}") from None
        return cls(path=path, fixtures=tuple(fixtures), settings=settings, tree=tree)

    @property
    def site(self) -> EmbeddedSite:
        return EmbeddedSite(self.path)

    def fresh(self) -> EmbeddedSite:
        """Reset to the baseline; a bed that does not reset proves nothing."""
        outcome = reset(self.path, self.fixtures, self.site, self.settings, self.tree)
        if outcome.failures:
            raise ApgError("APG_MUTATE_BED", f"{self.path} does not reset: "
                           f"{'; '.join(outcome.failures)}")
        return self.site

    def read(self) -> SiteState:
        return read_site(self.site)

    def read_names(self, names: Iterable[str]) -> SiteState:
        return read_site(self.site)  # everything: one local read costs less than choosing

    def write(self, writes: Writes) -> None:
        apply_writes(self.site, writes)

    def apply_steps(self, steps: Sequence[Sequence[str]], env: Mapping[str, str]) -> str | None:
        return apply_steps(self.path, steps, env)
