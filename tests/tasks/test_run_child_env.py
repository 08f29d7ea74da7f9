"""Commands the harness runs in a bed get an allow-listed environment, never the operator's.

A check command and a hidden verifier's command each print their whole environment; neither
may see ``AI_PG_*``, ``GIT_*``, a credential, the operator's HOME or any other operator variable.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground import proc
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks import hidden
from ai_proving_ground.tasks.checks import run_checks

DUMP = "import json, os, sys; open(sys.argv[1], 'w').write(json.dumps(dict(os.environ)))"
OPERATOR = {"AI_PG_BASELINE_DIR": "/operator/baselines", "GIT_DIR": "/operator/repo.git",
            "GIT_CONFIG_PARAMETERS": "'core.fsmonitor'='touch /tmp/pwned'",
            "APG_RUN_DIR": "/operator/run", "AWS_SECRET_ACCESS_KEY": "FAKE-SECRET",
            "ANTHROPIC_API_KEY": "FAKE-KEY", "SSH_AUTH_SOCK": "/operator/agent.sock",
            "OPERATOR_NOTE": "private", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "dumb",
            "TZ": "UTC"}
ALLOWED = {"PATH", "LANG", "LC_ALL", "TERM", "TZ", "HOME", "TMPDIR"}


@pytest.fixture
def operator_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The harness's environment as an operator's would be: settings, git, credentials."""
    home = tmp_path / "operator-home"
    home.mkdir()
    for name in list(os.environ):
        if name.startswith("LC_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    for name, value in OPERATOR.items():
        monkeypatch.setenv(name, value)
    return home


def check_own_home(env: dict[str, Any], operator_home: Path) -> None:
    assert env["HOME"] != str(operator_home) and env["TMPDIR"] != os.environ.get("TMPDIR")
    assert Path(env["HOME"]).name == "home" and Path(env["TMPDIR"]).name == "tmp"
    assert env["PATH"] == os.environ["PATH"]
    assert all(env[name] == OPERATOR[name] for name in ("LANG", "LC_ALL", "TERM", "TZ"))


def test_a_check_command_sees_only_the_allow_list(fixtures_bed: Path, tmp_path: Path,
                                                  operator_env: Path) -> None:
    dump = tmp_path / "check-env.json"
    spec = {"type": "command", "argv": [sys.executable, "-c", DUMP, str(dump)]}
    [result] = run_checks([spec], EmbeddedSite(fixtures_bed), fixtures_bed)
    assert result.as_json()["passed"] is True
    env = json.loads(dump.read_text(encoding="utf-8"))
    assert set(env) == ALLOWED, sorted(set(env) - ALLOWED)
    check_own_home(env, operator_env)
    gc.collect()
    assert not Path(env["HOME"]).parent.exists()  # its own folder went with it


def test_a_hidden_verifiers_command_sees_only_the_allow_list_and_the_request(
        fixtures_bed: Path, tmp_path: Path, operator_env: Path) -> None:
    dump = tmp_path / "hidden-env.json"
    verifier = hidden.HiddenVerifier(patch=None, patch_ref=None, timeout_s=30,
                                     commands=((sys.executable, "-c", DUMP, str(dump)),))
    scratch = tmp_path / "scratch"
    # What both callers hand it: the harness's environment minus the product's own variables.
    outcome = hidden.run_hidden(fixtures_bed, verifier, proc.child_env(os.environ), scratch,
                                ["apg", "site"])
    assert outcome.status == "pass", outcome
    env = json.loads(dump.read_text(encoding="utf-8"))
    assert set(env) == ALLOWED | {"APG_APPROOT", "APG_SITE"}, sorted(set(env) - ALLOWED)
    assert env["APG_APPROOT"] == str(fixtures_bed) and env["APG_SITE"] == "apg site"
    check_own_home(env, operator_env)
    assert Path(env["HOME"]).is_relative_to(scratch) and not (scratch / "env").exists()


def test_bed_env_is_an_allow_list_with_a_home_of_its_own(tmp_path: Path) -> None:
    host = {**OPERATOR, "PATH": "/usr/bin", "HOME": "/root", "TMPDIR": "/var/tmp", "LC_CTYPE": "C"}
    env = proc.bed_env(host, tmp_path / "own")
    assert dict(env) == {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "LC_CTYPE": "C",
                         "TERM": "dumb", "TZ": "UTC", "HOME": str(tmp_path / "own" / "home"),
                         "TMPDIR": str(tmp_path / "own" / "tmp")}
    assert (tmp_path / "own" / "home").is_dir() and (tmp_path / "own" / "tmp").is_dir()
