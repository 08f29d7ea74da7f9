"""``apg campaign resume DIR [--force] [--jobs N] [--beds DIR] [--keep-beds] [--executor NAME]``:
finish a campaign (``--address ADDR`` with the ray executor).

Runs every planned attempt of the campaign directory DIR that has no finished record, exactly
once: half-written attempts (a ``runs/<order>/`` without a complete, valid attempt.json) and
interrupted ones are moved to ``discarded/`` and run again on fresh beds; then report.json and
report.txt are written as a run writes them. Before anything runs, the spec, dataset, tasks,
baseline, grader tree, product code, adapters and their CLIs' versions, and each arm's skills
and instructions are compared with the fingerprints campaign.json recorded; a change refuses
(APG_CAMPAIGN_RESUME_CHANGED naming what changed) unless ``--force``. A spec whose plan changed
is refused even so (APG_CAMPAIGN_RESUME_PLAN_CHANGED). See ``campaigns/resume.py``.

Exit codes: 0 the matrix is complete; 1 refused (APG_CAMPAIGN_RESUME_CHANGED,
APG_CAMPAIGN_RESUME_PLAN_CHANGED, APG_CAMPAIGN_BUSY, APG_CAMPAIGN_CANNOT_RUN,
APG_CAMPAIGN_INVALID, APG_CAMPAIGN_RUNS_UNREADABLE); 2 APG_CAMPAIGN_NOT_FOUND, a bad spec or
usage; 130 interrupted (resume again).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground import report
from ai_proving_ground.campaigns.attempt import SiteStep
from ai_proving_ground.cli import campaign_report
from ai_proving_ground.cli.common import ArgumentParser, positive_int, run
from ai_proving_ground.fsutil import atomic_write_text
from ai_proving_ground.settings import Settings


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="apg campaign resume", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", metavar="DIR", help="the campaign directory (holds campaign.json)")
    parser.add_argument("--force", action="store_true",
                        help="resume although fingerprints changed (campaign.json records which)")
    add_execution_options(parser)
    return parser


def add_execution_options(parser: argparse.ArgumentParser) -> None:
    """Where and how attempts run, shared by ``apg campaign run`` and ``resume``."""
    parser.add_argument("--jobs", type=positive_int,
                        help="parallel beds (default: the spec's jobs)")
    parser.add_argument("--beds", help="where the beds go (new or empty; default a new folder "
                        "in the system's temporary directory), apart from the records; removed "
                        "at the end unless --keep-beds")
    parser.add_argument("--keep-beds", action="store_true",
                        help="keep the beds when the campaign ends (to look at them)")
    parser.add_argument("--executor", metavar="NAME",
                        help="what runs the attempts (default: the spec's executor, else "
                        "local: one thread per job here; ray: one Ray actor per bed)")
    parser.add_argument("--address", metavar="ADDR",
                        help="with the ray executor: the cluster to join (ray start --head "
                        "prints it; default: a local cluster on 127.0.0.1 for this run)")


def main(argv: Sequence[str], site_step: SiteStep) -> int:
    """``site_step`` runs an arm's ``apg site`` steps (cli.campaign.site_step)."""
    args = build_parser().parse_args(list(argv))

    def act() -> int:
        # Lazy for start-up time: only resume needs the runner and its progress.
        from ai_proving_ground.campaigns import progress, resume, runner

        directory, settings = Path(args.dir), Settings.from_environ()
        options = runner.RunnerOptions(
            spec_path=directory / "spec.yml", jobs=args.jobs,
            beds=Path(args.beds) if args.beds else None, keep_beds=args.keep_beds,
            executor=args.executor, address=args.address,
            settings=settings, site_step=site_step,
            progress=progress.for_stream(report.stderr(), settings.no_color))
        result = resume.resume_campaign(resume.ResumeOptions(directory, options, force=args.force))
        if result.report is not None and result.directory is not None:
            atomic_write_text(result.directory / "report.txt",
                              campaign_report.render_text(result.report))
        return result.exit_code

    return run(act)
