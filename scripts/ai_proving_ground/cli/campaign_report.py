"""``apg campaign report DIR [--json] [--gate ARM=MIN ...]``: a campaign's statistics, recomputed
from its records.

Works offline on a copied campaign directory (no bed needed). Every attempt's one outcome is
counted in its own column; k/n counts pass, fail, timeout, tampered and no_attempt, never an
infra_error; completeness is checked against plan.jsonl (``missing``); a record whose fields
disagree with its outcome is a warning naming it. See ``campaigns/report.py`` for the numbers.

``--gate ARM=MIN`` (repeatable) makes the report a CI check: each named arm's pooled pass rate
must be proven at least MIN, i.e. the lower bound of its 95% Wilson interval, for every agent and
model it ran with (``campaigns/gate.py``); one line each on stderr, APG_CAMPAIGN_GATE_OK or
APG_CAMPAIGN_GATE_FAILED.

Exit codes: 0 report printed (and every gate held); 1 APG_CAMPAIGN_INVALID (campaign.json or
plan.jsonl unreadable or off-schema, or APG_CAMPAIGN_RUNS_UNREADABLE: runs/ is a
file, a link or cannot be listed); 2 APG_CAMPAIGN_NOT_FOUND (no campaign.json in DIR) or usage
(a gate that is not ARM=MIN, an arm the campaign does not have); 3 a gate failed
(APG_CAMPAIGN_GATE_FAILED; the report is printed all the same).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.campaigns.agent_usage import usage_line
from ai_proving_ground.campaigns.behaviour_rates import behaviour_lines
from ai_proving_ground.campaigns.cost import cost_line
from ai_proving_ground.campaigns.gate import Gate, evaluate
from ai_proving_ground.campaigns.records import OUTCOMES
from ai_proving_ground.campaigns.report import HIDDEN_STATUSES, build_report, summary_line
from ai_proving_ground.campaigns.triggers import trigger_lines
from ai_proving_ground.campaigns.wording import effect_lines, model_name, notes, plural
from ai_proving_ground.cli.common import ArgumentParser, render, run
from ai_proving_ground.report import say

GATE_FAILED = 3
# Short column names for the outcome counts, in OUTCOMES order.
_SHORT = {"pass": "pass", "fail": "fail", "timeout": "t/o", "tampered": "tamp",
          "no_attempt": "no_att", "infra_error": "infra"}


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg campaign report", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", help="the campaign directory (holds campaign.json and runs/)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--gate", action="append", default=[], metavar="ARM=MIN",
                        help="fail (exit 3) unless the arm's Wilson lower bound is at least MIN")
    args = parser.parse_args(argv)

    def act() -> int:
        gates = [Gate.parse(raw) for raw in args.gate]
        report = build_report(Path(args.dir))
        results = evaluate(report, gates)
        print(json.dumps(report, indent=2, ensure_ascii=False) if args.json
              else render_text(report), end="\n" if args.json else "")
        for result in results:
            say("APG_CAMPAIGN_GATE_OK" if result.holds else "APG_CAMPAIGN_GATE_FAILED",
                result.line())
        return GATE_FAILED if any(not r.holds for r in results) else 0

    return run(act)


def render_text(report: dict[str, Any]) -> str:
    campaign, totals = report["campaign"], report["totals"]
    lines = [f"Campaign {campaign['name']} (seed {campaign['seed']}): {summary_line(totals)}; "
             f"{totals['judged']} judged (k/n), {totals['infra_error']} infra errors never "
             "counted against the agent"
             + (f", {totals['retries']} more retried" if totals.get("retries") else ""),
             "", "Cells: k/n rate [95% Wilson]; outcomes; hidden verifier "
             + "/".join(HIDDEN_STATUSES)]
    cells = [{"task": c["task_id"], "arm": c["arm"], "agent": c["agent"],
              "model": model_name(c["model"]), "result": _result(c),
              **{_SHORT[o]: c["outcomes"][o] for o in OUTCOMES},
              "hidden": "/".join(str(c["hidden"][s]) for s in HIDDEN_STATUSES)}
             for c in report["cells"]]
    lines.append(render(cells, "table").rstrip("\n") if cells else "(no attempts recorded)")
    if report["arms"]:
        lines += ["", "Arms pooled over tasks: k/n rate [95% Wilson]; pass^k over tasks as cases"]
        arms = [{"arm": r["arm"], "agent": r["agent"], "model": model_name(r["model"]),
                 "result": _result(r),
                 "pass^k": "-" if r["pass_hat_k"] is None
                 else f"{r['pass_hat_k']:.2f} ({plural(r['pass_hat_k_cases'], 'task')})",
                 "infra": r["infra_errors"]} for r in report["arms"]]
        lines.append(render(arms, "table").rstrip("\n"))
    lines += ["", *effect_lines(report)]
    if report.get("triggers"):
        lines += ["", "Skill triggers, per arm:", *(f"  {line}" for line in
                                                    trigger_lines(report["triggers"]))]
    if report.get("behaviour"):
        lines += ["", "Behaviour, per arm (apart from the state checks):",
                  *(f"  {line}" for line in behaviour_lines(report["behaviour"]))]
    if report.get("cost"):
        lines += ["", cost_line(report["cost"])]
    if report.get("usage"):
        lines.append(usage_line(report["usage"]))
    lines += [f"  unreadable: {u['file']}: {u['reason']}" for u in report["unreadable"]]
    if report["missing"]:
        lines.append(f"  missing: {plural(len(report['missing']), 'planned attempt')} without a "
                     f"record (orders {', '.join(str(m['order']) for m in report['missing'][:20])})")
    said = [f"warning: {w}" for w in report["warnings"]] + notes(report)
    return "\n".join(lines + (["", *said] if said else [])) + "\n"


def _result(row: dict[str, Any]) -> str:
    low, high = row["wilson"]
    rate = "-" if row["rate"] is None else f"{row['rate']:.2f}"
    return f"{row['k']}/{row['n']} {rate} [{low:.2f}, {high:.2f}]"


if __name__ == "__main__":
    raise SystemExit(main())
