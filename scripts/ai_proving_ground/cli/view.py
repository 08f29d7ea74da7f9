"""``apg view [DIR] [--approot BED] [--port N] [--static]``: look at a campaign or a bed's results.

With a campaign directory (one holding campaign.json), writes its report.html, report.md and a
page per attempt from the records (as ``apg campaign run`` does at its end), then serves them on
http://127.0.0.1 (a free port, or --port) until interrupted. With no DIR, the bed's stored
results (``apg results``) become results.html in the bed's baseline folder. ``--static`` writes
the pages, prints the path of the first one and exits: open it as a file, offline. The server
answers only the pages, never another file of the directory (agents wrote some of them).

Exit codes: 0 written (and served until interrupted); 2 DIR is not a campaign directory, or
usage; 130 interrupted.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.cli.common import ArgumentParser, add_approot, resolve_bed, run
from ai_proving_ground.errors import ApgError
from ai_proving_ground.report import say
from ai_proving_ground.settings import Settings


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg view", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    parser.add_argument("dir", nargs="?", help="a campaign directory (default: the bed's results)")
    parser.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: free)")
    parser.add_argument("--static", action="store_true",
                        help="write the pages, print where, and exit (no server)")
    args = parser.parse_args(argv)

    def act() -> int:
        # Lazy for start-up time: only apg view needs the renderer (Jinja2, matplotlib).
        from ai_proving_ground.viewer import render, results_page, serve

        if args.dir:
            root = Path(args.dir).absolute()
            if not (root / "campaign.json").is_file():
                raise ApgError("APG_VIEW_NOT_FOUND", f"{root} holds no campaign.json: name a "
                               "campaign directory (apg campaign run prints it), or leave DIR "
                               "out to view the bed's results", exit_code=2)
            written = render.write_reports(root)
            index, first = render.REPORT_HTML, written.html
            say("APG_VIEW_WRITTEN", f"{written.html}, {written.markdown} and "
                f"{written.attempts} attempt page(s)")
        else:
            settings = Settings.from_environ()
            page = results_page.write_results_page(resolve_bed(args.approot, settings), settings)
            root, index, first = page.parent, page.name, page
            say("APG_VIEW_WRITTEN", str(page))
        if args.static:
            print(first)
            return 0
        serve.serve(root, index, args.port, ready=_announce)
        return 0

    return run(act)


def _announce(url: str) -> None:
    print(url, flush=True)
    say("APG_VIEW_SERVING", f"{url} (127.0.0.1 only; Ctrl-C stops)")


if __name__ == "__main__":
    raise SystemExit(main())
