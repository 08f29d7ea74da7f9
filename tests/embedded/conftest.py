"""Beds for the conformance tests: what the Drupal 10.3.7 corpus site held.

``corpus_bed`` is a fresh copy of a bed with the base recipe and kb_docs as the corpus site had it
(version 2, kept in golden/corpus/: 12 published articles created in one second). The shipped
fixture moved on; the corpus's answers are for this content.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ai_proving_ground.bed import init_bed

CORPUS_FIXTURE = Path(__file__).parent / "golden" / "corpus" / "fixture_kb_docs"


@pytest.fixture(scope="session")
def corpus_template_bed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("corpus") / "bed"
    init_bed(target).apply_recipe(CORPUS_FIXTURE)
    return target


@pytest.fixture
def corpus_bed(corpus_template_bed: Path, tmp_path: Path,
               copy_template: Callable[[Path, Path], Path]) -> Path:
    """A fresh copy of the corpus bed for one test."""
    return copy_template(corpus_template_bed, tmp_path / "corpus_bed")
