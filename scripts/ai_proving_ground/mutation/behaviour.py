"""What a build does, as a visitor and a grader would see it, object by object: a mutant whose
behaviour equals the reference's on every object either touches is equivalent, not wrong.

- a view: each display executed (what a visitor gets, its rows in order), whether it is
  enabled and whether it is a page;
- a page region: whether it is enabled, and its component tree;
- a menu link: its menu as a visitor gets it (the enabled links, nested, in order, each by title,
  target and whether it shows its children; a link's weight or ``external`` flag that changes
  none of that is not a behaviour);
- a Canvas page: its title, status, fields and component tree;
- any other config object or entity: its data;
- every path a visitor could be served at (a view's page paths, an entity's aliases, the
  reference's and the mutant's): which routes claim it, which one serves it, what it lists.

A tree is compared as a visitor gets it: nested by parent and slot, in order, without UUIDs
(a component saved anew under another UUID renders the same).

A view runs as a first visit runs it (no exposed input, no contextual argument) and then once
per input :mod:`.inputs` chose for it (each exposed filter given a value that selects a subset
and one that selects nothing, its contextual filters given an argument, the inputs a task's
checks give): a build that changes an exposed filter's operator or a contextual filter's default
lists what the reference lists on a first visit, but not under every input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ai_proving_ground.mutation.canvas_ops import PAGE_TREE, REGION_PREFIX, REGION_TREE
from ai_proving_ground.mutation.inputs import Inputs
from ai_proving_ground.mutation.state import EntityState, SiteState
from ai_proving_ground.mutation.views_ops import VIEW_PREFIX
from ai_proving_ground.sites.base import PageQuery, SiteDriver, StateAnswer, StateQuery, ViewQuery
from ai_proving_ground.tasks.checks.menu import visible_tree

Behaviour = dict[str, Any]
PAGE = "page:"  # a served path's key in a Behaviour, beside config names and UUIDs
MENU_LINK = "menu_link_content"


def served_paths(config: Mapping[str, Any], entities: Mapping[str, EntityState | None]) -> set[str]:
    """The paths these objects would serve: views' page paths, entities' aliases."""
    paths = set()
    for name, view in config.items():
        if name.startswith(VIEW_PREFIX) and isinstance(view, dict):
            for display in (view.get("display") or {}).values():
                options = (display or {}).get("display_options") if isinstance(display, dict) else None
                path = options.get("path") if isinstance(options, dict) else None
                if isinstance(path, str) and path.strip("/"):
                    paths.add("/" + path.strip("/"))
    for entity in entities.values():
        for item in (entity.fields.get("path") or []) if entity is not None else []:
            alias = item.get("alias") if isinstance(item, dict) else None
            if isinstance(alias, str) and alias.strip("/"):
                paths.add("/" + alias.strip("/"))
    return paths


def behaviour(site: SiteDriver, state: SiteState, names: Iterable[str],
              paths: Iterable[str] = (), inputs: Inputs | None = None) -> Behaviour:
    """The behaviour of each named config object or entity UUID, and of each path, in one
    driver round trip; a view's displays also under each of its ``inputs``."""
    names = sorted(set(names))
    inputs = inputs or {}
    labelled = [(n, display, input_.label if input_ else "",
                 ViewQuery(n.removeprefix(VIEW_PREFIX), display,
                           *((input_.arguments, input_.exposed, input_.page) if input_ else ())))
                for n in names if n.startswith(VIEW_PREFIX) and isinstance(state.config.get(n), dict)
                for display in sorted(state.config[n].get("display") or {})
                for input_ in (None, *inputs.get(n, ()))]
    queries = [query for *_, query in labelled]
    pages = [PageQuery(path) for path in sorted(set(paths))]
    menus = sorted({m for m in (_menu_of(state.entities.get(n)) for n in names) if m})
    answer = site.read_state(StateQuery(views=tuple(queries), pages=tuple(pages),
                                        menus=tuple(menus))) \
        if queries or pages or menus else None
    executed = {(q.view_id, display, label): r for (_n, display, label, q), r
                in zip(labelled, answer.views if answer else [], strict=True)}
    found: Behaviour = {
        PAGE + q.path: {"claims": list(r.claims), "served": r.served, "outcome": r.outcome,
                        "error": r.error, "rows": [row.uuid for row in r.rows]}
        for q, r in zip(pages, answer.pages if answer else [], strict=True)}
    for name in names:
        if name in state.entities or name not in state.config:
            found[name] = _entity(state, name, answer)
        elif name.startswith(VIEW_PREFIX):
            found[name] = _view(state.config[name], name.removeprefix(VIEW_PREFIX), executed)
        elif name.startswith(REGION_PREFIX):
            data = state.config[name] or {}
            found[name] = {"status": data.get("status", True),
                           "tree": nested(data.get(REGION_TREE) or [])}
        else:
            found[name] = state.config[name]
    return found


def _view(view: Any, view_id: str, executed: dict[tuple[str, str, str], Any]) -> Any:
    if not isinstance(view, dict):
        return view
    displays = {}
    for display_id, display in sorted((view.get("display") or {}).items()):
        result = executed[(view_id, display_id, "")]
        options = (display or {}).get("display_options") or {}
        # Its path is judged as the page a visitor gets there (the PAGE keys), not as written.
        displays[display_id] = {"page": isinstance(options.get("path"), str),
                                "enabled": options.get("enabled", True) is not False,
                                **_executed(result)}
        given = {label: _executed(r) for (v, d, label), r in executed.items()
                 if (v, d) == (view_id, display_id) and label}
        if given:
            displays[display_id]["inputs"] = dict(sorted(given.items()))
    return displays


def _executed(result: Any) -> dict[str, Any]:
    return {"outcome": result.outcome, "error": result.error, "rows": [r.uuid for r in result.rows]}


def _menu_of(entity: EntityState | None) -> str | None:
    """The menu a menu link is saved in (None for anything else)."""
    if entity is None or entity.entity_type != MENU_LINK:
        return None
    items = entity.fields.get("menu_name") or [{}]
    menu = items[0].get("value") if isinstance(items[0], dict) else None
    return str(menu) if menu else None


def _entity(state: SiteState, uuid: str, answer: StateAnswer | None) -> Any:
    entity = state.entities.get(uuid)
    if entity is None:
        return None
    menu_id = _menu_of(entity)
    if menu_id is not None:
        menu = answer.menus.get(menu_id) if answer else None
        return {"menu": menu_id, "tree": visible_tree(menu) if menu else None}
    data = entity.as_json()
    if isinstance(entity.fields.get(PAGE_TREE), list):
        data["fields"] = {k: v for k, v in entity.fields.items() if k != PAGE_TREE}
        data["tree"] = nested(entity.fields[PAGE_TREE])
    return data


def nested(components: list[Any]) -> dict[str, Any]:
    """A component list as a visitor gets it: roots in order, each with its slots' children;
    components whose parent is not in the tree apart (they render nowhere)."""
    known = {c.get("uuid") for c in components if isinstance(c, dict)}

    def node(component: dict[str, Any]) -> dict[str, Any]:
        slots: dict[str, list[Any]] = {}
        for child in components:
            if isinstance(child, dict) and child.get("parent_uuid") == component.get("uuid"):
                slots.setdefault(str(child.get("slot")), []).append(node(child))
        return {"component_id": component.get("component_id"),
                "inputs": component.get("inputs") or {}, "slots": slots}

    items = [c for c in components if isinstance(c, dict)]
    return {"roots": [node(c) for c in items if c.get("parent_uuid") is None],
            "orphans": [node(c) for c in items
                        if c.get("parent_uuid") is not None and c.get("parent_uuid") not in known]}
