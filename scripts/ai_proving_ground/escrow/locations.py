"""Where escrow puts things and reads them from: the escrow root, the project name, the baseline."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground import yamlio
from ai_proving_ground.baselines.public_files import snapshot_paths
from ai_proving_ground.baselines.store import Baseline
from ai_proving_ground.errors import ApgError
from ai_proving_ground.escrow import UNSAFE
from ai_proving_ground.fsutil import safe_name
from ai_proving_ground.layout import BedLayout, is_ddev_project
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings

DEFAULT_ROOT = "~/.ai-proving-ground-escrow"


# Inside a DDEV web container the project is mounted here; escrow runs on the host.
CONTAINER_APPROOT = "/var/www/html"


DEFAULT_BASELINE = ".ai-proving-ground"


def escrow_root(settings: Settings = DEFAULT_SETTINGS) -> Path:
    """``$AI_PG_ESCROW_DIR``, else ``~/.ai-proving-ground-escrow``, as an absolute path."""
    raw = settings.escrow_dir or DEFAULT_ROOT
    return Path(raw).expanduser().absolute()


def project_name(approot: Path) -> str:
    """The DDEV project name (``name:`` in .ddev/config.yaml), else the app root's folder name."""
    name: Any = None
    if is_ddev_project(approot):
        data = yamlio.load_yaml(BedLayout(approot).ddev_config, token="APG_ESCROW_CONFIG_INVALID")
        if isinstance(data, dict):
            name = data.get("name")
    if not isinstance(name, str) or not name:
        name = approot.resolve().name
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
    """Like ``baseline_dir``, and a container path under /var/www/html names the host project."""
    bed = approot.resolve()
    raw = settings.baseline_dir
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


def baseline_names(set_key: str) -> list[str]:
    """Every baseline file of a set, the dump first."""
    baseline = Baseline(Path("."), set_key)
    snapshot = snapshot_paths(Path("."), set_key)
    return [p.name for p in (baseline.dump, snapshot.archive, snapshot.sidecar, snapshot.listing,
                             baseline.grader_sha256, baseline.grader_files, baseline.versions,
                             baseline.metadata)]
