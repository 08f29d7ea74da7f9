"""One campaign per directory: two runners started together on one ``--out`` never both write.

The runner locks ``--out`` before its first record; the loser refuses (``APG_CAMPAIGN_BUSY``, or,
when the winner already finished, "exists and is not empty") and writes nothing there.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import threading
from pathlib import Path

import pytest
from campaign_kit import attempts, write_spec

from ai_proving_ground import report
from ai_proving_ground.campaigns.runner import RunnerOptions, run_campaign
from ai_proving_ground.cli.campaign import site_step

ROUNDS = 6


def spec(root: Path, name: str, template: Path) -> Path:
    # Each runner's arm is named after it, so every attempt record says whose it is.
    return write_spec(root / f"{name}.yml", {
        "name": name, "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {f"{name}-a": {}, f"{name}-b": {}}, "agents": ["nop"], "repeats": 1, "seed": 3, "jobs": 1,
        "bed": str(template)})


def race(specs: dict[str, Path], out: Path, beds: Path) -> tuple[dict[str, int], dict[str, str]]:
    """Both campaigns on ``out``, released together by a barrier: exit codes and stderr."""
    barrier = threading.Barrier(len(specs))
    codes: dict[str, int] = {}
    said: dict[str, str] = {}

    def runner(name: str) -> None:
        sink = io.StringIO()
        barrier.wait()
        with report.redirected(sink, sink):
            codes[name] = run_campaign(RunnerOptions(
                spec_path=specs[name], out=out, beds=beds / name, site_step=site_step)).exit_code
        said[name] = sink.getvalue()

    threads = [threading.Thread(target=runner, args=(name,)) for name in specs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return codes, said


def test_two_campaigns_on_one_out_dir_one_completes_the_other_refuses(
        tmp_path: Path, template: Path, capsys: pytest.CaptureFixture[str]) -> None:
    specs = {name: spec(tmp_path, name, template) for name in ("alpha", "beta")}
    busy_seen = 0
    for round_number in range(ROUNDS):
        out, beds = tmp_path / f"out-{round_number}", tmp_path / f"beds-{round_number}"
        codes, said = race(specs, out, beds)
        assert sorted(codes.values()) == [0, 1], (codes, said)
        winner = next(name for name, code in codes.items() if code == 0)
        loser = next(name for name, code in codes.items() if code == 1)
        refusal = said[loser]
        assert (refusal.startswith(f"APG_CAMPAIGN_BUSY another apg campaign run is writing "
                                   f"into {out}; nothing was written")
                or refusal.startswith(f"APG_CAMPAIGN_CANNOT_RUN {out} exists and is not empty")), \
            refusal
        busy_seen += refusal.startswith("APG_CAMPAIGN_BUSY")
        # The directory holds the winner's records alone.
        assert json.loads((out / "campaign.json").read_text("utf-8"))["name"] == winner
        assert json.loads((out / "spec.yml").read_text("utf-8"))["name"] == winner
        records = attempts(out)
        assert sorted(r["arm"] for r in records) == [f"{winner}-a", f"{winner}-b"]
        assert {r["outcome"] for r in records} == {"fail"}
        assert not (beds / loser).exists()
    capsys.readouterr()
    # Started behind a barrier, the loser mostly meets a held lock (a finished winner is rare).
    assert busy_seen > 0


def test_a_held_out_dir_is_refused_and_left_as_it_was(tmp_path: Path, template: Path) -> None:
    """The lock, not the directory's contents, refuses: an empty held directory stays empty."""
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        sink = io.StringIO()
        with report.redirected(sink, sink):
            result = run_campaign(RunnerOptions(
                spec_path=spec(tmp_path, "alpha", template), out=out, beds=tmp_path / "beds",
                site_step=site_step))
    finally:
        os.close(fd)
    assert result.exit_code == 1
    assert sink.getvalue().startswith("APG_CAMPAIGN_BUSY another apg campaign run is writing into")
    assert list(out.iterdir()) == [] and not (tmp_path / "beds").exists()
