"""``apg where [NAME]``: where the shipped files are, from a checkout, a wheel or pipx alike.

NAME is one of datasets, campaigns, fixtures, recipes, ddev (the DDEV add-on folder, for
``ddev add-on get "$(apg where ddev)"``) or escrow-verifier; its path is printed alone, for
a shell. With no NAME, every one is printed as ``NAME PATH`` lines.

Exit codes: 0 printed; 2 an unknown NAME (APG_USAGE, the names listed) or a broken install
(APG_INSTALL_BROKEN).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.cli.common import ArgumentParser, run
from ai_proving_ground.paths import project_dir

FOLDERS = ("datasets", "campaigns", "fixtures", "recipes", "ddev")
VERIFIER = "escrow-verifier"
NAMES = (*FOLDERS, VERIFIER)


def place(name: str) -> Path:
    if name == VERIFIER:
        return project_dir("scripts") / "escrow_verify.py"
    return project_dir(name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg where", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name", nargs="?", choices=NAMES, metavar="NAME",
                        help=f"one of {', '.join(NAMES)}")
    args = parser.parse_args(argv)

    def act() -> int:
        if args.name:
            print(place(args.name))
            return 0
        sys.stdout.write("".join(f"{name} {place(name)}\n" for name in NAMES))
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
