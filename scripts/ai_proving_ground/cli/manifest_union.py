"""``apg manifest-union [fixture...]``: the unioned manifest of a fixture set, as JSON.

Overlapping ownership claims are refused (APG_FIXTURE_OVERLAP, exit 1).
Exit codes: 0 printed; 1 overlap; 2 usage (bad arguments, unknown fixture, bad fragment).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ai_proving_ground.cli._fixture_command import bed_and_set, fixture_parser
from ai_proving_ground.cli.common import run
from ai_proving_ground.fixtures import load_set, union_manifest


def main(argv: Sequence[str] | None = None) -> int:
    parser = fixture_parser("apg manifest-union", __doc__)
    args = parser.parse_args(argv)

    def act() -> int:
        target = bed_and_set(args, site_required=False)
        fixture_set = load_set(target.names, target.approot, with_facts=True,
                               settings=target.settings)
        print(json.dumps(union_manifest(fixture_set), indent=2))
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
