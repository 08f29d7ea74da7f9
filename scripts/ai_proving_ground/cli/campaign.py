"""``apg campaign run SPEC [--out DIR] [--jobs N] [--executor NAME] [--dry-run [--json]]``, ``report``.

``run`` expands the spec's matrix (task x arm x agent x model x repeat), shuffles it with the
spec's seed and runs every attempt on one cloned bed per job: verify, reset, the arm's setup,
the agent, verify, the model's diff, grade, the hidden verifier. It prints the campaign
directory on stdout (``--out``, else under ``$XDG_DATA_HOME/ai-proving-ground/campaigns/``);
each attempt's record is ``runs/<order>/attempt.json``. Progress goes to stderr: a live display on
a terminal, plain lines elsewhere or with ``NO_COLOR``. The beds (``--beds``, else a new
temporary folder) are named at the start and removed at the end unless ``--keep-beds``.
``--dry-run`` makes every check the run makes, then prints what each attempt would get
(``--json``: as JSON lines) and writes nothing. The spec's format is
``scripts/ai_proving_ground/schemas/campaign.schema.json``; ``campaigns/example.yml`` is a
smoke campaign. After the matrix, report.json, report.txt, report.md and report.html (with a
page per attempt under attempts/) are written beside the records (APG_CAMPAIGN_REPORT).

``report`` (``apg campaign report DIR [--json]``) prints the statistics of a campaign directory
(offline: no bed needed). ``resume`` (``apg campaign resume DIR [--force]``) finishes a campaign
a killed run left (``cli/campaign_resume.py``).

Exit codes (run): 0 the matrix was completed, whatever the attempts gave (infrastructure errors
are recorded per attempt, APG_CAMPAIGN_ATTEMPT, and never count as agent failures); 1 it could
not run at all (APG_CAMPAIGN_CANNOT_RUN: no usable bed, the output directory exists); 2 usage
(APG_USAGE, APG_CAMPAIGN_SPEC_INVALID with file:line:col: $.path); 130 interrupted.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground import report
from ai_proving_ground.cli import campaign_regrade, campaign_report, campaign_resume, campaign_validate, site
from ai_proving_ground.cli.common import ArgumentParser, positive_int, run
from ai_proving_ground.fsutil import atomic_write_text
from ai_proving_ground.settings import Settings


def site_step(approot: Path, argv: Sequence[str]) -> tuple[int, str]:
    """One ``apg site`` command line on ``approot``, in-process (an arm's setup step): its exit
    code and what it said on stderr; what it printed on stdout is dropped."""
    out, err = io.StringIO(), io.StringIO()
    with report.redirected(out, err):
        try:
            code = site.main(["--approot", str(approot), *argv])
        except SystemExit as exc:  # argparse said why on (this thread's) stderr
            code = exc.code if isinstance(exc.code, int) else 2
    return code, err.getvalue()


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="apg campaign", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=ArgumentParser)
    run_parser = sub.add_parser("run", help="run a campaign spec",
                                description="run every attempt of a campaign spec")
    run_parser.add_argument("spec", metavar="SPEC", nargs="?",
                            help="the campaign spec: a YAML path, or the name of a shipped "
                            "campaign (example: campaigns/example.yml); or, instead, --task and "
                            "--agent for a quick matrix")
    quick = run_parser.add_argument_group(
        "a quick matrix, no spec (campaigns/quick.py: one arm, each agent's rate per task)")
    quick.add_argument("--task", action="append", default=[], metavar="ID",
                       help="a task id or glob (repeat for several)")
    quick.add_argument("--agent", action="append", default=[], metavar="ADAPTER",
                       help="an adapter (repeat for several)")
    quick.add_argument("--repeats", type=positive_int, default=None,
                       help="attempts per task and agent (default 3)")
    quick.add_argument("--model", action="append", default=[], metavar="ID",
                       help="a model id passed as --model (repeat for several)")
    quick.add_argument("--dataset", metavar="REF", help="dataset name or path (default build_tasks)")
    quick.add_argument("--seed", type=int, default=None, help="the order's seed (default 1)")
    run_parser.add_argument("--out", help="the campaign directory (new or empty; default "
                            "$XDG_DATA_HOME/ai-proving-ground/campaigns/<name>-<UTC time>, "
                            "~/.local/share without XDG_DATA_HOME)")
    campaign_resume.add_execution_options(run_parser)
    run_parser.add_argument("--dry-run", action="store_true",
                            help="check the spec as the run would, print what each attempt would "
                            "get (setup steps, adapter command, environment, skills, "
                            "instructions) in start order and exit; nothing is written")
    run_parser.add_argument("--json", action="store_true",
                            help="with --dry-run: one JSON object per attempt, one per line")
    sub.add_parser("report", help="print a campaign directory's statistics", add_help=False)
    sub.add_parser("regrade", help="grade a campaign's kept final states again, offline",
                   add_help=False)
    sub.add_parser("resume", help="finish a killed campaign directory", add_help=False)
    sub.add_parser("validate", help="check a spec as run does, telltale words too", add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["report"]:
        # The report owns its own options; everything after "report" is passed on.
        return campaign_report.main(args_list[1:])
    if args_list[:1] == ["regrade"]:  # as report: its own options
        return campaign_regrade.main(args_list[1:])
    if args_list[:1] == ["validate"]:  # its own options too
        return campaign_validate.main(args_list[1:])
    if args_list[:1] == ["resume"]:  # campaign_resume owns its options too
        return campaign_resume.main(args_list[1:], site_step)
    parser = build_parser()
    args = parser.parse_args(args_list)
    if args.json and not args.dry_run:  # the run's data on stdout is its directory, one line
        parser.error("--json goes with --dry-run")
    matrix = (args.task or args.agent or args.model or args.dataset or args.repeats
              or args.seed is not None)
    if bool(args.spec) == bool(matrix):
        parser.error("give a SPEC, or --task and --agent for a quick matrix (not both)")
    if matrix and not (args.task and args.agent):
        parser.error("a quick matrix needs at least one --task and one --agent")

    def act() -> int:
        # Lazy for start-up time: only `apg campaign run` needs the runner and its progress.
        from ai_proving_ground.campaigns import progress, runner, spec

        settings = Settings.from_environ()
        with tempfile.TemporaryDirectory(prefix="apg-quick-") as scratch:
            spec_path = spec.find_spec(args.spec) if args.spec else _quick(args, Path(scratch))
            campaign_validate.check_spec(spec_path.absolute(), settings)  # as validate does
            options = runner.RunnerOptions(
                spec_path=spec_path, out=Path(args.out) if args.out else None, jobs=args.jobs,
                dry_run=args.dry_run, beds=Path(args.beds) if args.beds else None,
                executor=args.executor, address=args.address, keep_beds=args.keep_beds,
                json=args.json, settings=settings, site_step=site_step,
                progress=progress.for_stream(report.stderr(), settings.no_color))
            result = runner.run_campaign(options)
        if result.report is not None and result.directory is not None:
            write_reports(result.directory, result.report)
        exit_code: int = result.exit_code
        return exit_code

    return run(act)


def _quick(args: argparse.Namespace, folder: Path) -> Path:
    """The quick matrix's spec, written where the run reads it (and copies it as spec.yml)."""
    # Lazy for start-up time: only a quick matrix needs its spec writer.
    from ai_proving_ground.campaigns import quick

    return quick.write_quick_spec(folder, quick.quick_spec(
        args.task, args.agent, args.repeats or quick.DEFAULT_REPEATS, args.dataset, args.model,
        quick.DEFAULT_SEED if args.seed is None else args.seed))


def write_reports(directory: Path, built: dict[str, Any]) -> None:
    """report.txt, report.md, report.html and the attempt pages, beside report.json."""
    # Lazy for start-up time: only a finished campaign needs the renderer (Jinja2, matplotlib).
    from ai_proving_ground.viewer.render import write_reports as write_pages

    atomic_write_text(directory / "report.txt", campaign_report.render_text(built))
    written = write_pages(directory, built)
    report.say("APG_CAMPAIGN_REPORT", f"{written.html} (and {written.markdown.name}, "
               f"{written.attempts} attempt page(s); apg view {directory} serves them)")


if __name__ == "__main__":
    raise SystemExit(main())
