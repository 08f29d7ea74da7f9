"""Canvas mutants: in every component tree the reference changed (a page region's config, a
Canvas page's components), a component it added or changed moved to another parent or slot (or
another region), one of its inputs changed or dropped, the component duplicated; any component
removed (kept ones too); a region the reference wrote disabled.
"""

from __future__ import annotations

import copy
import dataclasses
import uuid as uuids
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ai_proving_ground.mutation.content_ops import changed_value
from ai_proving_ground.mutation.registry import Context, Mutant, operator
from ai_proving_ground.mutation.state import SiteState, Writes

REGION_PREFIX = "canvas.page_region."
REGION_TREE = "component_tree"
PAGE_TREE = "components"
Component = dict[str, Any]


@dataclass(frozen=True)
class Tree:
    """Where a tree lives: a region config object or a Canvas page entity."""

    kind: str  # "region" or "page"
    key: str

    def components(self, state: SiteState) -> list[Component]:
        if self.kind == "region":
            found = (state.config.get(self.key) or {}).get(REGION_TREE)
        else:
            entity = state.entities.get(self.key)
            found = entity.fields.get(PAGE_TREE) if entity is not None else None
        return copy.deepcopy(found) if isinstance(found, list) else []

    def writes(self, context: Context, components: list[Component],
               writes: Writes | None = None) -> Writes:
        writes = writes or Writes()
        if self.kind == "region":
            data = copy.deepcopy(context.config(self.key))
            data[REGION_TREE] = components
            writes.config[self.key] = data
        else:
            entity = context.entity(self.key)
            assert entity is not None  # only trees the reference holds are mutated
            writes.entities[self.key] = dataclasses.replace(
                entity, fields={**copy.deepcopy(entity.fields), PAGE_TREE: components})
        return writes


def _trees(context: Context) -> Iterator[Tree]:
    for name in context.changed_config:
        if name.startswith(REGION_PREFIX) and isinstance(context.config(name), dict):
            yield Tree("region", name)
    for uuid in context.changed_entities:
        entity = context.entity(uuid)
        if entity is not None and isinstance(entity.fields.get(PAGE_TREE), list):
            yield Tree("page", uuid)


def _changed(context: Context, tree: Tree) -> Iterator[tuple[int, Component]]:
    """The components the reference added to or changed in ``tree``."""
    before = {c.get("uuid"): c for c in tree.components(context.baseline)}
    for index, component in enumerate(tree.components(context.reference)):
        if before.get(component.get("uuid")) != component:
            yield index, component


def _mutant(op: str, tree: Tree, component: Component, what: str, words: str,
            writes: Writes) -> Mutant:
    return Mutant(op, f"{tree.key}:{component.get('component_id')}@{component.get('uuid')}{what}",
                  words, writes)


def _without(components: list[Component], uuid: Any) -> list[Component]:
    """``components`` less ``uuid`` and everything below it."""
    gone = {uuid}
    for component in components:  # a child follows its parent in a Canvas tree's list
        if component.get("parent_uuid") in gone:
            gone.add(component.get("uuid"))
    return [c for c in components if c.get("uuid") not in gone]


@operator("canvas.moved")
def moved(context: Context) -> Iterator[Mutant]:
    for tree in _trees(context):
        components = tree.components(context.reference)
        for index, component in _changed(context, tree):
            for where, words, placed in _places(context, components, component):
                changed = copy.deepcopy(components)
                changed[index] = placed
                yield _mutant("canvas.moved", tree, component, f"->{where}", words,
                              tree.writes(context, changed))
            if component.get("parent_uuid") is None and tree.kind == "region":
                yield from _to_other_region(context, tree, components, component)


def _places(context: Context, components: list[Component],
            component: Component) -> Iterator[tuple[str, str, Component]]:
    """Other places in the same tree: the top level for a child, and every slot of another
    component whose definition has slots."""
    moved_root = {k: v for k, v in component.items() if k not in {"parent_uuid", "slot"}}
    here = (component.get("parent_uuid"), component.get("slot"))
    if here[0] is not None:
        yield "root", "moved out of its parent to the top level", moved_root
    for holder in components:
        if holder.get("uuid") == component.get("uuid"):
            continue
        for slot in _definition(context, holder).get("slots") or []:
            if (holder.get("uuid"), slot) != here:
                yield (f"{holder.get('uuid')}.{slot}",
                       f"moved into {holder.get('component_id')} {holder.get('uuid')}'s {slot} slot",
                       {**moved_root, "parent_uuid": holder.get("uuid"), "slot": slot})


def _definition(context: Context, component: Component) -> dict[str, Any]:
    found = context.config(f"canvas.component.{component.get('component_id')}")
    return found if isinstance(found, dict) else {}


def _to_other_region(context: Context, tree: Tree, components: list[Component],
                     component: Component) -> Iterator[Mutant]:
    for name in sorted(context.reference.config):
        if name.startswith(REGION_PREFIX) and name != tree.key:
            other = Tree("region", name)
            writes = tree.writes(context, _without(components, component.get("uuid")))
            other.writes(context, [*other.components(context.reference), component], writes)
            yield _mutant("canvas.moved", tree, component, f"->{name}",
                          f"moved to region {name}", writes)


@operator("canvas.input_changed")
def input_changed(context: Context) -> Iterator[Mutant]:
    for tree in _trees(context):
        components = tree.components(context.reference)
        for index, component in _changed(context, tree):
            props = _definition(context, component).get("props") or {}
            for key, value in (component.get("inputs") or {}).items():
                changed = copy.deepcopy(components)
                changed[index]["inputs"][key] = _other_input(props.get(key), value)
                yield _mutant("canvas.input_changed", tree, component, f".{key}",
                              f"input {key} made {changed[index]['inputs'][key]!r}",
                              tree.writes(context, changed))


def _other_input(prop: Any, value: Any) -> Any:
    """Another value the component accepts: the next of an enum's choices, else a changed one."""
    choices = prop.get("enum") if isinstance(prop, dict) else None
    if isinstance(choices, list) and len(choices) > 1 and value in choices:
        return choices[(choices.index(value) + 1) % len(choices)]
    return changed_value(value)


@operator("canvas.input_dropped")
def input_dropped(context: Context) -> Iterator[Mutant]:
    for tree in _trees(context):
        components = tree.components(context.reference)
        for index, component in _changed(context, tree):
            for key in component.get("inputs") or {}:
                changed = copy.deepcopy(components)
                del changed[index]["inputs"][key]
                yield _mutant("canvas.input_dropped", tree, component, f".{key}",
                              f"input {key} left out", tree.writes(context, changed))


@operator("canvas.duplicated")
def duplicated(context: Context) -> Iterator[Mutant]:
    for tree in _trees(context):
        components = tree.components(context.reference)
        for index, component in _changed(context, tree):
            copied = {**copy.deepcopy(component),
                      "uuid": str(uuids.uuid5(uuids.NAMESPACE_URL, f"apg-mutant:{component.get('uuid')}"))}
            changed = [*components[:index + 1], copied, *components[index + 1:]]
            yield _mutant("canvas.duplicated", tree, component, "", "added twice",
                          tree.writes(context, changed))


@operator("canvas.removed")
def removed(context: Context) -> Iterator[Mutant]:
    for tree in _trees(context):
        components = tree.components(context.reference)
        for component in components:
            yield _mutant("canvas.removed", tree, component, "", "removed (with what it holds)",
                          tree.writes(context, _without(components, component.get("uuid"))))


@operator("canvas.page_path")
def page_path(context: Context) -> Iterator[Mutant]:
    for tree in _trees(context):
        entity = context.entity(tree.key) if tree.kind == "page" else None
        aliases = entity.fields.get("path") if entity is not None else None
        if entity is None or not aliases or not isinstance(aliases[0], dict):
            continue
        moved = f"{str(aliases[0].get('alias', '')).rstrip('/')}-mutant"
        fields = {**copy.deepcopy(entity.fields), "path": [{**aliases[0], "alias": moved}]}
        yield Mutant("canvas.page_path", tree.key, f"page {tree.key} moved to {moved}",
                     Writes(entities={tree.key: dataclasses.replace(entity, fields=fields)}))


@operator("canvas.region_disabled")
def region_disabled(context: Context) -> Iterator[Mutant]:
    for tree in _trees(context):
        data = context.config(tree.key) if tree.kind == "region" else None
        if isinstance(data, dict) and data.get("status", True) is not False:
            yield Mutant("canvas.region_disabled", tree.key, f"region {tree.key} disabled",
                         Writes(config={tree.key: {**copy.deepcopy(data), "status": False}}))
