"""apg provision: what a capture writes, the no-op, overrides, and the refusals (untracked, stale)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.baselines.public_files import Sidecar
from ai_proving_ground.baselines.store import read_metadata
from ai_proving_ground.baselines.tree import tag_commit
from ai_proving_ground.baselines.versions import VersionsRecord
from ai_proving_ground.gitutil import git, git_text
from ai_proving_ground.records import read_record
from ai_proving_ground.sites.embedded import modules

Kit = Any  # the ``kit`` fixture of tests/baselines/conftest.py


def _head(bed: Path) -> str:
    return git_text(bed, ["rev-parse", "HEAD"])


def _commit_config_change(bed: Path) -> None:
    (bed / "config" / "sync" / "later.settings.yml").write_text("later: true\n")
    git(bed, ["add", "-A"])
    git(bed, ["commit", "--quiet", "-m", "a later change"])


def test_provision_captures_every_baseline_file(kit: Kit, raw_bed: Path) -> None:
    rc, out, err = kit.run("provision", raw_bed, "--json")
    assert rc == 0, err
    assert "APG_PROVISION_OK" in err and "APG_PROVISION_NOOP" not in err
    summary = json.loads(out)
    baseline = kit.baseline(raw_bed)
    key = baseline.set_key
    assert summary["set_key"] == key and summary["noop"] is False
    assert summary["fixtures"] == ["kb_docs@3", "canvas_home@1"]
    directory = raw_bed / ".ai-proving-ground"
    assert baseline.directory == directory

    # The pair: the dump holds the live database, the tag is HEAD.
    assert tag_commit(raw_bed, f"apg-baseline-{key}") == _head(raw_bed)
    assert summary["tag"] == f"apg-baseline-{key}"
    assert kit.db_state(directory / f"db.{key}.dump") == kit.db_state(raw_bed / "db" / "site.sqlite")

    # Public files: archive, path listing (regenerable css/ left out) and the sidecar.
    listing = (directory / f"files.{key}.list").read_text()
    assert listing == "a.txt\nempty/\nlink\nsub/b.txt\nsub/c.txt\n"
    sidecar = read_record(directory / f"files.{key}.tar.gz.json", Sidecar)
    archive = directory / f"files.{key}.tar.gz"
    assert sidecar.public_dir == "web/sites/default/files"
    assert sidecar.sha256 == kit.sha(archive.read_bytes())
    assert sidecar.list_sha256 == kit.sha(listing.encode())
    assert sidecar.entries == 5

    # The grader fingerprint: a sha256sum-style listing and the hash of that listing.
    grader_files = (directory / f"grader.{key}.files").read_text()
    recorded = dict(reversed(line.split("  ", 1)) for line in grader_files.splitlines())
    recipe = raw_bed / "recipes" / "apg_base" / "recipe.yml"
    assert recorded["bed/recipes/apg_base/recipe.yml"] == kit.sha(recipe.read_bytes())
    assert "fixture/kb_docs/manifest/fragment.yml" in recorded
    assert "fixture/canvas_home/manifest/fragment.yml" in recorded
    # Imported data lives on in the dump; only the facts the doctor reads are judged.
    assert not any(label.startswith("fixture/kb_docs/content/") for label in recorded)
    assert "grader/ai_proving_ground/baselines/reset.py" in recorded
    assert (directory / f"grader.{key}.sha256").read_text().strip() == kit.sha(grader_files.encode())

    # Code identity per module, the schema recorded apart.
    versions = read_record(directory / f"versions.{key}.json", VersionsRecord).as_json()
    assert versions["core"] == modules.CORE_VERSION
    assert set(versions["runtime"]) == {"python", "sqlite"}
    assert versions["modules"]["apg_probe"] == {"package": "Testing", "version": "1.0.0",
                                                 "source_reference": None}
    assert versions["modules"]["apg_custom"]["version"] == "1.0.0"
    assert {"canvas", "node", "system"} <= set(versions["modules"])
    assert all(set(m) == {"package", "version", "source_reference"}
               for m in versions["modules"].values())
    assert versions["schema"]["apg_probe"] == 1

    metadata = read_metadata(baseline).as_json()
    assert metadata["set_key"] == key and metadata["tag"] == f"apg-baseline-{key}"
    assert metadata["fixtures"] == ["canvas_home", "kb_docs"]

    rc, verdict = kit.doctor(raw_bed)
    assert rc == 0 and verdict["healthy"], verdict


def test_second_provision_is_a_noop(kit: Kit, pbed: Path) -> None:
    baseline = kit.baseline(pbed)
    stamps = kit.file_stamps(baseline.directory)
    tagged = tag_commit(pbed, baseline.tag)
    # A capture now would tag the new HEAD and dump a different database.
    _commit_config_change(pbed)
    from ai_proving_ground.sites.embedded.driver import EmbeddedSite

    with EmbeddedSite(pbed).session() as store:
        store.config_set("later.settings", {"changed": True})
    rc, out, err = kit.run("provision", pbed, "--json")
    assert rc == 0, err
    assert "APG_PROVISION_NOOP" in err and "APG_PROVISION_OK" not in err
    assert json.loads(out)["noop"] is True
    assert kit.file_stamps(baseline.directory) == stamps
    assert tag_commit(pbed, baseline.tag) == tagged != _head(pbed)


def test_baseline_ref_overrides_the_tag_name(kit: Kit, raw_bed: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_BASELINE_REF", "my-eval-baseline")
    rc, _out, err = kit.run("provision", raw_bed)
    assert rc == 0, err
    key = kit.key(raw_bed)
    assert tag_commit(raw_bed, "my-eval-baseline") == _head(raw_bed)
    assert tag_commit(raw_bed, f"apg-baseline-{key}") is None
    assert read_metadata(kit.baseline(raw_bed)).tag == "my-eval-baseline"

    kit.mutate(raw_bed)
    rc, _out, err = kit.run("reset", raw_bed)
    assert rc == 0, err
    kit.assert_healthy(raw_bed)

    # Reset reads no tag (the baseline directory's snapshot holds the bed), so the name the
    # tag goes by does not matter to it.
    monkeypatch.delenv("AI_PG_BASELINE_REF")
    kit.mutate(raw_bed)
    rc, _out, err = kit.run("reset", raw_bed)
    assert rc == 0 and "APG_RESET_OK" in err, err
    assert tag_commit(raw_bed, f"apg-baseline-{key}") is None


def test_baseline_dir_relocates_baselines(kit: Kit, raw_bed: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "baselines"
    monkeypatch.setenv("AI_PG_BASELINE_DIR", str(elsewhere))
    rc, _out, err = kit.run("provision", raw_bed)
    assert rc == 0, err
    key = kit.key(raw_bed)
    assert str(elsewhere / f"db.{key}.dump") in err
    for name in (f"db.{key}.dump", f"files.{key}.tar.gz", f"grader.{key}.files",
                 f"versions.{key}.json", f"baseline.{key}.json"):
        assert (elsewhere / name).is_file(), name
    # Only the bed's own record stays at the fixed place (every command reads it first).
    assert sorted(p.name for p in (raw_bed / ".ai-proving-ground").iterdir()) == ["bed.json"]

    kit.mutate(raw_bed)
    rc, _out, err = kit.run("reset", raw_bed)
    assert rc == 0, err
    kit.assert_healthy(raw_bed)

    # A relative value is relative to the app root.
    monkeypatch.setenv("AI_PG_BASELINE_DIR", "var/baselines")
    rc, _out, err = kit.run("provision", raw_bed)
    assert rc == 0 and "APG_PROVISION_OK" in err, err
    assert (raw_bed / "var" / "baselines" / f"db.{key}.dump").is_file()


def _untrack_recipes(bed: Path) -> None:
    with (bed / ".gitignore").open("a") as handle:
        handle.write("/recipes\n")
    git(bed, ["rm", "-r", "--cached", "--quiet", "recipes"])
    git(bed, ["add", "-A"])
    git(bed, ["commit", "--quiet", "-m", "stop tracking recipes"])


def test_untracked_path_is_refused_unless_allowed(kit: Kit, raw_bed: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _untrack_recipes(raw_bed)
    baseline = kit.baseline(raw_bed)
    rc, _out, err = kit.run("provision", raw_bed)
    assert rc == 1
    line = next(x for x in err.splitlines() if x.startswith("APG_PROVISION_UNTRACKED"))
    assert "recipes (ignore rule: .gitignore:" in line and ":/recipes)" in line
    assert "AI_PG_ALLOW_UNTRACKED=1" in line
    assert not baseline.dump.exists() and tag_commit(raw_bed, baseline.tag) is None

    monkeypatch.setenv("AI_PG_ALLOW_UNTRACKED", "1")
    rc, _out, err = kit.run("provision", raw_bed)
    assert rc == 0, err
    assert "APG_PROVISION_UNTRACKED allowed" in err and "APG_PROVISION_OK" in err
    assert baseline.dump.is_file() and tag_commit(raw_bed, baseline.tag) == _head(raw_bed)


def test_untracked_path_without_ignore_rule_says_so(kit: Kit, raw_bed: Path) -> None:
    git(raw_bed, ["rm", "-r", "--cached", "--quiet", "web/modules/custom"])
    git(raw_bed, ["commit", "--quiet", "-m", "forget custom modules"])
    rc, _out, err = kit.run("provision", raw_bed)
    assert rc == 1 and "APG_PROVISION_UNTRACKED" in err
    assert "web/modules/custom (ignore rule: no ignore rule matches" in err


def test_stale_baseline_is_refused_with_recapture_commands(kit: Kit, pbed: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    baseline = kit.baseline(pbed)
    stamps = kit.file_stamps(baseline.directory)
    tagged = tag_commit(pbed, baseline.tag)
    kit.write_info(kit.custom_dir(pbed), kit.module_info("1.1.0"))
    rc, _out, err = kit.run("provision", pbed)
    assert rc == 1
    line = next(x for x in err.splitlines() if x.startswith("APG_PROVISION_STALE_BASELINE"))
    assert "modules.apg_custom: recorded Testing 1.0.0, live Testing 1.1.0" in line
    assert f"rm {baseline.dump}" in line and f"tag -d {baseline.tag}" in line
    assert f"apg provision --approot {pbed} canvas_home kb_docs" in line
    assert "APG_PROVISION_NOOP" not in err

    monkeypatch.setenv("AI_PG_ALLOW_STALE_BASELINE", "1")
    rc, _out, err = kit.run("provision", pbed)
    assert rc == 0, err
    assert "APG_PROVISION_STALE_BASELINE allowed" in err and "APG_PROVISION_NOOP" in err
    assert "modules.apg_custom" in err
    assert kit.file_stamps(baseline.directory) == stamps
    assert tag_commit(pbed, baseline.tag) == tagged


def test_recapture_commands_are_quoted_for_the_shell(kit: Kit, pbed: Path, tmp_path: Path) -> None:
    bed = kit.copy_bed(pbed, tmp_path / "my bed")
    kit.write_info(kit.custom_dir(bed), kit.module_info("1.1.0"))
    rc, _out, err = kit.run("provision", bed)
    assert rc == 1 and "APG_PROVISION_STALE_BASELINE" in err
    dump = kit.baseline(bed).dump
    assert f"rm '{dump}' && git -C '{bed}' tag -d " in err
    assert f"apg provision --approot '{bed}' canvas_home kb_docs" in err


def test_newly_installed_module_makes_the_baseline_stale(kit: Kit, pbed: Path) -> None:
    from ai_proving_ground.sites.embedded.driver import EmbeddedSite

    kit.write_info(pbed / "web" / "modules" / "custom" / "late_mod", kit.module_info("2.0.0"))
    EmbeddedSite(pbed).install_modules(["late_mod"])
    rc, _out, err = kit.run("provision", pbed)
    assert rc == 1
    assert "modules.late_mod: recorded absent, live Testing 2.0.0" in err


def test_schema_alone_is_not_a_code_difference(kit: Kit, pbed: Path) -> None:
    from ai_proving_ground.sites.embedded.driver import EmbeddedSite

    with EmbeddedSite(pbed).session() as store:
        store.kv_set("system.schema", "apg_probe", 0)
    rc, _out, err = kit.run("provision", pbed)
    assert rc == 0 and "APG_PROVISION_NOOP" in err, err


def test_missing_versions_manifest_warns(kit: Kit, pbed: Path) -> None:
    baseline = kit.baseline(pbed)
    baseline.versions.unlink()
    kit.write_info(kit.custom_dir(pbed), kit.module_info("1.1.0"))  # cannot be compared
    rc, _out, err = kit.run("provision", pbed)
    assert rc == 0, err
    assert "APG_PROVISION_VERSIONS_UNRECORDED" in err and "APG_PROVISION_NOOP" in err
    assert f"tag -d {baseline.tag}" in err
    assert not baseline.versions.exists()  # the no-op does not backfill


def test_corrupt_versions_manifest_is_a_clear_refusal(kit: Kit, pbed: Path) -> None:
    baseline = kit.baseline(pbed)
    baseline.versions.write_text("{not json")
    rc, _out, err = kit.run("provision", pbed)
    assert rc == 1
    assert err.startswith("APG_VERSIONS_UNREADABLE ") and str(baseline.versions) in err
    assert "Traceback" not in err


def test_bumped_fixture_version_is_a_new_baseline(kit: Kit, pbed: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    root = kit.make_probe_fixture(tmp_path / "fixtures", version=1)
    monkeypatch.setenv("AI_PG_FIXTURE_PATH", str(root))
    default = kit.baseline(pbed)
    default_stamps = {k: v for k, v in kit.file_stamps(default.directory).items()
                      if default.set_key in k}
    default_tag = tag_commit(pbed, default.tag)

    rc, _out, err = kit.run("provision", pbed, *kit.probe_set)
    assert rc == 0 and "APG_PROVISION_OK" in err, err
    first = kit.baseline(pbed, kit.probe_set)
    first_dump = kit.sha(first.dump.read_bytes())
    first_tag = tag_commit(pbed, first.tag)
    assert first.set_key != default.set_key and first_tag == _head(pbed)

    _commit_config_change(pbed)
    kit.set_probe_version(root, 2)
    rc, _out, err = kit.run("provision", pbed, *kit.probe_set)
    assert rc == 0 and "APG_PROVISION_OK" in err, err
    second = kit.baseline(pbed, kit.probe_set)
    assert second.set_key not in {first.set_key, default.set_key}
    assert second.dump.is_file() and tag_commit(pbed, second.tag) == _head(pbed) != first_tag
    # The old baselines are untouched.
    assert kit.sha(first.dump.read_bytes()) == first_dump
    assert tag_commit(pbed, first.tag) == first_tag
    assert tag_commit(pbed, default.tag) == default_tag
    assert {k: v for k, v in kit.file_stamps(default.directory).items()
            if default.set_key in k} == default_stamps

    # The same set again reuses its baseline.
    rc, _out, err = kit.run("provision", pbed, *kit.probe_set)
    assert rc == 0 and "APG_PROVISION_NOOP" in err, err


def test_dirty_tracked_paths_are_refused_before_capture(kit: Kit, raw_bed: Path) -> None:
    (raw_bed / "config" / "sync" / "uncommitted.yml").write_text("x: 1\n")
    rc, _out, err = kit.run("provision", raw_bed)
    assert rc == 1 and "APG_PROVISION_DIRTY" in err and "config/sync/uncommitted.yml" in err
    assert not kit.baseline(raw_bed).dump.exists()
