"""The real agent CLIs, driven offline by the scripted model server against embedded beds.

``agent_clis`` installs the pinned CLIs (tests/support/agent_clis.py) into the cache once per
session, or skips every test that needs them with the reason (no node/npm, npm unreachable).
``cli_bed`` is a provisioned kb_docs + canvas_home bed whose PATH finds the CLIs; ``drive``
runs ``apg run TASK --agent=NAME`` in-process against a fresh scripted server and returns what
happened.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import pytest
from cli_kit import FIXTURES, RUN_TIMEOUT_S, TASK, Drive, Driven, provider_env

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.cli import run as run_cli
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from support.agent_clis import AgentClis, cache_dir, ensure
from support.model_server import ScriptedModelServer, Step


@pytest.fixture(scope="session")
def agent_clis() -> AgentClis:
    clis = ensure(cache_dir())
    if clis.missing:
        pytest.skip(f"real agent CLIs unavailable: {clis.missing}")
    return clis


@pytest.fixture
def cli_bed(fixtures_bed: Path, agent_clis: AgentClis, monkeypatch: pytest.MonkeyPatch) -> Path:
    provision(fixtures_bed, list(FIXTURES), EmbeddedSite(fixtures_bed))
    monkeypatch.setenv("PATH", f"{agent_clis.bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("AI_PG_NO_IMPORT", "1")
    return fixtures_bed


@pytest.fixture
def drive(cli_bed: Path, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> Drive:
    def run(agent: str, script: Sequence[Step], *extra: str,
            env: dict[str, str] | None = None) -> Driven:
        with ScriptedModelServer(script, timeout_s=RUN_TIMEOUT_S) as server:
            for name, value in {**provider_env(agent, server.url), **(env or {})}.items():
                monkeypatch.setenv(name, value)
            capsys.readouterr()
            rc = run_cli.main(["--approot", str(cli_bed), TASK, f"--agent={agent}", "--json",
                               f"--timeout={RUN_TIMEOUT_S}", *extra])
            captured = capsys.readouterr()
        record = json.loads(captured.out)
        run_dir = cli_bed / ".ai-proving-ground" / "runs" / record["run_id"]
        return Driven(rc, captured.err, record, run_dir, server)

    return run
