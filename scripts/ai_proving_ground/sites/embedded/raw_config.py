"""Config set raw (``drush config:set``) that Drupal stores but cannot use.

Drupal's entity API makes a field storage's tables when it saves one; ``config:set`` writes
the config object alone. The embedded site records which field storages were created raw, so
content treats them as Drupal does (see ``content_model``), until the entity API saves them
(``config:import``, a recipe, a module's config) or they are deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ai_proving_ground.sites.embedded.store import Store

RAW_STORAGES = "embedded.raw_field_storage"
_STORAGE = "field.storage."


def raw_storages(store: Store) -> frozenset[str]:
    return frozenset(store.kv_all(RAW_STORAGES))


def record_save(store: Store, name: str, *, raw: bool, is_new: bool) -> list[str]:
    """Note a saved field storage's table; a warning when a raw save leaves it without one."""
    if not name.startswith(_STORAGE):
        return []
    if not raw:
        store.kv_delete(RAW_STORAGES, name)
        return []
    if is_new:
        store.kv_set(RAW_STORAGES, name, True)
    if name not in raw_storages(store):
        return []
    return [f"{name}: set with config:set, Drupal makes no table for it, so content cannot hold"
            " values in its field; create fields with `apg site config:import` or a recipe"]


def forget(store: Store, name: str) -> None:
    if name.startswith(_STORAGE):
        store.kv_delete(RAW_STORAGES, name)


def imported(store: Store, before: Mapping[str, Any], objects: Mapping[str, Any]) -> None:
    """config:import saves what it changes through the entity API: those storages get tables."""
    for name in raw_storages(store):
        if name in objects and before.get(name) != objects[name]:
            store.kv_delete(RAW_STORAGES, name)
