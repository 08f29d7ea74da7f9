"""Per arm, what the agents used and showed, recomputed from attempt records written by hand:
tokens, cost, tool calls and denials summed, asked first as k/n with its interval (friction,
reported), and every attempt whose start-up leaked, as a warning in report.json, report.txt,
report.md and report.html (and on its attempt page)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ai_proving_ground.campaigns.report import build_report
from ai_proving_ground.campaigns.stats import wilson_interval
from ai_proving_ground.cli.campaign_report import render_text
from ai_proving_ground.viewer.render import write_reports

CAMPAIGN = {"name": "friction", "seed": 5, "arms": ["without", "with"],
            "compare": ["without", "with"], "tasks": ["t1"], "agents": ["claude-code"],
            "models": [None], "repeats": 3, "jobs": 1,
            "dataset": {"name": "d", "path": "/d.yml", "sha256": "0" * 64},
            "created_at": "2026-07-18T10:00:00Z"}
LEAK = [{"kind": "mcp_server", "name": "claude_ai_Gmail"}, {"kind": "skill", "name": "stray"}]


def usage(asked: bool | None, cost: float | None = 0.01, calls: int = 2) -> dict[str, Any]:
    return {"input_tokens": 1000, "output_tokens": 20, "tool_calls": calls, "commands": calls,
            "permission_denials": 1, "cost_usd": cost, "asked_first": asked}


def attempt(order: int, arm: str, used: dict[str, Any] | None,
            leaks: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"index": order, "order": order, "task_id": "t1", "arm": arm, "agent": "claude-code",
            "model": None, "repeat": order % 3, "outcome": "fail", "reason": "because fail",
            "score": 0.0, "hidden": {"status": "absent", "checks": []}, "run_id": f"run-{order}",
            "run_status": "attempted", "adapter_exit_code": 0, "tampered": False,
            "started_at": "2026-07-18T10:00:00Z", "finished_at": "2026-07-18T10:01:00Z",
            **({"usage": used} if used is not None else {}),
            **({"leaks": leaks} if leaks is not None else {})}


def write(root: Path, rows: list[dict[str, Any]]) -> Path:
    root.mkdir(parents=True)
    (root / "campaign.json").write_text(json.dumps(CAMPAIGN), encoding="utf-8")
    keys = ("index", "order", "task_id", "arm", "agent", "model", "repeat")
    (root / "plan.jsonl").write_text("".join(json.dumps({k: r[k] for k in keys}) + "\n"
                                             for r in rows), encoding="utf-8")
    for row in rows:
        run = root / "runs" / f"{row['order']:04d}"
        run.mkdir(parents=True)
        (run / "attempt.json").write_text(json.dumps(row), encoding="utf-8")
    return root


def test_each_arm_sums_use_and_reports_asks_and_leaks(tmp_path: Path) -> None:
    root = write(tmp_path / "c", [
        attempt(0, "without", usage(False)), attempt(1, "without", usage(True), leaks=LEAK),
        attempt(2, "without", None),  # an adapter with no transcript (a record from before too)
        attempt(3, "with", usage(True, cost=None)), attempt(4, "with", usage(True, cost=None)),
        attempt(5, "with", usage(None, cost=None, calls=0))])
    report = build_report(root)
    without, with_ = report["usage"]["without"], report["usage"]["with"]
    assert (without["attempts"], without["with_transcript"]) == (3, 2)
    assert (without["input_tokens"], without["output_tokens"]) == (2000, 40)
    assert (without["tool_calls"], without["permission_denials"]) == (4, 2)
    assert without["cost_usd"] == 0.02
    assert without["asked_first"] == {"k": 1, "n": 2, "rate": 0.5,
                                      "wilson": list(wilson_interval(1, 2))}
    assert without["leaks"] == {"attempts": [1], "names": ["mcp_server claude_ai_Gmail",
                                                           "skill stray"]}
    assert with_["cost_usd"] is None  # no attempt reported a cost: unknown, not 0
    assert with_["asked_first"]["k"] == with_["asked_first"]["n"] == 2  # the unreadable one is out
    assert with_["leaks"] == {"attempts": [], "names": []}
    [warning] = [w for w in report["warnings"] if w.startswith("APG_CAMPAIGN_LEAK")]
    assert "arm without: 1 attempt(s) (#1)" in warning and "mcp_server claude_ai_Gmail" in warning

    text = render_text(report)
    assert "asked first 1/2" in text and "without" in text
    assert "warning: APG_CAMPAIGN_LEAK arm without" in text
    write_reports(root)
    markdown = (root / "report.md").read_text("utf-8")
    assert "| without | 1/2 | 0.50 [" in markdown
    assert "mcp_server claude_ai_Gmail, skill stray |" in markdown
    # The pages' usage tables sum the same records report.json does (no run.json here at all).
    assert "| without | 3 | 2 | 2000 | 40 | 0.0200 | 4 | 4 | 2 |" in markdown
    assert "| with | 3 | 3 | 3000 | 60 | - | 4 | 4 | 3 |" in markdown  # no cost reported: "-"
    html = (root / "report.html").read_text("utf-8")
    assert 'id="friction"' in html and "mcp_server claude_ai_Gmail, skill stray" in html
    page = (root / "attempts" / "0001.html").read_text("utf-8")
    assert "the start-up showed what the arm did not give: mcp_server claude_ai_Gmail, " \
           "skill stray" in page
    assert "showed what the arm" not in (root / "attempts" / "0000.html").read_text("utf-8")
