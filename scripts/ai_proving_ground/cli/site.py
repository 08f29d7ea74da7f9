"""``apg site``: a drush-shaped command line for the embedded site, for people and agents.

Exit codes: 0 success; 1 the site refused or the command failed (a token on stderr says why);
2 bad arguments (APG_USAGE) or no site where --approot points (APG_SITE_NOT_INSTALLED).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

# Imported for their @command registrations, in --help order: each holds one concern's handlers.
from ai_proving_ground.cli import site_system, site_config, site_content  # noqa: F401  # isort: skip
from ai_proving_ground.cli.common import ArgumentParser, run
from ai_proving_ground.cli.site_commands import COMMANDS, Command, named_command
from ai_proving_ground.cli.site_commands import build_parser as build_command_parser
from ai_proving_ground.settings import Settings, resolve_approot
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.sites.embedded.store import database_errors

__all__ = ["COMMANDS", "build_parser", "main", "named_command"]


def build_parser(only: Command | None = None) -> ArgumentParser:
    """The whole ``apg site`` parser, or one whose sole subcommand is ``only``."""
    return build_command_parser(only, description=__doc__)


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(named_command(arguments)).parse_args(arguments)

    def act() -> int:
        site = EmbeddedSite(resolve_approot(args.approot, Settings.from_environ()))
        with database_errors(site.layout.database):  # read-only or locked: a token
            return COMMANDS[args.command].handler(site, args)

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
