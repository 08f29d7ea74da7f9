"""A campaign's report.html and an attempt page in a real browser (headless Chromium): the chart
is drawn, a failed cell's link lands on the attempt's failed check, and an agent's words are
shown, never run."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from ai_proving_ground.viewer.render import write_reports
from support.browser import count_near, dump_dom, needs_chromium, screenshot

pytestmark = needs_chromium
ORACLE_ORANGE = (0xE6, 0x9F, 0x00)  # the second arm's colour (charts.PALETTE), oracle here
TARGET_OUTLINE = ORACLE_ORANGE  # base.html.j2's :target outline


def test_the_report_draws_its_chart_and_a_failed_cell_leads_to_the_failed_check(
        campaign: Path, tmp_path: Path) -> None:
    report = campaign / "report.html"
    assert report.is_file() and (campaign / "report.md").is_file()
    dom = dump_dom(tmp_path / "profile", report.as_uri())
    # The chart: an inline SVG per chart, with a bar for the passing arm.
    assert 'id="chart-arms-svg"' in dom and 'id="chart-cells-svg"' in dom
    shot = screenshot(tmp_path / "profile", report.as_uri(), tmp_path / "report.png", "1000,900")
    assert count_near(shot, ORACLE_ORANGE) > 2000, "no oracle bar was painted"
    # Every failed cell links to an attempt page at its first failed check.
    links = re.findall(r'<a class="attempt-link fail" href="([^"]+)"', dom)
    assert len(links) == 2, dom[:2000]
    page, _, anchor = links[0].partition("#")
    assert re.fullmatch(r"attempts/\d{4}\.html", page) and anchor == "check-view-exists"
    url = (campaign / page).as_uri() + "#" + anchor
    attempt = dump_dom(tmp_path / "profile", url)
    check = attempt[attempt.index(f'id="{anchor}"'):]
    check = check[:check.index("</div>")]
    assert "FAILED" in check and "view-exists" in check
    assert '<pre class="expected">present</pre>' in check
    assert '<pre class="found">missing</pre>' in check
    # The browser scrolled to it and marked it (the :target outline is painted).
    landed = screenshot(tmp_path / "profile", url, tmp_path / "attempt.png", "1000,700")
    assert count_near(landed, TARGET_OUTLINE, tolerance=30) > 300


def test_an_agents_words_are_shown_never_run(campaign: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(campaign, copy, symlinks=True)
    attempt = next(p for p in sorted((copy / "runs").iterdir())
                   if json.loads((p / "attempt.json").read_text())["outcome"] == "fail")
    hostile = ('<script>document.title="pwned"</script><img src=x onerror="document.title=1">'
               '</pre><h1 id="forged">forged</h1>')
    (attempt / "run" / "prompt.txt").write_text(hostile, encoding="utf-8")
    (attempt / "model.diff").write_text(hostile, encoding="utf-8")
    (attempt / "run" / "transcript.json").write_text(json.dumps({
        "final_reply": hostile, "commands": [{"command": hostile, "exit_code": 0, "tool": "Bash"}],
        "permission_denials": [{"tool": "Bash", "detail": hostile, "reason": hostile}]}))
    write_reports(copy)
    dom = dump_dom(tmp_path / "profile", (copy / "attempts" / f"{attempt.name}.html").as_uri())
    assert "<title>Attempt #" in dom and "pwned" not in dom.split("<body>")[0]
    assert "<script" not in dom and '<h1 id="forged"' not in dom and "<img" not in dom, [
        dom[max(0, i - 80):i + 80] for i in (dom.find("<script"), dom.find("<img"))]
    # the prompt, the diff, the reply, the command, and the denial's detail and reason
    assert dom.count("&lt;script&gt;document.title=") == 6
