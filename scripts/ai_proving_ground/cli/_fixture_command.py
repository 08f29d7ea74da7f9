"""The shape shared by commands that act on a bed and a fixture set."""

from __future__ import annotations

import argparse
from pathlib import Path

from ai_proving_ground.approot import driver_name_for, resolve_approot
from ai_proving_ground.cli.common import ArgumentParser, add_approot
from ai_proving_ground.fixtures import requested_names
from ai_proving_ground.sites.base import SiteDriver, get_driver


def fixture_parser(prog: str, doc: str | None) -> ArgumentParser:
    parser = ArgumentParser(prog=prog, description=doc,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    parser.add_argument("fixtures", nargs="*",
                        help="fixture names (default: $AI_PG_FIXTURES, else kb_docs canvas_home)")
    return parser


def bed_and_set(args: argparse.Namespace) -> tuple[Path, list[str], SiteDriver]:
    approot = resolve_approot(args.approot)
    return approot, requested_names(args.fixtures), get_driver(driver_name_for(approot), approot)
