"""Grading: evaluate a task's checks against live state and build the every_eval_ever envelope.

The envelope is printed first; saving grade.json and storing the envelope come after and can
never change the verdict or the exit code (their failures are reported on stderr only).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ai_proving_ground import __version__, proc
from ai_proving_ground.baselines import grader_tree
from ai_proving_ground.baselines.store import runs_dir
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixtures import load_set
from ai_proving_ground.paths import portable_path
from ai_proving_ground.records import parse_record
from ai_proving_ground.report import say
from ai_proving_ground.scorers.grading import apply_behaviour
from ai_proving_ground.scorers.judge import Votes
from ai_proving_ground.scorers.triggers import apply_trigger
from ai_proving_ground.scorers.turns import apply_turns
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.sites.base import SiteDriver
from ai_proving_ground.tasks import checks as checks_module
from ai_proving_ground.tasks import hidden, results
from ai_proving_ground.tasks.checks import CheckResult, run_checks
from ai_proving_ground.tasks.dataset import Dataset, Task, resolve_task
from ai_proving_ground.tasks.envelope import Envelope, write_envelope
from ai_proving_ground.tasks.run import site_command
from ai_proving_ground.tasks.run_record import RunRecord

RUN_ID = re.compile(r"^apg-run-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$")
SKIP_EXIT = 3


@dataclass(frozen=True)
class GradeRequest:
    approot: Path
    task_id: str
    dataset: str | None = None
    model: str | None = None
    run_id: str | None = None
    settings: Settings = field(default=DEFAULT_SETTINGS, compare=False)
    # Grade a run that recorded no attempt, or whose task changed since (never by default).
    force: bool = False
    # Apply the task's hidden verifier too, when it has one (a campaign runs its own).
    hidden: bool = True
    # The judge votes to serve first and to collect (a campaign keeps them per attempt).
    votes: Votes | None = field(default=None, compare=False)


def _run_invalid(reason: str) -> ApgError:
    return ApgError("APG_GRADE_RUN_INVALID", reason)


def load_run(approot: Path, run_id: str, task_id: str, model: str | None,
             settings: Settings = DEFAULT_SETTINGS) -> dict[str, Any]:
    """The recorded run, checked against what is being graded."""
    if not RUN_ID.match(run_id):
        raise _run_invalid(f"{run_id!r} is not a run id (apg-run-YYYYmmddTHHMMSSZ-xxxxxx)")
    path = runs_dir(approot, settings) / run_id / "run.json"
    try:
        record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise _run_invalid(f"{path} does not exist") from None
    except (OSError, ValueError) as exc:
        raise _run_invalid(f"{path} is unreadable: {exc}") from None
    if not isinstance(record, dict) or record.get("run_id") != run_id:
        raise _run_invalid(f"{path} does not record run {run_id}")
    try:  # through run.json's one definition, so every field below is what the schema says
        record = parse_record(record, RunRecord, str(path)).as_json()
    except ApgError as exc:
        raise _run_invalid(exc.message) from None
    if record.get("task_id") != task_id:
        raise _run_invalid(f"run {run_id} attempted task {record.get('task_id')!r}, not {task_id!r}")
    recorded = record.get("model")
    if model and recorded and model != recorded:
        raise _run_invalid(f"model {model!r} conflicts with the run's recorded model {recorded!r}")
    return record


def check_run_happened(record: dict[str, Any], task: Task, force: bool) -> None:
    """Only an attempt is graded, and only against the task that ran (``force`` overrides)."""
    if force:
        return
    run_id, status = record.get("run_id"), record.get("status")
    if status != "attempted":
        raise _run_invalid(f"run {run_id} recorded no attempt (status {status!r}, adapter exit "
                           f"{record.get('adapter_exit_code')}); nothing was graded or stored. "
                           "Pass --force to grade its bed anyway")
    try:
        current = task.sha256
    except (OSError, ValueError) as exc:  # a task that cannot be hashed cannot be matched
        current = f"unresolved ({exc})"
    if record.get("task_sha256") != current:
        raise _run_invalid(f"run {run_id} attempted task {task.id} with sha256 "
                           f"{record.get('task_sha256')}, but the dataset's task {task.id} now has "
                           f"sha256 {current}; grade it against the dataset it ran, or pass "
                           "--force")


def grade(request: GradeRequest, driver: SiteDriver) -> dict[str, Any]:
    """The envelope for one graded attempt; a task without checks raises APG_GRADE_SKIP."""
    run = (load_run(request.approot, request.run_id, request.task_id, request.model,
                    request.settings) if request.run_id is not None else None)
    model = (request.model or (run or {}).get("model") or agent_model(run)
             or baseline_model(run) or None)
    dataset, task = resolve_task(request.task_id, request.dataset, request.approot,
                                 request.settings)
    if not task.checks and (task.trigger is None or request.run_id is None):
        # A trigger case is graded on the run's transcript: without --run there is nothing.
        why = ("is a skill trigger case, graded on a run's transcript; give --run=RUN_ID"
               if task.trigger is not None else "has no checks")
        raise ApgError("APG_GRADE_SKIP", f"task {task.id} {why}; nothing was graded",
                       exit_code=SKIP_EXIT)
    if run is not None:
        check_run_happened(run, task, request.force)
    outcome = (run_checks(task.checks, driver, request.approot, task.fixtures, request.settings)
               if task.checks else [])
    envelope = build_envelope(request, dataset, task, outcome, model, run)
    if task.trigger is not None and request.run_id is not None:  # whether the skill loaded
        apply_trigger(envelope["evaluation_results"][0]["score_details"],
                      runs_dir(request.approot, request.settings) / request.run_id,
                      task.trigger, graded=not task.checks)
    if task.behaviour and request.run_id is not None:  # what the agent did: its transcript
        apply_behaviour(envelope["evaluation_results"][0]["score_details"],
                        runs_dir(request.approot, request.settings) / request.run_id,
                        task.behaviour, request.approot, request.settings, request.votes)
    if task.turns and request.run_id is not None:  # which turns were sent, and what each did
        apply_turns(envelope["evaluation_results"][0]["score_details"],
                    runs_dir(request.approot, request.settings) / request.run_id, run, task,
                    request.approot, request.settings, request.votes)
    if request.hidden:
        apply_hidden(envelope, request.approot, dataset, task)
    return envelope


def apply_hidden(envelope: dict[str, Any], approot: Path, dataset: Dataset, task: Task) -> None:
    """Run the task's hidden verifier (when it has one) and fold it into the verdict: a pass
    needs both the public checks and the hidden verifier, as in a campaign."""
    details = envelope["evaluation_results"][0]["score_details"]
    verifier = hidden.resolve_verifier(dataset, task)
    if verifier is None:
        details["details"]["hidden_verifier"] = "absent"
        return
    env = proc.child_env(os.environ)
    with tempfile.TemporaryDirectory(prefix="apg-hidden-") as scratch:
        result = hidden.run_hidden(approot, verifier, env, Path(scratch), site_command(approot))
    if result.status == "error":
        raise ApgError("APG_GRADE_HIDDEN_ERROR", f"task {task.id}: the hidden verifier could not "
                       f"run a command: {result.checks[-1].get('error')}; no verdict")
    details["details"]["hidden_verifier"] = result.status
    details["details"]["hidden_checks"] = json.dumps(result.checks, sort_keys=True)
    if result.status != "pass":
        details["score"] = 0.0
        details["details"]["verdict"] = "fail"


def _dataset_provenance(request: GradeRequest, dataset: Dataset, task: Task) -> dict[str, str]:
    try:
        return {"dataset_path": dataset.portable_path(request.approot),
                "dataset_sha256": dataset.sha256, "task_sha256": task.sha256}
    except (OSError, ValueError, ApgError) as exc:
        say("APG_GRADE_DATASET_UNRESOLVED", str(exc))
        return {"dataset_provenance": f"unresolved: {exc}"}


def _sandbox_provenance(run: dict[str, Any] | None) -> dict[str, str]:
    """How the graded attempt was confined, as run.json recorded it."""
    sandbox = (run or {}).get("sandbox")
    if not isinstance(sandbox, dict):
        return {"apg_sandbox": "unrecorded"}
    return {"apg_sandbox": str(sandbox.get("backend")),
            "apg_sandbox_unconfined_allowed": str(sandbox.get("unconfined_allowed") is True).lower(),
            "apg_sandbox_network": str(sandbox.get("network", "")).lower()}


def _grader_provenance(request: GradeRequest, task: Task) -> dict[str, str]:
    details = {"hash_algorithm": "sha256"}
    class_file = Path(checks_module.__file__)
    try:
        # Both or neither: a file named without its hash would read as verified.
        details.update(grader_class_file=portable_path(class_file, request.approot),
                       grader_class_sha256=grader_tree.sha256_file(class_file))
    except OSError as exc:
        say("APG_GRADE_GRADER_UNRESOLVED", f"grader class file: {exc}")
        details["grader_class"] = f"unresolved: {exc}"
    try:
        fixture_set = load_set(task.fixtures, request.approot, settings=request.settings)
        files = grader_tree.fingerprint(request.approot, fixture_set)
        details["grader_tree_sha256"] = grader_tree.tree_sha256(files)
        # The baseline's identity: a verdict can never be attributed to the wrong known state.
        details["fixture_set_key"] = fixture_set.key
        details["fixture_set"] = fixture_set.canonical
    except (OSError, ApgError) as exc:
        say("APG_GRADE_GRADER_UNRESOLVED", f"grader tree: {exc}")
        details["grader_tree"] = f"unresolved: {exc}"
    return details


def _agent_transcript(run: dict[str, Any] | None) -> dict[str, Any]:
    summary = (run or {}).get("agent_transcript")
    return summary if isinstance(summary, dict) else {}


def agent_model(run: dict[str, Any] | None) -> str | None:
    """The model the agent CLI's own transcript names (developer/model), if it names one."""
    model = _agent_transcript(run).get("model")
    return model if isinstance(model, str) and model else None


# The shipped baseline adapters run no model: they are this product's own scripted agents, so
# their envelopes name this product as the developer (every_eval_ever wants developer/model).
BASELINE_ADAPTERS = ("nop", "oracle")
BASELINE_DEVELOPER = "ai-proving-ground"


def baseline_model(run: dict[str, Any] | None) -> str | None:
    """``ai-proving-ground/<adapter>`` for an attempt made by a shipped baseline adapter."""
    adapter = (run or {}).get("adapter")
    if not isinstance(adapter, dict) or adapter.get("source") != "shipped":
        return None
    name = adapter.get("name")
    return f"{BASELINE_DEVELOPER}/{name}" if name in BASELINE_ADAPTERS else None


def agent_details(run: dict[str, Any] | None) -> dict[str, str]:
    """Which agent made the attempt (its adapter, as run.json names it) and what the agent's
    transcript says about it, as the envelope's string details."""
    summary = _agent_transcript(run)
    usage: dict[str, Any] = summary["usage"] if isinstance(summary.get("usage"), dict) else {}
    adapter = (run or {}).get("adapter")
    adapter_name = adapter.get("name") if isinstance(adapter, dict) else None
    # A transcript is parsed by the parser registered under the adapter's name, so a parsed one
    # (no "error") means the CLI of that name wrote it.
    cli = adapter_name if summary and "error" not in summary else None
    found = {"agent_adapter": adapter_name, "agent_cli": cli,
             "agent_model": summary.get("model"), "agent_cli_version": summary.get("cli_version"),
             "agent_turns": summary.get("turns"), "agent_tool_calls": summary.get("tool_calls"),
             "agent_commands": summary.get("commands"),
             "agent_permission_denials": summary.get("permission_denials"),
             "agent_input_tokens": usage.get("input_tokens"),
             "agent_output_tokens": usage.get("output_tokens"),
             "agent_cost_usd": summary.get("cost_usd")}
    return {key: str(value) for key, value in found.items() if value is not None}


def _model_info(model: str | None, run: dict[str, Any] | None = None) -> dict[str, Any]:
    model_id = model or "unknown/unknown"
    developer, _, name = model_id.rpartition("/")
    info: dict[str, Any] = {"name": name or model_id, "id": model_id}
    if developer:
        info["developer"] = developer.split("/")[0]
        info["inference_platform"] = info["developer"]
    # every_eval_ever 0.3.0 requires both keys from closed sets. A model named on the command line
    # is reached through its vendor's service; whether its weights are published is not ours to say.
    baseline = model is not None and model == baseline_model(run)
    deployment = "self_deployed" if baseline else "externally_managed" if model else "unknown"
    info["additional_details"] = {"deployment_type": deployment,
                                  "model_availability": "open_weights" if baseline else "unknown",
                                  **agent_details(run)}
    return info


def _epoch(iso_or_none: Any) -> str | None:
    """Epoch seconds of an ISO-8601 time; without an offset it is UTC (never local time)."""
    if not isinstance(iso_or_none, str):
        return None
    text = iso_or_none.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return str(int(moment.timestamp()))


def _run_id_epoch(run_id: str | None) -> str | None:
    """The time a run id was minted (apg-run-YYYYmmddTHHMMSSZ-xxxxxx), in epoch seconds."""
    if not run_id or not RUN_ID.match(run_id):
        return None
    try:
        moment = datetime.strptime(run_id.split("-")[2], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
    return str(int(moment.timestamp()))


def build_envelope(request: GradeRequest, dataset: Dataset, task: Task,
                   outcome: list[CheckResult], model: str | None,
                   run: dict[str, Any] | None) -> dict[str, Any]:
    now = time.time()
    passed = all(r.passed for r in outcome)
    model_id = model or "unknown/unknown"
    suffix = request.run_id or f"{int(now)}-{secrets.token_hex(4)}"
    # With --run the time is the attempt's, so an identical re-grade is the same measurement.
    evaluated_at = (_epoch((run or {}).get("finished_at")) or _run_id_epoch(request.run_id)
                    or str(int(now)))
    source_details = _dataset_provenance(request, dataset, task)
    if request.run_id:
        source_details["apg_run_id"] = request.run_id
        source_details.update(_run_details(run or {}))
        source_details.update(_sandbox_provenance(run))
    failed = [r.id for r in outcome if not r.passed]
    name = f"{dataset.name}.{task.id}"
    return {
        "schema_version": "0.2.2",
        "evaluation_id": f"{dataset.name}/{task.id}/{model_id}/{suffix}",
        "evaluation_timestamp": evaluated_at,
        "retrieved_timestamp": f"{now:.6f}",
        "source_metadata": {
            "source_name": "apg",
            "source_type": "evaluation_run",
            "source_organization_name": request.settings.organization or "ai_proving_ground",
            "evaluator_relationship": "third_party",
            "additional_details": source_details,
        },
        "model_info": _model_info(model, run),
        "eval_library": {"name": "apg", "version": __version__,
                         "additional_details": _grader_provenance(request, task)},
        "evaluation_results": [{
            "evaluation_result_id": f"{name}.pass",
            "evaluation_name": name,
            "source_data": {"source_type": "other", "dataset_name": dataset.name,
                            "additional_details": {"task_id": task.id,
                                                   "dataset_version": str(dataset.version)}},
            "evaluation_timestamp": evaluated_at,
            "metric_config": {
                "evaluation_description": f"State-based grader: checks the live site after one "
                                          f"attempt at task {task.id}; 1 = every check passed.",
                "metric_id": "pass_at_k", "metric_name": "pass@1", "metric_kind": "pass_rate",
                "metric_unit": "proportion", "metric_parameters": {"k": 1},
                "lower_is_better": False, "score_type": "binary", "min_score": 0, "max_score": 1,
                "additional_details": {"grader_type": "state_based"},
            },
            "score_details": {
                "score": 1.0 if passed else 0.0,
                "details": {
                    "verdict": "pass" if passed else "fail",
                    "attempt_index": "1",
                    "checks_passed": f"{len(outcome) - len(failed)}/{len(outcome)}",
                    "failed_checks": ", ".join(failed),
                    "checks": json.dumps([r.as_json() for r in outcome], sort_keys=True),
                    **agent_details(run),
                },
                "uncertainty": {"num_samples": 1},
            },
        }],
    }


def _run_details(run: dict[str, Any]) -> dict[str, str]:
    """What the run recorded about itself: its status, timing and time limit (as strings)."""
    found = {"apg_run_status": run.get("status"), "apg_run_started_at": run.get("started_at"),
             "apg_run_finished_at": run.get("finished_at"),
             "apg_run_timeout_s": run.get("timeout_s"),
             "apg_run_adapter_exit_code": run.get("adapter_exit_code")}
    return {key: str(value) for key, value in found.items() if value is not None}


def check_envelope(envelope: dict[str, Any]) -> Envelope:
    """Our own output must meet our own schema; anything else is a bug, not a verdict."""
    return parse_record(envelope, Envelope, "the envelope grade emits", "APG_GRADE_ENVELOPE_INVALID")


def after_emit(request: GradeRequest, envelope: dict[str, Any]) -> None:
    """Save grade.json and store the envelope; report failures, never raise."""
    if request.run_id:
        try:
            path = runs_dir(request.approot, request.settings) / request.run_id / "grade.json"
            write_envelope(path, Envelope.from_json(envelope))
        except Exception as exc:  # a save problem must never turn a verdict into a failure
            say("APG_GRADE_NOT_SAVED", str(exc))
    if request.settings.no_import:
        return
    try:
        state = results.store(request.approot, envelope, request.settings)
        say("APG_GRADE_STORED", f"{envelope['evaluation_id']}: {state} in the results store")
    except ApgError as exc:
        say("APG_GRADE_NOT_STORED", exc.message)
    except Exception as exc:  # storage failures are reported, never fatal
        say("APG_GRADE_NOT_STORED", f"{type(exc).__name__}: {exc}")
