"""The campaign report is recomputed offline from a campaign directory written by hand: exact
counts, Wilson intervals, pass^k and the paired effect; infra errors (and missing or malformed
records) are counted apart, never as failures; the CLI never shows a traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.campaigns.report import build_report, load_attempts, load_campaign, main, render_text
from ai_proving_ground.campaigns.stats import paired_effect

SEED = 11
CAMPAIGN = {"name": "demo", "seed": SEED, "arms": ["without", "with", "rules"], "tasks": ["t1", "t2", "t3"],
            "agents": ["claude"], "models": [None], "repeats": 3}

# (arm, task): statuses of repeats 0, 1, 2; "bad" is a record whose score disagrees with its status.
PLAN: dict[tuple[str, str], list[str]] = {
    ("without", "t1"): ["pass", "fail", "fail"],
    ("without", "t2"): ["fail", "fail", "infra_error"],
    ("without", "t3"): ["pass", "pass", "pass"],
    ("with", "t1"): ["pass", "pass", "pass"],
    ("with", "t2"): ["pass", "pass", "bad"],
    ("with", "t3"): ["pass", "pass", "fail"],
    ("rules", "t1"): ["pass"],
}
HIDDEN = {("with", "t1", 0): "pass", ("with", "t1", 1): "fail", ("with", "t1", 2): "error"}


def attempt(index: int, task: str, arm: str, status: str, repeat: int, model: str | None = None,
            agent: str = "claude", hidden: str = "absent") -> dict[str, Any]:
    score = {"pass": 1.0, "fail": 0.0, "infra_error": None}[status]
    return {"index": index, "order": index, "task_id": task, "arm": arm, "agent": agent, "model": model,
            "repeat": repeat, "status": status, "score": score,
            "infra_error": "bed reset failed" if status == "infra_error" else None,
            "hidden": {"status": hidden}, "run_id": None if status == "infra_error" else f"run-{index}",
            "started_at": "2026-07-18T10:00:00Z", "finished_at": "2026-07-18T10:05:00Z"}


def write_attempt(root: Path, name: str, data: Any) -> None:
    run = root / "runs" / name
    run.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data)
    (run / "attempt.json").write_text(text, encoding="utf-8")


@pytest.fixture
def campaign(tmp_path: Path) -> Path:
    root = tmp_path / "campaign"
    root.mkdir()
    (root / "campaign.json").write_text(json.dumps(CAMPAIGN), encoding="utf-8")
    index = 0
    for (arm, task), statuses in PLAN.items():
        for repeat, status in enumerate(statuses):
            if status == "bad":
                record = attempt(index, task, arm, "pass", repeat)
                record["score"] = 0.0
            else:
                record = attempt(index, task, arm, status, repeat,
                                 hidden=HIDDEN.get((arm, task, repeat), "absent"))
            write_attempt(root, f"{index:04d}", record)
            index += 1
    (root / "runs" / "0098").mkdir()  # an attempt that never wrote its record
    write_attempt(root, "0099", '{"index": 99, "task_id": ')  # a truncated record
    write_attempt(root, ".0100.tmp", "ignored")  # a temporary name
    (root / "runs" / "notes.txt").write_text("not a run directory\n", encoding="utf-8")
    return root


def cell(report: dict[str, Any], task: str, arm: str) -> dict[str, Any]:
    [found] = [c for c in report["cells"] if (c["task_id"], c["arm"]) == (task, arm)]
    return found


def approx_pair(low: float, high: float) -> list[Any]:
    return [pytest.approx(low, abs=5e-7), pytest.approx(high, abs=5e-7)]


# ---------------------------------------------------------------------------- loading


def test_load_attempts_reads_every_run_and_reports_bad_records_as_infra_errors(campaign: Path) -> None:
    rows = load_attempts(campaign)
    assert [row["file"] for row in rows][-3:] == ["runs/0018/attempt.json", "runs/0098/attempt.json",
                                                  "runs/0099/attempt.json"]
    assert len(rows) == 21
    missing, truncated = rows[-2], rows[-1]
    assert missing["status"] == truncated["status"] == "infra_error"
    assert missing["malformed"] and truncated["malformed"]
    assert missing["infra_error"] == "record runs/0098/attempt.json is missing"
    assert truncated["infra_error"].startswith("record runs/0099/attempt.json is not readable JSON")
    [bad] = [row for row in rows if row["file"] == "runs/0014/attempt.json"]
    assert bad["status"] == "infra_error" and bad["malformed"]
    assert bad["infra_error"] == ("record runs/0014/attempt.json score 0.0 disagrees with status 'pass' "
                                  "(expected 1.0)")
    assert (bad["task_id"], bad["arm"], bad["agent"], bad["model"], bad["repeat"]) == ("t2", "with", "claude",
                                                                                       None, 2)
    good = rows[0]
    assert (good["malformed"], good["status"], good["run_id"]) == (False, "pass", "run-0")


@pytest.mark.parametrize(("change", "reason"), [
    ({"status": "passed"}, "status must be one of pass, fail, infra_error, got 'passed'"),
    ({"task_id": 3}, "task_id must be a non-empty string"),
    ({"model": 7}, "model must be a string or null"),
    ({"repeat": True}, "repeat must be an integer"),
    ({"status": "infra_error"}, "score 1.0 disagrees with status 'infra_error' (expected None)"),
    ({"hidden": {"status": "maybe"}}, "hidden must be null or an object whose status is one of "
                                      "pass, fail, error, absent"),
])
def test_malformed_fields_are_named(tmp_path: Path, change: dict[str, Any], reason: str) -> None:
    write_attempt(tmp_path, "0000", {**attempt(0, "t1", "with", "pass", 0), **change})
    [row] = load_attempts(tmp_path)
    assert row["status"] == "infra_error"
    assert row["infra_error"] == f"record runs/0000/attempt.json {reason}"


def test_load_attempts_without_runs_and_with_runs_a_file(tmp_path: Path) -> None:
    assert load_attempts(tmp_path) == []
    (tmp_path / "runs").write_text("", encoding="utf-8")
    [row] = load_attempts(tmp_path)
    assert row["infra_error"] == "record runs is not a directory"
    write_attempt(tmp_path / "x", "0000", ["not", "an", "object"])
    [row] = load_attempts(tmp_path / "x")
    assert row["infra_error"] == "record runs/0000/attempt.json does not hold a JSON object"


def test_load_campaign_picks_the_compared_pair(tmp_path: Path) -> None:
    (tmp_path / "campaign.json").write_text(json.dumps(CAMPAIGN), encoding="utf-8")
    assert load_campaign(tmp_path)["compared"] == ["without", "with"]
    spec = {**CAMPAIGN, "arms": [{"name": "a"}, {"name": "b"}, {"name": "c"}], "compare": ["c", "a"]}
    (tmp_path / "campaign.json").write_text(json.dumps(spec), encoding="utf-8")
    loaded = load_campaign(tmp_path)
    assert (loaded["arm_names"], loaded["compared"]) == (["a", "b", "c"], ["c", "a"])
    spec = {**CAMPAIGN, "arms": {"without": {}, "with": {"setup": []}}}  # the spec file's mapping
    (tmp_path / "campaign.json").write_text(json.dumps(spec), encoding="utf-8")
    loaded = load_campaign(tmp_path)
    assert (loaded["arm_names"], loaded["compared"]) == (["without", "with"], ["without", "with"])


# ---------------------------------------------------------------------------- the numbers


def test_cells_count_valid_attempts_and_infra_errors_apart(campaign: Path) -> None:
    report = build_report(campaign)
    assert [(c["task_id"], c["arm"]) for c in report["cells"]] == [
        ("t1", "without"), ("t1", "with"), ("t1", "rules"), ("t2", "without"), ("t2", "with"),
        ("t3", "without"), ("t3", "with")]
    expected = {
        # (task, arm): k, n, infra errors, Wilson 95% (hand-computed)
        ("t1", "without"): (1, 3, 0, (0.0614919, 0.7923404)),
        ("t1", "with"): (3, 3, 0, (0.4385030, 1.0)),
        ("t1", "rules"): (1, 1, 0, (0.2065493, 1.0)),
        ("t2", "without"): (0, 2, 1, (0.0, 0.6576198)),
        ("t2", "with"): (2, 2, 1, (0.3423802, 1.0)),
        ("t3", "without"): (3, 3, 0, (0.4385030, 1.0)),
        ("t3", "with"): (2, 3, 0, (0.2076596, 0.9385081)),
    }
    for (task, arm), (k, n, infra, (low, high)) in expected.items():
        got = cell(report, task, arm)
        assert (got["k"], got["n"], got["infra_errors"]) == (k, n, infra), (task, arm)
        assert got["rate"] == pytest.approx(k / n, abs=1e-12)
        assert got["wilson"] == approx_pair(low, high), (task, arm)
        assert (got["agent"], got["model"]) == ("claude", None)
    assert cell(report, "t1", "with")["hidden"] == {"pass": 1, "fail": 1, "error": 1, "absent": 0}
    assert cell(report, "t2", "with")["hidden"] == {"pass": 0, "fail": 0, "error": 0, "absent": 2}


def test_arms_pool_tasks_and_give_pass_hat_k_over_tasks(campaign: Path) -> None:
    arms = {row["arm"]: row for row in build_report(campaign)["arms"]}
    assert list(arms) == ["without", "with", "rules"]
    without, with_, rules = arms["without"], arms["with"], arms["rules"]
    assert (without["k"], without["n"], without["infra_errors"]) == (4, 8, 1)
    assert without["wilson"] == approx_pair(0.2152161, 0.7847839)
    assert (without["pass_hat_k"], without["pass_hat_k_cases"]) == (pytest.approx(1 / 3), 3)  # t3 only
    assert (with_["k"], with_["n"], with_["infra_errors"]) == (7, 8, 1)
    assert with_["wilson"] == approx_pair(0.5291118, 0.9775825)
    # t1 3/3 and t2 2/2 valid repeats passed; t3 has a failure
    assert (with_["pass_hat_k"], with_["pass_hat_k_cases"]) == (pytest.approx(2 / 3), 3)
    assert (rules["k"], rules["n"], rules["pass_hat_k"], rules["pass_hat_k_cases"]) == (1, 1, 1.0, 1)


def test_effect_is_with_minus_without_over_tasks_with_a_seeded_bootstrap(campaign: Path) -> None:
    [effect] = build_report(campaign)["effects"]
    assert {k: effect[k] for k in ("agent", "model", "baseline", "treatment", "cases", "resamples", "seed",
                                   "level", "reason")} == {
        "agent": "claude", "model": None, "baseline": "without", "treatment": "with", "cases": 3,
        "resamples": 10000, "seed": SEED, "level": 0.95, "reason": None}
    # case rates without: 1/3, 0, 1; with: 1, 1, 2/3 -> differences 2/3, 1, -1/3 -> mean 4/9
    assert effect["difference"] == pytest.approx(4 / 9, abs=1e-12)
    assert effect["baseline_rate"] == pytest.approx(4 / 9, abs=1e-12)
    assert effect["treatment_rate"] == pytest.approx(8 / 9, abs=1e-12)
    # a mean of three draws is -1/3 (or 1) with probability 1/27 > 2.5%: the interval's ends
    assert effect["low"] == pytest.approx(-1 / 3, abs=1e-12)
    assert effect["high"] == pytest.approx(1.0, abs=1e-12)
    direct = paired_effect({"t1": [True, False, False], "t2": [False, False], "t3": [True] * 3},
                           {"t1": [True] * 3, "t2": [True, True], "t3": [True, True, False]}, seed=SEED)
    assert (effect["low"], effect["high"]) == (direct.low, direct.high)


def test_compare_in_the_spec_chooses_the_pair(campaign: Path) -> None:
    spec = {**CAMPAIGN, "compare": ["with", "without"]}
    (campaign / "campaign.json").write_text(json.dumps(spec), encoding="utf-8")
    [effect] = build_report(campaign)["effects"]
    assert (effect["baseline"], effect["treatment"]) == ("with", "without")
    assert effect["difference"] == pytest.approx(-4 / 9, abs=1e-12)


def test_totals_and_unattributed_records(campaign: Path) -> None:
    report = build_report(campaign)
    assert report["totals"] == {"attempts": 21, "valid": 17, "infra_errors": 4, "malformed": 3}
    assert report["unattributed"] == [
        {"file": "runs/0098/attempt.json", "reason": "record runs/0098/attempt.json is missing"},
        {"file": "runs/0099/attempt.json", "reason": report["unattributed"][1]["reason"]},
    ]
    assert report["campaign"] == {"name": "demo", "seed": SEED, "arms": ["without", "with", "rules"],
                                  "compared": ["without", "with"]}
    assert report["warnings"] == []


def test_report_is_recomputed_offline_from_a_copied_directory(campaign: Path, tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere" / "copy"
    shutil.copytree(campaign, copy)
    assert build_report(copy) == build_report(campaign)
    assert json.loads(json.dumps(build_report(copy))) == build_report(campaign)  # plain JSON data


def test_effects_per_agent_and_model_and_missing_pairs(tmp_path: Path) -> None:
    spec = {**CAMPAIGN, "agents": ["claude", "codex"], "models": ["m1", "m2"]}
    (tmp_path / "campaign.json").write_text(json.dumps(spec), encoding="utf-8")
    rows = [attempt(0, "t1", "without", "fail", 0, model="m2"),
            attempt(1, "t1", "with", "pass", 0, model="m2"),
            attempt(2, "t1", "without", "pass", 0, model="m1"),
            attempt(3, "t1", "with", "pass", 0, model="m1"),
            attempt(4, "t1", "with", "pass", 0, model="m1", agent="codex"),
            attempt(5, "t2", "without", "infra_error", 0, model="m1", agent="codex")]
    for row in rows:
        write_attempt(tmp_path, f"{row['index']:04d}", row)
    effects = build_report(tmp_path)["effects"]
    assert [(e["agent"], e["model"], e["difference"], e["cases"]) for e in effects] == [
        ("claude", "m1", 0.0, 1), ("claude", "m2", 1.0, 1), ("codex", "m1", None, 0)]
    assert effects[2]["reason"] == "no task has a valid attempt in both without and with"


def test_duplicate_and_undeclared_attempts_are_warned(tmp_path: Path) -> None:
    (tmp_path / "campaign.json").write_text(json.dumps(CAMPAIGN), encoding="utf-8")
    write_attempt(tmp_path, "0000", attempt(0, "t1", "with", "pass", 0))
    write_attempt(tmp_path, "0001", attempt(0, "t1", "with", "fail", 0))
    write_attempt(tmp_path, "0002", attempt(2, "t1", "other", "fail", 0))
    write_attempt(tmp_path, "0003", attempt(3, "t2", "other", "pass", 0))
    report = build_report(tmp_path)
    assert report["warnings"] == [
        "runs/0001/attempt.json repeats the attempt of runs/0000/attempt.json (t1, with, claude, (default), "
        "repeat 0)",
        "arm 'other' is not declared in campaign.json (2 attempts, first runs/0002/attempt.json)",
    ]
    assert (cell(report, "t1", "with")["k"], cell(report, "t1", "with")["n"]) == (1, 2)


def test_single_arm_has_no_effect_and_empty_campaign_reports_zero(tmp_path: Path) -> None:
    (tmp_path / "campaign.json").write_text(json.dumps({**CAMPAIGN, "arms": ["only"]}), encoding="utf-8")
    report = build_report(tmp_path)
    assert report["campaign"]["compared"] is None
    assert (report["cells"], report["arms"], report["effects"]) == ([], [], [])
    assert report["totals"] == {"attempts": 0, "valid": 0, "infra_errors": 0, "malformed": 0}
    text = render_text(report)
    assert "(no attempts recorded)" in text
    assert "Effect: not computed, the campaign declares fewer than two arms" in text


# ---------------------------------------------------------------------------- text


def test_render_text_shows_cells_effect_infra_errors_and_the_small_n_note(campaign: Path) -> None:
    text = render_text(build_report(campaign))
    assert text.startswith("Campaign demo (seed 11): 21 attempts, 17 valid, 4 infra errors")
    lines = text.splitlines()
    [t1_without] = [line for line in lines if line.startswith("t1") and " without " in line]
    assert "1/3 0.33 [0.06, 0.79]" in t1_without
    assert t1_without.split()[-2:] == ["0", "0/0/0/3"]  # infra errors, hidden pass/fail/error/absent
    [t2_with] = [line for line in lines if line.startswith("t2") and " with " in line]
    assert "2/2 1.00 [0.34, 1.00]" in t2_with
    assert t2_with.split()[-2:] == ["1", "0/0/0/2"]
    assert "7/8 0.88 [0.53, 0.98]" in text
    assert "0.67 (3 tasks)" in text
    assert ("Effect with − without (claude, (default)): +0.44 [-0.33, +1.00] (with 0.89, without 0.44; 95% "
            "case-level bootstrap over 3 tasks, 10000 resamples, seed 11)") in lines
    assert "1.00 (1 task)" in text
    assert "Infra errors: 4 of 21 attempts, never counted as agent failures" in lines
    assert "  unattributed: record runs/0098/attempt.json is missing" in lines
    assert ("note: 7 of 7 cells have n < 10 valid attempts; their Wilson intervals are wide, read them "
            "before the rates") in lines
    assert any(line.startswith("note: an effect over fewer than 10 tasks") for line in lines)


def test_render_text_without_small_n_note(tmp_path: Path) -> None:
    (tmp_path / "campaign.json").write_text(json.dumps(CAMPAIGN), encoding="utf-8")
    for repeat in range(10):
        write_attempt(tmp_path, f"{repeat:04d}", attempt(repeat, "t1", "with", "pass", repeat))
    text = render_text(build_report(tmp_path))
    assert "10/10 1.00 [0.72, 1.00]" in text
    assert "n < 10" not in text
    assert "Effect with − without (claude, (default)): not computed, no task has a valid attempt" in text


# ---------------------------------------------------------------------------- CLI


def test_main_prints_text_and_json(campaign: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(campaign)]) == 0
    out = capsys.readouterr().out
    assert out == render_text(build_report(campaign))
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
    ("[]", "must hold a JSON object"),
    (json.dumps({**CAMPAIGN, "seed": "11"}), "seed must be an integer"),
    (json.dumps({**CAMPAIGN, "arms": []}), "arms must be a non-empty list"),
    (json.dumps({**CAMPAIGN, "arms": ["a", 3]}), "arms must be a non-empty list"),
    (json.dumps({**CAMPAIGN, "compare": ["with", "nope"]}), "compare must name two different declared arms"),
])
def test_main_with_malformed_campaign_json_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    content: str, message: str) -> None:
    (tmp_path / "campaign.json").write_text(content, encoding="utf-8")
    assert main([str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("APG_CAMPAIGN_INVALID ")
    assert message in err


def test_main_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2
    assert "APG_USAGE" in capsys.readouterr().err


def test_module_runs_as_a_script(campaign: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "scripts")}
    command = [sys.executable, "-m", "ai_proving_ground.campaigns.report", str(campaign), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["totals"]["infra_errors"] == 4
