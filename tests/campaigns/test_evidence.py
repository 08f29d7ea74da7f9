"""verify.json and hidden.json (``campaigns/evidence.py``), and setup.json
(``campaigns/records.py``), through their one definition each: the bytes written are the ones
the campaign always wrote, and a file that breaks its schema is
refused on write and on read, naming the file and the JSON path."""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path

from ai_proving_ground.campaigns.escrowed import Verdict
from ai_proving_ground.campaigns.evidence import (
    HIDDEN_FILE,
    VERIFY_FILE,
    HiddenRecord,
    VerifyRecord,
    read_hidden,
    read_verify,
)
from ai_proving_ground.campaigns.records import (
    AttemptRecord,
    CampaignFiles,
    SetupRecord,
    read_attempt,
    read_setup,
)
from ai_proving_ground.campaigns.spec import Attempt
from ai_proving_ground.records import write_record
from ai_proving_ground.schemas import load_schema
from ai_proving_ground.tasks.hidden import HiddenOutcome, HiddenVerifier
from support.record_kit import canonical, refused_on_read, refused_on_write

OK = ["APG_ESCROW_OK bed matches escrow"]
MISMATCH = ["APG_ESCROW_MISMATCH tag apg-baseline-x moved", "verify failed"]
PATCH_CHECK = {"id": "patch", "kind": "patch", "path": "hidden/hv01.patch", "sha256": "a" * 64,
               "passed": True, "exit_code": 0, "stderr_tail": ""}
COMMAND_CHECK = {"id": "command-1", "kind": "command", "argv": ["python3", "check.py"],
                 "passed": False, "exit_code": 1, "timed_out": False, "error": None,
                 "stdout_tail": "", "stderr_tail": "rows differ", "duration_s": 0.25}


def test_verify_json_keeps_its_bytes_and_reads_back(tmp_path: Path) -> None:
    record = VerifyRecord()
    assert not record.ran
    for when, verdict in (("before", Verdict(0, OK)), ("after", Verdict(1, MISMATCH)),
                          ("after_restore", Verdict(0, OK))):
        record = record.with_verdict(when, verdict)
    write_record(tmp_path / VERIFY_FILE, record)
    # What the attempt has always written: each verify that ran, by when.
    assert (tmp_path / VERIFY_FILE).read_text(encoding="utf-8") == canonical({
        "before": {"exit_code": 0, "ok": True, "lines": OK},
        "after": {"exit_code": 1, "ok": False, "lines": MISMATCH},
        "after_restore": {"exit_code": 0, "ok": True, "lines": OK}})
    assert read_verify(tmp_path / VERIFY_FILE) == record and record.ran
    # A verify that did not run has no key (the escrow's own hash check: exit_code null).
    only = VerifyRecord().with_verdict("after", Verdict(None, ["APG_TAMPERED escrow:x changed"]))
    assert only.as_json() == {"after": {"exit_code": None, "ok": False,
                                        "lines": ["APG_TAMPERED escrow:x changed"]}}


def test_verify_json_breaking_its_schema_is_refused_on_write_and_on_read(tmp_path: Path) -> None:
    path = tmp_path / VERIFY_FILE
    refused_on_write(path, VerifyRecord(before={"exit_code": 0, "ok": True}), "$.before")
    good = {"before": {"exit_code": 0, "ok": True, "lines": OK}}
    refused_on_read(path, {**good, "during": good["before"]}, read_verify, "$")
    refused_on_read(path, {"after": {"exit_code": 0, "ok": True, "lines": [3]}},
                    read_verify, "$.after.lines[0]")
    refused_on_read(path, {}, read_verify, "$")


def _hidden() -> HiddenRecord:
    outcome = HiddenOutcome(status="fail", checks=[PATCH_CHECK, COMMAND_CHECK],
                            warnings=["APG_CAMPAIGN_HIDDEN_RESIDUE the bed's diff differs"])
    verifier = HiddenVerifier(patch=Path("/datasets/hidden/hv01.patch"),
                              patch_ref="hidden/hv01.patch",
                              commands=(("python3", "check.py"),), timeout_s=60.0)
    return HiddenRecord.of(outcome, verifier)


def test_hidden_json_keeps_its_bytes_and_reads_back(tmp_path: Path) -> None:
    record = _hidden()
    write_record(tmp_path / HIDDEN_FILE, record)
    # What the attempt has always written: the outcome's summary, the patch as the dataset names
    # it, the commands, their limit and the restore warnings.
    assert (tmp_path / HIDDEN_FILE).read_text(encoding="utf-8") == canonical({
        "status": "fail", "checks": [PATCH_CHECK, COMMAND_CHECK], "patch": "hidden/hv01.patch",
        "commands": [["python3", "check.py"]], "timeout_s": 60.0,
        "restore_warnings": ["APG_CAMPAIGN_HIDDEN_RESIDUE the bed's diff differs"]})
    assert read_hidden(tmp_path / HIDDEN_FILE) == record


def test_hidden_json_breaking_its_schema_is_refused_on_write_and_on_read(tmp_path: Path) -> None:
    path = tmp_path / HIDDEN_FILE
    good = _hidden().as_json()
    refused_on_write(path, HiddenRecord(**{**good, "status": "absent"}), "$.status")
    refused_on_read(path, {**good, "checks": [{**PATCH_CHECK, "argv": ["x"]}]},
                    read_hidden, "$.checks[0]")
    refused_on_read(path, {**good, "checks": [{**COMMAND_CHECK, "sha256": "a" * 64}]},
                    read_hidden, "$.checks[0]")
    refused_on_read(path, {**good, "checks": [{**COMMAND_CHECK, "timed_out": "no"}]},
                    read_hidden, "$.checks[0].timed_out")
    message = refused_on_read(path, {k: v for k, v in good.items() if k != "restore_warnings"},
                              read_hidden, "$")
    assert "'restore_warnings' is a required property" in message
    refused_on_read(path, {**good, "verdict": "pass"}, read_hidden, "$")


def test_evidence_fields_are_the_schema_properties() -> None:
    for cls in (VerifyRecord, HiddenRecord):
        assert set(load_schema(cls.SCHEMA)["properties"]) == {f.name for f in fields(cls)}


# ---------------------------------------------------------------------------- setup.json

SETUP = SetupRecord(fixtures=["kb_docs", "canvas_home"], tag="apg-baseline-13f368704136d113",
                    template="/beds/template", beds="/beds",
                    jobs=[{"job": 0, "bed": "/beds/job-0", "escrow": "/out/escrow/job-0/set"},
                          {"job": 1, "bed": "/beds/job-1", "escrow": "/out/escrow/job-1/set"}])


def test_setup_json_keeps_its_bytes_and_reads_back(tmp_path: Path) -> None:
    files = CampaignFiles(tmp_path)
    write_record(files.setup, SETUP)
    assert files.setup.read_text(encoding="utf-8") == canonical({
        "fixtures": ["kb_docs", "canvas_home"], "tag": "apg-baseline-13f368704136d113",
        "template": "/beds/template", "beds": "/beds",
        "jobs": [{"job": 0, "bed": "/beds/job-0", "escrow": "/out/escrow/job-0/set"},
                 {"job": 1, "bed": "/beds/job-1", "escrow": "/out/escrow/job-1/set"}]})
    assert read_setup(files) == SETUP


def test_setup_json_breaking_its_schema_is_refused_on_write_and_on_read(tmp_path: Path) -> None:
    files = CampaignFiles(tmp_path)
    refused_on_write(files.setup, replace(SETUP, jobs=[{"job": 0, "bed": "/b"}]), "$.jobs[0]")

    def read(path: Path) -> SetupRecord:
        assert path == files.setup
        return read_setup(files)

    good = SETUP.as_json()
    refused_on_read(files.setup, {**good, "jobs": [{**good["jobs"][0], "job": "0"}]}, read,
                    "$.jobs[0].job")
    refused_on_read(files.setup, {**good, "seed": 1}, read, "$")
    assert set(load_schema(SetupRecord.SCHEMA)["properties"]) == {f.name for f in fields(SetupRecord)}


# ---------------------------------------------------------------------------- attempt.json's hidden


def test_attempt_json_keeps_the_hidden_checks_in_hidden_json_s_shape(tmp_path: Path) -> None:
    """attempt.json's ``hidden.checks`` refer to hidden_record's one definition of a check."""
    planned = AttemptRecord.planned(Attempt(index=0, order=0, task_id="hv01", arm="a",
                                            agent="nop", model=None, repeat=0),
                                    "2026-07-18T10:00:00Z", has_hidden=True)
    path = tmp_path / "attempt.json"
    record = replace(planned, hidden={"status": "fail", "checks": [PATCH_CHECK, COMMAND_CHECK]})
    write_record(path, record)
    assert read_attempt(path) == record
    refused_on_write(tmp_path / "other.json",
                     replace(planned, hidden={"status": "fail", "checks": [
                         {**PATCH_CHECK, "sha256": "not hex"}]}), "$.hidden.checks[0].sha256")
    data = record.as_json()
    refused_on_read(path, {**data, "hidden": {"status": "fail", "checks": [
        {**COMMAND_CHECK, "notes": "x"}]}}, read_attempt, "$.hidden.checks[0]")
