"""``apg campaign regrade DIR [--dataset FILE] [--ddev-bed PROJECT_DIR] [--json]``: grade a
finished campaign again, offline.

Every attempt's kept final state (``runs/<order>/state/``) is checked against its record,
restored into a scratch embedded bed in a temporary folder (a DDEV state: into the scratch DDEV
project ``--ddev-bed`` names, provisioned with the campaign's fixture set, reset to its baseline
before each state and at the end) and graded with the current checks of the current dataset
(the campaign's, as campaign.json names it, or ``--dataset``), the hidden verifier included. No
agent runs, no bed of the campaign is touched, and the campaign's own records are never
written: the new verdicts go to ``DIR/regrades/<UTC time>/`` (regrade.json, and runs/<order>/
with the new grade.json, hidden.json and attempt.json, so that ``apg campaign report
DIR/regrades/<time>`` gives the statistics under the new verdicts).
Printed: what changed, per attempt and per check (old verdict, new verdict); ``--json``:
regrade.json. See ``campaigns/regrade.py`` for the rules.

Stderr: ``APG_REGRADE_ATTEMPT`` per attempt graded or kept; an attempt that cannot be graded
says why with its token (``APG_REGRADE_STATE_MISSING``, ``APG_REGRADE_STATE_TAMPERED``,
``APG_REGRADE_TASK_MISSING``, ``APG_REGRADE_NEEDS_DDEV``: a DDEV state and no ``--ddev-bed``,
``APG_REGRADE_NOT_GRADED``) and is
never counted as a pass; ``APG_REGRADE_DONE`` with the totals and the folder.

Exit codes: 0 the regrade was written (whatever it found); 1 APG_CAMPAIGN_INVALID (campaign.json,
setup.json or plan.jsonl unreadable), APG_CAMPAIGN_BUSY (a run or resume is writing into DIR;
nothing written) or APG_REGRADE_BED_UNUSABLE (the --ddev-bed project does not reset to its
baseline; nothing written); 2 APG_CAMPAIGN_NOT_FOUND (no campaign.json in DIR), a dataset that
cannot be loaded, APG_REGRADE_BED_INVALID (--ddev-bed is not a DDEV project),
APG_REGRADE_BED_MISMATCH (its fixtures give another set key or baseline than the campaign's, or
that baseline is not captured there), or usage.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.cli.common import ArgumentParser, render, run
from ai_proving_ground.report import say
from ai_proving_ground.settings import Settings


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg campaign regrade", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", help="the campaign directory (holds campaign.json and runs/)")
    parser.add_argument("--dataset", help="grade with this dataset file (default: the one "
                        "campaign.json names, as it is now)")
    parser.add_argument("--ddev-bed", metavar="PROJECT_DIR",
                        help="a scratch DDEV project provisioned with the campaign's fixtures: "
                        "DDEV states are imported into it and graded there (it is reset to its "
                        "baseline before each and at the end)")
    parser.add_argument("--json", action="store_true", help="print regrade.json")
    args = parser.parse_args(argv)

    def act() -> int:
        # Lazy for start-up time: only a regrade needs the grader and the embedded site.
        from ai_proving_ground.campaigns.regrade import RegradeOptions, regrade

        record, folder = regrade(RegradeOptions(
            directory=Path(args.dir), dataset=Path(args.dataset) if args.dataset else None,
            ddev_bed=Path(args.ddev_bed) if args.ddev_bed else None,
            settings=Settings.from_environ()))
        data = record.as_json()
        say("APG_REGRADE_DONE", f"{_totals_line(data['totals'])}; records in {folder}")
        print(json.dumps(data, indent=2, ensure_ascii=False) if args.json
              else render_text(data, folder), end="\n" if args.json else "")
        return 0

    return run(act)


def _totals_line(totals: dict[str, int]) -> str:
    return (f"{totals['attempts']} attempts: {totals['regraded']} regraded, {totals['kept']} "
            f"kept, {totals['not_regradable']} not regradable; {totals['outcome_changed']} "
            f"outcomes and {totals['checks_changed']} check verdicts changed")


def render_text(data: dict[str, Any], folder: Path) -> str:
    dataset, original = data["dataset"], data["original_dataset"]
    same = ("the one the campaign ran" if dataset["sha256"] == original["sha256"]
            else f"the campaign ran sha256 {original['sha256'][:12]}")
    lines = [f"Regrade of campaign {data['campaign']}: {_totals_line(data['totals'])}",
             f"Dataset {dataset['path']} (sha256 {dataset['sha256'][:12]}; {same})", ""]
    changed = [{"attempt": f"#{a['order']:04d}", "task": a["task_id"], "arm": a["arm"],
                "agent": a["agent"], "check": p["id"], "old": p["old"] or "-",
                "new": p["new"] or "-"}
               for a in data["attempts"] for p in a["checks"] if p["id"] in a["changed"]]
    lines += ["Checks whose verdict changed:",
              render(changed, "table").rstrip("\n") if changed else "(none)", ""]
    outcomes = [{"attempt": f"#{a['order']:04d}", "task": a["task_id"], "arm": a["arm"],
                 "agent": a["agent"], "old": a["old"]["outcome"], "new": a["new"]["outcome"],
                 "reason": a["reason"]}
                for a in data["attempts"]
                if a["new"] is not None and a["new"]["outcome"] != a["old"]["outcome"]]
    lines += ["Outcomes that changed:",
              render(outcomes, "table").rstrip("\n") if outcomes else "(none)"]
    lost = [a for a in data["attempts"] if a["status"] == "not_regradable"]
    if lost:
        lines += ["", "Not regradable (never counted as a pass):"]
        lines += [f"  #{a['order']:04d} {a['task_id']} arm={a['arm']} agent={a['agent']}: "
                  f"{a['token']} {a['reason']}" for a in lost]
    lines += ["", f"Records in {folder}; statistics under the new verdicts: "
              f"apg campaign report {folder}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
