"""Beds for the provision, reset, crash and lock tests, and the checks they share.

Two session templates are built once: ``raw_template`` (a bed from ``apg bed init`` plus public
files, a contrib module with a schema and a custom module, committed and installed) and
``provisioned_template`` (the same, provisioned for the default set). Each test gets a copy made
with ``shutil.copytree(symlinks=True)``, which keeps ``.git`` and the baseline directory.
``kit`` runs the commands in-process and holds the checks (``assert_healthy`` and friends).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ai_proving_ground.baselines import grader_tree, public_files
from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.baselines.store import Baseline, baseline_dir
from ai_proving_ground.bed import init_bed
from ai_proving_ground.fixtures import DEFAULT_FIXTURES, load_set
from ai_proving_ground.gitutil import git
from ai_proving_ground.layout import TRACKED_PATHS
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.yamldump import dumps

# Every variable that changes what provision or reset do; none may leak in from the caller.
APG_ENV = (
    "AI_PG_BASELINE_DIR", "AI_PG_BASELINE_REF", "AI_PG_ALLOW_UNTRACKED",
    "AI_PG_ALLOW_STALE_BASELINE", "AI_PG_FIXTURE_PATH", "AI_PG_FIXTURES", "AI_PG_CRASH_AT",
    "AI_PG_LOCK_TIMEOUT", "AI_PG_APPROOT", "AI_PG_SITE_DRIVER",
)

PUBLIC = Path("web/sites/default/files")
PROBE = "apg_probe"  # a contrib module: checked by reset, never restored
CUSTOM = "apg_custom"  # a custom module: tracked, restored from the tag
DELETED_NODE = "6b0d0c00-0000-4000-8000-000000000003"


# ---------------------------------------------------------------------------- environment


@pytest.fixture(autouse=True)
def _clean_apg_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in APG_ENV:
        monkeypatch.delenv(name, raising=False)


@contextlib.contextmanager
def _clean_env() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for name in APG_ENV:
            patch.delenv(name, raising=False)
        yield


# ---------------------------------------------------------------------------- modules


def module_info(version: str, schema: int | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {"name": "Probe", "type": "module", "package": "Testing",
                            "version": version}
    if schema is not None:
        info["schema_version"] = schema
        info["updates"] = {n: f"schema step {n}" for n in range(1, schema + 1)}
    return info


def write_info(module_dir: Path, info: dict[str, Any]) -> None:
    module_dir.mkdir(parents=True, exist_ok=True)
    (module_dir / f"{module_dir.name}.info.yml").write_text(dumps(info), encoding="utf-8")


def probe_dir(bed: Path) -> Path:
    return bed / "web" / "modules" / "contrib" / PROBE


def custom_dir(bed: Path) -> Path:
    return bed / "web" / "modules" / "custom" / CUSTOM


# ---------------------------------------------------------------------------- templates


TRACKED_SYNC_FILE = "apg_test.tracked.yml"


def _build_raw(target: Path) -> None:
    init_bed(target)
    public = target / PUBLIC
    (public / "sub").mkdir(parents=True, exist_ok=True)
    (public / "a.txt").write_text("alpha\n")
    (public / "sub" / "b.txt").write_text("bravo\n")
    (public / "sub" / "c.txt").write_text("charlie\n")
    (public / "empty").mkdir()
    os.symlink("a.txt", public / "link")
    (public / "css").mkdir()
    (public / "css" / "generated.css").write_text("body{}\n")
    write_info(probe_dir(target), module_info("1.0.0", schema=1))
    write_info(custom_dir(target), module_info("1.0.0"))
    (custom_dir(target) / f"{CUSTOM}.module").write_text("<?php\n// custom code\n")
    # A tracked config file the agent deletes (the base recipe installs no module that has one).
    (target / "config" / "sync" / TRACKED_SYNC_FILE).write_text("kept: true\n")
    # Outside reset's scope: present when the baseline is captured, changed by the agent later.
    (target / "vendor" / "acme").mkdir(parents=True)
    (target / "vendor" / "acme" / "lib.php").write_text("<?php // vendor as installed\n")
    (target / "web" / "sites" / "default" / "settings.local.php").write_text("<?php // local\n")
    git(target, ["add", "-A"])
    git(target, ["commit", "--quiet", "-m", "probe modules"])
    EmbeddedSite(target).install_modules([PROBE, CUSTOM])


@pytest.fixture(scope="session")
def raw_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An unprovisioned bed; tests get copies, never this one."""
    target = tmp_path_factory.mktemp("raw_template") / "bed"
    with _clean_env():
        _build_raw(target)
    return target


@pytest.fixture(scope="session")
def provisioned_template(raw_template: Path, tmp_path_factory: pytest.TempPathFactory,
                         copy_template: Callable[[Path, Path], Path]) -> Path:
    """The raw template provisioned for the default set."""
    target = copy_template(raw_template, tmp_path_factory.mktemp("provisioned_template") / "bed")
    with _clean_env(), contextlib.redirect_stderr(io.StringIO()):
        provision(target, list(DEFAULT_FIXTURES), EmbeddedSite(target))
    return target


@pytest.fixture
def raw_bed(raw_template: Path, tmp_path: Path, copy_template: Callable[[Path, Path], Path]) -> Path:
    return copy_template(raw_template, tmp_path / "bed")


@pytest.fixture
def pbed(provisioned_template: Path, tmp_path: Path, copy_template: Callable[[Path, Path], Path]) -> Path:
    """A provisioned bed of its own for one test."""
    bed = copy_template(provisioned_template, tmp_path / "bed")
    _refresh_grader_fingerprint(bed)
    return bed


def _refresh_grader_fingerprint(bed: Path) -> None:
    """Re-record the judging-code fingerprint, which covers this package's own source: when
    someone edits the checkout while the suite runs, the session template's copy goes stale
    and every reset would rightly say APG_RESET_GRADER_DRIFT."""
    fixture_set = load_set(list(DEFAULT_FIXTURES), bed)
    baseline = Baseline(baseline_dir(bed), fixture_set.key)
    files = grader_tree.fingerprint(bed, fixture_set)
    listing = grader_tree.render_listing(files)
    if baseline.grader_files.read_text(encoding="utf-8") != listing:
        baseline.grader_files.write_text(listing, encoding="utf-8")
        baseline.grader_sha256.write_text(grader_tree.tree_sha256(files) + "\n")


# ---------------------------------------------------------------------------- state readers


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tracked_on_disk(bed: Path) -> dict[str, str]:
    """Every file and symlink under the tracked paths: path -> content hash, mode or link target."""
    found: dict[str, str] = {}
    for relative in TRACKED_PATHS:
        root = bed / relative
        if root.is_symlink():
            found[relative] = "link -> " + os.readlink(root)
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            for name in dirnames + filenames:
                full = Path(dirpath) / name
                rel = full.relative_to(bed).as_posix()
                if full.is_symlink():
                    found[rel] = "link -> " + os.readlink(full)
                elif full.is_file():
                    executable = "x" if os.stat(full).st_mode & 0o111 else "-"
                    found[rel] = f"{executable} {sha(full.read_bytes())}"
    return found


def tracked_in_tag(bed: Path, tag: str) -> dict[str, str]:
    """The same map, read from ``git archive`` of the tag."""
    archive = git(bed, ["archive", "--format=tar", tag, "--", *TRACKED_PATHS]).stdout
    found: dict[str, str] = {}
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            if member.issym():
                found[member.name] = "link -> " + member.linkname
            elif member.isreg():
                handle = tar.extractfile(member)
                assert handle is not None
                executable = "x" if member.mode & 0o111 else "-"
                found[member.name] = f"{executable} {sha(handle.read())}"
    return found


def db_state(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table but the cache, sorted: what a restore must reproduce."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'cache'")]
        return {t: sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr)
                for t in sorted(tables)}
    finally:
        conn.close()


def public_state(bed: Path) -> dict[str, str]:
    """The public files tree, regenerables included: path -> content hash or link target,
    ``dir/`` -> "dir" for an empty directory (the snapshot's listing form)."""
    found: dict[str, str] = {}
    root = bed / PUBLIC
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                found[rel] = "link -> " + os.readlink(full)
            elif full.is_dir():
                if not any(full.iterdir()):
                    found[rel + "/"] = "dir"
            else:
                found[rel] = sha(full.read_bytes())
    return found


def file_stamps(directory: Path) -> dict[str, tuple[int, str]]:
    """name -> (mtime_ns, sha256) for every file in a baseline directory but the lock."""
    return {p.name: (p.stat().st_mtime_ns, sha(p.read_bytes()))
            for p in sorted(directory.iterdir()) if p.is_file() and p.name != ".lock"}


def node_exists(bed: Path, uuid: str) -> bool:
    with EmbeddedSite(bed).session() as store:
        return bool(store.entities_by_uuid([uuid]))


def site_name(bed: Path) -> Any:
    with EmbeddedSite(bed).session() as store:
        return (store.config_get("system.site") or {}).get("name")


# ---------------------------------------------------------------------------- mutations


def mutate(bed: Path) -> None:
    """What an agent's attempt leaves behind: database, tracked files, public files, and the
    things reset must not touch (vendor/, settings.local.php, regenerable public dirs)."""
    with EmbeddedSite(bed).session() as store:
        assert store.entity_delete(DELETED_NODE)
        site = store.config_get("system.site")
        store.config_set("system.site", {**site, "name": "Agent was here"})
        store.config_set("agent.settings", {"touched": True})
    sync = bed / "config" / "sync"
    with (sync / "system.site.yml").open("a") as handle:
        handle.write("slogan: agent\n")
    (sync / "core.extension.yml").write_text("module: {}\n")
    (sync / "agent.settings.yml").write_text("touched: true\n")
    (sync / "views.view.agent.yml").write_text("id: agent\n")
    (sync / TRACKED_SYNC_FILE).unlink()
    with (custom_dir(bed) / f"{CUSTOM}.module").open("a") as handle:
        handle.write("// agent edit\n")
    write_info(bed / "web" / "modules" / "custom" / "agent_mod", module_info("9.9.9"))
    (bed / "recipes" / "agent_recipe").mkdir()
    (bed / "recipes" / "agent_recipe" / "recipe.yml").write_text("name: Agent\n")
    public = bed / PUBLIC
    (public / "a.txt").unlink()
    (public / "sub" / "b.txt").write_text("changed by the agent\n")
    (public / "new.txt").write_text("new\n")
    (public / "sub" / "new2.txt").write_text("new too\n")
    (public / "css" / "agent.css").write_text("p{}\n")
    keep_out_of_reset(bed)


def keep_out_of_reset(bed: Path) -> None:
    """Change vendor/ and settings.local.php (the template has both): reset must neither
    restore nor remove them."""
    (bed / "vendor" / "acme" / "lib.php").write_text("<?php // vendor updated by the agent\n")
    (bed / "vendor" / "acme" / "added.php").write_text("<?php // added by the agent\n")
    (bed / "web" / "sites" / "default" / "settings.local.php").write_text("<?php // agent\n")


def untouched_by_reset(bed: Path) -> dict[str, str]:
    return {
        "vendor": (bed / "vendor" / "acme" / "lib.php").read_text(),
        "vendor added": (bed / "vendor" / "acme" / "added.php").read_text(),
        "settings.local.php": (bed / "web" / "sites" / "default" / "settings.local.php").read_text(),
        "css/agent.css": (bed / PUBLIC / "css" / "agent.css").read_text(),
    }


# ---------------------------------------------------------------------------- a fixture of our own

PROBE_FIXTURE = "probe"


def make_probe_fixture(root: Path, version: int = 1) -> Path:
    """``root/fixture_probe``: a tiny fixture (one config object, provided by apg_probe) kept
    outside every bed, so tests may change it without touching the shipped fixtures."""
    fixture = root / f"fixture_{PROBE_FIXTURE}"
    (fixture / "config").mkdir(parents=True, exist_ok=True)
    (fixture / "manifest").mkdir(exist_ok=True)
    (fixture / "recipe.yml").write_text(dumps({"name": "Fixture: probe", "type": "Testing"}))
    (fixture / "config" / "apg_probe.settings.yml").write_text(dumps({"label": "Probe", "level": 1}))
    set_probe_version(root, version)
    return root


def set_probe_version(root: Path, version: int) -> None:
    fragment = {
        "name": PROBE_FIXTURE, "version": version,
        "owns": {"config": ["apg_probe."], "content_namespace": "0be0"},
        "export": {"config": ["apg_probe.settings"], "content": []},
        "facts": {"modules": [], "config": ["apg_probe.settings"], "counts": {}, "content": []},
    }
    path = root / f"fixture_{PROBE_FIXTURE}" / "manifest" / "fragment.yml"
    path.write_text(dumps(fragment))


# ---------------------------------------------------------------------------- the kit


class Kit:
    """Commands in-process (with capsys), commands as processes, and the health checks."""

    names: ClassVar[list[str]] = list(DEFAULT_FIXTURES)
    tracked_sync_file: ClassVar[str] = TRACKED_SYNC_FILE
    # The module-level helpers, so tests reach them through the fixture.
    mutate = staticmethod(mutate)
    keep_out_of_reset = staticmethod(keep_out_of_reset)
    untouched_by_reset = staticmethod(untouched_by_reset)
    tracked_on_disk = staticmethod(tracked_on_disk)
    tracked_in_tag = staticmethod(tracked_in_tag)
    db_state = staticmethod(db_state)
    public_state = staticmethod(public_state)
    file_stamps = staticmethod(file_stamps)
    node_exists = staticmethod(node_exists)
    site_name = staticmethod(site_name)
    module_info = staticmethod(module_info)
    write_info = staticmethod(write_info)
    probe_dir = staticmethod(probe_dir)
    custom_dir = staticmethod(custom_dir)
    sha = staticmethod(sha)
    make_probe_fixture = staticmethod(make_probe_fixture)
    set_probe_version = staticmethod(set_probe_version)
    probe_set: ClassVar[list[str]] = [*DEFAULT_FIXTURES, PROBE_FIXTURE]

    def __init__(self, capsys: pytest.CaptureFixture[str], copy_bed: Callable[[Path, Path], Path]) -> None:
        self.capsys = capsys
        self.copy_bed = copy_bed

    # commands --------------------------------------------------------------

    def run(self, command: str, bed: Path, *args: str) -> tuple[int, str, str]:
        from ai_proving_ground.cli.main import main

        self.capsys.readouterr()
        try:
            rc = main([command, "--approot", str(bed), *args])
        except SystemExit as exc:
            rc = exc.code if isinstance(exc.code, int) else 1
        out, err = self.capsys.readouterr()
        return rc, out, err

    def doctor(self, bed: Path, *args: str) -> tuple[int, dict[str, Any]]:
        rc, out, err = self.run("doctor", bed, *args)
        assert out, err
        return rc, json.loads(out)

    def process(self, command: str, bed: Path, crash_at: str | None = None,
                **env: str) -> subprocess.CompletedProcess[str]:
        environ = {k: v for k, v in os.environ.items() if k not in APG_ENV}
        environ.update(env)
        if crash_at:
            environ["AI_PG_CRASH_AT"] = crash_at
        return subprocess.run(
            [sys.executable, "-m", "ai_proving_ground.cli.main", command, "--approot", str(bed)],
            env=environ, capture_output=True, text=True, timeout=60, check=False)

    # where things are (as the commands see them, from this process's environment) ---------

    def key(self, bed: Path, names: list[str] | None = None) -> str:
        return load_set(names or self.names, bed, settings=Settings.from_environ()).key

    def baseline(self, bed: Path, names: list[str] | None = None) -> Baseline:
        return Baseline.of(bed, self.key(bed, names), Settings.from_environ())

    def snapshot(self, bed: Path, names: list[str] | None = None) -> public_files.FilesSnapshot:
        baseline = self.baseline(bed, names)
        return public_files.snapshot_paths(baseline.directory, baseline.set_key)

    # checks ------------------------------------------------------------------

    def check(self, verdict: dict[str, Any], name: str) -> dict[str, Any]:
        found: dict[str, Any] = next(c for c in verdict["checks"] if c["name"] == name)
        return found

    def assert_restored(self, bed: Path, names: list[str] | None = None) -> None:
        """Tracked paths, database and public files equal the baseline; no reset under way."""
        baseline = self.baseline(bed, names)
        assert not baseline.reset_marker.exists()
        assert tracked_on_disk(bed) == tracked_in_tag(bed, baseline.tag)
        assert db_state(bed / "db" / "site.sqlite") == db_state(baseline.dump)
        live = {k: v for k, v in public_state(bed).items() if k.split("/")[0] != "css"}
        assert live == archive_state(self.snapshot(bed, names).archive)

    def assert_healthy(self, bed: Path, names: list[str] | None = None) -> None:
        rc, verdict = self.doctor(bed, *(names or []))
        failing = [c for c in verdict["checks"] if c["status"] == "fail"]
        assert rc == 0 and verdict["healthy"], failing
        self.assert_restored(bed, names)


def archive_state(archive: Path) -> dict[str, str]:
    """What a public files archive holds, in :func:`public_state`'s form."""
    found: dict[str, str] = {}
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar.getmembers():
            if member.isdir():
                found[member.name + "/"] = "dir"
            elif member.issym():
                found[member.name] = "link -> " + member.linkname
            else:
                handle = tar.extractfile(member)
                assert handle is not None
                found[member.name] = sha(handle.read())
    return found


@pytest.fixture
def kit(capsys: pytest.CaptureFixture[str], copy_template: Callable[[Path, Path], Path]) -> Kit:
    return Kit(capsys, copy_template)
