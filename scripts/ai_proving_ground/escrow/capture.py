"""Escrow: copy a set's baseline and the verifier outside the project; record the judging tree.

``escrow`` writes ``<escrow root>/<project>/<set key>/``: the baseline files (``baseline/``), a git
bundle of the baseline tag (``tag.bundle``), a copy of ``scripts/escrow_verify.py`` with a bash
launcher (``escrow-verify.sh``) and ``escrow.json``, the only metadata the verifier reads.

Everything is written into a temporary directory beside the set and swapped into place at the
end (an atomic exchange where the kernel offers one): a crash leaves the old set or the new one.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from ai_proving_ground.baselines import grader_tree
from ai_proving_ground.baselines.locking import bed_lock
from ai_proving_ground.baselines.public_files import snapshot_paths
from ai_proving_ground.baselines.store import Baseline
from ai_proving_ground.baselines.tree import recorded_commit, require_repository
from ai_proving_ground.errors import ApgError
from ai_proving_ground.escrow import EXISTS, NO_BASELINE, SKIPPED, TAG_MOVED, UNSAFE
from ai_proving_ground.escrow.files import (
    clear_stale,
    copy_hashed,
    recover,
    remove_tree,
    swap_into_place,
    write_new,
)
from ai_proving_ground.escrow.judging import judging_roots
from ai_proving_ground.escrow.locations import (
    BaselineLocation,
    baseline_location,
    escrow_root,
    project_name,
)
from ai_proving_ground.escrow.mounts import check_destination
from ai_proving_ground.escrow.snapshot_objects import escrow_objects, listing_names
from ai_proving_ground.escrow.verifier import LAUNCHER, LAUNCHER_TEXT
from ai_proving_ground.faults import crashpoint
from ai_proving_ground.fixtures import FixtureSet, load_set
from ai_proving_ground.gitutil import bed_git
from ai_proving_ground.report import say
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.verifier_file import VERIFIER_SOURCE, load_verifier


def _tag_state(verifier: ModuleType, approot: Path, tag: str) -> dict[str, Any]:
    state: dict[str, Any] = verifier.read_tag(str(approot), tag)
    return state


def escrow(approot: Path, names: Sequence[str], force: bool = False, root: Path | None = None,
           settings: Settings = DEFAULT_SETTINGS) -> Path:
    """Write the escrow set for ``names``; return its directory."""
    fixture_set = load_set(names, approot, settings=settings)
    location = baseline_location(approot, settings)
    baseline = Baseline(location.directory, fixture_set.key, settings.baseline_ref)
    require_repository(approot)
    verifier = load_verifier()
    tag_state = _tag_state(verifier, approot, baseline.tag)
    if not baseline.dump.is_file() or tag_state["state"] != "present":
        have = (f"dump {'present' if baseline.dump.is_file() else 'missing'}, tag {baseline.tag} "
                f"{'present' if tag_state['state'] == 'present' else 'missing'}")
        raise ApgError(NO_BASELINE, f"set {fixture_set.key} has no complete baseline in "
                       f"{location.directory} ({have}); provision it first: apg provision "
                       f"--approot {approot} {' '.join(fixture_set.names)}")
    _refuse_moved_tag(baseline, tag_state, location)
    set_dir = (root or escrow_root(settings)) / project_name(approot) / fixture_set.key
    check_destination(set_dir, approot)
    if set_dir.parent.is_dir():
        recover(set_dir)
    if os.path.lexists(set_dir) and not force:
        raise ApgError(EXISTS, f"{set_dir} already holds an escrow of set {fixture_set.key}; pass "
                       "--force to replace it, and only from freshly installed or re-provisioned "
                       "trusted code, never to accept an attempt's drift")
    set_dir.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with bed_lock(baseline.lock, "escrow", settings.lock_wait_seconds):
        clear_stale(set_dir.parent, fixture_set.key)
        staging = Path(tempfile.mkdtemp(prefix=f".{fixture_set.key}.new-", dir=set_dir.parent))
        try:
            _fill(staging, approot, fixture_set, location, baseline, tag_state, verifier, settings)
            crashpoint("escrow.written")
            swap_into_place(staging, set_dir)
        finally:
            if os.path.lexists(staging):
                remove_tree(staging)
    _warn_grader_drift(approot, fixture_set, baseline)
    return set_dir


def baseline_names(set_key: str) -> list[str]:
    """Every baseline file of a set, the dump first. The config export and the content counts
    are among them: ``site_unchanged`` grades the live site against both, so a forged one would
    be a forged grade; and the whole-bed listing, which says what reset restores (with the
    objects it names: :mod:`ai_proving_ground.escrow.snapshot_objects`)."""
    baseline = Baseline(Path("."), set_key)
    snapshot = snapshot_paths(Path("."), set_key)
    return [p.name for p in (baseline.dump, snapshot.archive, snapshot.sidecar, snapshot.listing,
                             baseline.grader_sha256, baseline.grader_files, baseline.versions,
                             baseline.config_export, baseline.content_counts,
                             baseline.bed_snapshot, baseline.metadata)]


def _refuse_moved_tag(baseline: Baseline, tag_state: dict[str, Any],
                      location: BaselineLocation) -> None:
    """The escrow holds the commit the baseline directory recorded, never an attempt's: a tag
    moved off it would make every later verify --restore put the attempt's commit back."""
    recorded = recorded_commit(baseline)
    if recorded is not None and tag_state["commit"] != recorded:
        raise ApgError(TAG_MOVED, f"tag {baseline.tag} names {tag_state['commit']}, not the "
                       f"commit {recorded} that {location.directory} recorded for this baseline; "
                       "apg reset points it back, or recapture the baseline, then escrow")


def _copy_baseline(copies: Path, location: BaselineLocation, baseline: Baseline,
                   verifier: ModuleType) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """Copy the set's baseline files (every set's whole-bed listing among them) into ``copies``,
    then the objects the listings name: each file's record, the copies' hashes by their path in
    the set, and each object's record."""
    copies.mkdir(mode=0o700)
    files: dict[str, dict[str, Any]] = {}
    escrowed: dict[str, str] = {}
    own = baseline.bed_snapshot.name
    listed = listing_names(location.directory, own)
    names = baseline_names(baseline.set_key)
    names[names.index(own):names.index(own) + 1] = listed
    for name in names:
        source = location.directory / name
        if not os.path.lexists(source):
            say(SKIPPED, f"{name} (not in {location.directory})")
            files[name] = {"absent": True}
            continue
        files[name] = copy_hashed(source, copies / name)
        escrowed[f"{verifier.BASELINE_SUBDIR}/{name}"] = files[name]["sha256"]
    listings = [copies / name for name in listed if not files[name].get("absent")]
    objects, pack_sha256 = escrow_objects(baseline.objects, listings, copies / verifier.OBJECTS_PACK)
    escrowed[f"{verifier.BASELINE_SUBDIR}/{verifier.OBJECTS_PACK}"] = pack_sha256
    return files, escrowed, objects


def _fill(staging: Path, approot: Path, fixture_set: FixtureSet, location: BaselineLocation,
          baseline: Baseline, tag_state: dict[str, Any], verifier: ModuleType,
          settings: Settings) -> None:
    os.chmod(staging, 0o700)
    files, escrowed, objects = _copy_baseline(staging / verifier.BASELINE_SUBDIR, location,
                                              baseline, verifier)
    bundle = staging / verifier.BUNDLE
    # The bundle is made from a private git directory holding only the tag's ref: the bed's
    # repository config (which could name programs) is never read, and no transport is used.
    ref = f"refs/tags/{baseline.tag}"
    done = bed_git(approot, ["bundle", "create", "--quiet", str(bundle), ref], check=False,
                   refs={ref: tag_state["object"]})
    if done.returncode != 0:
        raise ApgError("APG_GIT_FAILED", f"git bundle create of tag {baseline.tag} failed: "
                       f"{done.stderr.decode(errors='replace').strip()}")
    escrowed[verifier.BUNDLE] = verifier.hash_path(str(bundle))[0]
    escrowed[verifier.VERIFIER] = write_new(staging / verifier.VERIFIER, VERIFIER_SOURCE.read_bytes(),
                                         0o755)
    escrowed[LAUNCHER] = write_new(staging / LAUNCHER, LAUNCHER_TEXT.encode(), 0o755)
    roots = judging_roots(approot, fixture_set, settings)
    data = {
        "format": verifier.FORMAT,
        "kind": "ai_proving_ground escrow",
        "created_at": int(time.time()),
        "set_key": fixture_set.key,
        "canonical": fixture_set.canonical,
        "fixtures": fixture_set.names,
        "pins": sorted(f.pin for f in fixture_set.fixtures),
        "project": project_name(approot),
        "approot": str(approot),
        "approot_real": os.path.realpath(approot),
        "baseline": {
            "configured": location.configured,
            "relative": location.relative,
            "dir": str(location.directory),
            "label": location.label,
            "ref_configured": baseline.ref,
            "tag": baseline.tag,
            "tag_commit": tag_state["commit"],
            "tag_state": tag_state,
            "files": files,
            "objects": objects,
        },
        "bundle": verifier.BUNDLE,
        "verifier": verifier.VERIFIER,
        "launcher": LAUNCHER,
        "escrowed": escrowed,
        "judging": {"roots": roots, "files": verifier.scan_tree(roots)},
    }
    write_new(staging / verifier.ESCROW_JSON, render_json(data).encode())
    _self_check(staging, approot, verifier)


def render_json(data: dict[str, Any]) -> str:
    """Indented JSON, except one compact line per judged file: a tree of thousands of files stays
    readable, and quick for the verifier to load."""
    judging = data["judging"]
    sentinel = f"@files-{os.urandom(8).hex()}@"
    body = json.dumps({**data, "judging": {**judging, "files": sentinel}}, indent=2, sort_keys=True)
    lines = ",\n".join(f"      {json.dumps(path)}: {json.dumps(entry, sort_keys=True, separators=(',', ':'))}"
                       for path, entry in sorted(judging["files"].items()))
    files = "{\n" + lines + "\n    }" if lines else "{}"
    return body.replace(json.dumps(sentinel), files, 1) + "\n"


def _self_check(staging: Path, approot: Path, verifier: ModuleType) -> None:
    """What was written must verify now: otherwise something changed during escrow, or the
    baseline directory sits behind a symlink that every later check would flag."""
    escrow_data = verifier.load_escrow(str(staging))
    try:
        verifier.check_escrow_files(str(staging), escrow_data)
    except verifier.EscrowError as exc:
        raise ApgError("APG_ESCROW_CHANGED", f"an escrowed copy changed while it was written ({exc}); "
                       "stop writers to the bed and escrow again") from None
    problems = (verifier.check_baseline(str(staging), escrow_data)
                + verifier.check_objects(escrow_data)
                + verifier.check_tag(escrow_data, str(approot)))
    if problems:
        label = escrow_data["baseline"]["label"]
        detail = "; ".join(f"{name} {change}" for name, change in problems)
        if (label, "replaced") in problems:
            raise ApgError(UNSAFE, f"the baseline directory {label} passes through a symlink or a "
                           "file, which an attempt could redirect; make it a real directory")
        raise ApgError("APG_ESCROW_CHANGED", f"the baseline changed while it was escrowed ({detail}); "
                       "stop writers to the bed and escrow again")


def _warn_grader_drift(approot: Path, fixture_set: FixtureSet, baseline: Baseline) -> None:
    """Escrow records the code as it is now; say so when that is not the code provision saw."""
    if not baseline.grader_files.is_file():
        return
    recorded = grader_tree.parse_listing(baseline.grader_files.read_text(encoding="utf-8"))
    changed = grader_tree.changes(recorded, grader_tree.fingerprint(approot, fixture_set))
    if changed:
        say("APG_ESCROW_GRADER_DRIFT", f"the grader code differs from what provision recorded "
            f"({'; '.join(changed[:5])}{'; ...' if len(changed) > 5 else ''}); escrow only from "
            "trusted, freshly installed code")
