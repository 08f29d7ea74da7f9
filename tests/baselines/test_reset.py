"""apg reset: a full restore after an agent's mutations, its refusals and warnings, and the
doctor checks that read the baseline (grader tree, code versions, public files)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.baselines.reset import reset
from ai_proving_ground.baselines.store import read_metadata, runs_dir
from ai_proving_ground.baselines.tree import read_tree, tag_commit
from ai_proving_ground.errors import ApgError
from ai_proving_ground.gitutil import git
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from import_kit import WRITE_SIDE, imported_after

Kit = Any  # the ``kit`` fixture of tests/baselines/conftest.py

PUBLIC = Path("web/sites/default/files")
DELETED = "6b0d0c00-0000-4000-8000-000000000003"
ADDED_TRACKED = Path("config/sync/agent.settings.yml")


def _changed_nothing(kit: Kit, bed: Path) -> None:
    """The mutations are all still there and no reset was started."""
    assert not kit.node_exists(bed, DELETED)
    assert kit.site_name(bed) == "Agent was here"
    assert (bed / ADDED_TRACKED).is_file()
    assert (bed / PUBLIC / "new.txt").is_file()
    assert not kit.baseline(bed).reset_marker.exists()


def test_reset_restores_everything_an_agent_changed(kit: Kit, pbed: Path) -> None:
    run_record = runs_dir(pbed, Settings.from_environ()) / "run-1" / "run.json"
    run_record.parent.mkdir(parents=True)
    run_record.write_text('{"task": "t1"}\n')
    kit.mutate(pbed)
    kept = kit.untouched_by_reset(pbed)
    rc, verdict = kit.doctor(pbed)
    assert rc == 1
    assert {c["name"] for c in verdict["checks"] if c["status"] == "fail"} >= {
        "content", "counts", "public_files"}

    rc, out, err = kit.run("reset", pbed, "--json")
    assert rc == 0, err
    assert "APG_RESET_OK" in err
    outcome = json.loads(out)
    assert outcome["failures"] == [] and outcome["warnings"] == []
    # The top of each removed path: a folder the agent added goes whole, on one line.
    assert set(outcome["removed"]) == {
        "config/sync/agent.settings.yml", "config/sync/views.view.agent.yml",
        "web/modules/custom/agent_mod", "recipes/agent_recipe"}
    assert "APG_RESET_REMOVED 4 path(s) not in the baseline: " in err

    kit.assert_healthy(pbed)
    assert kit.node_exists(pbed, DELETED) and kit.site_name(pbed) == "AI proving ground"
    assert not (pbed / "web" / "modules" / "custom" / "agent_mod").exists()
    assert not (pbed / "recipes" / "agent_recipe").exists()
    assert (pbed / "config" / "sync" / kit.tracked_sync_file).read_text() == "kept: true\n"
    assert (pbed / PUBLIC / "a.txt").read_text() == "alpha\n"
    assert (pbed / PUBLIC / "sub" / "b.txt").read_text() == "bravo\n"
    assert os.readlink(pbed / PUBLIC / "link") == "a.txt"
    assert kit.untouched_by_reset(pbed) == kept
    assert run_record.read_text() == '{"task": "t1"}\n'
    assert git(pbed, ["status", "--porcelain", "--untracked-files=all", "--", "config",
                      "web/modules/custom", "recipes"]).stdout == b""


def test_reset_from_a_tree_read_before_asks_git_nothing(kit: Kit, pbed: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """What a campaign does: the tag's files read once; reset then restores from them alone."""
    baseline = kit.baseline(pbed)
    tree = read_tree(pbed, baseline.tag)
    tagged = kit.tracked_on_disk(pbed)
    kit.mutate(pbed)
    git(pbed, ["tag", "-d", baseline.tag])  # not read again: the tree is the baseline
    settings = Settings.from_environ()
    with pytest.raises(ApgError) as caught:
        reset(pbed, kit.names, EmbeddedSite(pbed), settings, replace(tree, tag="apg-baseline-x"))
    assert caught.value.token == "APG_RESET_NO_BASELINE"
    monkeypatch.setattr(subprocess.Popen, "__init__", refuse_children)
    outcome = reset(pbed, kit.names, EmbeddedSite(pbed), settings, tree)
    monkeypatch.undo()
    assert outcome.failures == []
    assert kit.tracked_on_disk(pbed) == tagged
    assert kit.node_exists(pbed, DELETED) and kit.site_name(pbed) == "AI proving ground"


def refuse_children(self: Any, args: Any, *rest: Any, **kwargs: Any) -> None:
    raise AssertionError(f"reset started a child: {args}")


def test_reset_of_an_unprovisioned_bed_is_refused(kit: Kit, raw_bed: Path) -> None:
    rc, _out, err = kit.run("reset", raw_bed)
    assert rc == 1 and "APG_RESET_NO_BASELINE" in err
    assert f"apg provision --approot {raw_bed} canvas_home kb_docs" in err


def test_a_deleted_tag_comes_back_from_the_snapshot(kit: Kit, pbed: Path) -> None:
    """Reset reads no tag: the baseline directory's snapshot holds .git as provision left it."""
    baseline = kit.baseline(pbed)
    tagged = tag_commit(pbed, baseline.tag)
    git(pbed, ["tag", "-d", baseline.tag])
    kit.mutate(pbed)
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0 and "APG_RESET_OK" in err, err
    assert tag_commit(pbed, baseline.tag) == tagged == read_metadata(baseline).commit
    kit.assert_healthy(pbed)


def test_reset_without_bed_snapshot_is_refused(kit: Kit, pbed: Path) -> None:
    baseline = kit.baseline(pbed)
    baseline.bed_snapshot.unlink()
    kit.mutate(pbed)
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 1 and "APG_RESET_NO_BASELINE" in err
    assert f"bed snapshot {baseline.bed_snapshot}" in err and f"dump {baseline.dump}" not in err
    _changed_nothing(kit, pbed)


def test_provision_without_bed_snapshot_captures_again(kit: Kit, pbed: Path) -> None:
    baseline = kit.baseline(pbed)
    baseline.bed_snapshot.unlink()
    rc, _out, err = kit.run("provision", pbed)
    assert rc == 0 and "APG_PROVISION_OK" in err, err
    assert baseline.bed_snapshot.is_file()


def test_reset_without_dump_is_refused(kit: Kit, pbed: Path) -> None:
    baseline = kit.baseline(pbed)
    baseline.dump.unlink()
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 1 and "APG_RESET_NO_BASELINE" in err and f"dump {baseline.dump}" in err


@pytest.fixture
def probe_bed(kit: Kit, pbed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The provisioned bed with a second baseline: the default set plus a fixture kept in a
    temporary directory (AI_PG_FIXTURE_PATH), which the tests may then edit."""
    root = kit.make_probe_fixture(tmp_path / "fixtures")
    monkeypatch.setenv("AI_PG_FIXTURE_PATH", str(root))
    rc, _out, err = kit.run("provision", pbed, *kit.probe_set)
    assert rc == 0, err
    return pbed


def test_grader_drift_fails_reset_and_doctor(kit: Kit, probe_bed: Path, tmp_path: Path) -> None:
    fixture = tmp_path / "fixtures" / "fixture_probe"
    kit.mutate(probe_bed)
    rc, _out, err = kit.run("reset", probe_bed, *kit.probe_set)
    assert rc == 0, err
    kit.assert_healthy(probe_bed, kit.probe_set)

    # Config and content were imported at provision and live on in the dump: not judged.
    (fixture / "config" / "apg_probe.settings.yml").write_text("label: Changed\nlevel: 2\n")
    rc, _out, err = kit.run("reset", probe_bed, *kit.probe_set)
    assert rc == 0, err
    fragment = fixture / "manifest" / "fragment.yml"
    fragment.write_text(fragment.read_text() + "# edited after provision\n")
    (fixture / "manifest" / "extra.yml").write_text("x: 1\n")
    rc, _out, err = kit.run("reset", probe_bed, *kit.probe_set)
    assert rc == 1
    line = next(x for x in err.splitlines() if x.startswith("APG_RESET_GRADER_DRIFT"))
    assert "fixture/probe/manifest/fragment.yml modified" in line
    assert "fixture/probe/manifest/extra.yml added" in line
    assert "APG_RESET_OK" not in err

    rc, verdict = kit.doctor(probe_bed, *kit.probe_set)
    check = kit.check(verdict, "grader_tree")
    assert rc == 1 and check["status"] == "fail"
    assert {d["subject"] for d in check["drift"]} == {
        "fixture/probe/manifest/fragment.yml", "fixture/probe/manifest/extra.yml"}
    assert check["expected"] != check["found"]


def test_grader_fingerprint_unrecorded_warns(kit: Kit, pbed: Path) -> None:
    kit.baseline(pbed).grader_files.unlink()
    kit.mutate(pbed)
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0, err
    assert "APG_RESET_GRADER_UNRECORDED" in err and "APG_RESET_OK" in err
    rc, verdict = kit.doctor(pbed)
    check = kit.check(verdict, "grader_tree")
    assert rc == 0 and check["status"] == "note" and "not recorded" in check["detail"]


def test_code_drift_warns_and_doctor_fails(kit: Kit, pbed: Path) -> None:
    kit.write_info(kit.probe_dir(pbed), kit.module_info("1.0.1", schema=1))
    kit.mutate(pbed)
    rc, out, err = kit.run("reset", pbed, "--json")
    assert rc == 0, err
    line = next(x for x in err.splitlines() if x.startswith("APG_RESET_CODE_DRIFT"))
    assert "modules.apg_probe: recorded Testing 1.0.0, live Testing 1.0.1" in line
    assert json.loads(out)["warnings"] == ["APG_RESET_CODE_DRIFT"]
    kit.assert_restored(pbed)

    rc, verdict = kit.doctor(pbed)
    check = kit.check(verdict, "code_versions")
    assert rc == 1 and check["status"] == "fail"
    assert check["drift"] == [{"subject": "modules.apg_probe", "expected": "Testing 1.0.0",
                               "found": "Testing 1.0.1"}]

    kit.baseline(pbed).versions.unlink()
    rc, verdict = kit.doctor(pbed)
    check = kit.check(verdict, "code_versions")
    assert rc == 0 and check["status"] == "note" and "not recorded" in check["detail"]


def test_pending_updates_fail_reset(kit: Kit, pbed: Path) -> None:
    kit.write_info(kit.probe_dir(pbed), kit.module_info("1.0.0", schema=2))
    kit.mutate(pbed)
    rc, out, err = kit.run("reset", pbed, "--json")
    assert rc == 1
    line = next(x for x in err.splitlines() if x.startswith("APG_RESET_PENDING_UPDATES"))
    assert "apg_probe: apg_probe_update_2" in line and "apg_probe_update_1" not in line
    assert json.loads(out)["failures"] == ["APG_RESET_PENDING_UPDATES"]
    assert "APG_RESET_OK" not in err
    kit.assert_restored(pbed)  # the restore happened; the check says do not grade


def test_custom_module_code_is_restored_so_nothing_is_pending(kit: Kit, pbed: Path) -> None:
    kit.write_info(kit.custom_dir(pbed), kit.module_info("1.0.0", schema=3))
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0 and "APG_RESET_PENDING_UPDATES" not in err, err
    assert "schema_version" not in (kit.custom_dir(pbed) / "apg_custom.info.yml").read_text()


def test_private_files_are_restored_with_the_bed(kit: Kit, raw_bed: Path) -> None:
    (raw_bed / "private").mkdir()
    (raw_bed / "private" / "kept.txt").write_text("at baseline\n")
    rc, _out, err = kit.run("provision", raw_bed)
    assert rc == 0, err
    (raw_bed / "private" / "kept.txt").write_text("changed by the agent\n")
    (raw_bed / "private" / "note.txt").write_text("for the next attempt\n")
    rc, out, err = kit.run("reset", raw_bed, "--json")
    assert rc == 0, err
    assert "APG_RESET_PRIVATE_FILES_NOT_RESTORED" not in err  # inside the bed: restored
    assert sorted(p.name for p in (raw_bed / "private").iterdir()) == ["kept.txt"]
    assert (raw_bed / "private" / "kept.txt").read_text() == "at baseline\n"
    assert json.loads(out)["removed"] == ["private/note.txt"]


def test_unrecorded_files_snapshot_warns_and_skips_files(kit: Kit, pbed: Path) -> None:
    snapshot = kit.snapshot(pbed)
    for path in (snapshot.archive, snapshot.sidecar, snapshot.listing):
        path.unlink()
    kit.mutate(pbed)
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0, err
    assert "APG_RESET_FILES_UNRECORDED" in err and "APG_RESET_OK" in err
    assert kit.node_exists(pbed, DELETED)
    assert (pbed / PUBLIC / "new.txt").is_file() and not (pbed / PUBLIC / "a.txt").exists()
    rc, verdict = kit.doctor(pbed)
    check = kit.check(verdict, "public_files")
    assert rc == 0 and check["status"] == "note" and "not recorded" in check["detail"]


def _alter_archive(kit: Kit, bed: Path, _elsewhere: Path) -> None:
    with kit.snapshot(bed).archive.open("ab") as handle:
        handle.write(b"\0")


def _symlink_public_dir(_kit: Kit, bed: Path, elsewhere: Path) -> None:
    public = bed / PUBLIC
    public.rename(elsewhere)
    os.symlink(elsewhere, public)


@pytest.mark.parametrize(("damage", "token"), [
    (_alter_archive, "APG_RESET_FILES_CHANGED"),
    (_symlink_public_dir, "APG_RESET_FILES_UNSAFE"),
])
def test_bad_files_snapshot_is_refused_before_anything_changes(
        kit: Kit, pbed: Path, tmp_path: Path, damage: Any, token: str) -> None:
    kit.mutate(pbed)
    elsewhere = tmp_path / "elsewhere"
    damage(kit, pbed, elsewhere)
    before_elsewhere = sorted(p.name for p in elsewhere.iterdir()) if elsewhere.exists() else []
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 1 and token in err, err
    _changed_nothing(kit, pbed)
    assert not kit.baseline(pbed).reset_marker.exists()  # a refusal is not a half-done reset
    if pbed.joinpath(PUBLIC).is_dir() and not pbed.joinpath(PUBLIC).is_symlink():
        assert not [p for p in pbed.joinpath(PUBLIC).iterdir() if p.name.startswith(".apg")]
    if before_elsewhere:
        assert sorted(p.name for p in elsewhere.iterdir()) == before_elsewhere


def test_doctor_public_files_names_missing_and_added_paths(kit: Kit, pbed: Path) -> None:
    (pbed / PUBLIC / "a.txt").unlink()
    (pbed / PUBLIC / "added.txt").write_text("x\n")
    (pbed / PUBLIC / "css" / "regenerated.css").write_text("x\n")  # regenerable: ignored
    rc, verdict = kit.doctor(pbed)
    check = kit.check(verdict, "public_files")
    assert rc == 1 and check["status"] == "fail"
    assert check["drift"] == [
        {"subject": "a.txt", "expected": "present", "found": "missing"},
        {"subject": "added.txt", "expected": "absent", "found": "present"},
    ]


def test_doctor_reports_a_changed_listing_instead_of_crashing(kit: Kit, pbed: Path) -> None:
    with kit.snapshot(pbed).listing.open("a") as handle:
        handle.write("forged.txt\n")
    rc, verdict = kit.doctor(pbed)
    check = kit.check(verdict, "public_files")
    assert rc == 1 and check["status"] == "fail"
    assert "APG_RESET_FILES_CHANGED" in json.dumps(check["drift"])


# ---------------------------------------------------------------------------- untracked paths


def test_an_untracked_path_is_restored_whole(kit: Kit, raw_bed: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A real Drupal project tracks nothing under some paths: reset needs no tracked file."""
    with (raw_bed / ".gitignore").open("a") as handle:
        handle.write("/recipes\n")
    git(raw_bed, ["rm", "-r", "--cached", "--quiet", "recipes"])
    git(raw_bed, ["add", "-A"])
    git(raw_bed, ["commit", "--quiet", "-m", "stop tracking recipes"])
    monkeypatch.setenv("AI_PG_ALLOW_UNTRACKED", "1")  # provision still asks: the tag lacks them
    rc, _out, err = kit.run("provision", raw_bed)
    assert rc == 0, err
    monkeypatch.delenv("AI_PG_ALLOW_UNTRACKED")
    recipes = {p.relative_to(raw_bed).as_posix(): p.read_bytes()
               for p in (raw_bed / "recipes").rglob("*") if p.is_file()}

    kit.mutate(raw_bed)
    (raw_bed / "recipes" / "apg_base" / "recipe.yml").write_text("name: agent\n")
    rc, out, err = kit.run("reset", raw_bed, "--json")
    assert rc == 0 and "APG_RESET_OK" in err and "APG_RESET_UNTRACKED" not in err, err
    assert "recipes/agent_recipe" in json.loads(out)["removed"]
    assert {p.relative_to(raw_bed).as_posix(): p.read_bytes()
            for p in (raw_bed / "recipes").rglob("*") if p.is_file()} == recipes
    assert kit.node_exists(raw_bed, DELETED)
    assert not (raw_bed / ADDED_TRACKED).exists()


# ---------------------------------------------------------------------------- the tree restore


def test_symlinked_tracked_path_is_replaced_never_followed(kit: Kit, pbed: Path,
                                                           tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me\n")
    sync = pbed / "config" / "sync"
    os.rename(sync, tmp_path / "old_sync")
    os.symlink(outside, sync)
    module = kit.custom_dir(pbed)
    os.rename(module, tmp_path / "old_module")
    os.symlink(outside, module)
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0, err
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]
    assert not sync.is_symlink() and not module.is_symlink()
    kit.assert_healthy(pbed)


def test_symlink_above_a_tracked_path_is_replaced_never_followed(kit: Kit, pbed: Path,
                                                                 tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    os.rename(pbed / "config", outside)
    os.symlink(outside, pbed / "config")
    kit.mutate(pbed)
    before = {p.name: p.read_bytes() for p in (outside / "sync").iterdir()}
    rc, out, err = kit.run("reset", pbed, "--json")
    assert rc == 0, err
    assert {p.name: p.read_bytes() for p in (outside / "sync").iterdir()} == before
    assert not (pbed / "config").is_symlink() and "config" in json.loads(out)["restored"]
    kit.assert_healthy(pbed)


def test_replaced_types_and_planted_temporaries(kit: Kit, pbed: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("outside the bed\n")
    sync = pbed / "config" / "sync"
    (sync / "system.site.yml").write_text("name: changed\n")
    os.symlink(victim, sync / ".system.site.yml.apg-restore")  # a name the old restore used
    (sync / "core.extension.yml").unlink()
    (sync / "core.extension.yml").mkdir()  # a file replaced by a directory
    (sync / "core.extension.yml" / "inner.yml").write_text("x: 1\n")
    module = kit.custom_dir(pbed)
    os.rename(module, tmp_path / "module")
    module.write_text("a file where a directory was\n")
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0, err
    assert victim.read_text() == "outside the bed\n"
    kit.assert_healthy(pbed)


def test_attributes_and_filters_cannot_change_what_is_restored(kit: Kit, pbed: Path) -> None:
    expected = kit.tracked_on_disk(pbed)
    (pbed / ".git" / "info" / "attributes").write_text("*.yml export-ignore\n*.yml filter=evil\n")
    git(pbed, ["config", "filter.evil.smudge", "sed s/proving/EVIL/"])
    (pbed / "config" / "sync" / "system.site.yml").write_text("name: hacked\n")
    (kit.custom_dir(pbed) / "apg_custom.info.yml").write_text("name: hacked\n")
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0, err
    assert kit.tracked_on_disk(pbed) == expected


def test_non_ascii_tracked_names_survive_reset(kit: Kit, raw_bed: Path) -> None:
    (raw_bed / "config" / "sync" / "café.settings.yml").write_text("ok: true\n")
    git(raw_bed, ["add", "-A"])
    git(raw_bed, ["commit", "--quiet", "-m", "a non-ASCII name"])
    rc, _out, err = kit.run("provision", raw_bed)
    assert rc == 0, err
    rc, out, err = kit.run("reset", raw_bed, "--json")
    assert rc == 0, err
    assert json.loads(out)["removed"] == []
    assert (raw_bed / "config" / "sync" / "café.settings.yml").read_text() == "ok: true\n"
    kit.assert_healthy(raw_bed)


def test_executable_bit_and_symlinks_are_restored(kit: Kit, raw_bed: Path) -> None:
    script = kit.custom_dir(raw_bed) / "tool.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    os.symlink("tool.sh", kit.custom_dir(raw_bed) / "tool-link")
    git(raw_bed, ["add", "-A"])
    git(raw_bed, ["commit", "--quiet", "-m", "a script and a link"])
    rc, _out, err = kit.run("provision", raw_bed)
    assert rc == 0, err
    script.chmod(0o644)
    (kit.custom_dir(raw_bed) / "tool-link").unlink()
    os.symlink("elsewhere", kit.custom_dir(raw_bed) / "tool-link")
    rc, _out, err = kit.run("reset", raw_bed)
    assert rc == 0, err
    assert os.stat(script).st_mode & 0o111
    assert os.readlink(kit.custom_dir(raw_bed) / "tool-link") == "tool.sh"
    kit.assert_healthy(raw_bed)


def test_a_ref_shadowing_the_tag_name_is_not_restored(kit: Kit, pbed: Path) -> None:
    expected = kit.tracked_on_disk(pbed)
    tag = kit.baseline(pbed).tag
    (pbed / "config" / "sync" / "system.site.yml").write_text("name: agent commit\n")
    git(pbed, ["commit", "--quiet", "-am", "the agent's commit"])
    git(pbed, ["update-ref", f"refs/{tag}", "HEAD"])  # refs/<name> wins over refs/tags/<name>
    git(pbed, ["branch", tag, "HEAD"])
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0, err
    assert kit.tracked_on_disk(pbed) == expected


# Escrow's work (capture, hashing the judging tree, the verifier): reset needs none of it. Its
# escrow.locations (with mounts) is the one owner of the baseline directory's location, so reset
# imports that small part.
ESCROW_WORK = tuple(f"ai_proving_ground.escrow.{name}"
                    for name in ("capture", "files", "judging", "launch", "verifier"))


def test_reset_imports_only_what_it_uses(pbed: Path) -> None:
    code = ("from ai_proving_ground.cli.main import main\n"
            f"assert main(['reset', '--approot', {str(pbed)!r}]) == 0")
    # Reset reads fixtures (YAML, checked by the quick schema checks) and the database; it never
    # executes views, applies recipes, writes config or content files, or suggests a command.
    heavy = ("jsonschema", "difflib", "views", "recipe", "config_sync", "default_content",
             "fixture_export", "uuid", "platform", "ai_proving_ground.tasks",
             "ai_proving_ground.campaigns", *ESCROW_WORK, *WRITE_SIDE)
    assert imported_after(code, *heavy) == []
