"""``apg grade <task-id> [dataset] [model-id] [--run=<run-id>]``: grade one task on live state.

Prints one every_eval_ever 0.2.2 envelope on stdout and one line on stderr
(APG_GRADE_VERDICT: task, agent, score, checks passed k/n and the first failing check with what
it expected and found; the envelope's model_info details name the agent), then saves it as
grade.json in the run directory (with --run) and stores it in the results store
(AI_PG_NO_IMPORT=1 skips storing).
With --run, a run that recorded no attempt (status other than ``attempted``: the adapter exited
non-zero, timed out, was refused) or whose recorded task hash differs from the task being graded
is refused (APG_GRADE_RUN_INVALID, nothing stored) unless --force; the envelope records the run's
status, timing and time limit. A task with a hidden verifier has it applied too (--no-hidden
skips it): the verdict passes only when both pass; one that cannot run is APG_GRADE_HIDDEN_ERROR.
Exit codes: 0 a verdict was emitted, pass or fail (APG_GRADE_STORED once stored); 3 the task
has no checks, or is a skill trigger case graded without --run (APG_GRADE_SKIP); 1 no grade
(APG_GRADE_RUN_INVALID, APG_GRADE_HIDDEN_ERROR, a site failure); 2 usage (bad arguments, no
site at the app root (APG_SITE_NOT_INSTALLED), unknown task, a missing or invalid dataset).
APG_GRADE_NOT_SAVED and APG_GRADE_NOT_STORED never change the exit code.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from ai_proving_ground.cli.common import ArgumentParser, add_approot, resolve_bed, run
from ai_proving_ground.report import say
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.base import driver_for
from ai_proving_ground.tasks.envelope import VERDICT_TOKEN, verdict_line
from ai_proving_ground.tasks.grade import GradeRequest, after_emit, check_envelope, grade


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg grade", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    parser.add_argument("task_id")
    parser.add_argument("dataset", nargs="?", help="dataset name or path (else --dataset, "
                        "AI_PG_DATASET, the shipped build_tasks)")
    parser.add_argument("model", nargs="?", help="model id that acted, e.g. anthropic/claude-x")
    parser.add_argument("--dataset", dest="dataset_option")
    parser.add_argument("--model", dest="model_option")
    parser.add_argument("--run", dest="run_id", help="grade a recorded attempt")
    parser.add_argument("--force", action="store_true",
                        help="grade a run that recorded no attempt, or whose task has changed")
    parser.add_argument("--hidden", action=argparse.BooleanOptionalAction, default=True,
                        help="apply the task's hidden verifier too, when it has one (default)")
    # Intermixed: options may come anywhere among the positionals (`apg grade TASK --run=ID
    # DATASET MODEL`), as the original system and drush take them.
    args = parser.parse_intermixed_args(argv)

    def act() -> int:
        settings = Settings.from_environ()
        approot = resolve_bed(args.approot, settings)
        request = GradeRequest(approot=approot, task_id=args.task_id,
                               dataset=args.dataset or args.dataset_option,
                               model=args.model or args.model_option, run_id=args.run_id,
                               settings=settings, force=args.force, hidden=args.hidden)
        envelope = grade(request, driver_for(approot, settings))
        checked = check_envelope(envelope)
        sys.stdout.write(json.dumps(envelope, indent=2) + "\n")
        sys.stdout.flush()
        say(VERDICT_TOKEN, verdict_line(checked))
        after_emit(request, envelope)
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
