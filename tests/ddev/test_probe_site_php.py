"""Issue 10, point 12: the probe's versions, user label conditions and pending-update wording,
under php-cli with stand-ins for the Drupal services they reach (probe_harness.php's \\Drupal).

What the drift messages print comes from ``versions``' keys (package, version, source_reference,
read by baselines/versions.py); core's modules ship in drupal/core and carry its reference.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.sites.ddev.driver import PROBE_FILE

HARNESS = Path(__file__).with_name("probe_harness.php")
PHP = shutil.which("php")
pytestmark = pytest.mark.skipif(PHP is None, reason="php not found: apt-get install php-cli (.ci/run does)")

CORE_REF = "0123abcd0123abcd0123abcd0123abcd0123abcd"
SITE: dict[str, Any] = {
    "modules": {
        "node": {"path": "core/modules/node", "info": {"version": "10.3.7", "package": "Core"},
                 "schema": 10100},
        "canvas": {"path": "modules/contrib/canvas", "info": {"version": "1.0.0", "project": "canvas"},
                   "schema": 0},
        "kb_docs": {"path": "modules/custom/kb_docs", "info": {"version": "1.2.0"}, "schema": 10001},
    },
    "composer": {"drupal/core": CORE_REF, "drupal/canvas": "v1.0.0"},
    "entity_types": {
        "user": {"keys": {"id": "uid", "uuid": "uuid", "langcode": "langcode"}},
        "node": {"keys": {"id": "nid", "label": "title", "published": "status", "bundle": "type"}},
    },
    "storage_fields": {"user": ["uid", "name", "status"], "node": ["nid", "title", "status", "type"]},
    "count": 2,
}


def with_drupal(method: str, *arguments: Any, site: dict[str, Any] = SITE, root: Path | None = None) -> Any:
    assert PHP is not None
    spec = {"call": "withDrupal", "site": site, "method": method, "arguments": list(arguments)}
    if root is not None:
        spec["drupal_root"] = str(root)
    done = subprocess.run([PHP, str(HARNESS), str(PROBE_FILE)], input=json.dumps(spec),
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_versions_name_the_package_version_and_source_reference_of_each_module() -> None:
    versions = with_drupal("versions")["answer"]
    assert versions["modules"] == {
        "canvas": {"package": "drupal/canvas", "version": "1.0.0", "source_reference": "v1.0.0"},
        "kb_docs": {"package": None, "version": "1.2.0", "source_reference": None},
        # Core's modules ship in drupal/core and carry its reference.
        "node": {"package": "drupal/core", "version": "10.3.7", "source_reference": CORE_REF},
    }
    assert versions["schema"] == {"canvas": 0, "kb_docs": 10001, "node": 10100}
    assert versions["core"] == "10.3.7"
    assert versions["runtime"]["database"] == "mysql 10.11.19-MariaDB"


def test_a_user_label_condition_is_on_the_name() -> None:
    # Users have no label key: User::label() is the account name.
    assert with_drupal("conditionField", "user", "label")["answer"] == "name"
    assert with_drupal("conditionField", "user", "status")["answer"] == "status"
    assert with_drupal("conditionField", "node", "label")["answer"] == "title"
    assert with_drupal("conditionField", "node", "bundle")["answer"] == "type"


def test_counting_users_by_label_queries_the_name() -> None:
    question = {"entity_type": "user", "conditions": [{"field": "label", "operator": "=", "value": "editor"}]}
    done = with_drupal("countQuery", question)
    assert done["answer"] == 2
    assert done["conditions"] == [["name", "editor", "="]]


def test_a_condition_on_a_field_the_site_lacks_counts_nothing_unless_it_asks_for_empty() -> None:
    missing = {"entity_type": "node", "conditions": [{"field": "field_gone", "operator": "=", "value": 1}]}
    assert with_drupal("countQuery", missing)["answer"] == 0
    empty = {"entity_type": "node", "conditions": [{"field": "field_gone", "operator": "IS NULL"}]}
    assert with_drupal("countQuery", empty)["answer"] == 2


def test_pending_updates_are_worded_as_the_update_list_and_post_updates_say(tmp_path: Path) -> None:
    includes = tmp_path / "core" / "includes"
    includes.mkdir(parents=True)
    (includes / "install.inc").write_text("<?php\nfunction drupal_load_updates() {}\n")
    listed = {"kb_docs": {"pending": {"10001": "10001 - Add the summary field.",
                                      "10002": "10002 -  Backfill summaries. "}}}
    (includes / "update.inc").write_text(
        "<?php\nfunction update_get_update_list() { return json_decode(" + repr(json.dumps(listed))
        + ", TRUE); }\n")
    site = SITE | {"post_updates": {"canvas": {"pending": {"canvas_post_update_tree": " Rebuild trees. "}}}}
    assert with_drupal("pendingUpdates", site=site, root=tmp_path)["answer"] == [
        {"module": "kb_docs", "update_id": "10001", "description": "Add the summary field."},
        {"module": "kb_docs", "update_id": "10002", "description": "Backfill summaries."},
        {"module": "canvas", "update_id": "canvas_post_update_tree", "description": "Rebuild trees."},
    ]


def test_entity_create_makes_the_entity_through_its_storage_then_sets_and_saves_its_values() -> None:
    site = {**SITE, "entity_types": {"taxonomy_term": {"keys": {"bundle": "vid"}}},
            "new": {"entity_type": "taxonomy_term", "uuid": "u-7", "id": 7, "bundle": "products",
                    "label": "", "fields": ["name", "weight"]}}
    done = with_drupal("entityCreate", {"entity_type": "taxonomy_term", "bundle": "products",
                                        "uuid": "u-7", "values": {"name": "API", "weight": 0}},
                       site=site)
    # The bundle under the type's bundle key and the UUID go to create(), as Drupal wants them.
    assert done["created"] == [{"vid": "products", "uuid": "u-7"}]
    assert done["answer"] == {"id": 7, "uuid": "u-7", "bundle": "products", "label": ""}
