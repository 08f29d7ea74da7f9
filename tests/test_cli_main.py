"""``apg`` itself, ``apg bed init`` and the usage errors of ``apg site``, all in-process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Protocol

import pytest

from ai_proving_ground.paths import base_recipe_dir
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

Run = Callable[..., tuple[int, str, str]]


class SiteRun(Protocol):
    """The ``site`` fixture: ``site(approot, *args)``, or ``site.raw(*args)`` without --approot."""

    def __call__(self, approot: Path, *args: str) -> tuple[int, str, str]: ...

    def raw(self, *args: str) -> tuple[int, str, str]: ...


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True)
    return done.stdout


# ---------------------------------------------------------------------------- apg bed init


def test_bed_init_makes_a_committed_bed_with_the_base_recipe(tmp_path: Path, apg: Run) -> None:
    target = tmp_path / "newbed"
    rc, out, err = apg("bed", "init", str(target))
    assert (rc, out, err) == (0, f"{target}\n", "")

    assert git(target, "rev-list", "--count", "HEAD").strip() == "1"
    assert git(target, "status", "--porcelain", "--ignored=no") == ""
    assert git(target, "branch", "--show-current").strip() == "main"

    active = EmbeddedSite(target).all_config()
    sync_files = sorted(f"config/sync/{name}.yml" for name in active)
    assert git(target, "ls-files").splitlines() == sorted([
        ".gitignore", "config/sync/.gitkeep", *sync_files, "recipes/apg_base/apg.yml",
        "recipes/apg_base/recipe.yml",
        "web/modules/custom/.gitkeep"])
    assert "config/sync/system.site.yml" in sync_files
    assert (target / "recipes" / "apg_base" / "recipe.yml").read_bytes() == \
        (base_recipe_dir() / "recipe.yml").read_bytes()
    assert (target / "web" / "modules" / "custom").is_dir()
    assert (target / "web" / "sites" / "default" / "files").is_dir()

    database = target / "db" / "site.sqlite"
    assert database.is_file()
    assert git(target, "check-ignore", "db/site.sqlite").strip() == "db/site.sqlite"
    # Using the site changes the database, never the tracked tree.
    site = EmbeddedSite(target)
    with site.session() as store:
        site.config_save(store, "node.type.article", {"type": "article", "name": "Article"})
    assert git(target, "status", "--porcelain") == ""
    assert active["system.site"]["name"] == "AI proving ground"
    assert sorted(active["core.extension"]["module"]) == [
        "datetime", "field", "file", "link", "node", "options", "path", "system",
        "taxonomy", "text", "user", "views"]


def test_bed_init_into_an_existing_empty_directory(tmp_path: Path, bed_cli: Run) -> None:
    target = tmp_path / "empty"
    target.mkdir()
    rc, out, err = bed_cli("init", str(target))
    assert (rc, out, err) == (0, f"{target}\n", ""), err
    assert git(target, "rev-list", "--count", "HEAD").strip() == "1"


def test_bed_init_refuses_a_non_empty_directory_or_a_file(tmp_path: Path, bed_cli: Run) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "keep.txt").write_text("mine\n", encoding="utf-8")
    rc, out, err = bed_cli("init", str(target))
    assert (rc, out) == (1, "")
    assert err == f"APG_BED_EXISTS {target} exists and is not empty; pick a new directory\n"
    assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]

    a_file = tmp_path / "file"
    a_file.write_text("x", encoding="utf-8")
    rc, _, err = bed_cli("init", str(a_file))
    assert rc == 1 and err.startswith("APG_BED_EXISTS "), err
    assert a_file.read_text(encoding="utf-8") == "x"


def test_bed_usage_errors(bed_cli: Run) -> None:
    for args in ((), ("init",), ("destroy", "x")):
        rc, out, err = bed_cli(*args)
        assert (rc, out) == (2, ""), args
        assert "APG_USAGE apg bed" in err and "Traceback" not in err, args


# ---------------------------------------------------------------------------- apg


def test_apg_help_and_unknown_command(apg: Run) -> None:
    rc, out, err = apg("--help")
    assert (rc, err) == (0, "")
    assert out.startswith("usage: apg COMMAND [ARGS...]\n")
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("  ")]
    assert {"site", "bed"} <= set(listed)

    rc, out, err = apg("frobnicate")
    assert (rc, out) == (2, "")
    assert err == "APG_USAGE unknown command 'frobnicate'; `apg --help` lists the commands\n"

    rc, _, _ = apg()
    assert rc == 2

    for flag in ("-V", "--version"):
        rc, out, err = apg(flag)
        assert (rc, err) == (0, "")
        assert out == f"{metadata.version('ai-proving-ground')}\n"


def test_apg_dispatches_to_site(apg: Run, bed: Path) -> None:
    rc, out, err = apg("site", "--approot", str(bed), "status", "--field", "db-status")
    assert (rc, out, err) == (0, "Connected\n", "")
    rc, out, err = apg("site", "--help")
    assert rc == 0 and out.startswith("usage: apg site") and err == ""


@pytest.mark.parametrize("args", [
    ("frobnicate",),
    (),
    ("config:get",),
    ("config:set", "system.site", "name"),
    ("config:get", "system.site", "--format=xml"),
    ("config:set", "system.site", "name", "x", "--input-format=toml"),
    ("pm:install",),
    ("entity:delete", "node"),
    ("views:execute", "v", "default", "--count", "--bogus"),
    ("pm:list", "--status=sleeping"),
])
def test_site_bad_arguments_exit_2_with_apg_usage(args: tuple[str, ...], site: Run,
                                                  bed: Path) -> None:
    rc, out, err = site(bed, *args)
    assert (rc, out) == (2, ""), err
    assert "APG_USAGE apg site" in err, err
    assert "Traceback" not in err


def test_site_value_and_values_usage_errors(site: Run, bed: Path) -> None:
    for args, fragment in (
        (("config:set", "system.site", "page", "{a: [", "--input-format=yaml"), "not valid yaml"),
        (("entity:create", "node", "page", "--values", "[1, 2]"), "--values must be a mapping"),
        (("entity:create", "node", "page", "--set", "no-equals-sign"), "must look like"),
    ):
        rc, out, err = site(bed, *args)
        assert (rc, out) == (2, ""), args
        assert err.startswith("APG_USAGE ") and fragment in err, err


def test_site_finds_the_bed_from_option_env_or_cwd(
    site: SiteRun, bed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nowhere"
    rc, out, err = site(missing, "status")
    assert (rc, out) == (2, "")
    assert err.startswith(f"APG_APPROOT_MISSING app root {missing} (from --approot)")

    monkeypatch.setenv("AI_PG_APPROOT", str(bed))
    rc, out, _ = site.raw("status", "--field", "site-name")
    assert (rc, out) == (0, "AI proving ground\n")

    monkeypatch.delenv("AI_PG_APPROOT")
    monkeypatch.chdir(bed)
    rc, out, _ = site.raw("config:get", "system.site", "name", "--format=json")
    assert rc == 0 and '"system.site:name": "AI proving ground"' in out

    not_a_bed = tmp_path / "plain"
    not_a_bed.mkdir()
    rc, _, err = site(not_a_bed, "pm:list")
    assert rc == 2
    assert err.startswith(f"APG_SITE_NOT_INSTALLED no embedded site database at {not_a_bed}")


def test_the_version_is_the_installed_distributions(apg: Run,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # The real console script, as a user runs it.
    script = Path(sys.executable).parent / "apg"
    shown = subprocess.run([str(script), "-V"], capture_output=True, text=True, check=False)
    assert (shown.returncode, shown.stdout, shown.stderr) == (
        0, f"{metadata.version('ai-proving-ground')}\n", "")
    # Read from the package metadata, not the source tree...
    monkeypatch.setattr(metadata, "version", lambda name: "9.8.7")
    assert apg("-V")[1] == "9.8.7\n"

    # ...and from the source tree only when nothing is installed.
    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    assert apg("--version")[1] == f"{__import__('ai_proving_ground').__version__}\n"

