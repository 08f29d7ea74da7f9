"""Creating an embedded bed: a git repository with a Drupal-like layout and the base recipe applied."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.baselines.store import baseline_dir, record_driver, runs_dir
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixtures import load_set
from ai_proving_ground.fsutil import atomic_write_text
from ai_proving_ground.gitutil import git
from ai_proving_ground.layout import BedLayout
from ai_proving_ground.paths import BASE_RECIPE_NAME, base_recipe_dir
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.sites.embedded import config_sync
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

BED_GITIGNORE = """\
# Not part of the bed's tracked state: the database, files and run records.
/db/
/web/sites/default/files/
/private/
/.ai-proving-ground/
/vendor/
/web/sites/*/settings.local.php
"""


def init_bed(target: Path, fixture_names: Sequence[str] = (),
             settings: Settings = DEFAULT_SETTINGS) -> EmbeddedSite:
    """Create a new bed at ``target`` (absent or empty), apply fixtures, and commit it once.

    The fixture set is resolved first, with ``target`` as its app root (so lookup is what the
    bed will see later): a fixture that is missing, ambiguous or overlapping another is
    refused before anything exists. Fixture recipes are applied after the base recipe, in
    the order given. If building fails later, what was created is removed again.
    """
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ApgError("APG_BED_EXISTS", f"{target} exists and is not empty; pick a new directory",
                       exit_code=1)
    fixture_set = (load_set(fixture_names, approot=target, settings=settings) if fixture_names
                   else None)
    existed = target.exists()
    try:
        return _build(target, [f.directory for f in fixture_set.fixtures] if fixture_set else [])
    except BaseException:
        _remove_partial(target, existed)
        raise


def _build(target: Path, fixture_dirs: list[Path]) -> EmbeddedSite:
    layout = BedLayout(target)
    for directory in (layout.config_sync, layout.custom_modules, layout.recipes,
                      layout.public_files):
        directory.mkdir(parents=True, exist_ok=True)
    for keep in (layout.custom_modules, layout.config_sync):
        (keep / ".gitkeep").touch()
    atomic_write_text(target / ".gitignore", BED_GITIGNORE)
    shutil.copytree(base_recipe_dir(), layout.recipes / BASE_RECIPE_NAME)
    site = EmbeddedSite.install(target)
    record_driver(target, site.name)  # a .ddev/config.yaml planted later changes nothing
    site.apply_recipe(layout.recipes / BASE_RECIPE_NAME)
    for fixture_dir in fixture_dirs:
        site.apply_recipe(fixture_dir)
    config_sync.write_directory(layout.config_sync, site.all_config(), layout.approot)
    git(target, ["init", "--quiet", "-b", "main"])
    git(target, ["add", "-A"])
    git(target, ["commit", "--quiet", "-m", "bed initial state"])
    return site


def _remove_partial(target: Path, existed: bool) -> None:
    """Undo a failed init: the directory was absent or empty, so everything in it is ours."""
    if not target.is_dir():
        return
    if not existed:
        shutil.rmtree(target, ignore_errors=True)
        return
    for child in target.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def clone_bed(template: Path, bed: Path, settings: Settings = DEFAULT_SETTINGS) -> None:
    """Copy a bed whole (.git and baselines included), minus its run records and stored
    envelopes: they are not state, and earlier answers must not reach the next agent."""
    # In the baseline directory the settings name and in the default one (the template's own).
    skipped = {path.parent.resolve() / path.name for where in (DEFAULT_SETTINGS, settings)
               for path in (runs_dir(template, where), baseline_dir(template, where) / "results")}

    def ignore(directory: str, names: list[str]) -> set[str]:
        here = Path(directory).resolve()
        return {name for name in names if here / name in skipped}

    bed.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(template, bed, symlinks=True, ignore=ignore)
