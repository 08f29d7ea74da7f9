"""Content mutants: of every entity the reference created or changed, a field value changed, the
item missing (not created, or its change undone), a second copy added, the published state
flipped. A task that writes no content still gets an item added to, and one unpublished from,
what its views list: the listing must notice both.
"""

from __future__ import annotations

import copy
import dataclasses
import uuid as uuids
from collections.abc import Iterator
from typing import Any

from ai_proving_ground.mutation.registry import Context, Mutant, operator
from ai_proving_ground.mutation.state import EntityState, Writes

SKIPPED_FIELDS = {"components"}  # a Canvas tree: the canvas family mutates it, node by node


def _changed(context: Context) -> Iterator[tuple[str, EntityState]]:
    for uuid in context.changed_entities:
        entity = context.entity(uuid)
        if entity is not None:
            yield uuid, entity


def _one(op: str, uuid: str, target: str, words: str, entity: EntityState | None) -> Mutant:
    return Mutant(op, f"{uuid}{target}", words, Writes(entities={uuid: entity}))


def changed_value(value: Any) -> Any:
    """Another value of the same type (shared with the canvas family)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return f"{value} (mutant)"
    return "apg mutant"


@operator("content.field_value")
def field_value(context: Context) -> Iterator[Mutant]:
    for uuid, entity in _changed(context):
        before = context.baseline.entities.get(uuid)
        if before is None or before.label != entity.label:
            yield _one("content.field_value", uuid, ":label", f"{entity.entity_type} {uuid} "
                       f"titled {changed_value(entity.label)!r}",
                       dataclasses.replace(entity, label=changed_value(entity.label)))
        for name, items in entity.fields.items():
            if name in SKIPPED_FIELDS or (before is not None and before.fields.get(name) == items):
                continue
            if not items or not isinstance(items[0], dict) or not items[0]:
                continue
            column = "value" if "value" in items[0] else next(iter(items[0]))
            fields = copy.deepcopy(entity.fields)
            fields[name][0][column] = changed_value(items[0][column])
            yield _one("content.field_value", uuid, f":{name}", f"{entity.entity_type} {uuid}'s "
                       f"{name} made {fields[name][0][column]!r}",
                       dataclasses.replace(entity, fields=fields))


@operator("content.item_missing")
def item_missing(context: Context) -> Iterator[Mutant]:
    for uuid, entity in _changed(context):
        before = context.baseline.entities.get(uuid)
        words = (f"{entity.entity_type} {uuid} not created" if before is None
                 else f"the change to {entity.entity_type} {uuid} not made")
        yield _one("content.item_missing", uuid, "", words, before)


def _sources(context: Context) -> Iterator[tuple[str, EntityState]]:
    """The entities a copy or a flipped status starts from: those the reference changed, else
    the first listed one; an entity the site no longer holds is skipped."""
    for uuid in [u for u, _ in _changed(context)] or _listed(context)[:1]:
        entity = context.entity(uuid)
        if entity is not None:
            yield uuid, entity


@operator("content.item_added")
def item_added(context: Context) -> Iterator[Mutant]:
    for uuid, entity in _sources(context):
        copied = str(uuids.uuid5(uuids.NAMESPACE_URL, f"apg-mutant:{uuid}"))
        yield Mutant("content.item_added", f"{uuid}:copy", f"a second {entity.entity_type} like "
                     f"{uuid} ({entity.label!r}) added", Writes(entities={copied: entity}))


@operator("content.published")
def published(context: Context) -> Iterator[Mutant]:
    for uuid, entity in _sources(context):
        state = "unpublished" if entity.status else "published"
        yield _one("content.published", uuid, "", f"{entity.entity_type} {uuid} {state}",
                   dataclasses.replace(entity, status=not entity.status))


def _listed(context: Context) -> list[str]:
    """The entities the reference's views list, first rows first."""
    seen: dict[str, None] = {}
    for rows in context.view_rows.values():
        seen.update(dict.fromkeys(rows))
    return list(seen)
