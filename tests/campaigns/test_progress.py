"""A campaign's progress (plain lines and the live display), where its beds and records go.

The views are fed events by hand with a fake clock, so every number they show is known; a real
campaign through ``apg campaign run`` then proves the runner feeds them, says where the beds are,
removes them, writes under the data directory and keeps the agent's words in its logs.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from campaign_kit import attempts, write_spec
from rich.console import Console

from ai_proving_ground.campaigns.progress import LiveProgress, PlainProgress, for_stream
from ai_proving_ground.campaigns.spec import Attempt
from ai_proving_ground.settings import Settings


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def attempt(order: int, arm: str = "a") -> Attempt:
    return Attempt(index=order, order=order, task_id="dv01_view_build", arm=arm, agent="nop",
                   model=None, repeat=0)


def feed(view: Any, clock: Clock) -> None:
    """Three planned; #0000 passes after 10 s while #0001 runs; #0002 starts."""
    view.begin("smoke", 3)
    view.started("job-0", attempt(0))
    view.started("job-1", attempt(1, "b"))
    clock.now += 10
    view.finished("job-0", attempt(0), "pass")
    view.started("job-0", attempt(2))
    clock.now += 5


def test_plain_lines_say_done_of_total_the_counts_elapsed_eta_and_what_runs(
        capsys: pytest.CaptureFixture[str]) -> None:
    clock = Clock()
    view = PlainProgress(clock)
    feed(view, clock)
    view.finished("job-1", attempt(1, "b"), "fail", "the public checks failed")
    view.close()
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "APG_CAMPAIGN_PLAN smoke: 3 planned, 0 already recorded, 3 to run",
        "APG_CAMPAIGN_RUNNING job-0: #0000 dv01_view_build arm=a agent=nop model=- repeat=0",
        "APG_CAMPAIGN_RUNNING job-1: #0001 dv01_view_build arm=b agent=nop model=- repeat=0",
        "APG_CAMPAIGN_ATTEMPT 1/3 done (1 pass), elapsed 0:00:10, eta 0:00:20; "
        "#0000 dv01_view_build arm=a agent=nop model=- repeat=0: pass",
        "APG_CAMPAIGN_RUNNING job-0: #0002 dv01_view_build arm=a agent=nop model=- repeat=0",
        # 15 s for 2 attempts: 7.5 s for the one left.
        "APG_CAMPAIGN_ATTEMPT 2/3 done (1 pass, 1 fail), elapsed 0:00:15, eta 0:00:08; "
        "#0001 dv01_view_build arm=b agent=nop model=- repeat=0: fail (the public checks failed)"]
    assert view.tally.running.keys() == {"job-0"}


def test_a_resumed_campaign_counts_what_was_recorded_but_not_in_its_rate(
        capsys: pytest.CaptureFixture[str]) -> None:
    clock = Clock()
    view = PlainProgress(clock)
    view.begin("smoke", 10, {"pass": 4, "infra_error": 2})
    assert view.tally.eta is None  # nothing finished in this run yet: no rate to go by
    view.started("job-0", attempt(6))
    clock.now += 30
    view.finished("job-0", attempt(6), "timeout", "too slow")
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "APG_CAMPAIGN_PLAN smoke: 10 planned, 6 already recorded, 4 to run"
    assert lines[-1].startswith("APG_CAMPAIGN_ATTEMPT 7/10 done (4 pass, 1 timeout, 2 infra_error), "
                                "elapsed 0:00:30, eta 0:01:30; #0006 ")
    view.finished("job-0", attempt(7), None)  # never ran: not counted, nothing said
    assert (view.tally.done, capsys.readouterr().err) == (7, "")


def test_the_live_display_renders_the_bar_counts_eta_and_running_attempts() -> None:
    clock = Clock()
    console = Console(file=io.StringIO(), record=True, width=120, force_terminal=True,
                      color_system="standard")
    view = LiveProgress(console, clock, auto_refresh=False)
    feed(view, clock)
    view._live.refresh()
    frame = console.export_text(clear=False)
    # The finished attempt is printed above the display, with its outcome in colour.
    assert "#0000 dv01_view_build arm=a agent=nop model=- repeat=0: pass" in frame
    assert "\x1b[32mpass" in console.export_text(styles=True, clear=False)
    last = frame[frame.rindex("smoke "):].splitlines()  # the display as last drawn
    # A third of the 30-cell bar done (rich draws the rest in the same glyph, dimmed).
    assert last[0].rstrip() == f"smoke {'━' * 10}╺{'━' * 19} 1/3 done elapsed 0:00:15 eta 0:00:30"
    assert last[1].strip() == "1 pass"
    assert [line.strip() for line in last[2:4]] == [
        "job-0  #0002 dv01_view_build arm=a agent=nop model=- repeat=0  0:00:05",
        "job-1  #0001 dv01_view_build arm=b agent=nop model=- repeat=0  0:00:15"]
    view.finished("job-1", attempt(1, "b"), "infra_error", "reset failed")
    view.finished("job-0", attempt(2), "tampered", "APG_TAMPERED x")
    view.close()
    text = console.export_text()
    assert "#0001 dv01_view_build arm=b agent=nop model=- repeat=0: infra_error (reset failed)" in text
    final = text[text.rindex("smoke "):].splitlines()
    assert "3/3 done" in final[0] and "eta 0:00:00" in final[0]
    assert final[1].split() == ["1", "pass", "1", "tampered", "1", "infra_error"]
    assert len([line for line in final if "job-" in line]) == 0  # nothing runs any more


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_edge_draws_only_on_a_terminal_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm-256color")
    assert isinstance(for_stream(io.StringIO(), no_color=False), PlainProgress)
    assert isinstance(for_stream(Terminal(), no_color=True), PlainProgress)
    assert isinstance(for_stream(Terminal(), no_color=False), LiveProgress)
    monkeypatch.setenv("TERM", "dumb")  # no cursor to move: lines
    assert isinstance(for_stream(Terminal(), no_color=False), PlainProgress)


def test_settings_read_no_color_and_the_data_directory() -> None:
    assert Settings.from_environ({"NO_COLOR": "1"}).no_color
    assert not Settings.from_environ({"NO_COLOR": ""}).no_color  # no-color.org: set and not empty
    assert Settings.from_environ({"XDG_DATA_HOME": "/d", "HOME": "/h"}).data_home == "/d"
    # A relative XDG_DATA_HOME is to be ignored (the XDG Base Directory specification).
    assert Settings.from_environ({"XDG_DATA_HOME": "d", "HOME": "/h"}).data_home == "/h/.local/share"
    assert Settings.from_environ({}).data_home is None


# ---------------------------------------------------------------------------- a real campaign


def test_a_campaign_says_its_beds_removes_them_and_writes_under_the_data_directory(
        apg: Any, tmp_path: Path, template: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "talk", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {}}, "agents": ["chatty"], "repeats": 1, "seed": 2, "jobs": 2,
        "bed": str(template)})
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    result = apg("campaign", "run", str(spec))
    assert result.rc == 0, result.err
    [out] = (tmp_path / "data" / "ai-proving-ground" / "campaigns").glob("talk-*Z")
    assert result.out == f"{out}\n"
    assert not (tmp_path / "build").exists()  # nothing under the directory it ran in
    lines = result.err.splitlines()
    said = [line.split()[0] for line in lines if line.startswith("APG_CAMPAIGN_")]
    assert said[:2] == ["APG_CAMPAIGN_BEDS", "APG_CAMPAIGN_PLAN"]
    assert said.count("APG_CAMPAIGN_RUNNING") == 2 and said.count("APG_CAMPAIGN_ATTEMPT") == 2
    assert said[-3:] == ["APG_CAMPAIGN_BEDS_REMOVED", "APG_CAMPAIGN_DONE", "APG_CAMPAIGN_REPORT"]
    beds = Path(lines[0].split()[1].rstrip(":"))
    assert lines[0] == (f"APG_CAMPAIGN_BEDS {beds}: one bed per job, removed at the end "
                        "(--keep-beds keeps them)")
    assert f"APG_CAMPAIGN_BEDS_REMOVED {beds}" in lines
    assert not beds.exists() and template.is_dir()  # the spec's template is the operator's
    assert [line for line in lines if line.startswith("APG_CAMPAIGN_ATTEMPT")][-1].startswith(
        "APG_CAMPAIGN_ATTEMPT 2/2 done (2 fail), elapsed ")
    # What the agent said is in each attempt's logs and nowhere on the terminal.
    assert "CHATTY" not in result.err + result.out
    for record in attempts(out):
        logs = (out / "runs" / f"{record['order']:04d}").rglob("*.log")
        text = "".join(path.read_text("utf-8", errors="replace") for path in logs)
        assert "CHATTY-ON-STDOUT" in text and "CHATTY-ON-STDERR" in text


def test_a_beds_folder_that_is_not_empty_is_refused_before_anything_is_written(
        apg: Any, tmp_path: Path, template: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "full", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {}}, "agents": ["nop"], "repeats": 1, "seed": 2,
        "bed": str(template)})
    (tmp_path / "beds").mkdir()
    (tmp_path / "beds" / "mine.txt").write_text("the operator's", encoding="utf-8")
    result = apg("campaign", "run", str(spec), "--out", str(tmp_path / "out"),
                 "--beds", str(tmp_path / "beds"))
    assert result.rc == 1
    assert result.err.startswith(f"APG_CAMPAIGN_CANNOT_RUN --beds {tmp_path / 'beds'} exists "
                                 "and is not empty")
    assert not (tmp_path / "out").exists()
    assert [p.name for p in (tmp_path / "beds").iterdir()] == ["mine.txt"]


def test_without_a_data_directory_the_campaign_asks_for_out(
        apg: Any, tmp_path: Path, template: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "nowhere", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {}}, "agents": ["nop"], "repeats": 1, "seed": 2,
        "bed": str(template)})
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("HOME", raising=False)
    result = apg("campaign", "run", str(spec))
    assert (result.rc, result.out) == (2, "")
    assert result.err.startswith("APG_USAGE neither XDG_DATA_HOME nor HOME is set")


def test_kept_beds_are_said_kept_at_the_start_and_the_end(apg: Any, tmp_path: Path,
                                                         template: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "keep", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {}}, "agents": ["nop"], "repeats": 1, "seed": 2, "jobs": 1,
        "bed": str(template)})
    beds = tmp_path / "new" / "beds"  # made by the runner, kept whole
    result = apg("campaign", "run", str(spec), "--out", str(tmp_path / "out"), "--beds",
                 str(beds), "--keep-beds")
    assert result.rc == 0, result.err
    lines = result.err.splitlines()
    assert lines[0] == f"APG_CAMPAIGN_BEDS {beds}: one bed per job, kept at the end (--keep-beds)"
    assert f"APG_CAMPAIGN_BEDS {beds}: kept (--keep-beds); remove it when done" in lines
    assert (beds / "job-0" / "db" / "site.sqlite").is_file()
