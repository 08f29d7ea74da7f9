"""What the hostile-adapter tests of the sandbox share: a bed adapter, and ``apg run`` run as its
own process (so its /proc/PID/environ holds what the test planted, as an operator's would)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.baselines.store import baseline_dir
from ai_proving_ground.sandbox import bwrap, isolate, landlock

BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(
    BWRAP is None or bwrap.probe(BWRAP) is not None,
    reason="needs bubblewrap (apt-get install bubblewrap) working on this machine")
needs_landlock = pytest.mark.skipif(
    landlock.abi_version() == 0, reason="needs Landlock (Linux 5.13+ with the landlock LSM)")
needs_landlock_namespaces = pytest.mark.skipif(
    landlock.abi_version() == 0 or isolate.available(True) is not None,
    reason="needs Landlock and namespaces (root, or unprivileged user namespaces)")
BACKENDS = [pytest.param("bwrap", marks=needs_bwrap),
            pytest.param("landlock", marks=needs_landlock_namespaces)]
RUN_TIMEOUT_S = 120


def add_adapter(approot: Path, name: str, body: str, header: str = "") -> None:
    path = approot / ".ddev" / "agents" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n## Credentials: none\n{header}{body}\n", encoding="utf-8")
    path.chmod(0o755)


def apg_process(approot: Path, agent: str, env: dict[str, str], *args: str,
                pid_file: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``apg run dv01_view_build --agent AGENT ARGS`` as a process of its own, with exactly
    ``env`` (plus PATH and a HOME); ``pid_file`` gets its PID before it starts."""
    argv = [sys.executable, "-m", "ai_proving_ground.cli.main", "run", "dv01_view_build",
            "--approot", str(approot), "--agent", agent, *args]
    full = {"PATH": os.environ["PATH"], "HOME": str(approot.parent / "operator-home"), **env}
    Path(full["HOME"]).mkdir(exist_ok=True)
    if pid_file is not None:  # exec keeps the PID the shell wrote
        argv = ["/bin/sh", "-c", f'echo $$ > "{pid_file}"; exec "$@"', "sh", *argv]
    return subprocess.run(argv, capture_output=True, text=True, env=full, timeout=RUN_TIMEOUT_S,
                          stdin=subprocess.DEVNULL, check=False)


def only_record(approot: Path) -> dict[str, Any]:
    [run_dir] = (baseline_dir(approot) / "runs").iterdir()
    record: dict[str, Any] = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    return record
