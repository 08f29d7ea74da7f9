"""``apg agents`` and ``apg fixtures``: what exists, without learning names by mistyping one."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ai_proving_ground.bed import init_bed
from ai_proving_ground.cli import agents as agents_cli
from ai_proving_ground.cli import fixtures as fixtures_cli
from ai_proving_ground.cli import provision as provision_cli
from ai_proving_ground.fixtures import load_fixture


def listed(capsys: pytest.CaptureFixture[str], main: object, *argv: str) -> list[dict[str, object]]:
    capsys.readouterr()
    assert main(["--json", *argv]) == 0  # type: ignore[operator]
    rows: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return rows


def test_agents_lists_the_shipped_adapters_with_their_header(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    rows = {row["name"]: row for row in listed(capsys, agents_cli.main, "--approot", str(tmp_path))}
    assert {"claude-code", "codex", "manual", "nop", "oracle"} <= set(rows)
    claude = rows["claude-code"]
    assert (claude["source"], claude["credentials"], claude["usable"]) == ("shipped", "bed-scoped",
                                                                           True)
    assert claude["on_path"] == {"claude": str(fake), "node": None}
    assert rows["manual"]["interactive"] is True and rows["nop"]["credentials"] == "none"
    capsys.readouterr()
    assert agents_cli.main(["--approot", str(tmp_path)]) == 0
    table = capsys.readouterr().out
    assert "claude (found), node (not on PATH)" in table
    assert table.splitlines()[0].split() == ["name", "source", "credentials", "commands",
                                             "terminal", "description"]


def test_an_adapter_that_cannot_run_is_listed_with_the_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agents = tmp_path / ".ddev" / "agents"
    agents.mkdir(parents=True)
    mine = agents / "mine"
    mine.write_text("#!/bin/sh\n## Description: my agent\n## Credentials: none\n")
    mine.chmod(0o755)
    broken = agents / "broken"
    broken.write_text("#!/bin/sh\n## Env: NOT-A-NAME\n")
    broken.chmod(0o755)
    rows = {row["name"]: row for row in listed(capsys, agents_cli.main, "--approot", str(tmp_path))}
    assert rows["mine"]["source"] == "bed" and rows["mine"]["description"] == "my agent"
    assert rows["broken"]["usable"] is False
    assert str(rows["broken"]["problem"]).startswith("APG_RUN_AGENT_INVALID ")
    # not executable: not an adapter at all (apg run would refuse it by name)
    mine.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert "mine" not in {row["name"] for row in listed(capsys, agents_cli.main, "--approot",
                                                        str(tmp_path))}
    assert os.access(broken, os.X_OK)


def test_fixtures_lists_shipped_and_bed_fixtures_and_what_is_provisioned(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bed = tmp_path / "bed"
    init_bed(bed, ["kb_docs"])
    assert provision_cli.main(["--approot", str(bed), "kb_docs"]) == 0
    bad = bed / "recipes" / "fixture_half_made"
    bad.mkdir(parents=True)
    (bad / "recipe.yml").write_text("name: half made\n")
    rows = {row["name"]: row for row in listed(capsys, fixtures_cli.main, "--approot", str(bed))}
    assert {"kb_docs", "canvas_home", "kb_notices", "half_made"} <= set(rows)
    assert rows["kb_docs"]["provisioned"] is True and rows["canvas_home"]["provisioned"] is False
    shipped = load_fixture("kb_docs", bed)
    assert (rows["kb_docs"]["version"], rows["kb_docs"]["content"]) == (
        shipped.version, len(shipped.facts["content"]))
    assert str(rows["half_made"]["problem"]).startswith("APG_FRAGMENT_INVALID ")
    assert "manifest/fragment.yml" in str(rows["half_made"]["problem"])


def test_fixtures_outside_a_bed_lists_the_shipped_ones(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = listed(capsys, fixtures_cli.main, "--approot", str(tmp_path))
    names = [row["name"] for row in rows]
    assert names == sorted(names) and {"canvas_home", "kb_docs", "kb_notices"} <= set(names)
    assert not any(row["provisioned"] for row in rows)
