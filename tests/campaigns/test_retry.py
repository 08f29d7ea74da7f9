"""Infrastructure errors tried again up to the spec's ``retries: {infra_error: N}``, each try kept.

The failing step is a real arm setup step (``apg site`` in-process): one that always fails, and
one that fails the first time only (the same step, refused once by the harness's step runner).
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from campaign_kit import attempts, reference_steps, run_campaign, write_spec

from ai_proving_ground import report
from ai_proving_ground.campaigns.runner import RunnerOptions
from ai_proving_ground.campaigns.runner import run_campaign as run_in_process
from ai_proving_ground.campaigns.spec import load_spec
from ai_proving_ground.cli.campaign import site_step
from ai_proving_ground.errors import ApgError


def body(template: Path, setup: list[list[str]], **more: Any) -> dict[str, Any]:
    return {"name": "retried", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
            "arms": {"steps": {"setup": setup}, "plain": {}}, "agents": ["nop"], "repeats": 1,
            "seed": 2, "jobs": 1, "bed": str(template), **more}


def test_an_infra_error_is_tried_again_up_to_the_limit_and_each_try_is_kept(
        apg: Any, tmp_path: Path, template: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", body(
        template, [["config:get", "no.such.config"]], retries={"infra_error": 2}))
    out = tmp_path / "out"
    result = run_campaign(apg, spec, out)
    [record] = [r for r in attempts(out) if r["arm"] == "steps"]
    directory = out / "runs" / f"{record['order']:04d}"
    assert record["outcome"] == "infra_error"
    assert [(t["try"], t["outcome"]) for t in record["tries"]] == [(1, "infra_error"), (2, "infra_error")]
    for number, kept in enumerate(record["tries"], start=1):
        assert kept["reason"].startswith("arm steps setup step 1 (config:get) failed: "
                                         "APG_CONFIG_MISSING")
        try_dir = directory / "tries" / str(number)
        earlier = json.loads((try_dir / "attempt.json").read_text("utf-8"))
        assert (earlier["outcome"], earlier["reason"], earlier["started_at"]) == \
            (kept["outcome"], kept["reason"], kept["started_at"])
        assert len(earlier["tries"]) == number - 1
        # Each try began as every attempt does: verify --restore, then a reset of its bed.
        assert "APG_RESET_OK" in (try_dir / "steps.log").read_text("utf-8")
        assert f"APG_CAMPAIGN_RETRY #{record['order']:04d} try {number} of 3 was an infra_error" \
            in result.err
    assert "APG_RESET_OK" in (directory / "steps.log").read_text("utf-8")  # the last try's own
    assert sorted(p.name for p in directory.iterdir() if p.name != "tries") == \
        sorted(p.name for p in (directory / "tries" / "1").iterdir())
    totals = json.loads((out / "report.json").read_text("utf-8"))["totals"]
    assert (totals["infra_error"], totals["retries"], totals["judged"]) == (1, 2, 1)
    assert "1 infra errors never counted against the agent, 2 more retried" in \
        (out / "report.txt").read_text("utf-8")


def test_a_retried_infra_error_that_then_runs_is_judged_and_its_try_recorded(
        tmp_path: Path, template: Path) -> None:
    calls: list[Sequence[str]] = []

    def fails_once(bed: Path, argv: Sequence[str]) -> tuple[int, str]:
        calls.append(argv)
        if len(calls) == 1:
            return 1, "APG_SITE_UNAVAILABLE the site did not answer (on purpose)\n"
        return site_step(bed, argv)

    spec = write_spec(tmp_path / "spec.yml", body(template, reference_steps(),
                                                  retries={"infra_error": 1}))
    sink = io.StringIO()
    with report.redirected(sink, sink):
        result = run_in_process(RunnerOptions(spec_path=spec, out=tmp_path / "out",
                                              beds=tmp_path / "beds", site_step=fails_once))
    assert result.exit_code == 0, sink.getvalue()
    [record] = [r for r in attempts(tmp_path / "out") if r["arm"] == "steps"]
    assert (record["outcome"], record["score"]) == ("pass", 1.0)  # the step's view, graded
    [kept] = record["tries"]
    assert (kept["try"], kept["outcome"]) == (1, "infra_error")
    assert "APG_SITE_UNAVAILABLE" in kept["reason"]
    assert len(calls) == 1 + len(reference_steps())  # the failed try, then every step
    assert result.counts["retries"] == 1 and result.counts["infra_error"] == 0


def test_without_retries_an_infra_error_is_final(apg: Any, tmp_path: Path, template: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", body(template, [["config:get", "no.such.config"]]))
    run_campaign(apg, spec, tmp_path / "out")
    [record] = [r for r in attempts(tmp_path / "out") if r["arm"] == "steps"]
    assert (record["outcome"], record["tries"]) == ("infra_error", [])
    assert not (tmp_path / "out" / "runs" / f"{record['order']:04d}" / "tries").exists()


@pytest.mark.parametrize("retries", [{"infra_error": -1}, {"infra_error": 11}, {"fail": 1}])
def test_a_bad_retry_limit_is_a_spec_error(tmp_path: Path, template: Path,
                                           retries: dict[str, int]) -> None:
    spec = write_spec(tmp_path / "spec.yml", body(template, [], retries=retries))
    with pytest.raises(ApgError) as caught:
        load_spec(spec)
    assert caught.value.token == "APG_CAMPAIGN_SPEC_INVALID" and "$.retries" in caught.value.message
