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
(``view.ID.DISPLAY``, as Views names them) -> its path, normalized. A ``%`` part of a view's path
(``notices/category/%``) is a placeholder: it matches any one part of a visitor's path, and what
it matched is the display's contextual argument. Of the routes that match a path, those with the
most literal parts win (Drupal's fit); a placeholder route a literal one shadows is never tried.
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


def route_arguments(pattern: str, path: str) -> tuple[str, ...] | None:
    """The parts of ``path`` that ``pattern``'s placeholders (``%``, ``%name``) take, in order;
    None when the pattern does not match (a literal part differs, or the part counts differ)."""
    want, have = pattern.strip("/").split("/"), path.strip("/").split("/")
    if len(want) != len(have):
        return None
    arguments = []
    for part, given in zip(want, have, strict=True):
        if part.startswith("%"):
            if not given:
                return None
            arguments.append(given)
        elif part != given:
            return None
    return tuple(arguments)


def route_fit(pattern: str) -> int:
    """Drupal's RouteCompiler::getFit(): a 1 bit for each literal part, the first the highest."""
    parts = pattern.strip("/").split("/")
    return sum(1 << (len(parts) - 1 - i) for i, part in enumerate(parts) if not part.startswith("%"))


def best_routes(routes: Mapping[str, str], path: str) -> list[tuple[str, tuple[str, ...]]]:
    """(``view:ID/DISPLAY``, its arguments) for each route of ``routes`` (name -> path) that
    matches ``path`` with the best fit, in route-name order: the order the router's SQL gives
    candidates of equal fit."""
    matched = [(route_fit(own), name, arguments) for name, own in sorted(routes.items())
               if (arguments := route_arguments(own, path)) is not None]
    best = max((fit for fit, *_ in matched), default=0)
    return [(f"view:{name.removeprefix('view.').replace('.', '/', 1)}", arguments)
            for fit, name, arguments in matched if fit == best]


def view_routes(store: Store, path: str) -> list[tuple[str, tuple[str, ...]]]:
    """The router's routes for ``path`` (normalized): see :func:`best_routes`."""
    return best_routes(store.kv_all(ROUTER_COLLECTION), path)
