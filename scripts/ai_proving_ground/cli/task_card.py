"""``apg task card [TASK] [--dataset REF] [--write DIR | --check DIR]``: a task's card.

Prints the task's card in Markdown: what it asks (the prompt), its fixtures, its checks in
words, whether it has a hidden verifier (its patch's path and its number of commands only) and
its last mutation score (from the dataset's mutation-scores.json). ``--write DIR`` writes every
task's card as DIR/<task>.md (``nox -s task-cards`` writes docs/tasks/ so); ``--check DIR``
writes nothing and fails when a card there differs from what would be written, or is missing.

Exit codes: 0 printed, written, or every card current; 1 a card is stale or missing
(APG_TASK_CARD_STALE, naming each); 2 usage (APG_USAGE, unknown task, bad dataset).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground import report
from ai_proving_ground.cli.common import ArgumentParser, run
from ai_proving_ground.settings import Settings
from ai_proving_ground.taskcards.card import render_card
from ai_proving_ground.taskcards.files import stale_cards, write_cards
from ai_proving_ground.taskcards.scores import read_scores, scores_path
from ai_proving_ground.tasks.dataset import load_dataset, resolve_dataset_path


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="apg task card", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task_id", metavar="TASK", nargs="?",
                        help="the task (every task with --write or --check)")
    parser.add_argument("--dataset", help="dataset name or YAML path (default: $AI_PG_DATASET, "
                        "else build_tasks)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--write", metavar="DIR", help="write every card into DIR")
    where.add_argument("--check", metavar="DIR", help="fail when a card in DIR is stale")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.task_id is None and not (args.write or args.check):
        parser.error("name a TASK, or pass --write DIR or --check DIR")

    def act() -> int:
        dataset = load_dataset(resolve_dataset_path(args.dataset, Path.cwd(),
                                                    Settings.from_environ()))
        scores = read_scores(scores_path(dataset), dataset)
        if args.write:
            for path in write_cards(dataset, scores, Path(args.write)):
                report.say("APG_TASK_CARD_WRITTEN", str(path))
            return 0
        if args.check:
            stale = stale_cards(dataset, scores, Path(args.check))
            for problem in stale:
                report.say("APG_TASK_CARD_STALE", f"{problem}; write them again: nox -s task-cards")
            return 1 if stale else 0
        sys.stdout.write(render_card(dataset, dataset.task(args.task_id), scores))
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
