"""executors.attempt_files: an attempt's folder carried from a worker's scratch to the driver's
campaign directory, every path and record checked (no Ray needed: plain files)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from ai_proving_ground.campaigns.records import AttemptRecord, CampaignFiles, read_attempt
from ai_proving_ground.campaigns.spec import Attempt
from ai_proving_ground.errors import ApgError
from ai_proving_ground.executors.attempt_files import INVALID, Carried, pack, write_back
from ai_proving_ground.records import write_record

ATTEMPT = Attempt(index=0, order=3, task_id="dv01_view_build", arm="a", agent="nop", model=None,
                  repeat=0)


def finished(files: CampaignFiles, attempt: Attempt = ATTEMPT) -> AttemptRecord:
    """An attempt folder as an attempt leaves it: its record, logs, a run folder, a state."""
    folder = files.attempt_dir(attempt.order)
    (folder / "run" / "work").mkdir(parents=True)
    (folder / "state").mkdir()
    record = dataclasses.replace(AttemptRecord.planned(attempt, "2026-01-01T00:00:00Z", False),
                                 outcome="fail", reason="checks failed")
    write_record(files.attempt(attempt.order), record)
    (folder / "steps.log").write_text("APG_RESET_OK\n")
    (folder / "agent.log").write_bytes(b"x" * 1000)
    (folder / "run" / "run.json").write_text("{}")
    # A file of a record's name the agent wrote in its work folder is data, never parsed.
    (folder / "run" / "work" / "attempt.json").write_text("not a record")
    (folder / "state" / "files.tar.gz").write_bytes(os.urandom(300))
    return record


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


def test_an_attempt_folder_travels_whole_and_lands_as_it_was(tmp_path: Path) -> None:
    scratch, driver = CampaignFiles(tmp_path / "scratch"), CampaignFiles(tmp_path / "driver")
    record = finished(scratch)
    (scratch.attempt_dir(3) / "run" / "link").symlink_to("/etc/passwd")
    before = tree(scratch.attempt_dir(3))
    carried = pack(scratch, 3)
    assert carried.left_out == ("run/link: a symbolic link",)
    assert write_back(driver, ATTEMPT, carried) == record
    landed = tree(driver.attempt_dir(3))
    # Every regular file, byte for byte; steps.log says what did not travel.
    assert {k: v for k, v in landed.items() if k != "steps.log"} == \
        {k: v for k, v in before.items() if k != "steps.log"}
    assert landed["steps.log"].endswith(b"APG_CAMPAIGN_FILE_LEFT_OUT run/link: a symbolic link\n")
    assert not (driver.attempt_dir(3) / "run" / "link").exists()
    assert [p.name for p in driver.runs.iterdir()] == ["0003"]  # no staging folder left


def test_past_the_bound_the_largest_files_stay_behind_never_the_records(tmp_path: Path) -> None:
    scratch, driver = CampaignFiles(tmp_path / "scratch"), CampaignFiles(tmp_path / "driver")
    record = finished(scratch)
    carried = pack(scratch, 3, limit=400)
    assert any(what.startswith("agent.log: 1000 bytes, past the 400-byte bound")
               for what in carried.left_out), carried.left_out
    assert write_back(driver, ATTEMPT, carried, limit=400) == record
    assert not (driver.attempt_dir(3) / "agent.log").exists()
    assert read_attempt(driver.attempt(3)) == record


@pytest.mark.parametrize("path", ["../0004/attempt.json", "/etc/x", "run/../../x", ""])
def test_a_path_outside_the_attempt_folder_is_refused_with_nothing_written(
        tmp_path: Path, path: str) -> None:
    scratch, driver = CampaignFiles(tmp_path / "scratch"), CampaignFiles(tmp_path / "driver")
    finished(scratch)
    carried = pack(scratch, 3)
    bad = Carried(3, (*carried.files, (path, b"escaped")))
    with pytest.raises(ApgError) as caught:
        write_back(driver, ATTEMPT, bad)
    assert caught.value.token == INVALID and "outside its folder" in caught.value.message
    assert list(driver.runs.iterdir()) == []
    assert not (tmp_path / "driver" / "runs" / "0004").exists()


def test_a_record_off_its_schema_or_of_another_attempt_is_refused(tmp_path: Path) -> None:
    scratch, driver = CampaignFiles(tmp_path / "scratch"), CampaignFiles(tmp_path / "driver")
    finished(scratch)
    carried = pack(scratch, 3)
    swapped = [(name, json.dumps({"outcome": "pass"}).encode()) if name == "attempt.json"
               else (name, data) for name, data in carried.files]
    with pytest.raises(ApgError, match="not a valid attempt record"):
        write_back(driver, ATTEMPT, Carried(3, tuple(swapped)))
    other = dataclasses.replace(ATTEMPT, arm="b")
    with pytest.raises(ApgError, match="the record of another attempt"):
        write_back(driver, other, carried)
    without = Carried(3, tuple(f for f in carried.files if f[0] != "attempt.json"))
    with pytest.raises(ApgError, match=r"without its attempt\.json"):
        write_back(driver, ATTEMPT, without)
    assert list(driver.runs.iterdir()) == []


def test_tries_the_driver_recorded_stay_beside_the_files_that_come_back(tmp_path: Path) -> None:
    """A worker lost mid-attempt: the driver recorded that try in tries/1/; the next try's
    folder, from another worker, lands beside it, attempt.json last."""
    scratch, driver = CampaignFiles(tmp_path / "scratch"), CampaignFiles(tmp_path / "driver")
    (driver.tries(3) / "1").mkdir(parents=True)
    (driver.tries(3) / "1" / "steps.log").write_text("lost\n")
    record = finished(scratch)
    assert write_back(driver, ATTEMPT, pack(scratch, 3)) == record
    assert (driver.tries(3) / "1" / "steps.log").read_text() == "lost\n"
    assert read_attempt(driver.attempt(3)) == record
