"""``apg bed init DIR``: a new embedded bed.

Exit codes: 0 created; 1 refused (APG_BED_EXISTS, a recipe failure); 2 bad arguments.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.bed import init_bed
from ai_proving_ground.cli.common import ArgumentParser, run


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="apg bed", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True, parser_class=ArgumentParser)
    init = sub.add_parser("init", help="create an embedded bed in a new directory")
    init.add_argument("directory")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def act() -> int:
        target = Path(args.directory).absolute()
        init_bed(target)
        print(target)
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
