"""Mutation operators: a name -> function table, filled by the operator families' modules.

An operator reads a :class:`Context` (the baseline's state, the reference's, and what the
reference changed) and yields :class:`Mutant` s, each one wrong build named by the operator and
its target. A family module registers its operators with :func:`operator`; :func:`operators`
imports every family listed in ``FAMILIES`` (when mutants are derived, not before).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ai_proving_ground.mutation.state import EntityState, SiteState, Writes

# Family -> module under ai_proving_ground.mutation, in the order mutants are listed.
FAMILIES: dict[str, str] = {
    "views": "views_ops",
    "content": "content_ops",
    "canvas": "canvas_ops",
    "config": "config_ops",
    "menu": "menu_ops",
    "outside": "outside_ops",
}


@dataclass(frozen=True)
class Context:
    """What operators derive mutants from."""

    baseline: SiteState
    reference: SiteState
    changed_config: tuple[str, ...]
    changed_entities: tuple[str, ...]
    # The rows the reference's view displays list: (view id, display id) -> UUIDs in order.
    view_rows: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)

    def config(self, name: str) -> Any:
        return self.reference.config.get(name)

    def entity(self, uuid: str) -> EntityState | None:
        return self.reference.entities.get(uuid)


@dataclass(frozen=True)
class Mutant:
    """One wrong build: ``operator[target]``, what it does in words, and its writes."""

    operator: str
    target: str
    description: str
    writes: Writes

    @property
    def name(self) -> str:
        return f"{self.operator}[{self.target}]"


Operator = Callable[[Context], Iterator[Mutant]]
OPERATORS: dict[str, Operator] = {}


def operator(name: str) -> Callable[[Operator], Operator]:
    """Register ``name`` (``family.what``) for the decorated function."""
    family = name.partition(".")[0]
    if family not in FAMILIES:
        raise ValueError(f"operator {name!r} belongs to no family of mutation.registry.FAMILIES")

    def register(function: Operator) -> Operator:
        OPERATORS[name] = function
        return function

    return register


def operators() -> dict[str, Operator]:
    """Every registered operator, its family modules imported."""
    for module in FAMILIES.values():
        importlib.import_module(f"ai_proving_ground.mutation.{module}")
    return OPERATORS


def derive(context: Context, only: Callable[[str], bool] = lambda name: True) -> list[Mutant]:
    """Every mutant of every operator ``only`` keeps, family by family in ``FAMILIES`` order
    (operators of a family in registration order), and each name once (an operator that
    reaches one target twice keeps the first)."""
    found: dict[str, Mutant] = {}
    order = list(FAMILIES)
    registered = list(operators().items())  # a family module may import another's first
    for name, function in sorted(registered, key=lambda item: order.index(item[0].partition(".")[0])):
        if only(name):
            for mutant in function(context):
                found.setdefault(mutant.name, mutant)
    return list(found.values())
