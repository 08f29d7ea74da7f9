"""The doctor's baseline checks: judging code, code versions, public files, reset completeness."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ai_proving_ground.baselines import grader_tree, public_files, versions
from ai_proving_ground.baselines.store import Baseline
from ai_proving_ground.errors import ApgError

if TYPE_CHECKING:
    from ai_proving_ground.doctor import Check, DoctorContext

UNRECORDED = "not recorded, re-provision to record"


def _baseline(ctx: DoctorContext) -> Baseline:
    return Baseline.of(ctx.approot, ctx.fixture_set.key, ctx.settings)


def grader_tree_check(ctx: DoctorContext) -> Check:
    from ai_proving_ground.doctor import NOTE, Check

    baseline = _baseline(ctx)
    if not baseline.grader_files.is_file():
        return Check("grader_tree", status=NOTE, detail=UNRECORDED)
    recorded = grader_tree.parse_listing(baseline.grader_files.read_text(encoding="utf-8"))
    live = grader_tree.fingerprint(ctx.approot, ctx.fixture_set)
    check = Check("grader_tree", expected=grader_tree.tree_sha256(recorded),
                  found=grader_tree.tree_sha256(live))
    for change in grader_tree.changes(recorded, live):
        label = change.rpartition(" ")[0]
        check.differ(label, recorded.get(label, "absent"), live.get(label, "absent"))
    return check


def code_versions_check(ctx: DoctorContext) -> Check:
    from ai_proving_ground.doctor import NOTE, Check

    recorded = versions.load(_baseline(ctx).versions)
    if recorded is None or ctx.answer.versions is None:
        return Check("code_versions", status=NOTE, detail=UNRECORDED)
    live = versions.as_json(ctx.answer.versions)
    check = Check("code_versions", expected=recorded.get("core"), found=live.get("core"))
    for subject, was, now in versions.code_differences(recorded, live):
        check.differ(subject, was, now)
    return check


def public_files_check(ctx: DoctorContext) -> Check:
    from ai_proving_ground.doctor import NOTE, Check

    snapshot = public_files.snapshot_paths(_baseline(ctx).directory, ctx.fixture_set.key)
    if not snapshot.listing.is_file():
        return Check("public_files", status=NOTE, detail=UNRECORDED)
    try:
        public_dir = public_files.recorded_public_dir(ctx.approot, snapshot)
        diff = public_files.compare(public_dir, snapshot)
    except ApgError as exc:
        # A changed snapshot is drift to report in the verdict, not a reason to give none.
        check = Check("public_files")
        check.differ("snapshot", "intact", str(exc))
        return check
    check = Check("public_files", expected="paths as captured",
                  found=f"{len(diff['missing'])} missing, {len(diff['added'])} added")
    for path in diff["missing"]:
        check.differ(path, "present", "missing")
    for path in diff["added"]:
        check.differ(path, "absent", "present")
    return check


def reset_complete_check(ctx: DoctorContext) -> Check:
    from ai_proving_ground.doctor import Check

    check = Check("reset_complete", expected="no reset under way", found="no reset under way")
    marker = _baseline(ctx).reset_marker
    if marker.exists():
        check.differ(str(marker), "absent", "present: a reset was interrupted; run apg reset")
    return check


BASELINE_CHECKS = (reset_complete_check, grader_tree_check, code_versions_check,
                   public_files_check)
