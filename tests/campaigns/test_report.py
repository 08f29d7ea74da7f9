"""The campaign report is recomputed offline from a campaign directory written by hand: every
outcome in its own column, k/n over the outcomes the agent answers for, completeness against the
plan, disagreements warned about and never reclassified; the CLI never shows a traceback."""

from __future__ import annotations

import json
import shutil
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.campaigns.records import CampaignFiles, ReportRecord, read_report
from ai_proving_ground.campaigns.report import build_report
from ai_proving_ground.campaigns.stats import paired_effect, wilson_interval
from ai_proving_ground.cli.campaign_report import main, render_text
from ai_proving_ground.records import write_record
from ai_proving_ground.schemas import load_schema
from support.record_kit import canonical, refused_on_read, refused_on_write

SEED = 11
CAMPAIGN = {"name": "demo", "seed": SEED, "arms": ["without", "with", "rules"],
            "compare": ["without", "with"], "tasks": ["t1", "t2", "t3"], "agents": ["claude"],
            "models": [None], "repeats": 3, "jobs": 1,
            "dataset": {"name": "d", "path": "/d.yml", "sha256": "0" * 64},
            "created_at": "2026-07-18T10:00:00Z"}

# (arm, task): the repeats' (outcome, public score, hidden status). The "bad" row of (with, t2)
# says pass with a score of 0: a disagreement, warned about and still counted as recorded.
PASS, FAIL = ("pass", 1.0, "absent"), ("fail", 0.0, "absent")
PLAN: dict[tuple[str, str], list[tuple[str, float | None, str]]] = {
    ("without", "t1"): [PASS, FAIL, FAIL],
    ("without", "t2"): [FAIL, FAIL, ("infra_error", None, "absent")],
    ("without", "t3"): [PASS, PASS, PASS],
    # the hidden verifier failing after the public checks passed is a fail, counted in k/n
    ("with", "t1"): [("pass", 1.0, "pass"), ("fail", 1.0, "fail"), ("pass", 1.0, "pass")],
    ("with", "t2"): [PASS, PASS, ("pass", 0.0, "absent")],
    ("with", "t3"): [PASS, PASS, FAIL],
    ("rules", "t1"): [PASS, ("timeout", None, "absent"), ("tampered", None, "absent"),
                      ("no_attempt", 0.0, "absent")],
}
PLANNED = sum(len(rows) for rows in PLAN.values()) + 2  # two planned attempts have no good record


def attempt(order: int, task: str, arm: str, outcome: str, repeat: int, score: float | None = None,
            hidden: str = "absent", model: str | None = None, agent: str = "claude") -> dict[str, Any]:
    exit_code = {"no_attempt": 3, "timeout": -15, "infra_error": None}.get(outcome, 0)
    return {"index": order, "order": order, "task_id": task, "arm": arm, "agent": agent,
            "model": model, "repeat": repeat, "outcome": outcome, "reason": f"because {outcome}",
            "score": score, "hidden": {"status": hidden, "checks": []},
            "run_id": None if outcome == "infra_error" else f"run-{order}",
            "run_status": {"timeout": "timed_out", "no_attempt": "no_attempt"}.get(outcome, "attempted"),
            "adapter_exit_code": exit_code, "tampered": outcome == "tampered",
            "started_at": "2026-07-18T10:00:00Z", "finished_at": "2026-07-18T10:05:00Z"}


def write_attempt(root: Path, order: int, data: Any) -> None:
    run = root / "runs" / f"{order:04d}"
    run.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data)
    (run / "attempt.json").write_text(text, encoding="utf-8")


def write_campaign(root: Path, plan: list[dict[str, Any]], **changes: Any) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "campaign.json").write_text(json.dumps({**CAMPAIGN, **changes}), encoding="utf-8")
    (root / "plan.jsonl").write_text("".join(json.dumps(p) + "\n" for p in plan), encoding="utf-8")


def plan_line(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in ("index", "order", "task_id", "arm", "agent", "model", "repeat")}


@pytest.fixture
def campaign(tmp_path: Path) -> Path:
    root = tmp_path / "campaign"
    rows: list[dict[str, Any]] = []
    for (arm, task), repeats in PLAN.items():
        for repeat, (outcome, score, hidden) in enumerate(repeats):
            rows.append(attempt(len(rows), task, arm, outcome, repeat, score, hidden))
    extra = [attempt(len(rows) + i, "t3", "rules", "pass", i, 1.0) for i in range(2)]
    write_campaign(root, [plan_line(r) for r in rows + extra])
    for row in rows:
        write_attempt(root, row["order"], row)
    (root / "runs" / f"{extra[0]['order']:04d}").mkdir()  # an attempt that never wrote its record
    write_attempt(root, extra[1]["order"], '{"index": 23, "task_id": ')  # a truncated record
    write_attempt(root, 100, {"not": "an attempt"})  # off-schema, and not planned
    (root / "runs" / ".0101.tmp").mkdir()  # a temporary name
    (root / "runs" / "notes.txt").write_text("not a run directory\n", encoding="utf-8")
    return root


def cell(report: dict[str, Any], task: str, arm: str) -> dict[str, Any]:
    [found] = [c for c in report["cells"] if (c["task_id"], c["arm"]) == (task, arm)]
    return found


def approx_pair(low: float, high: float) -> Any:
    return [pytest.approx(low, abs=1e-6), pytest.approx(high, abs=1e-6)]


# ---------------------------------------------------------------------------- counting


def test_every_outcome_has_its_column_and_infra_errors_stay_out_of_n(campaign: Path) -> None:
    report = build_report(campaign)
    assert report["totals"] == {"planned": PLANNED, "recorded": 22, "pass": 12, "fail": 6,
                                "timeout": 1, "tampered": 1, "no_attempt": 1, "infra_error": 1,
                                "judged": 21, "missing": 2, "unreadable": 3, "retries": 0}
    expected = {  # (task, arm): k, n, infra errors
        ("t1", "without"): (1, 3, 0), ("t1", "with"): (2, 3, 0), ("t1", "rules"): (1, 4, 0),
        ("t2", "without"): (0, 2, 1), ("t2", "with"): (3, 3, 0),
        ("t3", "without"): (3, 3, 0), ("t3", "with"): (2, 3, 0),
    }
    assert [(c["task_id"], c["arm"]) for c in report["cells"]] == list(expected)
    for (task, arm), (k, n, infra) in expected.items():
        got = cell(report, task, arm)
        assert (got["k"], got["n"], got["infra_errors"]) == (k, n, infra), (task, arm)
        assert got["wilson"] == approx_pair(*wilson_interval(k, n))
    assert cell(report, "t1", "without")["wilson"] == approx_pair(0.0614919, 0.7923404)
    assert cell(report, "t1", "rules")["outcomes"] == {
        "pass": 1, "fail": 0, "timeout": 1, "tampered": 1, "no_attempt": 1, "infra_error": 0}
    assert cell(report, "t1", "with")["hidden"] == {"pass": 2, "fail": 1, "error": 0, "absent": 0,
                                                   "not_run": 0}


def test_completeness_is_checked_against_the_plan(campaign: Path) -> None:
    report = build_report(campaign)
    assert [m["order"] for m in report["missing"]] == [22, 23]
    assert [u["file"] for u in report["unreadable"]] == [
        "runs/0022/attempt.json", "runs/0023/attempt.json", "runs/0100/attempt.json"]
    assert "is missing" in report["unreadable"][0]["reason"]
    assert "not readable JSON" in report["unreadable"][1]["reason"]
    assert "$: Additional properties are not allowed" in report["unreadable"][2]["reason"]


def test_a_disagreeing_record_is_warned_about_and_kept_as_recorded(campaign: Path) -> None:
    report = build_report(campaign)
    assert report["warnings"] == [
        "runs/0014/attempt.json: the outcome is pass but the public score is 0.0"]
    assert cell(report, "t2", "with")["outcomes"]["pass"] == 3


def test_arms_pool_tasks_and_give_pass_hat_k_over_tasks(campaign: Path) -> None:
    arms = {row["arm"]: row for row in build_report(campaign)["arms"]}
    assert list(arms) == ["without", "with", "rules"]
    without, with_, rules = arms["without"], arms["with"], arms["rules"]
    assert (without["k"], without["n"], without["infra_errors"]) == (4, 8, 1)
    assert without["wilson"] == approx_pair(0.2152161, 0.7847839)
    assert (without["pass_hat_k"], without["pass_hat_k_cases"]) == (pytest.approx(1 / 3), 3)
    assert (with_["k"], with_["n"], with_["infra_errors"]) == (7, 9, 0)
    assert (with_["pass_hat_k"], with_["pass_hat_k_cases"]) == (pytest.approx(1 / 3), 3)  # t2 only
    assert (rules["k"], rules["n"], rules["pass_hat_k"], rules["pass_hat_k_cases"]) == (1, 4, 0.0, 1)


def test_effect_is_with_minus_without_over_tasks_with_a_seeded_bootstrap(campaign: Path) -> None:
    [effect] = build_report(campaign)["effects"]
    assert {k: effect[k] for k in ("agent", "model", "baseline", "treatment", "cases", "seed",
                                   "reason")} == {
        "agent": "claude", "model": None, "baseline": "without", "treatment": "with", "cases": 3,
        "seed": SEED, "reason": None}
    # case rates without: 1/3, 0, 1; with: 2/3, 1, 2/3 -> differences 1/3, 1, -1/3 -> mean 1/3
    assert effect["difference"] == pytest.approx(1 / 3, abs=1e-12)
    direct = paired_effect({"t1": [True, False, False], "t2": [False, False], "t3": [True] * 3},
                           {"t1": [True, False, True], "t2": [True] * 3, "t3": [True, True, False]},
                           seed=SEED)
    assert (effect["low"], effect["high"]) == (direct.low, direct.high)


def test_compare_in_the_record_chooses_the_pair(campaign: Path) -> None:
    data = {**CAMPAIGN, "compare": ["with", "without"]}
    (campaign / "campaign.json").write_text(json.dumps(data), encoding="utf-8")
    [effect] = build_report(campaign)["effects"]
    assert (effect["baseline"], effect["treatment"]) == ("with", "without")
    assert effect["difference"] == pytest.approx(-1 / 3, abs=1e-12)


def test_report_is_recomputed_offline_from_a_copied_directory(campaign: Path, tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(campaign, copy)
    assert build_report(copy) == build_report(campaign)
    assert json.loads(json.dumps(build_report(copy))) == build_report(campaign)  # plain JSON data


def test_duplicates_unplanned_and_undeclared_attempts_are_warned(tmp_path: Path) -> None:
    rows = [attempt(0, "t1", "with", "pass", 0, 1.0), attempt(1, "t1", "with", "fail", 0, 0.0),
            attempt(2, "t1", "other", "fail", 0, 0.0)]
    write_campaign(tmp_path, [plan_line(rows[0]), plan_line(rows[2])])
    for row in rows:
        write_attempt(tmp_path, row["order"], row)
    report = build_report(tmp_path)
    assert report["warnings"] == [
        "runs/0001/attempt.json: attempt 1 is not the plan's attempt 1",
        "runs/0001/attempt.json repeats the attempt of runs/0000/attempt.json",
        "runs/0002/attempt.json: arm 'other' is not declared in campaign.json",
    ]
    assert (cell(report, "t1", "with")["k"], cell(report, "t1", "with")["n"]) == (1, 2)


def test_an_empty_campaign_reports_zero(tmp_path: Path) -> None:
    write_campaign(tmp_path, [])
    report = build_report(tmp_path)
    assert (report["cells"], report["arms"], report["effects"]) == ([], [], [])
    assert report["totals"]["planned"] == report["totals"]["recorded"] == 0
    assert "(no attempts recorded)" in render_text(report)


# ---------------------------------------------------------------------------- text and CLI


def test_render_text_shows_outcome_columns_completeness_and_notes(campaign: Path) -> None:
    text = render_text(build_report(campaign))
    lines = text.splitlines()
    assert lines[0] == (f"Campaign demo (seed 11): {PLANNED} planned: 12 pass, 6 fail, 1 timeout, "
                        "1 tampered, 1 no_attempt, 1 infra_error, 2 missing; 21 judged (k/n), "
                        "1 infra errors never counted against the agent")
    [rules] = [line for line in lines if line.startswith("t1") and " rules " in line]
    assert "1/4 0.25" in rules and rules.split()[-7:] == ["1", "0", "1", "1", "1", "0", "0/0/0/4/0"]
    assert any(line.startswith("Effect with − without (claude, (default)): +0.33 [") for line in lines)
    assert "  missing: 2 planned attempts without a record (orders 22, 23)" in lines
    assert "warning: runs/0014/attempt.json: the outcome is pass but the public score is 0.0" in lines
    assert any(line.startswith("note: 7 of 7 cells have n < 10") for line in lines)


def test_main_prints_text_and_json(campaign: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(campaign)]) == 0
    assert capsys.readouterr().out == render_text(build_report(campaign))
    assert main([str(campaign), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == build_report(campaign)
    assert captured.err == ""


def test_main_without_campaign_json_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("APG_CAMPAIGN_NOT_FOUND no campaign.json in ")
    assert "Traceback" not in err


@pytest.mark.parametrize(("content", "message"), [
    ("{", "is not readable JSON"),
    ("[]", "$: [] is not of type 'object'"),
    (json.dumps({**CAMPAIGN, "seed": "11"}), "$.seed: '11' is not of type 'integer'"),
    (json.dumps({**CAMPAIGN, "arms": []}), "$.arms: [] should be non-empty"),
    (json.dumps({**CAMPAIGN, "compare": ["with", "nope"]}), "compare ['with', 'nope'] must name two"),
])
def test_main_with_malformed_campaign_json_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    content: str, message: str) -> None:
    (tmp_path / "campaign.json").write_text(content, encoding="utf-8")
    assert main([str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("APG_CAMPAIGN_INVALID ") and message in err


def test_main_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    assert "APG_USAGE" in capsys.readouterr().err


# ---------------------------------------------------------------------------- report.json


def test_report_json_is_the_report_record_and_what_the_cli_prints(
        campaign: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = build_report(campaign)
    files = CampaignFiles(campaign)
    write_record(files.report, ReportRecord.from_json(report))
    # The bytes the runner has always written (canonical JSON of what build_report computes).
    assert files.report.read_text(encoding="utf-8") == canonical(report)
    assert read_report(files).as_json() == report
    # apg campaign report --json prints the same data (in the CLI's own key order).
    assert main([str(campaign), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == read_report(files).as_json()


def test_a_report_breaking_its_schema_is_refused_on_write_and_on_read(campaign: Path) -> None:
    report = build_report(campaign)
    files = CampaignFiles(campaign)
    totals = {k: v for k, v in report["totals"].items() if k != "judged"}
    refused_on_write(files.report, ReportRecord.from_json({**report, "totals": totals}), "$.totals")

    def read(path: Path) -> ReportRecord:
        assert path == files.report
        return read_report(files)

    cells = [{**report["cells"][0], "rate": 1.5}, *report["cells"][1:]]
    refused_on_read(files.report, {**report, "cells": cells}, read, "$.cells[0].rate")
    effects = [{**report["effects"][0], "p_value": 0.01}]
    refused_on_read(files.report, {**report, "effects": effects}, read, "$.effects[0]")
    refused_on_read(files.report, {**report, "score": 1}, read, "$")
    assert set(load_schema(ReportRecord.SCHEMA)["properties"]) == {
        f.name for f in fields(ReportRecord)}


# ---------------------------------------------------------------------------- --gate


def test_a_gate_holds_on_the_wilson_lower_bound_not_the_rate(
        campaign: Path, capsys: pytest.CaptureFixture[str]) -> None:
    low, _ = wilson_interval(7, 9)  # arm "with": 7/9 = 0.78, proven only down to about 0.45
    below, above = f"{low - 0.001:.3f}", f"{low + 0.001:.3f}"
    assert main([str(campaign), f"--gate=with={below}"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("Campaign ")
    assert err == (f"APG_CAMPAIGN_GATE_OK arm with (claude, (default model)): 7/9, Wilson lower bound "
                   f"{low:.3f} >= {float(below):g}\n")
    assert main([str(campaign), "--gate", f"with={above}", "--gate", "without=0.2"]) == 3
    out, err = capsys.readouterr()
    assert out.startswith("Campaign ")  # the report is printed all the same
    assert err.splitlines() == [
        f"APG_CAMPAIGN_GATE_FAILED arm with (claude, (default model)): 7/9, Wilson lower bound "
        f"{low:.3f} < {float(above):g}",
        "APG_CAMPAIGN_GATE_OK arm without (claude, (default model)): 4/8, Wilson lower bound "
        "0.215 >= 0.2"]
    assert main([str(campaign), "--json", "--gate", "with=0.8"]) == 3  # the rate passes, the bound not
    assert json.loads(capsys.readouterr().out)["arms"]


@pytest.mark.parametrize(("gate", "message"), [
    ("with:0.5", "write ARM=MIN with MIN between 0 and 1"),
    ("with=1.5", "write ARM=MIN with MIN between 0 and 1"),
    ("with=half", "write ARM=MIN with MIN between 0 and 1"),
    ("skill=0.5", "the campaign has no such arm; its arms are"),
])
def test_a_bad_gate_is_a_usage_error(campaign: Path, capsys: pytest.CaptureFixture[str],
                                     gate: str, message: str) -> None:
    assert main([str(campaign), "--gate", gate]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("APG_USAGE ") and message in err
