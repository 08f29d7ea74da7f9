"""How an adapter reaches its bed's site: the site command line it is handed (``$APG_SITE``)
and, when it runs confined on a DDEV bed, the site broker that command line talks to.

On the embedded site ``apg site`` reads and writes the bed's own database, inside the sandbox.
On a DDEV bed ``apg drush`` needs ``ddev`` and the Docker socket, which a confined adapter never
gets: ``apg run`` serves the bed's drush on a socket in the run directory instead
(:mod:`ai_proving_ground.sandbox.broker`) and names it in ``$APG_SITE_BROKER``. An unconfined
adapter calls ddev itself, as the operator would.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

import yaml

from ai_proving_ground.layout import BedLayout, is_ddev_project
from ai_proving_ground.sandbox.broker import SOCKET_NAME, SiteBroker
from ai_proving_ground.sandbox.confine import Confinement
from ai_proving_ground.sites.ddev import DdevSite


def apg_command() -> list[str]:
    """This interpreter's own ``apg``, not PATH's."""
    script = Path(sys.executable).parent / "apg"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "ai_proving_ground.cli.main"]


def site_command(approot: Path) -> list[str]:
    """The bed's site command line: ``apg drush`` on a DDEV project, else ``apg site``.
    The bed decides, so no caller can hand a DDEV bed the embedded site."""
    return [*apg_command(), "drush" if is_ddev_project(approot) else "site"]


def ddev_project(approot: Path) -> str:
    """The ``name:`` in .ddev/config.yaml, else empty (the embedded site has no DDEV project)."""
    try:
        data = yaml.safe_load(BedLayout(approot).ddev_config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return ""
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else ""


def site_broker(confinement: Confinement, ddev_bed: bool, approot: Path, run_dir: Path,
                host: Mapping[str, str]) -> SiteBroker | None:
    """The broker a confined adapter on a DDEV bed reaches its site through; None when the
    adapter runs unconfined (it runs ddev itself) or the bed is the embedded site."""
    if confinement.backend == "none" or not ddev_bed:
        return None
    return SiteBroker(run_dir / SOCKET_NAME, approot, DdevSite(approot).drush_command, host)
