"""What Drupal's config schema does to a config object on save: cast values, order keys.

Drupal 10.3 saves config through its schema: ``cardinality: '-1'`` is stored as ``-1``,
``required: '1'`` as ``true``, and the keys of a known type come out in the schema's order
whatever order they were written in. Keys the schema does not know stay, after the known ones.
Only the config types the embedded site models are described here; others are stored as given.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

_ENTITY = ("uuid", "langcode", "status", "dependencies", "_core")


def _php_bool(value: Any) -> Any:
    if isinstance(value, str):
        return value not in ("", "0")
    return bool(value) if isinstance(value, int | float) else value


def _php_int(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return int(value)
    if isinstance(value, str):
        match = re.match(r"^\s*[-+]?\d+", value)
        return int(match.group(0)) if match else 0
    return value


Cast = Callable[[Any], Any]
_BOOL: Cast = _php_bool
_INT: Cast = _php_int

# Per config prefix: the schema's key order and the casts of typed keys.
_TYPES: dict[str, tuple[tuple[str, ...], dict[str, Cast]]] = {
    "field.storage.": (
        (*_ENTITY, "id", "field_name", "entity_type", "type", "settings", "module", "locked",
         "cardinality", "translatable", "indexes", "persist_with_no_fields", "custom_storage"),
        {"status": _BOOL, "locked": _BOOL, "cardinality": _INT, "translatable": _BOOL,
         "persist_with_no_fields": _BOOL, "custom_storage": _BOOL}),
    "field.field.": (
        (*_ENTITY, "id", "field_name", "entity_type", "bundle", "label", "description", "required",
         "translatable", "default_value", "default_value_callback", "settings", "field_type"),
        {"status": _BOOL, "required": _BOOL, "translatable": _BOOL}),
    "node.type.": (
        (*_ENTITY, "name", "type", "description", "help", "new_revision", "preview_mode",
         "display_submitted"),
        {"status": _BOOL, "new_revision": _BOOL, "preview_mode": _INT,
         "display_submitted": _BOOL}),
    "taxonomy.vocabulary.": (
        (*_ENTITY, "name", "vid", "description", "weight", "new_revision"),
        {"status": _BOOL, "weight": _INT, "new_revision": _BOOL}),
    "system.menu.": ((*_ENTITY, "id", "label", "description", "locked"),
                     {"status": _BOOL, "locked": _BOOL}),
    "user.role.": ((*_ENTITY, "id", "label", "weight", "is_admin", "permissions"),
                   {"status": _BOOL, "weight": _INT, "is_admin": _BOOL}),
    "system.action.": ((*_ENTITY, "id", "label", "type", "plugin", "configuration"),
                       {"status": _BOOL}),
}
# Storage settings by field type (field.storage.*.settings).
_STORAGE_SETTINGS: dict[str, Cast] = {
    "max_length": _INT, "case_sensitive": _BOOL, "is_ascii": _BOOL, "unsigned": _BOOL,
    "precision": _INT, "scale": _INT, "display_field": _BOOL, "display_default": _BOOL,
}


# Field settings key order by field type (field.field.*.settings), as the schema lists them.
_NUMBER_SETTINGS = ("min", "max", "prefix", "suffix")
_REFERENCE_SETTINGS = ("handler", "handler_settings")
_FILE_SETTINGS = (*_REFERENCE_SETTINGS, "file_directory", "file_extensions", "max_filesize")
_FIELD_SETTINGS_ORDER: dict[str, tuple[str, ...]] = {
    "integer": _NUMBER_SETTINGS, "decimal": _NUMBER_SETTINGS, "float": _NUMBER_SETTINGS,
    "boolean": ("on_label", "off_label"), "link": ("title", "link_type"),
    "text": ("allowed_formats",),
    "text_with_summary": ("display_summary", "required_summary", "allowed_formats"),
    "entity_reference": _REFERENCE_SETTINGS,
    "file": (*_FILE_SETTINGS, "description_field"),
    "image": (*_FILE_SETTINGS, "max_resolution", "min_resolution", "alt_field",
              "alt_field_required", "title_field", "title_field_required", "default_image"),
}


def _typed(data: Mapping[str, Any], order: tuple[str, ...], casts: Mapping[str, Cast]) -> dict[str, Any]:
    keys = [k for k in order if k in data] + [k for k in data if k not in order]
    return {k: casts[k](data[k]) if k in casts and data[k] is not None else data[k] for k in keys}


def as_saved(name: str, data: Any) -> Any:
    """``data`` as Drupal's config schema stores it under ``name``."""
    if not isinstance(data, Mapping):
        return data
    for prefix, (order, casts) in _TYPES.items():
        if name.startswith(prefix):
            saved = _typed(data, order, casts)
            settings = saved.get("settings")
            if prefix == "field.storage." and isinstance(settings, Mapping):
                saved["settings"] = _typed(settings, (), _STORAGE_SETTINGS)
            if prefix == "field.field." and isinstance(settings, Mapping):
                order = _FIELD_SETTINGS_ORDER.get(str(saved.get("field_type")), ())
                saved["settings"] = _typed(settings, order, {})
            return saved
    return dict(data)
