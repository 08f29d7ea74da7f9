"""``apg run``: task resolution, the run directory and run.json, the adapter's environment and
request, the shipped manual, nop and oracle adapters, exit codes and tokens.

Most runs call the CLI in-process (the adapter is still a real subprocess); the ones that need
a terminal, no terminal or a signal run ``apg`` as a subprocess.
"""

from __future__ import annotations

import hashlib
import json
import os
import pty
import re
import shlex
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.baselines.store import runs_dir
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.dataset import load_dataset, resolve_task
from ai_proving_ground.tasks.request import read_request
from ai_proving_ground.yamldump import dumps

Run = Callable[..., Any]  # the conftest ``apg`` fixture: apg(*args) -> CliResult(rc, out, err)

RUN_ID = re.compile(r"^apg-run-\d{8}T\d{6}Z-[0-9a-f]{6}$")
RUN_FILES = ["home", "prompt.txt", "request.json", "run.json", "stderr.log", "stdout.log", "tmp",
             "work"]
PROMPT = 'Build it with $HOME, `backticks` and "quotes".\nÜnïcode, line two.\n'
SHIPPED_TASKS = ["dv01_view_build", "cv01_footer_heading", "cv02_front_page_card"]

# An adapter that records what it was given: its environment, stdin, cwd, request and run.json.
DUMP_ADAPTER = """#!/usr/bin/env python3
## Description: records its environment and request
## Credentials: none
## Env: DECLARED_VAR
import json, os, shutil, stat
run = os.environ["APG_RUN_DIR"]
st = os.fstat(0)
with open(os.path.join(run, "dump.json"), "w") as handle:
    json.dump({"env": dict(os.environ), "cwd": os.getcwd(), "stdin_rdev": st.st_rdev,
               "stdin_is_chr": stat.S_ISCHR(st.st_mode)}, handle)
shutil.copy(os.environ["APG_REQUEST_FILE"], os.path.join(run, "request-seen.json"))
shutil.copy(os.path.join(os.path.dirname(run), "run.json"), os.path.join(run, "run-seen.json"))
"""



@pytest.fixture
def task_bed(fixtures_bed: Path) -> Path:
    return fixtures_bed


@pytest.fixture
def plain(bed: Path) -> Path:
    """A bed without fixtures: enough for adapters that do not touch the site (apg run refuses a
    directory with no site in it)."""
    return bed


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "datasets" / "test_tasks.yml"
    path.parent.mkdir()
    path.write_text(dumps({"dataset": "test_tasks", "version": 3, "tasks": [
        {"id": "t_echo", "prompt": PROMPT, "fixtures": [],
         "checks": [{"id": "secret-check", "type": "config_exists", "name": "system.site"}],
         "reference_solution": {"steps": [["status"], ["config:get", "system.site"]]}},
        {"id": "t_nosolution", "prompt": "p", "fixtures": []},
        {"id": "t_badstep", "prompt": "p", "fixtures": [],
         "reference_solution": {"steps": [["no:such:command"], ["status"]]}},
    ]}), encoding="utf-8")
    return path


def add_adapter(approot: Path, name: str, body: str, header: str = "## Credentials: none",
                shebang: str = "#!/usr/bin/env bash") -> Path:
    path = approot / ".ddev" / "agents" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = body if body.startswith("#!") else f"{shebang}\n{header}\n{body}\n"
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def run_dirs(approot: Path) -> list[Path]:
    runs = runs_dir(approot, Settings.from_environ())  # a DDEV bed's lie outside it
    return sorted(runs.iterdir()) if runs.is_dir() else []


def only_run(approot: Path) -> tuple[Path, dict[str, Any]]:
    [run_dir] = run_dirs(approot)
    return run_dir, json.loads((run_dir / "run.json").read_text(encoding="utf-8"))


def run_apg(*args: str, stdin: Any = subprocess.DEVNULL, **kw: Any) -> subprocess.CompletedProcess[str]:
    """``apg`` as a real process (this interpreter), for stdin and signal behaviour."""
    return subprocess.run([sys.executable, "-m", "ai_proving_ground.cli.main", *args],
                          stdin=stdin, capture_output=True, text=True, timeout=60, **kw)


def is_utc_iso(value: str) -> bool:
    return value.endswith("Z") and datetime.fromisoformat(value).utcoffset() is not None


# ---------------------------------------------------------------------------- the record


def test_nop_attempt_records_run_json(plain: Path, dataset: Path, apg: Run) -> None:
    rc, out, err = apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
                       "--agent", "nop")
    assert rc == 0
    run_dir, record = only_run(plain)
    assert RUN_ID.match(run_dir.name)
    assert f"APG_RUN_ATTEMPTED run {run_dir.name}" in err
    assert "APG_RUN_STARTED" in err and out == ""

    data, task = resolve_task("t_echo", str(dataset), plain)
    assert record["run_id"] == run_dir.name
    assert record["status"] == "attempted"
    assert record["attempted"] is True and record["adapter_exit_code"] == 0
    assert record["task_id"] == "t_echo"
    assert record["dataset"] == {"name": "test_tasks", "path": str(dataset.resolve()),
                                 "sha256": hashlib.sha256(dataset.read_bytes()).hexdigest(),
                                 "version": 3}
    assert record["task_sha256"] == task.sha256 == data.task("t_echo").sha256
    assert record["prompt_sha256"] == hashlib.sha256(PROMPT.encode()).hexdigest()
    assert record["model"] is None
    assert record["adapter"]["name"] == "nop"
    assert record["adapter"]["credentials"] == "none"
    assert record["adapter"]["path"].endswith("ddev/agents/nop")
    assert "floor" in record["adapter"]["description"]
    assert record["preflight"] == {"checked": False, "credentials": "none", "findings": [],
                                   "refused": False, "overridden": False}
    assert is_utc_iso(record["started_at"]) and is_utc_iso(record["finished_at"])
    assert record["started_at"] <= record["finished_at"]
    # Never grades: the run directory holds the request, the prompt and transcripts only.
    assert sorted(p.name for p in run_dir.iterdir()) == RUN_FILES
    assert (run_dir / "prompt.txt").read_text(encoding="utf-8") == PROMPT


def test_json_prints_run_json_alone_and_adapter_stdout_goes_to_stderr(
        plain: Path, dataset: Path, apg: Run) -> None:
    add_adapter(plain, "talk", "echo said-on-stdout; echo said-on-stderr >&2")
    rc, out, err = apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
                       "--agent", "talk", "--json")
    _, record = only_run(plain)
    assert rc == 0
    assert json.loads(out) == record
    assert "said-on-stdout" in err and "said-on-stderr" in err
    assert "said-on-stdout" not in out


def test_run_json_says_running_while_the_adapter_runs(plain: Path, dataset: Path, apg: Run) -> None:
    add_adapter(plain, "dump", DUMP_ADAPTER)
    rc, _, _ = apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
                   "--agent", "dump")
    run_dir, final = only_run(plain)
    during = json.loads((run_dir / "work" / "run-seen.json").read_text(encoding="utf-8"))
    assert rc == 0
    assert during["status"] == "running" and during["finished_at"] is None
    assert during["attempted"] is False and during["adapter_exit_code"] is None
    assert final["status"] == "attempted"
    assert not list(run_dir.glob(".run.json.*"))  # written new-then-rename, nothing left over


def test_adapter_failure_records_no_attempt(plain: Path, dataset: Path, apg: Run) -> None:
    add_adapter(plain, "fail3", "echo partial; exit 3")
    rc, out, err = apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
                       "--agent", "fail3")
    run_dir, record = only_run(plain)
    assert rc == 1
    assert f"APG_RUN_NO_ATTEMPT run {run_dir.name}: adapter 'fail3' exited 3" in err
    assert "partial" in out
    assert (record["status"], record["attempted"], record["adapter_exit_code"]) == \
        ("no_attempt", False, 3)


def test_adapter_that_cannot_start_records_no_attempt(plain: Path, dataset: Path, apg: Run) -> None:
    path = add_adapter(plain, "noshebang", "")
    path.write_bytes(b"\x00\x01not a program\n")
    rc, _, err = apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
                     "--agent", "noshebang")
    _, record = only_run(plain)
    assert rc == 1
    assert "APG_RUN_NO_ATTEMPT adapter 'noshebang' could not start" in err
    assert (record["status"], record["attempted"], record["adapter_exit_code"]) == \
        ("no_attempt", False, None)


def test_transcripts_are_teed_and_saved_byte_for_byte(plain: Path, dataset: Path, apg: Run) -> None:
    add_adapter(plain, "talk", r"printf 'out \303\251\n\377raw\n'; printf 'err line\n' >&2")
    rc, out, err = apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
                       "--agent", "talk")
    run_dir, record = only_run(plain)
    assert rc == 0
    assert (run_dir / "stdout.log").read_bytes() == b"out \xc3\xa9\n\xffraw\n"
    assert (run_dir / "stderr.log").read_bytes() == b"err line\n"
    assert "out é\n\ufffdraw\n" in out and "err line" in err
    assert record["transcripts"] == {"stdout": "stdout.log", "stderr": "stderr.log"}


def test_model_is_recorded_and_passed(plain: Path, dataset: Path, apg: Run) -> None:
    add_adapter(plain, "dump", DUMP_ADAPTER)
    rc, _, _ = apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
                   "--agent", "dump", "--model", "acme/model-7")
    run_dir, record = only_run(plain)
    env = json.loads((run_dir / "work" / "dump.json").read_text(encoding="utf-8"))["env"]
    assert rc == 0
    assert record["model"] == "acme/model-7" and env["APG_MODEL"] == "acme/model-7"


def test_run_dir_follows_ai_pg_baseline_dir(plain: Path, dataset: Path, tmp_path: Path,
                                            apg: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_BASELINE_DIR", str(tmp_path / "elsewhere"))
    rc, _, _ = apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
                   "--agent", "nop")
    assert rc == 0
    [run_dir] = (tmp_path / "elsewhere" / "runs").iterdir()
    assert (run_dir / "run.json").is_file()
    # Only the bed's own record (its driver) stays in the bed.
    assert [p.name for p in (plain / ".ai-proving-ground").iterdir()] == ["bed.json"]


def test_run_dir_survives_reset(task_bed: Path, apg: Run) -> None:
    assert apg("provision", "--approot", str(task_bed)).rc == 0
    assert apg("run", "dv01_view_build", "--approot", str(task_bed), "--agent", "oracle").rc == 0
    run_dir, before = only_run(task_bed)
    assert apg("reset", "--approot", str(task_bed)).rc == 0
    assert "views.view.kb_billing" not in EmbeddedSite(task_bed).all_config()  # reset happened
    assert json.loads((run_dir / "run.json").read_text(encoding="utf-8")) == before


# ---------------------------------------------------------------------------- resolution


def test_unknown_task_is_usage_and_records_nothing(plain: Path, dataset: Path, apg: Run) -> None:
    rc, _, err = apg("run", "t_missing", "--approot", str(plain), "--dataset", str(dataset),
                     "--agent", "nop")
    assert rc == 2
    assert err.startswith("APG_TASK_UNKNOWN") and "t_echo" in err
    assert run_dirs(plain) == []


def test_dataset_flag_wins_over_environment(plain: Path, dataset: Path, tmp_path: Path,
                                            apg: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other.yml"
    other.write_text(dumps({"dataset": "other", "version": 1, "tasks": [
        {"id": "t_echo", "prompt": "other prompt", "fixtures": []}]}), encoding="utf-8")
    monkeypatch.setenv("AI_PG_DATASET", str(other))
    assert apg("run", "t_echo", "--approot", str(plain), "--agent", "nop").rc == 0
    assert apg("run", "t_echo", "--approot", str(plain), "--agent", "nop",
               "--dataset", str(dataset)).rc == 0
    names = [json.loads((d / "run.json").read_text())["dataset"]["name"] for d in run_dirs(plain)]
    assert sorted(names) == ["other", "test_tasks"]


def test_shipped_dataset_is_the_default(plain: Path, apg: Run) -> None:
    rc, _, _ = apg("run", "dv01_view_build", "--approot", str(plain), "--agent", "nop")
    _, record = only_run(plain)
    shipped = load_dataset(Path(record["dataset"]["path"]))
    assert rc == 0
    assert record["dataset"]["name"] == "build_tasks" == shipped.name
    assert record["dataset"]["sha256"] == shipped.sha256


def test_agent_from_environment_and_flag_wins(plain: Path, dataset: Path, apg: Run,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    add_adapter(plain, "fail3", "exit 3")
    monkeypatch.setenv("AI_PG_AGENT", "fail3")
    assert apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset)).rc == 1
    assert apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
               "--agent", "nop").rc == 0
    adapters = [json.loads((d / "run.json").read_text())["adapter"]["name"]
                for d in run_dirs(plain)]
    assert sorted(adapters) == ["fail3", "nop"]


def test_usage_errors_exit_2(plain: Path, apg: Run) -> None:
    rc, _, err = apg("run", "--approot", str(plain))
    assert rc == 2 and "APG_USAGE" in err
    rc, _, err = apg("run", "t_echo", "--approot", str(plain / "absent"), "--agent", "nop")
    assert rc == 2 and err.startswith("APG_APPROOT_MISSING")


def test_apg_lists_run(apg: Run) -> None:
    assert "  run " in apg("--help").out


# ---------------------------------------------------------------------------- environment


def test_adapter_environment_is_allow_listed(plain: Path, dataset: Path, apg: Run,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host-secret-value")
    monkeypatch.setenv("UNDECLARED_VAR", "nope")
    monkeypatch.setenv("APG_CLAUDE_ARGS", "--not-declared-here")
    monkeypatch.setenv("DECLARED_VAR", "declared-value")
    monkeypatch.setenv("APG_TASK_ID", "spoofed")  # the request wins over the host
    monkeypatch.setenv("LC_TIME", "C")
    monkeypatch.setenv("TZ", "UTC")
    add_adapter(plain, "dump", DUMP_ADAPTER)
    rc, out, err = apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
                       "--agent", "dump")
    run_dir, record = only_run(plain)
    dump = json.loads((run_dir / "work" / "dump.json").read_text(encoding="utf-8"))
    env = dump["env"]
    assert rc == 0
    assert "ANTHROPIC_API_KEY" not in env and "UNDECLARED_VAR" not in env
    assert "APG_CLAUDE_ARGS" not in env
    assert env["DECLARED_VAR"] == "declared-value"
    assert env["PATH"] == os.environ["PATH"]
    assert (env["LC_TIME"], env["TZ"]) == ("C", "UTC")
    assert env["HOME"] == str(run_dir / "home") and (run_dir / "home").is_dir()
    # apg's own: the agent's git repository is its work folder's, the bed its work tree.
    assert (env["GIT_DIR"], env["GIT_WORK_TREE"]) == (str(run_dir / "work" / "git"), str(plain))
    allowed = {"PATH", "LANG", "TERM", "TZ", "TMPDIR", "HOME", "DECLARED_VAR", "GIT_DIR",
               "GIT_WORK_TREE"}
    extra = {k for k in env if k not in allowed and not k.startswith(("LC_", "APG_"))}
    # Whatever the OS or interpreter adds on its own (PWD, SHLVL, _) is not from the host.
    assert extra <= {"PWD", "SHLVL", "_", "OLDPWD"}
    assert "sk-ant-host-secret-value" not in out + err + json.dumps(record)


def test_request_reaches_the_adapter_by_environment_and_files(
        plain: Path, dataset: Path, apg: Run, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # a DDEV bed's records go under HOME
    # A DDEV project: no embedded bed's record (which would ignore a planted .ddev/config.yaml).
    (plain / ".ai-proving-ground" / "bed.json").unlink()
    (plain / ".ddev").mkdir()
    (plain / ".ddev" / "config.yaml").write_text("name: my-bed\ntype: drupal11\n")
    add_adapter(plain, "dump", DUMP_ADAPTER)
    rc, _, _ = apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
                   "--agent", "dump")
    run_dir, record = only_run(plain)
    dump = json.loads((run_dir / "work" / "dump.json").read_text(encoding="utf-8"))
    env = dump["env"]
    request = read_request(run_dir / "work" / "request-seen.json").as_json()
    assert rc == 0
    assert env["APG_RUN_DIR"] == str(run_dir / "work") and env["APG_RUN_ID"] == run_dir.name
    assert Path(env["APG_PROMPT_FILE"]).read_text(encoding="utf-8") == PROMPT
    # A DDEV bed: the site command line is apg drush, which works there, not apg site.
    assert env["APG_SITE"].endswith(" drush") and "site" not in env["APG_SITE"].split()
    assert env["APG_REQUEST_FILE"] == str(run_dir / "request.json")
    assert (env["APG_TASK_ID"], env["APG_DATASET"], env["APG_MODEL"]) == ("t_echo", "test_tasks", "")
    assert env["APG_APPROOT"] == str(plain) and dump["cwd"] == str(plain)
    assert env["APG_DDEV_PROJECT"] == "my-bed"
    assert env["APG_ADAPTER"] == "dump"
    site = shlex.split(env["APG_SITE"])
    assert Path(site[0]).is_absolute() and site[-1] == "drush"
    assert request["run_id"] == run_dir.name and request["task_id"] == "t_echo"
    # The dataset by name and hash, never by path: the adapter cannot read it anyway.
    assert request["dataset"] == {k: v for k, v in record["dataset"].items() if k != "path"}
    assert str(dataset) not in json.dumps(request) and dataset.name not in json.dumps(request)
    assert request["task_sha256"] == record["task_sha256"]
    assert (request["model"], request["adapter"], request["approot"]) == (None, "dump", str(plain))
    assert request["site_command"] == site
    # Never the answers: no solution, no checks, for any adapter but the oracle.
    text = json.dumps(request)
    assert "reference_solution" not in request and "checks" not in request
    assert "reference_solution_file" not in request and "APG_REFERENCE_FILE" not in env
    assert "secret-check" not in text and "config:get" not in text
    # Never on stdin: a non-interactive adapter reads /dev/null.
    assert dump["stdin_is_chr"] and dump["stdin_rdev"] == os.stat("/dev/null").st_rdev


def test_ddev_project_is_empty_without_a_ddev_config(plain: Path, dataset: Path, apg: Run) -> None:
    add_adapter(plain, "dump", DUMP_ADAPTER)
    assert apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
               "--agent", "dump").rc == 0
    run_dir, _ = only_run(plain)
    env = json.loads((run_dir / "work" / "dump.json").read_text(encoding="utf-8"))["env"]
    assert env["APG_DDEV_PROJECT"] == ""


def test_only_the_oracle_is_given_the_solution_and_it_is_redacted_after(
        plain: Path, dataset: Path, apg: Run) -> None:
    add_adapter(plain, "oracle", DUMP_ADAPTER)  # a bed adapter shadowing the shipped oracle
    rc, _, _ = apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
                   "--agent", "oracle")
    run_dir, _ = only_run(plain)
    seen = read_request(run_dir / "work" / "request-seen.json").as_json()
    env = json.loads((run_dir / "work" / "dump.json").read_text(encoding="utf-8"))["env"]
    assert rc == 0
    # The solution is a file in the run directory, named by the request and the environment.
    reference = run_dir / "reference_solution.json"
    assert seen["reference_solution_file"] == env["APG_REFERENCE_FILE"] == str(reference)
    assert "checks" not in seen and "secret-check" not in json.dumps(seen)
    assert "config:get" not in json.dumps(seen)
    # Gone once the oracle exited: a later agent on this bed finds no answers.
    assert not reference.exists()
    assert "config:get" not in "".join(p.read_text(encoding="utf-8", errors="replace")
                                       for p in run_dir.rglob("*") if p.is_file()
                                       and p.name != "dump.json")


# ---------------------------------------------------------------------------- shipped adapters


@pytest.mark.parametrize("task_id", SHIPPED_TASKS)
def test_oracle_applies_each_shipped_reference_solution(task_bed: Path, task_id: str,
                                                        apg: Run) -> None:
    rc, _, err = apg("run", task_id, "--approot", str(task_bed), "--agent", "oracle")
    run_dir, record = only_run(task_bed)
    _, task = resolve_task(task_id, None, task_bed)
    assert rc == 0, err
    assert record["attempted"] is True
    steps = len(task.reference_steps)
    assert f"oracle: step {steps}/{steps}" in (run_dir / "stdout.log").read_text()


def test_oracle_leaves_the_state_its_solution_describes(task_bed: Path, apg: Run) -> None:
    assert "views.view.kb_billing" not in EmbeddedSite(task_bed).all_config()
    assert apg("run", "dv01_view_build", "--approot", str(task_bed), "--agent", "oracle").rc == 0
    view = EmbeddedSite(task_bed).all_config()["views.view.kb_billing"]
    assert view["status"] is True
    assert view["display"]["page_1"]["display_options"]["path"] == "kb/billing"


def test_oracle_stops_at_the_first_failing_step(plain: Path, dataset: Path, apg: Run) -> None:
    rc, _, err = apg("run", "t_badstep", "--approot", str(plain), "--dataset", str(dataset),
                     "--agent", "oracle")
    run_dir, record = only_run(plain)
    assert rc == 1
    assert "oracle: step 1/2 (no:such:command) failed" in err
    assert "step 2/2" not in (run_dir / "stdout.log").read_text() + err
    assert record["attempted"] is False and record["adapter_exit_code"] not in (0, None)


def test_oracle_without_a_reference_solution_records_no_attempt(
        plain: Path, dataset: Path, apg: Run) -> None:
    rc, _, err = apg("run", "t_nosolution", "--approot", str(plain), "--dataset", str(dataset),
                     "--agent", "oracle")
    assert rc == 1
    assert "has no reference solution" in err and "APG_RUN_NO_ATTEMPT" in err


def test_nop_changes_nothing(task_bed: Path, apg: Run) -> None:
    before = EmbeddedSite(task_bed).all_config()
    assert apg("run", "dv01_view_build", "--approot", str(task_bed), "--agent", "nop").rc == 0
    assert EmbeddedSite(task_bed).all_config() == before


def test_manual_is_the_default_and_without_a_terminal_records_no_attempt(
        plain: Path, dataset: Path) -> None:
    done = run_apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
                   env={k: v for k, v in os.environ.items() if k != "AI_PG_AGENT"})
    _, record = only_run(plain)
    assert done.returncode == 1
    assert PROMPT in done.stdout and str(plain) in done.stdout
    assert "no attempt recorded" in done.stderr
    assert "APG_RUN_NO_ATTEMPT" in done.stderr
    assert record["adapter"]["name"] == "manual" and record["adapter"]["credentials"] == "none"
    assert record["status"] == "no_attempt" and record["attempted"] is False


def _run_manual_on_a_terminal(plain: Path, dataset: Path, typed: bytes) -> tuple[int, str]:
    master, slave = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "ai_proving_ground.cli.main", "run", "t_echo", "--approot",
             str(plain), "--dataset", str(dataset), "--agent", "manual"],
            stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        os.write(master, typed)
        out, _ = process.communicate(timeout=60)
    finally:
        os.close(slave)
        os.close(master)
    return process.returncode, out


def test_manual_on_a_terminal_waits_for_enter_and_records_an_attempt(
        plain: Path, dataset: Path) -> None:
    rc, out = _run_manual_on_a_terminal(plain, dataset, b"\n")
    _, record = only_run(plain)
    assert rc == 0
    assert "Press Enter" in out and PROMPT in out
    assert record["attempted"] is True


def test_manual_on_a_terminal_can_record_that_nothing_was_attempted(
        plain: Path, dataset: Path) -> None:
    rc, _ = _run_manual_on_a_terminal(plain, dataset, b"skip\n")
    _, record = only_run(plain)
    assert rc == 1 and record["attempted"] is False


def test_interrupt_records_an_interrupted_run(plain: Path, dataset: Path) -> None:
    add_adapter(plain, "sleeper", "exec sleep 30")
    process = subprocess.Popen(
        [sys.executable, "-m", "ai_proving_ground.cli.main", "run", "t_echo", "--approot",
         str(plain), "--dataset", str(dataset), "--agent", "sleeper"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    deadline = time.monotonic() + 20
    while not (run_dirs(plain) and (run_dirs(plain)[0] / "stdout.log").exists()):
        assert time.monotonic() < deadline, "the adapter never started"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
    _, err = process.communicate(timeout=30)
    _, record = only_run(plain)
    assert process.returncode == 130, err
    assert "APG_INTERRUPTED" in err
    assert record["status"] == "interrupted" and record["attempted"] is False, err
    assert record["finished_at"] is not None


def test_shipped_adapters_are_executable_scripts() -> None:
    from ai_proving_ground.paths import project_dir

    agents = project_dir("ddev") / "agents"
    for name in ("manual", "nop", "oracle", "claude-code", "codex"):
        path = agents / name
        assert path.stat().st_mode & stat.S_IXUSR, name
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first in {"#!/usr/bin/env bash", "#!/usr/bin/env python3"}, name


def test_timeout_stops_the_adapter_and_everything_it_started(plain: Path, dataset: Path,
                                                             apg: Run, tmp_path: Path) -> None:
    marker = f"{60 + os.getpid() % 1000 / 1000:.3f}"  # sleep's argument names it on the host
    started_file = plain / "started"
    # The grandchild ignores SIGTERM: only the group SIGKILL stops it. In the sandbox's PID
    # namespace its $! is not a host PID, so it is found by its command line.
    add_adapter(plain, "hangs", f"(trap '' TERM; exec sleep {marker}) & touch {started_file}; "
                                "wait")
    probe = subprocess.Popen(["sleep", marker])  # the search below finds such a process
    deadline = time.monotonic() + 10
    while probe.pid not in _pids_running(["sleep", marker]):  # until it has exec'd sleep
        assert time.monotonic() < deadline, "the search never found a running sleep"
        time.sleep(0.05)
    probe.kill()
    probe.wait()
    started = time.monotonic()
    rc, _out, err = apg("run", "t_echo", "--approot", str(plain), "--dataset", str(dataset),
                        "--agent", "hangs", "--timeout", "0.5")
    assert time.monotonic() - started < 20
    assert rc == 1 and "APG_RUN_TIMED_OUT" in err, err
    _, record = only_run(plain)
    assert record["status"] == "timed_out" and record["attempted"] is False
    assert record["timeout_s"] == 0.5
    assert started_file.exists()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in _pids_running(["sleep", marker])):
        assert time.monotonic() < deadline, "the adapter's child outlived the timeout"
        time.sleep(0.05)


def _pids_running(argv: list[str]) -> list[int]:
    """Host PIDs whose command line is exactly ``argv``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")[:-1]
            except OSError:
                continue
            if [part.decode(errors="replace") for part in cmdline] == argv:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes: it no longer runs.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


def test_timeout_must_be_positive(plain: Path, apg: Run) -> None:
    rc, _out, err = apg("run", "t_echo", "--approot", str(plain), "--timeout", "0")
    assert rc == 2 and "APG_USAGE" in err
