"""A field made as Drupal's entity API makes it (Field UI, ``drush field:create``): the storage
and field config with what Drupal fills in on save (uuid, langcode, status, dependencies,
module, indexes, translatable, default_value, the type's settings defaults), and the new field's
component in the bundle's entity form and view displays (the default ones get the type's default
widget and formatter; every other display lists it as hidden).
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.embedded.field_types import (
    BUNDLE_CONFIG,
    ENTITY_TYPE_MODULES,
    FIELD_TYPES,
    NODE_FORM_BASE,
    NODE_VIEW_EXTRA,
    NODE_VIEW_MODULES,
    FieldType,
    Plugin,
)
from ai_proving_ground.sites.embedded.reads import enabled_modules
from ai_proving_ground.sites.embedded.store import Store

Save = Callable[[Store, str, Any], object]
DISPLAYS = (("core.entity_form_display", "core.entity_form_mode"),
            ("core.entity_view_display", "core.entity_view_mode"))


@dataclass(frozen=True)
class FieldRequest:
    """What ``field:create`` is given (drush 13's options, plus the settings Field UI's form sets)."""

    entity_type: str
    bundle: str
    field_name: str
    field_type: str
    label: str
    cardinality: int = 1
    required: bool = False
    translatable: bool = True
    description: str = ""
    storage_settings: Mapping[str, Any] = field(default_factory=dict)
    field_settings: Mapping[str, Any] = field(default_factory=dict)


def with_defaults(defaults: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """Settings as Drupal saves them: each default in schema order, overridden by what is given."""
    merged = {key: given.get(key, value) for key, value in defaults.items()}
    merged.update({key: value for key, value in given.items() if key not in merged})
    return merged


def _allowed_values(field_type: str, values: Any) -> Any:
    """A ``key: label`` map (what Field UI's form posts) as the list Drupal stores."""
    if not isinstance(values, Mapping):
        return values
    cast: Callable[[Any], Any] = {"list_integer": int, "list_float": float}.get(field_type, str)
    return [{"value": cast(key), "label": label} for key, label in values.items()]


def _dependencies(config: set[str], module: set[str]) -> dict[str, list[str]]:
    found = {"config": sorted(config), "module": sorted(module - {"core"})}
    return {key: value for key, value in found.items() if value}


def _field_type(request: FieldRequest) -> FieldType:
    if request.field_type not in FIELD_TYPES:
        raise ApgError("APG_USAGE", f"--field-type {request.field_type!r} is not a field type;"
                       f" use one of {', '.join(sorted(FIELD_TYPES))}")
    return FIELD_TYPES[request.field_type]


def storage_config(request: FieldRequest) -> dict[str, Any]:
    kind = _field_type(request)
    settings = with_defaults(kind.storage, request.storage_settings)
    if "allowed_values" in settings:
        settings["allowed_values"] = _allowed_values(request.field_type, settings["allowed_values"])
    modules = {ENTITY_TYPE_MODULES.get(request.entity_type, request.entity_type), kind.module}
    if "target_type" in settings:
        modules.add(ENTITY_TYPE_MODULES.get(str(settings["target_type"]), "core"))
    return {"uuid": str(uuidlib.uuid4()), "langcode": "en", "status": True,
            "dependencies": _dependencies(set(), modules),
            "id": f"{request.entity_type}.{request.field_name}",
            "field_name": request.field_name, "entity_type": request.entity_type,
            "type": request.field_type, "settings": settings, "module": kind.module,
            "locked": False, "cardinality": request.cardinality,
            "translatable": request.translatable, "indexes": {},
            "persist_with_no_fields": False, "custom_storage": False}


def field_config(request: FieldRequest, storage: Mapping[str, Any]) -> dict[str, Any]:
    kind = _field_type(request)
    defaults = dict(kind.field)
    target = storage["settings"].get("target_type")
    if request.field_type == "entity_reference":
        defaults["handler"] = f"default:{target}"
    settings = with_defaults(defaults, request.field_settings)
    config = {f"field.storage.{request.entity_type}.{request.field_name}",
              BUNDLE_CONFIG.get(request.entity_type, "") + request.bundle}
    handler_settings = settings.get("handler_settings") or {}
    if request.field_type == "entity_reference" and str(target) in BUNDLE_CONFIG:
        config |= {BUNDLE_CONFIG[str(target)] + b for b in handler_settings.get("target_bundles")
                   or {}}
    return {"uuid": str(uuidlib.uuid4()), "langcode": "en", "status": True,
            "dependencies": _dependencies(config, {kind.module}),
            "id": f"{request.entity_type}.{request.bundle}.{request.field_name}",
            "field_name": request.field_name, "entity_type": request.entity_type,
            "bundle": request.bundle, "label": request.label,
            "description": request.description, "required": request.required,
            "translatable": True, "default_value": {}, "default_value_callback": "",
            "settings": settings, "field_type": request.field_type}


def _component(plugin: Plugin, weight: int | None, *, form: bool,
               label: str = "above") -> dict[str, Any]:
    if form:
        return {"type": plugin.id, "weight": weight, "region": "content",
                "settings": dict(plugin.settings), "third_party_settings": {}}
    return {"type": plugin.id, "label": label, "settings": dict(plugin.settings),
            "third_party_settings": {}, "weight": weight, "region": "content"}


def new_display(store: Store, entity_type: str, bundle: str, kind: str,
                mode: str) -> dict[str, Any]:
    """A display as Drupal makes it on first use (EntityDisplayBase::init): a node's form
    display holds the base fields with a configurable form widget, its view display the
    ``links`` extra field; their providers are dependencies from the start."""
    content: dict[str, Any] = {}
    modules: set[str] = set()
    if entity_type == "node" and kind == DISPLAYS[0][0]:
        enabled = enabled_modules(store)
        for name, (module, options) in NODE_FORM_BASE.items():
            if module in enabled or module == "core":
                content[name] = {"type": options["type"], "weight": options["weight"],
                                 "region": "content", "settings": dict(options["settings"]),
                                 "third_party_settings": {}}
                modules.add(module)
    elif entity_type == "node":
        content = {name: {"settings": {}, "third_party_settings": {}, "weight": weight,
                          "region": "content"} for name, weight in NODE_VIEW_EXTRA.items()}
        modules.update(NODE_VIEW_MODULES)
    return {"uuid": str(uuidlib.uuid4()), "langcode": "en", "status": True,
            "dependencies": _dependencies(set(), modules), "id": f"{entity_type}.{bundle}.{mode}",
            "targetEntityType": entity_type, "bundle": bundle, "mode": mode,
            "content": content, "hidden": {}}


@dataclass(frozen=True)
class Placement:
    """Where a field goes in one display: shown with ``component``, or (None) hidden."""

    kind: str
    mode: str
    component: dict[str, Any] | None


def place(store: Store, entity_type: str, bundle: str, field_name: str,
          placement: Placement, module: str = "core") -> tuple[str, dict[str, Any]]:
    """The display with the field placed (setComponent, or removeComponent when hidden) and
    its dependencies recalculated; a component without a weight goes after the heaviest."""
    display_id = f"{entity_type}.{bundle}.{placement.mode}"
    name = f"{placement.kind}.{display_id}"
    data = store.config_get(name) or new_display(store, entity_type, bundle, placement.kind,
                                                 placement.mode)
    content: dict[str, Any] = dict(data.get("content") or {})
    hidden: dict[str, Any] = dict(data.get("hidden") or {})
    modules = set((data.get("dependencies") or {}).get("module") or [])
    if placement.component is not None:
        weights = [int(c.get("weight", 0)) for c in content.values() if isinstance(c, dict)]
        component = dict(placement.component)
        if component.get("weight") is None:
            component["weight"] = max(weights, default=-1) + 1
        content[field_name] = component
        hidden.pop(field_name, None)
        modules.add(module)
    else:
        hidden[field_name] = True
    prefix = f"field.field.{entity_type}.{bundle}."
    fields = {prefix + n for n in {*content, *hidden} if store.config_get(prefix + n) is not None}
    config = fields | {BUNDLE_CONFIG.get(entity_type, "") + bundle}
    if placement.mode != "default":
        mode_prefix = dict(DISPLAYS)[placement.kind]
        config.add(f"{mode_prefix}.{entity_type}.{placement.mode}")
    data["dependencies"] = _dependencies(config, modules)
    data["content"] = dict(sorted(content.items()))
    data["hidden"] = dict(sorted(hidden.items()))
    return name, data


def _placements(store: Store, request: FieldRequest, kind: str,
                plugin: Plugin) -> list[Placement]:
    """Field UI's: the default display shows the field with the type's default plugin, every
    other existing display of the bundle lists it as hidden."""
    others = store.config_names(f"{kind}.{request.entity_type}.{request.bundle}.")
    modes = sorted(n.rsplit(".", 1)[1] for n in others if not n.endswith(".default"))
    shown = _component(plugin, None, form=kind == DISPLAYS[0][0])
    return [Placement(kind, "default", shown), *(Placement(kind, m, None) for m in modes)]


def create_field(store: Store, request: FieldRequest, save: Save) -> list[str]:
    """Save the storage (unless it exists), the field and its display components; the names."""
    kind = _field_type(request)
    bundle_config = BUNDLE_CONFIG.get(request.entity_type, "") + request.bundle
    if request.entity_type in BUNDLE_CONFIG and store.config_get(bundle_config) is None:
        raise ApgError("APG_CONFIG_MISSING", f"bundle {request.bundle} of {request.entity_type}"
                       f" does not exist ({bundle_config}); create it first")
    field_name = f"field.field.{request.entity_type}.{request.bundle}.{request.field_name}"
    if store.config_get(field_name) is not None:
        raise ApgError("APG_CONFIG_EXISTS", f"{field_name} already exists")
    storage_name = f"field.storage.{request.entity_type}.{request.field_name}"
    storage = store.config_get(storage_name)
    saved = []
    if storage is None:
        storage = storage_config(request)
        save(store, storage_name, storage)
        saved.append(storage_name)
    save(store, field_name, field_config(request, storage))
    saved.append(field_name)
    plugins = {DISPLAYS[0][0]: kind.widget, DISPLAYS[1][0]: kind.formatter}
    for kind_name, plugin in plugins.items():
        for placement in _placements(store, request, kind_name, plugin):
            display = place(store, request.entity_type, request.bundle, request.field_name,
                            placement, plugin.module)
            save(store, *display)
            saved.append(display[0])
    return saved
