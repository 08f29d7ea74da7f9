"""The main job end to end: an embedded bed provisioned and checked, then one task attempted by
the oracle (the ceiling, scores 1) and by nop (the floor, scores 0), each graded from its run,
and last the shipped example campaign (``apg campaign run example``: four attempts, two jobs),
whose report it points to.

Run by ``make demo`` (``nox -s demo``). The bed lives in ``build/demo-bed`` unless a directory
is given, the campaign's records beside it in ``demo-campaign``. A bed this demo made earlier is
reused, so a second run shows provision's no-op; ``--fresh`` replaces it. A campaign directory
is replaced when it holds the demo's own campaign (its ``campaign.json`` names the example). A
directory the demo did not make is refused.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.bed import init_bed
from ai_proving_ground.campaigns.records import CampaignFiles, read_campaign
from ai_proving_ground.campaigns.spec import find_spec, load_spec
from ai_proving_ground.cli import campaign as campaign_cli
from ai_proving_ground.cli import doctor as doctor_cli
from ai_proving_ground.cli import provision as provision_cli
from ai_proving_ground.cli import reset as reset_cli
from ai_proving_ground.cli import site as site_cli
from ai_proving_ground.cli.common import run
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_text
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.grade import GradeRequest, after_emit, check_envelope, grade
from ai_proving_ground.tasks.run import RunOptions, run_task
from ai_proving_ground.tasks.site_access import apg_command

DEMO_MARKER = ".apg-demo-bed"
DEMO_CAMPAIGN = "example"  # shipped: campaigns/example.yml


def _prepare(target: Path, fresh: bool) -> bool:
    """True when a bed made by the demo is already there and is kept."""
    if not target.exists():
        return False
    if not (target / DEMO_MARKER).is_file():
        raise ApgError("APG_DEMO_REFUSED", f"{target} exists and was not made by the demo; "
                       "remove it or pass another directory")
    if fresh:
        shutil.rmtree(target)
        return False
    return True


def _section(title: str) -> None:
    print(f"\n== {title}", flush=True)


DEMO_TASK = "dv01_view_build"
DEMO_SET = ("kb_docs",)  # the task's fixtures (datasets/build_tasks.yml)


def _attempt_and_grade(target: Path, agent: str, expected: float, settings: Settings) -> int:
    """Reset, hand the task to an adapter, grade the recorded run, print the verdict."""
    bed = ["--approot", str(target)]
    _section(f"apg reset; apg run {DEMO_TASK} --agent={agent}; apg grade {DEMO_TASK} --run=...")
    code = reset_cli.main(bed)
    if code != 0:
        return code
    outcome = run_task(RunOptions(task_id=DEMO_TASK, approot=target, agent=agent,
                                  settings=settings))
    if outcome.exit_code != 0:
        return outcome.exit_code
    run_id = str(outcome.record["run_id"])
    request = GradeRequest(approot=target, task_id=DEMO_TASK, run_id=run_id, settings=settings)
    envelope = grade(request, EmbeddedSite(target))
    result = check_envelope(envelope)
    after_emit(request, envelope)
    print(f"{agent}: score {result.score} ({result.verdict}, checks passed "
          f"{result.checks_passed}); envelope saved in {outcome.run_dir / 'grade.json'}")
    if result.score != expected:
        raise ApgError("APG_DEMO_UNEXPECTED", f"{agent} scored {result.score}, expected "
                       f"{expected}")
    return 0


def _campaign(records: Path) -> int:
    """The shipped example campaign into ``records``, replacing the demo's previous one."""
    if records.exists():
        try:
            made = read_campaign(CampaignFiles(records)).name
        except ApgError:  # not a campaign directory, or not one of ours
            made = None
        if made != load_spec(find_spec(DEMO_CAMPAIGN)).name:
            raise ApgError("APG_DEMO_REFUSED", f"{records} exists and holds no demo campaign; "
                           "remove it or pass another bed directory")
        shutil.rmtree(records)
    _section(f"apg campaign run {DEMO_CAMPAIGN} --out {records}")
    sys.stdout.flush()
    code = campaign_cli.main(["run", DEMO_CAMPAIGN, "--out", str(records)])
    sys.stderr.flush()
    return code


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ai_proving_ground.demo", description=__doc__)
    parser.add_argument("directory", nargs="?", default="build/demo-bed")
    parser.add_argument("--fresh", action="store_true", help="replace an earlier demo bed")
    args = parser.parse_args(argv)

    def act() -> int:
        target = Path(args.directory).absolute()
        if _prepare(target, args.fresh):
            _section(f"reusing the demo bed at {target} (--fresh makes a new one)")
        else:
            _section(f"apg bed init {target}")
            init_bed(target)
            atomic_write_text(target / DEMO_MARKER, "made by ai_proving_ground.demo\n")
        bed = ["--approot", str(target)]
        for title, main, command in (
            ("apg site status", site_cli.main, ["status"]),
            ("apg site pm:list --status=enabled", site_cli.main, ["pm:list", "--status=enabled"]),
            # The set the demo's task is graded on, so that reset, doctor and the envelopes all
            # name one baseline (with no fixture named, reset and doctor take the provisioned set).
            (f"apg provision {' '.join(DEMO_SET)}", provision_cli.main, ["--json", *DEMO_SET]),
            ("apg doctor", doctor_cli.main, []),
        ):
            _section(title)
            sys.stdout.flush()
            code = main([*bed, *command])
            sys.stderr.flush()
            if code != 0:
                return code
        for agent, expected in (("oracle", 1.0), ("nop", 0.0)):
            code = _attempt_and_grade(target, agent, expected, Settings.from_environ())
            if code != 0:
                return code
        records = target.with_name("demo-campaign")
        code = _campaign(records)
        if code != 0:
            return code
        # By its path: a bare `apg` found on the demo's PATH says nothing of the user's shell
        # (nox puts its venv first on the PATH of what it runs, and nowhere else).
        apg = apg_command()
        hint = shlex.join([*apg, "site", "--approot", str(target), "config:list", "node."])
        print(f"\nThe campaign's report is {records / 'report.txt'} "
              f"(`{shlex.join([*apg, 'campaign', 'report', str(records)])}`)")
        print(f"The bed is at {target}; try `{hint}`")
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
