"""What a cache rebuild loads before it clears anything: the field config entities. Kept apart
from the content model (a write-side module) so that `apg site cr` imports little."""

from __future__ import annotations

from typing import Any, Protocol


class ConfigReader(Protocol):
    def config_get(self, name: str) -> Any: ...

    def config_names(self, prefix: str = "") -> list[str]: ...


# Drupal loads a field config entity only when its record has an id (one set raw without an id
# is never loaded: no definition, no table), and then hands its `settings` to the field type as
# an array: a loaded record without a settings mapping stops any rebuild with a TypeError
# (the golden case 064: `drush cr` exits 1; 065, the same with settings, exits 0).
_SETTINGS_READERS = (("field.storage.", "storageSettingsFromConfigData"),
                     ("field.field.", "fieldSettingsFromConfigData"))


def unloadable_field_configs(config: ConfigReader) -> list[str]:
    """What a cache rebuild would die on, as Drupal says it: one line per field config."""
    found = []
    for prefix, reader in _SETTINGS_READERS:
        for name in config.config_names(prefix):
            record = config.config_get(name)
            if isinstance(record, dict) and record.get("id") is not None \
                    and not isinstance(record.get("settings"), dict):
                given = "null" if record.get("settings") is None else \
                    type(record.get("settings")).__name__
                found.append(f"TypeError: Drupal\\Core\\Field\\FieldItemBase::{reader}(): "
                             f"Argument #1 ($settings) must be of type array, {given} given "
                             f"(config {name})")
    return found
