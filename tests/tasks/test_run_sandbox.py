"""``apg run`` confines its adapter: the record, the network switch, declared reads, the refusal
without a sandbox and the recorded opt-out (in run.json and the envelope).

Tests that need a backend skip with a message naming bubblewrap or Landlock when it is absent.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.baselines.store import baseline_dir
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.sandbox import bwrap, confine, landlock
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.site_access import ddev_global_dir

Run = Callable[..., Any]
BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(
    BWRAP is None or bwrap.probe(BWRAP) is not None,
    reason="needs bubblewrap (apt-get install bubblewrap) working on this machine")
needs_landlock = pytest.mark.skipif(
    landlock.abi_version() == 0, reason="needs Landlock (Linux 5.13+ with the landlock LSM)")


def add_adapter(approot: Path, name: str, body: str, header: str = "") -> None:
    path = approot / ".ddev" / "agents" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n## Credentials: none\n{header}{body}\n", encoding="utf-8")
    path.chmod(0o755)


def only_run(approot: Path) -> tuple[Path, dict[str, Any]]:
    [run_dir] = (baseline_dir(approot) / "runs").iterdir()
    return run_dir, json.loads((run_dir / "run.json").read_text(encoding="utf-8"))


@pytest.fixture
def plain(bed: Path) -> Path:
    """A bed without fixtures (apg run refuses a directory with no site in it)."""
    return bed


@pytest.fixture
def no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine with neither bubblewrap nor Landlock."""
    monkeypatch.setattr(confine, "_bwrap_here", lambda: (None, "bubblewrap (bwrap) is not installed"))
    monkeypatch.setattr(landlock, "abi_version", lambda: 0)


@needs_bwrap
def test_run_json_records_what_the_sandbox_allowed(plain: Path, apg: Run) -> None:
    result = apg("run", "dv01_view_build", "--approot", str(plain), "--agent", "nop")
    assert result.rc == 0, result.err
    run_dir, record = only_run(plain)
    sandbox = record["sandbox"]
    assert (sandbox["backend"], sandbox["unconfined_allowed"], sandbox["network"]) == \
        ("bwrap", False, True)
    assert sandbox["workdir"] == str(plain)
    assert sandbox["writable"] == sorted(
        [str(p.resolve()) for p in (plain, run_dir / "work", run_dir / "home", run_dir / "tmp")],
        key=lambda p: (len(Path(p).parts), p))
    # apg's own records there the adapter reads, and never writes.
    assert str(run_dir.resolve()) in sandbox["readable"]
    assert str(baseline_dir(plain).resolve()) in sandbox["masked"]
    assert (sandbox["home"], sandbox["tmp"]) == (str(run_dir / "home"), str(run_dir / "tmp"))


@needs_bwrap
def test_unshare_net_leaves_the_adapter_only_loopback(plain: Path, apg: Run) -> None:
    add_adapter(plain, "net", 'cat /proc/net/dev > "$APG_RUN_DIR/net"')
    assert apg("run", "dv01_view_build", "--approot", str(plain), "--agent", "net",
               "--unshare-net").rc == 0
    run_dir, record = only_run(plain)
    assert record["sandbox"]["network"] is False
    lines = (run_dir / "work" / "net").read_text(encoding="utf-8").splitlines()
    assert [line.split(":")[0].strip() for line in lines if ":" in line] == ["lo"]


@needs_bwrap
def test_declared_reads_are_readable_and_nothing_else(plain: Path, tmp_path: Path,
                                                      apg: Run) -> None:
    shared, private = tmp_path / "models", tmp_path / "private"
    for directory in (shared, private):
        directory.mkdir()
        (directory / "file").write_text(directory.name, encoding="utf-8")
    body = (f'cat {shared}/file > "$APG_RUN_DIR/shared" 2>/dev/null; '
            f'cat {private}/file > "$APG_RUN_DIR/private" 2>/dev/null; exit 0')
    add_adapter(plain, "reader", body, header=f"## Reads: {shared}\n")
    assert apg("run", "dv01_view_build", "--approot", str(plain), "--agent", "reader").rc == 0
    run_dir, record = only_run(plain)
    assert (run_dir / "work" / "shared").read_text(encoding="utf-8") == "models"
    assert (run_dir / "work" / "private").read_text(encoding="utf-8") == ""
    assert str(shared.resolve()) in record["sandbox"]["readable"]


@needs_bwrap
def test_shipped_datasets_and_campaigns_stay_hidden_inside_a_readable_install(
        plain: Path, apg: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    # As if the operator let the sandbox read the whole install (a wheel ships both inside it).
    monkeypatch.setenv("AI_PG_SANDBOX_READS", str(PROJECT_ROOT))
    targets = {"dataset": PROJECT_ROOT / "datasets" / "build_tasks.yml",
               "campaign": PROJECT_ROOT / "campaigns" / "example.yml",
               "recipe": PROJECT_ROOT / "recipes" / "apg_base" / "recipe.yml"}
    body = "; ".join(f'cat {path} > "$APG_RUN_DIR/{name}" 2>/dev/null'
                     for name, path in targets.items())
    add_adapter(plain, "reader", body + "; exit 0")
    assert apg("run", "dv01_view_build", "--approot", str(plain), "--agent", "reader").rc == 0
    run_dir, _ = only_run(plain)
    seen = {name: (run_dir / "work" / name).read_text(encoding="utf-8") for name in targets}
    assert seen["dataset"] == seen["campaign"] == ""
    assert seen["recipe"] == targets["recipe"].read_text(encoding="utf-8")  # the install is there


@pytest.mark.usefixtures("no_sandbox")
def test_no_sandbox_refuses_and_records_nothing(plain: Path, apg: Run) -> None:
    result = apg("run", "dv01_view_build", "--approot", str(plain), "--agent", "nop")
    assert result.rc == 1
    assert "APG_RUN_UNCONFINED no sandbox for the adapter" in result.err
    assert "apt-get install bubblewrap" in result.err and "AI_PG_ALLOW_UNCONFINED=1" in result.err
    assert not (baseline_dir(plain) / "runs").exists() or \
        not list((baseline_dir(plain) / "runs").iterdir())


@pytest.mark.usefixtures("no_sandbox")
def test_the_opt_out_is_recorded_in_run_json_and_the_envelope(
        provisioned_fixtures_bed: Path, apg: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    bed = provisioned_fixtures_bed
    monkeypatch.setenv("AI_PG_ALLOW_UNCONFINED", "1")
    monkeypatch.setenv("AI_PG_NO_IMPORT", "1")
    result = apg("run", "dv01_view_build", "--approot", str(bed), "--agent", "nop")
    assert result.rc == 0, result.err
    assert "APG_RUN_UNCONFINED_ALLOWED" in result.err
    run_dir, record = only_run(bed)
    assert record["sandbox"]["backend"] == "none"
    assert record["sandbox"]["unconfined_allowed"] is True
    graded = apg("grade", "dv01_view_build", "--approot", str(bed), f"--run={run_dir.name}")
    details = json.loads(graded.out)["source_metadata"]["additional_details"]
    assert (details["apg_sandbox"], details["apg_sandbox_unconfined_allowed"]) == ("none", "true")


@needs_bwrap
def test_envelope_names_the_sandbox(provisioned_fixtures_bed: Path, apg: Run,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    bed = provisioned_fixtures_bed
    monkeypatch.setenv("AI_PG_NO_IMPORT", "1")
    assert apg("run", "dv01_view_build", "--approot", str(bed), "--agent", "nop").rc == 0
    run_dir, _ = only_run(bed)
    graded = apg("grade", "dv01_view_build", "--approot", str(bed), f"--run={run_dir.name}")
    details = json.loads(graded.out)["source_metadata"]["additional_details"]
    assert (details["apg_sandbox"], details["apg_sandbox_unconfined_allowed"],
            details["apg_sandbox_network"]) == ("bwrap", "false", "true")


@needs_landlock
def test_the_oracle_builds_through_apg_site_under_landlock(
        provisioned_fixtures_bed: Path, apg: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    bed = provisioned_fixtures_bed
    monkeypatch.setenv("AI_PG_SANDBOX", "landlock")
    result = apg("run", "dv01_view_build", "--approot", str(bed), "--agent", "oracle")
    assert result.rc == 0, result.err
    _, record = only_run(bed)
    assert record["sandbox"]["backend"] == "landlock"
    assert "views.view.kb_billing" in EmbeddedSite(bed).all_config()


def test_ddevs_global_dir_is_found_where_ddev_looks(tmp_path: Path) -> None:
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    assert ddev_global_dir({"HOME": str(home)}) is None  # no ddev here: nothing to hand on
    (home / ".ddev").mkdir(parents=True)
    assert ddev_global_dir({"HOME": str(home)}) == home / ".ddev"
    (home / ".config" / "ddev").mkdir(parents=True)
    assert ddev_global_dir({"HOME": str(home)}) == home / ".config" / "ddev"
    (xdg / "ddev").mkdir(parents=True)
    assert ddev_global_dir({"HOME": str(home), "XDG_CONFIG_HOME": str(xdg)}) == xdg / "ddev"
