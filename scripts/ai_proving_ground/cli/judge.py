"""``apg judge calibrate LABELS [--json]``: Cohen's kappa between human labels and a judge.

LABELS is CSV (a header with ``human`` and ``judge`` columns) or JSON lines (``.jsonl``, objects
with those keys); each label is pass or fail (yes/no, true/false, 1/0 too), and a judge verdict
may be ``undecided``, which is left out of kappa and counted apart. A row with no ``judge`` but
a ``criterion`` and a ``reply`` is judged now by AI_PG_JUDGE_MODEL (at AI_PG_JUDGE_BASE_URL),
three votes, cached in --cache-dir (default: the app root's baseline directory). Prints the kappa, the items
it covers, the raw agreement and the undecided count (JSON with --json), and one APG_JUDGE_KAPPA
line on stderr. Exit codes: 0 kappa computed; 2 usage or a bad labels file
(APG_JUDGE_LABELS_INVALID, naming file:line).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.baselines.store import baseline_dir
from ai_proving_ground.cli.common import ArgumentParser, run
from ai_proving_ground.report import say
from ai_proving_ground.scorers.calibrate import JudgeNow, calibrate, read_labels
from ai_proving_ground.scorers.judge import Judge, anthropic_ask
from ai_proving_ground.settings import Settings


def _judge_now(settings: Settings, cache_dir: Path | None) -> JudgeNow | None:
    """The judge AI_PG_JUDGE_MODEL names, for rows that carry a reply to judge (None: unset)."""
    if settings.judge_model is None:
        return None
    ask = anthropic_ask(settings.judge_model, settings.judge_base_url, settings.judge_api_key)
    judge = Judge(settings.judge_model, ask,
                  cache_dir or baseline_dir(Path(settings.approot or Path.cwd()), settings))
    return lambda criterion, reply: judge.grade(criterion, reply).verdict


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg judge", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=ArgumentParser)
    calibrate_parser = sub.add_parser("calibrate", help="Cohen's kappa against human labels")
    calibrate_parser.add_argument("labels", type=Path)
    calibrate_parser.add_argument("--json", action="store_true")
    calibrate_parser.add_argument("--cache-dir", type=Path, help="where the judge's votes are "
                                  "cached (default: the app root's baseline directory)")
    args = parser.parse_args(argv)

    def act() -> int:
        settings = Settings.from_environ()
        result = calibrate(read_labels(args.labels, _judge_now(settings, args.cache_dir))).as_json()
        if args.json:
            sys.stdout.write(json.dumps(result, sort_keys=True) + "\n")
        else:
            sys.stdout.write("".join(f"{k}: {v}\n" for k, v in result.items()))
        say("APG_JUDGE_KAPPA", f"{args.labels}: kappa {result['kappa']} over {result['items']} "
            f"items ({result['undecided']} undecided left out)")
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
