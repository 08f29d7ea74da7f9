"""Where an embedded bed keeps things, relative to its app root."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Paths git tracks in a bed; reset restores exactly these from the baseline tag.
TRACKED_PATHS = ("config/sync", "web/modules/custom", "recipes")


@dataclass(frozen=True)
class BedLayout:
    """The Drupal-like directory layout of one bed."""

    approot: Path

    @property
    def webroot(self) -> Path:
        return self.approot / "web"

    @property
    def database(self) -> Path:
        # Outside every tracked path and outside public files, like a Drupal database server.
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
