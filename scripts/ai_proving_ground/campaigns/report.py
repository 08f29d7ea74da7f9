"""``apg campaign report DIR [--json]``: the statistics of a campaign, recomputed from its records.

Reads only ``DIR/campaign.json`` and ``DIR/runs/*/attempt.json``, so it works offline on a copied
campaign directory without a live bed. Per cell (task x arm x agent x model) it gives ``k/n`` with a
95% Wilson interval, infra errors and the hidden verifier's counts; per arm x agent x model the
pooled rate, pass^k over tasks and infra errors; per agent x model the paired effect of the compared
arms (treatment − baseline) with a seeded case-level bootstrap interval.

An attempt whose status is ``infra_error`` is never an agent failure: it is left out of k/n and
counted apart. A missing or malformed ``attempt.json`` is reported the same way, naming the file.

Exit codes: 0 report printed; 1 APG_CAMPAIGN_INVALID (campaign.json unreadable or malformed);
2 APG_CAMPAIGN_NOT_FOUND (no campaign.json in DIR) or usage.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.campaigns.stats import paired_effect, pass_hat_k, wilson_interval
from ai_proving_ground.cli.common import ArgumentParser, render, run
from ai_proving_ground.errors import ApgError

CAMPAIGN_FILE = "campaign.json"
RUNS_DIR = "runs"
ATTEMPT_FILE = "attempt.json"
STATUSES = ("pass", "fail", "infra_error")
HIDDEN_STATUSES = ("pass", "fail", "error", "absent")
EXPECTED_SCORE: dict[str, float | None] = {"pass": 1.0, "fail": 0.0, "infra_error": None}
SMALL_N = 10
"""Cells with fewer valid attempts than this get a note that their intervals are wide."""
RESAMPLES = 10000
LEVEL = 0.95

CellKey = tuple[str, str, str, str | None]
GroupKey = tuple[str, str, str | None]


# ---------------------------------------------------------------------------- loading


def load_campaign(campaign_dir: Path | str) -> dict[str, Any]:
    """The spec snapshot in ``campaign.json``, checked for what the report needs.

    Needs ``seed`` (an integer) and ``arms`` (a non-empty list of arm names or of objects with a
    ``name``, or a mapping from arm name to its body, as in the spec file); an optional
    ``compare: [baseline, treatment]`` must name two different declared arms. The returned dict is
    the file's object plus ``arm_names`` (declared order) and ``compared`` (the pair the effect
    compares, or None when fewer than two arms are declared). Raises APG_CAMPAIGN_NOT_FOUND
    (exit 2) when the file is absent, APG_CAMPAIGN_INVALID otherwise.
    """
    path = Path(campaign_dir) / CAMPAIGN_FILE
    if not path.is_file():
        raise ApgError("APG_CAMPAIGN_NOT_FOUND",
                       f"no {CAMPAIGN_FILE} in {campaign_dir}; give the directory a campaign run wrote",
                       exit_code=2)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApgError("APG_CAMPAIGN_INVALID", f"{path} is not readable JSON ({exc}); restore it from the "
                       "campaign spec") from None
    if not isinstance(data, dict):
        raise ApgError("APG_CAMPAIGN_INVALID", f"{path} must hold a JSON object")
    seed = data.get("seed")
    if not _is_int(seed):
        raise ApgError("APG_CAMPAIGN_INVALID", f"{path}: seed must be an integer, got {seed!r}")
    arms = _names(data.get("arms"))
    if arms is None or not arms:
        raise ApgError("APG_CAMPAIGN_INVALID", f"{path}: arms must be a non-empty list of arm names")
    compare = data.get("compare")
    compared: list[str] | None
    if compare is not None:
        if (not isinstance(compare, list) or len(compare) != 2 or not all(c in arms for c in compare)
                or compare[0] == compare[1]):
            raise ApgError("APG_CAMPAIGN_INVALID",
                           f"{path}: compare must name two different declared arms {arms}, got {compare!r}")
        compared = [compare[0], compare[1]]
    else:
        compared = arms[:2] if len(arms) >= 2 else None
    return {**data, "arm_names": arms, "compared": compared}


def load_attempts(campaign_dir: Path | str) -> list[dict[str, Any]]:
    """Every ``runs/*/attempt.json``, in directory-name order, each with its ``file`` added.

    A run directory without a readable, well-formed ``attempt.json`` becomes a row with status
    ``infra_error``, ``malformed: True`` and the reason in ``infra_error``; it keeps whatever of
    ``task_id``, ``arm``, ``agent``, ``model``, ``index`` and ``repeat`` it could read, so it can
    still be counted in its cell. Never raises for bad records. Names starting with ``.`` and plain
    files under ``runs/`` are ignored.
    """
    runs = Path(campaign_dir) / RUNS_DIR
    if not runs.exists():
        return []
    if not runs.is_dir():
        return [_malformed(RUNS_DIR, "is not a directory", {})]
    try:
        entries = sorted(e for e in runs.iterdir() if not e.name.startswith(".") and e.is_dir())
    except OSError as exc:
        return [_malformed(RUNS_DIR, f"cannot be listed ({exc.strerror or exc})", {})]
    return [_read_attempt(e / ATTEMPT_FILE, f"{RUNS_DIR}/{e.name}/{ATTEMPT_FILE}") for e in entries]


def _read_attempt(path: Path, file: str) -> dict[str, Any]:
    if not path.is_file():
        return _malformed(file, "is missing", {})
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return _malformed(file, f"is not readable JSON ({exc})", {})
    if not isinstance(data, dict):
        return _malformed(file, "does not hold a JSON object", {})
    problem = _problem(data)
    if problem:
        return _malformed(file, problem, data)
    return {**data, "file": file, "malformed": False}


def _problem(data: dict[str, Any]) -> str | None:
    """What makes an attempt record unusable, or None."""
    for field in ("task_id", "arm", "agent"):
        if not isinstance(data.get(field), str) or not data[field]:
            return f"{field} must be a non-empty string"
    if "model" not in data or not (data["model"] is None or isinstance(data["model"], str)):
        return "model must be a string or null"
    for field in ("index", "repeat"):
        if not _is_int(data.get(field)):
            return f"{field} must be an integer"
    status = data.get("status")
    if status not in STATUSES:
        return f"status must be one of {', '.join(STATUSES)}, got {status!r}"
    score = data.get("score")
    expected = EXPECTED_SCORE[status]
    if not (score is None if expected is None else _is_number(score) and score == expected):
        return f"score {score!r} disagrees with status {status!r} (expected {expected!r})"
    hidden = data.get("hidden")
    if hidden is not None and not (isinstance(hidden, dict) and hidden.get("status") in HIDDEN_STATUSES):
        return f"hidden must be null or an object whose status is one of {', '.join(HIDDEN_STATUSES)}"
    return None


def _malformed(file: str, reason: str, data: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "file": file,
        "malformed": True,
        "status": "infra_error",
        "score": None,
        "infra_error": f"record {file} {reason}",
        "hidden": None,
    }
    for field in ("task_id", "arm", "agent"):
        value = data.get(field)
        row[field] = value if isinstance(value, str) and value else None
    if "model" in data and (data["model"] is None or isinstance(data["model"], str)):
        row["model"] = data["model"]  # absent when unknown: null is a model (the default one)
    for field in ("index", "repeat"):
        value = data.get(field)
        row[field] = value if _is_int(value) else None
    return row


def _cell_key(row: dict[str, Any]) -> CellKey | None:
    """Where a row counts, or None when a malformed record does not say."""
    task, arm, agent, model = row.get("task_id"), row.get("arm"), row.get("agent"), row.get("model")
    if "model" not in row or not (isinstance(task, str) and isinstance(arm, str) and isinstance(agent, str)):
        return None
    return (task, arm, agent, model if isinstance(model, str) else None)


# ---------------------------------------------------------------------------- the report


def build_report(campaign_dir: Path | str) -> dict[str, Any]:
    """The campaign's statistics as plain JSON-ready data (see the module docstring).

    Keys: ``campaign`` (name, seed, arms, compared pair), ``totals`` (attempts, valid, infra_errors,
    malformed), ``cells``, ``arms``, ``effects``, ``unattributed`` (infra-error rows whose cell is
    unknown: file and reason) and ``warnings``. Rates are None when n is 0; Wilson intervals are
    ``[low, high]``.
    """
    campaign = load_campaign(campaign_dir)
    rows = load_attempts(campaign_dir)
    arms: list[str] = campaign["arm_names"]
    compared: list[str] | None = campaign["compared"]
    seed: int = campaign["seed"]
    tasks_order = _names(campaign.get("tasks")) or []
    agents_order = _names(campaign.get("agents")) or []
    models_order = _names(campaign.get("models"), allow_null=True) or []

    cells: dict[CellKey, dict[str, Any]] = {}
    unattributed: list[dict[str, Any]] = []
    for row in rows:
        where = _cell_key(row)
        if where is None:
            unattributed.append({"file": row["file"], "reason": row["infra_error"]})
            continue
        cell = cells.setdefault(where, {"outcomes": [], "infra_errors": 0,
                                      "hidden": dict.fromkeys(HIDDEN_STATUSES, 0)})
        if row["status"] == "infra_error":
            cell["infra_errors"] += 1
            continue
        cell["outcomes"].append(row["status"] == "pass")
        hidden = row.get("hidden")
        cell["hidden"][hidden["status"] if isinstance(hidden, dict) else "absent"] += 1

    def cell_order(key: CellKey) -> tuple[Any, ...]:
        task, arm, agent, model = key
        return (_rank(task, tasks_order), _rank(arm, arms), _rank(agent, agents_order),
                _rank(model, models_order))

    cell_rows: list[dict[str, Any]] = []
    groups: dict[GroupKey, dict[str, list[bool]]] = {}
    group_infra: dict[GroupKey, int] = {}
    for key in sorted(cells, key=cell_order):
        task, arm, agent, model = key
        cell = cells[key]
        outcomes: list[bool] = cell["outcomes"]
        cell_rows.append({"task_id": task, "arm": arm, "agent": agent, "model": model,
                          **_rate_fields(outcomes), "infra_errors": cell["infra_errors"],
                          "hidden": cell["hidden"]})
        groups.setdefault((arm, agent, model), {})[task] = outcomes
        group_infra[(arm, agent, model)] = group_infra.get((arm, agent, model), 0) + cell["infra_errors"]

    def group_order(key: GroupKey) -> tuple[Any, ...]:
        arm, agent, model = key
        return (_rank(arm, arms), _rank(agent, agents_order), _rank(model, models_order))

    arm_rows: list[dict[str, Any]] = []
    for group in sorted(groups, key=group_order):
        arm, agent, model = group
        by_task = groups[group]
        pooled = [outcome for outcomes in by_task.values() for outcome in outcomes]
        decided = {task: outcomes for task, outcomes in by_task.items() if outcomes}
        arm_rows.append({"arm": arm, "agent": agent, "model": model, **_rate_fields(pooled),
                         "pass_hat_k": pass_hat_k(decided) if decided else None,
                         "pass_hat_k_cases": len(decided), "infra_errors": group_infra[group]})

    effects: list[dict[str, Any]] = []
    if compared is not None:
        baseline, treatment = compared
        pairs = sorted({(agent, model) for _, agent, model in groups},
                       key=lambda pair: (_rank(pair[0], agents_order), _rank(pair[1], models_order)))
        for agent, model in pairs:
            entry: dict[str, Any] = {"agent": agent, "model": model, "baseline": baseline,
                                     "treatment": treatment}
            a = groups.get((baseline, agent, model), {})
            b = groups.get((treatment, agent, model), {})
            if not any(a.get(task) and b.get(task) for task in a):
                entry.update(difference=None, low=None, high=None, cases=0, resamples=RESAMPLES,
                             seed=seed, level=LEVEL, baseline_rate=None, treatment_rate=None,
                             reason=f"no task has a valid attempt in both {baseline} and {treatment}")
            else:
                effect = paired_effect(a, b, seed=seed, resamples=RESAMPLES, level=LEVEL)
                entry.update(effect.to_dict(), reason=None)
            effects.append(entry)

    valid = sum(1 for row in rows if row["status"] != "infra_error")
    warnings: list[str] = []
    seen: dict[tuple[Any, ...], str] = {}
    for row in rows:
        where = _cell_key(row)
        if row.get("malformed") or where is None:
            continue
        identity = (*where, row["repeat"])
        if identity in seen:
            task, arm, agent, model = where
            warnings.append(f"{row['file']} repeats the attempt of {seen[identity]} "
                            f"({task}, {arm}, {agent}, {_model(model)}, repeat {row['repeat']})")
        else:
            seen[identity] = row["file"]
    undeclared: dict[str, list[str]] = {}
    for row in rows:
        if not row.get("malformed") and row["arm"] not in arms:
            undeclared.setdefault(row["arm"], []).append(row["file"])
    for arm, files in undeclared.items():
        warnings.append(f"arm {arm!r} is not declared in {CAMPAIGN_FILE} ({_plural(len(files), 'attempt')}, "
                        f"first {files[0]})")

    return {
        "campaign": {"name": campaign.get("name"), "seed": seed, "arms": arms, "compared": compared},
        "totals": {"attempts": len(rows), "valid": valid, "infra_errors": len(rows) - valid,
                   "malformed": sum(1 for row in rows if row.get("malformed"))},
        "cells": cell_rows,
        "arms": arm_rows,
        "effects": effects,
        "unattributed": unattributed,
        "warnings": warnings,
    }


def _rate_fields(outcomes: Sequence[bool]) -> dict[str, Any]:
    k, n = sum(1 for passed in outcomes if passed), len(outcomes)
    low, high = wilson_interval(k, n)
    return {"k": k, "n": n, "rate": k / n if n else None, "wilson": [low, high]}


# ---------------------------------------------------------------------------- text


def render_text(report: dict[str, Any]) -> str:
    """The report as readable text: cells, arms, the effect lines, infra errors and notes."""
    campaign, totals = report["campaign"], report["totals"]
    name = campaign.get("name") or "(unnamed)"
    lines = [
        f"Campaign {name} (seed {campaign['seed']}): {totals['attempts']} attempts, {totals['valid']} valid, "
        f"{totals['infra_errors']} infra errors (excluded from k/n; {totals['malformed']} of them "
        "missing or malformed records)",
        "",
        "Cells: k/n rate [95% Wilson interval]; hidden verifier pass/fail/error/absent",
    ]
    cells = [{"task": c["task_id"], "arm": c["arm"], "agent": c["agent"], "model": _model(c["model"]),
              "result": _result(c), "infra": c["infra_errors"],
              "hidden": "/".join(str(c["hidden"][s]) for s in HIDDEN_STATUSES)} for c in report["cells"]]
    lines.append(render(cells, "table").rstrip("\n") if cells else "(no attempts recorded)")
    if report["arms"]:
        lines += ["", "Arms pooled over tasks: k/n rate [95% Wilson]; pass^k over tasks as cases"]
        arms = [{"arm": r["arm"], "agent": r["agent"], "model": _model(r["model"]), "result": _result(r),
                 "pass^k": "-" if r["pass_hat_k"] is None
                 else f"{r['pass_hat_k']:.2f} ({_plural(r['pass_hat_k_cases'], 'task')})",
                 "infra": r["infra_errors"]} for r in report["arms"]]
        lines.append(render(arms, "table").rstrip("\n"))
    lines.append("")
    compared = campaign.get("compared")
    if compared is None:
        lines.append("Effect: not computed, the campaign declares fewer than two arms")
    elif not report["effects"]:
        lines.append(f"Effect {compared[1]} − {compared[0]}: no valid attempts to compare")
    for e in report["effects"]:
        head = f"Effect {e['treatment']} − {e['baseline']} ({e['agent']}, {_model(e['model'])}): "
        if e["difference"] is None:
            lines.append(head + f"not computed, {e['reason']}")
            continue
        rates = f"{e['treatment']} {e['treatment_rate']:.2f}, {e['baseline']} {e['baseline_rate']:.2f}"
        lines.append(head + f"{e['difference']:+.2f} [{e['low']:+.2f}, {e['high']:+.2f}] ({rates}; "
                     f"{e['level']:.0%} case-level bootstrap over {_plural(e['cases'], 'task')}, "
                     f"{e['resamples']} resamples, seed {e['seed']})")
    lines.append(f"Infra errors: {totals['infra_errors']} of {totals['attempts']} attempts, never counted "
                 "as agent failures")
    for u in report["unattributed"]:
        lines.append(f"  unattributed: {u['reason']}")
    notes = [f"warning: {w}" for w in report["warnings"]]
    small = [c for c in report["cells"] if c["n"] < SMALL_N]
    if small:
        notes.append(f"note: {len(small)} of {len(report['cells'])} cells have n < {SMALL_N} valid attempts; "
                     "their Wilson intervals are wide, read them before the rates")
    few = [e for e in report["effects"] if e["difference"] is not None and e["cases"] < SMALL_N]
    if few:
        notes.append(f"note: an effect over fewer than {SMALL_N} tasks has a rough bootstrap interval "
                     "(percentile intervals over few cases run narrow)")
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def _result(row: dict[str, Any]) -> str:
    low, high = row["wilson"]
    rate = "-" if row["rate"] is None else f"{row['rate']:.2f}"
    return f"{row['k']}/{row['n']} {rate} [{low:.2f}, {high:.2f}]"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _model(model: str | None) -> str:
    return "(default)" if model is None else model


# ---------------------------------------------------------------------------- helpers


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _names(value: Any, allow_null: bool = False) -> list[Any] | None:
    """Names from a spec list whose items are names or objects with a ``name`` (or ``id``).

    A mapping (the spec file's ``arms: {name: body}``) gives its keys in declared order. None
    unless ``value`` is a list of such items (``null`` items allowed with ``allow_null``, for the
    default model); duplicates are dropped, keeping the first.
    """
    if isinstance(value, dict):
        value = list(value)
    if not isinstance(value, list):
        return None
    names: list[Any] = []
    for item in value:
        name = item.get("name", item.get("id")) if isinstance(item, dict) else item
        if not ((isinstance(name, str) and name) or (allow_null and name is None)):
            return None
        if name not in names:
            names.append(name)
    return names


def _rank(value: Any, declared: list[Any]) -> tuple[int, int, str]:
    """Declared order first, then anything undeclared by name."""
    if value in declared:
        return (0, declared.index(value), "")
    return (1, 0, "" if value is None else str(value))


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="apg campaign report", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dir", help="the campaign directory (holds campaign.json and runs/)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)

    def act() -> int:
        report = build_report(Path(args.dir))
        if args.json:
            print(json.dumps(report, indent=2, ensure_ascii=False))
        else:
            print(render_text(report), end="")
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
