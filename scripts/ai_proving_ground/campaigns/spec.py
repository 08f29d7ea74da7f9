"""Campaign specs: a YAML file naming tasks, arms, agents, models, repeats, a seed and jobs.

The spec is validated by ``schemas/campaign.schema.json``; every error reads
``file:line:col: $.path: message`` and exits 2 (``APG_CAMPAIGN_SPEC_INVALID``). Relative paths
(``dataset`` when it is a path, ``bed``) are relative to the spec file; a dataset path is then
tried in the current directory too, like ``apg run --dataset`` with the spec's folder as app root.

The plan is the matrix task x arm x agent x model x repeat, expanded in that nesting order (tasks
as listed, a glob such as ``"nv*"`` standing for its matches in dataset order, and ``"*"`` for
every task; arms in declared order). ``index`` is an attempt's
0-based position in that expansion, so it names the same cell and repeat whatever the seed;
``order`` is its 0-based position after ``random.Random(seed).shuffle``, the order attempts
start in. ``repeat`` is 0-based.

An arm may change what the agent gets (``arms.given``): ``skills`` (a catalog of skill folders
minus ``exclude``; absent: none at all), ``instructions`` (to the CLI's instruction file or the
prompt) and ``adapter``. An arm's ``adapter`` wins over the ``agents`` axis: its attempts run
that adapter, once per model and repeat. Because that would silently drop the axis for the arm,
a spec listing more than one agent and any arm adapter is refused; cross-agent campaigns keep
``agents`` and leave ``adapter`` out.
"""

from __future__ import annotations

import fnmatch
import random
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, ClassVar, NoReturn

from ai_proving_ground.arms.given import Given, Skill, catalog_skills
from ai_proving_ground.errors import ApgError
from ai_proving_ground.paths import project_dir
from ai_proving_ground.records import FieldsRecord
from ai_proving_ground.schemas import validate_document
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.tasks import hidden
from ai_proving_ground.tasks.dataset import Dataset, Task, load_dataset, resolve_dataset_path
from ai_proving_ground.yamlio import PathPart, YamlDocument, load_document

SPEC_INVALID = "APG_CAMPAIGN_SPEC_INVALID"
SPEC_NOT_FOUND = "APG_CAMPAIGN_SPEC_NOT_FOUND"


@dataclass(frozen=True)
class Arm:
    """One condition: extra adapter variables, ``apg site`` steps run before the agent, what the
    agent is given (skills, instructions) and, optionally, its own adapter."""

    name: str
    description: str
    agent_env: dict[str, str]
    setup: tuple[tuple[str, ...], ...]
    adapter: str | None = None
    given: Given = field(default_factory=Given)


@dataclass(frozen=True)
class CampaignSpec:
    """A validated spec file; ``doc`` keeps positions for errors found later (agents, env)."""

    doc: YamlDocument
    name: str
    dataset_ref: str
    tasks: tuple[str, ...] | None  # None: every task ("*")
    arms: tuple[Arm, ...]
    compare: tuple[str, str] | tuple[()]  # () with one arm: no paired effect
    agents: tuple[str, ...]
    models: tuple[str | None, ...]
    repeats: int
    seed: int
    jobs: int
    agent_timeout_s: float | None
    fixtures: tuple[str, ...] | None
    bed: Path | None
    ddev_beds: tuple[Path, ...] = ()  # DDEV projects, one job each (campaigns.beds)
    executor: str | None = None  # what runs the attempts (None: executors.registry.DEFAULT;
    # the runner checks the name against the registry, which imports the campaign modules)
    infra_retries: int = 0  # retries.infra_error: tries after an infra_error (campaigns.retry)

    @property
    def path(self) -> Path:
        return self.doc.path

    def fail(self, parts: list[PathPart], message: str) -> NoReturn:
        """Raise the spec error for ``parts``: ``file:line:col: $.path: message``, exit 2."""
        raise ApgError(SPEC_INVALID, f"{self.doc.where(parts)}: {message}", exit_code=2)

    def arm(self, name: str) -> Arm:
        return next(a for a in self.arms if a.name == name)

    def adapter_refs(self) -> list[tuple[list[PathPart], str, tuple[Arm, ...]]]:
        """Each adapter the plan runs: where the spec names it, its name, the arms that use it."""
        axis = tuple(a for a in self.arms if a.adapter is None)
        refs: list[tuple[list[PathPart], str, tuple[Arm, ...]]] = [
            (["agents", position], name, axis) for position, name in enumerate(self.agents)]
        refs += [(["arms", a.name, "adapter"], a.adapter, (a,))
                 for a in self.arms if a.adapter is not None]
        return refs


@dataclass(frozen=True)
class Campaign:
    """A spec resolved against its dataset: the task list, the fixture set, the verifiers."""

    spec: CampaignSpec
    dataset: Dataset
    tasks: tuple[Task, ...]
    fixtures: tuple[str, ...]
    verifiers: dict[str, hidden.HiddenVerifier]  # task id -> its hidden verifier, when it has one


@dataclass(frozen=True)
class Attempt(FieldsRecord):
    """One cell of the matrix and one repeat of it (a line of plan.jsonl)."""

    SCHEMA: ClassVar[str] = "plan"

    index: int
    order: int
    task_id: str
    arm: str
    agent: str
    model: str | None
    repeat: int

    def as_plan(self) -> dict[str, Any]:
        """The plan's fields only (an :class:`AttemptRecord` carries more)."""
        return {f.name: getattr(self, f.name) for f in fields(Attempt)}


# ---------------------------------------------------------------------------- loading


def find_spec(reference: str) -> Path:
    """A spec by path (``*.yml``, ``*.yaml`` or any other file that exists, relative to the
    current directory) or by name: a bare word names a shipped campaign, ``campaigns/<name>.yml``
    of the installed package (an editable install: the checkout's), as a dataset is named."""
    as_path = Path(reference).expanduser()
    if as_path.suffix in {".yml", ".yaml"} or len(as_path.parts) > 1 or as_path.is_file():
        return as_path.absolute()
    shipped = project_dir("campaigns")
    candidate = shipped / f"{reference}.yml"
    if candidate.is_file():
        return candidate
    names = ", ".join(sorted(p.stem for p in shipped.glob("*.yml"))) or "none"
    raise ApgError(SPEC_NOT_FOUND, f"no campaign spec {reference!r}: not a file here and not a "
                   f"shipped campaign ({candidate}); pass a spec path or one of: {names}",
                   exit_code=2)


def load_spec(path: Path) -> CampaignSpec:
    """Parse and validate a spec file (schema first, then what the schema cannot say)."""
    try:
        doc = load_document(path, token=SPEC_INVALID)
        validate_document(doc, "campaign", token=SPEC_INVALID)
    except ApgError as exc:  # a missing or bad spec is bad input: usage, like a bad dataset
        raise ApgError(exc.token, exc.message, exit_code=2) from None
    data = doc.data
    arms = tuple(_arm(doc, name, body or {}) for name, body in data["arms"].items())
    names = [a.name for a in arms]
    pinned = [a.name for a in arms if a.adapter is not None]
    if pinned and len(data["agents"]) > 1:
        _fail(doc, ["arms", pinned[0], "adapter"], "an arm's adapter wins over agents, so a spec "
              "listing several agents cannot give an arm its own adapter; list one agent, or "
              "drop the arm's adapter for a cross-agent campaign")
    spec = CampaignSpec(
        doc=doc,
        name=data["name"],
        dataset_ref=data["dataset"],
        tasks=None if data["tasks"] == "*" else tuple(data["tasks"]),
        arms=arms,
        compare=(names[0], names[1]) if len(names) > 1 else (),
        agents=tuple(data["agents"]),
        models=tuple(data.get("models") or [None]),
        repeats=int(data["repeats"]),
        seed=int(data["seed"]),
        jobs=int(data.get("jobs", 1)),
        agent_timeout_s=(float(data["agent_timeout_s"]) if "agent_timeout_s" in data else None),
        fixtures=tuple(data["fixtures"]) if "fixtures" in data else None,
        bed=(path.parent / data["bed"]).absolute() if "bed" in data else None,
        ddev_beds=tuple((path.parent / bed).absolute() for bed in data.get("ddev_beds", ())),
        executor=data.get("executor"),
        infra_retries=int((data.get("retries") or {}).get("infra_error", 0)),
    )
    if spec.bed is not None and spec.ddev_beds:
        spec.fail(["ddev_beds"], "give bed (an embedded bed to clone) or ddev_beds (DDEV "
                  "projects, one job each), not both")
    if "compare" in data:
        for position, arm in enumerate(data["compare"]):
            if arm not in names:
                spec.fail(["compare", position], f"{arm!r} is not an arm; arms: {', '.join(names)}")
        spec = replace(spec, compare=(data["compare"][0], data["compare"][1]))
    return spec


def _fail(doc: YamlDocument, parts: list[PathPart], message: str) -> NoReturn:
    raise ApgError(SPEC_INVALID, f"{doc.where(parts)}: {message}", exit_code=2)


def _arm(doc: YamlDocument, name: str, body: dict[str, Any]) -> Arm:
    return Arm(name=name, description=str(body.get("description", "")),
               agent_env=dict(body.get("agent_env") or {}),
               setup=tuple(tuple(step) for step in body.get("setup") or []),
               adapter=body.get("adapter"), given=_given(doc, name, body))


def _given(doc: YamlDocument, name: str, body: dict[str, Any]) -> Given:
    """The arm's skills (hashed now, checked again at install) and instructions."""
    skills, catalog, exclude = body.get("skills"), None, ()
    installed: tuple[Skill, ...] = ()
    if skills is not None:
        catalog = (doc.path.parent / skills["catalog"]).absolute()
        exclude = tuple(skills.get("exclude") or ())
        try:
            installed = catalog_skills(catalog, exclude)
        except ValueError as exc:
            _fail(doc, ["arms", name, "skills"], str(exc))
    instructions = body.get("instructions") or ""
    if isinstance(instructions, str):
        instructions = {"text": instructions}
    return Given(skills=installed, catalog=catalog, excluded=exclude,
                 instructions=instructions.get("text", ""),
                 instructions_to=instructions.get("to", "file"))


def resolve(spec: CampaignSpec, settings: Settings = DEFAULT_SETTINGS) -> Campaign:
    """Load the dataset and check that every task exists, can be graded and has a sound verifier."""
    dataset = _load_dataset(spec, settings)
    listed = _expand_tasks(spec, dataset)
    tasks = tuple(task for task, _ in listed.values())
    verifiers: dict[str, hidden.HiddenVerifier] = {}
    for task, where in listed.values():
        _require_checks(spec, task, where)
        verifier = _verifier(spec, dataset, task)
        if verifier is not None:
            verifiers[task.id] = verifier
    fixtures = spec.fixtures or tuple(dict.fromkeys(f for t in tasks for f in t.fixtures))
    if not fixtures:
        spec.fail(["tasks"], "the tasks name no fixtures; list the set to reset to under fixtures")
    return Campaign(spec=spec, dataset=dataset, tasks=tuple(tasks), fixtures=fixtures,
                    verifiers=verifiers)


def _expand_tasks(spec: CampaignSpec, dataset: Dataset) -> dict[str, tuple[Task, list[PathPart]]]:
    """The tasks in the order the spec lists them, each with where the spec names it: an id, or
    a glob (``*``, ``?``, ``[...]``; fnmatch, case-sensitive) that expands to its matches in
    dataset order. A task two entries name is taken once, where it is named first; an id or a
    glob that names nothing is refused at its position."""
    if spec.tasks is None:
        return {task.id: (task, ["tasks"]) for task in dataset.tasks}
    known = {t.id: t for t in dataset.tasks}
    listed: dict[str, tuple[Task, list[PathPart]]] = {}
    for position, entry in enumerate(spec.tasks):
        glob = bool(_GLOB.search(entry))
        matched = ([task for name, task in known.items() if fnmatch.fnmatchcase(name, entry)]
                   if glob else [known[entry]] if entry in known else [])
        if not matched:
            spec.fail(["tasks", position], f"dataset {dataset.name} ({dataset.path}) has no "
                      f"task {'matching the glob ' if glob else ''}{entry!r}; its tasks: "
                      f"{', '.join(known)}")
        for task in matched:
            listed.setdefault(task.id, (task, ["tasks", position]))
    return listed


_GLOB = re.compile(r"[*?\[]")


def _load_dataset(spec: CampaignSpec, settings: Settings) -> Dataset:
    try:
        return load_dataset(resolve_dataset_path(spec.dataset_ref, spec.path.parent, settings))
    except ApgError as exc:
        spec.fail(["dataset"], str(exc))


def _require_checks(spec: CampaignSpec, task: Task, where: list[PathPart]) -> None:
    # Without public checks there is no score, and "pass" would rest on the hidden part alone;
    # a skill trigger case has its verdict in its trigger (scorers/triggers.py).
    if not task.checks and task.trigger is None:
        spec.fail(where, f"task {task.id} has no checks and no trigger; a campaign needs a "
                  "public verdict for every attempt")
    installed = {skill.name for arm in spec.arms for skill in arm.given.skills}
    if task.trigger is not None and task.trigger["skill"] not in installed:
        # A misspelt skill would read as a 0% hit rate in every arm.
        spec.fail(where, f"task {task.id}'s trigger names skill {task.trigger['skill']!r}, "
                  "which no arm installs (arms' skills: "
                  f"{', '.join(sorted(installed)) or 'none'}); fix the name or the arms")


def _verifier(spec: CampaignSpec, dataset: Dataset, task: Task) -> hidden.HiddenVerifier | None:
    try:
        return hidden.resolve_verifier(dataset, task)
    except ApgError as exc:
        spec.fail(["dataset"], str(exc))


# ---------------------------------------------------------------------------- the plan


def expand(campaign: Campaign) -> list[Attempt]:
    """The matrix in nesting order: task, arm, agent, model, repeat; ``order`` not yet set."""
    spec = campaign.spec
    cells = [(task.id, arm.name, agent, model, repeat)
             for task in campaign.tasks for arm in spec.arms
             for agent in ((arm.adapter,) if arm.adapter is not None else spec.agents)
             for model in spec.models for repeat in range(spec.repeats)]
    return [Attempt(index=i, order=-1, task_id=t, arm=a, agent=g, model=m, repeat=r)
            for i, (t, a, g, m, r) in enumerate(cells)]


def shuffled(attempts: list[Attempt], seed: int) -> list[Attempt]:
    """The start order: a seeded shuffle, so arms and repeats interleave (drift hits all alike)."""
    ordered = list(attempts)
    random.Random(seed).shuffle(ordered)
    return [replace(attempt, order=position) for position, attempt in enumerate(ordered)]


def plan(campaign: Campaign) -> list[Attempt]:
    return shuffled(expand(campaign), campaign.spec.seed)
