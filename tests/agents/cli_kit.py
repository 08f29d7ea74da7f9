"""What the real-CLI tests share: the task, one driven run and how to grade it."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.cli import grade as grade_cli
from support.model_server import ScriptedModelServer

TASK = "dv01_view_build"
FIXTURES = ["kb_docs", "canvas_home"]
# A CLI that hangs must fail the test, not the suite: apg run's own limit, far above a real run.
RUN_TIMEOUT_S = 240


@dataclass
class Driven:
    """One ``apg run`` of a real CLI against a scripted server."""

    rc: int
    err: str
    record: dict[str, Any]
    run_dir: Path
    server: ScriptedModelServer

    def grade(self, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
        capsys.readouterr()
        rc = grade_cli.main(["--approot", str(self.record["approot"]), TASK,
                             f"--run={self.record['run_id']}"])
        captured = capsys.readouterr()
        assert rc == 0, captured.err
        envelope: dict[str, Any] = json.loads(captured.out)
        return envelope


Drive = Callable[..., Driven]


def provider_env(agent: str, url: str) -> dict[str, str]:
    """What a user sets to point each CLI at a model server, and a key that is not a secret."""
    if agent == "claude-code":
        return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "scripted-dummy-key"}
    return {"OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "scripted-dummy-key"}


def bwrap_works() -> bool:
    """bwrap is installed and can make the namespaces these tests use."""
    if shutil.which("bwrap") is None:
        return False
    done = subprocess.run(["bwrap", "--bind", "/", "/", "--dev", "/dev", "--unshare-pid",
                           "--proc", "/proc", "true"], capture_output=True)
    return done.returncode == 0


NEEDS_BWRAP = ("needs bwrap (Debian package bubblewrap) able to make mount and PID namespaces")
