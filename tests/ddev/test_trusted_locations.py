"""Issue 19: a DDEV bed's baselines and records live outside the project and every mount.

The web container can write the whole project (drush, PHP), so nothing reset restores may lie
there. ``escrow.locations.baseline_location`` is the one owner of the rule; ``store.baseline_dir``
and ``store.runs_dir`` answer through it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ai_proving_ground.baselines.store import baseline_dir, runs_dir
from ai_proving_ground.errors import ApgError
from ai_proving_ground.escrow.locations import UNSAFE_BASELINE, baseline_location
from ai_proving_ground.fsutil import is_within
from ai_proving_ground.settings import Settings


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    return path


def ddev_project(root: Path, name: str = "site") -> Path:
    (root / ".ddev").mkdir(parents=True)
    (root / ".ddev" / "config.yaml").write_text(f"name: {name}\ntype: drupal10\ndocroot: web\n")
    return root


def test_a_ddev_beds_default_lies_outside_the_project_in_home(tmp_path: Path, home: Path) -> None:
    bed = ddev_project(tmp_path / "bed")
    where = baseline_dir(bed)
    assert not is_within(where, bed) and is_within(where, home / ".ai-proving-ground-beds")
    assert where.name.startswith("bed-")
    assert runs_dir(bed) == where / "runs"
    assert baseline_location(bed).relative is None  # the escrow records it as absolute


def test_the_default_is_named_by_the_beds_path_never_by_its_agent_writable_config(
        tmp_path: Path, home: Path) -> None:
    bed = ddev_project(tmp_path / "bed")
    other = ddev_project(tmp_path / "elsewhere" / "bed")
    before = baseline_dir(bed)
    # An attempt can rename the project in .ddev/config.yaml; the baseline stays where it was.
    (bed / ".ddev" / "config.yaml").write_text("name: elsewhere\ntype: drupal10\n")
    assert baseline_dir(bed) == before
    assert baseline_dir(other) != before  # two beds of one folder name never share one


def test_an_embedded_bed_keeps_its_baseline_in_the_bed(tmp_path: Path, home: Path) -> None:
    bed = tmp_path / "bed"
    bed.mkdir()
    assert baseline_dir(bed) == bed / ".ai-proving-ground"


def test_the_operators_driver_choice_decides_not_the_beds_files(tmp_path: Path, home: Path) -> None:
    # With AI_PG_SITE_DRIVER=ddev (as the host commands and DDEV campaigns set it), deleting
    # .ddev/config.yaml cannot move the baseline back into the project.
    bed = tmp_path / "bed"
    bed.mkdir()
    assert not is_within(baseline_dir(bed, Settings(site_driver="ddev")), bed)


@pytest.mark.parametrize("configured", [".ai-proving-ground", "state/apg",
                                        "/var/www/html/state/apg", "{bed}/state", "{bed}"])
def test_a_configured_baseline_inside_a_ddev_project_is_refused(
        tmp_path: Path, home: Path, configured: str) -> None:
    bed = ddev_project(tmp_path / "bed")
    settings = Settings(baseline_dir=configured.format(bed=bed))
    with pytest.raises(ApgError) as raised:
        baseline_dir(bed, settings)
    assert raised.value.token == UNSAFE_BASELINE and raised.value.exit_code == 2
    assert "unset AI_PG_BASELINE_DIR" in raised.value.message


def test_a_baseline_under_a_bind_source_is_refused_outside_it_is_kept(tmp_path: Path, home: Path) -> None:
    bed = ddev_project(tmp_path / "bed")
    (bed / ".ddev" / "docker-compose.share.yaml").write_text(
        f"services:\n  web:\n    volumes:\n      - {tmp_path / 'shared'}:/mnt/shared\n")
    with pytest.raises(ApgError) as raised:
        baseline_dir(bed, Settings(baseline_dir=str(tmp_path / "shared" / "apg")))
    assert raised.value.token == UNSAFE_BASELINE and "bind source" in raised.value.message
    # HOME mounted into the container: the default under it is refused too.
    (bed / ".ddev" / "docker-compose.home.yaml").write_text(
        "services:\n  web:\n    volumes:\n      - $HOME:/mnt/home\n")
    with pytest.raises(ApgError):
        baseline_dir(bed)
    (bed / ".ddev" / "docker-compose.home.yaml").unlink()
    kept = tmp_path / "trusted"
    assert baseline_dir(bed, Settings(baseline_dir=str(kept))) == kept
