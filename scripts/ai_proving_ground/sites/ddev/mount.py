"""Host <-> container paths: DDEV mounts the project (the app root) at ``/var/www/html``.

Only what lies under the project exists in the web container, so every path the driver
hands to drush is mapped here, and every path drush reports is mapped back.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import is_within

CONTAINER_ROOT = "/var/www/html"
"""Where DDEV mounts the project (the app root) inside the web container."""

STAGE_DIR = ".ai-proving-ground"
"""Driver scratch space inside the project, visible to the container through the mount."""


class Mount:
    """The project mount of one DDEV project whose host root is ``approot``."""

    def __init__(self, approot: Path) -> None:
        self.approot = approot

    def inside(self, path: Path, what: str) -> Path:
        """``path`` resolved, refused unless it lies inside the project."""
        resolved = path.resolve()
        if not is_within(resolved, self.approot.resolve()):
            raise ApgError(
                "APG_PATH_UNSAFE",
                f"{what} {path} is outside the project {self.approot}; DDEV only mounts the "
                f"project (at {CONTAINER_ROOT}), so move it under the project, e.g. recipes/",
            )
        return resolved

    def container_path(self, host_path: Path) -> str:
        """Where the container sees ``host_path`` (which must be inside the project)."""
        relative = self.inside(host_path, "path").relative_to(self.approot.resolve())
        return posixpath.join(CONTAINER_ROOT, relative.as_posix()).rstrip("/")

    def host_path(self, container_path: str, what: str) -> Path:
        """Where the host sees ``container_path``; refused outside the project mount."""
        normal = posixpath.normpath(container_path)
        if normal == CONTAINER_ROOT:
            return self.approot
        if not normal.startswith(CONTAINER_ROOT + "/"):
            raise ApgError(
                "APG_DDEV_PATH_UNMAPPED",
                f"{what} is {container_path} in the container, outside the project mount "
                f"{CONTAINER_ROOT}, so it has no host path; move it under the project",
            )
        return self.approot.joinpath(*normal[len(CONTAINER_ROOT) + 1 :].split("/"))

    def stage_path(self, *parts: str) -> Path:
        """A path in the driver's scratch space in the project; its parent exists."""
        path = self.approot.joinpath(STAGE_DIR, *parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path


def under_root(status: dict[str, Any], path: str) -> str:
    """A ``core:status`` path made absolute: relative ones are relative to the Drupal root."""
    root = status.get("root")
    base = root if isinstance(root, str) and root else CONTAINER_ROOT
    return posixpath.join(base, path)
