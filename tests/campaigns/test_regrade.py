"""``apg campaign regrade``: a finished campaign graded again from each attempt's kept final state.

One campaign (dv01 with a hidden verifier that reads the site, plain and solved arms, two
repeats) runs once for the module; its beds are then deleted, so no regrade can reach one.
Changing one check changes only that check's verdicts; an unchanged dataset reproduces every
verdict; no adapter (no child process but the hidden verifier's own command) runs, and the
campaign's records stay byte for byte; a tampered or missing state is never graded."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import subprocess
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from campaign_kit import attempts, reference_steps, write_spec

from ai_proving_ground.campaigns.final_state import FILES, keep, state_dir
from ai_proving_ground.campaigns.lock import only_campaign
from ai_proving_ground.campaigns.report import build_report
from ai_proving_ground.campaigns.runner import RunnerOptions, run_campaign
from ai_proving_ground.cli.campaign import site_step
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.envelope import read_envelope
from ai_proving_ground.yamlio import load_yaml
from support.no_agent import watch_children

BUILD_TASKS = PROJECT_ROOT / "datasets" / "build_tasks.yml"
# The hidden verifier reads the site it is given: it passes only where the view was built.
HIDDEN = ["sh", "-c", 'eval "$APG_SITE" config:get views.view.kb_billing']
PUBLIC = ["view-exists", "rows-in-order", "page-served"]


def write_dataset(path: Path, edit: Callable[[dict[str, Any]], None] = lambda task: None) -> Path:
    """build_tasks (its hidden patches beside it) with dv01 given a hidden verifier (a patch
    adding a note, then :data:`HIDDEN`), then ``edit``."""
    shutil.copytree(BUILD_TASKS.parent / "hidden", path.parent / "hidden", dirs_exist_ok=True)
    note = "web/modules/custom/regrade_note.txt"
    (path.parent / "hidden" / "dv01.patch").write_text(
        f"diff --git a/{note} b/{note}\nnew file mode 100644\n--- /dev/null\n+++ b/{note}\n"
        "@@ -0,0 +1 @@\n+hidden\n", encoding="utf-8")
    data = load_yaml(BUILD_TASKS)
    [task] = [t for t in data["tasks"] if t["id"] == "dv01_view_build"]
    task["hidden_verifier"] = {"patch": "hidden/dv01.patch", "commands": [HIDDEN]}
    edit(task)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def check(task: dict[str, Any], check_id: str) -> dict[str, Any]:
    [found] = [c for c in task["checks"] if c["id"] == check_id]
    return found


@pytest.fixture(scope="module")
def finished(template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The finished campaign's directory (its beds removed)."""
    root = tmp_path_factory.mktemp("regrade")
    dataset = write_dataset(root / "data" / "tasks.yml")
    spec = write_spec(root / "spec.yml", {
        "name": "regrade", "dataset": str(dataset), "tasks": ["dv01_view_build"],
        "arms": {"plain": {}, "solved": {"setup": reference_steps()}}, "agents": ["nop"],
        "repeats": 2, "seed": 3, "jobs": 2, "bed": str(template)})
    out = root / "out"
    result = run_campaign(RunnerOptions(spec_path=spec, out=out, beds=root / "beds",
                                        site_step=site_step))
    assert result.exit_code == 0
    assert sorted(r["outcome"] for r in attempts(out)) == ["fail", "fail", "pass", "pass"]
    shutil.rmtree(root / "beds", ignore_errors=True)  # the runner removes its beds: none is left
    assert not (root / "beds").exists()
    return out


@pytest.fixture
def campaign(finished: Path, tmp_path: Path) -> Path:
    """A copy of the finished campaign for one test to change (its dataset stays the module's:
    a changed one is given with --dataset)."""
    return Path(shutil.copytree(finished, tmp_path / "out"))


def changed(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> list[str]:
    """--dataset for a copy of the campaign's dataset changed by ``edit``."""
    return ["--dataset", str(write_dataset(tmp_path / "data" / "tasks.yml", edit))]


def fingerprints(directory: Path) -> dict[str, str]:
    """Every file of the campaign but its regrades, by SHA-256."""
    return {p.relative_to(directory).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file()
            and p.relative_to(directory).parts[0] != "regrades"}


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """Every child process started, by its argv; ``run_task`` (the adapter) fails the test."""
    started = watch_children(monkeypatch)
    yield started


def commands(spawned: list[list[str]]) -> list[list[str]]:
    """What each child ran (the keeper, proc.py's, runs its command after ``--``)."""
    return [argv[argv.index("--") + 1:] if "keeper.py" in " ".join(argv[:4]) else argv
            for argv in spawned]


def regrade(apg: Any, directory: Path, *extra: str) -> tuple[dict[str, Any], Path, Any]:
    result = apg("campaign", "regrade", str(directory), "--json", *extra)
    assert result.rc == 0, result.err
    [folder] = sorted((directory / "regrades").iterdir())
    assert "APG_REGRADE_DONE" in result.err and str(folder) in result.err
    return json.loads(result.out), folder, result


def by_order(data: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {a["order"]: a for a in data["attempts"]}


def test_an_unchanged_dataset_reproduces_every_verdict_and_runs_no_adapter(
        apg: Any, campaign: Path, spawned: list[list[str]]) -> None:
    before = fingerprints(campaign)
    data, folder, _ = regrade(apg, campaign)
    assert data["totals"] == {"attempts": 4, "regraded": 4, "kept": 0, "not_regradable": 0,
                              "outcome_changed": 0, "checks_changed": 0}
    for entry in data["attempts"]:
        assert entry["status"] == "regraded" and entry["new"] == entry["old"], entry
        solved = entry["arm"] == "solved"
        assert entry["old"] == {"outcome": "pass" if solved else "fail",
                                "score": 1.0 if solved else 0.0,
                                "hidden": "pass" if solved else "fail"}
        ids = [c["id"] for c in entry["checks"]]
        assert ids[:3] == PUBLIC and ids[-2:] == ["hidden:patch", "hidden:command-1"]
        assert all(c["old"] == c["new"] and c["new"] in ("pass", "fail")
                   for c in entry["checks"]), entry["checks"]
        # The new envelope is the original but for when it was retrieved.
        old = read_envelope(campaign / "runs" / f"{entry['order']:04d}" / "grade.json")
        new = read_envelope(folder / "runs" / f"{entry['order']:04d}" / "grade.json")
        assert {**new.document, "retrieved_timestamp": ""} == \
            {**old.document, "retrieved_timestamp": ""}
    # The statistics under the new verdicts are the campaign's own.
    assert build_report(folder)["cells"] == build_report(campaign)["cells"]
    # No agent ran: the only children were the hidden verifier's command, once per attempt.
    assert commands(spawned) == [HIDDEN] * 4
    assert fingerprints(campaign) == before


def test_changing_one_check_changes_only_that_checks_verdicts(
        apg: Any, campaign: Path, spawned: list[list[str]], tmp_path: Path) -> None:
    before = fingerprints(campaign)
    # view-exists now asks for a view no attempt built: it fails wherever it passed.
    data, folder, result = regrade(apg, campaign, *changed(tmp_path, lambda task: check(
        task, "view-exists").update(name="views.view.kb_nowhere")))
    for order, entry in by_order(data).items():
        solved = entry["arm"] == "solved"
        assert entry["changed"] == (["view-exists"] if solved else []), entry
        for pair in entry["checks"]:
            if pair["id"] == "view-exists":
                assert (pair["old"], pair["new"]) == (("pass", "fail") if solved
                                                      else ("fail", "fail"))
            else:
                assert pair["old"] == pair["new"], pair
        assert entry["new"]["outcome"] == "fail"
        assert entry["new"]["hidden"] == entry["old"]["hidden"]  # the hidden verifier unchanged
        if solved:
            assert f"#{order:04d}" in result.err and "regraded pass -> fail" in result.err
    assert data["totals"]["outcome_changed"] == 2 and data["totals"]["checks_changed"] == 2
    assert build_report(folder)["totals"]["pass"] == 0
    assert commands(spawned) == [HIDDEN] * 4
    assert fingerprints(campaign) == before


def test_changing_the_hidden_verifier_changes_only_its_verdicts(
        apg: Any, campaign: Path, tmp_path: Path) -> None:
    command = ["sh", "-c", 'eval "$APG_SITE" config:get views.view.kb_elsewhere']
    data, _, _ = regrade(apg, campaign, *changed(
        tmp_path, lambda task: task["hidden_verifier"].update(commands=[command])))
    for entry in data["attempts"]:
        solved = entry["arm"] == "solved"
        assert entry["changed"] == (["hidden:command-1"] if solved else []), entry
        assert entry["new"] == {"outcome": "fail", "score": entry["old"]["score"],
                                "hidden": "fail"}


def test_a_tampered_or_missing_state_is_never_graded(apg: Any, campaign: Path) -> None:
    runs = sorted(p for p in (campaign / "runs").iterdir())
    passing = [r for r in runs if json.loads((r / "attempt.json").read_text())["outcome"] == "pass"]
    failing = [r for r in runs if r not in passing]
    # A passing attempt's database swapped for another attempt's (a plain fail)...
    (state_dir(passing[0]) / "database.sqlite.gz").write_bytes(
        (state_dir(failing[0]) / "database.sqlite.gz").read_bytes())
    # ... and another's archive gone.
    (state_dir(passing[1]) / FILES).unlink()
    # A failing attempt's archive rebuilt with a link, its record's hashes made to match: the
    # archive is still refused (it holds what the harness never keeps).
    rebuilt = io.BytesIO()
    with tarfile.open(fileobj=rebuilt, mode="w:gz") as tar:
        link = tarfile.TarInfo("config/sync/views.view.kb_billing.yml")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    (state_dir(failing[0]) / FILES).write_bytes(rebuilt.getvalue())
    record = json.loads((failing[0] / "attempt.json").read_text())
    record["state"]["files"][FILES] = {"bytes": len(rebuilt.getvalue()),
                                       "sha256": hashlib.sha256(rebuilt.getvalue()).hexdigest()}
    (failing[0] / "attempt.json").write_text(json.dumps(record))
    # An attempt recorded before states were kept.
    record = json.loads((failing[1] / "attempt.json").read_text())
    del record["state"]
    (failing[1] / "attempt.json").write_text(json.dumps(record))

    data, folder, result = regrade(apg, campaign)
    tokens = {a["order"]: a["token"] for a in data["attempts"]}
    assert tokens == {int(passing[0].name): "APG_REGRADE_STATE_TAMPERED",
                      int(passing[1].name): "APG_REGRADE_STATE_MISSING",
                      int(failing[0].name): "APG_REGRADE_STATE_TAMPERED",
                      int(failing[1].name): "APG_REGRADE_STATE_MISSING"}
    assert all(a["status"] == "not_regradable" and a["new"] is None for a in data["attempts"])
    for order, token in tokens.items():
        assert f"{token} #{order:04d}" in result.err
    report = build_report(folder)  # none counted, as a pass or at all
    assert report["totals"]["recorded"] == 0 and report["totals"]["missing"] == 4


def test_the_text_report_names_each_changed_check(apg: Any, campaign: Path,
                                                  tmp_path: Path) -> None:
    result = apg("campaign", "regrade", str(campaign), *changed(tmp_path, lambda task: check(
        task, "view-exists").update(name="views.view.kb_nowhere")))
    assert result.rc == 0, result.err
    lines = result.out.splitlines()
    assert lines[0] == ("Regrade of campaign regrade: 4 attempts: 4 regraded, 0 kept, 0 not "
                        "regradable; 2 outcomes and 2 check verdicts changed")
    rows = [line.split() for line in lines if "view-exists" in line]
    assert sorted(row[2] for row in rows) == ["solved", "solved"]
    assert all(row[-2:] == ["pass", "fail"] for row in rows)
    assert any(line.startswith("Records in ") for line in lines)


def test_regrade_refuses_while_a_runner_writes(apg: Any, campaign: Path) -> None:
    with only_campaign(campaign):  # what apg campaign run and resume hold while they write
        result = apg("campaign", "regrade", str(campaign))
    assert result.rc == 1 and result.err.startswith("APG_CAMPAIGN_BUSY")
    assert not (campaign / "regrades").exists()


def test_regrade_refuses_a_directory_without_a_campaign(apg: Any, tmp_path: Path) -> None:
    result = apg("campaign", "regrade", str(tmp_path))
    assert result.rc == 2 and result.err.startswith("APG_CAMPAIGN_NOT_FOUND")
    assert not (tmp_path / "regrades").exists()


def test_keep_archives_real_files_only_and_restores_them(fixtures_bed: Path,
                                                         tmp_path: Path) -> None:
    public = fixtures_bed / "web" / "sites" / "default" / "files"
    public.mkdir(parents=True, exist_ok=True)
    (public / "logo.png").write_bytes(b"\x89PNG fake")
    (public / "outside").symlink_to("/etc")
    (fixtures_bed / "config" / "sync" / "pipe").unlink(missing_ok=True)
    subprocess.run(["mkfifo", str(fixtures_bed / "config" / "sync" / "pipe")], check=True)
    record = keep(tmp_path, fixtures_bed, EmbeddedSite(fixtures_bed))
    assert record.skipped == ["config/sync/pipe", "web/sites/default/files/outside"]
    assert "web/sites/default/files" in record.paths
    with tarfile.open(state_dir(tmp_path) / FILES) as tar:
        names = tar.getnames()
        assert all(m.isreg() or m.isdir() for m in tar.getmembers())
    assert "web/sites/default/files/logo.png" in names
    image = gzip.decompress((state_dir(tmp_path) / "database.sqlite.gz").read_bytes())
    assert image == (fixtures_bed / "db" / "site.sqlite").read_bytes()


def test_outcomes_no_check_decided_stand_as_recorded(apg: Any, template: Path,
                                                     tmp_path: Path) -> None:
    """A tampered attempt keeps no state and an infrastructure error was never graded: both are
    kept as recorded, never graded into a pass (the solved arm's view would pass the checks)."""
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "kept", "dataset": str(write_dataset(tmp_path / "data" / "tasks.yml")),
        "tasks": ["dv01_view_build"],
        "arms": {"plain": {}, "solved": {"setup": reference_steps()}},
        "agents": ["tamperer", "exit127"], "repeats": 1, "seed": 5, "jobs": 1,
        "bed": str(template)})
    out = tmp_path / "out"
    assert run_campaign(RunnerOptions(spec_path=spec, out=out, beds=tmp_path / "beds",
                                      site_step=site_step)).exit_code == 0
    recorded = {r["order"]: r for r in attempts(out)}
    assert sorted(r["outcome"] for r in recorded.values()) == \
        ["infra_error", "infra_error", "tampered", "tampered"]
    assert all(r["state"] is None for r in recorded.values())
    data, folder, _ = regrade(apg, out)
    for entry in data["attempts"]:
        assert entry["status"] == "kept" and entry["token"] is None, entry
        assert entry["new"] == entry["old"] == {
            "outcome": recorded[entry["order"]]["outcome"],
            "score": recorded[entry["order"]]["score"],
            "hidden": recorded[entry["order"]]["hidden"]["status"]}
    assert build_report(folder)["totals"] == build_report(out)["totals"]


def test_a_state_that_cannot_be_kept_changes_no_outcome(
        apg: Any, template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*_args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("ai_proving_ground.campaigns.attempt.keep", full)
    spec = write_spec(tmp_path / "spec.yml", {
        "name": "full", "dataset": str(write_dataset(tmp_path / "data" / "tasks.yml")),
        "tasks": ["dv01_view_build"],
        "arms": {"plain": {}, "solved": {"setup": reference_steps()}},
        "agents": ["nop"], "repeats": 1, "seed": 5, "jobs": 1, "bed": str(template)})
    out = tmp_path / "out"
    assert run_campaign(RunnerOptions(spec_path=spec, out=out, beds=tmp_path / "beds",
                                      site_step=site_step)).exit_code == 0
    recorded = attempts(out)
    assert sorted(r["outcome"] for r in recorded) == ["fail", "pass"]
    for record in recorded:
        folder = out / "runs" / f"{record['order']:04d}"
        assert record["state"] is None and not state_dir(folder).exists()
        assert "APG_CAMPAIGN_STATE_NOT_KEPT" in (folder / "steps.log").read_text()
    data, _, _ = regrade(apg, out)
    assert [(a["status"], a["token"]) for a in data["attempts"]] == \
        [("not_regradable", "APG_REGRADE_STATE_MISSING")] * 2
