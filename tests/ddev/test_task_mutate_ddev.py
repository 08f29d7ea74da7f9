"""``apg task mutate --ddev-bed``: a task's graders proven through the ddev driver, on the stub
``ddev``'s site model (tests/ddev/stub_site.py, which executes a stored view with the embedded
Views engine, held to Drupal 10.3.7's answers by tests/embedded/test_golden_views.py).

Every build is applied to the DDEV bed after a fresh reset (``ddev import-db`` of the baseline),
written as an agent would write it (``drush config:set``, the probe's entity writes), read back
and graded through the probe; the report is the embedded site's, build for build.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from ddev_stub import Cli, Stub
from test_ddev_end_to_end import provision

from ai_proving_ground.cli import task as task_cli
from ai_proving_ground.records import problems

pytestmark = pytest.mark.skipif(shutil.which("php") is None, reason="php not found: apt-get install php-cli")

DV01 = "dv01_view_build"


def mutate(cli: Cli, *argv: str) -> tuple[int, dict[str, Any], str]:
    rc, out, err = cli(task_cli.main, "mutate", *argv, "--json")
    assert rc in (0, 1), err
    data: dict[str, Any] = json.loads(out)
    assert problems(data, "mutation_report") == []
    return rc, data, err


def statuses(data: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {m["name"]: (m["status"], m["verdict"]) for m in data["mutants"]}


def test_dv01_views_mutants_die_through_the_ddev_driver_as_on_the_embedded_site(
        bed: Path, stub: Stub, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    provision(cli, bed, "kb_docs")
    rc, ddev, err = mutate(cli, DV01, "--ddev-bed", str(bed), "--operator", "views.")
    assert rc == 0, err
    assert ddev["bed"] == "ddev"
    assert (ddev["reference"]["verdict"], ddev["nop"]["verdict"]) == ("pass", "fail")
    views = statuses(ddev)
    assert len(views) >= 20 and all(name.startswith("views.") for name in views)
    assert {status for status, _ in views.values()} <= {"killed", "equivalent"}, views
    assert ddev["score"] == 1.0
    assert f"APG_MUTATE_OK {DV01}: score 1.000" in err
    # The builds reached the site as an agent's do: drush config:set in the web container.
    assert sum(c["command"][:4] == ["exec", "drush", "config:set", "views.view.kb_billing"]
               for c in stub.calls()) >= len(views)
    monkeypatch.setenv("AI_PG_SITE_DRIVER", "sqlite")
    _rc, embedded, _err = mutate(cli, DV01, "--operator", "views.")
    assert embedded["bed"] == "embedded"
    assert statuses(embedded) == views  # build for build, the same verdict and status
    assert (embedded["score"], embedded["counts"]) == (ddev["score"], ddev["counts"])


def test_a_ddev_bed_without_the_sets_baseline_is_named(bed: Path, stub: Stub, cli: Cli) -> None:
    rc, out, err = cli(task_cli.main, "mutate", DV01, "--ddev-bed", str(bed))
    assert rc == 1 and out == ""
    assert "APG_RESET_NO_BASELINE" in err and "Traceback" not in err


def test_a_ddev_score_is_not_recorded_for_the_card(bed: Path, stub: Stub,
                                                  capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as usage:
        task_cli.main(["mutate", DV01, "--ddev-bed", str(bed), "--record-score"])
    assert usage.value.code == 2
    assert "APG_USAGE apg task mutate: --record-score keeps the embedded site's score" in \
        capfd.readouterr().err
