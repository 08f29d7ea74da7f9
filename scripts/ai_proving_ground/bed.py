"""Creating an embedded bed: a git repository with a Drupal-like layout and the base recipe applied."""

from __future__ import annotations

import shutil
from pathlib import Path

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_text
from ai_proving_ground.gitutil import git
from ai_proving_ground.paths import BASE_RECIPE_NAME, base_recipe_dir
from ai_proving_ground.sites.embedded import config_sync
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.sites.embedded.layout import BedLayout

BED_GITIGNORE = """\
# Not part of the bed's tracked state: the database, files and run records.
/db/
/web/sites/default/files/
/private/
/.ai-proving-ground/
/vendor/
/web/sites/*/settings.local.php
"""


def init_bed(target: Path, fixture_dirs: list[Path] | None = None) -> EmbeddedSite:
    """Create a new bed at ``target`` (which must be absent or empty) and commit it once."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ApgError("APG_BED_EXISTS", f"{target} exists and is not empty; pick a new directory",
                       exit_code=1)
    layout = BedLayout(target)
    for directory in (layout.config_sync, layout.custom_modules, layout.recipes,
                      layout.public_files):
        directory.mkdir(parents=True, exist_ok=True)
    for keep in (layout.custom_modules, layout.config_sync):
        (keep / ".gitkeep").touch()
    atomic_write_text(target / ".gitignore", BED_GITIGNORE)
    shutil.copytree(base_recipe_dir(), layout.recipes / BASE_RECIPE_NAME)
    site = EmbeddedSite.install(target)
    site.apply_recipe(layout.recipes / BASE_RECIPE_NAME)
    for fixture_dir in fixture_dirs or []:
        site.apply_recipe(fixture_dir)
    config_sync.write_directory(layout.config_sync, site.all_config())
    git(target, ["init", "--quiet", "-b", "main"])
    git(target, ["add", "-A"])
    git(target, ["commit", "--quiet", "-m", "bed initial state"])
    return site
