"""Reset makes the whole bed equal to its baseline, and trusted paths are checked before use.

Each attack an attempt tried (issue 18) is a case here: a note left outside the old tracked
paths, a database folder linked to a sibling bed's, a DDEV config planted in an embedded bed, a
custom module on a project that tracks none; and the opposite fault: ignored files that were in
the bed at baseline time are restored, never deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.baselines.store import baseline_dir, runs_dir
from ai_proving_ground.baselines.tree import tag_commit
from ai_proving_ground.bed import init_bed
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixtures import DEFAULT_FIXTURES
from ai_proving_ground.gitutil import git
from ai_proving_ground.layout import KEEP_LIST, is_ddev_project, recorded_driver
from ai_proving_ground.sites.base import driver_name_for

Kit = Any  # the ``kit`` fixture of tests/baselines/conftest.py


def tree_state(root: Path) -> dict[str, str]:
    """Everything under ``root`` without following a link: path -> kind and content."""
    found: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                found[rel] = "link " + os.readlink(full)
            elif full.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = hashlib.sha256(full.read_bytes()).hexdigest()
    return found


# ---------------------------------------------------------------------------- notes


def test_notes_outside_the_old_tracked_paths_are_removed(kit: Kit, pbed: Path) -> None:
    """A note for the next attempt: a new top-level folder, private/, .git (a file, a loose
    object, a branch, a config section), beside the database: none survives reset."""
    (pbed / "answers").mkdir()
    (pbed / "answers" / "dv01.txt").write_text("the view needs a sort on title\n")
    (pbed / "private").mkdir()
    (pbed / "private" / "note.txt").write_text("arm B: use the pager\n")
    (pbed / ".git" / "NOTE").write_text("hello next attempt\n")
    note_object = git(pbed, ["hash-object", "-w", "--stdin"],
                      input_bytes=b"an answer in the object store\n").stdout.decode().strip()
    git(pbed, ["branch", "answers", "HEAD"])
    with (pbed / ".git" / "config").open("a") as handle:
        handle.write("[note]\n\tanswer = sort by title\n")
    (pbed / "db" / "note.txt").write_text("beside the database\n")
    (pbed / "web" / "sites" / "default" / "note.php").write_text("<?php // a note\n")

    rc, out, err = kit.run("reset", pbed, "--json")
    assert rc == 0 and "APG_RESET_OK" in err, err
    removed = json.loads(out)["removed"]
    assert {"answers", "private", ".git/NOTE", ".git/refs/heads/answers",
            "web/sites/default/note.php"} <= set(removed)
    assert f".git/objects/{note_object[:2]}" in removed or \
        f".git/objects/{note_object[:2]}/{note_object[2:]}" in removed
    assert "APG_RESET_REMOVED" in err and "answers" in err
    assert "APG_RESET_REPAIRED" in err and str(pbed / "db" / "note.txt") in err
    for gone in ("answers", "private", ".git/NOTE", "db/note.txt", "web/sites/default/note.php"):
        assert not (pbed / gone).exists(), gone
    assert git(pbed, ["cat-file", "-e", note_object], check=False).returncode != 0
    assert b"answers" not in git(pbed, ["branch", "--list"]).stdout
    assert b"[note]" not in (pbed / ".git" / "config").read_bytes()
    kit.assert_healthy(pbed)


def test_ignored_files_present_at_baseline_are_restored_never_deleted(kit: Kit,
                                                                      raw_bed: Path) -> None:
    """A committed custom module with a git-ignored node_modules/: its files were in the bed
    when the baseline was taken, so reset keeps them (and puts back a changed one)."""
    module = kit.custom_dir(raw_bed)
    (module / ".gitignore").write_text("node_modules/\n")
    (module / "node_modules" / "lib").mkdir(parents=True)
    (module / "node_modules" / "lib" / "index.js").write_text("module.exports = 1;\n")
    (module / "node_modules" / "lib" / "big.js").write_text("// built\n" * 100)
    git(raw_bed, ["add", "-A"])
    git(raw_bed, ["commit", "--quiet", "-m", "the module ignores its node_modules"])
    assert git(raw_bed, ["check-ignore", "-q", str(module / "node_modules" / "lib" / "index.js")],
               check=False).returncode == 0
    rc, _out, err = kit.run("provision", raw_bed)
    assert rc == 0, err
    before = tree_state(module)

    kit.mutate(raw_bed)
    (module / "node_modules" / "lib" / "index.js").write_text("module.exports = 'agent';\n")
    (module / "node_modules" / "lib" / "big.js").unlink()
    (module / "node_modules" / "agent.js").write_text("// added\n")
    rc, out, err = kit.run("reset", raw_bed, "--json")
    assert rc == 0 and "APG_RESET_OK" in err, err
    assert tree_state(module) == before
    outcome = json.loads(out)
    assert "web/modules/custom/apg_custom/node_modules/agent.js" in outcome["removed"]
    assert "web/modules/custom/apg_custom/node_modules/lib/big.js" in outcome["restored"]
    rc, verdict = kit.doctor(raw_bed)
    assert rc == 0 and verdict["healthy"]


def test_a_project_that_tracks_no_custom_module_is_reset_whole(kit: Kit, tmp_path: Path) -> None:
    """A real Drupal project keeps nothing under web/modules/custom in git: the first module an
    agent writes there is removed by reset (no APG_RESET_UNTRACKED, no override needed)."""
    bed = tmp_path / "project"
    init_bed(bed)
    git(bed, ["rm", "--quiet", "web/modules/custom/.gitkeep"])
    git(bed, ["commit", "--quiet", "-m", "nothing custom yet"])
    (bed / "web" / "modules" / "custom").mkdir(parents=True)  # empty, as composer leaves it
    rc, _out, err = kit.run("provision", bed)
    assert rc == 0, err
    kit.write_info(bed / "web" / "modules" / "custom" / "agent_mod", kit.module_info("1.0.0"))
    rc, out, err = kit.run("reset", bed, "--json")
    assert rc == 0 and "APG_RESET_OK" in err and "APG_RESET_UNTRACKED" not in err, err
    assert json.loads(out)["removed"] == ["web/modules/custom/agent_mod"]
    assert not (bed / "web" / "modules" / "custom" / "agent_mod").exists()


def test_the_keep_list_is_kept_and_says_why(kit: Kit, pbed: Path) -> None:
    assert all(k.why for k in KEEP_LIST)
    kit.keep_out_of_reset(pbed)
    (pbed / "web" / "sites" / "default" / "files" / "css" / "agent.css").write_text("p{}\n")
    kept = kit.untouched_by_reset(pbed)
    (pbed / "web" / "core").mkdir(parents=True)
    (pbed / "web" / "core" / "core.api.php").write_text("<?php // composer's\n")
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0, err
    assert kit.untouched_by_reset(pbed) == kept
    assert (pbed / "web" / "core" / "core.api.php").is_file()


def test_other_sets_keep_their_tags_when_one_is_reset(kit: Kit, pbed: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """.git is one repository for every set: resetting one keeps what another's provision added."""
    root = kit.make_probe_fixture(tmp_path / "fixtures")
    monkeypatch.setenv("AI_PG_FIXTURE_PATH", str(root))
    (pbed / "config" / "sync" / "later.yml").write_text("later: true\n")
    git(pbed, ["add", "-A"])
    git(pbed, ["commit", "--quiet", "-m", "a later commit"])
    rc, _out, err = kit.run("provision", pbed, *kit.probe_set)
    assert rc == 0, err
    probe = kit.baseline(pbed, kit.probe_set)
    probe_tag = tag_commit(pbed, probe.tag)

    # Two sets provisioned: a reset naming none cannot tell which is meant, and says so.
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 2 and err.startswith("APG_FIXTURE_SET_AMBIGUOUS "), err
    rc, _out, err = kit.run("reset", pbed, *DEFAULT_FIXTURES)
    assert rc == 0 and "APG_RESET_OK" in err, err
    assert tag_commit(pbed, probe.tag) == probe_tag
    assert not (pbed / "config" / "sync" / "later.yml").exists()  # the default set's tree
    rc, _out, err = kit.run("reset", pbed, *kit.probe_set)
    assert rc == 0 and "APG_RESET_OK" in err, err
    assert (pbed / "config" / "sync" / "later.yml").read_text() == "later: true\n"


def test_a_changed_snapshot_object_is_refused_before_any_change(kit: Kit, pbed: Path) -> None:
    baseline = kit.baseline(pbed)
    system_site = pbed / "config" / "sync" / "system.site.yml"
    recorded = hashlib.sha256(system_site.read_bytes()).hexdigest()
    (baseline.objects / recorded).write_text("name: forged\n")
    system_site.write_text("name: agent\n")
    kit.mutate(pbed)
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 1 and "APG_RESET_SNAPSHOT_CHANGED" in err and "nothing was changed" in err
    assert "slogan: agent" in system_site.read_text()
    assert not kit.node_exists(pbed, "6b0d0c00-0000-4000-8000-000000000003")


# ---------------------------------------------------------------------------- trusted paths


@pytest.fixture
def sibling(provisioned_template: Path, tmp_path: Path,
            copy_template: Callable[[Path, Path], Path]) -> Path:
    """A second bed beside ``pbed``, as campaign job beds sit side by side."""
    return copy_template(provisioned_template, tmp_path / "sibling")


def test_a_database_linked_to_a_sibling_bed_is_refused_and_repaired(kit: Kit, pbed: Path,
                                                                    sibling: Path) -> None:
    (sibling / "db" / "extra.txt").write_text("the sibling's own file\n")
    before = tree_state(sibling / "db")
    os.rename(pbed / "db", pbed / "db.moved")
    os.symlink(sibling / "db", pbed / "db")

    for command, args in (("grade", ("dv01_view_build",)), ("doctor", ()),
                          ("site", ("status",))):
        rc, out, err = kit.run(command, pbed, *args)
        assert rc == 1 and "APG_BED_PATH_UNSAFE" in err and str(pbed / "db") in err, (command, err)
        assert "apg reset" in err and "Traceback" not in err
        if command == "grade":
            assert out == ""

    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0 and "APG_RESET_OK" in err, err
    assert "APG_RESET_REPAIRED" in err and str(pbed / "db") in err
    assert not (pbed / "db").is_symlink() and (pbed / "db" / "site.sqlite").is_file()
    assert tree_state(sibling / "db") == before
    kit.assert_healthy(pbed)


def test_a_linked_database_file_is_refused(kit: Kit, pbed: Path, sibling: Path) -> None:
    (pbed / "db" / "site.sqlite").unlink()
    os.symlink(sibling / "db" / "site.sqlite", pbed / "db" / "site.sqlite")
    before = tree_state(sibling / "db")
    rc, _out, err = kit.run("site", pbed, "status")
    assert rc == 1 and "APG_BED_PATH_UNSAFE" in err
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0, err
    assert tree_state(sibling / "db") == before and not (pbed / "db" / "site.sqlite").is_symlink()


def test_a_linked_runs_directory_is_refused_and_repaired(kit: Kit, pbed: Path,
                                                         tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "forged").mkdir()
    runs = baseline_dir(pbed) / "runs"
    runs.mkdir(exist_ok=True)
    runs.rmdir()
    os.symlink(elsewhere, runs)
    with pytest.raises(ApgError) as caught:
        runs_dir(pbed)
    assert caught.value.token == "APG_BED_PATH_UNSAFE" and str(runs) in caught.value.message
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0 and "APG_RESET_REPAIRED" in err and str(runs) in err, err
    assert runs.is_dir() and not runs.is_symlink() and list(runs.iterdir()) == []
    assert (elsewhere / "forged").is_dir()
    assert runs_dir(pbed) == runs


def test_a_linked_baseline_directory_is_refused(kit: Kit, pbed: Path, tmp_path: Path) -> None:
    records = pbed / ".ai-proving-ground"
    os.rename(records, tmp_path / "records")
    os.symlink(tmp_path / "records", records)
    kit.mutate(pbed)
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 1 and "APG_BED_PATH_UNSAFE" in err and str(records) in err, err
    assert "Traceback" not in err
    rc, _out, err = kit.run("doctor", pbed)
    assert rc == 1 and "APG_BED_PATH_UNSAFE" in err


# ---------------------------------------------------------------------------- the driver


def test_a_planted_ddev_config_changes_no_driver_and_reset_removes_it(kit: Kit,
                                                                      pbed: Path) -> None:
    assert recorded_driver(pbed) == "sqlite"
    (pbed / ".ddev").mkdir()
    (pbed / ".ddev" / "config.yaml").write_text("name: planted\ntype: drupal11\n")
    assert driver_name_for(pbed) == "sqlite" and not is_ddev_project(pbed)
    rc, _out, err = kit.run("doctor", pbed)
    assert "APG_DDEV_MISSING" not in err and rc == 0, err
    rc, out, err = kit.run("reset", pbed, "--json")
    assert rc == 0 and "APG_RESET_OK" in err, err
    assert ".ddev" in json.loads(out)["removed"] and not (pbed / ".ddev").exists()


def test_a_bed_without_a_record_still_detects_ddev(tmp_path: Path) -> None:
    bed = tmp_path / "project"
    (bed / ".ddev").mkdir(parents=True)
    (bed / ".ddev" / "config.yaml").write_text("name: project\n")
    assert recorded_driver(bed) is None and is_ddev_project(bed)
    assert driver_name_for(bed) == "ddev"


def test_verify_names_a_planted_ddev_config(kit: Kit, pbed: Path, tmp_path: Path) -> None:
    escrow = str(tmp_path / "escrow")
    done = kit.process("escrow", pbed, AI_PG_ESCROW_DIR=escrow)
    assert done.returncode == 0, done.stderr
    (pbed / ".ddev").mkdir()
    (pbed / ".ddev" / "config.yaml").write_text("name: planted\n")
    done = kit.process("verify", pbed, AI_PG_ESCROW_DIR=escrow)
    assert "APG_ESCROW_NONE" not in done.stderr, done.stderr
    assert f"APG_ESCROW_DDEV_PLANTED {pbed / '.ddev' / 'config.yaml'}" in done.stderr
    assert done.returncode == 0 and "APG_ESCROW_OK" in done.stderr
