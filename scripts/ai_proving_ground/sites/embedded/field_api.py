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
    FieldType,
    Plugin,
)
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


def _component(plugin: Plugin, weight: int, *, form: bool) -> dict[str, Any]:
    if form:
        return {"type": plugin.id, "weight": weight, "region": "content",
                "settings": dict(plugin.settings), "third_party_settings": {}}
    return {"type": plugin.id, "label": "above", "settings": dict(plugin.settings),
            "third_party_settings": {}, "weight": weight, "region": "content"}


def _display(store: Store, request: FieldRequest, kind: str, mode_prefix: str, mode: str,
             plugin: Plugin) -> tuple[str, dict[str, Any]] | None:
    display_id = f"{request.entity_type}.{request.bundle}.{mode}"
    name = f"{kind}.{display_id}"
    data = store.config_get(name)
    if data is None and mode != "default":
        return None
    if data is None:
        data = {"uuid": str(uuidlib.uuid4()), "langcode": "en", "status": True,
                "dependencies": {}, "id": display_id, "targetEntityType": request.entity_type,
                "bundle": request.bundle, "mode": mode, "content": {}, "hidden": {}}
    content: dict[str, Any] = dict(data.get("content") or {})
    hidden: dict[str, Any] = dict(data.get("hidden") or {})
    modules = set((data.get("dependencies") or {}).get("module") or [])
    if mode == "default":
        weights = [int(c.get("weight", 0)) for c in content.values() if isinstance(c, dict)]
        content[request.field_name] = _component(
            plugin, max(weights, default=-1) + 1, form=kind == DISPLAYS[0][0])
        hidden.pop(request.field_name, None)
        modules.add(plugin.module)
    else:
        hidden[request.field_name] = True
    prefix = f"field.field.{request.entity_type}.{request.bundle}."
    fields = {prefix + n for n in {*content, *hidden} if store.config_get(prefix + n) is not None}
    config = fields | {BUNDLE_CONFIG.get(request.entity_type, "") + request.bundle}
    if mode != "default":
        config.add(f"{mode_prefix}.{request.entity_type}.{mode}")
    data["dependencies"] = _dependencies(config, modules)
    data["content"] = dict(sorted(content.items()))
    data["hidden"] = dict(sorted(hidden.items()))
    return name, data


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
    for kind_name, mode_prefix in DISPLAYS:
        others = store.config_names(f"{kind_name}.{request.entity_type}.{request.bundle}.")
        modes = ["default", *sorted(n.rsplit(".", 1)[1] for n in others
                                    if not n.endswith(".default"))]
        for mode in modes:
            display = _display(store, request, kind_name, mode_prefix, mode, plugins[kind_name])
            if display is not None:
                save(store, *display)
                saved.append(display[0])
    return saved
