"""apg escrow: what it writes, where it refuses to write, --force, crashes; set selection."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from escrow_kit import ApgRunner as MainRunner
from escrow_kit import Escrowed, clean_environ, make_escrow, reprovisioned

from ai_proving_ground.escrow.capture import render_json
from ai_proving_ground.gitutil import git
from ai_proving_ground.verifier_file import load_verifier


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- what escrow writes ---------------------------------------------------------------------------


def test_escrow_writes_the_set_and_prints_its_directory(
        bed: Path, tmp_path: Path, apg: MainRunner, snapshot_grader: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "escrow"
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(root))
    result = apg("escrow", "--approot", str(bed), "kb_docs", "canvas_home")
    assert result.rc == 0, result.err
    set_dir = Path(result.out.strip())
    assert set_dir.parent == root / "bed" and set_dir.is_dir()
    assert "APG_ESCROW_SKIPPED" not in result.err
    data = json.loads((set_dir / "escrow.json").read_text())
    key = set_dir.name
    assert data["set_key"] == key and data["fixtures"] == ["canvas_home", "kb_docs"]
    assert (data["project"], data["approot"]) == ("bed", str(bed))
    baseline = data["baseline"]
    assert baseline["relative"] == ".ai-proving-ground" and baseline["configured"] is None
    assert baseline["dir"] == str(bed.resolve() / ".ai-proving-ground")
    assert baseline["tag"] == f"apg-baseline-{key}"
    assert baseline["tag_commit"] == git(bed, ["rev-parse", baseline["tag"]]).stdout.decode().strip()
    assert sorted(baseline["files"]) == sorted(
        f"{stem}.{key}{suffix}" for stem, suffix in [
            ("db", ".dump"), ("files", ".tar.gz"), ("files", ".tar.gz.json"), ("files", ".list"),
            ("grader", ".sha256"), ("grader", ".files"), ("versions", ".json"), ("config", ".json"),
            ("counts", ".json"), ("bed", ".json"), ("baseline", ".json")])
    # Each object the whole-bed listing names is copied into one pack, its identity kept.
    listing = json.loads((bed / ".ai-proving-ground" / f"bed.{key}.json").read_text())
    named = {e["data"] for e in listing["entries"] if e["kind"] == "file"}
    assert named and sorted(baseline["objects"]) == sorted(named)
    pack = (set_dir / "baseline" / "objects.pack").read_bytes()
    for sha, record in baseline["objects"].items():
        copy = pack[record["offset"]:record["offset"] + record["size"]]
        assert hashlib.sha256(copy).hexdigest() == sha
        info = (bed / ".ai-proving-ground" / "objects" / sha).stat()
        assert (record["inode"], record["ctime_ns"]) == (info.st_ino, info.st_ctime_ns)
    # Every escrowed file is there with the recorded hash; the bed's copies hash the same.
    for relative, digest in data["escrowed"].items():
        assert _sha(set_dir / relative) == digest
    for name, record in baseline["files"].items():
        assert _sha(bed / ".ai-proving-ground" / name) == record["sha256"]
    assert (set_dir / "escrow_verify.py").read_bytes() == \
        (Path(load_verifier().__file__)).read_bytes()
    bundle_heads = git(bed, ["bundle", "list-heads", str(set_dir / "tag.bundle")]).stdout.decode()
    assert f"refs/tags/{baseline['tag']}" in bundle_heads
    # Judging roots are labelled absolute paths; entries carry kind, hash and the exec bit.
    roots = {root["label"]: root["path"] for root in data["judging"]["roots"]}
    assert roots["recipes"] == str(bed.resolve() / "recipes")
    assert roots["grader:ai_proving_ground"] == str(snapshot_grader / "scripts" / "ai_proving_ground")
    assert {".ddev/commands", ".ddev/agents", "datasets", "scripts/escrow_verify.py",
            "project:datasets", "project:ddev/agents", "fixture:kb_docs",
            "fixture:canvas_home"} <= set(roots)
    files = data["judging"]["files"]
    assert files[".ddev/agents/manual"] == {"kind": "file", "exec": True,
                                            "sha256": _sha(bed / ".ddev" / "agents" / "manual")}
    assert files["recipes/apg_base/recipe.yml"]["exec"] is False
    assert "grader:ai_proving_ground/escrow/capture.py" in files
    assert not any("__pycache__" in path for path in files)


def test_symlinks_in_the_judging_tree_are_recorded_with_their_target(
        bed: Path, tmp_path: Path, empty_dir: Path, snapshot_grader: Path) -> None:
    os.symlink("local.yml", bed / "datasets" / "alias.yml")
    e = make_escrow(bed, tmp_path / "escrow", empty_dir)
    files = json.loads((e.set_dir / "escrow.json").read_text())["judging"]["files"]
    assert files["datasets/alias.yml"] == {"kind": "symlink", "target": "local.yml"}
    (bed / "datasets" / "alias.yml").unlink()
    os.symlink("/etc/passwd", bed / "datasets" / "alias.yml")
    assert e.verify().findings == ["APG_TAMPERED datasets/alias.yml retargeted"]


def test_render_json_round_trips() -> None:
    data = {"format": 1, "judging": {"roots": [], "files": {
        'a "quoted"/path': {"kind": "file", "sha256": "0" * 64, "exec": True},
        "b": {"kind": "symlink", "target": "x"}}}, "other": {"files": "@files-x@"}}
    assert json.loads(render_json(data)) == data
    assert json.loads(render_json({"judging": {"files": {}}})) == {"judging": {"files": {}}}


def test_a_missing_sidecar_is_skipped_and_reported(
        bed: Path, tmp_path: Path, apg: MainRunner, snapshot_grader: Path) -> None:
    for listing in (bed / ".ai-proving-ground").glob("files.*.list"):
        listing.unlink()
    result = apg("escrow", "--approot", str(bed))
    assert result.rc == 0
    assert [line.split()[:2] for line in result.err.splitlines() if "SKIPPED" in line] == \
        [["APG_ESCROW_SKIPPED", listing.name]]
    assert not (Path(result.out.strip()) / "baseline" / listing.name).exists()


def test_no_baseline_is_refused_with_how_to_provision(
        bed: Path, tmp_path: Path, apg: MainRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "escrow"))
    for tag in git(bed, ["tag"]).stdout.decode().split():
        git(bed, ["tag", "-d", tag])
    result = apg("escrow", "--approot", str(bed))
    assert result.rc == 1 and result.out == ""
    assert result.err.startswith("APG_ESCROW_NO_BASELINE")
    assert f"apg provision --approot {bed}" in result.err
    assert not (tmp_path / "escrow").exists()


def test_an_existing_set_needs_force(bed: Path, tmp_path: Path, apg: MainRunner,
                                     snapshot_grader: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "escrow"))
    first = apg("escrow", "--approot", str(bed))
    set_dir = Path(first.out.strip())
    before = (set_dir / "escrow.json").read_bytes()
    again = apg("escrow", "--approot", str(bed))
    assert again.rc == 1 and again.err.startswith("APG_ESCROW_EXISTS") and "--force" in again.err
    assert (set_dir / "escrow.json").read_bytes() == before
    # Re-provisioned trusted state (here: a new commit under the tag), then --force.
    git(bed, ["commit", "--allow-empty", "-q", "-m", "an attempt's commit"])
    git(bed, ["tag", "-f", json.loads(before)["baseline"]["tag"], "HEAD"])
    moved = apg("escrow", "--approot", str(bed), "--force")
    assert moved.rc == 1 and moved.err.startswith("APG_ESCROW_TAG_MOVED"), moved.err
    assert (set_dir / "escrow.json").read_bytes() == before
    reprovisioned(bed)
    forced = apg("escrow", "--approot", str(bed), "--force")
    assert forced.rc == 0 and Path(forced.out.strip()) == set_dir
    assert json.loads((set_dir / "escrow.json").read_text())["baseline"]["tag_commit"] == \
        git(bed, ["rev-parse", "HEAD"]).stdout.decode().strip()
    assert sorted(p.name for p in set_dir.parent.iterdir()) == [set_dir.name]  # no leftovers
    assert apg("verify", "--approot", str(bed)).rc == 0


def test_project_name_and_a_ddev_beds_baseline_dir_outside_the_project(
        bed: Path, tmp_path: Path, apg: MainRunner, snapshot_grader: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    (bed / ".ddev" / "config.yaml").write_text("name: my-bed\ntype: drupal\n")
    (bed / "state").mkdir()
    os.rename(bed / ".ai-proving-ground", bed / "state" / "apg")
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "escrow"))
    # Issue 19: a DDEV web container writes the whole project, so a baseline there (named as
    # the container sees it or not) is refused; outside the project it is escrowed.
    monkeypatch.setenv("AI_PG_BASELINE_DIR", "/var/www/html/state/apg")
    refused = apg("escrow", "--approot", str(bed))
    assert refused.rc == 2 and refused.err.startswith("APG_BASELINE_DIR_UNSAFE"), refused.err
    assert "unset AI_PG_BASELINE_DIR" in refused.err and not (tmp_path / "escrow").exists()
    outside = tmp_path / "outside-apg"
    os.rename(bed / "state" / "apg", outside)
    monkeypatch.setenv("AI_PG_BASELINE_DIR", str(outside))
    result = apg("escrow", "--approot", str(bed))
    assert result.rc == 0, result.err
    set_dir = Path(result.out.strip())
    assert set_dir.parent == tmp_path / "escrow" / "my-bed"
    baseline = json.loads((set_dir / "escrow.json").read_text())["baseline"]
    assert (baseline["configured"], baseline["relative"]) == (str(outside), None)
    assert baseline["dir"] == str(outside)
    assert apg("verify", "--approot", str(bed)).rc == 0


# --- where escrow refuses to write -----------------------------------------------------------------


def _compose(bed: Path, volumes: str) -> None:
    (bed / ".ddev" / "docker-compose.extra.yaml").write_text(
        "services:\n  web:\n    volumes:\n" + volumes)


def _refused(apg: MainRunner, bed: Path, root: Path) -> str:
    result = apg("escrow", "--approot", str(bed))
    assert result.rc == 1 and result.out == "", result.err
    assert result.err.startswith("APG_ESCROW_UNSAFE"), result.err
    assert not any(root.rglob("escrow.json")) if root.exists() else True
    return result.err


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


def test_refuses_a_directory_inside_the_project(bed: Path, apg: MainRunner,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(bed / "private" / "escrow"))
    assert "inside the project" in _refused(apg, bed, bed / "private")


def test_refuses_a_symlink_that_resolves_into_the_project(
        bed: Path, tmp_path: Path, apg: MainRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    os.symlink(bed / "web", tmp_path / "looks-outside")
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "looks-outside" / "escrow"))
    assert "inside the project" in _refused(apg, bed, bed / "web")


BIND_FORMS = {
    "short-absolute": lambda root, home: f"      - {root}:/mnt/escrow\n",
    "short-relative-to-ddev": lambda root, home: "      - ../../escrow:/mnt/escrow:ro\n",
    "long-source": lambda root, home: f"      - type: bind\n        source: {root}\n        target: /mnt/x\n",
    "home-braces": lambda root, home: "      - ${HOME}:/mnt/home\n",
    "home-dollar": lambda root, home: "      - $HOME/escrow:/mnt/escrow\n",
    "tilde": lambda root, home: "      - ~/escrow:/mnt/escrow:rw\n",
}


@pytest.mark.parametrize("form", list(BIND_FORMS))
def test_refuses_a_directory_under_a_bind_source(
        bed: Path, tmp_path: Path, home: Path, apg: MainRunner, form: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The relative form is resolved from .ddev: bed/.ddev/../../escrow is tmp_path/escrow.
    root = home / "escrow" if form in {"home-braces", "home-dollar", "tilde"} else tmp_path / "escrow"
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(root))
    _compose(bed, BIND_FORMS[form](root, home))
    assert "bind source" in _refused(apg, bed, root)


def test_an_unresolved_substitution_fails_closed(bed: Path, tmp_path: Path, apg: MainRunner,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "escrow"))
    monkeypatch.setenv("FOO", str(tmp_path / "unrelated"))  # set or not: escrow never guesses
    _compose(bed, "      - ${FOO}/data:/mnt/data\n")
    assert "cannot resolve" in _refused(apg, bed, tmp_path / "escrow")


def test_unrelated_mounts_do_not_refuse(bed: Path, tmp_path: Path, home: Path, apg: MainRunner,
                                        snapshot_grader: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "escrow"))
    _compose(bed, "      - mydata:/var/lib/data\n      - /var/cache/thing\n"
                  "      - ./homeadditions:/home/extra\n      - ~/.gitconfig:/home/.gitconfig:ro\n"
                  "      - type: volume\n        source: named\n        target: /x\n"
                  "      - ${DDEV_APPROOT}/private:/private\n")
    result = apg("escrow", "--approot", str(bed))
    assert result.rc == 0, result.err


# --- crashes ----------------------------------------------------------------------------------------


# Without renameat2 the swap is two renames; this stands in for such a system.
NO_EXCHANGE = ("import sys, ai_proving_ground.escrow.files as e; e._exchange = lambda a, b: False; "
               "from ai_proving_ground.cli.main import main; raise SystemExit(main(sys.argv[1:]))")


def _escrow_process(e: Escrowed, *args: str, crash_at: str | None = None,
                    exchange: bool = True) -> subprocess.CompletedProcess[str]:
    entry = ["-m", "ai_proving_ground.cli.main"] if exchange else ["-c", NO_EXCHANGE]
    env = clean_environ(AI_PG_ESCROW_DIR=str(e.root), **({"AI_PG_CRASH_AT": crash_at} if crash_at else {}))
    return subprocess.run([sys.executable, *entry, "escrow", "--approot", str(e.bed), *args],
                          capture_output=True, text=True, timeout=60, check=False, env=env)


@pytest.mark.parametrize(("point", "exchange", "expect_new"), [
    ("escrow.written", True, False), ("escrow.swapped", True, True),
    ("escrow.written", False, False), ("escrow.swapping", False, False)])
def test_a_crash_leaves_the_old_set_or_the_new_one(
        escrowed: Escrowed, point: str, exchange: bool, expect_new: bool) -> None:
    old = json.loads((escrowed.set_dir / "escrow.json").read_text())
    reprovisioned(escrowed.bed)
    done = _escrow_process(escrowed, "--force", crash_at=point, exchange=exchange)
    assert done.returncode < 0, done.stderr  # killed at the crash point
    if point == "escrow.swapping":
        # Between the fallback's two renames: no set at the path (a check fails closed), and the
        # next escrow puts the old set back before anything else.
        assert not escrowed.set_dir.exists()
        assert escrowed.verify().rc == 2
        refused = _escrow_process(escrowed, exchange=exchange)
        assert refused.returncode == 1 and "APG_ESCROW_RECOVERED" in refused.stderr
        assert "APG_ESCROW_EXISTS" in refused.stderr
    now = json.loads((escrowed.set_dir / "escrow.json").read_text())
    assert (now["baseline"]["tag_commit"] != old["baseline"]["tag_commit"]) is expect_new
    load_verifier().check_escrow_files(str(escrowed.set_dir), now)  # complete and consistent
    rerun = _escrow_process(escrowed, "--force", exchange=exchange)
    assert rerun.returncode == 0, rerun.stderr
    assert sorted(p.name for p in escrowed.set_dir.parent.iterdir()) == [escrowed.key]


# --- choosing a set -----------------------------------------------------------------------------------


def _second_set(e: Escrowed, name: str, tag: str | None = None) -> Path:
    """A copy of the set under another key (as a bumped base version would make)."""
    other = e.set_dir.parent / name
    shutil.copytree(e.set_dir, other)
    if tag:
        data = json.loads((other / "escrow.json").read_text())
        data["baseline"]["tag"] = tag
        (other / "escrow.json").write_text(json.dumps(data))
    return other


def test_selection_by_metadata(escrowed: Escrowed, apg: MainRunner) -> None:
    result = escrowed.verify(selection=[])
    assert result.lines == [f"APG_ESCROW_SELECTED {escrowed.set_dir}", f"APG_ESCROW_OK {escrowed.key}"]
    assert escrowed.verify(selection=["kb_docs", "canvas_home"]).rc == 0
    assert escrowed.verify(selection=[], AI_PG_FIXTURES="canvas_home,kb_docs").rc == 0
    assert apg("verify", "--approot", str(escrowed.bed), "canvas_home", "kb_docs").rc == 0
    assert apg("verify", "--approot", str(escrowed.bed), "--escrow", str(escrowed.set_dir)).rc == 0


def test_ambiguous_or_missing_sets_fail_closed(escrowed: Escrowed, apg: MainRunner) -> None:
    other = _second_set(escrowed, "0000000000000000", tag="apg-baseline-other")
    result = escrowed.verify(selection=[])
    assert result.rc == 1
    assert result.lines[0].startswith("APG_ESCROW_NONE 2 escrow sets")
    assert {line.split()[0] for line in result.lines[1:]} == {str(escrowed.set_dir), str(other)}
    via_apg = apg("verify", "--approot", str(escrowed.bed))
    assert via_apg.rc == 1  # apg verify prints the same lines (on the real stderr of its process)
    # AI_PG_BASELINE_REF narrows the choice to one.
    narrowed = escrowed.verify(selection=[], AI_PG_BASELINE_REF=escrowed.tag)
    assert (narrowed.rc, narrowed.lines[-1]) == (0, f"APG_ESCROW_OK {escrowed.key}")
    none = escrowed.verify(selection=["kb_docs"])
    assert none.rc == 1 and none.lines[0].startswith("APG_ESCROW_NONE no escrow set")
    assert str(escrowed.set_dir) in none.err  # the sets that exist for this bed are listed


def test_apg_verify_without_an_escrow(bed: Path, tmp_path: Path, apg: MainRunner,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "nothing-here"))
    assert apg("verify", "--approot", str(bed)).rc == 1
    missing = apg("verify", "--approot", str(bed), "--escrow", str(tmp_path))
    assert missing.rc == 2 and "APG_ESCROW_UNREADABLE" in missing.err


def test_a_configured_dataset_is_judged(bed: Path, tmp_path: Path, empty_dir: Path,
                                        snapshot_grader: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = tmp_path / "my-tasks.yml"
    dataset.write_text("- id: mine\n")
    monkeypatch.setenv("AI_PG_DATASET", str(dataset))
    e = make_escrow(bed, tmp_path / "escrow", empty_dir)
    roots = json.loads((e.set_dir / "escrow.json").read_text())["judging"]["roots"]
    assert {"label": "dataset:my-tasks.yml", "path": str(dataset)} in roots
    dataset.write_text("- id: mine\n- id: planted\n")
    assert e.verify().findings == ["APG_TAMPERED dataset:my-tasks.yml modified"]


def test_a_compose_file_that_is_not_yaml_is_refused_with_a_token(
        bed: Path, tmp_path: Path, apg: MainRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    # Escrow cannot tell what an unreadable compose file mounts: it fails closed, never a traceback.
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "escrow"))
    (bed / ".ddev" / "docker-compose.extra.yaml").write_text("services: [unclosed\n")
    err = _refused(apg, bed, tmp_path / "escrow")
    assert "docker-compose.extra.yaml" in err and "cannot be read" in err
