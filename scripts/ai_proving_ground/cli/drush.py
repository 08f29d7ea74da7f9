"""``apg drush [--approot DIR] ARGS...``: drush on a DDEV bed, through the ddev site driver.

The site command line adapters get as ``$APG_SITE`` on a DDEV bed (the embedded site's is
``apg site``): the arguments reach ``drush`` inside the web container unchanged (``ddev exec``),
its output is printed as it came and its exit code is this command's. Inside a confined adapter's
sandbox, where there is no ddev and no Docker socket, ``$APG_SITE_BROKER`` names the site broker
``apg run`` serves for the bed (:mod:`ai_proving_ground.sandbox.broker`): the command line goes
there instead, and the broker runs it through the same driver for that bed alone.
One command is apg's, not drush's: ``entity:update TYPE ID_OR_UUID --values MAPPING``, as
``apg site`` has it (drush cannot change field values), run inside Drupal by the driver's probe.
Exit codes: drush's own; 2 usage (no arguments, or the bed is not a DDEV project: APG_USAGE).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.cli.common import ArgumentParser, add_approot, run
from ai_proving_ground.errors import UsageError
from ai_proving_ground.sandbox.broker import ENV_VARIABLE as BROKER_VARIABLE
from ai_proving_ground.sandbox.broker import ask, split_approot
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
    if args[:1] in (["-h"], ["--help"]):
        _help_parser().print_help(sys.stdout)
        return 0
    if not args:
        _help_parser().print_usage(sys.stderr)
        print("APG_USAGE apg drush needs a drush command, e.g. apg drush status", file=sys.stderr)
        return 2
    approot_arg, args = split_approot(args)
    broker = os.environ.get(BROKER_VARIABLE)

    def act() -> int:
        settings = Settings.from_environ()
        approot = resolve_approot(approot_arg, settings)
        if not broker and driver_name_for(approot, settings) != "ddev":
            raise UsageError(
                f"{approot} is not a DDEV project (no .ddev/config.yaml); "
                "the embedded site's command line is apg site"
            )
        if not args:
            raise UsageError("apg drush needs a drush command, e.g. apg drush status")
        if broker:  # confined: the broker apg run serves for this bed runs it
            reply = ask(Path(broker), ["--approot", str(approot), *args])
            code, out, err = reply.exit_code, reply.stdout, reply.stderr
        else:
            done = DdevSite(approot).drush(args)
            code, out, err = done.returncode, done.stdout, done.stderr
        sys.stdout.write(out)
        sys.stderr.write(err)
        return code

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
