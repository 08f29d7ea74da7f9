"""Adapters: the header, lookup and selection, and the claude-code and codex adapters driven
against stub CLIs (tests/tasks/stubs) that record how they were called."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.adapters import (
    AdapterHeader,
    available,
    find_adapter,
    parse_annotations,
    parse_header,
    selected_name,
)
from ai_proving_ground.tasks.dataset import resolve_task
from ai_proving_ground.tasks.run import site_command

Run = Callable[..., Any]  # the conftest ``apg`` fixture
STUBS = Path(__file__).parent / "stubs"
SHIPPED = ["claude-code", "codex", "manual", "nop", "oracle"]
TASK = "dv01_view_build"



@pytest.fixture
def approot(bed: Path) -> Path:
    return bed  # apg run refuses a directory with no site in it


@pytest.fixture
def stubs_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stub claude and codex, first on PATH (copied, so their mode bits are certain)."""
    bin_dir = tmp_path / "stub-bin"
    shutil.copytree(STUBS, bin_dir)
    for stub in bin_dir.iterdir():
        stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


def add_adapter(approot: Path, name: str, text: str, mode: int = 0o755) -> Path:
    path = approot / ".ddev" / "agents" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def the_run(approot: Path) -> tuple[Path, dict[str, Any]]:
    [run_dir] = (approot / ".ai-proving-ground" / "runs").iterdir()
    return run_dir, json.loads((run_dir / "run.json").read_text(encoding="utf-8"))


def prompt_arg(approot: Path) -> str:
    """The prompt as the adapters pass it: the task's, then the exact site command."""
    site = f"{shlex.join(site_command(approot))}"
    return (resolve_task(TASK, None, approot)[1].prompt + f"\n\nThe site command is `apg site` "
            f"(on your PATH; it runs `{site}` for the bed at {approot}).")


# ---------------------------------------------------------------------------- the header


def test_annotations_are_read_like_ddev() -> None:
    text = "\n".join([
        "#!/usr/bin/env bash",
        "## Description: first",
        "##Description: no space, ignored",
        "## Description:   \"second: with a colon\"  ",
        "## no colon here",
        "# Credentials: a plain comment",
        "echo '## Credentials: none'",
    ])
    assert parse_annotations(text) == {"Description": "second: with a colon"}


def test_credentials_last_occurrence_wins_and_quotes_are_trimmed() -> None:
    header = parse_header("## Credentials: host-shared\n## Credentials: 'none'\n")
    assert header.credentials == "none" and not header.needs_credentials


@pytest.mark.parametrize("text", ["#!/bin/sh\necho hi\n", "## Credentials: None\n",
                                  "## Credentials: bed scoped\n", "## Credentials:\n"])
def test_missing_or_unrecognised_credentials_read_as_unknown(text: str) -> None:
    header = parse_header(text)
    assert header.credentials == "unknown" and header.needs_credentials


@pytest.mark.parametrize("value", ["none", "bed-scoped", "host-shared"])
def test_recognised_credentials(value: str) -> None:
    assert parse_header(f"## Credentials: {value}\n").credentials == value


def test_env_and_interactive() -> None:
    header = parse_header("## Env: A_KEY, B ,A_KEY\n## Interactive: yes\n")
    assert header == AdapterHeader(credentials="unknown", env=("A_KEY", "B"), interactive=True)
    assert parse_header("## Interactive: no\n").interactive is False


def test_env_with_a_bad_name_is_refused() -> None:
    with pytest.raises(ApgError) as caught:
        parse_header("## Env: GOOD, not-a-name\n", where="x")
    assert caught.value.token == "APG_RUN_AGENT_INVALID" and caught.value.exit_code == 2
    assert "not-a-name" in caught.value.message


def test_shipped_headers() -> None:
    headers = {name: find_adapter(name, Path("/nonexistent")).header for name in SHIPPED}
    assert {n: h.credentials for n, h in headers.items()} == {
        "claude-code": "bed-scoped", "codex": "bed-scoped", "manual": "none", "nop": "none",
        "oracle": "none"}
    assert headers["manual"].interactive and not headers["nop"].interactive
    assert "ANTHROPIC_API_KEY" in headers["claude-code"].env
    assert "OPENAI_API_KEY" in headers["codex"].env
    assert all(h.description for h in headers.values())


# ---------------------------------------------------------------------------- lookup


def test_selection_order() -> None:
    assert selected_name(None) == "manual"
    assert selected_name(None, Settings.from_environ({"AI_PG_AGENT": ""})) == "manual"
    from_env = Settings.from_environ({"AI_PG_AGENT": "nop"})
    assert selected_name(None, from_env) == "nop"
    assert selected_name("oracle", from_env) == "oracle"


def test_real_runtimes_are_never_chosen_implicitly(approot: Path, apg: Run) -> None:
    # Even with claude-code and codex shipped and a claude CLI on PATH, no flag means manual.
    assert selected_name(None) == "manual"
    assert find_adapter(selected_name(None), approot).header.credentials == "none"


def test_bed_adapter_shadows_the_shipped_one(approot: Path) -> None:
    path = add_adapter(approot, "nop", "#!/usr/bin/env bash\n## Credentials: none\nexit 0\n")
    adapter = find_adapter("nop", approot)
    assert (adapter.path, adapter.source) == (path, "bed")
    assert find_adapter("oracle", approot).source == "shipped"


def test_unknown_adapter_lists_what_is_available(approot: Path, apg: Run) -> None:
    add_adapter(approot, "mine", "#!/usr/bin/env bash\n")
    add_adapter(approot, "not-exec", "#!/usr/bin/env bash\n", mode=0o644)
    assert available(approot) == sorted([*SHIPPED, "mine"])
    state = approot / ".ai-proving-ground"  # holds bed.json (the bed's driver) since bed init
    before = sorted(state.rglob("*")) if state.exists() else []
    rc, _, err = apg("run", TASK, "--approot", str(approot), "--agent", "ghost")
    assert rc == 2
    assert err.startswith("APG_RUN_AGENT_UNKNOWN no adapter 'ghost'")
    assert "available: claude-code, codex, manual, mine, nop, oracle" in err
    assert (sorted(state.rglob("*")) if state.exists() else []) == before  # nothing recorded


def test_adapter_that_is_not_executable(approot: Path, apg: Run) -> None:
    path = add_adapter(approot, "nop", "#!/usr/bin/env bash\n", mode=0o644)
    rc, _, err = apg("run", TASK, "--approot", str(approot), "--agent", "nop")
    assert rc == 2
    assert err.startswith("APG_RUN_AGENT_NOT_EXECUTABLE") and f"chmod +x {path}" in err


@pytest.mark.parametrize("name", ["../nop", "a/b", ".."])
def test_adapter_name_is_one_safe_component(approot: Path, apg: Run, name: str) -> None:
    rc, _, err = apg("run", TASK, "--approot", str(approot), f"--agent={name}")
    assert rc == 2 and err.startswith("APG_NAME_INVALID")


def test_bad_env_header_is_usage(approot: Path, apg: Run) -> None:
    add_adapter(approot, "typo", "#!/usr/bin/env bash\n## Credentials: none\n## Env: A B\n")
    rc, _, err = apg("run", TASK, "--approot", str(approot), "--agent", "typo")
    assert rc == 2 and err.startswith("APG_RUN_AGENT_INVALID")


# ---------------------------------------------------------------------------- claude-code


def test_claude_code_drives_claude_headless(approot: Path, apg: Run, stubs_on_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "bed-key")
    monkeypatch.setenv("OPENAI_API_KEY", "not-for-claude")
    rc, out, err = apg("run", TASK, "--approot", str(approot), "--agent", "claude-code",
                       "--model", "anthropic/claude-test-model")
    run_dir, record = the_run(approot)
    seen = json.loads((run_dir / "work" / "stub-claude.json").read_text(encoding="utf-8"))
    assert rc == 0, err
    assert seen["argv"] == ["-p", prompt_arg(approot), "--output-format", "stream-json",
                            "--verbose", "--include-partial-messages", "--strict-mcp-config",
                            "--allowedTools", "Bash(apg site:*)",
                            "--model", "claude-test-model"]
    # No MCP server from the user's or the project's configuration, nor a claude.ai connector.
    assert "ENABLE_CLAUDEAI_MCP_SERVERS" in seen["env_names"]
    assert seen["cwd"] == str(approot)
    assert seen["home"] == str(run_dir / "home")
    assert seen["api_key"] == "bed-key"
    assert "OPENAI_API_KEY" not in seen["env_names"]
    assert seen["stdin_is_tty"] is False
    transcript = (run_dir / "claude-code.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["type"] for line in transcript] == ["system", "result"]
    assert (run_dir / "stdout.log").read_text(encoding="utf-8").splitlines() == transcript
    assert "stub claude progress" in (run_dir / "stderr.log").read_text(encoding="utf-8")
    assert '"stub claude done"' in out
    assert record["adapter"]["credentials"] == "bed-scoped" and record["attempted"] is True
    assert record["preflight"]["checked"] is True


def test_claude_code_without_a_model_passes_none(approot: Path, apg: Run,
                                                 stubs_on_path: Path) -> None:
    assert apg("run", TASK, "--approot", str(approot), "--agent", "claude-code").rc == 0
    run_dir, record = the_run(approot)
    seen = json.loads((run_dir / "work" / "stub-claude.json").read_text(encoding="utf-8"))
    assert "--model" not in seen["argv"] and record["model"] is None


@pytest.mark.parametrize(("value", "expected"), [
    ('--append-system-prompt "be brief" --max-turns 5',
     ["--append-system-prompt", "be brief", "--max-turns", "5"]),
    ('["--allowedTools", "Bash(apg site config:get *)"]',
     ["--allowedTools", "Bash(apg site config:get *)"]),
])
def test_claude_code_extra_args_are_a_list(approot: Path, apg: Run, stubs_on_path: Path,
                                           monkeypatch: pytest.MonkeyPatch, value: str,
                                           expected: list[str]) -> None:
    monkeypatch.setenv("APG_CLAUDE_ARGS", value)
    assert apg("run", TASK, "--approot", str(approot), "--agent", "claude-code").rc == 0
    run_dir, _ = the_run(approot)
    seen = json.loads((run_dir / "work" / "stub-claude.json").read_text(encoding="utf-8"))
    assert seen["argv"][-len(expected):] == expected


@pytest.mark.parametrize("value", ['["--model", 3]', '--unbalanced "quote', "[not json"])
def test_claude_code_bad_extra_args_are_refused(approot: Path, apg: Run, stubs_on_path: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                value: str) -> None:
    monkeypatch.setenv("APG_CLAUDE_ARGS", value)
    rc, _, err = apg("run", TASK, "--approot", str(approot), "--agent", "claude-code")
    run_dir, record = the_run(approot)
    assert rc == 1 and record["adapter_exit_code"] == 2
    assert "APG_USAGE APG_CLAUDE_ARGS" in err and "Traceback" not in err
    assert not (run_dir / "work" / "stub-claude.json").exists()


def test_claude_code_allowed_tools_can_be_none(approot: Path, apg: Run, stubs_on_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APG_CLAUDE_ALLOWED_TOOLS", "")
    assert apg("run", TASK, "--approot", str(approot), "--agent", "claude-code").rc == 0
    run_dir, _ = the_run(approot)
    seen = json.loads((run_dir / "work" / "stub-claude.json").read_text(encoding="utf-8"))
    assert "--allowedTools" not in seen["argv"]


def test_the_agents_apg_runs_exactly_the_site_command(approot: Path, apg: Run,
                                                      stubs_on_path: Path) -> None:
    assert apg("run", TASK, "--approot", str(approot), "--agent", "claude-code").rc == 0
    run_dir, _ = the_run(approot)
    seen = json.loads((run_dir / "work" / "stub-claude.json").read_text(encoding="utf-8"))
    wrapper = run_dir / "work" / "bin" / "apg"
    entries = seen["path"].split(os.pathsep)  # (a pyenv shim may put its own dir first)
    assert entries.index(str(run_dir / "work" / "bin")) < entries.index(str(stubs_on_path))
    done = subprocess.run([str(wrapper), "site", "--help"], capture_output=True, text=True,
                          cwd="/")
    assert done.returncode == 0 and "config:set" in done.stdout
    refused = subprocess.run([str(wrapper), "grade", TASK], capture_output=True, text=True)
    assert refused.returncode == 2 and refused.stderr.startswith("APG_USAGE only 'apg site")


def test_claude_code_exits_with_the_cli_code(approot: Path, apg: Run, stubs_on_path: Path) -> None:
    rc, _, err = apg("run", TASK, "--approot", str(approot), "--agent", "claude-code",
                     "--model", "stub-exit-5")
    _, record = the_run(approot)
    assert rc == 1 and "adapter 'claude-code' exited 5" in err
    assert (record["adapter_exit_code"], record["attempted"]) == (5, False)


def test_claude_code_without_the_cli(approot: Path, apg: Run,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    if shutil.which("claude"):
        pytest.skip("a real claude CLI is installed in /usr/bin or /bin")
    rc, _, err = apg("run", TASK, "--approot", str(approot), "--agent", "claude-code")
    _, record = the_run(approot)
    assert rc == 1
    assert "npm install -g @anthropic-ai/claude-code" in err
    assert record["adapter_exit_code"] == 127


def test_claude_code_is_refused_when_the_bed_shares_credentials(
        approot: Path, apg: Run, stubs_on_path: Path) -> None:
    (approot / ".ddev").mkdir()
    (approot / ".ddev" / "docker-compose.claude.yaml").write_text(
        "services:\n  web:\n    volumes: ['~/.claude:/home/.claude']\n", encoding="utf-8")
    rc, _, err = apg("run", TASK, "--approot", str(approot), "--agent", "claude-code")
    run_dir, record = the_run(approot)
    assert rc == 1 and "APG_RUN_CRED_REFUSED adapter 'claude-code'" in err
    assert not (run_dir / "work" / "stub-claude.json").exists()
    assert record["status"] == "refused"


# ---------------------------------------------------------------------------- codex


def test_codex_drives_codex_exec(approot: Path, apg: Run, stubs_on_path: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "bed-openai-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-for-codex")
    rc, _, err = apg("run", TASK, "--approot", str(approot), "--agent", "codex",
                       "--model", "openai/gpt-test")
    run_dir, record = the_run(approot)
    seen = json.loads((run_dir / "work" / "stub-codex.json").read_text(encoding="utf-8"))
    assert rc == 0, err
    # Inside apg's bubblewrap Codex's own sandbox cannot start: the adapter leaves it to apg's.
    mode = "danger-full-access" if record["sandbox"]["backend"] == "bwrap" else "workspace-write"
    assert seen["argv"] == ["exec", "--json", "--skip-git-repo-check", "--sandbox", mode, "-c",
                            "allow_login_shell=false", "--model", "gpt-test", prompt_arg(approot)]
    assert seen["cwd"] == str(approot) and seen["home"] == str(run_dir / "home")
    assert seen["api_key"] == "bed-openai-key"
    assert "ANTHROPIC_API_KEY" not in seen["env_names"]
    transcript = (run_dir / "codex.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["type"] for line in transcript] == ["thread.started", "turn.completed"]
    assert "stub codex progress" in err
    # The record keeps the envelope's developer/model id; the CLI got the bare name.
    assert record["attempted"] is True and record["model"] == "openai/gpt-test"


def test_codex_without_a_model_and_with_extra_args(approot: Path, apg: Run, stubs_on_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APG_CODEX_ARGS", '["-c", "model_reasoning_effort=\\"low\\""]')
    monkeypatch.setenv("APG_CODEX_SANDBOX", "danger-full-access")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert apg("run", TASK, "--approot", str(approot), "--agent", "codex").rc == 0
    run_dir, _ = the_run(approot)
    seen = json.loads((run_dir / "work" / "stub-codex.json").read_text(encoding="utf-8"))
    assert seen["argv"] == [
        "exec", "--json", "--skip-git-repo-check", "--sandbox", "danger-full-access", "-c",
        "allow_login_shell=false",
        "-c", "model_provider=apg", "-c", 'model_providers.apg.name="OPENAI_BASE_URL"',
        "-c", 'model_providers.apg.base_url="http://127.0.0.1:9/v1"',
        "-c", "model_providers.apg.wire_api=responses",
        "-c", "model_providers.apg.env_key=OPENAI_API_KEY",
        "-c", 'model_reasoning_effort="low"', prompt_arg(approot)]
    # CODEX_HOME and TMPDIR: one fresh directory outside the bed, gone afterwards.
    codex_home, tmpdir = Path(seen["codex_home"]), Path(seen["tmpdir"])
    assert codex_home.parent == tmpdir.parent and not codex_home.is_relative_to(approot)
    assert not codex_home.parent.exists()


def test_codex_exits_with_the_cli_code(approot: Path, apg: Run, stubs_on_path: Path) -> None:
    rc, _, _ = apg("run", TASK, "--approot", str(approot), "--agent", "codex",
                   "--model", "stub-exit-9")
    _, record = the_run(approot)
    assert rc == 1 and record["adapter_exit_code"] == 9


def test_codex_without_the_cli(approot: Path, apg: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    if shutil.which("codex"):
        pytest.skip("a real codex CLI is installed in /usr/bin or /bin")
    rc, _, err = apg("run", TASK, "--approot", str(approot), "--agent", "codex")
    _, record = the_run(approot)
    assert rc == 1
    assert "npm install -g @openai/codex" in err
    assert record["adapter_exit_code"] == 127


@pytest.mark.parametrize("project", ["", "shop"])
def test_the_prompt_names_the_site_command_and_on_ddev_says_it_is_drush(
        tmp_path: Path, project: str) -> None:
    """The agent on a DDEV bed is told to use its site command, not its own ddev (which a
    sandboxed agent does not have, and whose global config its HOME does not hold)."""
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Build it.", encoding="utf-8")
    env = {"PATH": os.environ["PATH"], "APG_PROMPT_FILE": str(prompt), "APG_APPROOT": "/bed",
           "APG_SITE": "/venv/bin/apg drush" if project else "/venv/bin/apg site",
           "APG_DDEV_PROJECT": project}
    common = find_adapter("claude-code", Path("/nonexistent")).path.with_name(".agent-common.bash")
    done = subprocess.run(["bash", "-c", 'source "$1" && apg_prompt', "-", str(common)],
                          env=env, capture_output=True, text=True, check=True)
    said = "Build it.\n\nThe site command is `apg site` (on your PATH; it runs "
    if not project:
        assert done.stdout == said + "`/venv/bin/apg site` for the bed at /bed)."
        return
    assert done.stdout == (said + "`/venv/bin/apg drush` for the bed at /bed). This is the DDEV "
                           "project shop: `apg site ARGS` runs `drush ARGS` in its web container. "
                           "Use it for every site command, not `ddev drush` or `docker` (inside "
                           "the agent sandbox there are none).")
