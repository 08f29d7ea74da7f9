"""Container mounts: the bind sources of a DDEV project, and the refusal to escrow under one.

An escrow inside the project, or under a directory a container can write, is no escrow: an
attempt could rewrite it. Sources are read from ``.ddev/docker-compose.*.yaml``; a source escrow
cannot resolve refuses (fail closed).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ai_proving_ground import yamlio
from ai_proving_ground.ddev_compose import looks_like_path, mounts
from ai_proving_ground.errors import ApgError
from ai_proving_ground.escrow import UNSAFE
from ai_proving_ground.fsutil import is_within
from ai_proving_ground.layout import BedLayout


def _substitute(source: str, variable: str, value: Path) -> str | None:
    match = re.match(r"^(\$" + variable + r"|\$\{" + variable + r"(:?[-?][^}]*)?\})(?=/|$)", source)
    return str(value) + source[match.end():] if match else None


def resolve_source(source: str, approot: Path, where: str) -> Path:
    """A bind source as the host sees it; an unresolved ``$`` substitution refuses (fail closed)."""
    text = source
    for variable, value in (("HOME", Path.home()), ("DDEV_APPROOT", approot)):
        substituted = _substitute(text, variable, value)
        if substituted is not None:
            text = substituted
            break
    if text == "~" or text.startswith("~/"):
        text = str(Path.home()) + text[1:]
    if "$" in text or text.startswith("~"):
        raise ApgError(UNSAFE, f"{where}: bind source {source!r} holds a substitution escrow cannot "
                       "resolve; refusing (fail closed). Write the path out, or choose an escrow "
                       "directory after inspecting the effective mounts yourself")
    path = Path(text)
    if not path.is_absolute():
        path = BedLayout(approot).ddev / path
    return Path(os.path.normpath(path)).resolve()


def bind_sources(approot: Path, strict: bool = True) -> list[tuple[Path, str]]:
    """(host path, where) for every recognised bind source in .ddev/docker-compose.*.yaml; an
    unreadable file refuses, or with ``strict=False`` is skipped (DDEV cannot start with it)."""
    ddev = BedLayout(approot).ddev
    files = sorted({*ddev.glob("docker-compose.*.yaml"), *ddev.glob("docker-compose.*.yml")})
    found: list[tuple[Path, str]] = []
    for compose in files:
        try:
            data = yamlio.loads(compose.read_text(encoding="utf-8"))
        except (ApgError, OSError, UnicodeDecodeError) as exc:
            if not strict:
                continue
            raise ApgError(UNSAFE, f"{compose} cannot be read ({exc}); refusing (fail closed): "
                           "escrow cannot tell what it mounts") from None
        if not isinstance(data, dict):
            continue
        for mount in mounts(data):
            if mount.service_volume and not looks_like_path(mount.source):
                continue  # a named volume: docker's, not a host directory
            name = mount.at[1]
            where = (f"{compose} services.{name}.volumes[{mount.at[3]}]" if mount.service_volume
                     else f"{compose} volumes.{name}.driver_opts.device")
            found.append((resolve_source(mount.source, approot, where), where))
    return found


def check_destination(set_dir: Path, approot: Path) -> None:
    """Refuse a set directory inside the project or overlapping a recognised bind source."""
    target = set_dir.resolve()
    for shown, inside in ((target, approot.resolve()), (set_dir.absolute(), approot.absolute())):
        if is_within(shown, inside):
            raise ApgError(UNSAFE, f"escrow directory {set_dir} resolves to {shown}, inside the project "
                           f"{inside}, where an attempt can rewrite it; set AI_PG_ESCROW_DIR to a "
                           "directory outside the project and outside every container mount")
    for source, where in bind_sources(approot):
        if is_within(target, source) or is_within(source, target):
            raise ApgError(UNSAFE, f"escrow directory {target} lies under the bind source {source} "
                           f"({where}), which a container can write; set AI_PG_ESCROW_DIR to a "
                           "directory outside every container mount")
