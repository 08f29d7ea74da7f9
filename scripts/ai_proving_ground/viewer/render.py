"""Write a campaign's report.html, report.md and one page per attempt from its records.

Jinja2 with autoescaping on for the HTML pages: transcripts, replies, prompts and diffs are the
agent's words, and an agent that writes ``<script>`` must see it shown, never run. Every page is
written new-then-rename, so a report being rewritten is never half a page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground import __version__
from ai_proving_ground.campaigns.records import OUTCOMES, CampaignFiles
from ai_proving_ground.campaigns.report import build_report, summary_line
from ai_proving_ground.campaigns.wording import effect_lines, notes
from ai_proving_ground.fsutil import atomic_write_text
from ai_proving_ground.viewer import charts
from ai_proving_ground.viewer.load import AttemptView, check_anchor, load_attempts, usage_rows

REPORT_HTML = "report.html"
REPORT_MD = "report.md"
# Shown on the provenance table, in this order, when campaign.json has them.
PROVENANCE_SKIP = ("arms", "agents", "models", "tasks", "compare", "name", "seed")


@dataclass(frozen=True)
class Written:
    html: Path
    markdown: Path
    attempts: int


def environment(autoescape: bool) -> Any:
    # Lazy for start-up time: only writing a report needs Jinja2.
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("ai_proving_ground.viewer", "templates"),
        autoescape=autoescape, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    environment.globals.update(fmt=_fmt, show=_show, anchor=check_anchor)
    return environment


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}"


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False,
                                                           sort_keys=True)


def _cell_attempts(attempts: list[AttemptView]) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    """Each cell's attempts with the link a reader follows: a failed one to its first failed
    check, any other to its page."""
    found: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for view in attempts:
        r = view.record
        href = f"{view.page}#{check_anchor(view.failed[0]['id'])}" if view.failed else view.page
        found.setdefault((r["task_id"], r["arm"], r["agent"], r["model"]), []).append(
            {"order": view.order, "outcome": r["outcome"], "reason": r["reason"], "href": href})
    return found


def _provenance(files: CampaignFiles) -> list[tuple[str, str]]:
    try:
        data = json.loads(files.campaign.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    rows = []
    for key, value in data.items():
        if key in PROVENANCE_SKIP:
            continue
        rows.append((key, value if isinstance(value, str) else json.dumps(value, sort_keys=True)))
    return rows


def write_reports(directory: Path, report: dict[str, Any] | None = None) -> Written:
    """report.html, report.md and attempts/NNNN.html of the campaign at ``directory``."""
    files = CampaignFiles(directory)
    report = report if report is not None else build_report(directory)
    attempts, unreadable = load_attempts(files)
    by_cell = _cell_attempts(attempts)
    cells = [{**cell, "attempts": by_cell.get((cell["task_id"], cell["arm"], cell["agent"],
                                               cell["model"]), [])} for cell in report["cells"]]
    arms = report["campaign"]["arms"]
    context = {
        "title": f"Campaign {report['campaign']['name']}", "campaign": report["campaign"],
        "report": report, "totals": report["totals"], "summary": summary_line(report["totals"]),
        "cells": cells, "outcomes": OUTCOMES, "effect_lines": effect_lines(report),
        "usage": [("arm", usage_rows(attempts, "arm"), "arm"),
                  ("agent", usage_rows(attempts, "agent"), "agent")],
        "provenance": _provenance(files), "version": __version__,
        "notes": [f"warning: {w}" for w in report["warnings"]] + notes(report)
        + [f"unreadable: {line}" for line in unreadable],
        "arm_chart": charts.rate_chart(charts.arm_bars(report), arms,
                                       "Per arm, pooled over tasks", "chart-arms-svg"),
        "cell_chart": charts.rate_chart(charts.cell_bars(report), arms, "Per task and arm",
                                        "chart-cells-svg"),
    }
    html = environment(True)
    atomic_write_text(directory / REPORT_HTML, html.get_template("report.html.j2").render(context))
    for view in attempts:
        page = directory / view.page
        page.parent.mkdir(exist_ok=True)
        atomic_write_text(page, html.get_template("attempt.html.j2").render(
            title=f"Attempt #{view.order}", a=view, r=view.record, campaign=report["campaign"]))
    markdown = environment(False).get_template("report.md.j2").render(context)
    atomic_write_text(directory / REPORT_MD, markdown)
    return Written(directory / REPORT_HTML, directory / REPORT_MD, len(attempts))
