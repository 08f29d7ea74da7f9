"""A task of several turns on a DDEV bed, through the stub ``ddev``: the conditions before a later
turn (one round trip) and each turn's config snapshot (two) are read through the ddev driver, and
the oracle's first turn, which builds the view, makes the second turn's only_if false."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from ddev_stub import Cli, Stub

from ai_proving_ground.baselines.store import runs_dir
from ai_proving_ground.cli import grade as grade_cli
from ai_proving_ground.cli import run as run_cli
from ai_proving_ground.paths import project_dir
from ai_proving_ground.settings import Settings

pytestmark = pytest.mark.skipif(shutil.which("php") is None, reason="php not found: apt-get install php-cli")


def execs(stub: Stub) -> list[list[str]]:
    return [command for command in stub.commands() if command[:1] == ["exec"]]


def test_a_later_turn_is_decided_and_snapshotted_through_the_ddev_driver(
        bed: Path, stub: Stub, cli: Cli, tmp_path: Path) -> None:
    shipped = yaml.safe_load((project_dir("datasets") / "build_tasks.yml").read_text("utf-8"))
    task = next(t for t in shipped["tasks"] if t["id"] == "dv01_view_build")
    task.pop("hidden_verifier", None)
    task["final"] = {"checks": [{"type": "config_exists", "name": "views.view.kb_billing"}]}
    task.pop("checks")
    task["turns"] = [{"id": "again", "prompt": "Please build it now.",
                      "only_if": [{"not": {"type": "config_exists", "name": "views.view.kb_billing"}}]}]
    dataset = tmp_path / "turns.yml"
    dataset.write_text(yaml.safe_dump({"dataset": "ddev_turns", "version": 1, "tasks": [task]}))
    before = len(execs(stub))
    rc, out, err = cli(run_cli.main, "--approot", str(bed), task["id"], "--agent=oracle",
                       f"--dataset={dataset}", "--json")
    assert rc == 0, err
    record = json.loads(out)
    first, second = record["turns"]
    assert (first["sent"], second["sent"]) == (True, False)
    assert second["skipped"].startswith("only_if does not hold: not#0"), second
    run_dir = runs_dir(bed, Settings.from_environ()) / record["run_id"]
    state = json.loads((run_dir / "turns" / "1" / "config.json").read_text("utf-8"))
    assert state["views.view.kb_billing"]["id"] == "kb_billing"
    # After the oracle's two drush calls: the turn's config (the driver's two round trips:
    # every name, then every value) and the second turn's condition (one), nothing more.
    probes = [{k: v for k, v in (c.get("request") or {}).items() if v} for c in stub.calls()
              if c["command"][:3] == ["exec", "drush", "php:script"]]
    assert probes[-3]["config_prefixes"] == [""] and "views.view.kb_billing" in probes[-2]["config"]
    assert probes[-1] == {"config": ["views.view.kb_billing"]}
    assert len(execs(stub)) - before == 5
    rc, out, err = cli(grade_cli.main, "--approot", str(bed), task["id"], f"--run={record['run_id']}",
                       f"--dataset={dataset}")
    assert rc == 0, err
    details = json.loads(out)["evaluation_results"][0]["score_details"]["details"]
    assert (details["verdict"], details["turns_sent"]) == ("pass", "1")
