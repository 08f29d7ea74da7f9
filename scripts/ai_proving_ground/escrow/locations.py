"""Where trusted state lives: the escrow root, the project name and the baseline directory.

The one owner of the baseline directory's location (``baselines.store.baseline_dir`` asks here).
An embedded bed keeps it in the bed (``.ai-proving-ground``), where only the adapter's sandbox
guards it. A DDEV bed cannot: its web container can write the whole project (drush, PHP), so a
DDEV bed's baselines and records live outside the project and outside every container mount,
by default ``~/.ai-proving-ground-beds/<folder>-<hash of the bed's real path>`` (named by the
path, which no attempt can change, never by ``.ddev/config.yaml``, which an attempt can), and a
configured one inside the project or a bind source is refused (``APG_BASELINE_DIR_UNSAFE``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground import yamlio
from ai_proving_ground.errors import ApgError
from ai_proving_ground.escrow import UNSAFE
from ai_proving_ground.escrow.mounts import bind_sources
from ai_proving_ground.fsutil import is_within, safe_name
from ai_proving_ground.layout import BedLayout, ddev_records_dir, is_ddev_project
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings

DEFAULT_ROOT = "~/.ai-proving-ground-escrow"


# Inside a DDEV web container the project is mounted here; escrow runs on the host.
CONTAINER_APPROOT = "/var/www/html"


DEFAULT_BASELINE = ".ai-proving-ground"
UNSAFE_BASELINE = "APG_BASELINE_DIR_UNSAFE"


def escrow_root(settings: Settings = DEFAULT_SETTINGS) -> Path:
    """``$AI_PG_ESCROW_DIR``, else ``~/.ai-proving-ground-escrow``, as an absolute path."""
    raw = settings.escrow_dir or DEFAULT_ROOT
    return Path(raw).expanduser().absolute()


def ddev_project_name(approot: Path, strict: bool = False) -> str:
    """``name:`` in .ddev/config.yaml, else ``""`` (no DDEV project, no name, or a file that
    cannot be read; ``strict``: that refuses, APG_ESCROW_CONFIG_INVALID). The one reader of the
    name: escrow's project folder and the run's ``APG_DDEV_PROJECT`` come from here."""
    if not is_ddev_project(approot):
        return ""
    try:
        data: Any = yamlio.load_yaml(BedLayout(approot).ddev_config, token="APG_ESCROW_CONFIG_INVALID")
    except (ApgError, OSError, UnicodeDecodeError):
        if strict:
            raise
        return ""
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else ""


def project_name(approot: Path) -> str:
    """The DDEV project name (``name:`` in .ddev/config.yaml), else the app root's folder name."""
    name = ddev_project_name(approot, strict=True) or approot.resolve().name
    return safe_name(name, "project name")


@dataclass(frozen=True)
class BaselineLocation:
    """The baseline directory as configured, relative to the bed when inside it, and absolute."""

    configured: str | None
    relative: str | None
    directory: Path

    @property
    def label(self) -> str:
        return f"{self.relative}/" if self.relative else f"{self.directory}/"


def _plain_relative(raw: str) -> str | None:
    parts = [p for p in raw.replace("\\", "/").split("/") if p not in {"", "."}]
    if not parts or ".." in parts or raw.startswith("/"):
        return None
    return "/".join(parts)


def baseline_location(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> BaselineLocation:
    """``$AI_PG_BASELINE_DIR`` (relative: to the bed; a container path under /var/www/html names
    the host project; ``..`` refused), else the bed's default (see the module doc)."""
    bed = approot.resolve()
    ddev = _is_ddev_bed(approot, settings)
    raw = settings.baseline_dir
    if not raw and ddev:
        location = BaselineLocation(None, None, ddev_default_dir(approot))
    else:
        location = _configured(bed, approot, raw)
    if ddev:
        _refuse_reachable(location, approot)
    return location


def ddev_default_dir(approot: Path) -> Path:
    """``~/.ai-proving-ground-beds/<folder>-<12 hex of sha256(real path)>``
    (``layout.ddev_records_dir``, where a DDEV bed's driver record lives too)."""
    return ddev_records_dir(approot)


def _is_ddev_bed(approot: Path, settings: Settings) -> bool:
    # sites.base is the one place that says which driver a bed uses; imported here, not at the
    # top, because sites.base imports the site drivers' registry that start-up does not need.
    from ai_proving_ground.sites.base import driver_name_for

    return driver_name_for(approot, settings) == "ddev"


def _configured(bed: Path, approot: Path, raw: str | None) -> BaselineLocation:
    text = raw or DEFAULT_BASELINE
    if text.startswith(CONTAINER_APPROOT + "/"):
        text = text[len(CONTAINER_APPROOT) + 1:]
    elif text.startswith("~"):
        text = str(Path(text).expanduser())
    if not os.path.isabs(text):
        relative = _plain_relative(text)
        if relative is None:
            raise ApgError(UNSAFE, f"AI_PG_BASELINE_DIR={raw!r} does not name a folder inside the "
                           f"bed {bed}; use a plain relative path or an absolute one")
        return BaselineLocation(raw, relative, bed / relative)
    absolute = Path(os.path.normpath(text))
    for root in {bed, approot.absolute()}:
        if root in absolute.parents:
            relative = absolute.relative_to(root).as_posix()
            return BaselineLocation(raw, relative, bed / relative)
    return BaselineLocation(raw, None, absolute)


def _refuse_reachable(location: BaselineLocation, approot: Path) -> None:
    """A DDEV bed's baseline directory inside the project or a bind source is refused."""
    fix = ("unset AI_PG_BASELINE_DIR (the default lies outside the project) or set it to a "
           "directory outside the project and outside every container mount")
    target = Path(os.path.realpath(location.directory))
    if location.relative is not None or is_within(target, approot.resolve()):
        raise ApgError(UNSAFE_BASELINE, f"the baseline directory {location.directory} is inside "
                       f"the DDEV project {approot}, which its web container can write (drush, "
                       f"PHP): an attempt could replace what reset restores; {fix}", exit_code=2)
    # Not strict: a compose file DDEV cannot read keeps the project from starting, and every
    # command (run's preflight too) must still say what is wrong; escrow refuses it (strict).
    for source, where in bind_sources(approot, strict=False):
        if is_within(target, source) or is_within(source, target):
            raise ApgError(UNSAFE_BASELINE, f"the baseline directory {target} lies under the bind "
                           f"source {source} ({where}), which a container can write; {fix}",
                           exit_code=2)
