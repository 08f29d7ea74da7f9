"""The embedded site's entity types and the module behind each field type: the facts reads
need (views, counts, exports); ``content_model`` enforces the rules on writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ai_proving_ground.sites.base import EntityRecord
from ai_proving_ground.sites.embedded import menu_links


@dataclass(frozen=True)
class EntityTypeDef:
    """An entity type of the embedded site."""

    id: str
    provider: str
    label_field: str
    bundle_prefix: str | None  # config prefix of bundle definitions; None = one bundle (the type)
    base_fields: frozenset[str]
    base_table: str
    status_field: str = "status"  # the published key's field


ENTITY_TYPES: dict[str, EntityTypeDef] = {
    t.id: t
    for t in (
        EntityTypeDef(
            "node", "node", "title", "node.type.",
            frozenset({"title", "status", "uid", "revision_uid", "revision_log", "promote",
                       "sticky", "path", "langcode", "created", "changed"}),
            "node_field_data",
        ),
        EntityTypeDef(
            "taxonomy_term", "taxonomy", "name", "taxonomy.vocabulary.",
            frozenset({"name", "status", "description", "weight", "parent", "path", "langcode",
                       "changed"}),
            "taxonomy_term_field_data",
        ),
        EntityTypeDef(
            "file", "file", "filename", None,
            frozenset({"filename", "uri", "filemime", "filesize", "status", "uid", "langcode",
                       "created", "changed"}),
            "file_managed",
        ),
        EntityTypeDef(
            "canvas_page", "canvas", "title", None,
            frozenset({"title", "status", "description", "path", "components", "owner",
                       "langcode", "created", "changed"}),
            "canvas_page_field_data",
        ),
        EntityTypeDef(menu_links.ENTITY_TYPE, "menu_link_content", "title", None,
                      menu_links.BASE_FIELDS, "menu_link_content_data", "enabled"),
    )
}

# Which module provides each field type; a field of a type whose module is off is refused.
FIELD_TYPES: dict[str, str] = {
    "string": "field", "string_long": "field", "email": "field", "integer": "field",
    "decimal": "field", "float": "field", "boolean": "field", "entity_reference": "field",
    "text": "text", "text_long": "text", "text_with_summary": "text",
    "list_string": "options", "list_integer": "options", "list_float": "options",
    "link": "link", "datetime": "datetime", "timestamp": "field", "telephone": "telephone",
    "file": "file", "image": "image",
}


def export_values(record: EntityRecord) -> dict[str, list[dict[str, Any]]]:
    """An entity's values in default-content shape: references by UUID under ``entity``."""
    definition = ENTITY_TYPES[record.entity_type]
    values: dict[str, list[dict[str, Any]]] = {
        definition.label_field: [{"value": record.label}],
        definition.status_field: [{"value": record.status}],
    }
    for name, items in record.fields.items():
        values[name] = [
            {("entity" if k == "target_uuid" else k): v for k, v in item.items()} for item in items
        ]
    return values
