"""``apg fixture-export NAME``: capture a fixture from a live source site.

The fixture directory is looked up relative to the project being exported into (--approot):
AI_PG_FIXTURE_PATH entries, <approot>/recipes/, then the shipped fixtures/. --into DIR names the
fixture directory (fixture_NAME) explicitly instead. Config and content are read from the
site at --source (default: the app root). A name that resolves to no fixture gets a scaffold
(in the first AI_PG_FIXTURE_PATH entry, else <approot>/recipes/, or at --into): edit its
owns and export keys, then run the export again.

stdout: a JSON summary (fixture, directory, scaffolded, config, content, changed, removed).

Exit codes: 0 exported, scaffolded, or (--check) up to date; 1 refused or failed, with a token
on stderr and no file changed (APG_EXPORT_CONFIG_MISSING, APG_EXPORT_NAMESPACE,
APG_EXPORT_NOT_OWNED, APG_EXPORT_TARGET_INVALID, APG_FRAGMENT_INVALID, APG_EXPORT_STALE with
--check, ...); 2 bad arguments or lookup (APG_USAGE, APG_FIXTURE_INVALID, APG_APPROOT_MISSING,
APG_SITE_NOT_INSTALLED: no site at the source,
APG_FIXTURE_AMBIGUOUS, and APG_FIXTURE_NOT_FOUND with --check), as fixture lookup exits
everywhere. APG_EXPORT_PREFIX_EMPTY on stderr is a warning: a prefix matched nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.cli.common import ArgumentParser, add_approot, run
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixture_export import export_fixture
from ai_proving_ground.settings import Settings, resolve_approot


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="apg fixture-export", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", help="the fixture name, without fixture_")
    add_approot(parser)
    parser.add_argument("--source", help="the live source site's app root (default: --approot)")
    parser.add_argument("--into", help="the fixture directory to export into, instead of lookup")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 (APG_EXPORT_STALE) if the export would "
                             "change any file")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def act() -> int:
        settings = Settings.from_environ()
        approot = resolve_approot(args.approot, settings)
        source = (resolve_approot(args.source, settings) if args.source else None)
        into = Path(args.into).absolute() if args.into else None
        result = export_fixture(args.name, approot, source=source, into=into, check=args.check,
                                settings=settings)
        for note in result.notes:
            print(note, file=sys.stderr)
        print(json.dumps(result.summary(), indent=2))
        if args.check and not result.up_to_date:
            raise ApgError("APG_EXPORT_STALE", f"fixture {args.name} in {result.directory} "
                           "differs from the source site: "
                           + ", ".join([*result.changed, *(f"{r} (stale)" for r in result.removed)])
                           + f"; run `apg fixture-export {args.name}` without --check")
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
