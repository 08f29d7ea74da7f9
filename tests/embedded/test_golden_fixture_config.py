"""The shipped kb_docs fixture's config is what Drupal 10.3.7 stores for it, written the way a
real fixture export writes it: the probe's JSON (PHP's empty arrays as []) as
``comparable_config`` spells it (no ``uuid`` or ``_core``, every empty array ``{}``), through the
same YAML dumper. The kb_faq bundle (version 3) has no capture: its objects are shaped as their
kb_doc counterparts Drupal stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground import yamldump, yamlio
from ai_proving_ground.fixture_plan import comparable_config

GOLDEN = Path(__file__).parent / "golden"
FIXTURE_CONFIG = Path(__file__).parents[2] / "fixtures" / "fixture_kb_docs" / "config"
NAMES = sorted(p.stem for p in FIXTURE_CONFIG.glob("*.yml"))
KB_NAMES = [n for n in NAMES if (GOLDEN / "config" / f"{n}.yml").is_file()]
FAQ_NAMES = {n: n.replace("kb_faq", "kb_doc") for n in NAMES if "kb_faq" in n}


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
    expected = yamldump.dumps(comparable_config(as_probe_reads(stored)))
    assert (FIXTURE_CONFIG / f"{name}.yml").read_text(encoding="utf-8") == expected


def test_fixture_config_matches_the_probe_byte_for_byte() -> None:
    # The probe's own answer for two of the objects: what a real export writes, exactly.
    answer = json.loads((GOLDEN / "probe" / "06-config.json").read_text())["answer"]["config"]
    for name in ("node.type.kb_doc", "field.field.node.kb_doc.field_kb_weight"):
        written = (FIXTURE_CONFIG / f"{name}.yml").read_text(encoding="utf-8")
        assert written == yamldump.dumps(comparable_config(answer[name])), name


def test_every_kb_config_object_is_covered() -> None:
    assert len(KB_NAMES) == 9
    assert sorted([*KB_NAMES, *FAQ_NAMES]) == NAMES


@pytest.mark.parametrize("name", sorted(FAQ_NAMES))
def test_the_second_bundle_is_shaped_as_drupal_stores_the_first(name: str) -> None:
    faq = yamlio.load_yaml(FIXTURE_CONFIG / f"{name}.yml")
    doc = yamlio.load_yaml(FIXTURE_CONFIG / f"{FAQ_NAMES[name]}.yml")
    assert list(faq) == list(doc)
    assert {k: type(v) for k, v in faq.items()} == {k: type(v) for k, v in doc.items()}
