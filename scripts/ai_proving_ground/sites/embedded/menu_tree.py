"""A menu as the embedded site answers it: ``system.menu.ID`` and its links, each link's URI
resolved to where a visitor's click leads, spelled as :class:`~ai_proving_ground.sites.menus.
MenuLink` says (the probe resolves a link on Drupal with ``Url::fromUri()``, to the same words).
"""

from __future__ import annotations

import re
from typing import Any

from ai_proving_ground.sites.embedded import menu_links, pages, router
from ai_proving_ground.sites.embedded.store import Store
from ai_proving_ground.sites.menus import MenuLink, MenuTree

FRONT = "<front>"
# An entity: URI names the type and id (entity:taxonomy_term/3); a canonical path spells it as
# the type's route does (/node/3, /taxonomy/term/3, /user/3, a Canvas page's /page/3).
_ENTITY_URI = re.compile(r"^([a-z0-9_]+)/([0-9]+)$")
_CANONICAL_PATH = re.compile(r"^/(node|taxonomy/term|user|page)/([0-9]+)$")
_PATH_TYPES = {"node": "node", "taxonomy/term": "taxonomy_term", "user": "user",
               "page": "canvas_page"}


def read_menu(store: Store, menu_id: str, views_on: bool) -> MenuTree | None:
    """The menu and its links (every link whose ``menu_name`` is the menu's id), or ``None``."""
    menu = store.config_get(f"system.menu.{menu_id}")
    if not isinstance(menu, dict):
        return None
    links = [_link(store, record.uuid, record.label, record.status, record.fields, views_on)
             for record in store.entities_of(menu_links.ENTITY_TYPE)
             if _first(record.fields, "menu_name") == menu_id]
    return MenuTree(menu_id, str(menu.get("label") or ""), tuple(links))


def _first(fields: dict[str, Any], name: str, column: str = "value") -> Any:
    items = fields.get(name) or [{}]
    return items[0].get(column) if isinstance(items[0], dict) else None


def _link(store: Store, uuid: str, title: str, enabled: bool, fields: dict[str, Any],
          views_on: bool) -> MenuLink:
    uri = str(_first(fields, "link", "uri") or "")
    return MenuLink(uuid, title, uri, resolve(store, uri, views_on),
                    str(_first(fields, "parent") or ""), int(_first(fields, "weight") or 0),
                    bool(enabled), bool(_first(fields, "expanded")))


def resolve(store: Store, uri: str, views_on: bool) -> str:
    """Where a link's URI leads (see :class:`~ai_proving_ground.sites.menus.MenuLink`)."""
    scheme, _, rest = uri.partition(":")
    if uri in ("route:<front>", "internal:/", "internal:<front>"):
        return FRONT
    if scheme == "entity":
        match = _ENTITY_URI.match(rest)
        return _entity_target(store, match.group(1), match.group(2)) if match else uri
    if scheme != "internal" or not rest.startswith("/"):
        return uri
    path = router.normalize_path(rest.split("?", 1)[0].split("#", 1)[0])
    if path == "/":
        return FRONT
    # An alias is resolved before routing, as Drupal's path processor does.
    target = pages.alias_target(store, path)
    if target is not None:
        return f"{target.entity_type}:{target.uuid}"
    canonical = _CANONICAL_PATH.match(path)
    if canonical:
        # The path validator routes /node/3 only when node 3 exists; else it is a plain path.
        routed = _entity_target(store, _PATH_TYPES[canonical.group(1)], canonical.group(2))
        return routed if ":" in routed else path
    routes = router.view_routes(store, path) if views_on else []
    return routes[0][0] if routes else path


def _entity_target(store: Store, entity_type: str, entity_id: str) -> str:
    """The entity as ``TYPE:<uuid>``, or ``TYPE/ID`` when there is none (an ``entity:`` URI is
    routed without loading its entity)."""
    record = store.entity_by_id(entity_type, int(entity_id))
    return f"{entity_type}:{record.uuid}" if record is not None else f"{entity_type}/{entity_id}"
