"""Inspect AI integration: the bed's tasks as an Inspect task, graded on live state.

Each sample gets its own bed: a copy of a provisioned template bed, reset by the library before
the solver runs (:func:`apg_bed`). The model works on it through one tool, ``site``
(:func:`site_tool`), which runs ``apg site`` with ``--approot`` fixed to that bed. The scorer
(:func:`apg_scorer`) grades the bed with the project's grader, without storing the envelope
(``AI_PG_NO_IMPORT`` semantics), and puts the every_eval_ever envelope in the score's metadata.
Samples carry the prompt and provenance only: checks, reference solutions and hidden verifiers
never reach the model.

Needs the optional extra: ``pip install 'ai-proving-ground[inspect]'``.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from inspect_ai import Task
from inspect_ai.agent import Agent
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver, system_message, use_tools
from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import store
from inspect_ai.util import subprocess as inspect_subprocess

from ai_proving_ground.cli.site import build_parser
from ai_proving_ground.errors import ApgError, UsageError
from ai_proving_ground.integrations.inspect_beds import SampleBeds
from ai_proving_ground.layout import BedLayout
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.checks import CheckResult
from ai_proving_ground.tasks.dataset import load_dataset, resolve_dataset_path
from ai_proving_ground.tasks.envelope import Envelope
from ai_proving_ground.tasks.grade import GradeRequest, check_envelope, grade

TASK_VERSION = 1
"""The Inspect task's version: bumped when what a sample holds or how it is scored changes."""
STORE_APPROOT = "apg_approot"
"""Sample store key: the absolute path of the sample's bed."""
STORE_EPHEMERAL = "apg_bed_ephemeral"
"""Sample store key: True when the bed is removed after scoring."""
STORE_RESET_WARNINGS = "apg_reset_warnings"
"""Sample store key: the warning tokens reset reported for the sample's bed."""

SYSTEM_MESSAGE = """\
You are working on a live website: a Drupal-shaped site with a drush-shaped command line, \
`apg site`. Use the `site` tool to run one `apg site` command per call: pass the arguments that \
follow `apg site`, as a list (one item per argument, so values with spaces or YAML need no \
quoting) or as one shell-quoted string. Start with `--help` or `COMMAND --help` to see what \
a command takes. The tool returns the command's output and error messages (they start with an \
APG_ token) and its exit code. The site is already chosen for you: never pass --approot. \
Your work is judged by the state of the site when you finish, not by what you say, so check \
it (for example by executing a view or reading back config) and then reply with a short summary."""

# SQL that reaches files other than the bed's database: refused by the site tool.
_SQL_FILE_ACCESS = re.compile(r"\b(attach|detach|vacuum|load_extension)\b", re.IGNORECASE)
# Arguments of `apg site` commands that name a path: they must stay inside the bed.
_PATH_ARGUMENTS = ("source", "destination", "path")


# ---------------------------------------------------------------------------- dataset


def apg_dataset(dataset: str | None = None, tasks: Sequence[str] | None = None,
                settings: Settings | None = None) -> MemoryDataset:
    """One sample per task with checks: the prompt as input, provenance as metadata.

    ``dataset`` is a name from ``datasets/`` or a path (else ``AI_PG_DATASET``, else the shipped
    ``build_tasks``); ``tasks`` selects task ids, in that order. The sample never holds the
    checks, the reference solution or the hidden verifier. ``settings`` default to the
    environment's (`Settings.from_environ`).
    """
    resolved = settings or Settings.from_environ()
    loaded = load_dataset(resolve_dataset_path(dataset, Path.cwd(), resolved))
    chosen = [loaded.task(task_id) for task_id in tasks] if tasks else list(loaded.tasks)
    empty = [task.id for task in chosen if not task.checks]
    if tasks and empty:
        raise UsageError(f"task(s) {', '.join(empty)} of dataset {loaded.name} have no checks; "
                         "nothing could grade them")
    samples = [
        Sample(input=task.prompt, id=task.id, metadata={
            "task_id": task.id,
            "dataset": loaded.name,
            "dataset_path": str(loaded.path),
            "dataset_sha256": loaded.sha256,
            "task_sha256": task.sha256,
            "fixtures": task.fixtures,
        })
        for task in chosen if task.checks
    ]
    if not samples:
        raise UsageError(f"dataset {loaded.name} ({loaded.path}) has no task with checks")
    return MemoryDataset(samples, name=loaded.name, location=str(loaded.path))


# ---------------------------------------------------------------------------- beds


def _label(state: TaskState) -> str:
    text = re.sub(r"[^A-Za-z0-9_.-]", "_", str(state.sample_id))[:60]
    return f"{text}-e{state.epoch}"


@solver
def apg_bed(template: str | None = None, work_dir: str | None = None) -> Solver:
    """Give the sample its own bed and record it in the sample store.

    ``template`` is a provisioned embedded bed to copy; without one, a template is made
    (``init_bed`` plus ``provision``) once per fixture set, in a temporary directory. Each
    sample gets a copy, reset through the library, so samples running in parallel never share
    a bed. With ``work_dir`` the beds are made there and kept; otherwise each is removed after
    scoring (see :func:`remove_bed`) and the temporary directory when the process exits.
    """
    chosen = Path(template).expanduser().resolve() if template else None
    if chosen is not None and not BedLayout(chosen).database.is_file():
        raise ApgError("APG_INSPECT_TEMPLATE_INVALID", f"template {chosen} is not an embedded bed "
                       f"(no {BedLayout(chosen).database}); make one with apg bed init and apg "
                       "provision", exit_code=2)
    beds = SampleBeds(chosen, Path(work_dir).expanduser().resolve() if work_dir else None,
                 Settings.from_environ())

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        fixtures = tuple(str(name) for name in state.metadata.get("fixtures") or ())
        label = _label(state)
        bed, warnings = await anyio.to_thread.run_sync(beds.prepare, label, fixtures)
        state.store.set(STORE_APPROOT, str(bed))
        state.store.set(STORE_EPHEMERAL, beds.ephemeral)
        state.store.set(STORE_RESET_WARNINGS, warnings)
        return state

    return solve


async def remove_bed(state: TaskState) -> None:
    """Task cleanup: remove the sample's bed once it is scored, unless it is to be kept."""
    approot = state.store.get(STORE_APPROOT)
    if approot and state.store.get(STORE_EPHEMERAL):
        await anyio.to_thread.run_sync(shutil.rmtree, approot, True)


def sample_approot() -> Path:
    """The bed of the sample that is running (from its store)."""
    approot = store().get(STORE_APPROOT)
    if not approot:
        raise ToolError("APG_INSPECT_NO_BED this sample has no bed: the task needs the apg_bed() "
                        "setup solver")
    return Path(approot)


# ---------------------------------------------------------------------------- the site tool


def site_refusal(argv: Sequence[str], bed: Path) -> str | None:
    """Why running ``apg site --approot BED argv`` could reach outside the bed, or None."""
    for token in argv:
        name = token.split("=", 1)[0]
        if len(name) > 2 and name.startswith("--") and "--approot".startswith(name):
            return f"{token!r}: --approot is fixed to this sample's site; drop it"
    root = bed.resolve()
    try:
        # The tool's own check, with the command line's own parser (abbreviations included).
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            args = build_parser().parse_args(["--approot", str(root), *argv])
    except SystemExit:
        return None  # the command itself reports bad usage (or prints help) and does nothing
    if Path(args.approot).resolve() != root:
        return "--approot is fixed to this sample's site; drop it"
    for attribute in _PATH_ARGUMENTS:
        value = getattr(args, attribute, None)
        if value and not (root / Path(value).expanduser()).resolve().is_relative_to(root):
            return f"{value!r} is outside the site's directory; use a path inside it"
    if getattr(args, "command", None) == "sql:query" and _SQL_FILE_ACCESS.search(args.query):
        return "ATTACH, DETACH, VACUUM and load_extension are not available through sql:query"
    return None


def _as_argv(command: list[str] | str) -> list[str]:
    if isinstance(command, str):
        try:
            return shlex.split(command)
        except ValueError as exc:
            raise ToolError(f"APG_USAGE cannot split the command: {exc}") from None
    return [str(item) for item in command]


@tool(name="site")
def site_tool(approot: str | None = None, timeout: int = 60) -> Tool:
    """Run one `apg site` command against the sample's bed (or the bed ``approot``).

    Args:
        approot: A fixed bed for every call; by default each sample's own bed (from apg_bed).
        timeout: Seconds before a command is stopped.
    """
    fixed = Path(approot).expanduser().resolve() if approot else None

    async def execute(command: list[str] | str) -> str:
        """Run one `apg site` command on the site and return its output, errors and exit code.

        Args:
            command: The arguments after `apg site`, e.g. ["config:get", "system.site"] or
                ["views:execute", "my_view", "page_1", "--format=json"]; a single string is
                split like a shell would. `--help` lists the commands. Never pass --approot.

        Returns:
            The command's output, its error messages (each starts with an APG_ token) and
            its exit code (0 done, 1 the site refused, 2 bad usage).
        """
        bed = fixed or sample_approot()
        argv = _as_argv(command)
        try:
            refused = site_refusal(argv, bed)
            if refused:
                raise ToolError(f"APG_SITE_TOOL_REFUSED {refused}")
            # -P: the bed (the working directory) never joins the module search path.
            result = await inspect_subprocess(
                [sys.executable, "-P", "-m", "ai_proving_ground.cli.site", "--approot", str(bed),
                 *argv], cwd=bed, timeout=timeout)
        except TimeoutError:
            raise ToolError(f"APG_SITE_TOOL_TIMEOUT the command did not finish in {timeout}s "
                            "and was stopped") from None
        except (OSError, ValueError, RuntimeError) as exc:
            # The model's arguments can make the command impossible to start: too long for the
            # system (E2BIG), a NUL byte, text that is not encodable, an unknown ~user. The model
            # reads why as the tool's answer; an exception would end the sample instead.
            raise ToolError(f"APG_SITE_TOOL_FAILED the command could not be run: {exc}") from None
        output = result.stdout + result.stderr
        if output and not output.endswith("\n"):
            output += "\n"
        return f"{output}[exit code {result.returncode}]"

    return execute


# ---------------------------------------------------------------------------- the scorer


def explain(outcome: Sequence[CheckResult]) -> str:
    """Every check on a line of its own: passed, or what it expected and found (and why)."""
    failed = sum(not r.passed for r in outcome)
    lines = [f"{failed} of {len(outcome)} checks failed:" if failed
             else f"all {len(outcome)} checks passed:"]
    for result in outcome:
        line = f"- {result.id} ({result.type}): " + ("passed" if result.passed else (
            f"expected {json.dumps(result.expected)}, found {json.dumps(result.found)}"))
        lines.append(f"{line}; {result.message}" if result.message and not result.passed else line)
    return "\n".join(lines)


def _grade(approot: Path, metadata: dict[str, Any], state: TaskState,
           settings: Settings) -> Envelope:
    request = GradeRequest(approot=approot, task_id=str(metadata["task_id"]),
                           dataset=str(metadata["dataset_path"]), model=str(state.model),
                           settings=settings)
    envelope = check_envelope(join_sample(grade(request, EmbeddedSite(approot)), state))
    graded = envelope.dataset_sha256
    if graded != metadata.get("dataset_sha256"):
        raise ApgError("APG_INSPECT_DATASET_CHANGED", f"{metadata['dataset_path']} changed during "
                       f"the eval (sha256 {metadata.get('dataset_sha256')} when the sample was "
                       f"made, {graded} when it was graded); run the eval again")
    return envelope


def join_sample(envelope: dict[str, Any], state: TaskState) -> dict[str, Any]:
    """Key the envelope to its Inspect sample: ``evaluation_id`` ends in ``inspect-<sample
    uuid>`` and the source details name the sample id, epoch and uuid, so a log's samples and
    the envelopes join both ways."""
    head = envelope["evaluation_id"].rsplit("/", 1)[0]
    envelope["evaluation_id"] = f"{head}/inspect-{state.uuid}"
    envelope["source_metadata"]["additional_details"].update({
        "inspect_sample_id": str(state.sample_id), "inspect_epoch": str(state.epoch),
        "inspect_sample_uuid": state.uuid})
    return envelope


@scorer(metrics=[accuracy(), stderr()])
def apg_scorer() -> Scorer:
    """Grade the sample's bed with the task's checks: 1.0 when every check passes, else 0.0.

    The envelope is built and validated as ``apg grade`` builds it, but never stored or saved
    (``AI_PG_NO_IMPORT=1`` semantics); it is in the score's metadata with every check's result.
    """
    settings = Settings.from_environ()

    async def score(state: TaskState, target: Target) -> Score:
        approot = state.store.get(STORE_APPROOT)
        if not approot:
            raise ApgError("APG_INSPECT_NO_BED", f"sample {state.sample_id} has no bed to grade: "
                           "the task needs the apg_bed() setup solver")
        envelope = await anyio.to_thread.run_sync(_grade, Path(approot), state.metadata, state,
                                                  settings)
        return Score(value=envelope.score, answer=None, explanation=explain(envelope.checks),
                     metadata={"envelope": envelope.as_json(),
                               "checks": [r.as_json() for r in envelope.checks],
                               "approot": str(approot)})

    return score


# ---------------------------------------------------------------------------- the task


def apg_task(dataset: str | None = None, tasks: Sequence[str] | None = None,
             template: str | Path | None = None,
             solver: Solver | Agent | Sequence[Solver] | None = None,
             message_limit: int | None = 60, work_dir: str | Path | None = None,
             name: str | None = None) -> Task:
    """An Inspect task for a dataset's tasks, each sample on its own bed, graded on live state.

    ``solver`` replaces the default agent (a system message about the site tool, the tool,
    and Inspect's ``generate()`` loop); the bed is set up by ``apg_bed`` either way. See
    :func:`apg_dataset` for ``dataset``/``tasks`` and :func:`apg_bed` for ``template`` and
    ``work_dir``. There is no sandbox: the bed is the environment. Without ``name`` the task
    is named after the ``@task`` function that returns it.
    """
    samples = apg_dataset(dataset, tasks, Settings.from_environ())
    default: list[Solver] = [system_message(SYSTEM_MESSAGE), use_tools(site_tool()), generate()]
    return Task(
        dataset=samples,
        setup=apg_bed(str(template) if template else None, str(work_dir) if work_dir else None),
        solver=solver if solver is not None else default,
        cleanup=remove_bed,
        scorer=apg_scorer(),
        sandbox=None,
        message_limit=message_limit,
        name=name,
        metadata={"apg_dataset": samples.name, "apg_dataset_path": samples.location},
        version=TASK_VERSION,
    )
