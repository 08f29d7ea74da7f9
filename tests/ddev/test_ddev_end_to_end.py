"""Issue 10's must-holds through the stub ``ddev``: from an empty DDEV project to a first grade.

The stub answers from a site model (stub_site.py) that stores field values as strings, as real
Drupal does, and runs the project's real probe code on them; everything else answers in drush's
captured shapes. Each step runs the command a user runs, in-process, with the ddev driver.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from ddev_stub import Cli, Stub

from ai_proving_ground.baselines.store import runs_dir
from ai_proving_ground.bench.fixture import write_bench_fixture
from ai_proving_ground.cli import doctor as doctor_cli
from ai_proving_ground.cli import escrow as escrow_cli
from ai_proving_ground.cli import fixture_export as export_cli
from ai_proving_ground.cli import grade as grade_cli
from ai_proving_ground.cli import provision as provision_cli
from ai_proving_ground.cli import reset as reset_cli
from ai_proving_ground.cli import run as run_cli
from ai_proving_ground.cli import verify as verify_cli
from ai_proving_ground.errors import ApgError
from ai_proving_ground.gitutil import git
from ai_proving_ground.sandbox.confine import SandboxOptions, choose_backend
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.request import read_request

pytestmark = pytest.mark.skipif(shutil.which("php") is None, reason="php not found: apt-get install php-cli")

SHIPPED = Path(__file__).parents[2] / "datasets" / "build_tasks.yml"
SHIPPED_TASKS = {task["id"]: task for task in yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))["tasks"]}
# The 12 published billing articles by weight, as dv01 lists them.
BILLING = next(c for c in SHIPPED_TASKS["dv01_view_build"]["checks"] if c["id"] == "rows-in-order")["rows"]


def runs(bed: Path) -> Path:
    """The bed's run records, where the settings put them (outside a DDEV project)."""
    return runs_dir(bed, Settings.from_environ())


def site_state(bed: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((bed.parent / "site-state.json").read_text())
    return state


def change_site(bed: Path, change: Callable[[dict[str, Any]], None]) -> None:
    state = site_state(bed)
    change(state)
    (bed.parent / "site-state.json").write_text(json.dumps(state))


def execs(stub: Stub) -> int:
    return sum(1 for command in stub.commands() if command[:1] == ["exec"])


def provision(cli: Cli, bed: Path, *names: str) -> None:
    rc, _out, err = cli(provision_cli.main, "--approot", str(bed), *names)
    assert rc == 0, err
    assert "APG_PROVISION_OK" in err


def test_provision_doctor_reset_doctor_with_string_values(bed: Path, stub: Stub, cli: Cli) -> None:
    provision(cli, bed, "kb_docs")
    stored = next(iter(site_state(bed)["entities"].values()))
    assert stored["fields"]["field_kb_weight"][0]["value"].isdigit()  # strings, as Drupal stores them

    rc, out, err = cli(doctor_cli.main, "--approot", str(bed), "kb_docs")
    assert rc == 0, out + err
    assert json.loads(out)["healthy"] is True

    change_site(bed, lambda s: s["entities"].pop(BILLING[0]))
    rc, out, _err = cli(doctor_cli.main, "--approot", str(bed), "kb_docs")
    assert rc != 0 and BILLING[0] in out

    rc, _out, err = cli(reset_cli.main, "--approot", str(bed), "kb_docs")
    assert rc == 0, err
    assert "APG_RESET_OK" in err
    rc, out, err = cli(doctor_cli.main, "--approot", str(bed), "kb_docs")
    assert rc == 0, out + err


def bench_dataset(path: Path, name: str, nodes: int) -> Path:
    """A task on the bench fixture with one check per node (its rank) and a count."""
    checks: list[dict[str, Any]] = [
        {"id": f"rank-{n}", "type": "entity_exists", "uuid": f"be0c0000-0000-4000-8000-{n:012d}",
         "label": f"Bench document {n}", "fields": {"field_bench_rank": n}}
        for n in range(1, nodes + 1)
    ]
    checks.append({"id": "count", "type": "entity_count", "entity_type": "node", "bundle": "bench_doc",
                   "equals": nodes})
    task = {"id": "bench", "prompt": "Change nothing.", "fixtures": [name], "checks": checks}
    path.write_text(json.dumps({"dataset": "bench", "version": 1, "tasks": [task]}))
    return path


@pytest.mark.parametrize("nodes", [12, 1000])
def test_the_doctor_and_grade_are_one_round_trip_each(
    bed: Path, stub: Stub, cli: Cli, nodes: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    name = write_bench_fixture(bed / "fixtures-extra", nodes)
    monkeypatch.setenv("AI_PG_FIXTURE_PATH", "fixtures-extra")
    git(bed, ["add", "-A"])
    git(bed, ["commit", "-q", "-m", "fixture"])
    provision(cli, bed, name)
    before = execs(stub)
    rc, out, err = cli(doctor_cli.main, "--approot", str(bed), name)
    assert rc == 0, out + err
    assert execs(stub) - before == 1

    dataset = str(bench_dataset(tmp_path / "bench.yml", name, nodes))  # JSON is YAML

    def graded() -> float:
        before = execs(stub)
        rc, out, err = cli(grade_cli.main, "--approot", str(bed), "bench", dataset)
        assert rc == 0, err
        assert execs(stub) - before == 1  # nodes + 1 checks, one probe request
        return float(json.loads(out)["evaluation_results"][0]["score_details"]["score"])

    assert graded() == 1.0
    last = f"be0c0000-0000-4000-8000-{nodes:012d}"
    change_site(bed, lambda s: s["entities"][last]["fields"]["field_bench_rank"][0].update(value="0"))
    assert graded() == 0.0


def attempt(cli: Cli, bed: Path, task: dict[str, Any], agent: str) -> float:
    """reset, run ``agent`` on ``task``, grade its run: the score."""
    approot = ["--approot", str(bed)]
    assert cli(reset_cli.main, *approot, *task["fixtures"])[0] == 0
    rc, out, err = cli(run_cli.main, *approot, task["id"], f"--agent={agent}", "--json")
    assert rc == 0, err
    run_id = json.loads(out)["run_id"]
    request = read_request(runs(bed) / run_id / "request.json")
    assert request.site_command[-1] == "drush"  # $APG_SITE: drush through the ddev driver
    if site_state(bed)["config"].get("views.view.kb_billing"):
        # What Drupal's Views lists for the stored view: the billing articles by weight.
        change_site(bed, lambda s: s.setdefault("views", {}).update({"kb_billing/page_1": BILLING}))
    rc, out, err = cli(grade_cli.main, *approot, task["id"], f"--run={run_id}")
    assert rc == 0, err
    return float(json.loads(out)["evaluation_results"][0]["score_details"]["score"])


@pytest.mark.parametrize("task_id", sorted(SHIPPED_TASKS))
def test_oracle_passes_and_nop_fails_every_shipped_task(
    bed: Path, stub: Stub, cli: Cli, task_id: str
) -> None:
    task = SHIPPED_TASKS[task_id]
    provision(cli, bed, *task["fixtures"])
    assert attempt(cli, bed, task, "nop") == 0.0
    assert attempt(cli, bed, task, "oracle") == 1.0
    # Every reference step went to drush in the web container (verbatim, YAML included), or,
    # for entity:update that drush lacks, to the probe there.
    verbs = [c["command"][2] for c in stub.calls() if c["command"][:2] == ["exec", "drush"]]
    for step in task["reference_solution"]["steps"]:
        assert (step[0] if step[0] not in ("entity:update", "entity:create") else "php:script") in verbs


def test_the_oracles_yaml_reaches_drush_verbatim(bed: Path, stub: Stub, cli: Cli) -> None:
    task = SHIPPED_TASKS["dv01_view_build"]
    provision(cli, bed, *task["fixtures"])
    assert attempt(cli, bed, task, "oracle") == 1.0
    sent = [c for c in stub.calls() if c["command"][:3] == ["exec", "drush", "config:set"]]
    assert len(sent) == 1
    assert sent[0]["argv"][:7] == ["exec", "--raw", "--", "bash", "-c", 'exec drush "$@"', "drush"]
    assert sent[0]["command"][3:5] == ["views.view.kb_billing", "?"]
    assert sent[0]["command"][5].startswith("{id: kb_billing")


def test_the_oracles_entity_update_is_one_probe_request(bed: Path, stub: Stub, cli: Cli) -> None:
    task = SHIPPED_TASKS["cv02_front_page_card"]
    provision(cli, bed, *task["fixtures"])
    assert attempt(cli, bed, task, "oracle") == 1.0
    (step,) = task["reference_solution"]["steps"]
    updates = [c["request"]["entity_update"] for c in stub.calls()
               if (c.get("request") or {}).get("entity_update")]
    assert updates == [{"entity_type": step[1], "target": step[2], "values": json.loads(step[4])}]


def use_sandbox(monkeypatch: pytest.MonkeyPatch, sandbox: str) -> None:
    """``none``: run unconfined, deliberately; ``auto``: the machine's sandbox, else skip."""
    if sandbox == "none":
        monkeypatch.setenv("AI_PG_SANDBOX", "none")
        monkeypatch.setenv("AI_PG_ALLOW_UNCONFINED", "1")
        return
    try:
        choose_backend(SandboxOptions())
    except ApgError as exc:
        pytest.skip(f"needs a sandbox: {exc}")


@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_a_confined_adapter_reaches_the_site_through_the_broker_an_unconfined_one_runs_ddev(
    bed: Path, stub: Stub, cli: Cli, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    use_sandbox(monkeypatch, sandbox)
    provision(cli, bed, "kb_docs", "canvas_home")
    rc, out, err = cli(run_cli.main, "--approot", str(bed), "dv01_view_build", "--agent=oracle", "--json")
    assert rc == 0, err
    record = json.loads(out)
    run_dir = runs(bed) / record["run_id"]
    assert json.loads((run_dir / "run.json").read_text())["sandbox"] == record["sandbox"]
    brokered = record["sandbox"].get("site_broker")
    if sandbox == "none":
        assert record["sandbox"]["backend"] == "none"
        assert brokered is None  # unconfined, the oracle ran ddev itself
    else:
        assert record["sandbox"]["backend"] in ("bwrap", "landlock")
        assert brokered == {"socket": str(run_dir / "site.sock"), "serves": "drush",
                            "approot": str(bed), "environment_variable": "APG_SITE_BROKER"}
        assert not (run_dir / "site.sock").exists()  # the broker stopped with the adapter
    assert site_state(bed)["config"].get("views.view.kb_billing")  # the oracle's step landed


# Records what DDEV would find as its global config in the adapter's HOME.
GLOBAL_CONFIG_READER = """#!{python}
## Description: reads ~/.ddev/global_config.yaml as ddev would
## Credentials: none
import os, pathlib
seen = pathlib.Path(os.environ["HOME"], ".ddev", "global_config.yaml")
text = seen.read_text() if seen.is_file() else "absent"
pathlib.Path(os.environ["APG_RUN_DIR"], "seen-global-config").write_text(text)
"""


@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_an_unconfined_adapter_finds_ddevs_global_config_a_confined_one_never_sees_it(
    bed: Path, stub: Stub, cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, sandbox: str
) -> None:
    """Issue 10: the run's own HOME hid ~/.ddev, so an agent's own ddev started blind."""
    operator = tmp_path / "operator"
    (operator / ".ddev").mkdir(parents=True)
    (operator / ".ddev" / "global_config.yaml").write_text("instrumentation_opt_in: false\n")
    monkeypatch.setenv("HOME", str(operator))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    use_sandbox(monkeypatch, sandbox)
    provision(cli, bed, "kb_docs", "canvas_home")
    adapter = bed / ".ddev" / "agents" / "global-config-reader"
    adapter.parent.mkdir(parents=True, exist_ok=True)
    adapter.write_text(GLOBAL_CONFIG_READER.format(python=sys.executable))
    adapter.chmod(0o755)
    rc, out, err = cli(run_cli.main, "--approot", str(bed), "dv01_view_build",
                       "--agent=global-config-reader", "--json")
    assert rc == 0, err
    record = json.loads(out)
    run_dir = runs(bed) / record["run_id"]
    seen = (run_dir / "work" / "seen-global-config").read_text()
    if sandbox == "none":
        assert seen == "instrumentation_opt_in: false\n"
        assert record["sandbox"]["ddev_global_config"] == str(operator / ".ddev")
    else:
        assert seen == "absent" and "ddev_global_config" not in record["sandbox"]
        assert "site_broker" in record["sandbox"]
    # The run directory keeps no way into the operator's HOME once the adapter is done.
    assert not (run_dir / "home" / ".ddev").is_symlink()
    assert not (run_dir / "home" / ".ddev").exists()


def test_grade_is_one_round_trip_and_fails_a_wrong_order(bed: Path, stub: Stub, cli: Cli) -> None:
    provision(cli, bed, "kb_docs")
    view = {
        "id": "kb_billing",
        "status": True,
        "display": {"page_1": {"display_options": {"path": "kb/billing"}}},
    }

    def wrong(state: dict[str, Any]) -> None:
        state["config"]["views.view.kb_billing"] = view
        state.setdefault("views", {})["kb_billing/page_1"] = list(reversed(BILLING))

    change_site(bed, wrong)
    before = execs(stub)
    rc, out, err = cli(grade_cli.main, "--approot", str(bed), "dv01_view_build")
    assert rc == 0, err
    envelope = json.loads(out)
    assert envelope["evaluation_results"][0]["score_details"]["score"] == 0.0
    assert execs(stub) - before == 1
    # dv01 uses kb_docs only: on a site without Canvas its envelope names a baseline that exists.
    assert '"fixtures":["kb_docs@' in envelope["eval_library"]["additional_details"]["fixture_set"]
    assert "canvas_home" not in envelope["eval_library"]["additional_details"]["fixture_set"]


def test_fixture_export_then_check_is_clean(bed: Path, stub: Stub, cli: Cli) -> None:
    provision(cli, bed, "kb_docs")
    into = bed / "recipes" / "fixture_kb_docs"
    shutil.copytree(Path(__file__).parents[2] / "fixtures" / "fixture_kb_docs", into)
    rc, out, err = cli(export_cli.main, "--approot", str(bed), "kb_docs", "--into", str(into))
    assert rc == 0, err
    rc, out, err = cli(export_cli.main, "--approot", str(bed), "kb_docs", "--into", str(into), "--check")
    assert rc == 0, out + err


def test_escrow_then_verify(bed: Path, stub: Stub, cli: Cli) -> None:
    provision(cli, bed, "kb_docs")
    rc, out, err = cli(escrow_cli.main, "--approot", str(bed), "kb_docs")
    assert rc == 0, err
    rc, out, err = cli(verify_cli.main, "--approot", str(bed), "kb_docs")
    assert rc == 0, out + err
    assert "APG_ESCROW_OK" in out + err


def test_reset_syncs_mutagen_after_restoring_host_files(bed: Path, stub: Stub, cli: Cli) -> None:
    provision(cli, bed, "kb_docs")
    stub.describe(mutagen=True)
    stub.on("mutagen", "sync")
    already = len(stub.commands())
    rc, _out, err = cli(reset_cli.main, "--approot", str(bed), "kb_docs")
    assert rc == 0, err
    verbs = [c[0] if c[0] != "exec" else c[2] for c in stub.commands()[already:]]
    imported, rebuilt = verbs.index("import-db"), verbs.index("cr")
    assert "mutagen" in verbs[imported:rebuilt]  # the restored tree reaches the container first


def test_a_copy_of_a_shipped_fixture_in_recipes_is_that_fixture(bed: Path, stub: Stub, cli: Cli) -> None:
    # Issue 10 (3): a Drupal user tracks the shipped fixture in the project's recipes/; the same
    # files are one fixture, applied from the project in place (the container sees it there).
    shutil.copytree(Path(__file__).parents[2] / "fixtures" / "fixture_kb_docs",
                    bed / "recipes" / "fixture_kb_docs")
    git(bed, ["add", "-A"])
    git(bed, ["commit", "-q", "-m", "track kb_docs"])
    provision(cli, bed, "kb_docs")
    recipes = [c["command"][3] for c in stub.calls() if c["command"][:3] == ["exec", "drush", "recipe"]]
    assert "/var/www/html/recipes/fixture_kb_docs" in recipes
    rc, out, err = cli(doctor_cli.main, "--approot", str(bed), "kb_docs")
    assert rc == 0, out + err
