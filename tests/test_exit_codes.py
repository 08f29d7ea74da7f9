"""Every command's exit codes are what its --help and the README say, in one table.

Usage and bad input exit 2 with a token; a directory that holds no site is bad input for every
command that acts on a bed, which then writes nothing at all; every stderr line that reports an
outcome starts with an APG_ token. Commands run in-process through ``apg`` (cli.main).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ai_proving_ground.cli.main import COMMANDS

Run = Callable[..., tuple[int, str, str]]

# The commands that act on the bed at --approot, with arguments that would otherwise work.
BED_COMMANDS: dict[str, list[str]] = {
    "site": ["pm:list"],  # `site status` answers "Not installed" there, as drush does
    "doctor": [],
    "fixture-export": ["kb_docs", "--check"],
    "provision": [],
    "reset": [],
    "run": ["dv01_view_build", "--agent=nop"],
    "grade": ["dv01_view_build"],
    "results": [],
    "escrow": [],
    "verify": [],
}
# The rest need no bed: they make one, compute from the shipped files, or read a campaign or
# a run directory (`task` makes its own beds; `tasks` reads the dataset).
# `drush` needs a DDEV project, not an embedded bed: elsewhere it exits 2 with APG_USAGE naming
# the embedded site's command line (tests/ddev checks that refusal).
NO_BED_COMMANDS = {"bed", "hash", "manifest-union", "campaign", "completion", "transcript", "drush",
                   "tasks", "task", "agents", "fixtures", "view", "judge", "where", "dataset"}


def test_the_table_covers_every_command() -> None:
    assert set(BED_COMMANDS) | NO_BED_COMMANDS == set(COMMANDS)
    assert not set(BED_COMMANDS) & NO_BED_COMMANDS


def _tokens_only(err: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert all(line.startswith("APG_") for line in lines), err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_exits_0_and_documents_the_exit_codes(command: str, apg: Run) -> None:
    rc, out, err = apg(command, "--help")
    assert (rc, err) == (0, "")
    assert out.startswith(f"usage: apg {command}")
    assert "exit code" in out.lower()
    if command in BED_COMMANDS:
        assert "APG_SITE_NOT_INSTALLED" in out  # the refusal the table below checks


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_unknown_option_exits_2_with_apg_usage(command: str, apg: Run, tmp_path: Path) -> None:
    rc, out, err = apg(command, "--no-such-option", "--approot", str(tmp_path))
    assert rc == 2
    assert out == ""
    assert err.splitlines()[-1].startswith("APG_USAGE")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_given_nothing_works_or_exits_2_with_a_token(
        command: str, apg: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    rc, _, err = apg(command)
    assert rc in (0, 2), err
    if rc == 2:  # argparse's usage lines may come first; the outcome line is the token
        assert err.splitlines()[-1].startswith("APG_"), err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", sorted(BED_COMMANDS))
def test_outside_a_bed_every_command_exits_2_and_writes_nothing(
        command: str, apg: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    here = tmp_path / "not-a-bed"
    here.mkdir()
    (here / "notes.txt").write_text("an ordinary directory\n")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "escrow"))
    monkeypatch.chdir(here)
    for argv in ([command, *BED_COMMANDS[command]],
                 [command, "--approot", str(here), *BED_COMMANDS[command]]):
        rc, out, err = apg(*argv)
        assert rc == 2, (argv, out, err)
        assert out == ""
        _tokens_only(err)
        assert err.splitlines()[-1].startswith("APG_SITE_NOT_INSTALLED"), err
        assert str(here) in err and "apg bed init" in err
    assert sorted(p.name for p in here.iterdir()) == ["notes.txt"]
    assert list(home.iterdir()) == []
    assert not (tmp_path / "escrow").exists()


def test_site_status_outside_a_bed_says_not_installed_and_writes_nothing(apg: Run,
                                                                         tmp_path: Path) -> None:
    rc, out, err = apg("site", "--approot", str(tmp_path), "status", "--field", "db-status")
    assert (rc, out, err) == (0, "Not installed\n", "")
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_command_exits_2_and_names_the_nearest(apg: Run) -> None:
    rc, out, err = apg("provison")
    assert (rc, out) == (2, "")
    assert err.startswith("APG_USAGE unknown command 'provison' (did you mean 'provision'?)")
    rc, _, err = apg("re")
    assert rc == 2 and "'reset'" in err and "'results'" in err
    rc, _, err = apg()
    assert rc == 2 and err.splitlines()[-1].startswith("APG_USAGE")


@pytest.fixture
def invalid_dataset(tmp_path: Path) -> Path:
    path = tmp_path / "broken.yml"
    path.write_text("name: broken\ntasks:\n  - id: x\n    prompt: [not, a, string\n")
    return path


@pytest.mark.parametrize("command", ["run", "grade"])
def test_an_invalid_or_missing_dataset_exits_2(command: str, apg: Run, fixtures_bed: Path,
                                               invalid_dataset: Path, tmp_path: Path) -> None:
    before = sorted(p.name for p in fixtures_bed.iterdir())
    for dataset, token in ((invalid_dataset, "APG_DATASET_INVALID"),
                           (tmp_path / "missing.yml", "APG_DATASET_NOT_FOUND")):
        rc, out, err = apg(command, "dv01_view_build", f"--dataset={dataset}",
                           "--approot", str(fixtures_bed))
        assert (rc, out) == (2, ""), err
        _tokens_only(err)
        assert err.startswith(token) and str(dataset) in err
    rc, _, err = apg(command, "no_such_task", "--approot", str(fixtures_bed))
    assert rc == 2 and err.startswith("APG_TASK_UNKNOWN")
    assert sorted(p.name for p in fixtures_bed.iterdir()) == before  # nothing recorded


def test_a_missing_or_non_yaml_campaign_spec_exits_2(apg: Run, tmp_path: Path) -> None:
    not_yaml = tmp_path / "spec.yml"
    not_yaml.write_text("name: [unclosed\n")
    a_list = tmp_path / "list.yml"
    a_list.write_text("- just\n- a list\n")
    for spec in (tmp_path / "missing.yml", not_yaml, a_list, tmp_path):
        rc, out, err = apg("campaign", "run", str(spec), "--out", str(tmp_path / "out"))
        assert (rc, out) == (2, ""), (spec, err)
        assert err.startswith("APG_CAMPAIGN_SPEC_INVALID")
        _tokens_only(err)
        assert str(spec) in err
    assert not (tmp_path / "out").exists()
    rc, _, err = apg("campaign", "report", str(tmp_path / "no-such-campaign"))
    assert rc == 2 and err.startswith("APG_CAMPAIGN_NOT_FOUND")


def test_bed_init_on_an_existing_bed_exits_1(apg: Run, bed: Path) -> None:
    rc, _, err = apg("bed", "init", str(bed))
    assert rc == 1 and err.startswith("APG_BED_EXISTS")


def test_the_loop_reports_every_outcome_with_a_token(apg: Run, fixtures_bed: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "escrow"))
    bed = ["--approot", str(fixtures_bed)]
    for argv in (["provision", *bed], ["reset", *bed], ["escrow", *bed], ["verify", *bed]):
        rc, _, err = apg(*argv)
        assert rc == 0, (argv, err)
        _tokens_only(err)
    rc, out, err = apg("run", "dv01_view_build", "--agent=nop", "--json", *bed)
    assert rc == 0
    _tokens_only(err)
    run_id = json.loads(out)["run_id"]
    rc, _, err = apg("grade", "dv01_view_build", f"--run={run_id}", *bed)
    assert rc == 0
    _tokens_only(err)
    assert any(line.startswith("APG_GRADE_STORED") for line in err.splitlines()), err
    # apg site's done writes say so with a token too (drush's bare " [success]" line did not).
    for argv in (["cr"], ["config:set", "system.site", "name", "Tokens"]):
        rc, _, err = apg("site", *bed, *argv)
        assert (rc, bool(err)) == (0, True), (argv, err)
        _tokens_only(err)
