"""``apg task mutate TASK|--all [--dataset REF] [--ddev-bed DIR] [--json] [--threshold X]
[--operator P]... [--record-score]``.

Proves a task's graders on the embedded site, or with --ddev-bed on that DDEV bed (which must
hold the task's fixture set's baseline: ``apg provision``; it is reset before every build and
left reset). On a fresh bed of the task's fixtures (a clone of a provisioned template, reset
before every build) it grades nop (must fail), the reference
solution applied as the oracle applies it (must pass), and every wrong build derived from the
reference by the named mutation operators (views, content, canvas, outside the task; see README
"Proving a task"). A mutant whose executed behaviour equals the reference's (the same rows in the
same order, the same Canvas tree, the same served page) is equivalent and not counted; one the
site refuses to save is stillborn and not counted. The score is killed / (killed + survived).

Prints one line per build (``--json``: the report, schema mutation_report; a list of them with
--all), then the verdict on stderr. ``--all`` proves every task of the dataset in turn.
A task --all cannot prove (no checks, no reference) is named (APG_MUTATE_SKIPPED) and passed over.
``--record-score`` keeps each score for the task cards (the shipped dataset's in
docs/tasks/mutation-scores.json, another's beside it); a score of some operators only
(``--operator``) is not the task's and is never recorded, nor is a DDEV bed's (the card's score
is the embedded site's, which any machine can check again).

Exit codes: 0 the reference passes, nop fails, no build errs and the score is at least the
threshold (APG_MUTATE_OK), for every task proven; 1 otherwise (APG_MUTATE_FAILED;
APG_MUTATE_REFERENCE_FAILED when the reference does not apply; APG_MUTATE_BED when no bed can
be made, APG_RESET_NO_BASELINE when the DDEV bed holds no baseline of the set); 2 usage (APG_USAGE, unknown
task, bad dataset, a task with no checks or no reference: APG_MUTATE_UNPROVABLE).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from ai_proving_ground import proc, report
from ai_proving_ground.cli.common import ArgumentParser, resolve_bed, run
from ai_proving_ground.errors import ApgError
from ai_proving_ground.mutation.result import DEFAULT_THRESHOLD, UNPROVABLE, MutationReport
from ai_proving_ground.settings import Settings, resolve_approot
from ai_proving_ground.taskcards.scores import record_score, scores_path
from ai_proving_ground.tasks.dataset import load_dataset, resolve_dataset_path


def fraction(raw: str) -> float:
    """An argparse type: a number from 0 to 1."""
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, not {raw}")
    return value


def build_parser() -> ArgumentParser:

    parser = ArgumentParser(prog="apg task mutate", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task_id", metavar="TASK", nargs="?", help="the task (or --all)")
    parser.add_argument("--all", action="store_true", help="every task of the dataset")
    parser.add_argument("--dataset", help="dataset name or YAML path (default: $AI_PG_DATASET, "
                        "else build_tasks)")
    parser.add_argument("--approot", help="the project whose fixtures the task names (its "
                        "AI_PG_FIXTURE_PATH entries and recipes/; default: $AI_PG_APPROOT, else .)")
    parser.add_argument("--ddev-bed", metavar="DIR", help="a provisioned DDEV bed to prove the "
                        "task on instead of an embedded bed of its own")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--threshold", type=fraction, default=DEFAULT_THRESHOLD,
                        help=f"the lowest passing score (default {DEFAULT_THRESHOLD})")
    parser.add_argument("--operator", action="append", default=[], metavar="PREFIX",
                        help="only operators whose name starts so (views., canvas.moved, ...)")
    parser.add_argument("--record-score", action="store_true",
                        help="keep the score in the dataset's mutation-scores.json for its card")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if (args.task_id is None) == (not args.all):
        parser.error("name one TASK, or pass --all")
    if args.record_score and args.operator:
        parser.error("--record-score keeps a task's whole score; drop --operator")
    if args.record_score and args.ddev_bed:
        parser.error("--record-score keeps the embedded site's score for the card; drop --ddev-bed")

    def act() -> int:
        # Lazy for start-up time: the runner imports the sites, grading and the beds.
        from ai_proving_ground.mutation.runner import MutateOptions, mutate

        settings = Settings.from_environ()
        project = resolve_approot(args.approot, settings)
        ddev = resolve_bed(args.ddev_bed, settings) if args.ddev_bed else None
        dataset = load_dataset(resolve_dataset_path(args.dataset, project, settings))
        ids = [t.id for t in dataset.tasks] if args.all else [args.task_id]
        reports = []
        for task_id in ids:
            try:
                found = mutate(MutateOptions(task_id=task_id, dataset=str(dataset.path),
                                             approot=project, settings=settings,
                                             env=proc.child_env(os.environ),
                                             threshold=args.threshold,
                                             operators=tuple(args.operator),
                                             ddev_bed=ddev))
            except ApgError as exc:
                if not (args.all and exc.token == UNPROVABLE):
                    raise
                # --all proves what can be proven; a task without checks or a reference is named.
                report.say("APG_MUTATE_SKIPPED", exc.message)
                continue
            reports.append(found)
            if not args.json:
                sys.stdout.write("\n".join(found.lines()) + "\n")
                sys.stdout.flush()
            if args.record_score:
                record_score(scores_path(dataset), dataset, found)
                report.say("APG_MUTATE_SCORE_RECORDED", f"{task_id}: {scores_path(dataset)}")
            report.say("APG_MUTATE_OK" if found.ok else "APG_MUTATE_FAILED", _summary(found))
        if args.json:
            data = [r.as_json() for r in reports]
            sys.stdout.write(json.dumps(data if args.all else data[0], indent=2) + "\n")
        return 0 if all(r.ok for r in reports) else 1

    return run(act)


def _summary(found: MutationReport) -> str:
    score = "n/a" if found.score is None else f"{found.score:.3f}"
    survivors = found.survivors()
    return (f"{found.task_id}: score {score} (threshold {found.threshold:g}), reference "
            f"{found.reference.verdict}, nop {found.nop.verdict}"
            + (f"; surviving: {', '.join(survivors)}" if survivors else ""))


if __name__ == "__main__":
    raise SystemExit(main())
