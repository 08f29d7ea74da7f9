"""What every check shares: its result, the one query plan all checks of a task fill, the
registry of check types and the run that evaluates them with a single driver round trip."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from ai_proving_ground.errors import ApgError
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.sites.base import (
    CanvasRef,
    CountQuery,
    PageQuery,
    SiteDriver,
    StateAnswer,
    StateQuery,
    ViewQuery,
)

MISSING = "<missing>"

# Check type -> the module that defines it, imported when a task uses the type.
CHECK_TYPES: dict[str, str] = {
    "config_exists": "state",
    "config_equals": "state",
    "module_enabled": "state",
    "entity_exists": "state",
    "entity_count": "state",
    "view_rows": "views",
    "page_served": "views",
    "canvas_component": "canvas",
    "canvas_tree": "canvas",
    "site_unchanged": "unchanged",
    "menu_tree": "menu",
    "command": "command",
}


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
    config_prefixes: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    counts: list[CountQuery] = field(default_factory=list)
    views: list[ViewQuery] = field(default_factory=list)
    canvas: list[CanvasRef] = field(default_factory=list)
    pages: list[PageQuery] = field(default_factory=list)
    menus: list[str] = field(default_factory=list)

    def add(self, bucket: list[Any], item: Any) -> int:
        """Add ``item`` once; return its index in the answer."""
        if item not in bucket:
            bucket.append(item)
        return bucket.index(item)

    def query(self) -> StateQuery:
        return StateQuery(modules=self.modules, config=tuple(self.config),
                          config_prefixes=tuple(self.config_prefixes),
                          entities=tuple(self.entities), counts=tuple(self.counts),
                          views=tuple(self.views), canvas=tuple(self.canvas),
                          pages=tuple(self.pages), menus=tuple(self.menus))


@dataclass(frozen=True)
class CheckContext:
    """What checks may use besides the answer: the bed, the task's fixtures and settings."""

    approot: Path
    plan: QueryPlan
    fixtures: tuple[str, ...] = ()
    settings: Settings = DEFAULT_SETTINGS


class Check(ABC):
    """A check built from its dataset entry; ``plan`` then ``evaluate``.

    ``plan`` keeps the indices :meth:`QueryPlan.add` returns, so ``evaluate`` reads its answers
    without looking them up again. A check that needs the task's fixtures to plan (the baseline
    comparison) gets the context in :meth:`prepare` first.
    """

    type: ClassVar[str]

    def __init__(self, spec: dict[str, Any], index: int) -> None:
        self.spec = spec
        self.id = str(spec.get("id") or f"{self.type}#{index}")

    def prepare(self, context: CheckContext) -> None:  # noqa: B027 - only some checks need it
        """Read what planning needs besides the spec (nothing by default)."""

    def plan(self, plan: QueryPlan) -> None:  # noqa: B027 - most checks read something; some don't
        """Ask for what this check reads (nothing by default)."""

    @abstractmethod
    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        """Compare live state with the expectation."""

    def result(self, passed: bool, expected: Any, found: Any, message: str = "") -> CheckResult:
        return CheckResult(self.id, self.type, passed, expected, found, message)


_CHECKS: dict[str, type[Check]] = {}
C = TypeVar("C", bound=type[Check])


def check_type(name: str) -> Callable[[C], C]:
    """Class decorator: the check's type name, which must be a key of ``CHECK_TYPES``."""
    if name not in CHECK_TYPES:
        raise ValueError(f"check type {name!r} is not listed in tasks.checks.base.CHECK_TYPES")

    def register(cls: C) -> C:
        cls.type = name
        _CHECKS[name] = cls
        return cls

    return register


def check_class(name: str) -> type[Check] | None:
    """The class of check type ``name`` (its module imported on first use), or ``None``."""
    module = CHECK_TYPES.get(name)
    if module is None:
        return None
    if name not in _CHECKS:
        importlib.import_module(f"{__package__}.{module}")
    return _CHECKS[name]


def build_checks(specs: list[dict[str, Any]]) -> list[Check]:
    checks = []
    for index, spec in enumerate(specs):
        cls = check_class(str(spec.get("type")))
        if cls is None:
            raise ApgError("APG_DATASET_INVALID", f"unknown check type {spec.get('type')!r} "
                           f"(known: {', '.join(sorted(CHECK_TYPES))})")
        checks.append(cls(spec, index))
    return checks


def run_checks(specs: list[dict[str, Any]], driver: SiteDriver, approot: Path,
               fixtures: tuple[str, ...] | list[str] = (),
               settings: Settings = DEFAULT_SETTINGS) -> list[CheckResult]:
    """Evaluate every check against live state with one driver round trip.

    ``fixtures`` are the task's: a check that compares the site with its baseline reads them.
    """
    checks = build_checks(specs)
    plan = QueryPlan()
    context = CheckContext(approot, plan, tuple(fixtures), settings)
    for check in checks:
        check.prepare(context)
        check.plan(plan)
    answer = driver.read_state(plan.query())
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
