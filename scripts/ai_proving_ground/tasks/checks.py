"""State checks: the vocabulary that grades what an agent built, read through the site driver.

Each check type is one small class. Before evaluation every check adds what it needs to one
:class:`QueryPlan`, so a grade costs a single driver round trip however many checks a task has.
"""

from __future__ import annotations

import json
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from ai_proving_ground import proc
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixtures import record_value
from ai_proving_ground.sites.base import (
    CanvasRef,
    CanvasTree,
    Condition,
    CountQuery,
    SiteDriver,
    StateAnswer,
    StateQuery,
    ViewQuery,
)

MISSING = "<missing>"


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome, with what it expected and what it found."""

    id: str
    type: str
    passed: bool
    expected: Any
    found: Any
    message: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "passed": self.passed,
                "expected": self.expected, "found": self.found, "message": self.message}


@dataclass
class QueryPlan:
    """What all checks of a task need from the site, merged into one StateQuery."""

    modules: bool = False
    config: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    counts: list[CountQuery] = field(default_factory=list)
    views: list[ViewQuery] = field(default_factory=list)
    canvas: list[CanvasRef] = field(default_factory=list)

    def add(self, bucket: list[Any], item: Any) -> int:
        """Add ``item`` once; return its index in the answer."""
        if item not in bucket:
            bucket.append(item)
        return bucket.index(item)

    def query(self) -> StateQuery:
        return StateQuery(modules=self.modules, config=tuple(self.config),
                          entities=tuple(self.entities), counts=tuple(self.counts),
                          views=tuple(self.views), canvas=tuple(self.canvas))


class Check(ABC):
    """A check built from its dataset entry; ``plan`` then ``evaluate``."""

    type: ClassVar[str]

    def __init__(self, spec: dict[str, Any], index: int) -> None:
        self.spec = spec
        self.id = str(spec.get("id") or f"{self.type}#{index}")

    def plan(self, plan: QueryPlan) -> None:  # noqa: B027 - most checks read something; some don't
        """Ask for what this check reads (nothing by default)."""

    @abstractmethod
    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        """Compare live state with the expectation."""

    def result(self, passed: bool, expected: Any, found: Any, message: str = "") -> CheckResult:
        return CheckResult(self.id, self.type, passed, expected, found, message)


@dataclass(frozen=True)
class CheckContext:
    """What checks may use besides the answer: the bed and the plan's indices."""

    approot: Path
    plan: QueryPlan


_CHECKS: dict[str, type[Check]] = {}
C = TypeVar("C", bound=type[Check])


def check_type(name: str) -> Callable[[C], C]:
    def register(cls: C) -> C:
        cls.type = name
        _CHECKS[name] = cls
        return cls

    return register


def build_checks(specs: list[dict[str, Any]]) -> list[Check]:
    checks = []
    for index, spec in enumerate(specs):
        cls = _CHECKS.get(str(spec.get("type")))
        if cls is None:
            raise ApgError("APG_DATASET_INVALID", f"unknown check type {spec.get('type')!r} "
                           f"(known: {', '.join(sorted(_CHECKS))})")
        checks.append(cls(spec, index))
    return checks


def run_checks(specs: list[dict[str, Any]], driver: SiteDriver, approot: Path) -> list[CheckResult]:
    """Evaluate every check against live state with one driver round trip."""
    checks = build_checks(specs)
    plan = QueryPlan()
    for check in checks:
        check.plan(plan)
    answer = driver.read_state(plan.query())
    context = CheckContext(approot, plan)
    return [check.evaluate(answer, context) for check in checks]


def dig(data: Any, dotted: str | None) -> Any:
    """The value at a dotted path, or MISSING."""
    if not dotted:
        return data
    cursor = data
    for part in dotted.split("."):
        if isinstance(cursor, dict) and part in cursor:
            cursor = cursor[part]
        elif isinstance(cursor, dict) and part.isdigit() and int(part) in cursor:
            cursor = cursor[int(part)]
        elif isinstance(cursor, list) and part.isdigit() and int(part) < len(cursor):
            # Config sequences are addressed by index, as Drupal's NestedArray reads them.
            cursor = cursor[int(part)]
        else:
            return MISSING
    return cursor


# ---------------------------------------------------------------------------- check types


@check_type("config_exists")
class ConfigExists(Check):
    def plan(self, plan: QueryPlan) -> None:
        plan.add(plan.config, self.spec["name"])

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        present = answer.config.get(self.spec["name"]) is not None
        return self.result(present, "present", "present" if present else "missing",
                           "" if present else f"config {self.spec['name']} does not exist")


@check_type("config_equals")
class ConfigEquals(Check):
    def plan(self, plan: QueryPlan) -> None:
        plan.add(plan.config, self.spec["name"])

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        data = answer.config.get(self.spec["name"])
        found = MISSING if data is None else dig(data, self.spec.get("path"))
        # Sites hand config back as JSON, whose mapping keys are strings; compare in that form.
        expected = json.loads(json.dumps(self.spec["value"]))
        where = self.spec["name"] + (f":{self.spec['path']}" if self.spec.get("path") else "")
        passed = found == expected
        return self.result(passed, expected, found, "" if passed else f"{where} differs")


@check_type("module_enabled")
class ModuleEnabled(Check):
    def plan(self, plan: QueryPlan) -> None:
        plan.modules = True

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        state = answer.modules.get(self.spec["module"])
        found = "missing" if state is None else ("enabled" if state.enabled else "disabled")
        return self.result(found == "enabled", "enabled", found)


@check_type("entity_exists")
class EntityExists(Check):
    """By UUID (label, bundle, status and fields compared), or by type and label (counted)."""

    def _conditions(self) -> tuple[Condition, ...]:
        conditions = [Condition("label", "=", self.spec["label"])]
        if "status" in self.spec:
            conditions.append(Condition("status", "=", "1" if self.spec["status"] else "0"))
        conditions += [Condition(name, "=", value)
                       for name, value in (self.spec.get("fields") or {}).items()]
        return tuple(conditions)

    def _count_query(self) -> CountQuery:
        return CountQuery(self.spec["entity_type"], self.spec.get("bundle"), self._conditions())

    def plan(self, plan: QueryPlan) -> None:
        if "uuid" in self.spec:
            plan.add(plan.entities, self.spec["uuid"])
        else:
            plan.add(plan.counts, self._count_query())

    def _expected(self) -> dict[str, Any]:
        keys = ("entity_type", "bundle", "label", "status", "fields")
        return {k: self.spec[k] for k in keys if k in self.spec}

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        expected = self._expected()
        if "uuid" not in self.spec:
            count = answer.counts[context.plan.counts.index(self._count_query())]
            return self.result(count >= 1, {**expected, "matches": ">= 1"}, {"matches": count})
        entity = answer.entities.get(self.spec["uuid"])
        if entity is None:
            return self.result(False, expected, None, f"no entity {self.spec['uuid']}")
        found: dict[str, Any] = {"entity_type": entity.entity_type, "bundle": entity.bundle,
                                 "label": entity.label, "status": entity.status,
                                 "fields": {n: record_value(entity.fields.get(n, []))
                                            for n in self.spec.get("fields") or {}}}
        found = {k: v for k, v in found.items() if k in expected}
        fields_match = same_stored(expected.get("fields"), found.get("fields"))
        others = {k: v for k, v in found.items() if k != "fields"}
        passed = fields_match and others == {k: v for k, v in expected.items() if k != "fields"}
        return self.result(passed, expected, found)


def same_stored(expected: Any, found: Any) -> bool:
    """Equal as a field stores them: Drupal reads every column back as a string, so 3, 3.0 and
    '3' are one value, and true is '1' (a check must not depend on which site it grades)."""
    if isinstance(expected, dict) and isinstance(found, dict):
        return expected.keys() == found.keys() and all(
            same_stored(v, found[k]) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(found, list):
        return len(expected) == len(found) and all(map(same_stored, expected, found))
    return expected == found or _stored_text(expected) == _stored_text(found)


def _stored_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float) or (isinstance(value, str) and _NUMBER.fullmatch(value)):
        number = float(value)
        return str(int(number)) if number.is_integer() else repr(number)
    return value if isinstance(value, str) else None


_NUMBER = re.compile(r"-?\d+(\.\d+)?")


@check_type("entity_count")
class EntityCount(Check):
    def _query(self) -> CountQuery:
        conditions = tuple(Condition(c["field"], c["operator"], c.get("value"))
                           for c in self.spec.get("conditions") or [])
        return CountQuery(self.spec["entity_type"], self.spec.get("bundle"), conditions)

    def plan(self, plan: QueryPlan) -> None:
        plan.add(plan.counts, self._query())

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        count = answer.counts[context.plan.counts.index(self._query())]
        bounds = {k: self.spec[k] for k in ("equals", "min", "max") if k in self.spec}
        passed = (count == bounds.get("equals", count) and count >= bounds.get("min", count)
                  and count <= bounds.get("max", count))
        return self.result(passed, bounds, count)


@check_type("view_rows")
class ViewRows(Check):
    """Execute a view display (with its contextual arguments): the rows must be exactly the
    expected ones, in order, and a visitor must be served them.

    Inside a run of rows whose sort keys tie, the order is the database's (MariaDB and SQLite
    differ), so the check judges such a run as a set and says so.
    """

    def _query(self) -> ViewQuery:
        return ViewQuery(self.spec["view"], self.spec.get("display", "default"),
                         tuple(str(a) for a in self.spec.get("arguments") or ()))

    def plan(self, plan: QueryPlan) -> None:
        plan.add(plan.views, self._query())

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        view = answer.views[context.plan.views.index(self._query())]
        expected = list(self.spec["rows"])
        if view.error:
            return self.result(False, expected, None, f"the view did not execute: {view.error}")
        key = self.spec.get("match", "uuid")
        found = [row.uuid if key == "uuid" else row.label for row in view.rows]
        # What explains wrong rows: handlers Drupal broke, and filters its validate() rejects.
        notes = [f"Broken handler: {h}" for h in view.broken] + [
            m for m in view.messages if "on filter:" in m]
        if view.outcome != "rows":
            return self.result(False, expected, found, "; ".join(
                [f"a visitor of {view.view_id}/{view.display_id} gets {view.outcome}", *notes]))
        if found == expected:
            return self.result(True, expected, found)
        if _tie_grouped(found, view.ties) == _tie_grouped(expected, view.ties):
            return self.result(True, expected, found, "rows in a sort tie came in another order "
                               "(the database's choice, not judged)")
        why = ("the same rows in another order" if sorted(found) == sorted(expected)
               else "other rows")
        # Why the rows may be wrong: what Drupal dropped or broke while building the query.
        return self.result(False, expected, found, "; ".join(
            [f"executing {view.view_id}/{view.display_id} gave {why}", *notes]))


def _tie_grouped(rows: list[str], ties: tuple[tuple[int, int], ...]) -> list[Any]:
    """``rows`` with each tied run as a sorted list: the part of the order a check may judge."""
    grouped: list[Any] = list(rows)
    for start, end in reversed(ties):
        if end <= len(rows):
            grouped[start:end] = [sorted(rows[start:end])]
    return grouped


@check_type("canvas_component")
class CanvasComponent(Check):
    """A component with these inputs (a subset match), in this slot and parent, is in the tree."""

    def _ref(self) -> CanvasRef:
        if "page" in self.spec:
            return CanvasRef("page", self.spec["page"])
        return CanvasRef("region", self.spec["region"])

    def plan(self, plan: QueryPlan) -> None:
        plan.add(plan.canvas, self._ref())

    def _expected(self) -> dict[str, Any]:
        keys = ("component_id", "inputs", "slot", "parent_component_id")
        return {k: self.spec[k] for k in keys if k in self.spec}

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        tree = answer.canvas[context.plan.canvas.index(self._ref())]
        expected = self._expected()
        if tree is None:
            ref = self._ref()
            return self.result(False, expected, None, f"no Canvas {ref.kind} {ref.key}")
        candidates = [self._describe(tree, item) for item in tree.components
                      if item.component_id == self.spec["component_id"]]
        passed = any(self._matches(c) for c in candidates)
        return self.result(passed, expected, candidates,
                           "" if passed else f"no matching {self.spec['component_id']} in "
                                             f"{tree.kind} {tree.key}")

    @staticmethod
    def _describe(tree: CanvasTree, item: Any) -> dict[str, Any]:
        parents = {c.uuid: c.component_id for c in tree.components}
        return {"uuid": item.uuid, "component_id": item.component_id, "inputs": item.inputs,
                "slot": item.slot, "parent_component_id": parents.get(item.parent_uuid or "")}

    def _matches(self, found: dict[str, Any]) -> bool:
        wanted_inputs = self.spec.get("inputs") or {}
        if any(found["inputs"].get(k) != v for k, v in wanted_inputs.items()):
            return False
        return all(found.get(k) == self.spec[k] for k in ("slot", "parent_component_id")
                   if k in self.spec)


@check_type("command")
class Command(Check):
    """A command run in the bed must exit 0 (for what only a command can observe)."""

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        argv = [str(a) for a in self.spec["argv"]]
        timeout = float(self.spec.get("timeout_s", 60))
        finished = proc.run(argv, cwd=context.approot, env=proc.bed_env(os.environ), timeout_s=timeout,
                            stdout=proc.DEVNULL)
        if finished.error is not None:  # not found, not executable: a failed check, not a crash
            missing = "not found" in finished.error or "No such file" in finished.error
            return self.result(False, 0, None, f"{argv[0]} not found" if missing
                               else f"{argv[0]} could not run: {finished.error}")
        if finished.timed_out:
            return self.result(False, 0, None, f"timed out after {timeout:g}s")
        tail = finished.stderr.decode(errors="replace").strip().splitlines()[-3:]
        return self.result(finished.exit_code == 0, 0, finished.exit_code, " | ".join(tail))
