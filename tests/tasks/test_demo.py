"""``python -m ai_proving_ground.demo``: the whole job on a fresh bed, and the envelopes it stores.

The demo grades an oracle attempt (pass) and a nop attempt (fail); both stored envelopes meet the
project's schema, the official 0.2.2 one and, in the eee nox session, the published package.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import eee_official
from ai_proving_ground import demo
from ai_proving_ground.baselines.store import provisioned_sets
from ai_proving_ground.cli import results as results_cli
from ai_proving_ground.fixtures import load_set
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.tasks.results import results_dir


def test_the_demo_stores_one_passing_and_one_failing_envelope(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        check_envelope_schemas: Callable[[Any], None]) -> None:
    bed = tmp_path / "demo-bed"
    assert demo.main([str(bed)]) == 0
    out = capsys.readouterr().out
    assert "oracle: score 1.0" in out
    # It ends with the shipped example campaign and says where its report is.
    records = tmp_path / "demo-campaign"
    said = out.splitlines()
    assert said[-2].startswith(f"The campaign's report is {records / 'report.txt'} (`")
    assert said[-1].startswith(f"The bed is at {bed}; try `")
    assert (records / "report.txt").read_text("utf-8").startswith(
        "Campaign smoke (seed 20260101): 4 planned: 2 pass, 2 fail, ")
    stored = sorted(results_dir(bed).glob("*.json"))
    envelopes = [json.loads(path.read_text(encoding="utf-8")) for path in stored]
    verdicts = sorted(e["evaluation_results"][0]["score_details"]["details"]["verdict"]
                      for e in envelopes)
    assert verdicts == ["fail", "pass"]
    for envelope in envelopes:
        check_envelope_schemas(envelope)
    # The demo resets and grades one set: every envelope names the bed's one baseline.
    [provisioned] = provisioned_sets(bed)
    key = load_set(provisioned, bed).key
    assert {e["eval_library"]["additional_details"]["fixture_set_key"] for e in envelopes} == {key}


def test_the_demos_envelopes_export_merge_ready(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        check_envelope_schemas: Callable[[Any], None]) -> None:
    bed = tmp_path / "demo-bed"
    assert demo.main([str(bed)]) == 0
    out = tmp_path / "eee"
    capsys.readouterr()
    assert results_cli.main(["export", "--approot", str(bed), "--eee", str(out)]) == 0
    printed, err = capsys.readouterr()
    files = sorted(out.glob("data/*/*/*/*.json"))
    assert [str(f) for f in files] == sorted(printed.split())
    assert err.strip().splitlines()[-1].startswith("APG_EXPORT_OK 2 written, 0 unchanged, "
                                                   "0 skipped, schema 0.2.2")
    layout = sorted(f.relative_to(out).parent.as_posix() for f in files)
    assert layout == ["data/build_tasks/ai-proving-ground/nop",
                      "data/build_tasks/ai-proving-ground/oracle"]
    for path in files:
        text = path.read_text(encoding="utf-8")
        for host in (str(tmp_path), str(PROJECT_ROOT), str(Path.home())):
            assert host not in text, f"{path} names {host}"
        envelope = json.loads(text)
        check_envelope_schemas(envelope)
        eee_official.check_exported(out, path)
    # Again: the same files, nothing added; and 0.3.0 on request.
    assert results_cli.main(["export", "--approot", str(bed), "--eee", str(out)]) == 0
    assert "0 written, 2 unchanged" in capsys.readouterr().err
    assert sorted(out.glob("data/*/*/*/*.json")) == files
    newer = tmp_path / "eee-030"
    assert results_cli.main(["export", "--approot", str(bed), "--eee", str(newer),
                             "--schema", "0.3.0"]) == 0
    for path in newer.glob("data/*/*/*/*.json"):
        assert json.loads(path.read_text(encoding="utf-8"))["schema_version"] == "0.3.0"


def test_a_second_demo_replaces_its_campaign_and_refuses_a_folder_it_did_not_make(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bed, records = tmp_path / "demo-bed", tmp_path / "demo-campaign"
    assert demo.main([str(bed)]) == 0
    first = (records / "campaign.json").read_text("utf-8")
    assert demo.main([str(bed)]) == 0  # the bed reused, the campaign run afresh
    assert (records / "campaign.json").read_text("utf-8") != first
    shutil.rmtree(records)
    records.mkdir()
    (records / "mine.txt").write_text("the operator's", encoding="utf-8")
    capsys.readouterr()
    assert demo.main([str(bed)]) == 1
    assert f"APG_DEMO_REFUSED {records} exists and holds no demo campaign" in capsys.readouterr().err
    assert [p.name for p in records.iterdir()] == ["mine.txt"]
