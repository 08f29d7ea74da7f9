"""``apg drush [--approot DIR] ARGS...``: drush on a DDEV bed, through the ddev site driver.

The site command line adapters get as ``$APG_SITE`` on a DDEV bed (the embedded site's is
``apg site``): the arguments reach ``drush`` inside the web container unchanged (``ddev exec``),
its output is printed as it came and its exit code is this command's.
Exit codes: drush's own; 2 usage (no arguments, or the bed is not a DDEV project: APG_USAGE).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ai_proving_ground.cli.common import ArgumentParser, add_approot, run
from ai_proving_ground.errors import UsageError
from ai_proving_ground.settings import Settings, resolve_approot
from ai_proving_ground.sites.base import driver_name_for
from ai_proving_ground.sites.ddev import DdevSite


def _help_parser() -> argparse.ArgumentParser:
    # For --help only: drush's own options must pass through untouched, so argparse never
    # parses a real command line here.
    parser = ArgumentParser(prog="apg drush", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    parser.add_argument("args", nargs="*", metavar="ARGS", help="a drush command line")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] in (["-h"], ["--help"]) or not args:
        _help_parser().print_help(sys.stdout if args else sys.stderr)
        return 0 if args else 2
    approot_arg = None
    if args[0] == "--approot" and len(args) > 1:
        approot_arg, args = args[1], args[2:]
    elif args[0].startswith("--approot="):
        approot_arg, args = args[0].split("=", 1)[1], args[1:]

    def act() -> int:
        settings = Settings.from_environ()
        approot = resolve_approot(approot_arg, settings)
        if driver_name_for(approot, settings) != "ddev":
            raise UsageError(
                f"{approot} is not a DDEV project (no .ddev/config.yaml); "
                "the embedded site's command line is apg site"
            )
        if not args:
            raise UsageError("apg drush needs a drush command, e.g. apg drush status")
        done = DdevSite(approot).drush(args)
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        return done.returncode

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
