"""Kill provision and reset with SIGKILL at every named crash point, then recover.

Each case runs the real command as a process with ``AI_PG_CRASH_AT=<point>`` and checks that it
died by SIGKILL there (a point never reached makes the case fail). Then an ordinary ``apg reset``
must leave the bed healthy, or refuse with a token and a way out: a provision killed before its
tag leaves no complete baseline, so reset says APG_RESET_NO_BASELINE and provision again must
succeed. Before each killed reset the bed carries an agent's mutations, so the restore has work
to do when it is killed.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

Kit = Any  # the ``kit`` fixture of tests/baselines/conftest.py

PUBLIC = Path("web/sites/default/files")

# {key} is the set key. Listed in the order a provision reaches them.
PROVISION_POINTS = (
    "provision.recipes-applied",
    "atomic-write:files.{key}.tar.gz",
    "atomic-write:files.{key}.list",
    "atomic-write:files.{key}.tar.gz.json",
    "provision.files-captured",
    "atomic-write:grader.{key}.files",
    "atomic-write:grader.{key}.sha256",
    "provision.grader-recorded",
    "atomic-write:versions.{key}.json",
    "provision.versions-recorded",
    "atomic-write:db.{key}.dump",
    "provision.dump-written",
    "atomic-write:baseline.{key}.json",
    "provision.metadata-written",
    "provision.tagged",
    "atomic-write:bed.{key}.json",
    "provision.bed-recorded",
)

# Listed in the order a reset reaches them.
RESET_POINTS = (
    "atomic-write:reset.{key}.incomplete",
    "reset.marked",
    "reset.tree.staged",
    "reset.tree.extracting",
    "reset.tree.extracted",
    "reset.tree.removing",
    "reset.tree-restored",
    "atomic-write:site.sqlite",
    "reset.database-restored",
    "reset.files.staged",
    "reset.files.cleared",
    "reset.files.promoting",
    "reset.files-restored",
    "reset.caches-rebuilt",
)


def test_there_are_at_least_twenty_distinct_points() -> None:
    assert len(set(PROVISION_POINTS) | set(RESET_POINTS)) >= 20


def _killed(done: Any, point: str) -> None:
    assert done.returncode == -signal.SIGKILL, (
        f"{point}: expected death by SIGKILL, got {done.returncode}\n{done.stderr}")


@pytest.mark.parametrize("point", PROVISION_POINTS)
def test_killed_provision_recovers(kit: Kit, raw_bed: Path, point: str) -> None:
    name = point.format(key=kit.key(raw_bed))
    _killed(kit.process("provision", raw_bed, crash_at=name), name)

    rc, _out, err = kit.run("reset", raw_bed)
    if point == "provision.bed-recorded":
        # The bed's snapshot is the last step: the baseline is complete.
        assert rc == 0 and "APG_RESET_OK" in err, err
    else:
        # No bed snapshot, so no complete baseline: refused with the command that captures one.
        assert rc == 1 and "APG_RESET_NO_BASELINE" in err and "apg provision" in err, err
        rc, _out, err = kit.run("provision", raw_bed)
        assert rc == 0 and "APG_PROVISION_OK" in err, err
    kit.assert_healthy(raw_bed)

    # The recovered baseline really restores.
    kit.mutate(raw_bed)
    rc, _out, err = kit.run("reset", raw_bed)
    assert rc == 0, err
    kit.assert_healthy(raw_bed)


@pytest.mark.parametrize("point", RESET_POINTS)
def test_killed_reset_recovers(kit: Kit, pbed: Path, point: str) -> None:
    baseline = kit.baseline(pbed)
    kit.mutate(pbed)
    kept = kit.untouched_by_reset(pbed)
    name = point.format(key=baseline.set_key)
    _killed(kit.process("reset", pbed, crash_at=name), name)

    # Half-restored: the doctor must not pass it, and after the marker it says why.
    rc, verdict = kit.doctor(pbed)
    assert rc == 1 and not verdict["healthy"]
    if point != RESET_POINTS[0]:
        check = kit.check(verdict, "reset_complete")
        assert check["status"] == "fail" and str(baseline.reset_marker) in check["drift"][0]["subject"]

    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0 and "APG_RESET_OK" in err, err
    kit.assert_healthy(pbed)
    assert kit.untouched_by_reset(pbed) == kept
    assert not list((pbed / PUBLIC).glob(".apg-restore-*"))
