"""yamldump on real config: every config object the shipped fixtures, the embedded site's core
modules and the golden corpus hold is written as PyYAML wrote it (tests/fuzz fuzzes the rest),
and config as the database holds it is written without PyYAML."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from ai_proving_ground import yamldump
from ai_proving_ground.paths import PACKAGE_DIR, project_dir
from ai_proving_ground.sites.embedded.store import as_stored

TESTS = Path(__file__).parent
YAML_FILES = sorted([*project_dir("fixtures").glob("fixture_*/**/*.yml"),
                     *(PACKAGE_DIR / "sites" / "embedded" / "core_modules").glob("**/*.yml"),
                     *TESTS.glob("*/golden/**/*.yml")])
JSON_FILES = sorted(TESTS.glob("*/golden/**/*.json"))
DUMPERS = [d for d in (getattr(yaml, "CSafeDumper", None), yaml.SafeDumper) if d is not None]


def pyyaml(data: Any, dumper: Any = DUMPERS[0]) -> str:
    """What yamlio.dumps printed before yamldump: PyYAML with the project's options."""
    return str(yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True, width=4096))


def documents() -> list[tuple[str, Any]]:
    """(where, data): each YAML file as loaded and as stored, and each top-level value of each
    golden JSON file (a case's config, what Drupal stored, what it returned)."""
    found: list[tuple[str, Any]] = []
    for path in YAML_FILES:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        found += [(str(path), data), (f"{path} as stored", as_stored(data))]
    for path in JSON_FILES:
        data = json.loads(path.read_text(encoding="utf-8"))
        found += [(f"{path}: {key}", value) for key, value in data.items()]
    return found


def test_the_corpus_is_there() -> None:
    assert len(YAML_FILES) > 60 and len(JSON_FILES) > 150


def test_every_corpus_document_is_written_as_pyyaml_wrote_it() -> None:
    differ, written_here = [], 0
    for where, data in documents():
        written = yamldump.written_here(data)
        if yamldump.dumps(data) != pyyaml(data):
            differ.append(where)
        if written is not None:
            written_here += 1
            differ += [f"{where} ({d.__name__})" for d in DUMPERS if written != pyyaml(data, d)]
    assert differ == []
    assert written_here > 300


def test_config_as_the_database_holds_it_is_written_without_pyyaml() -> None:
    stored = [(where, data) for where, data in documents()
              if where.endswith(" as stored") and "/config/" in where]
    assert len(stored) > 40
    assert [where for where, data in stored if yamldump.written_here(data) is None] == []


def test_an_object_met_twice_is_pyyaml_s_to_write_as_an_anchor_and_alias() -> None:
    shared: dict[str, Any] = {"a": 1}
    for data in ({"x": shared, "y": shared}, [[], {"k": []}], {"x": {}, "y": {}}):
        assert yamldump.dumps(data) == pyyaml(data)
    assert "&id001" in yamldump.dumps({"x": shared, "y": shared})
