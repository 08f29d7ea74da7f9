"""The shape shared by commands that act on a bed and a fixture set."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ai_proving_ground.baselines.store import provisioned_sets
from ai_proving_ground.cli.common import ArgumentParser, add_approot, resolve_bed, run
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixtures import requested_names
from ai_proving_ground.settings import Settings, resolve_approot
from ai_proving_ground.sites.base import SiteDriver, driver_for


def fixture_parser(prog: str, doc: str | None) -> ArgumentParser:
    parser = ArgumentParser(prog=prog, description=doc,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    parser.add_argument("fixtures", nargs="*",
                        help="fixture names (default: $AI_PG_FIXTURES, else the set the bed "
                        "was provisioned with, else kb_docs canvas_home)")
    return parser


SET_AMBIGUOUS = "APG_FIXTURE_SET_AMBIGUOUS"


@dataclass(frozen=True)
class BedAndSet:
    """What a fixture command acts on, resolved from its arguments and the environment."""

    approot: Path
    names: list[str]
    settings: Settings

    @property
    def driver(self) -> SiteDriver:
        return driver_for(self.approot, self.settings)


def bed_and_set(args: argparse.Namespace, site_required: bool = True,
                provisioned_default: bool = True) -> BedAndSet:
    """``site_required=False`` for the commands that only read fixtures (hash, manifest-union):
    the app root then only says where AI_PG_FIXTURE_PATH and the bed's recipes/ are.
    ``provisioned_default=False`` for escrow and verify, which keep the fixed default: which
    escrowed set is checked must not rest on the baseline records, files an agent may reach."""
    settings = Settings.from_environ()
    approot = (resolve_bed if site_required else resolve_approot)(args.approot, settings)
    if args.fixtures or settings.fixtures or not (site_required and provisioned_default):
        return BedAndSet(approot, requested_names(args.fixtures, settings), settings)
    return BedAndSet(approot, provisioned_names(approot, settings), settings)


def provisioned_names(approot: Path, settings: Settings) -> list[str]:
    """The set the bed was provisioned with when it has one baseline; the shipped default when
    it has none (a bed not yet provisioned); refused when several could be meant."""
    sets = provisioned_sets(approot, settings)
    if len(sets) > 1:
        named = "; ".join(" ".join(names) for names in sets)
        raise ApgError(SET_AMBIGUOUS, f"the bed at {approot} has baselines of {len(sets)} fixture "
                       f"sets ({named}): name the fixtures to act on (e.g. "
                       f"{' '.join(sets[0])}) or set AI_PG_FIXTURES", exit_code=2)
    return list(sets[0]) if sets else requested_names([], settings)


Outcome = TypeVar("Outcome")


def run_set_action(prog: str, doc: str | None, argv: Sequence[str] | None, json_help: str,
                   action: Callable[[Path, list[str], SiteDriver, Settings], Outcome],
                   exit_code: Callable[[Outcome], int]) -> int:
    """The whole of a command that changes a bed for a fixture set (provision, reset): parse,
    act, print the outcome dataclass as JSON with ``--json``, exit as ``exit_code`` decides."""
    parser = fixture_parser(prog, doc)
    parser.add_argument("--json", action="store_true", help=json_help)
    args = parser.parse_args(argv)

    def act() -> int:
        target = bed_and_set(args)
        outcome = action(target.approot, target.names, target.driver, target.settings)
        if args.json:
            record: Any = outcome  # a dataclass instance: both actions return one
            print(json.dumps(dataclasses.asdict(record), indent=2))
        return exit_code(outcome)

    return run(act)
