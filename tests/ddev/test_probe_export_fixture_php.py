"""A fixture exported from Drupal is the shipped fixture, byte for byte: the probe's exporter (run
under php-cli on probe_harness.php's stand-ins) writes a kb_docs node as Drupal 10.3 holds it
(every base field of a node, stored values as strings, in the node's field order), and the
export plan turns that document into the shipped file.

The node's fields are those ``$entity->toArray()`` showed on the corpus site
(tests/embedded/golden/config-shapes/054-content-node-api.json): Drupal adds ``uid``,
``revision_uid``, ``promote``, ``sticky`` and ``revision_translation_affected``, in another order.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.fixture_plan import canonical_document
from ai_proving_ground.paths import project_dir
from ai_proving_ground.sites.base import EntityRecord
from ai_proving_ground.sites.ddev.driver import PROBE_FILE
from ai_proving_ground.sites.embedded.default_content import dump_document
from ai_proving_ground.yamlio import load_yaml

HARNESS = Path(__file__).with_name("probe_harness.php")
PHP = shutil.which("php")
UUID = "6b0d0c00-0000-4000-8000-000000000007"
SHIPPED = project_dir("fixtures") / "fixture_kb_docs" / "content" / "node" / f"{UUID}.yml"
pytestmark = pytest.mark.skipif(PHP is None, reason="php not found: apt-get install php-cli (.ci/run does)")

KEYS = {"id": "nid", "uuid": "uuid", "revision": "vid", "bundle": "type", "langcode": "langcode",
        "default_langcode": "default_langcode", "label": "title", "published": "status"}
REVISION_KEYS = {"revision_default": "revision_default", "revision_created": "revision_timestamp",
                 "revision_user": "revision_uid", "revision_log_message": "revision_log"}
ADMIN = {"entity_type": "user", "uuid": "a0000000-0000-4000-8000-000000000001", "id": 1,
         "user": True}


def field(field_type: str, *values: dict[str, Any], types: dict[str, str] | None = None,
          target: dict[str, Any] | None = None, computed: bool = False) -> dict[str, Any]:
    return {"type": field_type, "computed": computed, "items": [
        {"values": v, "types": types or {"value": "string"}, "target": target} for v in values]}


def drupal_node(shipped: dict[str, Any]) -> dict[str, Any]:
    """The shipped node as Drupal 10.3 holds it after import: toArray()'s fields, in its order."""
    values = shipped["default"]
    created = str(values["created"][0]["value"])
    boolean, integer = {"value": "boolean"}, {"value": "integer"}
    fields = {
        "nid": field("integer", {"value": "7"}, types=integer),
        "uuid": field("uuid", {"value": UUID}),
        "vid": field("integer", {"value": "7"}, types=integer),
        "langcode": field("language", {"value": "en"}),
        "type": field("entity_reference", {"target_id": "kb_doc"}),
        "revision_timestamp": field("created", {"value": created}, types=integer),
        "revision_uid": field("entity_reference", {"target_id": "1"},
                              types={"target_id": "integer"}, target=ADMIN),
        "revision_log": field("string_long"),
        "status": field("boolean", {"value": "1"}, types=boolean),
        "uid": field("entity_reference", {"target_id": "1"}, types={"target_id": "integer"},
                     target=ADMIN),
        "title": field("string", {"value": values["title"][0]["value"]}),
        "created": field("created", {"value": created}, types=integer),
        "changed": field("changed", {"value": created}, types=integer),
        "promote": field("boolean", {"value": "1"}, types=boolean),
        "sticky": field("boolean", {"value": "0"}, types=boolean),
        "default_langcode": field("boolean", {"value": "1"}, types=boolean),
        "revision_default": field("boolean", {"value": "1"}, types=boolean),
        "revision_translation_affected": field("boolean", {"value": "1"}, types=boolean),
        "path": field("path", {"langcode": "en"}, computed=True),
    }
    for name in ("field_kb_section", "field_kb_summary", "field_kb_tags"):
        fields[name] = field("string", *({"value": str(i["value"])} for i in values[name]))
    fields["field_kb_weight"] = field("integer", {"value": str(values["field_kb_weight"][0][
        "value"])}, types=integer)
    return {"entity_type": "node", "uuid": UUID, "id": 7, "bundle": "kb_doc", "langcode": "en",
            "keys": KEYS, "revision_metadata_keys": REVISION_KEYS, "fields": fields}


def test_a_node_exported_from_drupal_is_the_shipped_file() -> None:
    assert PHP is not None
    shipped = load_yaml(SHIPPED)
    done = subprocess.run([PHP, str(HARNESS), str(PROBE_FILE)],
                          input=json.dumps({"call": "exportEntity", "entity": drupal_node(shipped)}),
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    exported = json.loads(done.stdout)
    # What Drupal writes that the fixture does not keep, in Drupal's order, not the file's.
    assert list(exported["default"]) == [
        "revision_uid", "status", "uid", "title", "promote", "sticky",
        "revision_translation_affected", "field_kb_section", "field_kb_summary", "field_kb_tags",
        "field_kb_weight"]
    record = EntityRecord("node", UUID, 7, "kb_doc", "", True,
                          created=int(shipped["default"]["created"][0]["value"]))
    written = dump_document(canonical_document(exported, ["created"], record))
    assert written == SHIPPED.read_text(encoding="utf-8")
    # Without keep_fields the creation time is not written; with promote kept, promote is.
    assert "created" not in canonical_document(exported, [], record)["default"]
    assert canonical_document(exported, ["promote"], record)["default"]["promote"] == [
        {"value": True}]
