"""Which entity type a view lists, and how a handler's table and field read an entity."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ai_proving_ground.sites.base import EntityRecord
from ai_proving_ground.sites.embedded.views.context import Context, ViewError, mapping

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
# What a node holds in a base field nobody set: Drupal's field defaults (promoted, not sticky,
# owned by user 1, the site's builder, as content a recipe imports is).
NODE_DEFAULTS: dict[str, Any] = {"promote": 1, "sticky": 0, "uid": 1,
                                 "revision_translation_affected": 1}
# Users every Drupal site has: anonymous (0) and the account that installed it (1).
BUILTIN_USERS: dict[int, tuple[str, bool]] = {0: ("", False), 1: ("admin", True)}
# Views' group and title of the base columns an in-operator filter may name.
_BASE_LABELS = {"type": "Content type", "langcode": "Translation language",
                "status": "Published", "title": "Title"}


@dataclass(frozen=True)
class Accessor:
    """How to read one column.

    ``items`` gives one value (or None) per field item; ``table`` names the field table a SQL
    join would add, one row per item (None: one value per entity). ``textual`` columns sort as
    text even when digits; ``allow_empty`` columns are nullable, so Views offers them the
    empty / not empty operators.
    """

    items: Callable[[EntityRecord], list[Any]]
    table: str | None = None
    textual: bool = False
    allow_empty: bool = False
    label: str = ""
    # The value of one item (field name, properties), for reading a joined row fast.
    field_name: str = ""
    properties: tuple[str, ...] = ()

    def get(self, entity: EntityRecord) -> list[Any]:
        return [v for v in self.items(entity) if v is not None]

    def item(self, entity: EntityRecord, delta: int) -> Any:
        item = entity.fields[self.field_name][delta]
        for prop in self.properties:
            value = item.get(prop)
            if value is not None:
                return value
        return None


def _item_values(name: str, properties: tuple[str, ...]) -> Callable[[EntityRecord], list[Any]]:
    def items(entity: EntityRecord) -> list[Any]:
        return [next((item[p] for p in properties if item.get(p) is not None), None)
                for item in entity.fields.get(name, [])]

    return items


def _items(name: str, properties: tuple[str, ...]) -> Accessor:
    return Accessor(_item_values(name, properties))


def _with_default(name: str, properties: tuple[str, ...], default: Any) -> Accessor:
    read = _item_values(name, properties)
    return Accessor(lambda e: read(e) or [default])


_LANGCODE_ITEMS = _items("langcode", _MAIN_PROPERTIES)


def _langcode(entity: EntityRecord) -> list[Any]:
    return _LANGCODE_ITEMS.get(entity) or [SITE_LANGCODE]


_COMMON_COLUMNS: dict[str, Accessor] = {
    "id": Accessor(lambda e: [e.id]),
    "uuid": Accessor(lambda e: [e.uuid], textual=True),
    "type": Accessor(lambda e: [e.bundle], textual=True, label="Content type"),
    "bundle": Accessor(lambda e: [e.bundle], textual=True),
    "status": Accessor(lambda e: [e.status]),
    "title": Accessor(lambda e: [e.label], textual=True),
    "name": Accessor(lambda e: [e.label], textual=True),
    "label": Accessor(lambda e: [e.label], textual=True),
    "info": Accessor(lambda e: [e.label], textual=True),
    "created": Accessor(lambda e: [e.created]),
    "changed": Accessor(lambda e: [e.changed]),
    "langcode": Accessor(_langcode, textual=True, label="Translation language"),
    "default_langcode": Accessor(lambda e: [True]),
}
# Node columns derived from others: one revision per node, written by its owner when changed.
_NODE_COLUMNS: dict[str, Accessor] = {
    "vid": _COMMON_COLUMNS["id"],
    "revision_timestamp": _COMMON_COLUMNS["changed"],
    "revision_uid": _with_default("uid", ("target_id", "value"), NODE_DEFAULTS["uid"]),
    # core's node_status filter: for anonymous, "published or admin" is just "published".
    "status_extra": _COMMON_COLUMNS["status"],
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
    if entity_type == "node" and column in _NODE_COLUMNS:
        return _NODE_COLUMNS[column]
    # Multi-property base fields are stored as <field>__<property> columns.
    name, _, prop = column.partition("__")
    if name not in _ITEM_BASE_FIELDS:
        return None
    properties = _properties(prop) if prop else _MAIN_PROPERTIES
    if entity_type == "node" and name in NODE_DEFAULTS:
        return _with_default(name, properties, NODE_DEFAULTS[name])
    return _items(name, properties)


def _field_table_column(ctx: Context, field_name: str, column: str, table: str) -> Accessor | None:
    info = ctx.schema.fields.get(field_name) if ctx.schema is not None else None
    if ctx.schema is not None and info is None:
        return None  # no such field storage: Views has no data for the table
    label = info.label if info is not None else field_name
    properties: tuple[str, ...]
    if column == field_name:
        properties = _MAIN_PROPERTIES
    elif column.startswith(f"{field_name}_"):
        properties = _properties(column.removeprefix(f"{field_name}_"))
    else:
        return None
    textual = info is not None and info.type not in _NUMERIC_FIELD_TYPES
    return Accessor(_item_values(field_name, properties), table=table, textual=textual,
                    allow_empty=True, label=label, field_name=field_name, properties=properties)


_NUMERIC_FIELD_TYPES = frozenset({"integer", "decimal", "float", "boolean", "list_integer",
                                  "list_float", "timestamp", "entity_reference"})


def _user_column(column: str) -> Accessor | None:
    def user(entity: EntityRecord) -> tuple[str, bool] | None:
        uid = (_with_default("uid", ("target_id", "value"), NODE_DEFAULTS["uid"]).get(entity)
               or [None])[0]
        return BUILTIN_USERS.get(int(uid)) if isinstance(uid, int | str) and str(uid).isdigit() else None

    readers: dict[str, Callable[[EntityRecord], list[Any]]] = {
        "name": lambda e: [u[0]] if (u := user(e)) else [],
        "status": lambda e: [u[1]] if (u := user(e)) else [],
        "uid": lambda e: _with_default("uid", ("target_id", "value"), NODE_DEFAULTS["uid"]).get(e),
    }
    read = readers.get(column)
    return Accessor(read, textual=column == "name", label="User") if read else None


def _related(ctx: Context, key: str, relationship: str, relationships: Mapping[str, Any],
             table: str, column: str) -> Accessor | None:
    handler = mapping(ctx, f"relationships.{relationship}", relationships.get(relationship))
    # The relationship the embedded site knows: a node's author (uid) to the user's data.
    if handler.get("field") in ("uid", "revision_uid") and table in ("users_field_data", "users"):
        return _user_column(column)
    raise ctx.error(f"{key}.relationship",
                    f"relationship {relationship!r} ({handler.get('table')}.{handler.get('field')})"
                    " is not supported by the embedded site (only a node's author, uid)")


def column_accessor(
    ctx: Context, key: str, handler: Mapping[str, Any], entity_type: str, base_table: str,
    relationships: Mapping[str, Any] | None = None,
) -> Accessor | None:
    """How a handler reads a row; None when Views has no such column (a broken handler)."""
    table = handler.get("table") or base_table
    column = handler.get("field")
    if not isinstance(column, str) or not column:
        raise ctx.error(f"{key}.field", "missing field name")
    relationship = handler.get("relationship", "none")
    if relationship not in (None, "", "none"):
        return _related(ctx, key, str(relationship), relationships or {}, str(table), column)
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
        accessor = _field_table_column(ctx, table.removeprefix(field_prefix), column, table)
    if accessor is None and ctx.schema is None:
        raise ctx.error(
            f"{key}.field", f"unknown field {table}.{column} for entity type {entity_type!r}"
        )
    return accessor
