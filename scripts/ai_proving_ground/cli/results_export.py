"""``apg results export --eee DIR [--schema 0.2.2|0.3.0] [--collection NAME] [filters]``: hand the
stored envelopes on in every_eval_ever's data layout.

Writes ``DIR/data/<collection>/<developer>/<model>/<uuid>.json``, one record per stored envelope
(the collection defaults to each envelope's dataset name), as every_eval_ever's validator wants
them (``every_eval_ever validate DIR/data/...``); exporting again rewrites the same files. The
filters are those of ``apg results``. An envelope that is not merge-ready is skipped with
APG_EXPORT_SKIPPED and the reason: a model id with no developer (grade with --model), or a
path of this host inside it. Prints each written file's path on stdout; APG_EXPORT_OK on stderr.

Exit codes: 0 every selected envelope exported; 1 some were skipped (the rest are written);
2 usage, or no site at the app root.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.cli.common import ArgumentParser, add_approot, resolve_bed, run
from ai_proving_ground.cli.results_filters import add_filters, filters_of
from ai_proving_ground.paths import PACKAGE_DIR, PROJECT_ROOT
from ai_proving_ground.report import say
from ai_proving_ground.results.eee_export import DEFAULT_SCHEMA, SCHEMA_VERSIONS, export_eee
from ai_proving_ground.results.index import list_rows
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.results import results_dir


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg results export", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    parser.add_argument("--eee", metavar="DIR", required=True,
                        help="the folder to write the every_eval_ever data layout into")
    parser.add_argument("--schema", choices=SCHEMA_VERSIONS, default=DEFAULT_SCHEMA,
                        help=f"the every_eval_ever schema version (default {DEFAULT_SCHEMA})")
    parser.add_argument("--collection", help="the collection folder (default: the dataset name)")
    add_filters(parser)
    args = parser.parse_args(argv)

    def act() -> int:
        settings = Settings.from_environ()
        approot = resolve_bed(args.approot, settings)
        rows = list_rows(results_dir(approot, settings), filters_of(args))
        target = Path(args.eee).absolute()
        roots = tuple(str(p) for p in (approot.resolve(), PROJECT_ROOT, PACKAGE_DIR.parent,
                                       Path.home(), Path(tempfile.gettempdir()).resolve()))
        report = export_eee([Path(row.file) for row in rows], target, args.schema,
                            args.collection, roots)
        for relative in report.written:
            print(target / relative)
        for what, why in report.skipped:
            say("APG_EXPORT_SKIPPED", f"{what}: {why}")
        say("APG_EXPORT_OK", f"{len(report.written)} written, {len(report.unchanged)} unchanged, "
            f"{len(report.skipped)} skipped, schema {args.schema}, in {target / 'data'}")
        return 1 if report.skipped else 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
