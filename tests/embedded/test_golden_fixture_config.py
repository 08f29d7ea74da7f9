"""The shipped kb_docs fixture's config is what Drupal 10.3.7 stores for it, written the way a
real fixture export writes it: the probe's JSON (PHP's empty arrays as []) without ``uuid``
and ``_core``, through the same YAML dumper.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground import yamldump, yamlio
from ai_proving_ground.fixture_plan import strip_config

GOLDEN = Path(__file__).parent / "golden"
FIXTURE_CONFIG = Path(__file__).parents[2] / "fixtures" / "fixture_kb_docs" / "config"
KB_NAMES = sorted(p.stem for p in FIXTURE_CONFIG.glob("*.yml"))


def as_probe_reads(value: Any) -> Any:
    """A mapping read back through PHP and json_encode: an empty array is a JSON list."""
    if isinstance(value, dict):
        return {k: as_probe_reads(v) for k, v in value.items()} if value else []
    if isinstance(value, list):
        return [as_probe_reads(v) for v in value]
    return value


@pytest.mark.parametrize("name", KB_NAMES)
def test_fixture_config_is_what_drupal_stores(name: str) -> None:
    stored = yamlio.load_yaml(GOLDEN / "config" / f"{name}.yml")  # drush config:get output
    expected = yamldump.dumps(strip_config(as_probe_reads(stored)))
    assert (FIXTURE_CONFIG / f"{name}.yml").read_text(encoding="utf-8") == expected


def test_fixture_config_matches_the_probe_byte_for_byte() -> None:
    # The probe's own answer for two of the objects: what a real export writes, exactly.
    answer = json.loads((GOLDEN / "probe" / "06-config.json").read_text())["answer"]["config"]
    for name in ("node.type.kb_doc", "field.field.node.kb_doc.field_kb_weight"):
        written = (FIXTURE_CONFIG / f"{name}.yml").read_text(encoding="utf-8")
        assert written == yamldump.dumps(strip_config(answer[name])), name


def test_every_kb_config_object_is_covered() -> None:
    assert len(KB_NAMES) == 9
