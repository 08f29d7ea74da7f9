"""``apg results [filters] [--json | --format=table|json|csv|tsv] [--fields=A,B]``: the stored
envelopes, one row each, oldest first; ``apg results export --eee DIR`` hands them on.

Columns: task, agent (the adapter), model, status (the run's status: attempted, timed_out, ...;
``no run`` for a grade without --run), score, verdict, when (retrieval time, UTC), run, and with
--json also the evaluation id and the envelope's file. A file that does not read is a row with
its error. Filters: --task and --model take shell globs (``nv*``), --agent, --status and
--verdict exact values, --since a UTC date or time, --limit the newest N. The listing reads an
SQLite index kept beside the envelope files (``results/.index.sqlite``), brought up to date
from the files on every call; the files are the source of truth and rebuild it.

Exit codes: 0 listed (an empty store lists nothing); 2 usage, or no site at the app root
(APG_SITE_NOT_INSTALLED).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from ai_proving_ground.cli.common import ArgumentParser, add_approot, render, resolve_bed, run
from ai_proving_ground.cli.results_filters import add_filters, filters_of
from ai_proving_ground.results.index import ResultRow, list_rows
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.results import results_dir

TABLE = ("task", "agent", "model", "status", "score", "verdict", "when", "run")
FORMATS = ("table", "json", "csv", "tsv")


def _shown(row: ResultRow) -> dict[str, object]:
    if row.error:
        return {"task": "-", "agent": "-", "model": "-", "status": "-", "score": "-",
                "verdict": "unreadable", "when": "-", "run": row.file, "error": row.error}
    return {"task": row.task, "agent": row.agent or "-", "model": row.model,
            "status": row.run_status, "score": row.score, "verdict": row.verdict,
            "when": row.when, "run": row.run or "-", "evaluation_id": row.evaluation_id,
            "file": row.file}


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="apg results", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    add_filters(parser)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--format", choices=FORMATS, default="table")
    parser.add_argument("--fields", help=f"comma-separated columns (default {','.join(TABLE)})")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["export"]:
        # Lazy for start-up time: only `apg results export` needs the exporter.
        from ai_proving_ground.cli import results_export

        return results_export.main(args_list[1:])
    args = build_parser().parse_args(args_list)

    def act() -> int:
        settings = Settings.from_environ()
        directory = results_dir(resolve_bed(args.approot, settings), settings)
        rows = list_rows(directory, filters_of(args))
        if (args.json or args.format == "json") and not args.fields:
            print(json.dumps([row.as_json() for row in rows], indent=2))
            return 0
        fields = args.fields or ",".join(TABLE)
        shown = [_shown(row) for row in rows]
        if any(row.error for row in rows) and not args.fields:
            fields += ",error"
        sys.stdout.write(render(shown, "json" if args.json else args.format, fields))
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
