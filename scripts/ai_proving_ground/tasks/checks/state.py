"""Checks on stored state: config objects, modules, entities and entity counts."""

from __future__ import annotations

import json
import re
from typing import Any

from ai_proving_ground.fixtures import record_value
from ai_proving_ground.sites.base import Condition, CountQuery, StateAnswer
from ai_proving_ground.tasks.checks.base import (
    MISSING,
    Check,
    CheckContext,
    CheckResult,
    QueryPlan,
    check_type,
    dig,
)


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
        if self.spec.get("any_order"):
            # A list whose order means nothing (a role's permissions: Role::preSave sorts
            # them, a raw config:set keeps the order it was given).
            passed = in_any_order(found) == in_any_order(expected)
        else:
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
    """By UUID (label, bundle, status and fields compared), or by type and label (counted).

    A multi-value field named in ``any_order`` is compared as a set of values with repeats
    (the same products in another order), every other field item by item in its delta order.
    """

    _count = -1

    def _conditions(self) -> tuple[Condition, ...]:
        conditions = [Condition("label", "=", self.spec["label"])]
        if "status" in self.spec:
            conditions.append(Condition("status", "=", "1" if self.spec["status"] else "0"))
        conditions += [Condition(name, "=", value)
                       for name, value in (self.spec.get("fields") or {}).items()]
        return tuple(conditions)

    def plan(self, plan: QueryPlan) -> None:
        if "uuid" in self.spec:
            plan.add(plan.entities, self.spec["uuid"])
        else:
            self._count = plan.add(plan.counts, CountQuery(
                self.spec["entity_type"], self.spec.get("bundle"), self._conditions()))

    def _expected(self) -> dict[str, Any]:
        keys = ("entity_type", "bundle", "label", "status", "fields")
        return {k: self.spec[k] for k in keys if k in self.spec}

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        expected = self._expected()
        if "uuid" not in self.spec:
            count = answer.counts[self._count]
            return self.result(count >= 1, {**expected, "matches": ">= 1"}, {"matches": count})
        entity = answer.entities.get(self.spec["uuid"])
        if entity is None:
            return self.result(False, expected, None, f"no entity {self.spec['uuid']}")
        found: dict[str, Any] = {"entity_type": entity.entity_type, "bundle": entity.bundle,
                                 "label": entity.label, "status": entity.status,
                                 "fields": {n: record_value(entity.fields.get(n, []))
                                            for n in self.spec.get("fields") or {}}}
        found = {k: v for k, v in found.items() if k in expected}
        fields_match = same_stored(*(self._ordered(f) for f in (expected.get("fields"),
                                                                 found.get("fields"))))
        others = {k: v for k, v in found.items() if k != "fields"}
        passed = fields_match and others == {k: v for k, v in expected.items() if k != "fields"}
        return self.result(passed, expected, found)


    def _ordered(self, fields: Any) -> Any:
        """``fields`` with each ``any_order`` field's values in one canonical order."""
        unordered = set(self.spec.get("any_order") or ())
        if not isinstance(fields, dict) or not unordered:
            return fields
        return {name: in_any_order(value, stored=True) if name in unordered else value
                for name, value in fields.items()}


def in_any_order(value: Any, stored: bool = False) -> Any:
    """A list in one canonical order (sorted by its items' JSON; ``stored`` sorts by the text a
    field stores, so 3 and '3' sort alike); anything else as it is."""
    if not isinstance(value, list):
        return value
    def key(item: Any) -> str:
        return json.dumps(_stored_text(item) if stored else item, sort_keys=True)
    return sorted(value, key=key)


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
    _index = -1

    def plan(self, plan: QueryPlan) -> None:
        conditions = tuple(Condition(c["field"], c["operator"], c.get("value"))
                           for c in self.spec.get("conditions") or [])
        self._index = plan.add(plan.counts, CountQuery(
            self.spec["entity_type"], self.spec.get("bundle"), conditions))

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        count = answer.counts[self._index]
        bounds = {k: self.spec[k] for k in ("equals", "min", "max") if k in self.spec}
        passed = (count == bounds.get("equals", count) and count >= bounds.get("min", count)
                  and count <= bounds.get("max", count))
        return self.result(passed, bounds, count)
