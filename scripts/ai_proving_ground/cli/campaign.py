"""``apg campaign run SPEC [--out DIR] [--jobs N] [--dry-run]`` and ``apg campaign report DIR [--json]``.

``run`` expands the spec's matrix (task x arm x agent x model x repeat), shuffles it with the
spec's seed and runs every attempt on one cloned bed per job: verify, reset, the arm's setup,
the agent, verify, the model's diff, grade, the hidden verifier. It prints the campaign
directory on stdout; each attempt's record is ``runs/<order>/attempt.json``. ``--dry-run``
prints the ordered plan as JSON lines and touches nothing. The spec's format is
``scripts/ai_proving_ground/schemas/campaign.schema.json``; ``campaigns/example.yml`` is a
smoke campaign. After the matrix, report.json and report.txt are written when the report
module is installed.

``report`` prints the statistics of a campaign directory (offline: no bed needed).

Exit codes (run): 0 the matrix was completed, whatever the attempts gave (infrastructure errors
are recorded per attempt, APG_CAMPAIGN_ATTEMPT, and never count as agent failures); 1 it could
not run at all (APG_CAMPAIGN_CANNOT_RUN: no usable bed, the output directory exists); 2 usage
(APG_USAGE, APG_CAMPAIGN_SPEC_INVALID with file:line:col: $.path); 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.cli.common import ArgumentParser, run
from ai_proving_ground.report import say
from ai_proving_ground.settings import Settings

REPORT_MODULE = "ai_proving_ground.campaigns.report"


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="apg campaign", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=ArgumentParser)
    run_parser = sub.add_parser("run", help="run a campaign spec",
                                description="run every attempt of a campaign spec")
    # Lazy for start-up time: only `apg campaign run` needs the runner.
    from ai_proving_ground.campaigns.runner import add_arguments

    add_arguments(run_parser)
    sub.add_parser("report", help="print a campaign directory's statistics", add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["report"]:
        # The report module owns its own options; everything after "report" is passed on.
        return _report(args_list[1:])
    args = build_parser().parse_args(args_list)

    def act() -> int:
        # Lazy for start-up time, as above.
        from ai_proving_ground.campaigns.runner import RunnerOptions, run_campaign

        if args.jobs is not None and args.jobs < 1:
            say("APG_USAGE", f"--jobs must be 1 or more, not {args.jobs}")
            return 2
        options = RunnerOptions(spec_path=Path(args.spec), out=Path(args.out) if args.out else None,
                                jobs=args.jobs, dry_run=args.dry_run,
                                settings=Settings.from_environ())
        return run_campaign(options)

    return run(act)


def _report(argv: list[str]) -> int:
    try:
        module = importlib.import_module(REPORT_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name != REPORT_MODULE:
            raise
        say("APG_CAMPAIGN_REPORT_UNAVAILABLE", f"{REPORT_MODULE} is not installed")
        return 1
    result: int = module.main(argv)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
