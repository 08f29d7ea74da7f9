"""Canvas component trees: parsing and validation against the site's component config."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.base import ComponentItem

ConfigLookup = Callable[[str], Any]
COMPONENT_PREFIX = "canvas.component."
REGION_PREFIX = "canvas.page_region."


def _fail(where: str, message: str) -> ApgError:
    return ApgError("APG_CANVAS_INVALID", f"{where}: {message}")


def parse_tree(items: Sequence[Any], where: str) -> tuple[ComponentItem, ...]:
    """Turn stored field items into components; ``inputs`` may be a JSON string, as Canvas keeps it."""
    tree: list[ComponentItem] = []
    for index, item in enumerate(items):
        at = f"{where}[{index}]"
        if not isinstance(item, dict):
            raise _fail(at, "each component must be a mapping with uuid and component_id")
        inputs = item.get("inputs") or {}
        if isinstance(inputs, str):
            try:
                inputs = json.loads(inputs)
            except json.JSONDecodeError as exc:
                raise _fail(at, f"inputs is not valid JSON ({exc.msg})") from None
        if not isinstance(inputs, dict):
            raise _fail(at, "inputs must be a mapping of prop name to value")
        uuid, component_id = item.get("uuid"), item.get("component_id")
        if not isinstance(uuid, str) or not uuid:
            raise _fail(at, "uuid is required")
        if not isinstance(component_id, str) or not component_id:
            raise _fail(at, "component_id is required")
        tree.append(
            ComponentItem(
                uuid=uuid,
                component_id=component_id,
                parent_uuid=item.get("parent_uuid") or None,
                slot=item.get("slot") or None,
                inputs=inputs,
            )
        )
    return tuple(tree)


def validate_tree(tree: Sequence[ComponentItem], lookup: ConfigLookup, where: str) -> None:
    """Components must exist, parents must be in the tree, slots and inputs must fit."""
    by_uuid: dict[str, ComponentItem] = {}
    for item in tree:
        if item.uuid in by_uuid:
            raise _fail(where, f"component uuid {item.uuid} appears twice")
        by_uuid[item.uuid] = item
    for index, item in enumerate(tree):
        at = f"{where}[{index}] ({item.uuid})"
        component = lookup(COMPONENT_PREFIX + item.component_id)
        if not isinstance(component, dict):
            raise _fail(at, f"unknown component {item.component_id!r}; list them with "
                            f"`apg site config:list {COMPONENT_PREFIX}`")
        _check_placement(item, by_uuid, lookup, at)
        _check_inputs(item, component.get("props") or {}, at)


def _check_placement(item: ComponentItem, by_uuid: dict[str, ComponentItem],
                     lookup: ConfigLookup, at: str) -> None:
    if item.parent_uuid is None:
        if item.slot is not None:
            raise _fail(at, "a root component has no slot; set parent_uuid or drop slot")
        return
    parent = by_uuid.get(item.parent_uuid)
    if parent is None:
        raise _fail(at, f"parent_uuid {item.parent_uuid} is not in this tree")
    parent_def = lookup(COMPONENT_PREFIX + parent.component_id) or {}
    slots = list(parent_def.get("slots") or [])
    if item.slot not in slots:
        raise _fail(at, f"slot {item.slot!r} is not a slot of {parent.component_id} "
                        f"(slots: {', '.join(slots) or 'none'})")
    seen = {item.uuid}
    cursor: ComponentItem | None = parent
    while cursor is not None:
        if cursor.uuid in seen:
            raise _fail(at, "parent_uuid links form a cycle")
        seen.add(cursor.uuid)
        cursor = by_uuid.get(cursor.parent_uuid) if cursor.parent_uuid else None


_PROP_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def _check_inputs(item: ComponentItem, props: dict[str, Any], at: str) -> None:
    for name in item.inputs:
        if name not in props:
            raise _fail(at, f"{item.component_id} has no input {name!r} "
                            f"(inputs: {', '.join(sorted(props)) or 'none'})")
    for name, prop in props.items():
        value = item.inputs.get(name)
        if value is None:
            if prop.get("required"):
                raise _fail(at, f"input {name!r} of {item.component_id} is required")
            continue
        expected = _PROP_TYPES.get(str(prop.get("type", "string")), (object,))
        if (isinstance(value, bool) and bool not in expected) or not isinstance(value, expected):
            raise _fail(at, f"input {name!r} must be of type {prop.get('type')}")
        enum = prop.get("enum")
        if enum and value not in enum:
            raise _fail(at, f"input {name!r} must be one of {enum}")


def items_from_tree(tree: Sequence[ComponentItem]) -> list[dict[str, Any]]:
    """Component items as stored and exported."""
    items: list[dict[str, Any]] = []
    for node in tree:
        item: dict[str, Any] = {"uuid": node.uuid, "component_id": node.component_id}
        if node.parent_uuid:
            item["parent_uuid"] = node.parent_uuid
            item["slot"] = node.slot
        item["inputs"] = node.inputs
        items.append(item)
    return items
