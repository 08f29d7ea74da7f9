"""``apg site`` commands about the site itself: status, modules, caches, recipes and updates."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ai_proving_ground.cli.common import emit
from ai_proving_ground.cli.site_commands import YES, arg, command, note
from ai_proving_ground.errors import UsageError
from ai_proving_ground.report import stdout
from ai_proving_ground.sites.base import StateQuery
from ai_proving_ground.sites.embedded.driver import EmbeddedSite


@command("status", "site facts, as drush core:status", arg("--field", help="print one fact only"),
         aliases=["st", "core:status"], fmt="table")
def _status(site: EmbeddedSite, args: argparse.Namespace) -> int:
    facts = site.status()
    if args.field:
        if args.field not in facts:
            raise UsageError(f"no status field {args.field!r}; fields: {', '.join(facts)}")
        print(facts[args.field], file=stdout())
    else:
        emit(facts, args.format, args.fields)
    return 0


@command("pm:list", "modules on disk and whether they are enabled",
         arg("--status", choices=["enabled", "disabled"]),
         arg("--type", default="module", choices=["module"]), aliases=["pml"], fmt="table")
def _pm_list(site: EmbeddedSite, args: argparse.Namespace) -> int:
    rows: dict[str, Any] = {}
    for name, state in site.modules().items():
        if args.status and (args.status == "enabled") != state.enabled:
            continue
        rows[name] = {"package": state.package, "display_name": name, "name": name,
                      "type": "module", "path": state.path,
                      "status": "Enabled" if state.enabled else "Disabled",
                      "version": state.version}
    emit(rows, args.format, args.fields)
    return 0


@command("pm:install", "install modules and dependencies", arg("modules", nargs="+"), YES,
         aliases=["pmi", "en"])
def _pm_install(site: EmbeddedSite, args: argparse.Namespace) -> int:
    installed = site.install_modules(args.modules)
    note(f"Installed: {', '.join(installed)}" if installed else "Already installed.")
    return 0


@command("pm:uninstall", "uninstall modules", arg("modules", nargs="+"), YES, aliases=["pmu"])
def _pm_uninstall(site: EmbeddedSite, args: argparse.Namespace) -> int:
    removed = site.uninstall_modules(args.modules)
    note(f"Uninstalled: {', '.join(removed)}")
    return 0


@command("cr", "rebuild caches", aliases=["cache:rebuild"])
def _cr(site: EmbeddedSite, args: argparse.Namespace) -> int:
    site.rebuild_caches()
    note("Cache rebuild complete.")
    return 0


@command("recipe", "apply a recipe directory", arg("path"), aliases=["recipe:apply"])
def _recipe(site: EmbeddedSite, args: argparse.Namespace) -> int:
    report = site.apply_recipe(Path(args.path))
    note(f"{report.recipe} applied: {len(report.modules_installed)} modules installed, "
          f"{len(report.config_written)} config objects written, "
          f"{len(report.content_created)} entities created, "
          f"{len(report.content_skipped)} skipped (already present).")
    return 0


@command("updatedb:status", "list pending database updates", aliases=["updbst"], fmt="table")
def _updatedb_status(site: EmbeddedSite, args: argparse.Namespace) -> int:
    pending = site.read_state(StateQuery(pending_updates=True)).pending_updates
    if not pending:
        note("No database updates required.")
        return 0
    emit({p.update_id: {"module": p.module, "update_id": int(p.update_id.rsplit("_", 1)[-1]),
                        "description": p.description, "type": "hook_update_n"} for p in pending},
         args.format, args.fields)
    return 0


@command("updatedb", "run pending database updates", YES, aliases=["updb"])
def _updatedb(site: EmbeddedSite, args: argparse.Namespace) -> int:
    ran = site.run_updates()
    note(f"Ran {len(ran)} update(s)." if ran else "No database updates required.")
    return 0
