"""The attack matrix: each change is reported with the right token, and nothing else is.

Then ``--restore``: it repairs every baseline-file and tag case (a later check passes) and never
touches judging code.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from escrow_kit import Escrowed, make_escrow

from ai_proving_ground.gitutil import git, git_text

Attack = Callable[[Escrowed], None]
RECIPE = "recipes/apg_base/recipe.yml"


# --- judging code ---------------------------------------------------------------------------------


def _append(path: Path, text: str = "# changed by an attempt\n") -> None:
    with path.open("a") as handle:
        handle.write(text)


def judging_modified(e: Escrowed) -> None:
    _append(e.bed / RECIPE)


def judging_added(e: Escrowed) -> None:
    (e.bed / "recipes" / "apg_base" / "extra.yml").write_text("name: extra\n")


def judging_removed(e: Escrowed) -> None:
    (e.bed / RECIPE).unlink()


def judging_symlinked(e: Escrowed) -> None:
    # Same bytes behind the link: only the kind changed, and that is still tampering.
    outside = e.bed.parent / "outside-recipe.yml"
    outside.write_bytes((e.bed / RECIPE).read_bytes())
    (e.bed / RECIPE).unlink()
    os.symlink(outside, e.bed / RECIPE)


def judging_made_executable(e: Escrowed) -> None:
    os.chmod(e.bed / RECIPE, 0o755)


def judging_made_non_executable(e: Escrowed) -> None:
    os.chmod(e.bed / ".ddev" / "commands" / "host" / "ai-eval-verify", 0o644)


def bed_verifier_edited(e: Escrowed) -> None:
    # The bed's copy now "verifies" anything; the escrow copy still judges.
    _append(e.bed / "scripts" / "escrow_verify.py", "def main(argv=None):\n    return 0\n")


def dataset_edited(e: Escrowed) -> None:
    _append(e.bed / "datasets" / "local.yml", "  - id: planted_task\n")


def adapter_added(e: Escrowed) -> None:
    adapter = e.bed / ".ddev" / "agents" / "tuned"
    adapter.write_text("#!/usr/bin/env bash\n## Credentials: none\nexec my-agent\n")
    os.chmod(adapter, 0o755)


# --- the baseline tag -----------------------------------------------------------------------------


def _commit(e: Escrowed) -> None:
    git(e.bed, ["commit", "--allow-empty", "--quiet", "-m", "attempt"])


def tag_moved(e: Escrowed) -> None:
    _commit(e)
    git(e.bed, ["tag", "-f", e.tag, "HEAD"])


def tag_deleted(e: Escrowed) -> None:
    git(e.bed, ["tag", "-d", e.tag])


def tag_recreated_elsewhere(e: Escrowed) -> None:
    git(e.bed, ["tag", "-d", e.tag])
    _commit(e)
    git(e.bed, ["tag", e.tag])


def tag_recreated_annotated(e: Escrowed) -> None:
    commit = git_text(e.bed, ["rev-parse", f"refs/tags/{e.tag}"])
    git(e.bed, ["tag", "-d", e.tag])
    git(e.bed, ["tag", "-a", "-m", "same commit, new tag object", e.tag, commit])


# --- baseline files -------------------------------------------------------------------------------


def dump_truncated(e: Escrowed) -> None:
    dump = e.baseline.dump
    with dump.open("r+b") as handle:
        handle.truncate(dump.stat().st_size // 2)


def dump_replaced(e: Escrowed) -> None:
    dump = e.baseline.dump
    planted = dump.with_name("planted.dump")
    planted.write_bytes(os.urandom(dump.stat().st_size))
    os.replace(planted, dump)


def dump_replaced_by_symlink(e: Escrowed) -> None:
    dump = e.baseline.dump
    outside = e.bed.parent / "outside.dump"
    outside.write_bytes(dump.read_bytes())
    dump.unlink()
    os.symlink(outside, dump)


def dump_deleted(e: Escrowed) -> None:
    e.baseline.dump.unlink()


def sidecar_edited(e: Escrowed) -> None:
    sidecar = e.baseline.directory / f"files.{e.key}.tar.gz.json"
    data = json.loads(sidecar.read_text())
    data["public_dir"] = "../../elsewhere"
    with sidecar.open("r+") as handle:  # in place: same file, new bytes
        handle.write(json.dumps(data))
        handle.truncate()


def _config_export(e: Escrowed) -> Path:
    return e.baseline.config_export


def config_object_changed(e: Escrowed) -> None:
    # One config object's data changed, as an attempt would to make site_unchanged pass.
    export = _config_export(e)
    data = json.loads(export.read_text())
    name = sorted(data["config"])[0]
    data["config"][name] = {**data["config"][name], "planted": True}
    with export.open("r+") as handle:  # in place: same file, new bytes
        handle.write(json.dumps(data))
        handle.truncate()


def config_deleted(e: Escrowed) -> None:
    _config_export(e).unlink()


def config_replaced_by_symlink(e: Escrowed) -> None:
    export = _config_export(e)
    outside = e.bed.parent / "outside-config.json"
    outside.write_bytes(export.read_bytes())
    export.unlink()
    os.symlink(outside, export)


def counts_changed(e: Escrowed) -> None:
    # One count raised, as an attempt that added a node would to make site_unchanged pass.
    counts = e.baseline.content_counts
    text = counts.read_text()
    data = json.loads(text)
    changed = json.dumps(data).replace("0", "9", 1) if "0" in json.dumps(data) else text + " "
    counts.write_text(changed)


# The whole-bed snapshot: what reset makes the bed equal to (bed.<set>.json and objects/).
SITE = "config/sync/system.site.yml"
FORGED = b"name: forged by an attempt\n"


def _site_object(e: Escrowed) -> Path:
    return e.baseline.objects / hashlib.sha256((e.bed / SITE).read_bytes()).hexdigest()


def listing_forged(e: Escrowed) -> None:
    # Content-addressed, so the attempt plants an object that really is its bytes' hash and
    # points the listing's entry at it: every check of an object by its name passes.
    sha = hashlib.sha256(FORGED).hexdigest()
    (e.baseline.objects / sha).write_bytes(FORGED)
    listing = e.baseline.bed_snapshot
    data = json.loads(listing.read_text())
    entry = next(x for x in data["entries"] if x["path"] == SITE)
    entry.update(data=sha, size=len(FORGED))
    listing.write_text(json.dumps(data))


def object_changed(e: Escrowed) -> None:
    with _site_object(e).open("r+b") as handle:  # in place: same inode, same size
        handle.write(b"X")


def object_deleted(e: Escrowed) -> None:
    _site_object(e).unlink()


def objects_redirected(e: Escrowed) -> None:
    objects = e.baseline.objects
    moved = e.bed.parent / "moved-objects"
    os.rename(objects, moved)
    os.symlink(moved, objects)


def baseline_dir_redirected(e: Escrowed) -> None:
    directory = e.baseline.directory
    moved = e.bed.parent / "moved-baselines"
    os.rename(directory, moved)
    os.symlink(moved, directory)


def _name(e: Escrowed, stem: str) -> str:
    return {"dump": f"db.{e.key}.dump", "sidecar": f"files.{e.key}.tar.gz.json",
            "config": f"config.{e.key}.json", "counts": f"counts.{e.key}.json",
            "listing": f"bed.{e.key}.json", "object": f"objects/{_site_object(e).name}"}[stem]


JUDGING: dict[str, tuple[Attack, list[str]]] = {
    "judging-modified": (judging_modified, [f"APG_TAMPERED {RECIPE} modified"]),
    "judging-added": (judging_added, ["APG_TAMPERED recipes/apg_base/extra.yml added"]),
    "judging-removed": (judging_removed, [f"APG_TAMPERED {RECIPE} removed"]),
    "judging-symlinked": (judging_symlinked, [f"APG_TAMPERED {RECIPE} replaced-by-symlink"]),
    "judging-made-executable": (judging_made_executable, [f"APG_TAMPERED {RECIPE} made-executable"]),
    "judging-made-non-executable": (judging_made_non_executable, [
        "APG_TAMPERED .ddev/commands/host/ai-eval-verify made-non-executable"]),
    "bed-verifier-edited": (bed_verifier_edited, ["APG_TAMPERED scripts/escrow_verify.py modified"]),
    "dataset-edited": (dataset_edited, ["APG_TAMPERED datasets/local.yml modified"]),
    "adapter-added": (adapter_added, ["APG_TAMPERED .ddev/agents/tuned added"]),
}

# Expected lines use {tag} and {dump}/{sidecar}, filled in per bed.
BASELINE: dict[str, tuple[Attack, list[str]]] = {
    "tag-moved": (tag_moved, ["APG_ESCROW_MISMATCH tag {tag} moved"]),
    "tag-deleted": (tag_deleted, ["APG_ESCROW_MISMATCH tag {tag} deleted"]),
    # A tag deleted and created again on another commit is, by the ref alone, a moved tag.
    "tag-recreated-on-another-commit": (tag_recreated_elsewhere, ["APG_ESCROW_MISMATCH tag {tag} moved"]),
    "tag-recreated-annotated": (tag_recreated_annotated, ["APG_ESCROW_MISMATCH tag {tag} recreated"]),
    "dump-truncated": (dump_truncated, ["APG_ESCROW_MISMATCH {dump} truncated"]),
    "dump-replaced": (dump_replaced, ["APG_ESCROW_MISMATCH {dump} replaced"]),
    "dump-replaced-by-symlink": (dump_replaced_by_symlink, ["APG_ESCROW_MISMATCH {dump} replaced"]),
    "dump-deleted": (dump_deleted, ["APG_ESCROW_MISMATCH {dump} missing"]),
    "sidecar-edited": (sidecar_edited, ["APG_ESCROW_MISMATCH {sidecar} modified"]),
    "config-object-changed": (config_object_changed, ["APG_ESCROW_MISMATCH {config} modified"]),
    "config-deleted": (config_deleted, ["APG_ESCROW_MISMATCH {config} missing"]),
    "config-replaced-by-symlink": (config_replaced_by_symlink,
                                   ["APG_ESCROW_MISMATCH {config} replaced"]),
    "counts-changed": (counts_changed, ["APG_ESCROW_MISMATCH {counts} modified"]),
    "listing-forged": (listing_forged, ["APG_ESCROW_MISMATCH {listing} modified"]),
    "object-changed": (object_changed, ["APG_ESCROW_MISMATCH {object} modified"]),
    "object-deleted": (object_deleted, ["APG_ESCROW_MISMATCH {object} missing"]),
    "objects-redirected": (objects_redirected, ["APG_ESCROW_MISMATCH objects/ replaced"]),
    "baseline-dir-redirected": (baseline_dir_redirected,
                                ["APG_ESCROW_MISMATCH .ai-proving-ground/ replaced"]),
}


def _expected(e: Escrowed, lines: list[str]) -> list[str]:
    # Only the names a line uses: the object's needs the baseline directory, which an attack
    # may have made a link.
    return [line.format(tag=e.tag, **{stem: _name(e, stem) for stem in (
        "dump", "sidecar", "config", "counts", "listing", "object") if f"{{{stem}}}" in line})
        for line in lines]


@pytest.mark.parametrize("case", list(JUDGING) + list(BASELINE))
def test_attack_is_detected_and_nothing_else(escrowed: Escrowed, case: str) -> None:
    attack, expected = {**JUDGING, **BASELINE}[case]
    attack(escrowed)
    result = escrowed.verify()
    assert result.rc == 1, result.err
    assert result.findings == _expected(escrowed, expected)
    assert not any(line.startswith("APG_ESCROW_OK") for line in result.lines)


def test_a_clean_bed_verifies_ten_times_in_a_row(escrowed: Escrowed) -> None:
    for _ in range(10):
        result = escrowed.verify()
        assert (result.rc, result.err, result.out) == (0, f"APG_ESCROW_OK {escrowed.key}\n", "")


def test_the_edited_bed_verifier_does_not_judge_through_selection(escrowed: Escrowed) -> None:
    """Even run through the bed's own (edited) copy, selection hands over to the escrow copy."""
    bed_verifier_edited(escrowed)
    result = escrowed.verify(copy=escrowed.bed / "scripts" / "escrow_verify.py", selection=[])
    assert result.rc == 1
    assert result.findings == ["APG_TAMPERED scripts/escrow_verify.py modified"]


@pytest.mark.parametrize("case", list(BASELINE))
def test_restore_repairs_baseline_files_and_the_tag(escrowed: Escrowed, case: str) -> None:
    attack, expected = BASELINE[case]
    attack(escrowed)
    restored = escrowed.verify("--restore")
    assert restored.rc == 0, restored.err
    assert [line for line in restored.lines if "MISMATCH" in line] == _expected(escrowed, expected)
    assert any(line.startswith("APG_ESCROW_RESTORED") for line in restored.lines)
    assert restored.lines[-1] == f"APG_ESCROW_OK {escrowed.key}"
    again = escrowed.verify()
    assert (again.rc, again.lines) == (0, [f"APG_ESCROW_OK {escrowed.key}"])
    recorded = json.loads((escrowed.set_dir / "escrow.json").read_text())["baseline"]
    assert git_text(escrowed.bed, ["rev-parse", f"refs/tags/{escrowed.tag}^{{commit}}"]) == \
        recorded["tag_commit"]
    for restored_file in (escrowed.baseline.dump, escrowed.baseline.config_export):
        assert not restored_file.is_symlink()
        assert restored_file.read_bytes() == \
            (escrowed.set_dir / "baseline" / restored_file.name).read_bytes()


@pytest.mark.parametrize("case", [c for c in BASELINE if c.startswith("config-")])
def test_restore_puts_the_config_export_back_byte_for_byte(escrowed: Escrowed, case: str) -> None:
    """The export site_unchanged grades against: the bytes provision wrote, not the escrow's
    word for them (compared with a copy taken before the attack)."""
    export = escrowed.baseline.config_export
    before = export.read_bytes()
    assert json.loads(before)["config"]  # a real provision recorded config objects
    BASELINE[case][0](escrowed)
    assert escrowed.verify().rc == 1
    assert escrowed.verify("--restore").rc == 0
    assert not export.is_symlink() and export.read_bytes() == before


@pytest.mark.parametrize("case", list(JUDGING))
def test_restore_never_touches_judging_code(escrowed: Escrowed, case: str) -> None:
    attack, expected = JUDGING[case]
    attack(escrowed)
    dump_truncated(escrowed)
    before = _snapshot(escrowed.bed)
    result = escrowed.verify("--restore")
    assert result.rc == 1
    assert f"APG_ESCROW_RESTORED {escrowed.baseline.dump.name}" in result.lines
    assert [line for line in result.lines if line.startswith("APG_TAMPERED")] == expected
    assert _snapshot(escrowed.bed) == before  # the tampered judging tree is left exactly as found
    again = escrowed.verify("--restore")
    assert (again.rc, again.findings) == (1, expected)


def _snapshot(bed: Path) -> dict[str, str]:
    """Judging paths of the bed: kind, mode and content, to prove restore left them alone."""
    found: dict[str, str] = {}
    for top in ("recipes", "datasets", ".ddev", "scripts"):
        for path in sorted((bed / top).rglob("*")):
            rel = path.relative_to(bed).as_posix()
            if path.is_symlink():
                found[rel] = "link " + os.readlink(path)
            elif path.is_file():
                found[rel] = f"{oct(path.stat().st_mode)} {path.read_bytes()!r}"
    return found


def test_a_sidecar_that_appears_after_escrow_is_reported_and_removed(
        bed: Path, tmp_path: Path, empty_dir: Path, snapshot_grader: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from ai_proving_ground.escrow.capture import escrow

    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "escrow"))
    key = make_escrow(bed, tmp_path / "probe", empty_dir).key  # only to learn the key
    versions = bed / ".ai-proving-ground" / f"versions.{key}.json"
    saved = versions.read_bytes()
    versions.unlink()
    set_dir = escrow(bed, ["kb_docs", "canvas_home"], root=tmp_path / "escrow")
    assert f"APG_ESCROW_SKIPPED {versions.name}" in capsys.readouterr().err
    e = Escrowed(bed=bed, root=tmp_path / "escrow", set_dir=set_dir, key=key, empty=empty_dir)
    assert e.verify().rc == 0
    versions.write_bytes(saved)
    result = e.verify()
    assert (result.rc, result.findings) == (1, [f"APG_ESCROW_MISMATCH {versions.name} added"])
    restored = e.verify("--restore")
    assert restored.rc == 0 and not versions.exists()


def test_the_per_attempt_contract_raises_no_false_alarm(escrowed: Escrowed, apg: Any) -> None:
    """verify --restore, reset, run, verify, grade: the normal loop leaves nothing to report."""
    bed = str(escrowed.bed)
    assert escrowed.verify("--restore").lines == [f"APG_ESCROW_OK {escrowed.key}"]
    assert apg("reset", "--approot", bed).rc == 0
    run = apg("run", "dv01_view_build", "--approot", bed, "--agent=oracle", "--json")
    assert run.rc == 0, run.err
    assert escrowed.verify().lines == [f"APG_ESCROW_OK {escrowed.key}"]
    graded = apg("grade", "dv01_view_build", "--approot", bed, f"--run={json.loads(run.out)['run_id']}")
    assert graded.rc == 0, graded.err
    assert escrowed.verify().lines == [f"APG_ESCROW_OK {escrowed.key}"]


def test_a_bed_without_its_repository_cannot_be_repaired(escrowed: Escrowed) -> None:
    os.rename(escrowed.bed / ".git", escrowed.bed.parent / "git-moved-away")
    result = escrowed.verify("--restore")
    assert result.rc == 1
    # the repository is judging state: its disappearance is tampering, never restored
    tampered = [line for line in result.findings if line.startswith("APG_TAMPERED")]
    assert "APG_TAMPERED .git removed" in tampered
    rest = [line for line in result.findings if line not in tampered]
    assert rest[0] == f"APG_ESCROW_MISMATCH tag {escrowed.tag} missing"
    assert rest[1].startswith(f"APG_ESCROW_RESTORE_FAILED tag {escrowed.tag}")
    assert rest[2:] == [f"APG_ESCROW_MISMATCH tag {escrowed.tag} missing"]


def test_a_baseline_captured_before_the_config_export_still_verifies(
        bed: Path, tmp_path: Path, empty_dir: Path, snapshot_grader: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Older baselines have no config.<set>.json: escrow records it absent, verify passes, and an
    export planted afterwards (a forged one for site_unchanged to grade against) is reported."""
    from ai_proving_ground.escrow.capture import escrow

    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "escrow"))
    key = make_escrow(bed, tmp_path / "probe", empty_dir).key  # only to learn the key
    export = bed / ".ai-proving-ground" / f"config.{key}.json"
    saved = export.read_bytes()
    export.unlink()
    set_dir = escrow(bed, ["kb_docs", "canvas_home"], root=tmp_path / "escrow")
    assert f"APG_ESCROW_SKIPPED {export.name}" in capsys.readouterr().err
    e = Escrowed(bed=bed, root=tmp_path / "escrow", set_dir=set_dir, key=key, empty=empty_dir)
    assert e.verify().lines == [f"APG_ESCROW_OK {key}"]
    export.write_bytes(saved)
    result = e.verify()
    assert (result.rc, result.findings) == (1, [f"APG_ESCROW_MISMATCH {export.name} added"])
    assert e.verify("--restore").rc == 0 and not export.exists()


def test_an_escrow_made_before_the_config_export_was_escrowed_still_verifies(
        escrowed: Escrowed) -> None:
    """A set whose escrow.json lists no config export (escrowed by an older apg) checks what it
    lists and passes; only a new escrow covers the export."""
    meta = escrowed.set_dir / "escrow.json"
    data = json.loads(meta.read_text())
    name = escrowed.baseline.config_export.name
    del data["baseline"]["files"][name]
    del data["escrowed"][f"baseline/{name}"]
    (escrowed.set_dir / "baseline" / name).unlink()
    meta.write_text(json.dumps(data))
    assert escrowed.baseline.config_export.is_file()
    assert escrowed.verify().lines == [f"APG_ESCROW_OK {escrowed.key}"]


def test_a_forged_listing_is_what_reset_would_restore_until_verify_puts_it_back(
        escrowed: Escrowed) -> None:
    """The attack the escrow of the whole-bed snapshot closes: with the listing forged, a reset
    writes the attempt's bytes into the bed (APG_RESET_OK); verify names the listing, --restore
    puts it back, and the reset after it restores the baseline's bytes."""
    from ai_proving_ground.baselines.reset import reset
    from ai_proving_ground.fixtures import DEFAULT_FIXTURES
    from ai_proving_ground.sites.embedded.driver import EmbeddedSite

    site = escrowed.bed / SITE
    before = site.read_bytes()
    listing_forged(escrowed)
    site.write_text("name: changed by the attempt\n")
    with contextlib.redirect_stderr(io.StringIO()):
        reset(escrowed.bed, list(DEFAULT_FIXTURES), EmbeddedSite(escrowed.bed))
    assert site.read_bytes() == FORGED  # what a forged listing buys without the escrow
    result = escrowed.verify("--restore")
    assert f"APG_ESCROW_MISMATCH bed.{escrowed.key}.json modified" in result.lines, result.err
    assert f"APG_ESCROW_RESTORED bed.{escrowed.key}.json" in result.lines
    assert result.rc == 0 and result.lines[-1] == f"APG_ESCROW_OK {escrowed.key}"
    with contextlib.redirect_stderr(io.StringIO()):
        reset(escrowed.bed, list(DEFAULT_FIXTURES), EmbeddedSite(escrowed.bed))
    assert site.read_bytes() == before
    assert escrowed.verify().rc == 0
