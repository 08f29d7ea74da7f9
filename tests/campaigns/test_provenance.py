"""campaign.json's provenance: each fingerprint equals what the product's own records say."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from campaign_kit import attempts, run_campaign, write_spec

from ai_proving_ground import __version__
from ai_proving_ground.campaigns import provenance
from ai_proving_ground.campaigns.records import CampaignFiles, read_campaign


def test_the_campaign_record_names_what_it_ran_on(apg: Any, tmp_path: Path, template: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "provenance", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {"adapter": "oracle"}}, "agents": ["sleeps"], "repeats": 1,
        "seed": 4, "bed": str(template)})
    out = tmp_path / "out"
    run_campaign(apg, spec, out)
    found = read_campaign(CampaignFiles(out)).provenance  # read through its schema
    setup = json.loads((out / "setup.json").read_text("utf-8"))
    assert len(attempts(out)) == 2
    run = json.loads((out / "runs" / "0000" / "run.json").read_text("utf-8"))
    grade = json.loads((out / "runs" / "0000" / "grade.json").read_text("utf-8"))

    assert found["spec"] == {"path": str(spec), "sha256": hashlib.sha256(spec.read_bytes()).hexdigest()}
    assert found["fixtures"] == setup["fixtures"] == ["kb_docs"]
    assert found["baseline"]["tag"] == setup["tag"] == f"apg-baseline-{found['set_key']}"
    assert found["tasks"] == {"dv01_view_build": run["task_sha256"]}
    # The same grader tree and set the attempt's envelope was graded against.
    assert found["grader_tree_sha256"] == _find(grade, "grader_tree_sha256")
    assert found["set_key"] == _find(grade, "fixture_set_key")
    assert found["product"] == {"version": __version__, "code_sha256": provenance.code_sha256()}
    sleeps = template / ".ddev" / "agents" / "sleeps"
    assert found["adapters"]["sleeps"] == {
        "path": str(sleeps), "source": "bed", "sha256": hashlib.sha256(sleeps.read_bytes()).hexdigest(),
        "commands": {}}
    assert found["adapters"]["oracle"]["source"] == "shipped"


def _find(data: Any, key: str) -> Any:
    """The one value of ``key`` anywhere in ``data``."""
    if isinstance(data, dict):
        if key in data:
            return data[key]
        data = list(data.values())
    if isinstance(data, list):
        for item in data:
            value = _find(item, key)
            if value is not None:
                return value
    return None


def test_each_agent_cli_is_asked_its_version_once_and_an_absent_one_is_recorded(
        tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    for name, body in {"fakecli": f'echo "$0 $*" >> {calls}; echo "fakecli 1.2.3 (build 9)"',
                       "brokencli": "echo 'no such flag' >&2; exit 3",
                       "hungcli": "sleep 30"}.items():
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        script.chmod(0o755)
    host = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": "/nonexistent", "SECRET_TOKEN": "x"}
    provenance.VERSION_TIMEOUT_S, saved = 0.5, provenance.VERSION_TIMEOUT_S
    try:
        found = provenance.cli_versions(["fakecli", "absentcli", "brokencli", "hungcli", "fakecli"],
                                        host)
    finally:
        provenance.VERSION_TIMEOUT_S = saved
    assert found == {
        "fakecli": {"status": "ok", "path": str(bin_dir / "fakecli"), "version": "fakecli 1.2.3 (build 9)"},
        "absentcli": {"status": "absent", "path": None, "version": None},
        "brokencli": {"status": "failed", "path": str(bin_dir / "brokencli"),
                      "version": "no such flag", "exit_code": 3},
        "hungcli": {"status": "timed_out", "path": str(bin_dir / "hungcli"), "version": None},
    }
    assert calls.read_text("utf-8").splitlines() == [f"{bin_dir / 'fakecli'} --version"]


def test_resume_compares_fingerprints_not_paths_or_commits() -> None:
    recorded = {"dataset": {"sha256": "d" * 64, "path": "/old/tasks.yml"},
                "given": {"with": {"skills": [{"name": "s", "sha256": "1" * 64}]}},
                "provenance": {"spec": {"path": "/old/spec.yml", "sha256": "a" * 64},
                               "baseline": {"tag": "apg-baseline-k", "commit": "c1"},
                               "adapters": {"x": {"path": "/old/x", "sha256": "b" * 64,
                                                  "commands": {"cli": {"status": "ok",
                                                                       "path": "/usr/bin/cli",
                                                                       "version": "1.0"}}}}}}
    moved = json.loads(json.dumps(recorded).replace("/old/", "/new/").replace('"c1"', '"c2"'))
    assert provenance.changes(recorded, moved) == []
    upgraded = json.loads(json.dumps(moved).replace('"1.0"', '"1.1"').replace("1" * 64, "2" * 64))
    assert provenance.changes(recorded, upgraded) == [
        "adapters.x.commands.cli.version (1.0 -> 1.1)",
        f"given.with.skills.s.sha256 ({'1' * 12}… -> {'2' * 12}…)"]


def test_code_sha256_follows_the_code_and_ignores_caches(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "m.py").write_text("x = 1\n", encoding="utf-8")
    before = provenance.code_sha256(tmp_path / "pkg")
    (tmp_path / "pkg" / "__pycache__" / "m.cpython-311.pyc").write_bytes(os.urandom(8))
    assert provenance.code_sha256(tmp_path / "pkg") == before
    (tmp_path / "pkg" / "m.py").write_text("x = 2\n", encoding="utf-8")
    assert provenance.code_sha256(tmp_path / "pkg") != before
