"""``apg task mutate --ddev-bed``: a task's graders proven through the ddev driver, on the stub
``ddev``'s site model (tests/ddev/stub_site.py, which executes a stored view with the embedded
Views engine, held to Drupal 10.3.7's answers by tests/embedded/test_golden_views.py).

Every build is applied to the DDEV bed after a fresh reset (``ddev import-db`` of the baseline),
written as an agent would write it (``drush config:set``, the probe's entity writes), read back
and graded through the probe; the report is the embedded site's, build for build.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from ddev_stub import Cli, Stub, expect_error
from test_ddev_end_to_end import provision

from ai_proving_ground.cli import task as task_cli
from ai_proving_ground.mutation.beds import ddev_bed_settings
from ai_proving_ground.mutation.ddev_bed import WRITE_REFUSED, DdevBed
from ai_proving_ground.mutation.inputs import NO_MATCH
from ai_proving_ground.mutation.state import Writes
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.records import problems
from ai_proving_ground.settings import Settings

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


def test_dv01_mutants_die_through_the_ddev_driver_as_on_the_embedded_site(
        bed: Path, stub: Stub, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    provision(cli, bed, "kb_docs")
    rc, ddev, err = mutate(cli, DV01, "--ddev-bed", str(bed))
    assert rc == 0, err
    assert ddev["bed"] == "ddev"
    assert (ddev["reference"]["verdict"], ddev["nop"]["verdict"]) == ("pass", "fail")
    found = statuses(ddev)
    views = {name: got for name, got in found.items() if name.startswith("views.")}
    assert len(views) >= 20
    assert {status for status, _ in views.values()} <= {"killed", "equivalent"}, views
    # Content and outside mutants too: entities written through the probe (entity:update and
    # entity:create), the site name through config:set.
    assert {name.partition(".")[0] for name in found} == {"views", "content", "outside"}
    assert ddev["score"] == 1.0
    assert f"APG_MUTATE_OK {DV01}: score 1.000" in err
    # The builds reached the site as an agent's do: drush config:set in the web container.
    assert sum(c["command"][:4] == ["exec", "drush", "config:set", "views.view.kb_billing"]
               for c in stub.calls()) >= len(views)
    monkeypatch.setenv("AI_PG_SITE_DRIVER", "sqlite")
    _rc, embedded, _err = mutate(cli, DV01)
    assert embedded["bed"] == "embedded"
    assert statuses(embedded) == found  # build for build, the same verdict and status
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


def test_a_mutants_writes_reach_the_ddev_site_as_drush_makes_them(bed: Path, stub: Stub,
                                                                  cli: Cli) -> None:
    provision(cli, bed, "kb_docs")
    settings = ddev_bed_settings(Settings.from_environ(), PROJECT_ROOT / "datasets" /
                                 "build_tasks.yml", ["kb_docs"], PROJECT_ROOT)
    ddev = DdevBed.make(bed, ["kb_docs"], settings)
    ddev.fresh()
    before = ddev.read()
    assert len(before.entities) >= 12 and "system.site" in before.config
    retitled, removed, copied = sorted(before.entities)[:3]
    twin = "0a9e7c00-0000-4000-8000-00000000aaaa"
    writes = Writes(
        config={"system.site": {**before.config["system.site"], "name": "Mutant"},
                "apg.mutant": {"answer": 42}},
        entities={retitled: dataclasses.replace(before.entities[retitled], label="Retitled",
                                                status=False),
                  removed: None, twin: before.entities[copied]})
    ddev.write(writes)
    after = ddev.read()
    assert set(after.changed_config(before)) == {"system.site", "apg.mutant"}
    assert after.config["system.site"]["name"] == "Mutant"
    assert after.config["apg.mutant"] == {"answer": 42}
    assert set(after.changed_entities(before)) == {retitled, removed, twin}
    assert (after.entities[retitled].label, after.entities[retitled].status) == ("Retitled", False)
    # Drupal's records carry the label and status as fields too: only those two changed.
    assert {k: v for k, v in after.entities[retitled].fields.items()
            if before.entities[retitled].fields.get(k) != v} == \
        {"title": [{"value": "Retitled"}], "status": [{"value": False}]}
    assert after.entities[twin] == before.entities[copied]  # the same values, another UUID
    # A mutant's own objects alone, in one round trip.
    trips = ddev.site.round_trips
    some = ddev.read_names(["apg.mutant", twin, removed])
    assert ddev.site.round_trips == trips + 1
    assert (some.config, set(some.entities)) == ({"apg.mutant": {"answer": 42}}, {twin})
    ddev.write(Writes(config={"apg.mutant": None}))
    assert "apg.mutant" not in ddev.read_names(["apg.mutant"]).config
    # What drush refuses is the mutant's own failure (a stillborn build), named.
    error = expect_error(WRITE_REFUSED, lambda: ddev.write(Writes(config={"apg.mutant": None})))
    assert "config:delete apg.mutant failed" in error.message and "does not exist" in error.message
    # A fresh reset puts the baseline back.
    ddev.fresh()
    assert ddev.read() == before


def test_exposed_input_takes_part_in_equivalence_through_the_ddev_driver(
        bed: Path, stub: Stub, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    provision(cli, bed, "kb_notices")
    argv = ("nv04_exposed_product_filter", "--operator", "views.filter_operator",
            "--operator", "views.pager_type")
    _rc, ddev, err = mutate(cli, *argv, "--ddev-bed", str(bed))
    found = statuses(ddev)
    exposed = "views.view.notices_by_product:default.filters.field_notice_products_value"
    # The same rows on a first visit; given ?product=..., the opposite ones: not equivalent (and
    # the check that types api kills it).
    assert found[f"views.filter_operator[{exposed}]"] == ("killed", "fail"), err
    # 20 a page or no pager: 13 notices fit either way, under every input: equivalent.
    assert found["views.pager_type[views.view.notices_by_product:default.pager->none]"][0] == \
        "equivalent"
    # The probe was asked with equivalence's own inputs, as a visitor's query string.
    asked = [q for c in stub.calls() for q in (c.get("request") or {}).get("views") or []]
    assert any(q.get("exposed") == [["product", NO_MATCH]] for q in asked)
    monkeypatch.setenv("AI_PG_SITE_DRIVER", "sqlite")
    _rc, embedded, _err = mutate(cli, *argv)
    assert statuses(embedded) == found
