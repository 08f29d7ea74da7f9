"""``apg tasks [--dataset REF] [--json]``: the dataset's tasks, one line each.

Each line: the task id, its fixtures, its number of checks, whether it has a hidden verifier,
and its title (else its prompt's first line). ``--json`` prints a list of those as objects.

Exit codes: 0 listed; 2 usage (APG_USAGE, a missing or invalid dataset).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.cli.common import ArgumentParser, render, run
from ai_proving_ground.settings import Settings
from ai_proving_ground.taskcards.card import listing
from ai_proving_ground.tasks.dataset import load_dataset, resolve_dataset_path


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg tasks", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", help="dataset name or YAML path (default: $AI_PG_DATASET, "
                        "else build_tasks)")
    parser.add_argument("--json", action="store_true", help="print the tasks as JSON")
    args = parser.parse_args(argv)

    def act() -> int:
        dataset = load_dataset(resolve_dataset_path(args.dataset, Path.cwd(),
                                                    Settings.from_environ()))
        rows = [listing(task) for task in dataset.tasks]
        if args.json:
            sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
            return 0
        sys.stdout.write(render([{"id": r["id"], "fixtures": ",".join(r["fixtures"]),
                                  "checks": r["checks"],
                                  "hidden": "yes" if r["hidden_verifier"] else "no",
                                  "title": r["title"]} for r in rows], "table"))
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
