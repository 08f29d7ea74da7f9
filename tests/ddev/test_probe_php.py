"""Issue 10, points 1 and 6: the PHP probe's field values and fallback content export.

The probe's own methods run under php-cli on stand-ins for the Drupal objects they touch
(probe_harness.php). The stored values are what Drupal's PDO returns: strings, as in the real
capture golden/probe/01-entities-by-uuid.json.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ddev_stub import golden

from ai_proving_ground.sites.ddev.driver import PROBE_FILE

HARNESS = Path(__file__).with_name("probe_harness.php")
PHP = shutil.which("php")
pytestmark = pytest.mark.skipif(PHP is None, reason="php not found: apt-get install php-cli (.ci/run does)")

TERM_UUID = "550f86ad-aa11-4047-953f-636d42889f85"
NODE_UUID = "6b0d0c00-0000-4000-8000-000000000001"


def run_probe(spec: dict[str, Any]) -> Any:
    assert PHP is not None
    done = subprocess.run(
        [PHP, str(HARNESS), str(PROBE_FILE)],
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def field(field_type: str, *items: dict[str, Any], computed: bool = False) -> dict[str, Any]:
    return {"type": field_type, "computed": computed, "items": list(items)}


def item(
    values: dict[str, Any], types: dict[str, str], target: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {"values": values, "types": types, "target": target}


def captured_fields() -> dict[str, list[dict[str, Any]]]:
    entity = golden("probe", "entities-by-uuid")["answer"]["entities"][NODE_UUID]
    fields: dict[str, list[dict[str, Any]]] = entity["fields"]
    return fields


def test_the_capture_shows_drupal_returns_strings() -> None:
    fields = captured_fields()
    assert fields["field_kb_weight"] == [{"value": "3"}] and fields["status"] == [{"value": "1"}]


@pytest.mark.parametrize(
    ("name", "field_type", "data_type", "expected"),
    [
        ("field_kb_weight", "integer", "integer", [{"value": 3}]),
        ("status", "boolean", "boolean", [{"value": True}]),
        ("field_kb_section", "list_string", "string", [{"value": "getting_started"}]),
        ("field_kb_tags", "string", "string", [{"value": "team"}, {"value": "invitations"}]),
    ],
)
def test_field_values_are_cast_to_their_declared_types(
    name: str, field_type: str, data_type: str, expected: list[dict[str, Any]]
) -> None:
    stored = [item(values, {"value": data_type}) for values in captured_fields()[name]]
    assert run_probe({"call": "fieldItems", "field": field(field_type, *stored)}) == expected


def test_a_float_a_timestamp_and_a_null_keep_their_types() -> None:
    stored = item(
        {"value": "3.25", "end": None, "at": "1764585000"},
        {"value": "float", "end": "float", "at": "timestamp"},
    )
    assert run_probe({"call": "fieldItems", "field": field("float", stored)}) == [
        {"value": 3.25, "end": None, "at": 1764585000}
    ]


def test_a_reference_casts_its_target_id_and_carries_the_uuid() -> None:
    term = {"entity_type": "taxonomy_term", "uuid": TERM_UUID, "id": 1}
    stored = item({"target_id": "1"}, {"target_id": "integer"}, target=term)
    assert run_probe({"call": "fieldItems", "field": field("entity_reference", stored)}) == [
        {"target_id": 1, "target_uuid": TERM_UUID}
    ]


def test_an_empty_mapping_is_an_object_not_a_list() -> None:
    stored = item(
        {"uri": "https://example.com", "title": "x", "options": []}, {"uri": "string", "title": "string"}
    )
    assert run_probe({"call": "fieldItems", "field": field("link", stored)}) == [
        {"uri": "https://example.com", "title": "x", "options": {}}
    ]


NODE_KEYS = {
    "id": "nid",
    "uuid": "uuid",
    "revision": "vid",
    "bundle": "type",
    "langcode": "langcode",
    "default_langcode": "default_langcode",
    "label": "title",
    "published": "status",
}
NODE_REVISION_KEYS = {
    "revision_default": "revision_default",
    "revision_created": "revision_timestamp",
    "revision_user": "revision_uid",
    "revision_log_message": "revision_log",
}


def exported_node() -> dict[str, Any]:
    term = {"entity_type": "taxonomy_term", "uuid": TERM_UUID, "id": 1}
    admin = {"entity_type": "user", "uuid": "a0000000-0000-4000-8000-000000000001", "id": 1, "user": True}
    node = {
        "entity_type": "node",
        "uuid": NODE_UUID,
        "id": 1,
        "bundle": "kb_doc",
        "langcode": "en",
        "keys": NODE_KEYS,
        "revision_metadata_keys": NODE_REVISION_KEYS,
        "fields": {
            "nid": field("integer", item({"value": "1"}, {"value": "integer"})),
            "title": field("string", item({"value": "Invite your team"}, {"value": "string"})),
            "revision_default": field("boolean", item({"value": "1"}, {"value": "boolean"})),
            "revision_timestamp": field("created", item({"value": "1796112808"}, {"value": "timestamp"})),
            "field_kb_weight": field("integer", item({"value": "3"}, {"value": "integer"})),
            "field_tags": field("entity_reference", item({"target_id": "1"}, {"target_id": "integer"}, term)),
            "uid": field("entity_reference", item({"target_id": "1"}, {"target_id": "integer"}, admin)),
            "path": field(
                "path", item({"alias": "/invite", "langcode": "en", "pid": None}, {"alias": "string"})
            ),
        },
    }
    document: dict[str, Any] = run_probe({"call": "exportEntity", "entity": node})
    return document


def test_fallback_export_references_content_by_uuid_without_has_integer_id() -> None:
    document = exported_node()
    assert document["default"]["field_tags"] == [{"entity": TERM_UUID}]
    assert document["_meta"]["depends"] == {TERM_UUID: "taxonomy_term"}
    assert document["default"]["uid"] == [{"target_id": 1}]  # users 0 and 1 keep their IDs


def test_fallback_export_leaves_out_revision_metadata_and_casts_values() -> None:
    default = exported_node()["default"]
    assert "revision_default" not in default and "revision_timestamp" not in default
    assert "nid" not in default
    assert default["field_kb_weight"] == [{"value": 3}]
    assert default["title"] == [{"value": "Invite your team"}]


def test_fallback_export_marks_a_password_pre_hashed() -> None:
    user = {
        "entity_type": "user",
        "uuid": "a0000000-0000-4000-8000-000000000002",
        "id": 2,
        "user": True,
        "keys": {"id": "uid", "uuid": "uuid", "langcode": "langcode"},
        "fields": {
            "name": field("string", item({"value": "editor"}, {"value": "string"})),
            "pass": field("password", item({"value": "$2y$10$abcdefghij"}, {"value": "string"})),
        },
    }
    document = run_probe({"call": "exportEntity", "entity": user})
    assert document["default"]["pass"] == [{"value": "$2y$10$abcdefghij", "pre_hashed": True}]


def test_fallback_export_writes_empty_mappings_as_objects() -> None:
    document = exported_node()
    assert document["default"]["path"] == [{"alias": "/invite", "langcode": "en", "pid": None}]
    link = {
        "entity_type": "node",
        "uuid": NODE_UUID,
        "id": 1,
        "bundle": "page",
        "keys": NODE_KEYS,
        "fields": {
            "field_link": field("link", item({"uri": "internal:/", "options": []}, {"uri": "string"}))
        },
    }
    exported = run_probe({"call": "exportEntity", "entity": link})
    assert exported["default"]["field_link"] == [{"uri": "internal:/", "options": {}}]


# ------------------------------------------------------------------ entity:update (cv02 on DDEV)

PAGE = {
    "entity_type": "canvas_page",
    "uuid": "ca0a5000-0000-4000-8000-000000000001",
    "id": 1,
    "bundle": "canvas_page",
    "label": "Home",
    "fields": ["title", "components", "path"],
}
CARD = {"uuid": "c-f2", "component_id": "sdc.apg.card", "parent_uuid": "c-2", "slot": "content",
        "inputs": {"title": "Troubleshooting"}}


def test_update_entity_sets_each_field_as_given_saves_and_answers_the_summary() -> None:
    done = run_probe({"call": "updateEntity", "entity": PAGE, "values": {"components": [CARD]}})
    assert done == {
        "answer": {"id": 1, "uuid": PAGE["uuid"], "bundle": "canvas_page", "label": "Home"},
        "set": {"components": [CARD]},
        "saved": True,
    }


def test_update_entity_refuses_a_field_the_bundle_lacks_and_saves_nothing() -> None:
    done = run_probe({"call": "updateEntity", "entity": PAGE, "values": {"components": [], "nope": 1}})
    assert done["error"] == "APG probe: canvas_page canvas_page has no field nope."
    assert done["saved"] is False


def test_update_entity_refuses_violations_on_the_fields_it_set_only() -> None:
    violations = [{"path": "components.0.inputs", "message": "The <em>title</em> is required."},
                  {"path": "owner", "message": "not ours to judge"}]
    done = run_probe({"call": "updateEntity", "entity": PAGE | {"violations": violations},
                      "values": {"components": [CARD]}})
    assert done["error"] == "APG probe: the values are invalid: components.0.inputs: The title is required."
    assert done["saved"] is False
    done = run_probe({"call": "updateEntity", "entity": PAGE | {"violations": violations[1:]},
                      "values": {"components": [CARD]}})
    assert done["saved"] is True
