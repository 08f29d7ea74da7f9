"""Which entity type a view lists, and how a handler's table and field read an entity."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ai_proving_ground.sites.base import EntityRecord
from ai_proving_ground.sites.embedded.views.context import Context, ViewError

# Tables whose name does not follow the ``<type>_field_data`` pattern.
_SPECIAL_BASE_TABLES = {"users_field_data": "user", "canvas_page": "canvas_page"}
DATA_SUFFIX = "_field_data"


def entity_type_of(table: Any) -> str | None:
    if not isinstance(table, str):
        return None
    if table in _SPECIAL_BASE_TABLES:
        return _SPECIAL_BASE_TABLES[table]
    if table.endswith(DATA_SUFFIX) and len(table) > len(DATA_SUFFIX):
        return table.removesuffix(DATA_SUFFIX)
    return None


def base_entity_type(view: Mapping[str, Any]) -> str:
    """The entity type a view lists, from its ``base_table``."""
    entity_type = entity_type_of(view.get("base_table"))
    if entity_type is None:
        raise ViewError(
            f"view {view.get('id', '?')!r}: base_table: {view.get('base_table')!r} is not an"
            " entity data table (expected node_field_data or <entity_type>_field_data)"
        )
    return entity_type


# ---------------------------------------------------------------------------- field access

SITE_LANGCODE = "en"  # the embedded site is monolingual
LANGUAGE_TOKEN = re.compile(
    r"^\*\*\*LANGUAGE_(language_content|language_interface|site_default)\*\*\*$"
)
_MAIN_PROPERTIES = ("value", "target_id", "target_uuid", "entity", "uri")
# Default content references entities by UUID, so a target_id column falls back to it.
_TARGET_ID_FALLBACK = ("target_uuid", "entity")

# Entity keys whose column name depends on the entity type.
_ID_KEYS = {
    "node": "nid",
    "taxonomy_term": "tid",
    "user": "uid",
    "media": "mid",
    "file": "fid",
    "comment": "cid",
}
_BUNDLE_KEYS = {"taxonomy_term": "vid", "comment": "comment_type"}
_EXTRA_TABLES = {"user": ("users",)}
# Base fields that the record keeps as field items rather than as attributes.
# fmt: off
_ITEM_BASE_FIELDS = frozenset({
    "promote", "sticky", "uid", "revision_uid", "revision_timestamp", "revision_log",
    "revision_translation_affected", "path", "weight", "description", "parent", "mail",
    "timezone", "access", "login", "init", "preferred_langcode", "thumbnail", "owner",
})
# fmt: on


@dataclass(frozen=True)
class Accessor:
    """How to read one column; ``textual`` columns sort as text even when digits."""

    get: Callable[[EntityRecord], list[Any]]
    textual: bool = False


def _items(name: str, properties: tuple[str, ...]) -> Accessor:
    def get(entity: EntityRecord) -> list[Any]:
        values = []
        for item in entity.fields.get(name, []):
            value = next((item[p] for p in properties if item.get(p) is not None), None)
            if value is not None:
                values.append(value)
        return values

    return Accessor(get)


_LANGCODE_ITEMS = _items("langcode", _MAIN_PROPERTIES)


def _langcode(entity: EntityRecord) -> list[Any]:
    return _LANGCODE_ITEMS.get(entity) or [SITE_LANGCODE]


_COMMON_COLUMNS: dict[str, Accessor] = {
    "id": Accessor(lambda e: [e.id]),
    "uuid": Accessor(lambda e: [e.uuid], textual=True),
    "type": Accessor(lambda e: [e.bundle], textual=True),
    "bundle": Accessor(lambda e: [e.bundle], textual=True),
    "status": Accessor(lambda e: [e.status]),
    "title": Accessor(lambda e: [e.label], textual=True),
    "name": Accessor(lambda e: [e.label], textual=True),
    "label": Accessor(lambda e: [e.label], textual=True),
    "info": Accessor(lambda e: [e.label], textual=True),
    "created": Accessor(lambda e: [e.created]),
    "changed": Accessor(lambda e: [e.changed]),
    "langcode": Accessor(_langcode, textual=True),
    "default_langcode": Accessor(lambda e: [True]),
}


def _properties(prop: str) -> tuple[str, ...]:
    return (prop, *_TARGET_ID_FALLBACK) if prop == "target_id" else (prop,)


def _base_column(entity_type: str, column: str) -> Accessor | None:
    if column == _ID_KEYS.get(entity_type):
        return _COMMON_COLUMNS["id"]
    if column == _BUNDLE_KEYS.get(entity_type):
        return _COMMON_COLUMNS["bundle"]
    if column in _COMMON_COLUMNS:
        return _COMMON_COLUMNS[column]
    # Multi-property base fields are stored as <field>__<property> columns.
    name, _, prop = column.partition("__")
    if name in _ITEM_BASE_FIELDS:
        return _items(name, _properties(prop) if prop else _MAIN_PROPERTIES)
    return None


def _field_table_column(field_name: str, column: str) -> Accessor | None:
    if column == field_name:
        return _items(field_name, _MAIN_PROPERTIES)
    if column.startswith(f"{field_name}_"):
        return _items(field_name, _properties(column.removeprefix(f"{field_name}_")))
    return None


def column_accessor(
    ctx: Context, key: str, handler: Mapping[str, Any], entity_type: str, base_table: str
) -> Accessor:
    relationship = handler.get("relationship", "none")
    if relationship not in (None, "", "none"):
        raise ctx.error(
            f"{key}.relationship",
            f"relationship {relationship!r} is not supported by the embedded site",
        )
    table = handler.get("table") or base_table
    column = handler.get("field")
    if not isinstance(column, str) or not column:
        raise ctx.error(f"{key}.field", "missing field name")
    accessor: Accessor | None = None
    base_tables = {
        base_table,
        entity_type,
        f"{entity_type}{DATA_SUFFIX}",
        *_EXTRA_TABLES.get(entity_type, ()),
    }
    field_prefix = f"{entity_type}__"
    if table in base_tables:
        accessor = _base_column(entity_type, column)
    elif isinstance(table, str) and table.startswith(field_prefix):
        accessor = _field_table_column(table.removeprefix(field_prefix), column)
    if accessor is None:
        raise ctx.error(
            f"{key}.field", f"unknown field {table}.{column} for entity type {entity_type!r}"
        )
    return accessor

