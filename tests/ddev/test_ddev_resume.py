"""``apg campaign resume`` on a DDEV campaign, through the stub ``ddev``: a runner killed with
SIGKILL half-way through resetting its project (the reset marker left, the database not yet
restored), then a resume killed while an agent works on the project, then a resume that
finishes: every planned attempt is recorded once, none recorded before runs again, and the
report equals that of an uninterrupted run of the same spec and seed (report.json without
``cost``, the only timings). The project is reset before it is fingerprinted and escrowed again,
so what the killed attempt left (its agent's changes, the half-restored database) never reaches
the next attempt or the resume's comparison."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from ddev_stub import Cli, Stub
from test_ddev_campaign import DATASET
from test_ddev_end_to_end import provision

from ai_proving_ground.baselines.reset import require_baseline
from ai_proving_ground.cli import campaign as campaign_cli
from ai_proving_ground.gitutil import git
from ai_proving_ground.settings import Settings

pytestmark = pytest.mark.skipif(shutil.which("php") is None, reason="php not found: apt-get install php-cli")

PLANNED = 2  # 2 arms of dv01: with seed 5, oracle's first
# Changes the site (its database) and writes a recipe in the bed (judged code: tampering, and a
# change of the grader tree a resume compares), then works a while, so a kill finds it mid-way.
HALF = "recipes/half_done/recipe.yml"
SLEEPS = f"""#!/usr/bin/env bash
## Description: changes the site's name and starts a recipe, then sleeps
## Credentials: none
$APG_SITE config:set system.site name half-done
mkdir -p "$APG_APPROOT/recipes/half_done"
echo 'name: half done' > "$APG_APPROOT/{HALF}"
sleep 0.5
exit 0
"""


def runner(*argv: str, crash_at: str | None = None) -> subprocess.Popen[bytes]:
    """``apg`` as its own process, with the stub ``ddev`` and the bed's settings the fixtures
    put in this process's environment."""
    env = dict(os.environ)
    if crash_at is not None:
        env["AI_PG_CRASH_AT"] = crash_at
    return subprocess.Popen([sys.executable, "-m", "ai_proving_ground.cli.main", *argv],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def report_of(out: Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((out / "report.json").read_text("utf-8"))
    del report["cost"]
    return report


def records(out: Path) -> list[dict[str, Any]]:
    found = [json.loads(p.read_text("utf-8")) for p in sorted(out.glob("runs/*/attempt.json"))]
    assert [r["order"] for r in found] == list(range(len(found)))
    return found


def test_a_ddev_campaign_killed_twice_resumes_to_the_uninterrupted_report(
        bed: Path, stub: Stub, cli: Cli, tmp_path: Path) -> None:
    adapter = bed / ".ddev" / "agents" / "sleeps"
    adapter.parent.mkdir(parents=True)
    adapter.write_text(SLEEPS)
    adapter.chmod(0o755)
    git(bed, ["add", "-A"])
    git(bed, ["commit", "-q", "-m", "sleeps"])
    provision(cli, bed, "kb_docs")
    marker = require_baseline(bed, ["kb_docs"], Settings.from_environ()).reset_marker
    spec = tmp_path / "spec.yml"
    spec.write_text(json.dumps({
        "name": "resumable", "dataset": str(DATASET), "tasks": ["dv01_view_build"],
        "arms": {"solved": {"adapter": "oracle"}, "half": {}}, "agents": ["sleeps"], "repeats": 1,
        "seed": 5, "fixtures": ["kb_docs"], "ddev_beds": [str(bed)]}))

    reference = tmp_path / "reference"
    rc, _, err = cli(campaign_cli.main, "run", str(spec), "--out", str(reference))
    assert rc == 0, err
    uninterrupted = report_of(reference)
    assert [(r["arm"], r["outcome"]) for r in records(reference)] == \
        [("solved", "pass"), ("half", "tampered")]

    # Killed in the first reset of its project: campaign.json and the plan written, the tree
    # restored, the database not yet.
    out = tmp_path / "out"
    process = runner("campaign", "run", str(spec), "--out", str(out),
                     crash_at="reset.tree-restored")
    _, err_bytes = process.communicate(timeout=300)
    assert process.returncode == -signal.SIGKILL, err_bytes.decode()
    assert marker.is_file() and not (out / "runs").exists()

    # The resume killed while attempt 1's agent works (the site and the recipes changed).
    process = runner("campaign", "resume", str(out))
    half = bed / HALF
    deadline = time.monotonic() + 300
    try:
        while not half.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert half.exists(), "attempt 1's agent never worked"
    finally:
        process.send_signal(signal.SIGKILL)
        _, err_bytes = process.communicate(timeout=300)
    assert process.returncode == -signal.SIGKILL
    assert not (out / "runs" / "0001" / "attempt.json").exists(), "killed too late"
    before = {r["order"]: r["started_at"] for r in records(out)}
    assert list(before) == [0]

    rc, printed, err = cli(campaign_cli.main, "resume", str(out))
    assert rc == 0, err
    assert printed == f"{out}\n"
    assert "APG_CAMPAIGN_RESUME_DISCARDED runs/0001" in err
    assert sorted(p.name for p in (out / "discarded").iterdir()) == ["0001.1"]
    done = records(out)
    assert len(done) == PLANNED and all(not r["tries"] for r in done)
    assert {r["order"]: r["started_at"] for r in done if r["order"] in before} == before
    assert [(r["arm"], r["outcome"]) for r in done] == [("solved", "pass"), ("half", "tampered")]
    assert report_of(out) == uninterrupted
    assert not marker.exists() and not half.exists()
