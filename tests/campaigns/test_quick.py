"""``apg campaign run --task T --agent A --repeats N``: a matrix without a spec file, on one arm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ai_proving_ground.campaigns.quick import quick_spec
from ai_proving_ground.cli import campaign as campaign_cli
from ai_proving_ground.cli import campaign_report


def test_each_agents_rate_per_task_with_no_paired_effect(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "quick"
    assert campaign_cli.main(["run", "--task", "dv01_view_build", "--agent", "oracle",
                              "--agent", "nop", "--repeats", "2", "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"{out}\n"
    spec = yaml.safe_load((out / "spec.yml").read_text(encoding="utf-8"))
    assert (list(spec["arms"]), spec["agents"], spec["repeats"]) == (["as_is"], ["oracle", "nop"], 2)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["campaign"]["compared"] == [] and report["effects"] == []
    rates = {(c["agent"], c["k"], c["n"]) for c in report["cells"]}
    assert rates == {("oracle", 2, 2), ("nop", 0, 2)}
    assert campaign_report.main([str(out)]) == 0
    assert "One arm: no paired effect" in capsys.readouterr().out
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "one arm" in html and "compared:" not in html


def test_the_spec_it_writes() -> None:
    spec = quick_spec(["nv*", "nv*"], ["codex", "claude-code", "codex"], 3, None,
                      ["openai/gpt-x"], 7)
    assert spec["agents"] == ["codex", "claude-code"] and spec["tasks"] == ["nv*"]
    assert spec["models"] == ["openai/gpt-x"] and spec["seed"] == 7 and "compare" not in spec


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "example", "--task", "dv01_view_build"], "give a SPEC, or --task and --agent"),
    (["run"], "give a SPEC, or --task and --agent"),
    (["run", "--task", "dv01_view_build"], "needs at least one --task and one --agent"),
    (["run", "--agent", "nop"], "needs at least one --task and one --agent"),
])
def test_a_half_given_matrix_is_a_usage_error(argv: list[str], message: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        campaign_cli.main(argv)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_a_quick_matrix_dry_runs_like_a_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert campaign_cli.main(["run", "--task", "dv01_view_build", "--agent", "nop",
                              "--agent", "oracle", "--dry-run", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 6 and {line["agent"] for line in lines} == {"nop", "oracle"}


def test_one_arm_cannot_name_a_comparison(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "one.yml"
    spec.write_text(json.dumps({"name": "one", "dataset": "build_tasks",
                                "tasks": ["dv01_view_build"], "arms": {"a": {}},
                                "compare": ["a", "b"], "agents": ["nop"], "repeats": 1,
                                "seed": 1}), encoding="utf-8")
    assert campaign_cli.main(["run", str(spec), "--dry-run"]) == 2
    assert "'b' is not an arm" in capsys.readouterr().err
