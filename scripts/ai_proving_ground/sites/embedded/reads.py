"""What the embedded site answers to a batched state query (one round trip, many questions)."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.base import (
    CanvasRef,
    CanvasTree,
    CountQuery,
    ModuleState,
    PendingUpdate,
    StateAnswer,
    StateQuery,
    Versions,
    ViewQuery,
    ViewResult,
)
from ai_proving_ground.sites.embedded import canvas, menu_tree, modules, pages, router
from ai_proving_ground.sites.embedded.entity_types import ENTITY_TYPES
from ai_proving_ground.sites.embedded.store import Store

if TYPE_CHECKING:
    from ai_proving_ground.sites.embedded.views import ViewSchema

EXTENSION_CONFIG = "core.extension"
SCHEMA_COLLECTION = "system.schema"
NO_SUCH_VIEW = "no such view or display"
DISABLED_PAGE = "not served (disabled: page path 404)"
DISABLED_DISPLAY_PAGE = "not served (display disabled: page path 404)"


@dataclass(frozen=True)
class ModuleFacts:
    """The module files on disk and what the database records of them, read once per request."""

    approot: Path
    available: dict[str, modules.ModuleInfo]
    enabled: set[str]
    schema: dict[str, Any]

    @classmethod
    def read(cls, approot: Path, store: Store) -> ModuleFacts:
        return cls(approot, modules.discover(approot), enabled_modules(store),
                   store.kv_all(SCHEMA_COLLECTION))


def answer(approot: Path, store: Store, query: StateQuery) -> StateAnswer:
    answer = StateAnswer()
    wants_modules = query.modules or query.pending_updates or query.versions
    facts = ModuleFacts.read(approot, store) if wants_modules else None
    if facts and query.modules:
        answer.modules = _module_states(facts)
    if query.config:
        answer.config = store.config_get_many(query.config)
    for prefix in query.config_prefixes:
        answer.config_names[prefix] = store.config_names(prefix)
    if query.entities:
        found = store.entities_by_uuid(query.entities)
        answer.entities = {u: found.get(u) for u in query.entities}
    answer.counts = [_count(store, q) for q in query.counts]
    answer.views = [_execute_view(store, q) for q in query.views]
    answer.canvas = [_canvas_tree(store, ref) for ref in query.canvas]
    if query.pages or query.menus:
        views_on = "views" in enabled_modules(store)
        answer.pages = [pages.serve(store, q, _execute_view, views_on) for q in query.pages]
        answer.menus = {menu_id: menu_tree.read_menu(store, menu_id, views_on)
                        for menu_id in query.menus}
    if facts and query.pending_updates:
        answer.pending_updates = pending_updates(facts)
    if facts and query.versions:
        answer.versions = _versions(facts)
    return answer


def enabled_modules(store: Store) -> set[str]:
    return enabled_in({EXTENSION_CONFIG: store.config_get(EXTENSION_CONFIG)})


def enabled_in(config: Mapping[str, Any]) -> set[str]:
    extension = config.get(EXTENSION_CONFIG) or {}
    return set(extension.get("module") or {})


def _module_states(facts: ModuleFacts) -> dict[str, ModuleState]:
    schema = facts.schema
    states: dict[str, ModuleState] = {}
    for name, info in sorted(facts.available.items()):
        states[name] = ModuleState(
            name=name, enabled=name in facts.enabled, version=info.version, package=info.package,
            path=_display_path(info.path, facts.approot), schema_installed=schema.get(name),
            schema_code=info.schema_version,
        )
    for name in sorted(facts.enabled - set(states)):
        # Installed but gone from disk: Drupal reports these too, and so must the doctor.
        states[name] = ModuleState(name=name, enabled=True, version=None, path=None,
                                   schema_installed=schema.get(name))
    return states


def _count(store: Store, query: CountQuery) -> int:
    if not query.conditions:
        return store.entity_count(query.entity_type, query.bundle)
    # Conditions are evaluated by the Views engine, so a count and a view filter agree.
    # Lazy for start-up time: most commands never execute a view.
    from ai_proving_ground.sites.embedded.views import ViewError, execute_view

    view = condition_view(query)
    try:
        result = execute_view("count", view, "default",
                              store.entities_of(query.entity_type, query.bundle))
    except ViewError as exc:
        raise ApgError("APG_QUERY_INVALID", f"count condition: {exc}") from None
    return result.total_rows


def _execute_view(store: Store, query: ViewQuery) -> ViewResult:
    view_id, display_id = query.view_id, query.display_id
    view = store.config_get(f"views.view.{view_id}")
    if view is None:
        return ViewResult(view_id, display_id, error=f"view {view_id} does not exist",
                          outcome=NO_SUCH_VIEW)
    if "views" not in enabled_modules(store):
        return ViewResult(view_id, display_id, error="module views is not installed",
                          outcome=NO_SUCH_VIEW)
    displays = view.get("display") if isinstance(view, dict) else None
    if not isinstance(displays, dict) or display_id not in displays:
        known = ", ".join(str(d) for d in displays) if isinstance(displays, dict) else "none"
        return ViewResult(view_id, display_id, outcome=NO_SUCH_VIEW,
                          error=f"view {view_id} has no display {display_id} (known displays:"
                                f" {known})")
    if not view.get("status", True):
        page = (displays[display_id] or {}).get("display_plugin") == "page"
        return ViewResult(view_id, display_id, error=f"view {view_id} is disabled",
                          outcome=DISABLED_PAGE if page else "not served (disabled)")
    if display_id != "default" and not router.display_enabled(displays[display_id]):
        # A disabled display makes no route: its page path is a 404 whatever its rows.
        page = (displays[display_id] or {}).get("display_plugin") == "page"
        return ViewResult(view_id, display_id, error=f"display {display_id} is disabled",
                          outcome=DISABLED_DISPLAY_PAGE if page else "not served (display disabled)")
    # Lazy for start-up time, as in _count.
    from ai_proving_ground.sites.embedded.views import ViewError, base_entity_type, execute_view

    try:
        entity_type = base_entity_type(view)
        return execute_view(view_id, view, display_id, store.entities_of(entity_type),
                            arguments=query.arguments, schema=view_schema(store, entity_type),
                            exposed=dict(query.exposed), pager_page=query.page)
    except ViewError as exc:
        return ViewResult(view_id, display_id, error=str(exc), outcome="exception")


def view_schema(store: Store, entity_type: str) -> ViewSchema:
    """What Views data holds for ``entity_type``: its usable fields and its bundles."""
    # Lazy for start-up time, as in _count.
    from ai_proving_ground.sites.embedded.views import FieldInfo, ViewSchema

    definition = ENTITY_TYPES.get(entity_type)
    prefix = definition.bundle_prefix if definition else None
    bundles = {}
    if prefix:
        for name, data in store.config_get_many(store.config_names(prefix)).items():
            if isinstance(data, dict):
                bundles[name.removeprefix(prefix)] = str(data.get("name") or "")
    labels: dict[str, str] = {}
    for data in store.config_get_many(store.config_names(f"field.field.{entity_type}.")).values():
        if isinstance(data, dict) and isinstance(data.get("field_name"), str):
            labels.setdefault(data["field_name"], str(data.get("label") or data["field_name"]))
    fields = {}
    for data in store.config_get_many(store.config_names(f"field.storage.{entity_type}.")).values():
        if isinstance(data, dict) and isinstance(data.get("field_name"), str):
            field_name = data["field_name"]
            fields[field_name] = FieldInfo(labels.get(field_name) or field_name,
                                           str(data.get("type")), _allowed_keys(data))
    return ViewSchema(fields, bundles)


def _allowed_keys(storage: dict[str, Any]) -> tuple[str, ...] | None:
    settings = storage.get("settings")
    allowed = settings.get("allowed_values") if isinstance(settings, dict) else None
    if isinstance(allowed, list):
        return tuple(str(a.get("value")) for a in allowed if isinstance(a, dict))
    if isinstance(allowed, dict):
        return tuple(str(k) for k in allowed)
    return None


def _canvas_tree(store: Store, ref: CanvasRef) -> CanvasTree | None:
    if ref.kind == "page":
        record = store.entities_by_uuid([ref.key]).get(ref.key)
        if record is None or record.entity_type != "canvas_page":
            return None
        items = record.fields.get("components", [])
        return CanvasTree("page", ref.key, record.label, canvas.parse_tree(items, ref.key),
                          status=record.status)
    if ref.kind == "region":
        data = store.config_get(ref.key)
        if not isinstance(data, dict):
            return None
        tree = canvas.parse_tree(data.get("component_tree") or [], ref.key)
        return CanvasTree("region", ref.key, str(data.get("label", ref.key)), tree,
                          status=data.get("status", True) not in (False, 0, "", "0", None))
    raise ApgError("APG_USAGE", f"canvas reference kind must be page or region, not {ref.kind}",
                   exit_code=2)


def pending_updates(facts: ModuleFacts) -> list[PendingUpdate]:
    schema = facts.schema
    pending: list[PendingUpdate] = []
    for name in sorted(facts.enabled):
        info = facts.available.get(name)
        if info is None:
            continue
        # Installed before its code declared a schema: like Drupal's minimum schema
        # version, every update the code now has is pending.
        installed = schema.get(name, 0) if info.schema_version is not None else None
        for number, description in modules.pending_updates(info, installed):
            pending.append(PendingUpdate(name, f"{name}_update_{number}", description))
    return pending


def python_version() -> str:
    """This interpreter's version as ``python_version()`` gives it (the first word of
    ``sys.version``), without importing platform on every reset (about 3 ms of start-up)."""
    return sys.version.split()[0]


def _versions(facts: ModuleFacts) -> Versions:
    states = _module_states(facts)
    enabled = {n: s for n, s in states.items() if s.enabled}
    return Versions(
        core=modules.CORE_VERSION,
        runtime={"python": python_version(), "sqlite": sqlite3.sqlite_version},
        modules={
            n: {"package": s.package, "version": s.version, "source_reference": None}
            for n, s in enabled.items()
        },
        schema={n: s.schema_installed for n, s in enabled.items()},
    )


def condition_view(query: CountQuery) -> dict[str, Any]:
    """A view config whose filters are the query's conditions (all must hold)."""
    definition = ENTITY_TYPES.get(query.entity_type)
    table = definition.base_table if definition else f"{query.entity_type}_field_data"
    base_fields = (definition.base_fields if definition else frozenset()) | {
        "id", "uuid", "type", "bundle", "status", "label", "title", "name"}

    def column(name: str) -> str:
        # Configurable fields live in their own table, as Views addresses them.
        return table if name in base_fields else f"{query.entity_type}__{name}"

    filters = {
        f"c{index}": {"table": column(c.field), "field": c.field, "operator": c.operator,
                      "value": c.value}
        for index, c in enumerate(query.conditions)
    }
    options = {"filters": filters, "pager": {"type": "none", "options": {"offset": 0}}}
    return {"id": "count", "base_table": table, "display": {"default": {
        "display_plugin": "default", "display_options": options}}}


def _display_path(path: Path, approot: Path) -> str:
    try:
        return str(path.relative_to(approot))
    except ValueError:
        return f"core/modules/{path.name}"


def status_facts(database: Path, webroot: Path, private: Path | None,
                 store: Store | None) -> dict[str, Any]:
    """``drush core:status``: the site's facts; ``store`` is None before it is installed."""
    facts: dict[str, Any] = {
        "drupal-version": modules.CORE_VERSION,
        "db-driver": "sqlite",
        "db-name": str(database),
        "db-status": "Connected" if store else "Not installed",
        "bootstrap": "Successful" if store else "",
        "install-profile": "embedded",
        "python-version": python_version(),
        "root": str(webroot),
        "site": "sites/default",
        "files": "sites/default/files",
        "private": str(private or ""),
        "config-sync": "../config/sync",
    }
    if store is not None:
        facts["modules"] = len(enabled_modules(store))
        facts["site-name"] = (store.config_get("system.site") or {}).get("name", "")
    return facts
