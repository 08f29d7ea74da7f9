"""The embedded site's write side: installing and uninstalling modules, saving, deleting and
importing config, creating and updating entities, each refused where Drupal refuses it.

``EmbeddedSite`` (driver.py) is the one interface; its write methods call these functions and
import this module only when one runs, so a read-only command never loads the validators.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.base import EntityRecord
from ai_proving_ground.sites.embedded import (
    config_rules,
    config_schema,
    content_model,
    modules,
    raw_config,
    reads,
)
from ai_proving_ground.sites.embedded.entity_types import ENTITY_TYPES, FIELD_TYPES
from ai_proving_ground.sites.embedded.reads import EXTENSION_CONFIG, SCHEMA_COLLECTION
from ai_proving_ground.sites.embedded.store import Store, as_stored

# ---------------------------------------------------------------------- modules


def install_modules(approot: Path, store: Store, names: list[str]) -> list[str]:
    """Install ``names`` and what they depend on, in order; the modules installed."""
    available = modules.discover(approot)
    enabled = reads.enabled_modules(store)
    order = modules.install_order(names, available, enabled)
    for name in order:
        info = available[name]
        extension = store.config_get(EXTENSION_CONFIG)
        extension["module"][name] = 0
        extension["module"] = dict(sorted(extension["module"].items()))
        store.config_set(EXTENSION_CONFIG, extension)
        if info.schema_version is not None:
            store.kv_set(SCHEMA_COLLECTION, name, info.schema_version)
        _install_module_config(store, info)
    return order


def _install_module_config(store: Store, info: modules.ModuleInfo) -> None:
    enabled = reads.enabled_modules(store)
    shipped = {path.name[: -len(".yml")]: _load_config_file(path)
               for path in sorted((info.path / "config" / "install").glob("*.yml"))}
    for name in config_rules.dependency_order(shipped):
        data = as_stored(shipped[name])
        current = store.config_get(name)
        if current is not None and current != data:
            raise ApgError("APG_CONFIG_EXISTS", f"module {info.name} ships {name}, which "
                           "already exists with other values; delete it first")
        config_rules.validate(name, data, store, enabled)
        store.config_set(name, data)


def uninstall_modules(approot: Path, store: Store, names: Sequence[str]) -> list[str]:
    """Uninstall ``names`` (each must be installed, not required, not depended on, unused)."""
    enabled = reads.enabled_modules(store)
    available = modules.discover(approot)
    removing = [n for n in names if n in enabled]
    for name in names:
        if name not in enabled:
            raise ApgError("APG_MODULE_NOT_INSTALLED", f"module {name} is not installed")
        info = available.get(name)
        if info is not None and info.required:
            raise ApgError("APG_MODULE_REQUIRED", f"module {name} is required by the site")
        for other in sorted(enabled - set(removing)):
            if other in available and name in available[other].dependencies:
                raise ApgError("APG_MODULE_DEPENDED_ON", f"module {other} depends on "
                               f"{name}; uninstall {other} first")
        _refuse_if_content(store, name)
        _refuse_if_field_type_used(store, name)
    for name in removing:
        _uninstall_one(store, name)
    return removing


def _refuse_if_content(store: Store, module: str) -> None:
    for definition in ENTITY_TYPES.values():
        if definition.provider == module and store.entity_count(definition.id):
            raise ApgError("APG_MODULE_HAS_CONTENT", f"module {module} provides "
                           f"{definition.id} entities that still exist; delete them first")


def _refuse_if_field_type_used(store: Store, module: str) -> None:
    # Drupal's FieldModuleUninstallValidator: a field type cannot go while fields use it.
    storages = store.config_get_many(store.config_names("field.storage."))
    for config_name, data in storages.items():
        field_type = data.get("type") if isinstance(data, dict) else None
        if FIELD_TYPES.get(str(field_type)) == module:
            raise ApgError("APG_MODULE_IN_USE", f"module {module} provides field type "
                           f"{field_type}, used by {config_name}; delete that field first")


def _uninstall_one(store: Store, name: str) -> None:
    # The module's own config, config that depends on the module, and (as Drupal's
    # dependency removal does) config that depends on any of that, transitively.
    everything = store.config_all()
    doomed = set(store.config_names(name + "."))
    grew = True
    while grew:
        grew = False
        for config_name, data in everything.items():
            if config_name in doomed or config_name == EXTENSION_CONFIG:
                continue
            if config_rules.depends_on(config_name, data, name, doomed):
                doomed.add(config_name)
                grew = True
    order = config_rules.dependency_order({n: everything[n] for n in doomed})
    for config_name in reversed(order):  # dependents first
        _refuse_if_in_use(store, config_name)
        store.config_delete(config_name)
    extension = store.config_get(EXTENSION_CONFIG)
    extension["module"].pop(name, None)
    store.config_set(EXTENSION_CONFIG, extension)
    store.kv_delete(SCHEMA_COLLECTION, name)


# ---------------------------------------------------------------------- config


def config_save(store: Store, name: str, data: Any, *, raw: bool) -> list[str]:
    """Validate and save one config object; see ``EmbeddedSite.config_save``."""
    if name == EXTENSION_CONFIG:
        raise ApgError("APG_CONFIG_INVALID", "core.extension changes only through "
                       "pm:install and pm:uninstall")
    data = config_schema.as_saved(name, data)
    warnings = []
    try:
        config_rules.validate(name, data, store, reads.enabled_modules(store))
    except config_rules.LooserRefusal as exc:
        if not raw:
            raise
        warnings.append(f"{name}: Drupal stores this but cannot use it: {exc.message}")
    is_new = store.config_get(name) is None
    store.config_set(name, data)
    warnings.extend(raw_config.record_save(store, name, raw=raw, is_new=is_new))
    return warnings


def config_delete(store: Store, name: str) -> None:
    """Delete one config object that nothing uses."""
    if name == EXTENSION_CONFIG:
        raise ApgError("APG_CONFIG_INVALID", "core.extension cannot be deleted")
    if store.config_get(name) is None:
        raise ApgError("APG_CONFIG_MISSING", f"config {name} does not exist")
    _refuse_if_in_use(store, name)
    store.config_delete(name)
    raw_config.forget(store, name)


def _refuse_if_in_use(store: Store, name: str) -> None:
    _refuse_if_bundle_in_use(store, name)
    if name.startswith("field.storage."):
        _, _, entity_type, field_name = name.split(".", 3)
        users = [n for n in store.config_names(f"field.field.{entity_type}.")
                 if n.endswith("." + field_name)]
        if users:
            raise ApgError("APG_CONFIG_IN_USE", f"{name} is used by {', '.join(users)}; "
                           "delete those first")


def _refuse_if_bundle_in_use(store: Store, name: str) -> None:
    for definition in ENTITY_TYPES.values():
        prefix = definition.bundle_prefix
        if prefix and name.startswith(prefix):
            bundle = name[len(prefix):]
            if store.entity_count(definition.id, bundle):
                raise ApgError("APG_CONFIG_IN_USE", f"{definition.id} entities of bundle "
                               f"{bundle} exist; delete them before {name}")


def config_import(approot: Path, store: Store, objects: Mapping[str, Any]) -> dict[str, list[str]]:
    """Make active config equal ``objects``; see ``EmbeddedSite.config_import``."""
    current = store.config_all()
    extension = objects.get(EXTENSION_CONFIG) or current.get(EXTENSION_CONFIG)
    wanted_modules = set((extension or {}).get("module") or {})
    missing = sorted(wanted_modules - set(modules.discover(approot)))
    if missing:
        raise ApgError("APG_MODULE_MISSING", "core.extension lists modules not on disk: "
                       + ", ".join(missing))
    staged = dict(objects)
    staged[EXTENSION_CONFIG] = extension
    # Drupal refuses an import that uninstalls a module whose content or field types
    # are still in use; deleting a bundle that content uses is refused like cdel.
    for name in sorted(set(current) - set(staged)):
        _refuse_if_bundle_in_use(store, name)
    store.config_replace_all(staged)
    raw_config.imported(store, current, staged)
    for module in sorted(reads.enabled_in(current) - wanted_modules):
        _refuse_if_content(store, module)
        _refuse_if_field_type_used(store, module)
    for name, data in sorted(staged.items()):
        if name != EXTENSION_CONFIG:
            config_rules.validate(name, data, store, wanted_modules)
    return {
        "created": sorted(set(staged) - set(current)),
        "updated": sorted(n for n in set(staged) & set(current) if staged[n] != current[n]),
        "deleted": sorted(set(current) - set(staged)),
    }


# ---------------------------------------------------------------------- content


def create_entity(store: Store, public_files: Path, entity_type: str, bundle: str | None,
                  values: Mapping[str, Any], uuid: str | None,
                  drop_unknown: bool) -> tuple[EntityRecord, tuple[str, ...]]:
    """Validate and insert one entity; see ``EmbeddedSite.create_entity_via_api``."""
    enabled = reads.enabled_modules(store)
    definition = content_model.entity_type(entity_type, enabled)
    bundle = bundle or definition.id
    valid = content_model.validate_values(
        definition, bundle, values, store, enabled, raw_config.raw_storages(store),
        drop_unknown=drop_unknown, public=public_files)
    import uuid as uuidlib  # lazy for start-up time: uuid imports platform, slow to load
    new_uuid = uuid or str(uuidlib.uuid4())
    if store.uuids_present([new_uuid]):
        raise ApgError("APG_ENTITY_EXISTS", f"an entity with uuid {new_uuid} already exists")
    now = int(time.time())
    created = now if valid.created is None else valid.created
    record = EntityRecord(entity_type, new_uuid, store.next_id(entity_type), bundle,
                          valid.label, valid.status, valid.fields, created=created, changed=now)
    store.entity_insert(record)
    return record, valid.ignored


def update_entity(store: Store, public_files: Path, record: EntityRecord,
                  values: Mapping[str, Any]) -> EntityRecord:
    """Merge ``values`` into an entity and validate the result as a whole."""
    enabled = reads.enabled_modules(store)
    definition = content_model.entity_type(record.entity_type, enabled)
    merged: dict[str, Any] = copy.deepcopy(record.fields)
    merged[definition.label_field] = [{"value": record.label}]
    merged[definition.status_field] = [{"value": record.status}]
    merged.update(values)
    valid = content_model.validate_values(definition, record.bundle, merged, store, enabled,
                                          raw_config.raw_storages(store), public=public_files)
    updated = dataclasses.replace(record, label=valid.label, status=valid.status,
                                  fields=valid.fields, changed=int(time.time()))
    store.entity_update(updated)
    return updated


def _load_config_file(path: Path) -> Any:
    # Lazy for start-up time: most commands never read a config file, and yaml is slow to load.
    from ai_proving_ground.yamlio import load_yaml

    return load_yaml(path, token="APG_CONFIG_INVALID")
