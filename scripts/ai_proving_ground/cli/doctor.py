"""``apg doctor [fixture...]``: a JSON verdict on whether live state matches the fixture set.

Fixtures come from the arguments, else AI_PG_FIXTURES, else the set the bed was provisioned with
(a bed with baselines of several sets: APG_FIXTURE_SET_AMBIGUOUS, name one), else
``kb_docs canvas_home``. One line on stderr says the outcome: APG_DOCTOR_HEALTHY, or
APG_DOCTOR_DRIFT with the failed checks and the first drifted subject.
Exit codes: 0 healthy; 1 drift (the JSON names each subject with expected and found values);
2 usage (bad arguments, no site at the app root (APG_SITE_NOT_INSTALLED), an unknown or ambiguous fixture,
a malformed fragment).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ai_proving_ground.cli._fixture_command import bed_and_set, fixture_parser
from ai_proving_ground.cli.common import run
from ai_proving_ground.doctor import FAIL, diagnose
from ai_proving_ground.report import say


def main(argv: Sequence[str] | None = None) -> int:
    args = fixture_parser("apg doctor", __doc__).parse_args(argv)

    def act() -> int:
        target = bed_and_set(args)
        verdict = diagnose(target.approot, target.names, target.driver, target.settings)
        print(json.dumps(verdict, indent=2))
        if verdict["healthy"]:
            say("APG_DOCTOR_HEALTHY", f"{' '.join(target.names)} ({verdict['set_key']})")
            return 0
        say("APG_DOCTOR_DRIFT", drift_line(verdict["checks"]))
        return 1

    return run(act)


def drift_line(checks: list[dict[str, Any]]) -> str:
    """The failed checks by name, and the first drifted subject with what was expected and found."""
    failed = [c for c in checks if c["status"] == FAIL]
    line = f"{len(failed)} check(s) failed: {', '.join(c['name'] for c in failed)}"
    first = next((c for c in failed if c.get("drift")), None)
    if first is not None:
        drift = first["drift"][0]
        line += (f"; first: {first['name']} {drift['subject']}: expected {drift['expected']!r}, "
                 f"found {drift['found']!r}")
    elif failed and failed[0].get("detail"):
        line += f"; {failed[0]['name']}: {failed[0]['detail']}"
    return line + " (the JSON on stdout has every subject)"


if __name__ == "__main__":
    raise SystemExit(main())
