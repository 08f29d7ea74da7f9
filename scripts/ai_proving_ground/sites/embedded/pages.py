"""What an anonymous visitor of a path gets on the embedded site: the routes that claim it and
what the first of them serves.

As on Drupal, an alias is resolved before routing (``/home`` is the page entity it names,
whatever view also claims ``/home``), and a view display is routed only by the router table the
last rebuild left (``router``: an enabled page display of an enabled view, as the config was
then; ``config:set`` alone makes no route). Views routes at one path are tried in route-name
order (``view.<id>.<display>``), the order the router's SQL gives candidates of equal fit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ai_proving_ground.sites.base import EntityRecord, PageQuery, PageResult, ViewQuery, ViewResult
from ai_proving_ground.sites.embedded.entity_types import ENTITY_TYPES
from ai_proving_ground.sites.embedded.router import normalize_path, view_routes
from ai_proving_ground.sites.embedded.store import Store

NOT_FOUND = "not served (404)"
DENIED = "not served (403)"


def alias_target(store: Store, path: str) -> EntityRecord | None:
    """The entity whose path alias is ``path``, if any (the first by type and id)."""
    for entity_type, definition in sorted(ENTITY_TYPES.items()):
        if "path" not in definition.base_fields:
            continue
        for record in store.entities_of(entity_type):
            for item in record.fields.get("path", []):
                alias = item.get("alias") if isinstance(item, Mapping) else None
                if isinstance(alias, str) and alias and normalize_path(alias) == path:
                    return record
    return None


def serve(store: Store, query: PageQuery,
          execute: Callable[[Store, ViewQuery], ViewResult], views_on: bool) -> PageResult:
    """What a visitor of ``query.path`` gets; ``execute`` runs a view display as a visitor."""
    path = normalize_path(query.path)
    target = alias_target(store, path)
    claims = [f"{target.entity_type}:{target.uuid}"] if target is not None else []
    routes = dict(view_routes(store, path)) if views_on else {}
    claims += routes
    if not claims:
        return PageResult(path)
    if target is not None:
        return PageResult(path, tuple(claims), claims[0],
                          "entity" if target.status else DENIED)
    view_id, display_id = claims[0].removeprefix("view:").split("/", 1)
    result = execute(store, ViewQuery(view_id, display_id, routes[claims[0]]))
    return PageResult(path, tuple(claims), claims[0], result.outcome, result.rows, result.error)
