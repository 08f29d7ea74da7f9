"""``apg provision [fixture...]``: apply the base recipe and fixtures, capture the baseline.

A no-op (APG_PROVISION_NOOP) when the set's dump and tag both exist. ``--json`` prints the
summary (set key, fixtures, dump, tag, noop) on stdout.
Exit codes: 0 captured or already present; 1 refused (APG_PROVISION_UNTRACKED,
APG_PROVISION_STALE_BASELINE, APG_PROVISION_DIRTY, APG_FIXTURE_OVERLAP, APG_LOCK_BUSY, a recipe
failure); 2 usage (bad arguments, no site at the app root (APG_SITE_NOT_INSTALLED), unknown or ambiguous
fixture, bad fragment).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.cli._fixture_command import bed_and_set, fixture_parser
from ai_proving_ground.cli.common import run


def main(argv: Sequence[str] | None = None) -> int:
    parser = fixture_parser("apg provision", __doc__)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args(argv)

    def act() -> int:
        target = bed_and_set(args)
        outcome = provision(target.approot, target.names, target.driver, target.settings)
        if args.json:
            print(json.dumps(dataclasses.asdict(outcome), indent=2))
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
