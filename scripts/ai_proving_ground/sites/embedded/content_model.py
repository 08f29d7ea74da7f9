"""Bundles and fields as config defines them, and the rules that enforce them on a write
(the entity types themselves are in ``entity_types``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.embedded import canvas, menu_links
from ai_proving_ground.sites.embedded.entity_types import ENTITY_TYPES, FIELD_TYPES, EntityTypeDef
from ai_proving_ground.sites.embedded.file_items import (
    EntityReader,
    complete_reference,
    file_values,
)

FieldItems = list[dict[str, Any]]

_REFERENCES = frozenset({"entity_reference", "file", "image"})
_MAIN_PROPERTY = {"entity_reference": "target_uuid", "link": "uri", "file": "target_uuid",
                  "image": "target_uuid"}


class ConfigReader(Protocol):
    """Read access to active config, as validation needs it."""

    def config_get(self, name: str) -> Any: ...

    def config_names(self, prefix: str = "") -> list[str]: ...


class SiteReader(ConfigReader, EntityReader, Protocol):
    """Config, and entities by id (a reference given by id is read back with its UUID)."""


def _refuse(message: str) -> ApgError:
    return ApgError("APG_ENTITY_INVALID", message)


def entity_type(type_id: str, enabled: set[str]) -> EntityTypeDef:
    """The definition of ``type_id``, provided its module is installed."""
    definition = ENTITY_TYPES.get(type_id)
    if definition is None:
        raise _refuse(f"unknown entity type {type_id!r} (known: {', '.join(sorted(ENTITY_TYPES))})")
    if definition.provider not in enabled:
        raise _refuse(f"entity type {type_id} needs module {definition.provider}; "
                      f"install it with `apg site pm:install {definition.provider}`")
    return definition


def bundle_exists(definition: EntityTypeDef, bundle: str, config: ConfigReader) -> bool:
    if definition.bundle_prefix is None:
        return bundle == definition.id
    return isinstance(config.config_get(definition.bundle_prefix + bundle), dict)


def normalize_items(raw: Any) -> FieldItems:
    """Accept a scalar, one item or a list; references by UUID use ``target_uuid``."""
    if raw is None:
        return []
    values = raw if isinstance(raw, list) else [raw]
    items: FieldItems = []
    for value in values:
        item = dict(value) if isinstance(value, dict) else {"value": value}
        if "entity" in item:  # core's default-content reference shape
            item["target_uuid"] = item.pop("entity")
        items.append(item)
    return items


@dataclass(frozen=True)
class ValidEntity:
    """Values that passed the content model: label, status and the remaining fields.

    ``ignored`` names fields whose values were dropped, as Drupal drops values of a field whose
    config it stores but never sees (and, through its entity API, of a field it does not know).
    """

    label: str
    status: bool
    fields: dict[str, FieldItems]
    ignored: tuple[str, ...] = ()
    created: int | None = None  # a creation time the values set (as Drupal takes one given)


def validate_values(definition: EntityTypeDef, bundle: str, values: Mapping[str, Any],
                    config: SiteReader, enabled: set[str],
                    raw_storages: frozenset[str] = frozenset(), *,
                    drop_unknown: bool = False, public: Path | None = None) -> ValidEntity:
    """Refuse an unknown bundle, an undefined field or a value the field cannot hold.

    ``drop_unknown`` is ``Entity::create($values)``: Drupal keeps a value for a field the
    bundle does not have nowhere and saves the rest (golden case 055). Its default-content
    importer and ``$entity->set()`` throw instead ("Field ... is unknown"), so recipes and
    updates refuse.
    """
    if not bundle_exists(definition, bundle, config):
        hint = (f"define it with config {definition.bundle_prefix}{bundle}"
                if definition.bundle_prefix else f"{definition.id} has the single bundle "
                                                 f"{definition.id}")
        raise _refuse(f"{definition.id} bundle {bundle!r} does not exist; {hint}")
    fields: dict[str, FieldItems] = {}
    ignored: list[str] = []
    if definition.id == "file":
        values = file_values(values)
    elif definition.id == menu_links.ENTITY_TYPE:
        values = menu_links.menu_link_values(values)
    for name, raw in values.items():
        items = normalize_items(raw)
        if name in definition.base_fields:
            fields[name] = _base_items(definition, name, items, config)
            continue
        if f"field.storage.{definition.id}.{name}" in raw_storages and not _raw_field_table(
                definition, bundle, name, config):
            ignored.append(name)
            continue
        if drop_unknown and not _is_defined(definition, bundle, name, config):
            ignored.append(name)
            continue
        fields[name] = _configured_items(definition, bundle, name, items, config, enabled)
        _complete_items(definition, name, fields[name], config, public)
    _check_required(definition, bundle, fields, config)
    label_items = fields.pop(definition.label_field, [])
    label = str(label_items[0].get("value", "")) if label_items else ""
    if not label:
        raise _refuse(f"{definition.id} needs a {definition.label_field}")
    status_items = fields.pop(definition.status_field, [{"value": True}])
    status = _as_bool(status_items[0].get("value", True)) if status_items else True
    created_items = fields.pop("created", None)
    for derived in ("changed", "langcode"):
        fields.pop(derived, None)
    return ValidEntity(label=label, status=status, fields=fields, ignored=tuple(ignored),
                       created=_timestamp(created_items))


def _timestamp(items: FieldItems | None) -> int | None:
    """A ``created`` value as Drupal's timestamp field takes it: whole seconds, else refused."""
    if not items:
        return None
    value: Any = items[0].get("value")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return _bad_timestamp(value)


def _bad_timestamp(value: Any) -> int:
    raise _refuse(f"created must be a timestamp in seconds, got {value!r}")


def _is_defined(definition: EntityTypeDef, bundle: str, name: str, config: ConfigReader) -> bool:
    return all(isinstance(config.config_get(n), dict) for n in (
        f"field.field.{definition.id}.{bundle}.{name}", f"field.storage.{definition.id}.{name}"))


def _raw_field_table(definition: EntityTypeDef, bundle: str, name: str,
                     config: ConfigReader) -> bool:
    """A field whose storage was set raw (``config:set``, no entity API): Drupal made no table.

    Without ``id`` keys (or a ``field_type``) Drupal never sees the field and drops its values
    (False); with them it sees the field and fails to save, as Drupal's SQL or cache rebuild
    does, with Drupal's message.
    """
    storage = config.config_get(f"field.storage.{definition.id}.{name}") or {}
    instance = config.config_get(f"field.field.{definition.id}.{bundle}.{name}") or {}
    if not all(isinstance(d, dict) and "id" in d for d in (storage, instance)) or (
            "field_type" not in instance):
        return False
    if "settings" not in storage:
        raise _refuse("TypeError: Drupal\\Core\\Field\\FieldItemBase::fieldSettingsFromConfigData():"
                      " Argument #1 ($settings) must be of type array, null given (the raw "
                      f"field.storage.{definition.id}.{name} has no settings; Drupal's cache "
                      "rebuild fails)")
    raise _refuse(f"SQLSTATE[42S02]: Base table or view not found: 1146 Table "
                  f"'{definition.id}__{name}' doesn't exist (field.storage.{definition.id}.{name}"
                  " was set with config:set, which makes no table; create fields with"
                  " `apg site config:import` or a recipe)")


def _base_items(definition: EntityTypeDef, name: str, items: FieldItems,
                config: ConfigReader) -> FieldItems:
    if name == "components":
        tree = canvas.parse_tree(items, f"{definition.id}.components")
        canvas.validate_tree(tree, config.config_get, f"{definition.id}.components")
        return canvas.items_from_tree(tree)
    if definition.id == menu_links.ENTITY_TYPE and name in menu_links.FIELD_TYPES:
        return [_check_item(name, menu_links.FIELD_TYPES[name], {}, item) for item in items]
    return items


def _configured_items(definition: EntityTypeDef, bundle: str, name: str, items: FieldItems,
                      config: ConfigReader, enabled: set[str]) -> FieldItems:
    instance = config.config_get(f"field.field.{definition.id}.{bundle}.{name}")
    storage = config.config_get(f"field.storage.{definition.id}.{name}")
    if not isinstance(instance, dict) or not isinstance(storage, dict):
        raise _refuse(f"field {name!r} is not defined on {definition.id} bundle {bundle}; "
                      f"define field.storage.{definition.id}.{name} and "
                      f"field.field.{definition.id}.{bundle}.{name}")
    field_type = str(storage.get("type"))
    provider = FIELD_TYPES.get(field_type)
    if provider is None or provider not in enabled:
        raise _refuse(f"field {name!r} has type {field_type!r}, which no installed module provides")
    cardinality = int(storage.get("cardinality", 1))
    if cardinality != -1 and len(items) > cardinality:
        raise _refuse(f"field {name!r} holds at most {cardinality} value(s), got {len(items)}")
    return [_check_item(name, field_type, storage, item) for item in items]


def _complete_items(definition: EntityTypeDef, name: str, items: FieldItems, config: SiteReader,
                    public: Path | None) -> None:
    """What Drupal fills in on save and reads back: a link's options, a reference's target."""
    storage = config.config_get(f"field.storage.{definition.id}.{name}")
    field_type = str(storage.get("type"))
    for item in items:
        if field_type == "link":
            item.setdefault("options", [])
        elif field_type in _REFERENCES and "target_id" in item:
            complete_reference(item, field_type, storage, config, public)


def _check_item(name: str, field_type: str, storage: Mapping[str, Any],
                item: dict[str, Any]) -> dict[str, Any]:
    prop = _MAIN_PROPERTY.get(field_type, "value")
    if prop != "value" and prop not in item and "value" in item:
        item[prop] = item.pop("value")  # `--set field=x` gives every field a plain value
    if field_type in _REFERENCES and "target_id" in item and prop not in item:
        prop = "target_id"
    if prop not in item:
        raise _refuse(f"field {name!r} item {item!r} lacks its {prop!r} property")
    value = item[prop]
    if field_type in {"integer", "list_integer", "timestamp"}:
        item[prop] = _as_int(name, value)
    elif field_type in {"decimal", "float", "list_float"}:
        item[prop] = _as_number(name, value)
    elif field_type == "boolean":
        item[prop] = _as_bool(value)
    elif not isinstance(value, str):
        item[prop] = str(value)
    if field_type.startswith("list_"):
        allowed = _allowed_values(storage)
        if allowed and str(item[prop]) not in allowed:
            raise _refuse(f"field {name!r} value {item[prop]!r} is not allowed "
                          f"(allowed: {', '.join(allowed)})")
    return item


def _allowed_values(storage: Mapping[str, Any]) -> list[str]:
    raw = (storage.get("settings") or {}).get("allowed_values") or []
    if isinstance(raw, dict):
        return [str(k) for k in raw]
    return [str(v.get("value")) if isinstance(v, dict) else str(v) for v in raw]


def _check_required(definition: EntityTypeDef, bundle: str, fields: Mapping[str, FieldItems],
                    config: ConfigReader) -> None:
    prefix = f"field.field.{definition.id}.{bundle}."
    for name in config.config_names(prefix):
        field_name = name[len(prefix):]
        instance = config.config_get(name)
        if isinstance(instance, dict) and instance.get("required") and not fields.get(field_name):
            raise _refuse(f"field {field_name!r} is required on {definition.id} bundle {bundle}")



def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in {"", "0", "false", "no", "off"}
    return bool(value)


def _as_int(name: str, value: Any) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        raise _refuse(f"field {name!r} needs an integer, got {value!r}") from None


def _as_number(name: str, value: Any) -> float | int:
    try:
        number = float(str(value).strip())
    except ValueError:
        raise _refuse(f"field {name!r} needs a number, got {value!r}") from None
    return int(number) if number.is_integer() else number

