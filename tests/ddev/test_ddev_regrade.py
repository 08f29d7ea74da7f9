"""A campaign on a DDEV bed keeps each attempt's final state as drush dumped it (``sql:dump
--gzip`` through the driver, through the stub ``ddev``) with the bed's files; ``apg campaign
regrade`` reports those states as needing a DDEV project, never grades them and calls no ddev."""

from __future__ import annotations

import gzip
import json
import shutil
import tarfile
from pathlib import Path

import pytest
from ddev_stub import Cli, Stub
from test_ddev_campaign import records, spec
from test_ddev_end_to_end import provision

from ai_proving_ground.cli import campaign as campaign_cli

pytestmark = pytest.mark.skipif(shutil.which("php") is None, reason="php not found: apt-get install php-cli")


def test_a_ddev_attempt_keeps_drushs_dump_and_regrade_says_it_needs_ddev(
        bed: Path, stub: Stub, cli: Cli, tmp_path: Path) -> None:
    provision(cli, bed, "kb_docs")
    out = tmp_path / "out"
    rc, _, err = cli(campaign_cli.main, "run", str(spec(tmp_path, bed, ["nop"])), "--out", str(out))
    assert rc == 0, err
    done = records(out)
    assert [r["outcome"] for r in done] == ["fail", "fail"]
    for record in done:
        state, folder = record["state"], out / "runs" / f"{record['order']:04d}" / "state"
        assert state["driver"] == "ddev"
        assert sorted(state["files"]) == ["database.sql.gz", "files.tar.gz"]
        # The stub's dump is its site state as JSON; drush's gzip is kept as it came.
        assert json.loads(gzip.decompress((folder / "database.sql.gz").read_bytes()))
        with tarfile.open(folder / "files.tar.gz") as tar:
            assert "web/sites/default/files/.keep" in tar.getnames()
        assert "web/sites/default/files" in state["paths"]
    calls = len(stub.all_calls())
    rc, printed, err = cli(campaign_cli.main, "regrade", str(out), "--json")
    assert rc == 0, err
    data = json.loads(printed)
    assert [(a["status"], a["token"]) for a in data["attempts"]] == \
        [("not_regradable", "APG_REGRADE_NEEDS_DDEV")] * 2
    assert err.count("APG_REGRADE_NEEDS_DDEV #") == 2
    assert len(stub.all_calls()) == calls  # regrade touched no DDEV project
