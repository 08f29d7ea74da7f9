"""One real campaign for the page tests: the shipped smoke campaign (oracle vs nop on dv01)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ai_proving_ground.cli import campaign as campaign_cli
from ai_proving_ground.paths import project_dir


@pytest.fixture(scope="session")
def finished_campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("campaign") / "smoke"
    assert campaign_cli.main(["run", str(project_dir("campaigns") / "example.yml"),
                              "--out", str(out)]) == 0
    return out


@pytest.fixture
def campaign(finished_campaign: Path) -> Path:
    return finished_campaign
