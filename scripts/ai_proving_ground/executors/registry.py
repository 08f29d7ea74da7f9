"""The executors by name: each a module whose ``open_executor(context, jobs)`` gives an
:class:`executors.base.Executor` and whose ``prepare_jobs`` and ``BEDS_ON_NODES`` say where
its beds are made (a module without them: the local executor's, on the driver), and whose
``collect_bed_facts``, if any, reads the beds' provenance where they are; the module is
imported only when its name is looked up (a distributed engine is an optional extra the local
executor never needs)."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any, cast

from ai_proving_ground.campaigns import beds
from ai_proving_ground.campaigns.attempt import Context
from ai_proving_ground.campaigns.spec import Campaign
from ai_proving_ground.errors import ApgError
from ai_proving_ground.executors.base import Executor
from ai_proving_ground.settings import Settings

DEFAULT = "local"
EXECUTORS: dict[str, str] = {
    "local": "ai_proving_ground.executors.local",
    "ray": "ai_proving_ground.executors.ray_executor",  # the ray extra
}
# The executors that join a cluster at an address (``--address``); the others take none.
ADDRESSED = frozenset({"ray"})
# What an executor's optional extra provides (name -> the module it needs, the extra's name).
REQUIRES: dict[str, tuple[str, str]] = {"ray": ("ray", "ray")}


def known() -> str:
    return ", ".join(sorted(EXECUTORS))


def check_usable(name: str, address: str | None) -> None:
    """Refuse (exit 2) an ``address`` for an executor that joins no cluster, and an executor
    whose extra is not installed; looked up without importing the extra (Ray's import alone
    takes seconds)."""
    if address is not None and name not in ADDRESSED:
        raise ApgError("APG_USAGE", f"--address is for the executors that join a cluster "
                       f"({', '.join(sorted(ADDRESSED))}), not {name!r}", exit_code=2)
    module, extra = REQUIRES.get(name, ("", ""))
    if module and importlib.util.find_spec(module) is None:
        raise ApgError("APG_CAMPAIGN_EXECUTOR_MISSING", f"the {name} executor needs the "
                       f"{module!r} package, absent here: pip install 'ai-proving-ground[{extra}]'",
                       exit_code=2)


def open_executor(name: str, context: Context, jobs: list[beds.Job],
                  address: str | None = None) -> Executor:
    """The executor called ``name`` (a key of :data:`EXECUTORS`), ready to take attempts;
    ``address`` only for one of :data:`ADDRESSED` (None: its own default)."""
    module = importlib.import_module(EXECUTORS[name])
    if address is None:
        return cast(Executor, module.open_executor(context, jobs))
    return cast(Executor, module.open_executor(context, jobs, address=address))


def beds_on_nodes(name: str) -> bool:
    """Whether the executor ``name`` makes its beds where its attempts run, not on the driver (then
    the driver resets no DDEV project and compares no bed's fingerprints: its workers do)."""
    return bool(getattr(importlib.import_module(EXECUTORS[name]), "BEDS_ON_NODES", False))


def bed_facts(name: str, campaign: Campaign, settings: Settings, address: str | None,
              count: int) -> tuple[str, dict[str, Any]] | None:
    """The baseline tag and the bed facts (provenance.bed_facts) of the campaign's beds as the
    executor ``name`` reads them where they are (its module's ``collect_bed_facts``: Ray's DDEV
    projects, on their nodes), or None: the driver reads them itself."""
    read = getattr(importlib.import_module(EXECUTORS[name]), "collect_bed_facts", None)
    if read is None:
        return None
    return cast("tuple[str, dict[str, Any]] | None", read(campaign, settings, address, count))


def reads_on_nodes(name: str, campaign: Campaign) -> bool:
    """Whether :func:`bed_facts` reads the campaign's beds elsewhere (then the driver checks
    none of them itself: their nodes do)."""
    module = importlib.import_module(EXECUTORS[name])
    return bool(campaign.spec.ddev_beds) and hasattr(module, "collect_bed_facts")


def prepare_jobs(name: str, campaign: Campaign, template: Path, tag: str, bed_root: Path,
                 escrow_root: Path, count: int, settings: Settings) -> list[beds.Job]:
    """The ``count`` jobs the executor ``name`` is opened with, their beds made (or planned) as
    that executor makes them (executors.base); beds.CannotRun when one cannot be."""
    module = importlib.import_module(EXECUTORS[name])
    prepare = getattr(module, "prepare_jobs", None) or importlib.import_module(
        EXECUTORS[DEFAULT]).prepare_jobs
    return cast(list[beds.Job], prepare(campaign, template, tag, bed_root, escrow_root, count,
                                        settings))
