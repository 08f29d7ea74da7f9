"""How an adapter reaches its bed's site: the site command line it is handed (``$APG_SITE``)
and, when it runs confined on a DDEV bed, the site broker that command line talks to.

On the embedded site ``apg site`` reads and writes the bed's own database, inside the sandbox.
On a DDEV bed ``apg drush`` needs ``ddev`` and the Docker socket, which a confined adapter never
gets: ``apg run`` serves the bed's drush on a socket in the run directory instead
(:mod:`ai_proving_ground.sandbox.broker`) and names it in ``$APG_SITE_BROKER``. An unconfined
adapter calls ddev itself, as the operator would; as its HOME is the run's own, ``~/.ddev`` there
points at the operator's DDEV global config while it runs (projects, global settings), so its
ddev does not start blind.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ai_proving_ground.escrow.locations import ddev_project_name
from ai_proving_ground.layout import is_ddev_project
from ai_proving_ground.sandbox.broker import ENV_VARIABLE as BROKER_VARIABLE
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
    return ddev_project_name(approot)


DDEV_DIR = ".ddev"  # DDEV's global config directory under HOME


def ddev_global_dir(host: Mapping[str, str]) -> Path | None:
    """Where the operator's ddev keeps its global config: ``$XDG_CONFIG_HOME/ddev``, then
    ``~/.config/ddev``, then ``~/.ddev`` (the first that is a directory); None without one."""
    candidates = []
    if host.get("XDG_CONFIG_HOME"):
        candidates.append(Path(host["XDG_CONFIG_HOME"]) / "ddev")
    if host.get("HOME"):
        candidates += [Path(host["HOME"]) / ".config" / "ddev", Path(host["HOME"]) / DDEV_DIR]
    return next((path for path in candidates if path.is_dir()), None)


@dataclass(frozen=True)
class SiteAccess:
    """How the adapter of one run reaches its site beyond ``$APG_SITE``: the broker (confined,
    DDEV), the operator's DDEV global config linked into its HOME (unconfined, DDEV), or
    nothing more (the embedded site)."""

    broker: SiteBroker | None = None
    ddev_config: Path | None = None  # the operator's global dir, linked as <home>/.ddev
    home: Path | None = None

    def environment(self) -> dict[str, str]:
        return {BROKER_VARIABLE: self.broker.address} if self.broker is not None else {}

    def as_record(self) -> dict[str, object]:
        """For run.json's sandbox record."""
        if self.broker is not None:
            return {"site_broker": self.broker.as_record()}
        if self.ddev_config is not None:
            return {"ddev_global_config": str(self.ddev_config)}
        return {}

    @contextlib.contextmanager
    def open(self) -> Iterator[None]:
        """While the adapter runs: the broker serves, or the global config is linked."""
        if self.broker is not None:
            with self.broker.serving():
                yield
            return
        if self.ddev_config is None or self.home is None:
            yield
            return
        link = self.home / DDEV_DIR
        link.symlink_to(self.ddev_config, target_is_directory=True)
        try:
            yield
        finally:  # a run directory never keeps a way into the operator's HOME
            link.unlink(missing_ok=True)


def site_access(confinement: Confinement, ddev_bed: bool, approot: Path, run_dir: Path,
                home: Path, host: Mapping[str, str], allow: Sequence[str] = ()) -> SiteAccess:
    """A confined adapter on a DDEV bed gets the broker (its drush policy widened by ``allow``,
    AI_PG_SITE_ALLOW); an unconfined one the operator's DDEV global config in its own HOME (not
    when HOME is the operator's already, a host-shared adapter, or it holds a ``.ddev`` of its
    own)."""
    if not ddev_bed:
        return SiteAccess()
    if confinement.backend != "none":
        return SiteAccess(broker=SiteBroker(run_dir / SOCKET_NAME, approot,
                                            DdevSite(approot).drush_command, host, allow=allow))
    source = ddev_global_dir(host)
    link = home / DDEV_DIR
    if source is None or home == Path(host.get("HOME", "")) or link.is_symlink() or link.exists():
        return SiteAccess()
    return SiteAccess(ddev_config=source, home=home)
