"""``apg campaign run --dry-run``: what each attempt would get, resolved by the real run's own code.

The runner first makes every check the real run makes before writing anything (the spec, its
dataset, tasks, checks, hidden verifiers and skill catalogs; the executor; the output and beds
folders; the template; every adapter and each arm's variables against its allow-list), so a spec
the dry run accepts is one the real run accepts, with the same token and message when it is not.
Then, for each cell (task, arm, agent, model), this module asks ``apg run``'s own planning
(:func:`tasks.run.plan_run`: the task, the adapter, the credential preflight, the sandbox and
its network preflight) and builds the adapter's environment with :func:`tasks.run.adapter_environment`
in a scratch run directory that is removed afterwards, installing the arm's skills and
instructions there as a real run would (their hashes checked again). What it shows:

* ``command``: the adapter's program, run with no arguments in the job's bed (``cwd``) under
  ``sandbox`` (the backend that works here); ``confined``: that command inside its sandbox, the
  whole line as ``apg run`` builds it (:func:`tasks.sandboxing.confine_adapter`), when the spec
  names its bed (a template the runner is yet to make has no binds to plan: null); ``timeout_s``;
* ``env``: every variable the adapter gets, with ``<bed>`` for the job's bed and ``<run>`` for the
  attempt's run directory; a value the adapter's ``## Env:`` header takes from the host is shown
  as ``(from the host)``, never printed;
* ``setup``: the arm's ``apg site`` steps, in order; ``given``: the skills (name, SHA-256) and the
  instructions' destination and SHA-256; ``installs``: the files put in the run's HOME;
* ``refused``: what would stop this attempt as an infrastructure error (for instance a
  credential preflight that refuses), else null.

Repeats of one cell get the same entry; the text form prints it once and names the repeats.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import tempfile
from pathlib import Path
from typing import Any

from ai_proving_ground import report
from ai_proving_ground.arms.given import ARM_RECORD
from ai_proving_ground.campaigns.spec import Attempt, Campaign
from ai_proving_ground.errors import ApgError
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.request import PROMPT_FILE, REQUEST_FILE
from ai_proving_ground.tasks.run import (
    ALLOWED_HOST_VARIABLES,
    RunOptions,
    RunPlan,
    adapter_environment,
    plan_run,
)
from ai_proving_ground.tasks.sandboxing import confine_adapter

BED, RUN, RUN_ID = "<bed>", "<run>", "<run id>"
FROM_HOST = "(from the host)"
Cell = tuple[str, str, str, str | None]


def describe_attempts(campaign: Campaign, attempts: list[Attempt], bed: Path,
                      settings: Settings) -> list[dict[str, Any]]:
    """One entry per attempt, in start order: its plan fields and what it would get."""
    cells: dict[Cell, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="apg-dry-run-") as scratch:
        for attempt in attempts:
            cell = (attempt.task_id, attempt.arm, attempt.agent, attempt.model)
            if cell not in cells:
                cells[cell] = _cell(campaign, attempt, bed, settings,
                                    Path(scratch) / f"cell-{len(cells)}")
    return [{**a.as_plan(), **cells[(a.task_id, a.arm, a.agent, a.model)]} for a in attempts]


def _cell(campaign: Campaign, attempt: Attempt, bed: Path, settings: Settings,
          scratch: Path) -> dict[str, Any]:
    spec = campaign.spec
    arm = spec.arm(attempt.arm)
    entry: dict[str, Any] = {
        "setup": [["apg", "site", *step] for step in arm.setup],
        "given": arm.given.record().as_json() if arm.given.recorded else None,
        "timeout_s": spec.agent_timeout_s, "cwd": BED, "command": None, "adapter": None,
        "sandbox": None}
    options = RunOptions(task_id=attempt.task_id, approot=bed, agent=attempt.agent,
                         dataset=str(campaign.dataset.path), model=attempt.model,
                         extra_env=arm.agent_env, arm=arm.given, timeout_s=spec.agent_timeout_s,
                         settings=settings)
    run_dir = scratch / "apg-run-dry"
    run_dir.mkdir(parents=True)
    try:
        plan = plan_run(options)
        entry["command"] = [_placeholders(str(plan.adapter.path), bed, run_dir)]
        entry["adapter"] = {"name": plan.adapter.name, "credentials": plan.adapter.header.credentials}
        entry["sandbox"] = plan.backend.name
        env = adapter_environment(os.environ, plan, run_dir, run_dir / REQUEST_FILE,
                                  run_dir / PROMPT_FILE)
    except ApgError as exc:
        return {**entry, "env": None, "confined": None, "installs": [],
                "refused": f"{exc.token} {exc.message}"}
    header = plan.adapter.header
    from_host = {name for name in header.env
                 if name not in arm.agent_env and name in os.environ and name in env
                 and env[name] == os.environ[name] and name not in ALLOWED_HOST_VARIABLES}
    entry["env"] = {name: FROM_HOST if name in from_host else _placeholders(env[name], bed, run_dir)
                    for name in sorted(env)}
    entry["confined"] = _confined(plan, bed, run_dir, env)
    entry["installs"] = sorted(_placeholders(str(p), bed, run_dir) for p in run_dir.rglob("*")
                               if p.is_file() and p.name != ARM_RECORD)
    entry["refused"] = (f"APG_RUN_CRED_REFUSED {plan.preflight.reason}"
                        if plan.preflight.refused else None)
    return entry


def _confined(plan: RunPlan, bed: Path, run_dir: Path, env: dict[str, str]) -> list[str] | None:
    """The whole command line, sandbox included, as ``apg run`` builds it; None while the bed is
    yet to be made (the runner's own template: its binds cannot be planned before it exists)."""
    if not bed.is_dir():
        return None
    with report.redirected(io.StringIO(), io.StringIO()):  # its notes are the real run's to say
        confinement = confine_adapter(plan.backend, plan.sandbox, bed, run_dir, plan.adapter,
                                      plan.dataset, plan.task, env, os.environ)
    return [_placeholders(arg, bed, run_dir) for arg in confinement.wrap([str(plan.adapter.path)])]


def _placeholders(value: str, bed: Path, run_dir: Path) -> str:
    if value == run_dir.name:  # APG_RUN_ID: made when the attempt starts
        return RUN_ID
    return value.replace(str(run_dir), RUN).replace(str(bed), BED)


def json_lines(entries: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(entry, sort_keys=True) + "\n" for entry in entries)


def text(entries: list[dict[str, Any]]) -> str:
    """For a person: each cell once, in the order its first attempt starts."""
    shown: dict[str, int] = {}
    lines: list[str] = []
    for entry in entries:
        head = (f"#{entry['order']:04d} {entry['task_id']} arm={entry['arm']} "
                f"agent={entry['agent']} model={entry['model'] or '-'} repeat={entry['repeat']}")
        key = json.dumps({k: entry[k] for k in ("task_id", "arm", "agent", "model")})
        if key in shown:
            lines.append(f"{head}: as #{shown[key]:04d}")
            continue
        shown[key] = entry["order"]
        lines.append(head)
        lines += [f"  setup: {shlex.join(step)}" for step in entry["setup"]]
        if entry["command"] is not None:
            lines.append(f"  command: {shlex.join(entry['command'])} (in {BED}, sandbox "
                         f"{entry['sandbox']}, timeout {entry['timeout_s'] or 'none'})")
        if entry["confined"] is not None:
            lines.append(f"  confined: {shlex.join(entry['confined'])}")
        lines += [f"  env: {name}={value}" for name, value in (entry["env"] or {}).items()]
        given = entry["given"] or {}
        lines += [f"  skill: {s['name']} sha256 {s['sha256']}" for s in given.get("skills", [])]
        if given.get("instructions_to"):
            lines.append(f"  instructions: to {given['instructions_to']}, sha256 "
                         f"{given['instructions_sha256']}")
        lines += [f"  installs: {path}" for path in entry["installs"]]
        if entry["refused"]:
            lines.append(f"  refused (an infra_error): {entry['refused']}")
    return "".join(line + "\n" for line in lines)
