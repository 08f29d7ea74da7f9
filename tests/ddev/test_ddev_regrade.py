"""A campaign on a DDEV bed keeps each attempt's final state as drush dumped it (``sql:dump
--gzip`` through the driver, through the stub ``ddev``) with the bed's files, and ``apg campaign
regrade --ddev-bed SCRATCH`` grades those states in a scratch DDEV project: each dump imported
and the files unpacked into it, the current checks graded there, its baseline restored before
each state and at the end. Changing one check changes only that check's verdicts; no adapter
runs (the only child processes are ``ddev`` calls). Without ``--ddev-bed`` the states are
``APG_REGRADE_NEEDS_DDEV`` and no ddev is called; a scratch project that is not the campaign's
set is refused before anything is written."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest
from ddev_stub import Cli, Stub, new_project
from test_ddev_campaign import DATASET, records, spec
from test_ddev_end_to_end import provision

from ai_proving_ground.baselines.reset import require_baseline
from ai_proving_ground.campaigns.report import build_report
from ai_proving_ground.cli import campaign as campaign_cli
from ai_proving_ground.cli import doctor as doctor_cli
from ai_proving_ground.settings import Settings
from ai_proving_ground.yamlio import load_yaml
from support.no_agent import watch_children

pytestmark = pytest.mark.skipif(shutil.which("php") is None, reason="php not found: apt-get install php-cli")


def changed_dataset(path: Path) -> Path:
    """build_tasks with dv01's view-exists asking for a view no attempt built."""
    shutil.copytree(DATASET.parent / "hidden", path.parent / "hidden", dirs_exist_ok=True)
    data = load_yaml(DATASET)
    [task] = [t for t in data["tasks"] if t["id"] == "dv01_view_build"]
    [check] = [c for c in task["checks"] if c["id"] == "view-exists"]
    check["name"] = "views.view.kb_nowhere"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def imports(stub: Stub, since: int) -> list[Any]:
    """The SQL each ``ddev import-db`` was given after the first ``since`` calls."""
    return [c["imported"] for c in stub.all_calls()[since:] if c["command"][:1] == ["import-db"]]


def test_a_ddev_campaign_is_regraded_in_a_scratch_project_and_only_the_changed_check_changes(
        bed: Path, stub: Stub, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    provision(cli, bed, "kb_docs")
    out = tmp_path / "out"
    body = json.loads(spec(tmp_path, bed, ["nop", "oracle"]).read_text())
    body["arms"] = {"plain": {}}  # one arm: nop's fail and oracle's pass, one attempt each
    (tmp_path / "spec.yml").write_text(json.dumps(body))
    rc, _, err = cli(campaign_cli.main, "run", str(tmp_path / "spec.yml"), "--out", str(out))
    assert rc == 0, err
    done = records(out)
    assert sorted((r["agent"], r["outcome"]) for r in done) == \
        [("nop", "fail"), ("oracle", "pass")]
    kept = {}
    for record in done:
        state, folder = record["state"], out / "runs" / f"{record['order']:04d}" / "state"
        assert state["driver"] == "ddev"
        assert sorted(state["files"]) == ["database.sql.gz", "files.tar.gz"]
        # The stub's dump is its site state as JSON; drush's gzip is kept as it came.
        kept[record["order"]] = gzip.decompress((folder / "database.sql.gz").read_bytes()).decode()
        with tarfile.open(folder / "files.tar.gz") as tar:
            assert "web/sites/default/files/.keep" in tar.getnames()
        assert "web/sites/default/files" in state["paths"]

    scratch = new_project(tmp_path / "scratch")
    # No adapter may run from here on, and every child process is a ddev call.
    real = subprocess.Popen.__init__  # put back for the doctor at the end
    spawned = watch_children(monkeypatch)
    recording = subprocess.Popen.__init__  # the watching one, switched off and on below

    # Without a scratch project: not regradable, with the fix, and no ddev called.
    calls = len(stub.all_calls())
    rc, printed, err = cli(campaign_cli.main, "regrade", str(out), "--json")
    assert rc == 0, err
    data = json.loads(printed)
    assert [(a["status"], a["token"]) for a in data["attempts"]] == \
        [("not_regradable", "APG_REGRADE_NEEDS_DDEV")] * 2
    assert err.count("APG_REGRADE_NEEDS_DDEV #") == 2 and "--ddev-bed PROJECT_DIR" in err
    assert len(stub.all_calls()) == calls and spawned == []
    first_regrades = sorted((out / "regrades").iterdir())

    # A folder that is no DDEV project, and a project without the campaign's baseline: refused
    # before anything is written or any ddev is called, with the command that fixes it.
    (tmp_path / "plain").mkdir()
    for project, token in ((tmp_path / "plain", "APG_REGRADE_BED_INVALID"),
                           (scratch, "APG_REGRADE_BED_MISMATCH")):
        rc, _, err = cli(campaign_cli.main, "regrade", str(out), "--ddev-bed", str(project))
        assert rc == 2 and token in err and "Traceback" not in err, err
        assert f"apg provision --approot {project} kb_docs" in err
    # A campaign that ran another set (an older kb_docs, say) is refused on this project too.
    older = Path(shutil.copytree(out, tmp_path / "older"))
    record = json.loads((older / "campaign.json").read_text())
    record["provenance"]["set_key"] = "0" * 16
    (older / "campaign.json").write_text(json.dumps(record))
    rc, _, err = cli(campaign_cli.main, "regrade", str(older), "--ddev-bed", str(bed))
    assert rc == 2 and "APG_REGRADE_BED_MISMATCH" in err, err
    assert f"the campaign ran set {'0' * 16}" in err
    assert sorted((out / "regrades").iterdir()) == first_regrades
    assert len(stub.all_calls()) == calls and spawned == []

    monkeypatch.setattr(subprocess.Popen, "__init__", real)  # provision runs git
    provision(cli, scratch, "kb_docs")
    baseline = require_baseline(scratch, ["kb_docs"], Settings.from_environ())
    baseline_sql = gzip.decompress(baseline.dump.read_bytes()).decode()
    monkeypatch.setattr(subprocess.Popen, "__init__", recording)
    # A project whose reset fails (ddev import-db fails once): the regrade stops, nothing is
    # written, and the project is reset once more on the way out.
    stub.on("import-db", stderr="Failed to import database\n", exit=1, once=True)
    calls = len(stub.all_calls())
    rc, _, err = cli(campaign_cli.main, "regrade", str(out), "--ddev-bed", str(scratch))
    assert rc == 1 and "APG_REGRADE_BED_UNUSABLE" in err and "Traceback" not in err, err
    assert sorted((out / "regrades").iterdir()) == first_regrades
    assert len(imports(stub, calls)) == 2 and "APG_RESET_OK" in err
    calls = len(stub.all_calls())
    rc, printed, err = cli(campaign_cli.main, "regrade", str(out), "--ddev-bed", str(scratch),
                           "--dataset", str(changed_dataset(tmp_path / "data" / "tasks.yml")),
                           "--json")
    assert rc == 0, err
    data = json.loads(printed)
    for entry in data["attempts"]:
        oracle = entry["agent"] == "oracle"
        assert entry["status"] == "regraded", entry
        assert entry["changed"] == (["view-exists"] if oracle else []), entry
        for pair in entry["checks"]:
            expected = (("pass", "fail") if oracle else ("fail", "fail")) \
                if pair["id"] == "view-exists" else (pair["old"], pair["old"])
            assert (pair["old"], pair["new"]) == expected and pair["old"] is not None, pair
        assert entry["old"]["outcome"] == ("pass" if oracle else "fail")
        assert entry["new"]["outcome"] == "fail"
    assert data["totals"]["outcome_changed"] == 1 and data["totals"]["checks_changed"] == 1
    [folder] = sorted(set((out / "regrades").iterdir()) - set(first_regrades))
    assert build_report(folder)["totals"]["pass"] == 0
    # Every state imported in attempt order, each after a reset to the scratch's baseline, and
    # one more reset at the end; every child a ddev call (no adapter, nothing else).
    imported = imports(stub, calls)
    assert imported[1::2] == [kept[order] for order in sorted(kept)]
    assert len(imported) == 2 * len(kept) + 1
    assert set(imported[0::2]) == {baseline_sql}
    assert spawned and all(Path(argv[0]).name == "ddev" for argv in spawned), spawned
    # The scratch project is at its baseline again, and holds none of the attempts' runs.
    monkeypatch.setattr(subprocess.Popen, "__init__", real)
    rc, report, err = cli(doctor_cli.main, "--approot", str(scratch), "kb_docs")
    assert rc == 0 and json.loads(report)["healthy"] is True, report + err
