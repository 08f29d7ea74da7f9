"""The embedded site's router: the Views page routes as the last router rebuild left them.

As on Drupal, a visitor is routed by the router table, not by the config as it is now. Drupal
rebuilds the table on ``drush cr``, on a module install or uninstall, on a config import, on a
recipe and on database updates, and when a View is saved through its entity API (Views UI, a
config import, a recipe: ``View::postSave`` calls ``views_invalidate_cache()``, which sets the
rebuild needed). ``drush config:set`` writes the config object alone and rebuilds nothing: a
view set so has no route, its page path a 404, until one of those runs (on Drupal 10.3.7 every
dv01 build's /kb/billing was a 404 right after config:set and served after ``drush cr``:
tests/ddev/real_dv01/). A route made earlier stays at the path it was built for; what it serves
is the view's config as it is now (Drupal loads the View when a visitor comes).

Routes are kept in the ``router`` key-value collection, one entry a route: its name
(``view.ID.DISPLAY``, as Views names them) -> its path, normalized.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ai_proving_ground.sandbox.drush_policy import parse_allow
from ai_proving_ground.sites.embedded.store import Store

ROUTER_COLLECTION = "router"
# The commands (drush's names; an alias stands for its command) after which Drupal's router has
# been rebuilt: the cache rebuild, and those that install or uninstall modules or save a View
# through its entity API. config:set and config:delete are not among them.
REBUILDING_COMMANDS = frozenset({"cache:rebuild", "config:import", "recipe", "pm:install",
                                 "pm:uninstall", "views:enable", "views:disable"})


def rebuilds_router(steps: Iterable[Sequence[str]]) -> bool:
    """Whether a site command among ``steps`` (a reference solution's) rebuilds the router."""
    return any(parse_allow(step[:1]) & REBUILDING_COMMANDS for step in steps)


def normalize_path(path: str) -> str:
    """``kb/billing/`` and ``/kb/billing`` are one path: ``/kb/billing``."""
    return "/" + path.strip().strip("/")


def display_enabled(display: Any) -> bool:
    """A display runs unless its options say ``enabled`` is off (PHP-empty: false, 0, '')."""
    options = display.get("display_options") if isinstance(display, Mapping) else None
    if not isinstance(options, Mapping) or "enabled" not in options:
        return True
    return options["enabled"] not in (False, 0, "", "0", None)


def collect_routes(store: Store) -> dict[str, str]:
    """What a rebuild makes of the config now: route name -> path for every enabled page display
    (with a path) of every enabled view."""
    routes: dict[str, str] = {}
    names = store.config_names("views.view.")
    for name, view in store.config_get_many(names).items():
        if not isinstance(view, Mapping) or not view.get("status", True):
            continue
        displays = view.get("display")
        if not isinstance(displays, Mapping):
            continue
        for display_id, display in displays.items():
            if not isinstance(display, Mapping) or display.get("display_plugin") != "page":
                continue
            options = display.get("display_options")
            own = options.get("path") if isinstance(options, Mapping) else None
            if display_enabled(display) and isinstance(own, str):
                routes[f"view.{name.removeprefix('views.view.')}.{display_id}"] = normalize_path(own)
    return routes


def rebuild(store: Store) -> None:
    """Rebuild the router table from the config as it is now (inside the caller's transaction)."""
    store.kv_replace(ROUTER_COLLECTION, collect_routes(store))


def view_routes(store: Store, path: str) -> list[str]:
    """``view:ID/DISPLAY`` for every route the router holds at ``path`` (normalized), in route-name
    order: the order the router's SQL gives candidates of equal fit."""
    return [f"view:{name.removeprefix('view.').replace('.', '/', 1)}"
            for name, own in sorted(store.kv_all(ROUTER_COLLECTION).items()) if own == path]
