"""``apg task mutate`` on real beds: nop and the reference graded, every mutant applied to a
fresh reset, classified by executing it (equivalent when it behaves as the reference), scored.

The first test is the one ``make test`` relies on to prove a shipped task's graders (dv01): it
must keep its recorded score (at most the 0.95 target) and the reference must pass, nop fail.
A new operator or new fixture data can add mutants dv01 does not kill: record the scores again
(``nox -s mutate``) in the same change, so the card says so.
"""

from __future__ import annotations

import copy
import json
import shlex
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mutation_kit import dv01, write_dataset

from ai_proving_ground.mutation import registry
from ai_proving_ground.mutation.registry import Context, Mutant
from ai_proving_ground.mutation.result import DEFAULT_THRESHOLD
from ai_proving_ground.mutation.state import Writes
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.records import problems

DV01 = "dv01_view_build"
SCORES = PROJECT_ROOT / "docs" / "tasks" / "mutation-scores.json"


def report(result: Any) -> dict[str, Any]:
    assert result.rc in (0, 1), result.err
    data: dict[str, Any] = json.loads(result.out)
    assert problems(data, "mutation_report") == []
    return data


def statuses(data: dict[str, Any]) -> dict[str, str]:
    return {m["name"]: m["status"] for m in data["mutants"]}


def test_dv01_keeps_its_score(apg: Any) -> None:
    recorded = json.loads(SCORES.read_text(encoding="utf-8"))["tasks"][DV01]["score"]
    threshold = min(DEFAULT_THRESHOLD, recorded)
    result = apg("task", "mutate", DV01, "--json", "--threshold", str(threshold))
    data = report(result)
    assert result.rc == 0, result.err
    assert (data["reference"]["verdict"], data["nop"]["verdict"]) == ("pass", "fail")
    assert data["score"] >= threshold and data["ok"] is True
    assert f"APG_MUTATE_OK {DV01}: score" in result.err
    known = registry.operators()
    for mutant in data["mutants"]:
        assert mutant["operator"] in known and mutant["name"].startswith(mutant["operator"] + "[")
    # The mutants the prompt's words name are all there: filters, sorts, pager, route, status.
    found = {m["operator"] for m in data["mutants"]}
    assert {"views.filter_dropped", "views.sort_removed", "views.pager_size", "views.path",
            "views.display_status", "outside.config_changed"} <= found


def test_weak_checks_let_wrong_builds_survive(apg: Any, tmp_path: Path) -> None:
    task = dv01()
    task["checks"] = [{"id": "view-exists", "type": "config_exists", "name": "views.view.kb_billing"}]
    dataset = write_dataset(tmp_path / "weak.yml", task)
    result = apg("task", "mutate", DV01, "--dataset", str(dataset), "--json",
                 "--operator", "views.sort_direction", "--operator", "views.filter_dropped")
    data = report(result)
    assert result.rc == 1
    found = statuses(data)
    assert found["views.sort_direction[views.view.kb_billing:default.sorts.field_kb_weight_value]"] \
        == "survived"
    section = "views.filter_dropped[views.view.kb_billing:default.filters.field_kb_section_value]"
    assert found[section] == "survived"
    assert data["score"] == 0.0
    assert "APG_MUTATE_FAILED" in result.err and "surviving: views." in result.err
    lowered = apg("task", "mutate", DV01, "--dataset", str(dataset), "--threshold", "0",
                  "--operator", "views.sort_direction")
    assert lowered.rc == 0, lowered.err
    assert lowered.out.splitlines()[-1].startswith("score 0.000 (0/1 killed)")


def test_strong_checks_kill_them(apg: Any, tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "strong.yml", dv01())  # the shipped checks
    result = apg("task", "mutate", DV01, "--dataset", str(dataset), "--json",
                 "--operator", "views.sort_direction", "--operator", "views.filter_dropped")
    found = statuses(report(result))
    assert found["views.sort_direction[views.view.kb_billing:default.sorts.field_kb_weight_value]"] \
        == "killed"
    section = "views.filter_dropped[views.view.kb_billing:default.filters.field_kb_section_value]"
    assert found[section] == "killed"


@pytest.fixture
def relabel(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A test operator whose mutant renames the view: it lists what the reference lists."""

    def relabelled(context: Context) -> Iterator[Mutant]:
        name = "views.view.kb_billing"
        view = {**context.config(name), "label": "Another label"}
        yield Mutant("views.test_relabel", name, "the view's label changed",
                     Writes(config={name: view}))

    def reslashed(context: Context) -> Iterator[Mutant]:
        name = "views.view.kb_billing"
        view = copy.deepcopy(context.config(name))
        view["display"]["page_1"]["display_options"]["path"] = "/kb/billing/"  # the same page
        yield Mutant("views.test_reslash", name, "the path written with slashes",
                     Writes(config={name: view}))

    registry.operators()
    monkeypatch.setitem(registry.OPERATORS, "views.test_relabel", relabelled)
    monkeypatch.setitem(registry.OPERATORS, "views.test_reslash", reslashed)
    yield


def test_a_mutant_that_behaves_as_the_reference_is_equivalent(apg: Any, relabel: None,
                                                             tmp_path: Path) -> None:
    task = dv01()
    # A brittle check: it rejects a right build (the view under another label).
    task["checks"].append({"id": "label", "type": "config_equals", "name": "views.view.kb_billing",
                           "path": "label", "value": "Billing articles"})
    dataset = write_dataset(tmp_path / "brittle.yml", task)
    data = report(apg("task", "mutate", DV01, "--dataset", str(dataset), "--json",
                      "--operator", "views.test_relabel", "--operator", "views.path"))
    relabelled = {m["name"]: m for m in data["mutants"]}["views.test_relabel[views.view.kb_billing]"]
    # Executed the same, so not counted, whatever the checks say; its verdict shows the brittle check.
    assert (relabelled["status"], relabelled["verdict"]) == ("equivalent", "fail")
    assert relabelled["failed_checks"] == ["label"]
    assert data["counts"]["equivalent"] == 1 and data["score"] == 1.0  # the path mutant, killed


def test_the_same_page_served_is_equivalent_however_the_path_is_written(apg: Any,
                                                                        relabel: None) -> None:
    data = report(apg("task", "mutate", DV01, "--json", "--operator", "views.test_reslash",
                      "--operator", "views.path"))
    found = statuses(data)
    assert found["views.test_reslash[views.view.kb_billing]"] == "equivalent"
    assert found["views.path[views.view.kb_billing:page_1]"] == "killed"


def test_a_build_the_site_refuses_is_stillborn(apg: Any) -> None:
    data = report(apg("task", "mutate", "cv01_footer_heading", "--json",
                      "--operator", "canvas.input_dropped"))
    dropped = {m["name"]: m for m in data["mutants"]}
    text = dropped["canvas.input_dropped[canvas.page_region.olivero.footer:sdc.apg.heading"
                   "@ca0a5000-c000-4000-8000-0000000000f1.text]"]
    assert text["status"] == "stillborn" and "APG_CANVAS_INVALID" in text["message"]
    assert data["counts"]["stillborn"] == 1


def test_a_nop_that_passes_fails_the_proof(apg: Any, tmp_path: Path) -> None:
    task = dv01()
    task["checks"] = [{"type": "module_enabled", "module": "node"}]
    dataset = write_dataset(tmp_path / "always.yml", task)
    result = apg("task", "mutate", DV01, "--dataset", str(dataset), "--json", "--threshold", "0",
                 "--operator", "views.path")
    data = report(result)
    assert data["nop"]["verdict"] == "pass" and data["ok"] is False and result.rc == 1


def test_a_reference_that_fails_its_checks_fails_the_proof(apg: Any, tmp_path: Path) -> None:
    task = dv01()
    rows = next(c for c in task["checks"] if c["type"] == "view_rows")
    rows["rows"] = ["6b0d0c00-0000-4000-8000-000000000001"]  # not what the reference lists
    dataset = write_dataset(tmp_path / "wrong.yml", task)
    data = report(apg("task", "mutate", DV01, "--dataset", str(dataset), "--json", "--threshold",
                      "0", "--operator", "views.path"))
    assert data["reference"]["verdict"] == "fail" and data["ok"] is False


def test_a_task_that_cannot_be_proven_is_usage(apg: Any, tmp_path: Path) -> None:
    task = dv01()
    del task["reference_solution"]
    dataset = write_dataset(tmp_path / "noref.yml", task)
    result = apg("task", "mutate", DV01, "--dataset", str(dataset))
    assert result.rc == 2 and result.err.startswith("APG_MUTATE_UNPROVABLE task dv01_view_build "
                                                    "has no reference_solution")
    task["reference_solution"] = {"steps": [["config:set", "system.site", "name", "x", "--bogus"]]}
    broken = write_dataset(tmp_path / "broken.yml", task)
    failed = apg("task", "mutate", DV01, "--dataset", str(broken))
    assert failed.rc == 1 and failed.err.startswith("APG_MUTATE_REFERENCE_FAILED")
    # --all proves what it can and names what it passes over.
    del task["reference_solution"]
    proven = write_dataset(tmp_path / "some.yml", task, {**dv01(), "id": "dv01_copy"})
    some = apg("task", "mutate", "--all", "--dataset", str(proven), "--operator", "views.path")
    assert some.rc == 0, some.err
    assert "APG_MUTATE_SKIPPED task dv01_view_build has no reference_solution" in some.err
    assert "APG_MUTATE_OK dv01_copy" in some.err
    assert apg("task", "mutate").rc == 2
    assert apg("task", "mutate", DV01, "--threshold", "2").rc == 2
    assert apg("task", "mutate", "nope").rc == 2


def test_recorded_scores_reach_the_card(apg: Any, tmp_path: Path) -> None:
    task = dv01()
    dataset = write_dataset(tmp_path / "data" / "mine.yml", task)
    assert apg("task", "mutate", DV01, "--dataset", str(dataset), "--record-score",
               "--operator", "views.path").rc == 2  # a partial score is never recorded
    result = apg("task", "mutate", "--all", "--dataset", str(dataset), "--record-score")
    assert result.rc in (0, 1), result.err
    scores = json.loads((tmp_path / "data" / "mine.mutation-scores.json").read_text())
    assert problems(scores, "mutation_scores") == []
    entry = scores["tasks"][DV01]
    card = apg("task", "card", DV01, "--dataset", str(dataset))
    assert f"{entry['killed']} of {entry['counted']} non-equivalent mutants killed" in card.out
    assert "earlier version" not in card.out
    task["prompt"] += " Thank you."
    folder = tmp_path / "data"
    shutil.copy(folder / "mine.mutation-scores.json", folder / "changed.mutation-scores.json")
    changed = write_dataset(tmp_path / "data" / "changed.yml", task)
    again = apg("task", "card", DV01, "--dataset", str(changed))
    assert "Measured on an earlier version of this task" in again.out


# A hidden command that reads the saved view through the bed's site command line: its sort
# must be lightest weight first.
SORT_CHECK = """
import json, os, shlex, subprocess, sys
site = shlex.split(os.environ["APG_SITE"])
done = subprocess.run([*site, "--approot", os.environ["APG_APPROOT"], "config:get",
                       "views.view.kb_billing", "--format=json"], capture_output=True, text=True)
view = json.loads(done.stdout)
sorts = view["display"]["default"]["display_options"]["sorts"]
sys.exit(0 if [s.get("order") for s in sorts.values()] == ["ASC"] else 1)
"""


def test_the_hidden_verifier_takes_part_in_killing(apg: Any, tmp_path: Path) -> None:
    task = dv01()
    task["checks"] = [{"id": "view-exists", "type": "config_exists", "name": "views.view.kb_billing"}]
    (tmp_path / "probe.patch").write_text(
        "diff --git a/hidden-probe.txt b/hidden-probe.txt\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/hidden-probe.txt\n@@ -0,0 +1 @@\n+probe\n", encoding="utf-8")
    task["hidden_verifier"] = {"patch": "probe.patch",
                               "commands": [shlex.join([sys.executable, "-c", SORT_CHECK])]}
    dataset = write_dataset(tmp_path / "hidden.yml", task)
    data = report(apg("task", "mutate", DV01, "--dataset", str(dataset), "--json",
                      "--operator", "views.sort_direction", "--operator", "views.path"))
    assert data["reference"]["verdict"] == "pass"
    found = {m["name"]: m for m in data["mutants"]}
    reversed_sort = found["views.sort_direction[views.view.kb_billing:default.sorts.field_kb_weight_value]"]
    # The public check passes it; the hidden verifier does not.
    assert (reversed_sort["status"], reversed_sort["failed_checks"]) == ("killed", ["hidden-verifier"])
    assert found["views.path[views.view.kb_billing:page_1]"]["status"] == "survived"


def test_a_projects_own_fixtures_are_found(apg: Any, tmp_path: Path) -> None:
    # The shipped kb_docs copied into a project's recipes/ under another name: the temporary
    # beds find it where the project does.
    project = tmp_path / "project"
    shutil.copytree(PROJECT_ROOT / "fixtures" / "fixture_kb_docs", project / "recipes" / "fixture_mydocs")
    fragment = project / "recipes" / "fixture_mydocs" / "manifest" / "fragment.yml"
    fragment.write_text(fragment.read_text(encoding="utf-8").replace("kb_docs", "mydocs"), encoding="utf-8")
    task = dv01()
    task["fixtures"] = ["mydocs"]
    dataset = write_dataset(project / "mine.yml", task)
    result = apg("task", "mutate", DV01, "--approot", str(project), "--dataset", "mine.yml",
                 "--operator", "views.path")
    assert result.rc == 0, result.err
    assert apg("task", "mutate", DV01, "--dataset", str(dataset), "--operator", "views.path").rc == 2
