"""The pages without a browser: what a finished campaign writes, apg view, and a server that
answers nothing but the pages."""

from __future__ import annotations

import json
import os
import shutil
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from ai_proving_ground.cli import grade as grade_cli
from ai_proving_ground.cli import view as view_cli
from ai_proving_ground.viewer import serve
from ai_proving_ground.viewer.render import write_reports


def test_a_finished_campaign_writes_its_reports_and_a_page_per_attempt(campaign: Path) -> None:
    pages = sorted(p.name for p in (campaign / "attempts").iterdir())
    assert pages == ["0000.html", "0001.html", "0002.html", "0003.html"]
    markdown = (campaign / "report.md").read_text(encoding="utf-8")
    assert "| oracle | nop | (default) | 2/2 | 1.00 | [0.34, 1.00] |" in markdown
    assert "| nop | nop | (default) | 0/2 | 0.00 | [0.00, 0.66] |" in markdown
    assert "Effect oracle − nop (nop, (default)): +1.00" in markdown
    html = (campaign / "report.html").read_text(encoding="utf-8")
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org", "")


def test_a_linked_evidence_file_is_not_followed(campaign: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(campaign, copy, symlinks=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("the operator's secret\n", encoding="utf-8")
    prompt = copy / "runs" / "0001" / "run" / "prompt.txt"
    prompt.unlink()
    prompt.symlink_to(secret)
    write_reports(copy)
    page = (copy / "attempts" / "0001.html").read_text(encoding="utf-8")
    assert "the operator&#39;s secret" not in page and "the operator's secret" not in page
    assert "runs/0001/run/prompt.txt is a link: not followed" in page


def test_view_static_writes_and_names_the_report(campaign: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (campaign / "report.html").unlink()
    assert view_cli.main([str(campaign), "--static"]) == 0
    out, err = capsys.readouterr()
    assert out == f"{campaign / 'report.html'}\n"
    assert err.startswith("APG_VIEW_WRITTEN ") and (campaign / "report.html").is_file()


def test_view_refuses_what_is_not_a_campaign(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert view_cli.main([str(tmp_path), "--static"]) == 2
    assert capsys.readouterr().err.startswith("APG_VIEW_NOT_FOUND ")


def test_the_server_answers_only_the_pages(campaign: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(campaign, copy, symlinks=True)
    secret = tmp_path / "secret.txt"
    secret.write_text("secret\n", encoding="utf-8")
    (copy / "attempts" / "9999.html").symlink_to(secret)  # planted where a page would be
    urls: list[str] = []
    ready, stop = threading.Event(), threading.Event()

    def announce(url: str) -> None:
        urls.append(url)
        ready.set()

    thread = threading.Thread(target=serve.serve, args=(copy, "report.html"),
                              kwargs={"ready": announce, "stop": stop}, daemon=True)
    thread.start()
    assert ready.wait(30)
    base = urls[0]
    assert base.startswith("http://127.0.0.1:")
    try:
        with urllib.request.urlopen(base, timeout=30) as answer:
            assert answer.status == 200 and b"Campaign smoke" in answer.read()
            assert "default-src 'none'" in answer.headers["Content-Security-Policy"]
        with urllib.request.urlopen(base + "attempts/0001.html", timeout=30) as answer:
            assert b"Attempt #1" in answer.read()
        for path in ("runs/0001/attempt.json", "campaign.json", "attempts/9999.html",
                     "%2e%2e/secret.txt", "attempts/../campaign.json", "report.txt"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(base + path, timeout=30)
            assert refused.value.code == 404, path
    finally:
        stop.set()
        thread.join(30)


def test_view_of_a_beds_results(fixtures_bed: Path, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AI_PG_NO_IMPORT", raising=False)
    assert grade_cli.main(["--approot", str(fixtures_bed), "dv01_view_build"]) == 0
    capsys.readouterr()
    assert view_cli.main(["--approot", str(fixtures_bed), "--static"]) == 0
    page = Path(capsys.readouterr().out.strip())
    assert page.name == "results.html" and os.path.isfile(page)
    html = page.read_text(encoding="utf-8")
    assert "dv01_view_build" in html and "FAILED</span> view-exists" in html
    assert json.dumps("present")[1:-1] in html  # an expected value of a failed check
