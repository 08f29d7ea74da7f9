"""The stub site's menus: what probe.php's ``menus()`` answers, on the stub's state.

A menu is its ``system.menu.ID`` config; its links are the ``menu_link_content`` entities whose
``menu_name`` is the id, by id, each link's URI resolved as ``linkTarget()`` resolves it with
Drupal's ``Url::fromUri()``: the front page, an entity's path (``entity:node/3``,
``internal:/node/3``, an alias) as the entity, a view's page path as the view display, another
internal path as the path, anything else as given. Values are stored strings, as on Drupal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import stub_views

# MenuLinkContent's base fields: an entity may be given any of them, set or not before.
BASE_FIELDS = frozenset({"title", "description", "menu_name", "link", "external", "rediscover",
                         "weight", "expanded", "enabled", "parent"})
ENTITY_URI = re.compile(r"^([a-z0-9_]+)/([0-9]+)$")
CANONICAL_PATH = re.compile(r"^/(node|taxonomy/term|user|page)/([0-9]+)$")
PATH_TYPES = {"node": "node", "taxonomy/term": "taxonomy_term", "user": "user", "page": "canvas_page"}


def menus_answer(state: Mapping[str, Any], menu_ids: list[Any]) -> dict[str, Any]:
    answer: dict[str, Any] = {}
    for menu_id in map(str, menu_ids):
        menu = state["config"].get(f"system.menu.{menu_id}")
        if menu is None:
            answer[menu_id] = None
            continue
        links = [_link(state, uuid, entity) for uuid, entity in
                 sorted(state["entities"].items(), key=lambda pair: pair[1]["id"])
                 if entity["entity_type"] == "menu_link_content"
                 and _first(entity, "menu_name") == menu_id]
        answer[menu_id] = {"menu_id": menu_id, "label": menu.get("label", ""), "links": links}
    return answer


def _first(entity: Mapping[str, Any], name: str, column: str = "value") -> Any:
    items = entity["fields"].get(name) or [{}]
    return items[0].get(column)


def _link(state: Mapping[str, Any], uuid: str, entity: Mapping[str, Any]) -> dict[str, Any]:
    uri = str(_first(entity, "link", "uri") or "")
    return {"uuid": uuid, "title": _first(entity, "title") or "", "uri": uri,
            "target": link_target(state, uri), "parent": _first(entity, "parent") or "",
            "weight": _first(entity, "weight") or "0",
            # enabled and expanded are booleans stored as "1"/"0"; enabled defaults to on
            "enabled": (_first(entity, "enabled") or "1") == "1",
            "expanded": (_first(entity, "expanded") or "0") == "1"}


def link_target(state: Mapping[str, Any], uri: str) -> str:
    if uri in ("route:<front>", "internal:/", "internal:<front>"):
        return "<front>"
    scheme, _, rest = uri.partition(":")
    if scheme == "entity":
        match = ENTITY_URI.match(rest)
        return _entity(state, match.group(1), match.group(2)) if match else uri
    if scheme != "internal":
        return uri
    path = "/" + rest.split("?", 1)[0].split("#", 1)[0].strip("/")
    page = stub_views.page_answer(state, {"path": path})
    if page["claims"]:
        return str(page["claims"][0])
    canonical = CANONICAL_PATH.match(path)
    if canonical is None:
        return path
    # Routed only when the entity exists, as the path validator routes it.
    target = _entity(state, PATH_TYPES[canonical.group(1)], canonical.group(2))
    return target if ":" in target else path


def _entity(state: Mapping[str, Any], entity_type: str, entity_id: str) -> str:
    found = next((u for u, e in state["entities"].items()
                  if e["entity_type"] == entity_type and str(e["id"]) == entity_id), None)
    return f"{entity_type}:{found}" if found else f"{entity_type}/{entity_id}"
