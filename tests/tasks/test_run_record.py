"""run.json through its one definition: what ``apg run`` writes is a :class:`RunRecord` and
meets ``schemas/run.schema.json``; a key that neither declares is refused, naming the file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.records import RECORD_INVALID
from ai_proving_ground.schemas import schema_errors
from ai_proving_ground.tasks.run_record import RunRecord, read_run, write_run

DV01 = "dv01_view_build"
RUN_ID = "apg-run-20260718T101500Z-a1b2c3"  # what write_run_record writes by default


def test_a_run_json_written_by_apg_run_meets_its_schema_and_reads_back(
        apg: Any, fixtures_bed: Path) -> None:
    result = apg("run", DV01, "--approot", str(fixtures_bed), "--agent", "nop")
    assert result.rc == 0, result.err
    [path] = (fixtures_bed / ".ai-proving-ground" / "runs").glob("*/run.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert [e.message for e in schema_errors(data, "run")] == []
    record = read_run(path)
    assert record.as_json() == data
    assert record.status == "attempted"
    # The sandbox record is a declared field, not a passenger.
    assert record.sandbox is not None and record.sandbox["backend"] == data["sandbox"]["backend"]
    assert record.no_attempt_reason is None and "no_attempt_reason" not in data


def test_a_run_json_with_an_undeclared_key_is_refused_naming_the_file(
        apg: Any, fixtures_bed: Path, write_run_record: Any) -> None:
    run_dir = write_run_record(fixtures_bed, agent_notes="I peeked")
    path = run_dir / "run.json"
    with pytest.raises(ApgError) as raised:
        read_run(path)
    assert raised.value.token == RECORD_INVALID
    assert str(path) in raised.value.message and "'agent_notes' was unexpected" in raised.value.message
    result = apg("grade", "--approot", str(fixtures_bed), DV01, f"--run={RUN_ID}")
    assert result.rc == 1 and result.out == ""
    assert result.err.startswith(f"APG_GRADE_RUN_INVALID {path}: not a valid run record")
    assert "agent_notes" in result.err and "Traceback" not in result.err
    assert not (run_dir / "grade.json").exists()


def test_an_undeclared_key_in_a_sandbox_record_is_refused(fixtures_bed: Path,
                                                          write_run_record: Any) -> None:
    sandbox = {"backend": "none", "unconfined_allowed": True, "notes": [], "docker": "yes"}
    path = write_run_record(fixtures_bed, sandbox=sandbox) / "run.json"
    with pytest.raises(ApgError, match=r"\$\.sandbox: Additional properties .*'docker'"):
        read_run(path)


def test_writing_an_undeclared_key_is_a_bug_and_writes_nothing(tmp_path: Path,
                                                               write_run_record: Any) -> None:
    data = json.loads((write_run_record(tmp_path) / "run.json").read_text(encoding="utf-8"))
    RunRecord.from_json(data)  # the fixture's record is a valid one
    target = tmp_path / "target"
    target.mkdir()
    with pytest.raises(ApgError, match=r"target/run\.json: the run record has undeclared keys "
                                       r"scratch \(a bug: declare them in tasks/run_record\.py"):
        write_run(target, {**data, "scratch": 1})
    assert list(target.iterdir()) == []
    write_run(target, data)
    assert read_run(target / "run.json").as_json() == data


@pytest.mark.parametrize("kind", ["folder", "symlink", "fifo"])
def test_a_run_json_that_is_not_a_regular_file_is_a_broken_record(
        tmp_path: Path, kind: str) -> None:
    """A link to a good record elsewhere is refused too: the reader never follows one."""
    path = tmp_path / "run.json"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        (tmp_path / "elsewhere.json").write_text("{}", encoding="utf-8")
        path.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(ApgError) as caught:
        read_run(path)
    said = {"folder": "a folder", "symlink": "a symlink", "fifo": "not a regular file"}[kind]
    assert (caught.value.token, caught.value.message) == (
        "APG_RECORD_INVALID", f"{path} is {said}, not a record file")
