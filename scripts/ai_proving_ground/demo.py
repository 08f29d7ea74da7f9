"""The main job end to end on a fresh machine: an embedded bed, its status and its modules.

Run by ``make demo`` (``nox -s demo``). The bed lives in ``build/demo-bed`` unless a directory
is given; a bed this demo made earlier is replaced, anything else there is refused.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.bed import init_bed
from ai_proving_ground.cli import site as site_cli
from ai_proving_ground.cli.common import run
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_text

DEMO_MARKER = ".apg-demo-bed"


def _fresh_directory(target: Path) -> None:
    if not target.exists():
        return
    if not (target / DEMO_MARKER).is_file():
        raise ApgError("APG_DEMO_REFUSED", f"{target} exists and was not made by the demo; "
                       "remove it or pass another directory")
    shutil.rmtree(target)


def _section(title: str) -> None:
    print(f"\n== {title}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ai_proving_ground.demo", description=__doc__)
    parser.add_argument("directory", nargs="?", default="build/demo-bed")
    args = parser.parse_args(argv)

    def act() -> int:
        target = Path(args.directory).absolute()
        _fresh_directory(target)
        _section(f"apg bed init {target}")
        init_bed(target)
        atomic_write_text(target / DEMO_MARKER, "made by ai_proving_ground.demo\n")
        for title, command in (
            ("apg site status", ["status"]),
            ("apg site pm:list --status=enabled", ["pm:list", "--status=enabled"]),
        ):
            _section(title)
            sys.stdout.flush()
            code = site_cli.main(["--approot", str(target), *command])
            if code != 0:
                return code
        print(f"\nThe bed is at {target}; try `apg site --approot {target} config:list node.`")
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
