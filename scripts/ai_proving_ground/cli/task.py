"""``apg task mutate|verify|card``: prove a task (see each subcommand's ``--help``).

``mutate`` grades wrong builds derived from the task's reference by named mutations; ``verify``
runs the reference through the oracle adapter, the public checks and the hidden verifier;
``card`` renders the task's card in Markdown.

Exit codes: each subcommand's (its ``--help`` lists them); 2 usage (APG_USAGE: no subcommand, or
an unknown one).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ai_proving_ground.cli.common import ArgumentParser

# Subcommand -> (module under ai_proving_ground.cli, help); imported only when used.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "mutate": ("task_mutate", "grade wrong builds derived from the reference; print the score"),
    "verify": ("task_verify", "run the reference through the oracle, the checks and the hidden "
               "verifier"),
    "card": ("task_card", "render the task's card (Markdown), or write or check every card"),
}


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="apg task", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=ArgumentParser)
    for name, (_, helptext) in SUBCOMMANDS.items():
        sub.add_parser(name, help=helptext, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] and args[0] in SUBCOMMANDS:
        # Each subcommand owns its options; everything after its name is passed on.
        module = importlib.import_module(f"ai_proving_ground.cli.{SUBCOMMANDS[args[0]][0]}")
        code: int = module.main(args[1:])
        return code
    build_parser().parse_args(args)  # --help, or a usage error naming the subcommands
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
