"""The campaign tests' template bed: the shipped fixtures, provisioned, with the test adapters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from campaign_kit import ADAPTERS, FIXTURES

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.sites.embedded.driver import EmbeddedSite


@pytest.fixture(scope="module")
def template(fixtures_template_bed: Path, tmp_path_factory: pytest.TempPathFactory,
             copy_template: Callable[[Path, Path], Path]) -> Path:
    """A provisioned bed with the test adapters; campaigns clone it, never change it."""
    bed = copy_template(fixtures_template_bed, tmp_path_factory.mktemp("campaign_template") / "bed")
    agents = bed / ".ddev" / "agents"
    agents.mkdir(parents=True)
    for name, body in ADAPTERS.items():
        script = agents / name
        script.write_text(f"#!/bin/sh\n## Description: test adapter {name}\n## Credentials: none\n"
                          f"{body}\n", encoding="utf-8")
        script.chmod(0o755)
    provision(bed, FIXTURES, EmbeddedSite(bed))
    return bed
