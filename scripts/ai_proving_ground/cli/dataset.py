"""``apg dataset validate [REF] [--words=LIST]``: check a dataset as run and grade load it.

REF is a dataset name or YAML path (default: $AI_PG_DATASET, then the shipped build_tasks).
Beyond its schema (file:line:col: $.path errors), no task's prompt may hold a telltale word that
gives the evaluation away (APG_TELLTALE_WORD, one line per finding). --words replaces the default
list (eval, evaluation, fixture, grader, grading, benchmark, test harness, rubric, hidden
verifier), comma-separated; words match whole, case-insensitive, plural included.
A dataset that declares a ``runbook:`` (entries, or a file of them) must cover each entry by a
task's ``covers:`` (APG_RUNBOOK_UNCOVERED, file:line:col of each uncovered entry).
Prints APG_DATASET_VALID with the task count. Exit codes: 0 valid; 2 usage, a dataset not found
or invalid (APG_DATASET_NOT_FOUND, APG_DATASET_INVALID, APG_RUNBOOK_INVALID), a telltale word
(APG_TELLTALE_WORD) or an uncovered runbook entry (APG_RUNBOOK_UNCOVERED).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground import runbook
from ai_proving_ground.cli.common import ArgumentParser, run
from ai_proving_ground.report import say
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.dataset import load_dataset, resolve_dataset_path
from ai_proving_ground.telltale import DEFAULT_WORDS, check_dataset, refuse


def word_list(raw: str) -> tuple[str, ...]:
    """--words: a comma-separated list, none empty."""
    words = tuple(w.strip() for w in raw.split(","))
    if not all(words):
        raise argparse.ArgumentTypeError(f"{raw!r}: an empty word; give e.g. eval,fixture")
    return words


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg dataset", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=ArgumentParser)
    validate = sub.add_parser("validate", help="check a dataset: its schema and telltale words")
    validate.add_argument("ref", nargs="?", help="dataset name or YAML path")
    validate.add_argument("--words", type=word_list, default=DEFAULT_WORDS,
                          help="telltale words, comma-separated (replaces the default list)")
    args = parser.parse_args(argv)

    def act() -> int:
        settings = Settings.from_environ()
        dataset = load_dataset(resolve_dataset_path(args.ref, Path.cwd(), settings))
        refuse(check_dataset(dataset, args.words))
        runbook.refuse(runbook.check_dataset(dataset.path))
        say("APG_DATASET_VALID", f"{dataset.path}: {len(dataset.tasks)} task(s), no telltale word")
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
