"""``apg hash [fixture...]``: the set key of a fixture set.

The set key is the first 16 hex digits of the SHA-256 of the canonical form, compact JSON with
sorted keys: ``{"base":"<base version>","fixtures":["<name>@<version>",...sorted],
"format":"apg-set-v1"}``. ``--json`` prints the key with its canonical form and parts.
Exit codes: 0 printed; 2 usage (bad arguments, unknown or ambiguous fixture, bad fragment).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ai_proving_ground.cli._fixture_command import bed_and_set, fixture_parser
from ai_proving_ground.cli.common import run
from ai_proving_ground.fixtures import load_set


def main(argv: Sequence[str] | None = None) -> int:
    parser = fixture_parser("apg hash", __doc__)
    parser.add_argument("--json", action="store_true", help="print key, canonical form and pins")
    args = parser.parse_args(argv)

    def act() -> int:
        target = bed_and_set(args, site_required=False)
        fixture_set = load_set(target.names, target.approot, settings=target.settings)
        if args.json:
            print(json.dumps({"set_key": fixture_set.key, "canonical": fixture_set.canonical,
                              "base_version": fixture_set.base_version,
                              "fixtures": sorted(f.pin for f in fixture_set.fixtures)}, indent=2))
        else:
            print(fixture_set.key)
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
