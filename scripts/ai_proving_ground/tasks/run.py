"""Running an agent: resolve a task, hand it to an adapter, record the attempt. Never grades.

The run directory is ``<baseline dir>/runs/<run-id>/`` (beside the baselines, so reset leaves it):

``run.json``     the authoritative record, written new-then-rename: first ``status: running``,
                 then the final status (``attempted``, ``no_attempt``, ``refused``, ``interrupted``)
``prompt.txt``   the task prompt, verbatim (``APG_PROMPT_FILE``)
``request.json`` the run request (``APG_REQUEST_FILE``, ``tasks.request.RunRequest``): no dataset path
``reference_solution.json``  the oracle's alone (``APG_REFERENCE_FILE``), removed when it exits
``stdout.log``, ``stderr.log``  the adapter's output, teed to the terminal, capped (AI_PG_LOG_LIMIT)
``transcript.json`` and an agent CLI's raw output: its stream from ``stdout.log``, its session from ``work/``
``work/``, ``home/``, ``tmp/``  the adapter's ``APG_RUN_DIR``, ``HOME``, ``TMPDIR``; ``work/git`` its
                 own ``GIT_DIR`` (the bed's ``.git`` is the harness's, hidden from it)
``turns/<n>/``   a task of several turns: each turn's files (``tasks.turns``), the adapter run
                 again for each later turn, resuming its session

Confined (``tasks.sandboxing``), the adapter writes only the bed, ``work/``, HOME and TMPDIR;
apg's records it can read, not change, and apg checks each before use (``tasks.run_files``:
``APG_RUN_RECORD_BROKEN``, exit 1). The dataset, the escrow, other runs and the operator's HOME
are out of its sight; a DDEV bed's site is ``site.sock`` in its run directory. ``run.json``'s
``sandbox`` says what was allowed. No sandbox: ``APG_RUN_UNCONFINED`` unless ``allow_unconfined``.

The adapter runs in the app root with an environment built from an allow-list: ``PATH``,
``LANG``, ``LC_*``, ``TERM``, ``TZ``, ``TMPDIR``, the names its ``## Env:`` header declares, and
the request variables (``APG_*``, which win over anything declared). ``RunOptions.extra_env``
adds values a harness chooses (a campaign arm's ``agent_env``): only for names the adapter
declares or names starting ``APG_ARM_``; any other name refuses the run before anything is
written (``APG_RUN_ENV_REFUSED``), so an arm cannot smuggle in ``PATH``, ``HOME`` or a credential
the adapter never asked for. ``HOME`` is the run's own ``home/`` (no host logins such as
``~/.claude``); only a host-shared adapter (``AI_PG_ALLOW_HOST_CREDS=1``) gets the host's HOME.
Stdin is /dev/null unless ``## Interactive: yes``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ai_proving_ground import proc
from ai_proving_ground.arms.given import Given, arm_home, given_files
from ai_proving_ground.baselines.locking import only_one
from ai_proving_ground.baselines.store import runs_dir
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_text
from ai_proving_ground.report import say
from ai_proving_ground.sandbox.confine import Backend, SandboxOptions
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.tasks import run_transcript
from ai_proving_ground.tasks.adapters import ENV_NAME, Adapter, find_adapter, selected_name
from ai_proving_ground.tasks.dataset import Dataset, Task, resolve_task
from ai_proving_ground.tasks.preflight import ALLOW_VARIABLE, Preflight, preflight
from ai_proving_ground.tasks.request import PROMPT_FILE, REFERENCE_FILE, REQUEST_FILE, write_request
from ai_proving_ground.tasks.run_files import RunFiles
from ai_proving_ground.tasks.run_record import write_run
from ai_proving_ground.tasks.run_spawn import TRANSCRIPTS, TimedOut, spawn
from ai_proving_ground.tasks.sandboxing import (
    confine_adapter,
    plan_sandbox,
    run_folders_env,
    run_home,
    run_work,
)
from ai_proving_ground.tasks.site_access import ddev_project, site_access
from ai_proving_ground.tasks.site_access import site_command as site_command  # its old home
from ai_proving_ground.tasks.turns import Conversation

ALLOWED_HOST_VARIABLES = frozenset({"PATH", "LANG", "TERM", "TZ", "TMPDIR"})
# Extra variables a harness may always add, whatever the adapter declares: namespaced, so they
# can never shadow a host variable, a credential or a request variable.
EXTRA_ENV_PREFIX = "APG_ARM_"
ORACLE = "oracle"
RUN_RECORD = "run.json"
# Held by the apg run in flight on a bed, in the baseline directory beside runs/.
IN_FLIGHT = ".run.lock"


@dataclass(frozen=True)
class RunOptions:
    """What ``apg run`` was asked to do."""

    task_id: str
    approot: Path
    agent: str | None = None
    dataset: str | None = None
    model: str | None = None
    echo_stdout_to_stderr: bool = False  # --json keeps stdout for run.json alone
    # Values for the adapter's environment (a campaign arm's agent_env); see the module doc.
    extra_env: Mapping[str, str] = field(default_factory=dict)
    # Wall-clock limit for the adapter; past it, its whole process group is stopped.
    timeout_s: float | None = None
    # Where a harness keeps its live children, so its Ctrl-C reaches this adapter too.
    children: proc.Children = field(default_factory=proc.Children)
    settings: Settings = field(default=DEFAULT_SETTINGS, compare=False)
    unshare_net: bool = False  # --unshare-net: the adapter's sandbox has no network
    arm: Given = field(default_factory=Given)  # a campaign arm's skills, instructions: in HOME


@dataclass(frozen=True)
class RunOutcome:
    """The final run.json and the exit code it maps to."""

    record: dict[str, Any]
    run_dir: Path
    exit_code: int


@dataclass(frozen=True)
class RunPlan:
    """Everything resolved before anything is written."""

    options: RunOptions
    dataset: Dataset
    task: Task
    adapter: Adapter
    preflight: Preflight
    ddev_project: str
    sandbox: SandboxOptions
    backend: Backend


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_run_id() -> str:
    return f"apg-run-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{secrets.token_hex(3)}"


# ---------------------------------------------------------------------------- the run


def run_task(options: RunOptions) -> RunOutcome:
    """Resolve, preflight, run the adapter and record it; errors before the run dir raise."""
    plan = plan_run(options)
    with _in_flight(options.approot, options.settings):
        run_dir = _make_run_dir(options.approot, options.settings)
        record = _initial_record(plan, run_dir)
        files = RunFiles(run_dir)
        if plan.preflight.refused:
            return _refuse(plan, files, record)
        if plan.preflight.overridden:
            say("APG_RUN_CRED_OVERRIDDEN", f"{ALLOW_VARIABLE}=1: running adapter "
                f"{plan.adapter.name!r} anyway, although {plan.preflight.reason}")
        return _attempt(plan, files, record)


def _in_flight(approot: Path, settings: Settings) -> contextlib.AbstractContextManager[None]:
    """One run at a time per bed: a second refuses (APG_RUN_BUSY) before anything is written."""
    def busy(holder: str) -> ApgError:
        return ApgError("APG_RUN_BUSY", f"another apg run is in flight on {approot} ({holder}); "
                        "nothing was recorded. Wait for it to finish, then run again")

    return only_one(runs_dir(approot, settings).parent / IN_FLIGHT, "apg run", busy)


def plan_run(options: RunOptions) -> RunPlan:
    settings = options.settings
    settings.log_limit_bytes  # noqa: B018  # a bad AI_PG_LOG_LIMIT refuses before anything is written
    dataset, task = resolve_task(options.task_id, options.dataset, options.approot, settings)
    adapter = find_adapter(selected_name(options.agent, settings), options.approot)
    check_extra_env(options.extra_env, adapter)
    checked = preflight(options.approot, adapter.header.credentials, settings.allow_host_creds)
    # The adapter's model endpoints as it will get them (the host's values, an arm's) are relayed
    # into a cut network, or refused (APG_RUN_NET_REFUSED) before anything is written.
    sandbox, backend = plan_sandbox(settings, options.unshare_net, adapter,
                                    {**os.environ, **options.extra_env})
    return RunPlan(options=options, dataset=dataset, task=task, adapter=adapter, preflight=checked,
                   ddev_project=ddev_project(options.approot), sandbox=sandbox, backend=backend)


def check_extra_env(extra_env: Mapping[str, str], adapter: Adapter) -> None:
    """Refuse extra names the adapter did not declare, unless they are ``APG_ARM_*``."""
    declared = adapter.header.env
    refused = sorted(name for name in extra_env if not ENV_NAME.match(name)
                     or (name not in declared and not name.startswith(EXTRA_ENV_PREFIX)))
    if refused:
        raise ApgError("APG_RUN_ENV_REFUSED", f"adapter {adapter.name!r} does not declare "
                       f"{', '.join(refused)} (## Env: {', '.join(declared) or 'none'}); declare "
                       f"them in the adapter or name them {EXTRA_ENV_PREFIX}*", exit_code=2)


def _make_run_dir(approot: Path, settings: Settings) -> Path:
    parent = runs_dir(approot, settings)
    parent.mkdir(parents=True, exist_ok=True)
    while True:
        run_dir = parent / new_run_id()
        with contextlib.suppress(FileExistsError):
            run_dir.mkdir()
            return run_dir


def _initial_record(plan: RunPlan, run_dir: Path) -> dict[str, Any]:
    dataset, approot = plan.dataset, plan.options.approot
    return {
        "run_id": run_dir.name,
        "status": "running",
        "task_id": plan.task.id,
        "dataset": {"name": dataset.name, "path": dataset.display_path(approot),
                    "sha256": dataset.sha256, "version": dataset.version},
        "task_sha256": plan.task.sha256,
        "adapter": plan.adapter.as_record(),
        "model": plan.options.model or None,
        "approot": str(approot),
        "started_at": now_iso(),
        "finished_at": None,
        "adapter_exit_code": None,
        "attempted": False,
        "prompt_sha256": hashlib.sha256(plan.task.prompt.encode("utf-8")).hexdigest(),
        "preflight": plan.preflight.as_record(),
        "transcripts": dict(TRANSCRIPTS),
        "timeout_s": plan.options.timeout_s,
    }


def _write(files: RunFiles, record: dict[str, Any]) -> None:
    """run.json, once every file apg wrote is checked still to be the file it wrote."""
    files.check(record)
    write_run(files.run_dir, record)
    files.note(RUN_RECORD)


def _finish(files: RunFiles, record: dict[str, Any], status: str, exit_code: int | None) -> None:
    record.update(status=status, finished_at=now_iso(), adapter_exit_code=exit_code,
                  attempted=status == "attempted")
    _write(files, record)


def _refuse(plan: RunPlan, files: RunFiles, record: dict[str, Any]) -> RunOutcome:
    run_dir = files.run_dir
    record["transcripts"] = None  # nothing ran
    _finish(files, record, "refused", None)
    say("APG_RUN_CRED_REFUSED", f"adapter {plan.adapter.name!r} (credentials: "
        f"{plan.adapter.header.credentials}) refused: {plan.preflight.reason}. Remove the sharing "
        f"from .ddev/, or set {ALLOW_VARIABLE}=1 to override deliberately; recorded in "
        f"{run_dir / 'run.json'}")
    return RunOutcome(record=record, run_dir=run_dir, exit_code=1)


def _attempt(plan: RunPlan, files: RunFiles, record: dict[str, Any]) -> RunOutcome:
    run_dir, limit = files.run_dir, plan.options.settings.log_limit_bytes
    prompt_file = run_dir / PROMPT_FILE
    atomic_write_text(prompt_file, plan.task.prompt)
    # Only the oracle is given the reference solution; nobody the checks or the dataset's path.
    oracle = plan.adapter.name == ORACLE
    request_file = write_request(run_dir, run_work(run_dir), plan.dataset, plan.task,
                                 plan.adapter.name, plan.options.model, plan.options.approot,
                                 plan.ddev_project, oracle=oracle)
    env = adapter_environment(os.environ, plan, run_dir, request_file, prompt_file)
    files.note(PROMPT_FILE, REQUEST_FILE, *([REFERENCE_FILE] if oracle else []), *given_files(run_dir))
    confinement = confine_adapter(plan.backend, plan.sandbox, plan.options.approot,
                                  run_dir, plan.adapter, plan.dataset, plan.task, env, os.environ)
    record["sandbox"] = confinement.as_record()
    access = site_access(confinement, bool(plan.ddev_project), plan.options.approot, run_dir,
                         Path(env["HOME"]), os.environ, plan.task.site_allow(plan.options.settings))
    env.update(access.environment())  # a confined adapter on a DDEV bed: the site broker
    record["sandbox"].update(access.as_record())
    _write(files, record)
    for log in TRANSCRIPTS.values():  # made now, so that the tee writes the very file noted
        (run_dir / log).touch()
    files.note(*TRANSCRIPTS.values())
    say("APG_RUN_STARTED", f"run {run_dir.name}: task {plan.task.id} with adapter "
        f"{plan.adapter.name!r} ({plan.adapter.path}); record: {run_dir / 'run.json'}")
    # A task of several turns (tasks.turns): each later one resumes the agent's session.
    turns = (Conversation(plan.task, plan.adapter.name, files, plan.options.approot,
                          plan.options.settings, limit) if plan.task.turns else None)
    deadline = None if plan.options.timeout_s is None else time.monotonic() + plan.options.timeout_s

    def send(extra: Mapping[str, str], logs: Path) -> int | None:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise TimedOut(None)
        return spawn(plan.adapter, plan.options.approot, logs, {**env, **extra}, confinement,
                     plan.options.children, left, limit, plan.options.echo_stdout_to_stderr)

    try:
        with access.open(), confinement.relaying():  # the site broker, the model relay
            exit_code = send({}, run_dir)
            if turns is not None and exit_code is not None:
                exit_code = turns.carry_on(exit_code, send)
    except TimedOut as exc:  # what the agent did until then is kept, marked partial
        _keep_stopped(turns, files, record, plan.adapter.name, limit)
        _finish(files, record, "timed_out", exc.adapter_exit_code)
        say("APG_RUN_TIMED_OUT", f"run {run_dir.name}: adapter {plan.adapter.name!r} still ran "
            f"after {plan.options.timeout_s:g}s and was stopped with everything it started; no "
            f"attempt recorded in {run_dir / 'run.json'}")
        return RunOutcome(record=record, run_dir=run_dir, exit_code=1)
    except KeyboardInterrupt as exc:
        # Ctrl-C: the record must not stay "running"; the CLI reports APG_INTERRUPTED.
        _keep_stopped(turns, files, record, plan.adapter.name, limit)
        _finish(files, record, "interrupted", getattr(exc, "adapter_exit_code", None))
        raise
    except ApgError:  # the site broker or the model relay could not serve: nothing ran
        _finish(files, record, "no_attempt", None)
        raise
    finally:
        files.discard(REFERENCE_FILE)
    if exit_code is None:
        _finish(files, record, "no_attempt", None)
        return RunOutcome(record=record, run_dir=run_dir, exit_code=1)
    files.check(record)  # before anything of the run directory is read back
    if turns is not None:  # every turn kept already: the conversation's sums
        all_denied = turns.conclude(record)
        run_transcript.note_leaks(run_dir, record.get("agent_transcript"))
    else:
        summary, all_denied = run_transcript.keep(files, plan.adapter.name, limit)
        if summary is not None:
            record["agent_transcript"] = summary  # model, tokens, turns; transcript.json has all
    if all_denied and exit_code == 0:  # the CLI says 0 although it ran nothing: no attempt
        record["no_attempt_reason"] = all_denied
        _finish(files, record, "no_attempt", exit_code)
        say("APG_RUN_NO_ATTEMPT", f"run {run_dir.name}: {all_denied} ({run_dir / 'run.json'})")
        return RunOutcome(record=record, run_dir=run_dir, exit_code=1)
    attempted = exit_code == 0
    _finish(files, record, "attempted" if attempted else "no_attempt", exit_code)
    if attempted:
        say("APG_RUN_ATTEMPTED", f"run {run_dir.name}: adapter exited 0; attempt recorded in "
            f"{run_dir / 'run.json'} (not graded: apg grade {plan.task.id} --run={run_dir.name})")
        return RunOutcome(record=record, run_dir=run_dir, exit_code=0)
    say("APG_RUN_NO_ATTEMPT", f"run {run_dir.name}: adapter {plan.adapter.name!r} exited "
        f"{exit_code}; recorded as no attempt in {run_dir / 'run.json'}")
    return RunOutcome(record=record, run_dir=run_dir, exit_code=1)


def adapter_environment(host: Mapping[str, str], plan: RunPlan, run_dir: Path,
                        request_file: Path, prompt_file: Path) -> dict[str, str]:
    """Allow-listed host variables, declared ones, then the request (which wins)."""
    header = plan.adapter.header
    env = {k: v for k, v in host.items() if k in ALLOWED_HOST_VARIABLES or k.startswith("LC_")}
    env.update({name: host[name] for name in header.env if name in host})
    options = plan.options
    # After the host's values (an arm's choice wins), before HOME and the request (which win).
    env.update(options.extra_env)
    shared = host["HOME"] if header.credentials == "host-shared" and "HOME" in host else None
    env.update(arm_home(run_home(run_dir), run_dir, options.arm, shared))  # HOME, the arm's gift
    env.update(run_folders_env(run_dir, options.approot))
    env.update({
        "APG_RUN_ID": run_dir.name,
        "APG_PROMPT_FILE": str(prompt_file),
        "APG_REQUEST_FILE": str(request_file),
        "APG_TASK_ID": plan.task.id,
        "APG_DATASET": plan.dataset.name,
        "APG_MODEL": options.model or "",
        "APG_APPROOT": str(options.approot),
        "APG_DDEV_PROJECT": plan.ddev_project,
        "APG_SITE": shlex.join(site_command(options.approot)),
        "APG_ADAPTER": plan.adapter.name,
    })
    if plan.adapter.name == ORACLE:
        env["APG_REFERENCE_FILE"] = str(run_dir / REFERENCE_FILE)
    return env


def _keep_stopped(turns: Conversation | None, files: RunFiles, record: dict[str, Any],
                  agent: str, limit: int) -> None:
    """What a run apg stopped did until then (run_transcript.keep_stopped), turn by turn for a
    task of several turns."""
    if turns is not None:
        turns.stopped(record)
    else:
        run_transcript.keep_stopped(files, record, agent, limit)
