"""The bed's layout: where a bed keeps things, relative to its app root, whatever its driver.

A bed is a directory under git: ``config/sync/``, ``web/modules/custom/`` and ``recipes/`` are
tracked, public files sit under ``web/sites/default/files/`` and private ones under ``private/``.
Reset makes the whole bed equal to its baseline except :data:`KEEP_LIST`, declared here once.
A bed is a DDEV project (`is_ddev_project`, the one test every module uses) when its record says
so (``.ai-proving-ground/bed.json``, written when the bed is made or provisioned); a bed with no
record is one when it has a ``.ddev/config.yaml``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

# Paths git tracks in a bed: provision's tag holds them (escrow bundles it, model.diff reads it).
TRACKED_PATHS = ("config/sync", "web/modules/custom", "recipes")
DDEV_DIR = ".ddev"
# The bed's own records (baselines, runs, bed.json) when AI_PG_BASELINE_DIR does not move them.
RECORDS_DIR = ".ai-proving-ground"
BED_RECORD = "bed.json"
# A DDEV bed's records (its baselines, runs and bed.json) lie in a folder of this one in the
# operator's HOME: its web container can write the whole project.
DDEV_BASELINES_ROOT = "~/.ai-proving-ground-beds"


@dataclass(frozen=True)
class Kept:
    """A path reset leaves as it finds it (``*`` matches one path segment), and why."""

    pattern: str
    why: str
    driver: str | None = None  # kept only in a bed of this driver


# What reset never makes equal to the baseline; everything else in the bed it does (.git,
# ignored files and new top-level folders included). Each entry says why it is kept.
KEEP_LIST = (
    Kept("vendor", "composer's dependencies: code, not state; too large to copy into every "
         "baseline, and a change there is reported by the versions check (APG_RESET_CODE_DRIFT)"),
    Kept("web/core", "Drupal core, installed by composer: as vendor/"),
    Kept("web/modules/contrib", "contributed modules, installed by composer: as vendor/"),
    Kept("web/themes/contrib", "contributed themes, installed by composer: as vendor/"),
    Kept("web/profiles/contrib", "contributed profiles, installed by composer: as vendor/"),
    Kept("web/libraries", "front-end libraries, installed by composer: as vendor/"),
    Kept("web/sites/*/settings.local.php", "this machine's settings (database credentials, "
         "debug switches): never part of a baseline, never restored"),
    Kept(RECORDS_DIR, "the bed's records: baselines (what reset restores from) and runs; reset "
         "reads them and never rewrites them"),
    Kept("db", "the embedded site's database: restored by its own restore, which also makes db/ "
         "a real folder holding the database alone", driver="sqlite"),
    Kept(DDEV_DIR, "DDEV's own state (its config, generated compose files, snapshots), which "
         "DDEV rewrites on every start; a DDEV site's database lives in its container",
         driver="ddev"),
)
# Added at run time: the public files folder (restored from its own archive) and the baseline
# directory when AI_PG_BASELINE_DIR puts it elsewhere inside the bed (see :func:`keep_patterns`).


class KeepMatcher:
    """The keep-list of one bed, compiled: :meth:`keeps` answers for one bed-relative path."""

    def __init__(self, approot: Path, driver: str, *inside: Path) -> None:
        """``driver``'s entries of :data:`KEEP_LIST`, plus ``inside``: more folders reset keeps
        (public files, the baseline directory), each only where it lies in the bed."""
        patterns = [k.pattern for k in KEEP_LIST if k.driver in (None, driver)]
        # A path may be given under the bed's real path (the baseline directory is) or as written.
        roots = (approot, Path(os.path.realpath(approot)))
        for path in inside:
            root = next((r for r in roots if r in path.parents), None)
            if root is not None:
                patterns.append(path.relative_to(root).as_posix())
        self.patterns = tuple(PurePosixPath(p).parts for p in patterns)
        # Most paths (all of .git, say) share no first segment with any pattern: one set lookup,
        # when every first segment is a plain name.
        firsts = {p[0] for p in self.patterns}
        self._firsts = None if any(c in f for f in firsts for c in "*?[") else firsts

    def keeps(self, relative: str) -> bool:
        """True when ``relative`` (POSIX, no leading slash) is a kept path or lies under one."""
        parts = relative.split("/")
        if self._firsts is not None and parts[0] not in self._firsts:
            return False
        return any(len(parts) >= len(p) and all(fnmatchcase(a, b) for a, b in zip(parts, p, strict=False))
                   for p in self.patterns)


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


    @property
    def bed_record(self) -> Path:
        """``bed.json``: the driver the bed was made with. At a fixed place (not under
        AI_PG_BASELINE_DIR): every command reads it before it knows the bed's settings."""
        return self.approot / RECORDS_DIR / BED_RECORD


def ddev_records_dir(approot: Path) -> Path:
    """``~/.ai-proving-ground-beds/<folder>-<12 hex of sha256(real path)>``: named by the bed's
    real path, which no attempt can change, never by ``.ddev/config.yaml``, which one can."""
    real = os.path.realpath(approot)
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:12]
    # The folder name only helps a person find the directory; the digest is what tells beds apart.
    folder = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(real)).lstrip(".") or "bed"
    return Path(DDEV_BASELINES_ROOT).expanduser().absolute() / f"{folder}-{digest}"


def read_driver(record: Path) -> str | None:
    """The driver a ``bed.json`` at ``record`` names; None when there is none. A record that is
    a symlink or unreadable counts as none. Read without jsonschema (baselines.store.BedRecord
    is the shape): every command asks, and the one field is checked here."""
    try:
        if not stat.S_ISREG(os.lstat(record).st_mode):
            return None
        data = json.loads(record.read_bytes())
    except (OSError, ValueError):
        return None
    driver = data.get("driver") if isinstance(data, dict) else None
    return driver if isinstance(driver, str) else None


def recorded_driver(approot: Path) -> str | None:
    """The driver the bed's own ``bed.json`` records (an embedded bed's, written by bed init and
    provision); None for an older bed or a DDEV project, whose record lies outside it."""
    return read_driver(BedLayout(approot).bed_record)


def is_ddev_project(approot: Path) -> bool:
    """True when the bed is a DDEV project: its record says so, or it has none and has a
    ``.ddev/config.yaml``. A config planted in a bed recorded as embedded changes nothing."""
    recorded = recorded_driver(approot)
    if recorded is not None:
        return recorded == "ddev"
    return BedLayout(approot).ddev_config.is_file()
