"""The bench runs end to end and writes the keys the issues name (numbers are not judged here)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.bench import campaign as campaign_bench
from ai_proving_ground.bench import ray_campaign
from ai_proving_ground.bench import run as bench


def test_bench_writes_every_named_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    output = tmp_path / "bench.json"
    assert bench.main(["--sizes", "3,5", "--escrow-nodes", "5", "--view-nodes", "30",
                       "--doctor-nodes", "7", "--startup-repeat", "1", "--campaign-attempts", "2",
                       "--jobs-attempts", "4", "--sleep-s", "0.05", "--campaign-repeat", "1",
                       "--results", "25", "--ray-attempts", "0",  # test_ray_executor measures it
                       "--output", str(output)]) == 0
    results = json.loads(output.read_text())
    for size in ("3", "5"):
        row = results[size]
        assert row["nodes"] == int(size) and row["driver_calls"] == 1
        for key in ("doctor_s", "reset_s", "floor_s", "reset_ratio"):
            assert row[key] > 0, key
        assert row["reset_ratio"] == pytest.approx(row["reset_s"] / row["floor_s"], abs=0.01)
    for key in ("verify_s", "verify_ratio", "config_get_s", "reset_process_s", "copy_s",
                "reset_copy_ratio"):
        assert results[key] > 0, key
    # CPU time is counted in scheduler ticks: a process as short as cp -a may show none.
    cpu_keys = ("config_get_cpu_s", "reset_process_cpu_s", "copy_cpu_s", "python_start_cpu_s")
    for key in cpu_keys:
        assert isinstance(results[key], float) and results[key] >= 0, key
    ratio = results["reset_copy_cpu_ratio"]
    assert ratio is None if results["copy_cpu_s"] == 0 else ratio == pytest.approx(
        results["reset_process_cpu_s"] / results["copy_cpu_s"], rel=0.01)
    assert results["doctor_only"]["nodes"] == 7 and results["doctor_only"]["doctor_s"] > 0
    assert all(isinstance(results[k]["doctor_cpu_s"], float) for k in ("3", "5", "doctor_only"))
    # 30 nodes with ranks 1..30, rank >= 10: a full page of 10 rows.
    assert results["view_execution"]["nodes"] == 30 and results["view_execution"]["rows"] == 10
    assert results["view_execution"]["view_s"] > 0
    campaign = results["campaign"]
    assert campaign["attempt"]["attempts"] == 4 and campaign["attempt"]["attempt_s"] > 0
    assert campaign["attempt"]["attempt_cpu_s"] >= 0 and campaign["attempt"]["attempt_goal_s"] == 0.15
    jobs = campaign["jobs"]
    assert jobs["attempts"] == 4 and jobs["sleep_s"] == 0.05 and jobs["jobs_ratio_goal"] == 1.9
    assert jobs["jobs_ratio"] == pytest.approx(
        jobs["jobs2_attempts_per_s"] / jobs["jobs1_attempts_per_s"], rel=0.01)
    listing = results["results_listing"]
    assert listing["results"] == 25 and listing["listing_goal_s"] == 0.3
    assert all(listing[k] > 0 for k in ("first_listing_s", "listing_s", "filtered_s",
                                        "parse_every_file_s"))
    printed = capsys.readouterr().out
    assert "driver calls equal across sizes: True" in printed
    # Both campaign numbers, each beside its goal.
    assert "campaign bed work per attempt (a do-nothing agent, 4 attempts, best of 1): " in printed
    assert " s CPU (goal ≤ 0.15 s; load average " in printed
    assert "campaign jobs=2 / jobs=1 (an agent that sleeps 0.05 s, 4 attempts): " in printed
    assert "attempts/s, ratio" in printed and "(goal ≥ 1.9; load average " in printed
    for part in (campaign["attempt"], jobs):
        assert len(part["load"]) == 2 and all(value >= 0 for value in part["load"])
    assert campaign["attempt"]["attempt_s"] == min(campaign["attempt"]["attempt_s_each"])
    assert "apg results over 25 stored envelopes: " in printed
    assert results["ray_campaign"] == {"skipped": "--ray-attempts 0"}
    assert "ray campaign: skipped: --ray-attempts 0" in printed


def test_the_ray_part_says_it_is_skipped_and_why_without_the_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def without_ray(name: str, *rest: Any) -> Any:
        return None if name == "ray" else real(name, *rest)

    monkeypatch.setattr(importlib.util, "find_spec", without_ray)
    results, lines = ray_campaign.bench_part(tmp_path, 6, 2.0)
    why = "the ray extra is not installed (pip install -e '.[ray]'; nox -s bench installs it)"
    assert results == {"skipped": why} and lines == [f"ray campaign: skipped: {why}"]
    assert not tmp_path.joinpath("ray").exists()  # nothing was run


@pytest.mark.parametrize("main", [bench.main, campaign_bench.main], ids=["bench", "campaign"])
def test_jobs_attempts_no_more_than_the_jobs_is_a_usage_error(
        main: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # 2 attempts at jobs=2 leave no attempt past the first round: the marginal cost divided by 0.
    with pytest.raises(SystemExit) as exited:
        main(["--jobs-attempts", "2"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--jobs-attempts must be more than 2" in err and "not 2" in err
    assert "Traceback" not in err
