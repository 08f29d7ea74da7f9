"""``apg transcript RUN [--agent=NAME] [--write | --check] [--approot DIR]``: re-parse an agent
run's raw CLI output (claude-code.jsonl; codex.jsonl and codex-session.jsonl) offline and print
the normalized record (transcript.json's form) on stdout.

RUN is a run id under the bed's runs directory, or a run directory anywhere (no bed needed). The
agent is --agent, else the adapter run.json names. --write replaces transcript.json; --check
compares with it instead. For a task of several turns it is every sent turn's record (turn 1's
raw output beside run.json, a later turn's in turns/<n>/), summed as apg run summed them.

Exit codes: 0 printed (and with --check: the stored record is the same); 1 no raw output for that
agent (APG_TRANSCRIPT_NONE), unreadable or invalid (APG_TRANSCRIPT_UNREADABLE,
APG_TRANSCRIPT_INVALID), or --check found a difference (APG_TRANSCRIPT_DIFFERS); 2 usage.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.baselines.store import runs_dir
from ai_proving_ground.cli.common import ArgumentParser, add_approot, run
from ai_proving_ground.errors import ApgError, UsageError
from ai_proving_ground.records import write_record
from ai_proving_ground.settings import Settings, resolve_approot
from ai_proving_ground.tasks.grade import RUN_ID
from ai_proving_ground.tasks.run_record import read_run
from ai_proving_ground.transcripts import PARSERS, TRANSCRIPT_FILE, load, parse_run
from ai_proving_ground.transcripts.record import Transcript
from ai_proving_ground.transcripts.turns import merge, parse_turns


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg transcript", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_approot(parser)
    parser.add_argument("run", metavar="RUN", help="a run id, or a run directory")
    parser.add_argument("--agent", choices=sorted(PARSERS),
                        help="whose output it is (default: the adapter run.json names)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="replace transcript.json")
    mode.add_argument("--check", action="store_true", help="compare with transcript.json")
    args = parser.parse_args(argv)

    def act() -> int:
        run_dir = _run_dir(args.run, args.approot)
        agent = args.agent or _recorded_agent(run_dir)
        transcript = _parse(run_dir, agent)
        if transcript is None:
            raise ApgError("APG_TRANSCRIPT_NONE", f"{run_dir} holds no raw output of {agent} "
                           f"({PARSERS[agent][0]}); the agent never started or wrote nothing")
        print(json.dumps(transcript.as_json(), indent=2, sort_keys=True))
        if args.write:
            write_record(run_dir / TRANSCRIPT_FILE, transcript)
        if args.check and load(run_dir) != transcript:
            raise ApgError("APG_TRANSCRIPT_DIFFERS", f"{run_dir / TRANSCRIPT_FILE} differs from "
                           "the record its raw output gives; --write replaces it")
        return 0

    return run(act)


def _parse(run_dir: Path, agent: str) -> Transcript | None:
    """The run's record; of a task of several turns, the sent turns' summed (as apg run kept)."""
    try:
        entries = read_run(run_dir / "run.json").turns or []
    except ApgError:  # no run.json (a copied directory): its raw output alone
        entries = []
    sent = [e["turn"] for e in entries if e["sent"]]
    if len(sent) < 2:
        return parse_run(run_dir, agent)
    turns = parse_turns(run_dir, agent, sent)
    return merge(turns) if turns else None


def _run_dir(value: str, approot: str | None) -> Path:
    if RUN_ID.match(value):
        settings = Settings.from_environ()
        return runs_dir(resolve_approot(approot, settings), settings) / value
    path = Path(value)
    if not path.is_dir():
        raise UsageError(f"RUN {value!r} is neither a run id (apg-run-...) nor a directory")
    return path


def _recorded_agent(run_dir: Path) -> str:
    path = run_dir / "run.json"
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        name = record["adapter"]["name"]
    except (OSError, ValueError, KeyError, TypeError):
        raise UsageError(f"{path} does not name the adapter; pass --agent "
                         f"({', '.join(sorted(PARSERS))})") from None
    if name not in PARSERS:
        raise ApgError("APG_TRANSCRIPT_NONE", f"adapter {name!r} of {run_dir} has no transcript "
                       f"parser (known: {', '.join(sorted(PARSERS))})")
    return str(name)


if __name__ == "__main__":
    raise SystemExit(main())
