"""``apg``: the eval bed's command line. Each subcommand is a module with ``main(argv)``.

Run ``apg COMMAND --help`` for a command's options and exit codes; ``apg -V`` (``--version``)
prints the installed version.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from ai_proving_ground import __version__

# Subcommand -> module under ai_proving_ground.cli; imported only when used.
COMMANDS: dict[str, tuple[str, str]] = {
    "site": ("site", "drush-shaped commands for the embedded site"),
    "drush": ("drush", "drush on a DDEV bed, through the ddev site driver"),
    "bed": ("bed", "create an embedded bed"),
    "doctor": ("doctor", "prove the live state still matches the fixture set"),
    "fixture-export": ("fixture_export", "capture a fixture from a live source site"),
    "hash": ("hash", "print the set key of a fixture set"),
    "manifest-union": ("manifest_union", "print the unioned manifest of a fixture set"),
    "provision": ("provision", "apply recipes and fixtures, capture the baseline"),
    "reset": ("reset", "restore the baseline and check the bed is fit to grade"),
    "run": ("run", "hand a task to an agent adapter and record the attempt"),
    "grade": ("grade", "grade a task on live state; print an every_eval_ever envelope"),
    "tasks": ("tasks", "list a dataset's tasks"),
    "dataset": ("dataset", "validate a dataset: its schema and no telltale word in a prompt"),
    "agents": ("agents", "list the agent adapters and whether their programs are on PATH"),
    "fixtures": ("fixtures", "list the fixtures a bed can be provisioned with"),
    "where": ("where", "print where the shipped datasets, campaigns, fixtures and DDEV add-on are"),
    "task": ("task", "prove a task: mutate its graders, verify its reference, render its card"),
    "results": ("results", "list the stored grade envelopes"),
    "transcript": ("transcript", "re-parse an agent run's raw CLI output into its normalized record"),
    "escrow": ("escrow", "save the baseline and the verifier outside the project"),
    "verify": ("verify", "check the bed against its escrow (run before and after an attempt)"),
    "campaign": ("campaign", "run a campaign of attempts and report honest statistics"),
    "judge": ("judge", "calibrate a judge model: Cohen's kappa against human labels"),
    "view": ("view", "write and serve a campaign's report.html (or a bed's results) on 127.0.0.1"),
    "completion": ("completion", "print shell completion: eval \"$(apg completion bash)\""),
}


def usage() -> str:
    lines = ["usage: apg COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<16} {helptext}" for name, (_, helptext) in COMMANDS.items()]
    lines += ["", "options:", f"  {'-h, --help':<16} show this list and exit",
              f"  {'-V, --version':<16} print the installed version and exit"]
    return "\n".join(lines) + "\n"


def version() -> str:
    """The installed distribution's version (its package metadata), else the source tree's
    (run from a checkout that was never installed)."""
    # Lazy for start-up time: only -V needs importlib.metadata.
    from importlib import metadata

    try:
        return metadata.version("ai-proving-ground")
    except metadata.PackageNotFoundError:
        return __version__


def _suggestion(name: str) -> str:
    # Lazy for start-up time: only a mistyped command needs difflib.
    import difflib

    close = difflib.get_close_matches(name, COMMANDS, n=3, cutoff=0.6)
    close += [c for c in COMMANDS if c not in close and name and c.startswith(name)]
    return f" (did you mean {' or '.join(repr(c) for c in close[:3])}?)" if close else ""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        sys.stderr.write(usage())
        print("APG_USAGE a command is required", file=sys.stderr)
        return 2
    if args[0] in {"-h", "--help", "help"}:
        sys.stdout.write(usage())
        return 0
    if args[0] in {"-V", "--version"}:
        print(version())
        return 0
    name = args[0]
    if name == "__complete":
        # Imported like every command: only when used, so that `apg --help` stays fast.
        completion = importlib.import_module("ai_proving_ground.cli.completion")
        code: int = completion.complete(args[1:], {n: m for n, (m, _) in COMMANDS.items()})
        return code
    if name not in COMMANDS:
        print(f"APG_USAGE unknown command {name!r}{_suggestion(name)}; `apg --help` lists the "
              "commands", file=sys.stderr)
        return 2
    module = importlib.import_module(f"ai_proving_ground.cli.{COMMANDS[name][0]}")
    result: int = module.main(args[1:])
    return result


if __name__ == "__main__":
    raise SystemExit(main())
