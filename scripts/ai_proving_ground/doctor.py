"""The doctor: prove that live state still matches the union of a fixture set's manifests.

It asks the site driver once, whatever the number of UUIDs or checks, and returns a verdict
that names exactly what drifted, with expected and found values. The state checks compare live
state with the manifest; the baseline checks compare the bed with the set's recorded baseline
(judging code, code versions, public files, an interrupted reset).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ai_proving_ground.baselines import grader_tree, public_files, versions
from ai_proving_ground.baselines.store import Baseline
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixtures import (
    FixtureSet,
    find_overlaps,
    load_set,
    record_value,
    union_manifest,
)
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.sites.base import (
    CountQuery,
    EntityRecord,
    SiteDriver,
    StateAnswer,
    StateQuery,
)

PASS, FAIL, NOTE = "pass", "fail", "note"
_ABSENT: Any = object()  # a key a facts record does not have


@dataclass
class Check:
    """One named check: its status and, for each subject that drifted, expected and found."""

    name: str
    status: str = PASS
    expected: Any = None
    found: Any = None
    drift: list[dict[str, Any]] = field(default_factory=list)
    detail: str = ""

    def differ(self, subject: str, expected: Any, found: Any) -> None:
        self.status = FAIL
        self.drift.append({"subject": subject, "expected": expected, "found": found})

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "status": self.status,
                                "expected": self.expected, "found": self.found}
        if self.drift:
            data["drift"] = self.drift
        if self.detail:
            data["detail"] = self.detail
        return data


@dataclass(frozen=True)
class DoctorContext:
    """What every check may read: the set, its union manifest and the one batch of answers."""

    approot: Path
    fixture_set: FixtureSet
    manifest: dict[str, Any]
    answer: StateAnswer
    settings: Settings = DEFAULT_SETTINGS


CheckFn = Callable[[DoctorContext], Check]


def build_query(manifest: dict[str, Any]) -> StateQuery:
    """Everything the checks need, as one batch."""
    counts = tuple(CountQuery(entity_type, bundle)
                   for entity_type, bundles in manifest["counts"].items() for bundle in bundles)
    return StateQuery(
        modules=True,
        config=tuple(manifest["config"]),
        entities=tuple(record["uuid"] for record in manifest["content"]),
        counts=counts,
        versions=True,
    )


def diagnose(approot: Path, names: Sequence[str], driver: SiteDriver,
             settings: Settings = DEFAULT_SETTINGS) -> dict[str, Any]:
    """Run every check and return the JSON verdict."""
    fixture_set = load_set(names, approot, check_overlap=False, with_facts=True, settings=settings)
    manifest = union_manifest(fixture_set)
    query = build_query(manifest)
    before = driver.round_trips
    answer = driver.read_state(query)
    ctx = DoctorContext(approot, fixture_set, manifest, answer, settings)
    state_checks: tuple[CheckFn, ...] = (_ownership, _modules, _config, _counts, _content)
    checks = [fn(ctx) for fn in (*state_checks, *BASELINE_CHECKS)]
    return {
        "healthy": all(c.status != FAIL for c in checks),
        "set_key": fixture_set.key,
        "fixtures": [f.pin for f in sorted(fixture_set.fixtures, key=lambda f: f.name)],
        "driver": driver.name,
        "driver_round_trips": driver.round_trips - before,
        "checks": [c.as_json() for c in checks],
    }


def _ownership(ctx: DoctorContext) -> Check:
    check = Check("ownership", expected="no overlapping claims", found="no overlapping claims")
    for overlap in find_overlaps(ctx.fixture_set.fixtures):
        check.differ(f"{overlap.first}+{overlap.second}", "disjoint claims", overlap.describe())
    if check.drift:
        check.found = f"{len(check.drift)} overlapping claim(s)"
    return check


def _modules(ctx: DoctorContext) -> Check:
    expected = ctx.manifest["modules"]
    states = ctx.answer.modules
    check = Check("modules", expected=expected,
                  found=sorted(n for n in expected if n in states and states[n].enabled))
    for name in expected:
        state = states.get(name)
        if state is None:
            check.differ(name, "enabled", "missing from disk")
        elif not state.enabled:
            check.differ(name, "enabled", "not installed")
    return check


def _config(ctx: DoctorContext) -> Check:
    expected = list(ctx.manifest["config"])
    present = [n for n in expected if ctx.answer.config.get(n) is not None]
    check = Check("config", expected=len(expected), found=len(present))
    for name in expected:
        if ctx.answer.config.get(name) is None:
            check.differ(name, "present", "missing")
    return check


def _counts(ctx: DoctorContext) -> Check:
    pairs = [(t, b, n) for t, bundles in ctx.manifest["counts"].items() for b, n in bundles.items()]
    found = dict(zip((f"{t}/{b}" for t, b, _ in pairs), ctx.answer.counts, strict=True))
    check = Check("counts", expected={f"{t}/{b}": n for t, b, n in pairs}, found=found)
    for entity_type, bundle, expected in pairs:
        live = found[f"{entity_type}/{bundle}"]
        if live != expected:
            check.differ(f"{entity_type}/{bundle}", expected, live)
    return check


def _content(ctx: DoctorContext) -> Check:
    records = ctx.manifest["content"]
    resolved = sum(1 for r in records if ctx.answer.entities.get(r["uuid"]) is not None)
    check = Check("content", expected=len(records), found=resolved)
    for record in records:
        entity = ctx.answer.entities.get(record["uuid"])
        if entity is None:
            check.differ(record["uuid"], _declared(record), None)
        elif not _agrees(record, entity):
            check.differ(record["uuid"], _declared(record), _live(record, entity))
    return check


def _agrees(record: dict[str, Any], entity: EntityRecord) -> bool:
    """``_live(record, entity) == _declared(record)``, without building either (50,000 times)."""
    return (_same(record.get("entity_type", _ABSENT), entity.entity_type)
            and _same(record.get("bundle", _ABSENT), entity.bundle)
            and _same(record.get("label", _ABSENT), entity.label)
            and ("status" not in record or _same(record["status"], entity.status))
            and all(_same(value, record_value(entity.fields.get(name, [])))
                    for name, value in (record.get("fields") or {}).items()))


def _same(a: Any, b: Any) -> bool:
    return a is b or bool(a == b)  # as a dict comparison compares its values


def _live(record: dict[str, Any], entity: EntityRecord) -> dict[str, Any]:
    live: dict[str, Any] = {"entity_type": entity.entity_type, "bundle": entity.bundle,
                            "label": entity.label}
    if "status" in record:
        live["status"] = entity.status
    for name in record.get("fields") or {}:
        live.setdefault("fields", {})[name] = record_value(entity.fields.get(name, []))
    return live


def _declared(record: dict[str, Any]) -> dict[str, Any]:
    keys = ("entity_type", "bundle", "label", "status")
    declared: dict[str, Any] = {k: record[k] for k in keys if k in record}
    if record.get("fields"):
        declared["fields"] = dict(record["fields"])
    return declared


# ---------------------------------------------------------------------------- baseline checks
# Judging code, code versions, public files and reset completeness, against the set's baseline.

UNRECORDED = "not recorded, re-provision to record"


def _baseline(ctx: DoctorContext) -> Baseline:
    return Baseline.of(ctx.approot, ctx.fixture_set.key, ctx.settings)


def grader_tree_check(ctx: DoctorContext) -> Check:
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
    recorded = versions.load(_baseline(ctx).versions)
    if recorded is None or ctx.answer.versions is None:
        return Check("code_versions", status=NOTE, detail=UNRECORDED)
    live = versions.record(ctx.answer.versions)
    check = Check("code_versions", expected=recorded.core, found=live.core)
    for subject, was, now in versions.code_differences(recorded, live):
        check.differ(subject, was, now)
    return check


def public_files_check(ctx: DoctorContext) -> Check:
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
    check = Check("reset_complete", expected="no reset under way", found="no reset under way")
    marker = _baseline(ctx).reset_marker
    if marker.exists():
        check.differ(str(marker), "absent", "present: a reset was interrupted; run apg reset")
    return check


BASELINE_CHECKS = (reset_complete_check, grader_tree_check, code_versions_check,
                   public_files_check)
