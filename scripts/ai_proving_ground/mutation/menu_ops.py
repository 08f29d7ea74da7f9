"""Menu mutants, of the menu links the reference created or changed: a link that leads to another
of the reference's targets, moved to the other end of its siblings, re-parented (a child to the
top, a top-level link under the sibling before it) or saved in another menu.

A link dropped, disabled or renamed, or a flag flipped, comes from the content family (an item
missing, its published state, a field value): a menu link is a content entity, and the same
mutant under two names would count twice.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from typing import Any

from ai_proving_ground.mutation.registry import Context, Mutant, operator
from ai_proving_ground.mutation.state import EntityState, Writes
from ai_proving_ground.tasks.checks.menu import PLUGIN_PREFIX

MENU_LINK = "menu_link_content"
MENU_PREFIX = "system.menu."


def _value(entity: EntityState, name: str, column: str = "value") -> Any:
    items = entity.fields.get(name) or [{}]
    return items[0].get(column) if isinstance(items[0], dict) else None


def _links(context: Context) -> list[tuple[str, EntityState]]:
    """The menu links the reference created or changed, by UUID."""
    found = []
    for uuid in context.changed_entities:
        entity = context.entity(uuid)
        if entity is not None and entity.entity_type == MENU_LINK:
            found.append((uuid, entity))
    return found


def _with(entity: EntityState, **values: Any) -> EntityState:
    """``entity`` with single-value fields set (``None`` empties one)."""
    fields = copy.deepcopy(entity.fields)
    for name, value in values.items():
        fields[name] = [] if value is None else [{"value": value}]
    return dataclasses.replace(entity, fields=fields)


def _parent(entity: EntityState) -> str:
    return str(_value(entity, "parent") or "").removeprefix(PLUGIN_PREFIX)


def _siblings(links: list[tuple[str, EntityState]]) -> dict[tuple[str, str], list[tuple[str, EntityState]]]:
    """The links by (menu, parent), each group in the order a visitor sees them."""
    groups: dict[tuple[str, str], list[tuple[str, EntityState]]] = {}
    for uuid, entity in links:
        groups.setdefault((str(_value(entity, "menu_name")), _parent(entity)), []).append((uuid, entity))
    for group in groups.values():
        group.sort(key=lambda pair: (int(_value(pair[1], "weight") or 0), pair[1].label, pair[0]))
    return groups


def _one(op: str, uuid: str, words: str, entity: EntityState) -> Mutant:
    return Mutant(op, uuid, words, Writes(entities={uuid: entity}))


@operator("menu.retargeted")
def retargeted(context: Context) -> Iterator[Mutant]:
    links = _links(context)
    uris = [_value(entity, "link", "uri") for _, entity in links]
    for index, (uuid, entity) in enumerate(links):
        own = uris[index]
        other = next((uri for uri in uris[index + 1:] + uris[:index] if uri and uri != own), None)
        if other is None:
            continue
        fields = copy.deepcopy(entity.fields)
        fields["link"] = [{**(fields.get("link") or [{}])[0], "uri": other}]
        yield _one("menu.retargeted", uuid, f"menu link {entity.label!r} leads to {other}",
                   dataclasses.replace(entity, fields=fields))


@operator("menu.moved")
def moved(context: Context) -> Iterator[Mutant]:
    for group in _siblings(_links(context)).values():
        if len(group) < 2:
            continue
        weights = [int(_value(entity, "weight") or 0) for _, entity in group]
        for index, (uuid, entity) in enumerate(group):
            last = index == len(group) - 1
            weight = min(weights) - 1 if last else max(weights) + 1
            yield _one("menu.moved", uuid, f"menu link {entity.label!r} moved "
                       f"{'first' if last else 'last'} among its siblings (weight {weight})",
                       _with(entity, weight=weight))


@operator("menu.reparented")
def reparented(context: Context) -> Iterator[Mutant]:
    for (_menu, parent), group in _siblings(_links(context)).items():
        for index, (uuid, entity) in enumerate(group):
            if parent:
                yield _one("menu.reparented", uuid, f"menu link {entity.label!r} at the top "
                           "of its menu, not under its parent", _with(entity, parent=None))
            elif index > 0:
                before = group[index - 1]
                yield _one("menu.reparented", uuid, f"menu link {entity.label!r} under "
                           f"{before[1].label!r}",
                           _with(entity, parent=f"{PLUGIN_PREFIX}{before[0]}"))


@operator("menu.other_menu")
def other_menu(context: Context) -> Iterator[Mutant]:
    links = _links(context)
    parents = {_parent(entity) for _, entity in links}
    for uuid, entity in links:
        if _parent(entity) or uuid in parents:
            continue  # a child follows its parent's menu in Drupal, and a parent takes its children
        own = str(_value(entity, "menu_name"))
        other = next((name.removeprefix(MENU_PREFIX) for name in sorted(context.reference.config)
                      if name.startswith(MENU_PREFIX) and name != MENU_PREFIX + own), None)
        if other is not None:
            yield _one("menu.other_menu", uuid, f"menu link {entity.label!r} saved in menu "
                       f"{other}, not {own}", _with(entity, menu_name=other))
