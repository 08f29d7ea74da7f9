"""Menus through the DDEV driver, against the stub: the kb_menus fixture exports as shipped right
after provision, a menu reads back as the embedded site reads it (links resolved alike), and
ng04's menu mutants written through the probe are killed."""

from __future__ import annotations

import json
from pathlib import Path

from ddev_stub import Cli, Stub

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.bed import init_bed
from ai_proving_ground.cli import fixture_export as export_cli
from ai_proving_ground.cli import provision as provision_cli
from ai_proving_ground.cli import task as task_cli
from ai_proving_ground.sites.base import StateQuery
from ai_proving_ground.sites.ddev.driver import DdevSite
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

FIXTURES = ("kb_notices", "kb_menus")


def test_kb_menus_exports_clean_right_after_provision(bed: Path, stub: Stub, cli: Cli) -> None:
    rc, _out, err = cli(provision_cli.main, "--approot", str(bed), *FIXTURES)
    assert rc == 0, err
    rc, out, err = cli(export_cli.main, "--approot", str(bed), "kb_menus", "--check")
    assert rc == 0, out + err
    summary = json.loads(out)
    assert (summary["changed"], summary["removed"]) == ([], [])
    assert len(summary["content"]) == 4


def test_a_menu_reads_as_on_the_embedded_site(bed: Path, stub: Stub, cli: Cli,
                                              tmp_path: Path) -> None:
    rc, _out, err = cli(provision_cli.main, "--approot", str(bed), *FIXTURES)
    assert rc == 0, err
    embedded = tmp_path / "embedded"
    init_bed(embedded)
    provision(embedded, list(FIXTURES), EmbeddedSite(embedded))
    query = StateQuery(menus=("support", "help"))
    via_ddev = DdevSite(bed).read_state(query).menus
    assert via_ddev == EmbeddedSite(embedded).read_state(query).menus
    support = via_ddev["support"]
    assert support is not None and support.label == "Support"
    assert [link.target for link in support.links] == [
        "https://status.example.com", "view:notices/page_1", "https://example.com/contact",
        "https://forum.example.com"]
    assert [link.enabled for link in support.links] == [True, True, True, False]
    assert via_ddev["help"] is None



def test_menu_mutants_die_through_the_ddev_driver(bed: Path, stub: Stub, cli: Cli) -> None:
    """A re-parented link (a parent set where none was, or emptied) and a link saved in another
    menu reach the site as the probe's entity writes, and the menu checks kill each."""
    rc, _out, err = cli(provision_cli.main, "--approot", str(bed), *FIXTURES)
    assert rc == 0, err
    rc, out, err = cli(task_cli.main, "mutate", "ng04_help_menu", "--ddev-bed", str(bed),
                       "--operator", "menu.reparented", "--operator", "menu.other_menu", "--json")
    assert rc == 0, err
    data = json.loads(out)
    assert data["bed"] == "ddev" and data["score"] == 1.0
    assert {m["name"].partition("[")[0]: m["status"] for m in data["mutants"]} == {
        "menu.reparented": "killed", "menu.other_menu": "killed"}
    assert len(data["mutants"]) == 6
