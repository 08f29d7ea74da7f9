"""``apg doctor [fixture...]``: a JSON verdict on whether live state matches the fixture set.

Fixtures come from the arguments, else AI_PG_FIXTURES, else ``kb_docs canvas_home``.
Exit codes: 0 healthy; 1 drift (the JSON names each subject with expected and found values);
2 usage (bad arguments, no site at the app root (APG_SITE_NOT_INSTALLED), an unknown or ambiguous fixture,
a malformed fragment).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ai_proving_ground.cli._fixture_command import bed_and_set, fixture_parser
from ai_proving_ground.cli.common import run
from ai_proving_ground.doctor import diagnose


def main(argv: Sequence[str] | None = None) -> int:
    args = fixture_parser("apg doctor", __doc__).parse_args(argv)

    def act() -> int:
        target = bed_and_set(args)
        verdict = diagnose(target.approot, target.names, target.driver, target.settings)
        print(json.dumps(verdict, indent=2))
        return 0 if verdict["healthy"] else 1

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
