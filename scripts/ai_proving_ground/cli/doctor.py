"""``apg doctor [fixture...]``: a JSON verdict on whether live state matches the fixture set.

Fixtures come from the arguments, else AI_PG_FIXTURES, else ``kb_docs canvas_home``.
Exit codes: 0 healthy; 1 drift (the JSON names each subject with expected and found values);
2 usage (bad arguments, an unknown or ambiguous fixture, a malformed fragment).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from ai_proving_ground.approot import driver_name_for, resolve_approot
from ai_proving_ground.cli.common import ArgumentParser, add_approot, run
from ai_proving_ground.doctor import diagnose
from ai_proving_ground.fixtures import requested_names
from ai_proving_ground.sites.base import get_driver


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="apg doctor", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    parser.add_argument("fixtures", nargs="*", help="fixture names")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def act() -> int:
        approot = resolve_approot(args.approot)
        driver = get_driver(driver_name_for(approot), approot)
        verdict = diagnose(approot, requested_names(args.fixtures), driver)
        print(json.dumps(verdict, indent=2))
        return 0 if verdict["healthy"] else 1

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
