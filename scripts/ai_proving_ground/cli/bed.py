"""``apg bed init DIR [FIXTURE...]``: a new embedded bed, optionally with fixtures applied.

Fixtures are looked up as the bed will see them (AI_PG_FIXTURE_PATH entries relative to DIR,
DIR/recipes/, the shipped fixtures/) and resolved before anything is created; their recipes
are applied after the base recipe, in the order given.

Exit codes: 0 created; 1 refused (APG_BED_EXISTS, APG_FIXTURE_OVERLAP, APG_FIXTURE_AMBIGUOUS,
APG_FRAGMENT_INVALID, a recipe failure); 2 bad arguments (APG_USAGE, APG_FIXTURE_NOT_FOUND,
APG_FIXTURE_INVALID).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.bed import init_bed
from ai_proving_ground.cli.common import ArgumentParser, run
from ai_proving_ground.settings import Settings


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="apg bed", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True, parser_class=ArgumentParser)
    init = sub.add_parser("init", help="create an embedded bed in a new directory")
    init.add_argument("directory")
    init.add_argument("fixtures", nargs="*", metavar="FIXTURE",
                      help="fixture names (without fixture_) to apply after the base recipe")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def act() -> int:
        target = Path(args.directory).absolute()
        init_bed(target, args.fixtures, Settings.from_environ())
        print(target)
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
