"""``apg task verify TASK [--dataset REF] [--ddev-bed DIR] [--json]``: the reference, the whole way.

On a fresh embedded bed of the task's fixtures (and, with --ddev-bed, on that DDEV bed, which
must hold the set's baseline: it is reset first and left as the reference made it) it runs
``apg run --agent oracle`` (the oracle adapter, confined) and ``apg grade --run`` (the public
checks and the hidden verifier). One line per bed on stdout (``--json``: a list of verdicts),
and a token per bed on stderr: APG_TASK_VERIFY_PASS or APG_TASK_VERIFY_FAIL.

Exit codes: 0 the reference passed on every bed; 1 it failed on one (or its run recorded no
attempt, or a bed did not reset); 2 usage (APG_USAGE, unknown task, bad dataset, a task with no
reference: APG_TASK_VERIFY_UNPROVABLE).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from ai_proving_ground import report
from ai_proving_ground.cli.common import ArgumentParser, resolve_bed, run
from ai_proving_ground.settings import Settings, resolve_approot


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="apg task verify", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task_id", metavar="TASK")
    parser.add_argument("--dataset", help="dataset name or YAML path (default: $AI_PG_DATASET, "
                        "else build_tasks)")
    parser.add_argument("--approot", help="the project whose fixtures the task names (its "
                        "AI_PG_FIXTURE_PATH entries and recipes/; default: $AI_PG_APPROOT, else .)")
    parser.add_argument("--ddev-bed", metavar="DIR", help="a provisioned DDEV bed to verify on too")
    parser.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def act() -> int:
        # Lazy for start-up time: verifying imports the runner, grading and the beds.
        from ai_proving_ground.mutation.verify import verify

        settings = Settings.from_environ()
        project = resolve_approot(args.approot, settings)
        ddev = resolve_bed(args.ddev_bed, settings) if args.ddev_bed else None
        verdicts = verify(args.task_id, args.dataset, project, settings, ddev)
        if args.json:
            sys.stdout.write(json.dumps([v.as_json() for v in verdicts], indent=2) + "\n")
        for verdict in verdicts:
            failed = f" failed: {', '.join(verdict.failed_checks)}" if verdict.failed_checks else ""
            line = (f"{verdict.bed} {verdict.approot}: run {verdict.run_status}, grade "
                    f"{verdict.verdict}, hidden verifier {verdict.hidden_verifier}{failed}"
                    + (f" ({verdict.message})" if verdict.message else ""))
            if not args.json:
                print(line)
            report.say("APG_TASK_VERIFY_PASS" if verdict.passed else "APG_TASK_VERIFY_FAIL",
                       f"{args.task_id} on {line}")
        return 0 if all(v.passed for v in verdicts) else 1

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
