"""The bed's layout: where a bed keeps things, relative to its app root, whatever its driver.

A bed is a directory under git: ``config/sync/``, ``web/modules/custom/`` and ``recipes/`` are
tracked (reset restores exactly these from the baseline tag), public files sit under
``web/sites/default/files/`` and private ones under ``private/``. A bed with a
``.ddev/config.yaml`` is a DDEV project (`is_ddev_project`): the one test every module uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Paths git tracks in a bed; reset restores exactly these from the baseline tag.
TRACKED_PATHS = ("config/sync", "web/modules/custom", "recipes")
DDEV_DIR = ".ddev"


@dataclass(frozen=True)
class BedLayout:
    """The Drupal-like directory layout of one bed."""

    approot: Path

    @property
    def webroot(self) -> Path:
        return self.approot / "web"

    @property
    def database(self) -> Path:
        # The embedded site's database file (a DDEV site's lives in its database container):
        # outside every tracked path and outside public files, like a Drupal database server.
        return self.approot / "db" / "site.sqlite"

    @property
    def config_sync(self) -> Path:
        return self.approot / "config" / "sync"

    @property
    def custom_modules(self) -> Path:
        return self.webroot / "modules" / "custom"

    @property
    def recipes(self) -> Path:
        return self.approot / "recipes"

    @property
    def public_files(self) -> Path:
        return self.webroot / "sites" / "default" / "files"

    @property
    def private_files(self) -> Path:
        return self.approot / "private"

    @property
    def ddev(self) -> Path:
        """The DDEV project directory: config, commands, agents and compose files."""
        return self.approot / DDEV_DIR

    @property
    def ddev_config(self) -> Path:
        return self.ddev / "config.yaml"


def is_ddev_project(approot: Path) -> bool:
    """True when the bed is a DDEV project: it has a ``.ddev/config.yaml``."""
    return BedLayout(approot).ddev_config.is_file()
