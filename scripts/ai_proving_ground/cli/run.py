"""``apg run <task-id> [--agent=NAME] [--dataset=REF] [--model=ID] [--approot DIR] [--json]``.

Resolves the task (dataset: --dataset, then $AI_PG_DATASET, then the shipped datasets/), picks
the adapter (--agent, then $AI_PG_AGENT, then ``manual``; looked up in the bed's .ddev/agents/,
then the shipped ddev/agents/), runs the credential preflight when the adapter's
``## Credentials:`` header is not ``none``, hands the task to the adapter and records the
attempt in <baseline dir>/runs/<run-id>/run.json. It never grades: follow it with
``apg grade <task-id> --run=<run-id>``. The adapter's output is teed to the terminal (its
stdout to stderr under --json, which prints run.json alone on stdout) and saved beside run.json.

The adapter runs in a sandbox (bubblewrap, else Landlock) that writes only the bed, the run
directory and the run's HOME and TMPDIR; run.json's "sandbox" records what it allowed.
--unshare-net cuts the network: loopback only, plus each model endpoint the adapter declares on
loopback (its *_BASE_URL variables), relayed in. $AI_PG_SANDBOX_READS adds read-only
paths (separated by ":"); $AI_PG_SANDBOX picks the backend (auto, bwrap, landlock). With no
sandbox available the run is refused (APG_RUN_UNCONFINED) unless AI_PG_ALLOW_UNCONFINED=1.

Exit codes:
  0  attempt recorded: the adapter exited 0 (APG_RUN_ATTEMPTED)
  1  no attempt: the adapter exited non-zero or could not start (APG_RUN_NO_ATTEMPT), or the
     credential preflight refused the adapter (APG_RUN_CRED_REFUSED; AI_PG_ALLOW_HOST_CREDS=1
     overrides it deliberately, with APG_RUN_CRED_OVERRIDDEN), or the adapter outlived
     --timeout and was stopped with everything it started (APG_RUN_TIMED_OUT); run.json
     records each of these; or another apg run is in flight on the bed (APG_RUN_BUSY:
     nothing recorded); or no sandbox works on this machine (APG_RUN_UNCONFINED: nothing
     recorded)
  2  usage: bad arguments (APG_USAGE), unknown task (APG_TASK_UNKNOWN), dataset not found or
     invalid (APG_DATASET_NOT_FOUND, APG_DATASET_INVALID), unknown adapter
     (APG_RUN_AGENT_UNKNOWN), adapter not executable (APG_RUN_AGENT_NOT_EXECUTABLE), a bad
     adapter header (APG_RUN_AGENT_INVALID) or name (APG_NAME_INVALID), app root missing
     (APG_APPROOT_MISSING) or holding no site (APG_SITE_NOT_INSTALLED); nothing is recorded
  130 interrupted (APG_INTERRUPTED); run.json records status "interrupted"
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ai_proving_ground.cli.common import (
    ArgumentParser,
    add_approot,
    positive_seconds,
    resolve_bed,
    run,
)
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.run import RunOptions, run_task
from ai_proving_ground.tasks.run_record import dumps_record


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog="apg run", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    parser.add_argument("task_id", metavar="TASK_ID", help="the task to attempt")
    parser.add_argument("--agent", help="adapter name (default: $AI_PG_AGENT, else manual)")
    parser.add_argument("--dataset", help="dataset name or YAML path (default: $AI_PG_DATASET, "
                        "else build_tasks)")
    parser.add_argument("--model", help="model id, recorded and passed on as APG_MODEL")
    parser.add_argument("--json", action="store_true", help="print run.json on stdout")
    parser.add_argument("--timeout", type=positive_seconds, metavar="SECONDS",
                        help="stop the adapter and everything it started after this long "
                             "(recorded as timed_out, no attempt)")
    parser.add_argument("--unshare-net", action="store_true",
                        help="no network in the adapter's sandbox but loopback and the relayed "
                             "model endpoints (APG_RUN_NET_RELAYED)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def act() -> int:
        settings = Settings.from_environ()
        options = RunOptions(task_id=args.task_id, approot=resolve_bed(args.approot, settings),
                             agent=args.agent, dataset=args.dataset, model=args.model or None,
                             echo_stdout_to_stderr=args.json, timeout_s=args.timeout,
                             settings=settings, unshare_net=args.unshare_net)
        outcome = run_task(options)
        if args.json:
            sys.stdout.write(dumps_record(outcome.record))
        return outcome.exit_code

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
