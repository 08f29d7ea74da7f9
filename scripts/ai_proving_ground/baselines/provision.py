"""Provision: apply the base recipe and the fixtures, then capture the baseline for the set key.

The pair is the database dump and the git tag; the metadata records the tag's commit and the
bed's snapshot (``bed.<key>.json``) records the whole bed, so a dump with both is complete: a
deleted or moved tag is pointed back at that commit (``APG_PROVISION_TAG_RESTORED``), never
recaptured from the bed as an attempt may have left it. Capture order makes a crash safe: the old
metadata and snapshot go first, then the sidecars, the dump, the new metadata, the tag, the
snapshot (it holds .git, tag included); a crash before the snapshot leaves no complete baseline,
and the next provision captures it again.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ai_proving_ground.baselines import (
    config_export,
    content_counts,
    grader_tree,
    public_files,
    snapshot,
    versions,
)
from ai_proving_ground.baselines.locking import bed_lock
from ai_proving_ground.baselines.store import Baseline, BaselineRecord, record_driver
from ai_proving_ground.baselines.tree import (
    create_tag,
    dirty_paths,
    head_commit,
    require_repository,
    settle_tag,
    untracked_paths,
)
from ai_proving_ground.errors import ApgError
from ai_proving_ground.faults import crashpoint
from ai_proving_ground.fixtures import FixtureSet, load_set
from ai_proving_ground.fsutil import atomic_write_text
from ai_proving_ground.paths import BASE_RECIPE_NAME, base_recipe_dir
from ai_proving_ground.records import write_record
from ai_proving_ground.report import say
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.sites.base import SiteDriver, StateQuery


def recapture_commands(approot: Path, baseline: Baseline, fixture_set: FixtureSet) -> str:
    """Shell commands an operator can paste: every path and name quoted."""
    names = " ".join(fixture_set.names)
    bed, tag = shlex.quote(str(approot)), shlex.quote(baseline.tag)
    return (f"rm {shlex.quote(str(baseline.dump))} && git -C {bed} tag -d {tag} && "
            f"apg provision --approot {bed} {names}")


def base_recipe_for(approot: Path) -> Path:
    """The bed's own copy of the base recipe when it has one (it is tracked and restored)."""
    in_bed = approot / "recipes" / BASE_RECIPE_NAME
    return in_bed if (in_bed / "recipe.yml").is_file() else base_recipe_dir()


@dataclass(frozen=True)
class ProvisionOutcome:
    """What provision did: the set's baseline pair, and whether it existed already (``noop``)."""

    set_key: str
    fixtures: list[str]  # name@version pins
    dump: str
    tag: str
    noop: bool


def provision(approot: Path, names: Sequence[str], driver: SiteDriver,
              settings: Settings = DEFAULT_SETTINGS) -> ProvisionOutcome:
    """Apply and capture, or report the existing baseline."""
    fixture_set = load_set(names, approot, settings=settings)
    baseline = Baseline.of(approot, fixture_set.key, settings)
    require_repository(approot)
    with bed_lock(baseline.lock, "provision", settings.lock_wait_seconds):
        _check_untracked(approot, settings)
        record_driver(approot, driver.name)
        # A recorded commit and snapshot complete the baseline: a deleted tag is put back, never
        # recaptured from the bed as an attempt may have left it.
        if baseline.dump.is_file() and snapshot.recorded(baseline) and \
                settle_tag(approot, baseline, "APG_PROVISION_TAG_RESTORED"):
            _check_stale(approot, baseline, fixture_set, driver, settings)
            say("APG_PROVISION_NOOP", f"baseline {fixture_set.key} exists "
                f"({baseline.dump.name} + tag {baseline.tag}); nothing to do")
            return _outcome(baseline, fixture_set, noop=True)
        dirty = dirty_paths(approot)
        if dirty:
            raise ApgError("APG_PROVISION_DIRTY", "uncommitted changes under the tracked paths "
                           f"would not be in the baseline tag: {', '.join(dirty)}; commit them "
                           "(or discard them) and provision again")
        driver.rebuild_caches()
        driver.apply_recipe(base_recipe_for(approot))
        for fixture in fixture_set.fixtures:
            driver.apply_recipe(fixture.directory)
        crashpoint("provision.recipes-applied")
        capture(approot, baseline, fixture_set, driver)
        say("APG_PROVISION_OK", f"baseline {fixture_set.key} captured: {baseline.dump} + tag "
            f"{baseline.tag}")
        return _outcome(baseline, fixture_set, noop=False)


def capture(approot: Path, baseline: Baseline, fixture_set: FixtureSet,
            driver: SiteDriver) -> None:
    """Write every baseline file new-then-rename, the tag and then the bed's snapshot last."""
    baseline.directory.mkdir(parents=True, exist_ok=True)
    # An earlier capture's metadata names its commit, its snapshot the bed: beside a new dump
    # either would look complete.
    baseline.metadata.unlink(missing_ok=True)
    baseline.bed_snapshot.unlink(missing_ok=True)
    public_files.capture(driver.public_files_dir(), approot,
                         public_files.snapshot_paths(baseline.directory, fixture_set.key))
    crashpoint("provision.files-captured")
    files = grader_tree.fingerprint(approot, fixture_set)
    atomic_write_text(baseline.grader_files, grader_tree.render_listing(files))
    atomic_write_text(baseline.grader_sha256, grader_tree.tree_sha256(files) + "\n")
    crashpoint("provision.grader-recorded")
    live = driver.read_state(StateQuery(versions=True)).versions
    assert live is not None
    write_record(baseline.versions, versions.record(live))
    crashpoint("provision.versions-recorded")
    content_counts.capture(baseline, driver, config_export.capture(baseline, driver))
    driver.dump_database(baseline.dump)
    crashpoint("provision.dump-written")
    commit = head_commit(approot)  # recorded first: reset restores it, whatever the tag says later
    write_record(baseline.metadata, BaselineRecord(
        format=1, set_key=fixture_set.key, canonical=fixture_set.canonical,
        fixtures=fixture_set.names, tag=baseline.tag, captured_at=int(time.time()),
        driver=driver.name, commit=commit))
    crashpoint("provision.metadata-written")
    create_tag(approot, baseline.tag, commit)
    crashpoint("provision.tagged")
    snapshot.capture(approot, baseline, driver)
    crashpoint("provision.bed-recorded")


def _check_untracked(approot: Path, settings: Settings) -> None:
    problems = untracked_paths(approot)
    if not problems:
        return
    if settings.allow_untracked:
        say("APG_PROVISION_UNTRACKED", "allowed by AI_PG_ALLOW_UNTRACKED=1; reset will restore "
            f"only the database for: {'; '.join(problems)}")
        return
    raise ApgError("APG_PROVISION_UNTRACKED", "populated paths with no tracked files: "
                   f"{'; '.join(problems)}. Track them (fix the ignore rule, git add, commit) or "
                   "set AI_PG_ALLOW_UNTRACKED=1 to accept database-only restoration")


def _check_stale(approot: Path, baseline: Baseline, fixture_set: FixtureSet,
                 driver: SiteDriver, settings: Settings) -> None:
    recorded = versions.load(baseline.versions)
    if recorded is None:
        say("APG_PROVISION_VERSIONS_UNRECORDED", f"{baseline.versions.name} is missing; this "
            "baseline predates version manifests. To record one: "
            + recapture_commands(approot, baseline, fixture_set))
        return
    live = driver.read_state(StateQuery(versions=True)).versions
    assert live is not None
    differences = versions.code_differences(recorded, versions.record(live))
    if not differences:
        return
    listing = versions.describe_differences(differences)
    if settings.allow_stale_baseline:
        say("APG_PROVISION_STALE_BASELINE", f"allowed by AI_PG_ALLOW_STALE_BASELINE=1, the "
            f"baseline is kept as it is: {listing}")
        return
    raise ApgError("APG_PROVISION_STALE_BASELINE", f"code differs from baseline "
                   f"{fixture_set.key}: {listing}. Bring the database up to date (apg site "
                   "updatedb), check the fixture state, then recapture: "
                   + recapture_commands(approot, baseline, fixture_set))


def _outcome(baseline: Baseline, fixture_set: FixtureSet, noop: bool) -> ProvisionOutcome:
    return ProvisionOutcome(set_key=fixture_set.key, fixtures=[f.pin for f in fixture_set.fixtures],
                            dump=str(baseline.dump), tag=baseline.tag, noop=noop)
