"""What Drupal fills in when it creates a config entity from a file (a recipe's ``config/``).

Core's config installer builds the entity from the file (``createFromStorageRecord``), so the
entity's own defaults fill what the file leaves out: every exported property, a field's
settings completed with its type's defaults (``postCreate``: the given ones the type knows,
then the rest), and ``node_node_type_presave`` stores an empty ``description`` or ``help`` as
null. The save is trusted, so nothing is cast: an integer field's ``min`` stays ``''``, where
an entity API save (``field:create``) stores null. The golden kb_docs config is this, applied
to the fixture's first version (a ``settings: {}`` became min, max, prefix and suffix).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ai_proving_ground.sites.embedded.bundle_api import NODE_TYPE, VOCABULARY, node_type_presave
from ai_proving_ground.sites.embedded.field_types import FIELD_TYPES, php_field_settings

_ENTITY = {"langcode": "en", "status": True, "dependencies": {}}
_ENTITY_PREFIXES = ("node.type.", "taxonomy.vocabulary.", "field.storage.", "field.field.")
_STORAGE = {"locked": False, "cardinality": 1, "translatable": True, "indexes": {},
            "persist_with_no_fields": False, "custom_storage": False}
_FIELD = {"description": "", "required": False, "translatable": True, "default_value": {},
          "default_value_callback": ""}


def _completed(given: Any, defaults: Mapping[str, Any]) -> dict[str, Any]:
    known = {k: v for k, v in (given if isinstance(given, Mapping) else {}).items()
             if k in defaults}
    return {**known, **{k: v for k, v in defaults.items() if k not in known}}


def _field_type(value: Any) -> bool:
    """A known field type's id; anything else (a mapping or list a broken file holds) is not."""
    return isinstance(value, str) and value in FIELD_TYPES


def as_created(name: str, data: Any) -> Any:
    """``data`` as the config entity ``name`` holds it once Drupal has created it."""
    if not isinstance(data, Mapping) or not name.startswith(_ENTITY_PREFIXES):
        return data  # simple config, or an entity whose defaults are not modelled: as given
    created = {**_ENTITY, **data}
    if name.startswith("node.type."):
        created = node_type_presave({**NODE_TYPE, **created})
    elif name.startswith("taxonomy.vocabulary."):
        created = {**VOCABULARY, **created}
    elif name.startswith("field.storage.") and _field_type(created.get("type")):
        kind = FIELD_TYPES[str(created["type"])]
        created = {**_STORAGE, "module": kind.module, **created}
        created["settings"] = _completed(created.get("settings"), kind.storage)
    elif name.startswith("field.field.") and _field_type(created.get("field_type")):
        created = {**_FIELD, **created}
        created["settings"] = _completed(created.get("settings"),
                                         php_field_settings(str(created["field_type"])))
    return created


def same_config(active: Any, given: Any) -> bool:
    """Equal as PHP arrays are: one empty array, so ``{}`` in one and ``[]`` in the other agree
    (a recipe's strict comparison reads both back as arrays)."""
    if isinstance(active, dict | list) and isinstance(given, dict | list) and not (
            active or given):
        return True
    if isinstance(active, dict) and isinstance(given, dict):
        return active.keys() == given.keys() and all(
            same_config(v, given[k]) for k, v in active.items())
    if isinstance(active, list) and isinstance(given, list):
        return len(active) == len(given) and all(map(same_config, active, given))
    return bool(active == given)
