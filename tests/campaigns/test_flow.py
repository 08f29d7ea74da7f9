"""The campaign as a flow: six honest outcomes whose report totals equal the runner's summary,
two campaigns side by side in one process, which children an attempt spawns, hostile adapters
that reach for the escrow and the dataset, and a killed runner that leaves no agent behind."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from campaign_kit import attempts, reference_steps, run_campaign, write_spec

from ai_proving_ground import proc
from ai_proving_ground.campaigns.attempt import AttemptRun
from ai_proving_ground.campaigns.records import CampaignFiles, read_setup
from ai_proving_ground.campaigns.report import build_report, summary_line
from ai_proving_ground.campaigns.runner import RunnerOptions
from ai_proving_ground.campaigns.runner import run_campaign as run_in_process
from ai_proving_ground.cli.campaign import site_step
from ai_proving_ground.keeper import descendants
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.sandbox import confine
from ai_proving_ground.settings import Settings
from ai_proving_ground.yamldump import dumps
from ai_proving_ground.yamlio import load_yaml
from proc_kit import alive, wait_until_dead

BUILD_TASKS = PROJECT_ROOT / "datasets" / "build_tasks.yml"


def spec_body(template: Path, agents: list[str], **extra: Any) -> dict[str, Any]:
    return {"name": "flow", "dataset": "build_tasks", "tasks": ["dv01_view_build"],
            "arms": {"plain": {}, "solved": {"setup": reference_steps()}}, "agents": agents,
            "repeats": 1, "seed": 7, "jobs": 2, "bed": str(template), **extra}


def test_six_outcomes_and_the_report_totals_equal_the_runner_summary(
        apg: Any, tmp_path: Path, template: Path) -> None:
    spec = write_spec(tmp_path / "spec.yml", spec_body(
        template, ["nop", "hangs", "tamperer", "exit3", "exit127"], agent_timeout_s=1))
    out = tmp_path / "out"
    result = run_campaign(apg, spec, out)
    outcomes = {(r["arm"], r["agent"]): r["outcome"] for r in attempts(out)}
    assert outcomes == {
        ("plain", "nop"): "fail", ("solved", "nop"): "pass",
        ("plain", "hangs"): "timeout", ("solved", "hangs"): "timeout",
        ("plain", "tamperer"): "tampered", ("solved", "tamperer"): "tampered",
        ("plain", "exit3"): "no_attempt", ("solved", "exit3"): "no_attempt",
        ("plain", "exit127"): "infra_error", ("solved", "exit127"): "infra_error"}
    [done] = re.findall(r"^APG_CAMPAIGN_DONE (.*); records in ", result.err, re.MULTILINE)
    report = build_report(out)
    assert done == summary_line(report["totals"])
    assert done == ("10 planned: 1 pass, 1 fail, 2 timeout, 2 tampered, 2 no_attempt, "
                    "2 infra_error, 0 missing")
    assert report["totals"]["judged"] == 8 and report["warnings"] == []
    plain = [row for row in report["arms"] if row["arm"] == "plain"]  # one row per agent
    assert sum(r["k"] for r in plain) == 0 and sum(r["n"] for r in plain) == 4
    assert sum(r["infra_errors"] for r in plain) == 1


def test_two_campaigns_with_their_own_settings_run_in_one_process_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each campaign has its own fixture path (one fixture name, two contents) and baseline
    directory; the process environment points somewhere else entirely and is never read."""
    trap = tmp_path / "trap"
    monkeypatch.setenv("AI_PG_BASELINE_DIR", str(trap / "baselines"))
    monkeypatch.setenv("AI_PG_FIXTURE_PATH", str(trap / "fixtures"))
    results: dict[str, Any] = {}

    def campaign(name: str, version: int) -> None:
        root = tmp_path / name
        uuid = f"{version:04d}aaaa-0000-4000-8000-00000000000{version}"
        write_note_fixture(root / "fixtures", name, version, uuid)
        dataset = root / "tasks.yml"
        dataset.write_text(json.dumps({"dataset": f"notes_{name}", "version": 1, "tasks": [{
            "id": "n01", "prompt": "Leave the note alone.", "fixtures": ["note"],
            "checks": [{"type": "entity_exists", "uuid": uuid, "label": f"Note {name}"}]}]}))
        spec = write_spec(root / "spec.yml", {
            "name": name, "dataset": str(dataset), "tasks": ["n01"],
            "arms": {"a": {}, "b": {}}, "agents": ["nop"], "repeats": 1, "seed": 1, "jobs": 1})
        settings = Settings(fixture_path=(str(root / "fixtures"),),
                            baseline_dir=str(root / "caller-baselines"))
        results[name] = run_in_process(RunnerOptions(
            spec_path=spec, out=root / "out", beds=root / "beds", settings=settings,
            site_step=site_step))

    threads = [threading.Thread(target=campaign, args=(name, version))
               for name, version in (("alpha", 1), ("beta", 2))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert {name: r.exit_code for name, r in results.items()} == {"alpha": 0, "beta": 0}
    tags = set()
    for name in ("alpha", "beta"):
        records = attempts(tmp_path / name / "out")
        assert [r["outcome"] for r in records] == ["pass", "pass"], records
        setup = read_setup(CampaignFiles(tmp_path / name / "out")).as_json()
        tags.add(setup["tag"])
        assert all(Path(j["bed"]).is_relative_to(tmp_path / name / "beds") for j in setup["jobs"])
    assert len(tags) == 2  # two fixture sets: each campaign resolved its own fixture path
    # Runs and baselines stay with their beds, whatever a caller's baseline directory says.
    assert not trap.exists() and not (tmp_path / "alpha" / "caller-baselines").exists()


def write_note_fixture(root: Path, campaign: str, version: int, uuid: str) -> None:
    """``fixture_note``: a content type and one node whose title names the campaign."""
    fixture = root / "fixture_note"
    for folder in ("config", "manifest", "content/node"):
        (fixture / folder).mkdir(parents=True)
    (fixture / "recipe.yml").write_text(dumps({"name": "note", "install": ["node"]}))
    (fixture / "config" / "node.type.note_doc.yml").write_text(
        dumps({"type": "note_doc", "name": "note_doc"}))
    (fixture / "content" / "node" / f"{uuid}.yml").write_text(dumps({
        "_meta": {"version": "1.0", "entity_type": "node", "uuid": uuid, "bundle": "note_doc"},
        "default": {"title": [{"value": f"Note {campaign}"}]}}))
    (fixture / "manifest" / "fragment.yml").write_text(dumps({
        "name": "note", "version": version,
        "owns": {"config": ["node.type.note_"], "content_namespace": uuid[:8]},
        "export": {"config": ["node.type.note_doc"],
                   "content": [{"entity_type": "node", "bundle": "note_doc"}]},
        "facts": {"modules": ["node"], "config": ["node.type.note_doc"],
                  "counts": {"node": {"note_doc": 1}},
                  "content": [{"uuid": uuid, "entity_type": "node", "bundle": "note_doc",
                               "label": f"Note {campaign}", "status": True}]}}))


HIDDEN_FILE = "web/modules/custom/hidden_probe/probe.txt"
# The hidden verifier's own command: it is the verifier stage (a test suite, say), so it stays a
# process; the patch it reads was applied in-process.
HIDDEN_COMMAND = [sys.executable, "-c",
                  f"import sys; sys.exit(open({HIDDEN_FILE!r}).read() != 'probe\\n')"]


def with_shipped_patches(directory: Path) -> None:
    """The shipped tasks' own hidden-verifier patches beside a copy of their dataset (a dataset
    naming a missing patch is refused as it loads)."""
    shutil.copytree(BUILD_TASKS.parent / "hidden", directory / "hidden", dirs_exist_ok=True)


def hidden_dataset(directory: Path) -> Path:
    """build_tasks with dv01 given a hidden verifier: a patch that adds a file and a command."""
    with_shipped_patches(directory)
    patch = directory / "hidden" / "dv01.patch"
    patch.write_text(f"diff --git a/{HIDDEN_FILE} b/{HIDDEN_FILE}\nnew file mode 100644\n"
                     f"--- /dev/null\n+++ b/{HIDDEN_FILE}\n@@ -0,0 +1 @@\n+probe\n",
                     encoding="utf-8")
    data = load_yaml(BUILD_TASKS)
    for task in data["tasks"]:
        if task["id"] == "dv01_view_build":
            task["hidden_verifier"] = {"patch": "hidden/dv01.patch", "commands": [HIDDEN_COMMAND]}
    dataset = directory / "tasks.yml"
    dataset.write_text(json.dumps(data), encoding="utf-8")
    return dataset


@pytest.mark.parametrize("with_hidden", [False, True], ids=["public", "hidden-verifier"])
def test_an_attempt_spawns_only_the_adapter_and_the_escrowed_verifier(
        tmp_path: Path, template: Path, monkeypatch: pytest.MonkeyPatch, with_hidden: bool) -> None:
    """Every child an attempt starts, counted at the one place children start (Popen): git
    (reset, the model's diff) and the sandbox's probe run once per bed or process, before.
    A hidden verifier adds only its own declared commands: its patch is applied, its snapshot
    taken and its residue checked in-process (no git)."""
    spawned: list[list[str]] = []
    in_attempt = threading.local()
    real_popen, real_run = subprocess.Popen.__init__, AttemptRun.run

    def record(self: Any, args: Any, *rest: Any, **kwargs: Any) -> None:
        if getattr(in_attempt, "on", False):
            spawned.append([str(a) for a in args])
        real_popen(self, args, *rest, **kwargs)

    def attempt(self: AttemptRun) -> Any:
        in_attempt.on = True
        try:
            return real_run(self)
        finally:
            in_attempt.on = False

    body = {**spec_body(template, ["nop"]), "jobs": 1}
    if with_hidden:
        body["dataset"] = str(hidden_dataset(tmp_path / "data"))
    spec = write_spec(tmp_path / "spec.yml", body)
    options = RunnerOptions(spec_path=spec, out=tmp_path / "out", beds=tmp_path / "beds",
                            site_step=site_step)
    monkeypatch.setattr(subprocess.Popen, "__init__", record)
    monkeypatch.setattr(AttemptRun, "run", attempt)
    confine._bwrap_here.cache_clear()  # as in a fresh process: the probe is still to be made
    result = run_in_process(options)
    monkeypatch.undo()
    assert result.exit_code == 0 and result.counts["pass"] == 1
    kinds: dict[str, list[list[str]]] = {}
    for argv in spawned:
        if argv[:4] == [sys.executable, "-I", "-S", str(proc.KEEPER)] and \
                argv[6:] == HIDDEN_COMMAND:
            kind = "hidden"
        elif argv[:4] == [sys.executable, "-I", "-S", str(proc.KEEPER)]:
            kind = "adapter"
            command = unwrapped(argv[6:])
            assert command == [str(template / ".ddev" / "agents" / "nop")] or \
                command[0].endswith("/ddev/agents/nop")
        elif argv[:3] == [sys.executable, "-I", "-S"] and argv[3].endswith("/escrow_verify.pyc"):
            kind = "verifier"  # its bytecode, compiled when the job's bed was escrowed
        else:
            kind = Path(argv[0]).name  # git, bwrap (its probe), anything else
        kinds.setdefault(kind, []).append(argv)
    expected = {"adapter", "verifier", *(["hidden"] if with_hidden else [])}
    assert set(kinds) == expected, {k: v for k, v in kinds.items() if k not in expected}
    assert len(kinds["adapter"]) == 2  # one per attempt
    # before and after each attempt; the job's escrow is made in-process
    assert len(kinds["verifier"]) == 4
    if with_hidden:
        assert len(kinds["hidden"]) == 2  # its one command, once per attempt
        hidden = [json.loads(p.read_text("utf-8"))
                  for p in sorted((tmp_path / "out").glob("runs/*/hidden.json"))]
        # The plain arm's nop builds nothing but the hidden command only reads its own file.
        assert [h["status"] for h in hidden] == ["pass", "pass"], hidden
        assert all(h["restore_warnings"] == [] for h in hidden), hidden


def unwrapped(command: list[str]) -> list[str]:
    """The adapter's argv inside the sandbox wrapper (bwrap, or the Landlock exec wrapper)."""
    landlock = [sys.executable, "-P", "-m", "ai_proving_ground.sandbox.landlock"]
    if Path(command[0]).name == "bwrap" or command[:4] == landlock:
        return command[command.index("--") + 1:]
    return command


@pytest.mark.parametrize("confined", [True, False], ids=["sandboxed", "unconfined"])
def test_a_hostile_adapter_that_reaches_the_escrow_and_the_dataset_never_passes(
        apg: Any, tmp_path: Path, template: Path, confined: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """It overwrites the escrowed verifier (wherever it found it: here it is told) and replaces
    the dataset with one whose checks always pass; nothing of it may count as a pass. Confined,
    the sandbox refuses the attack first; unconfined (opted out), it lands and is detected."""
    if not confined:
        monkeypatch.setenv("AI_PG_SANDBOX", "none")
        monkeypatch.setenv("AI_PG_ALLOW_UNCONFINED", "1")
    dataset = tmp_path / "data" / "tasks.yml"
    dataset.parent.mkdir()
    dataset.write_bytes(BUILD_TASKS.read_bytes())
    with_shipped_patches(dataset.parent)
    cheat = load_yaml(BUILD_TASKS)
    for task in cheat["tasks"]:
        task["checks"] = [{"type": "module_enabled", "module": "node"}]
    (tmp_path / "cheat.yml").write_text(json.dumps(cheat))
    out = tmp_path / "out"
    env = {"APG_ARM_ESCROW": str(out / "escrow"), "APG_ARM_DATASET": str(dataset),
           "APG_ARM_CHEAT": str(tmp_path / "cheat.yml")}
    spec = write_spec(tmp_path / "spec.yml", {
        **spec_body(template, ["hostile"]), "dataset": str(dataset), "jobs": 1,
        "arms": {"a": {"agent_env": env}, "b": {"agent_env": env}}})
    run_campaign(apg, spec, out)
    first, second = attempts(out)
    assert build_report(out)["totals"]["pass"] == 0
    if confined:
        for record in (first, second):
            assert record["outcome"] in {"tampered", "fail", "no_attempt"}, record
        assert dataset.read_bytes() == BUILD_TASKS.read_bytes()
        return
    assert first["outcome"] == "tampered"
    assert "escrow:escrow_verify.py changed" in first["reason"]
    # The dataset it rewrote is not the one the campaign loaded: nothing more is graded on it.
    assert second["outcome"] == "infra_error"
    assert "APG_CAMPAIGN_DATASET_CHANGED" in second["reason"]


def test_sigkill_of_the_runner_leaves_no_adapter_alive(tmp_path: Path, template: Path) -> None:
    """The adapter says it started in its bed (the sandbox lets it write nowhere else, and its
    PIDs are its namespace's): the runner's descendants, seen from here, must all die with it."""
    spec = write_spec(tmp_path / "spec.yml", {
        **spec_body(template, ["lingers"]), "jobs": 1, "repeats": 1,
        "arms": {"a": {"agent_env": {"APG_ARM_PIDS": "lingers.pids"}}, "b": {}}})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AI_PG_", "APG_"))}
    runner = subprocess.Popen(
        [sys.executable, "-m", "ai_proving_ground.cli.main", "campaign", "run", str(spec),
         "--out", str(tmp_path / "out"), "--beds", str(tmp_path / "beds")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not list((tmp_path / "beds").glob("*/lingers.pids")) and runner.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        assert list((tmp_path / "beds").glob("*/lingers.pids")), "the adapter never started"
        # The pid file is written before the adapter's last sleep starts, and the setsid child
        # may not have exec'd sleep yet: look until both sleeps are there (or the deadline).
        while True:
            lingering = descendants(runner.pid)  # the keeper, the sandbox, the adapter, its child
            sleeping = [pid for pid in lingering if command(pid)[:1] == ["sleep"]]
            if len(sleeping) >= 2 or time.monotonic() >= deadline or runner.poll() is not None:
                break
            time.sleep(0.1)
        assert len(sleeping) >= 2 and all(alive(pid) for pid in sleeping), sleeping
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    for pid in lingering:
        assert wait_until_dead(pid), f"pid {pid} outlived the runner"


def command(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


