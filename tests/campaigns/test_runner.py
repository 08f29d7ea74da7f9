"""``apg campaign run``: the records, one bed per job, and each attempt's one outcome.

Each campaign here runs for real on cloned embedded beds: every product step in-process, the
adapter and the escrowed verifier as children. The test adapters live in the template bed's
``.ddev/agents/``.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
from campaign_kit import EXAMPLE, attempts, reference_steps, run_campaign, write_spec

from ai_proving_ground.bed import init_bed
from ai_proving_ground.campaigns.evidence import read_verify
from ai_proving_ground.campaigns.records import CampaignFiles, read_report, read_setup
from ai_proving_ground.campaigns.spec import load_spec, plan, resolve
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.dataset import load_dataset

ATTEMPT_KEYS = {"index", "order", "task_id", "arm", "agent", "model", "repeat", "outcome",
                "reason", "score", "hidden", "run_id", "run_status", "adapter_exit_code", "tampered",
                "state", "started_at", "finished_at", "tries", "usage", "leaks", "streams"}
CAMPAIGN_KEYS = {"name", "seed", "dataset", "arms", "compare", "tasks", "agents", "models",
                 "repeats", "jobs", "created_at", "given", "provenance", "resumes"}

# ---------------------------------------------------------------------------- the smoke campaign


def test_the_example_smoke_campaign(apg: Any, tmp_path: Path) -> None:
    """The shipped spec (no bed given: the runner makes one): oracle passes, nop fails."""
    out = tmp_path / "smoke"
    result = run_campaign(apg, EXAMPLE, out)
    assert ("APG_CAMPAIGN_DONE 4 planned: 2 pass, 2 fail, 0 timeout, 0 tampered, 0 no_attempt, "
            "0 infra_error, 0 missing") in result.err

    campaign = json.loads((out / "campaign.json").read_text("utf-8"))
    assert set(campaign) == CAMPAIGN_KEYS
    dataset = load_dataset(PROJECT_ROOT / "datasets" / "build_tasks.yml")
    # provenance: tests/campaigns/test_provenance.py
    assert {k: v for k, v in campaign.items() if k not in ("created_at", "provenance")} == {
        "name": "smoke", "seed": 20260101,
        "dataset": {"name": "build_tasks", "path": str(dataset.path), "sha256": dataset.sha256},
        "arms": ["nop", "oracle"], "compare": ["nop", "oracle"], "tasks": ["dv01_view_build"],
        "agents": ["nop"], "models": [None], "repeats": 2, "jobs": 2,
        "given": {}, "resumes": []}  # the example's arms give the agent nothing

    records = attempts(out)
    planned = [a.as_plan() for a in plan(resolve(load_spec(EXAMPLE)))]
    assert [{k: r[k] for k in planned[0]} for r in records] == planned
    for record in records:
        assert set(record) == ATTEMPT_KEYS
        assert record["hidden"] == {"status": "absent", "checks": []}
        # nop is no known CLI: no transcript, so no usage figures and nothing leaked.
        assert (record["usage"], record["leaks"]) == (None, [])
        assert (record["run_status"], record["tampered"], record["adapter_exit_code"]) == \
            ("attempted", False, 0)
        assert record["run_id"].startswith("apg-run-")
        expected = ("pass", 1.0) if record["arm"] == "oracle" else ("fail", 0.0)
        assert (record["outcome"], record["score"]) == expected
        directory = out / "runs" / f"{record['order']:04d}"
        for name in ("run.json", "grade.json", "model.diff", "config.json", "verify.json", "run"):
            assert (directory / name).exists(), name
        config = json.loads((directory / "config.json").read_text("utf-8"))
        assert ("views.view.kb_billing" in config) == (record["arm"] == "oracle")
        grade = json.loads((directory / "grade.json").read_text("utf-8"))
        assert grade["source_metadata"]["additional_details"]["apg_run_id"] == record["run_id"]
    report = read_report(CampaignFiles(out))
    assert (report.totals["pass"], report.totals["fail"]) == (2, 2)
    assert (out / "report.txt").read_text("utf-8").startswith("Campaign smoke (seed 20260101): ")


def test_one_bed_per_job(apg: Any, tmp_path: Path, template: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "beds", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"nop": {}, "oracle": {"setup": reference_steps()}}, "agents": ["nop"],
        "repeats": 2, "seed": 3, "jobs": 2, "bed": str(template)})
    out = tmp_path / "out"
    run_campaign(apg, spec, out)
    records = attempts(out)
    assert [r["outcome"] for r in records] == ["pass" if r["arm"] == "oracle" else "fail"
                                               for r in records]
    beds = {str(tmp_path / "out-beds" / "job-0"), str(tmp_path / "out-beds" / "job-1")}
    used = [json.loads((out / "runs" / f"{r['order']:04d}" / "run.json").read_text())["approot"]
            for r in records]
    assert set(used) <= beds  # each attempt on one job's bed, none inside the campaign directory
    for bed in beds:
        assert (Path(bed) / ".git").is_dir() and (Path(bed) / "db" / "site.sqlite").is_file()
        # Run directories were moved out: a later agent on the bed cannot read earlier grades.
        assert list((Path(bed) / ".ai-proving-ground" / "runs").iterdir()) == []
    setup = read_setup(CampaignFiles(out)).as_json()
    assert [Path(j["escrow"]).is_relative_to(out / "escrow" / f"job-{j['job']}")
            for j in setup["jobs"]] == [True, True]
    assert not (template / ".ai-proving-ground" / "runs").exists()  # the template is never run on


# ---------------------------------------------------------------------------- infra errors


def ordered_seed(spec: dict[str, Any], path: Path, wanted: dict[int, tuple[str, str]]) -> int:
    """The first seed whose plan puts (arm, agent) cells at the wanted positions."""
    for seed in range(1000):
        attempt_plan = plan(resolve(load_spec(write_spec(path, {**spec, "seed": seed}))))
        if all((attempt_plan[i].arm, attempt_plan[i].agent) == cell for i, cell in wanted.items()):
            return seed
    raise AssertionError("no seed gives that order")


def test_setup_and_reset_failures_are_infra_errors_and_the_campaign_goes_on(
        apg: Any, tmp_path: Path, template: Path) -> None:
    body: dict[str, Any] = {
        "name": "infra", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"ok": {"setup": reference_steps()},
                 "broken": {"setup": [["config:get", "no.such.config"]]}},
        "agents": ["nop", "breaker"], "repeats": 1, "jobs": 1, "bed": str(template)}
    spec = tmp_path / "spec.yml"
    # The breaker goes first; the reset after it repairs the bed (it makes the whole bed equal
    # to the baseline, so nothing an agent leaves can make it fail); then a clean attempt.
    ordered_seed(body, spec, {0: ("ok", "breaker"), 2: ("ok", "nop")})
    out = tmp_path / "out"
    result = run_campaign(apg, spec, out)
    first, second, third, fourth = attempts(out)

    assert first["outcome"] == "pass"  # the arm provided the view
    assert second["outcome"] == "infra_error"
    assert second["reason"].startswith(
        "arm broken setup step 1 (config:get) failed: APG_CONFIG_MISSING")
    assert (second["score"], second["run_id"], second["adapter_exit_code"]) == (None, None, None)
    assert not list((tmp_path / "out-beds").glob("job-0.reset-failed-*"))  # repaired, not set aside
    assert (third["arm"], third["outcome"], third["score"]) == ("ok", "pass", 1.0)
    assert fourth["outcome"] == "infra_error"
    assert fourth["reason"].startswith(
        "arm broken setup step 1 (config:get) failed: APG_CONFIG_MISSING")
    steps = sorted(out.glob("runs/*/steps.log"))[3].read_text("utf-8").splitlines()
    assert steps[-2:] == [
        "APG_CONFIG_MISSING config no.such.config does not exist",
        "APG_CAMPAIGN_ARM_STEP arm broken step 1: apg site config:get no.such.config exited 1"]
    assert ("APG_CAMPAIGN_DONE 4 planned: 2 pass, 0 fail, 0 timeout, 0 tampered, 0 no_attempt, "
            "2 infra_error, 0 missing") in result.err


def test_exit_codes_tampering_and_a_hidden_tag(apg: Any, tmp_path: Path,
                                                      template: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "edges", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {"agent_env": {"APG_ARM_X": "1"}}},
        "agents": ["exit3", "exit127", "tamperer", "untagger"], "repeats": 1, "seed": 5,
        "jobs": 2, "bed": str(template)})
    out = tmp_path / "out"
    run_campaign(apg, spec, out)
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for record in attempts(out):
        by_agent.setdefault(record["agent"], []).append(record)

    for record in by_agent["exit3"]:  # the agent ran and gave up: counted against it
        assert (record["outcome"], record["adapter_exit_code"]) == ("no_attempt", 3)
        assert record["score"] == 0.0  # graded as evidence
        assert record["reason"] == "the adapter exited 3: it recorded no attempt"
    for record in by_agent["exit127"]:  # the agent never started: not the agent's outcome
        assert (record["outcome"], record["score"], record["adapter_exit_code"]) == \
            ("infra_error", None, 127)
        assert record["reason"].startswith("the adapter exited 127: its agent could not start")
        assert "exit127: the agent CLI is not on PATH" in record["reason"]
        assert record["run_id"] is not None
    for record in by_agent["tamperer"]:
        assert (record["outcome"], record["score"], record["tampered"]) == ("tampered", None, True)
        directory = out / "runs" / f"{record['order']:04d}"
        assert not (directory / "grade.json").exists()  # never graded after tampering
        verify = read_verify(directory / "verify.json")
        assert verify.after is not None
        assert any(line.startswith("APG_TAMPERED ") and "planted" in line
                   for line in verify.after["lines"])
    # The sandbox hides the bed's .git: the untagger's git finds no repository and the tag stays
    # (deleting it is tampered, never silently restored: test_hostile_records, unconfined).
    for record in by_agent["untagger"]:
        assert (record["outcome"], record["tampered"]) == ("no_attempt", False), record
        assert record["adapter_exit_code"] != 0
        verify = read_verify(out / "runs" / f"{record['order']:04d}" / "verify.json")
        assert verify.after is not None and not any(
            line.startswith(("APG_ESCROW_MISMATCH", "APG_TAMPERED")) for line in verify.after["lines"])
    assert len(list((tmp_path / "out-beds").glob("job-*.tampered-*"))) == 2


def test_an_agent_past_its_time_limit_is_stopped_and_times_out(apg: Any, tmp_path: Path,
                                                                template: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "slow", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {}}, "agents": ["hangs"], "repeats": 1, "seed": 1, "jobs": 2,
        "agent_timeout_s": 0.5, "bed": str(template)})
    out = tmp_path / "out"
    run_campaign(apg, spec, out)
    records = attempts(out)
    assert len(records) == 2
    for record in records:  # the agent's own doing: counted against it, in its own column
        assert (record["outcome"], record["run_status"]) == ("timeout", "timed_out")
        assert record["reason"] == "the adapter outlived its 0.5s time limit and was stopped"
        run = json.loads((out / "runs" / f"{record['order']:04d}" / "run" / "run.json").read_text())
        assert run["status"] == "timed_out" and run["timeout_s"] == 0.5


def test_a_baseline_that_fails_the_doctor_gives_infra_errors(apg: Any, tmp_path: Path,
                                                             template: Path) -> None:
    bad = tmp_path / "bad-template"
    shutil.copytree(template, bad, symlinks=True)
    site = EmbeddedSite(bad)
    invite = "6b0d0c00-0000-4000-8000-000000000001"
    with site.session() as store:
        store.entity_delete(invite)
    [dump] = (bad / ".ai-proving-ground").glob("db.*.dump")
    site.dump_database(dump)  # a baseline that no longer holds what the fixtures declare
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "drift", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {}}, "agents": ["exit3"], "repeats": 1, "seed": 2, "jobs": 1,
        "bed": str(bad)})
    out = tmp_path / "out"
    run_campaign(apg, spec, out)
    for record in attempts(out):  # never blamed on the agent, which never ran
        assert record["outcome"] == "infra_error" and record["run_id"] is None
        assert record["reason"].startswith("the doctor found drift after reset: ")
        assert invite in record["reason"]


# ---------------------------------------------------------------------------- refusals


def test_no_bed_means_the_campaign_cannot_run(apg: Any, tmp_path: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "nobed", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {}}, "agents": ["nop"], "repeats": 1, "seed": 1,
        "bed": "missing-bed"})
    result = apg("campaign", "run", str(spec), "--out", str(tmp_path / "out"))
    assert result.rc == 1
    assert result.err.startswith(f"APG_CAMPAIGN_CANNOT_RUN {tmp_path / 'missing-bed'} is not an "
                                 "embedded bed")
    assert not (tmp_path / "out").exists()


def test_a_bed_without_the_sets_baseline_cannot_be_the_template(apg: Any, tmp_path: Path) -> None:
    bed = tmp_path / "bare"
    init_bed(bed, ["kb_docs"])  # made, never provisioned (dv01 needs kb_docs alone)
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "bare", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {}}, "agents": ["nop"], "repeats": 1, "seed": 1, "bed": str(bed)})
    result = apg("campaign", "run", str(spec), "--out", str(tmp_path / "out"))
    assert result.rc == 1
    assert result.err.startswith(f"APG_CAMPAIGN_CANNOT_RUN {bed} cannot be a campaign's template: "
                                 "APG_RESET_NO_BASELINE no complete baseline for set ")
    assert f"apg provision --approot {bed} kb_docs" in result.err
    assert not (tmp_path / "out").exists()


def test_an_existing_campaign_directory_is_refused(apg: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "campaign.json").write_text("{}", encoding="utf-8")
    result = apg("campaign", "run", str(EXAMPLE), "--out", str(out))
    assert result.rc == 1
    assert "exists and is not empty" in result.err


def test_unknown_agents_and_undeclared_env_are_spec_errors(apg: Any, tmp_path: Path,
                                                           template: Path) -> None:
    body: dict[str, Any] = {
        "name": "bad", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {}}, "agents": ["nop", "nobody"], "repeats": 1, "seed": 1,
        "bed": str(template)}
    spec = tmp_path / "spec.yml"
    spec.write_text(textwrap.dedent("""\
        name: bad
        dataset: build_tasks
        tasks: [dv01_view_build]
        arms:
          a: {}
          b: {agent_env: {ANTHROPIC_API_KEY: x}}
        agents: [nop]
        repeats: 1
        seed: 1
        """) + f"bed: {template}\n", encoding="utf-8")
    result = apg("campaign", "run", str(spec))
    assert result.rc == 2
    assert result.err.startswith(f"APG_CAMPAIGN_SPEC_INVALID {spec}:6:18: $.arms.b.agent_env: "
                                 "APG_RUN_ENV_REFUSED adapter 'nop' does not declare ANTHROPIC_API_KEY")
    write_spec(spec, body)
    result = apg("campaign", "run", str(spec))
    assert result.rc == 2
    assert "$.agents[1]: APG_RUN_AGENT_UNKNOWN no adapter 'nobody'" in result.err


# ---------------------------------------------------------------------------- RunOptions.extra_env


def test_extra_env_passes_declared_and_arm_names_only(tmp_path: Path, template: Path) -> None:
    from ai_proving_ground.errors import ApgError
    from ai_proving_ground.tasks.run import RunOptions, run_task

    bed = tmp_path / "bed"
    shutil.copytree(template, bed, symlinks=True)
    dump = bed / ".ddev" / "agents" / "envdump"
    dump.write_text('#!/bin/sh\n## Credentials: none\n## Env: DECLARED_X\n'
                    'env > "$APG_RUN_DIR/env.txt"\n', encoding="utf-8")
    dump.chmod(0o755)
    options = RunOptions(task_id="dv01_view_build", approot=bed, agent="envdump",
                         extra_env={"DECLARED_X": "from-arm", "APG_ARM_MODE": "with"})
    outcome = run_task(options)
    seen = (outcome.run_dir / "work" / "env.txt").read_text("utf-8").splitlines()
    assert {"DECLARED_X=from-arm", "APG_ARM_MODE=with"} <= set(seen)
    runs = bed / ".ai-proving-ground" / "runs"
    before = sorted(runs.iterdir())
    for name in ("PATH", "HOME", "APG_RUN_DIR", "bad name"):
        with pytest.raises(ApgError) as caught:
            run_task(RunOptions(task_id="dv01_view_build", approot=bed, agent="envdump",
                                extra_env={name: "x"}))
        assert (caught.value.token, caught.value.exit_code) == ("APG_RUN_ENV_REFUSED", 2)
    assert sorted(runs.iterdir()) == before  # refused before anything was written
