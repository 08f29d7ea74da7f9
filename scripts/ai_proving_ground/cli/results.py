"""``apg results [--json]``: the envelopes stored by grade, one row each.

Exit codes: 0 listed (an empty store lists nothing); 2 usage, or no site at the app root
(APG_SITE_NOT_INSTALLED).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from ai_proving_ground.cli.common import ArgumentParser, add_approot, emit, resolve_bed, run
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.results import list_results


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg results", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)

    def act() -> int:
        settings = Settings.from_environ()
        rows = list_results(resolve_bed(args.approot, settings), settings)
        if args.json:
            print(json.dumps(rows, indent=2))
        else:
            emit([{k: r.get(k, "") for k in ("evaluation_id", "score", "verdict", "run")}
                  for r in rows], "table")
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
