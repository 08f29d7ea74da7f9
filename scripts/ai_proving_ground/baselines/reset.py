"""Reset: restore a set's baseline, then prove the restored bed is fit to grade.

Order: the whole bed outside the keep-list from the snapshot the baseline directory recorded
(:mod:`baselines.sweep`; no git, so the tag the bed names now changes nothing), the database,
the public files, a cache rebuild; then the checks. Nothing reset reads is written by reset, so
a killed reset is repaired by the next one; until then a marker file makes the doctor fail
instead of passing a half-restored bed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ai_proving_ground.baselines import (
    grader_tree,
    public_files,
    public_files_restore,
    snapshot,
    sweep,
    versions,
)
from ai_proving_ground.baselines.locking import bed_lock
from ai_proving_ground.baselines.store import Baseline, read_metadata, repair_runs_dir
from ai_proving_ground.baselines.tree import BaselineTree, tag_ref
from ai_proving_ground.errors import ApgError
from ai_proving_ground.faults import crashpoint
from ai_proving_ground.fixtures import FixtureSet, load_set
from ai_proving_ground.fsutil import atomic_write_text, is_within
from ai_proving_ground.gitutil import read_ref
from ai_proving_ground.report import say
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.sites.base import SiteDriver, StateQuery


@dataclass
class ResetOutcome:
    """What reset did and what its checks found; ``failures`` non-empty means do not grade."""

    set_key: str
    removed: list[str] = field(default_factory=list)  # not in the baseline: the top of each
    restored: list[str] = field(default_factory=list)  # differed from the baseline, rewritten
    warnings: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def reset(approot: Path, names: Sequence[str], driver: SiteDriver,
          settings: Settings = DEFAULT_SETTINGS, tree: BaselineTree | None = None,
          bed: snapshot.BedSnapshot | None = None) -> ResetOutcome:
    """Restore ``names``' baseline. ``bed``: the set's snapshot as the caller read it once
    (:func:`read_snapshot`; a campaign, for every attempt of a bed). Reset runs no child process
    of its own. ``tree``, accepted from callers that read the tag's files before, is checked to
    be this set's and otherwise unused: the snapshot holds the tracked paths too."""
    fixture_set = load_set(names, approot, settings=settings)
    baseline = Baseline.of(approot, fixture_set.key, settings)
    if tree is not None and tree.tag != baseline.tag:
        raise ApgError("APG_RESET_NO_BASELINE", f"the tree given is {tree.tag}'s, not "
                       f"{baseline.tag}'s (set {fixture_set.key})")
    with bed_lock(baseline.lock, "reset", settings.lock_wait_seconds):
        _require_baseline(approot, baseline, fixture_set)
        target = bed if bed is not None else snapshot.load(baseline)
        if target.set_key != fixture_set.key:
            raise ApgError("APG_RESET_NO_BASELINE", f"the snapshot given is set "
                           f"{target.set_key}'s, not {fixture_set.key}'s")
        files_snapshot = public_files.snapshot_paths(baseline.directory, fixture_set.key)
        recorded_files = _verify_files(files_snapshot)
        outcome = ResetOutcome(fixture_set.key)
        repaired = repair_runs_dir(approot, settings)
        if repaired is not None:
            _warn(outcome, "APG_RESET_REPAIRED", f"{repaired} was a link or a file; it is a "
                  "folder again (what it pointed to was left alone)")
        moved = _tag_moved(approot, baseline)  # before the marker: broken metadata is refused
        atomic_write_text(baseline.reset_marker, f"reset of {fixture_set.key} under way\n")
        crashpoint("reset.marked")
        staged = _stage_files(driver, approot, files_snapshot, baseline) if recorded_files \
            else None
        try:
            swept = sweep.sweep(approot, target, snapshot.keep_for(approot, driver, baseline))
            outcome.removed, outcome.restored = swept.removed, swept.restored
            if moved is not None:
                say("APG_RESET_TAG_RESTORED", f"tag {baseline.tag} no longer named the baseline "
                    f"commit {moved}; the bed's .git is the snapshot's again")
            crashpoint("reset.tree-restored")
            driver.restore_database(baseline.dump)
            crashpoint("reset.database-restored")
        except BaseException:
            if staged is not None:
                staged.discard()  # the marker stays: this bed is half-restored
            raise
        if staged is not None:
            staged.commit()
        else:
            _warn(outcome, "APG_RESET_FILES_UNRECORDED", "this baseline has no public-files "
                  "snapshot; files were not restored. Recapture the baseline to enable it")
        crashpoint("reset.files-restored")
        _report_removed(outcome)
        private = driver.private_files_dir()
        if private is not None and not is_within(private, approot):
            _warn(outcome, "APG_RESET_PRIVATE_FILES_NOT_RESTORED", str(private))
        driver.host_files_changed()  # the tree and public files were restored on the host
        driver.rebuild_caches()
        crashpoint("reset.caches-rebuilt")
        baseline.reset_marker.unlink()
        _check_grader(approot, baseline, fixture_set, outcome)
        _check_code_and_updates(baseline, driver, outcome)
        if not outcome.failures:
            say("APG_RESET_OK", f"baseline {fixture_set.key} restored")
        return outcome


def read_snapshot(approot: Path, names: Sequence[str],
                  settings: Settings = DEFAULT_SETTINGS) -> snapshot.BedSnapshot:
    """The set's whole-bed snapshot, read once, for :func:`reset`'s ``bed`` (a campaign reads
    it when it escrows a job's bed, so each attempt's reset reads no listing)."""
    return snapshot.load(require_baseline(approot, names, settings))


def _tag_moved(approot: Path, baseline: Baseline) -> str | None:
    """The recorded commit when the bed's tag does not name it (deleted, moved, or a .git that
    cannot be read: a link, a gitfile), read without git; else None. The sweep restores .git
    either way: this only says so."""
    recorded = read_metadata(baseline).commit
    if recorded is None:
        return None  # a baseline recorded before commits were
    try:
        return None if read_ref(approot, tag_ref(baseline.tag)) == recorded else recorded
    except ApgError:
        return recorded


def _report_removed(outcome: ResetOutcome) -> None:
    if not outcome.removed:
        return
    shown = outcome.removed[:20]
    more = f" and {len(outcome.removed) - len(shown)} more" if len(outcome.removed) > 20 else ""
    say("APG_RESET_REMOVED", f"{len(outcome.removed)} path(s) not in the baseline: "
        f"{', '.join(shown)}{more}")


def _warn(outcome: ResetOutcome, token: str, message: str) -> None:
    say(token, message)
    outcome.warnings.append(token)


def _fail(outcome: ResetOutcome, token: str, message: str) -> None:
    say(token, message)
    outcome.failures.append(token)


def require_baseline(approot: Path, names: Sequence[str],
                     settings: Settings = DEFAULT_SETTINGS) -> Baseline:
    """The complete baseline ``approot`` holds for the set ``names``; else
    ``APG_RESET_NO_BASELINE``, naming what is missing and the command that captures it."""
    fixture_set = load_set(names, approot, settings=settings)
    baseline = Baseline.of(approot, fixture_set.key, settings)
    _require_baseline(approot, baseline, fixture_set)
    return baseline


def _require_baseline(approot: Path, baseline: Baseline, fixture_set: FixtureSet) -> None:
    missing = []
    if not baseline.dump.is_file():
        missing.append(f"dump {baseline.dump}")
    if not snapshot.recorded(baseline):
        missing.append(f"bed snapshot {baseline.bed_snapshot}")
    if missing:
        raise ApgError("APG_RESET_NO_BASELINE", f"no complete baseline for set "
                       f"{fixture_set.key} ({fixture_set.canonical}): missing "
                       f"{' and '.join(missing)}. Capture it with: apg provision --approot "
                       f"{approot} {' '.join(fixture_set.names)}")


def _stage_files(driver: SiteDriver, approot: Path, snapshot: public_files.FilesSnapshot,
                 baseline: Baseline) -> public_files_restore.StagedFiles:
    """Check and extract the files snapshot before anything is restored; a refusal leaves the bed
    as it was (the marker written just before is taken back)."""
    try:
        return public_files_restore.stage(driver.public_files_dir(), approot, snapshot)
    except BaseException:
        baseline.reset_marker.unlink(missing_ok=True)
        raise


def _verify_files(snapshot: public_files.FilesSnapshot) -> bool:
    """True when a snapshot exists and is intact; a changed one is refused before any change."""
    try:
        public_files.verify(snapshot)
    except ApgError as exc:
        if exc.token == "APG_RESET_FILES_UNRECORDED":
            return False
        raise
    return True


def _check_grader(approot: Path, baseline: Baseline, fixture_set: FixtureSet,
                  outcome: ResetOutcome) -> None:
    if not baseline.grader_files.is_file():
        _warn(outcome, "APG_RESET_GRADER_UNRECORDED", "this baseline has no grader fingerprint; "
              "re-provision to record one")
        return
    recorded = grader_tree.parse_listing(baseline.grader_files.read_text(encoding="utf-8"))
    changed = grader_tree.changes(recorded, grader_tree.fingerprint(approot, fixture_set))
    if changed:
        _fail(outcome, "APG_RESET_GRADER_DRIFT", "judging code differs from the baseline; do not "
              "grade this bed: " + "; ".join(changed))


def _check_code_and_updates(baseline: Baseline, driver: SiteDriver,
                            outcome: ResetOutcome) -> None:
    answer = driver.read_state(StateQuery(versions=True, pending_updates=True))
    recorded = versions.load(baseline.versions)
    if recorded is not None and answer.versions is not None:
        differences = versions.code_differences(recorded, versions.record(answer.versions))
        if differences:
            _warn(outcome, "APG_RESET_CODE_DRIFT", "code differs from the baseline's: "
                  + versions.describe_differences(differences))
    if answer.pending_updates:
        listing = ", ".join(f"{p.module}: {p.update_id}" for p in answer.pending_updates)
        _fail(outcome, "APG_RESET_PENDING_UPDATES", f"the restored database is behind the code "
              f"({listing}); updates are never run automatically. Run them deliberately, check "
              "the fixtures, then recapture the baseline")
