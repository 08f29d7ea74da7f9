"""How long the escrow verifier takes beside ``sha256sum`` over the same files, in the same run.

``verify_benchmark(workdir)`` builds a provisioned bed whose fixture has ``nodes`` content files
(the judging tree then holds them, the grader package, the datasets and the recipes), escrows it,
and times a whole verifier process (``python3 -I escrow_verify.py BED SET``: interpreter start,
escrow integrity, baseline files, one git call for the tag, the judging tree) against one
``sha256sum`` process over every file the verifier reads. Best of ``repeat`` wall times each.
The interpreter is the one a harness is told to use, ``/usr/bin/python3`` (3.9 or newer), else
the current one: a virtualenv's start-up (its site-packages .pth files) is not the verifier's.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.bed import init_bed
from ai_proving_ground.bench.fixture import write_bench_fixture
from ai_proving_ground.escrow.capture import escrow
from ai_proving_ground.gitutil import git
from ai_proving_ground.settings import Settings

DEFAULT_NODES = 10_000


def files_read(set_dir: Path) -> list[str]:
    """Every regular file the verifier hashes: escrow copies, bed baseline files, judging files."""
    data = json.loads((set_dir / "escrow.json").read_text(encoding="utf-8"))
    paths = [str(set_dir / relative) for relative in sorted(data["escrowed"])]
    baseline = data["baseline"]
    paths += [os.path.join(baseline["dir"], name) for name, record in sorted(baseline["files"].items())
              if not record.get("absent")]
    roots = {root["label"]: root["path"] for root in data["judging"]["roots"]}
    for key, entry in sorted(data["judging"]["files"].items()):
        if entry["kind"] != "file":
            continue
        label = next(lbl for lbl in roots if key == lbl or key.startswith(lbl + "/"))
        paths.append(roots[label] + key[len(label):])
    return paths


def _batches(paths: list[str]) -> list[list[str]]:
    """Argument lists that fit the kernel's limit (one batch unless the tree is huge)."""
    limit = max(1 << 16, os.sysconf("SC_ARG_MAX") // 2 - 4096)
    batches: list[list[str]] = [[]]
    used = 0
    for path in paths:
        size = len(os.fsencode(path)) + 9
        if batches[-1] and used + size > limit:
            batches.append([])
            used = 0
        batches[-1].append(path)
        used += size
    return batches


def trusted_python() -> str:
    system = "/usr/bin/python3"
    if os.access(system, os.X_OK):
        probe = subprocess.run([system, "-I", "-c", "import sys; print(sys.version_info >= (3, 9))"],
                               capture_output=True, text=True, check=False)
        if probe.stdout.strip() == "True":
            return system
    return sys.executable


def _time(command_sets: list[list[str]]) -> float:
    start = time.perf_counter()
    for command in command_sets:
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stderr.decode(errors='replace')[-500:]}")
    return time.perf_counter() - start


def verify_benchmark(workdir: Path, nodes: int = DEFAULT_NODES, repeat: int = 5) -> dict[str, Any]:
    """verify_s, sha256sum_s (None without sha256sum) and verify_ratio, plus what was hashed."""
    workdir.mkdir(parents=True, exist_ok=True)
    fixture_root = workdir / "escrow-bench-fixtures"
    approot = workdir / "escrow-bench-bed"
    for leftover in (fixture_root, approot, workdir / "escrow-bench-escrow"):
        shutil.rmtree(leftover, ignore_errors=True)
    name = write_bench_fixture(fixture_root, nodes)
    settings = Settings(fixture_path=(str(fixture_root),))
    with contextlib.redirect_stderr(io.StringIO()):
        site = init_bed(approot)
        git(approot, ["commit", "--allow-empty", "-q", "-m", "bench"])
        provision(approot, [name], site, settings)
        set_dir = escrow(approot, [name], root=workdir / "escrow-bench-escrow", settings=settings)
    paths = files_read(set_dir)
    python = trusted_python()
    verify_command = [python, "-I", str(set_dir / "escrow_verify.py"), str(approot), str(set_dir)]
    sha256sum = shutil.which("sha256sum")
    hash_commands = [[sha256sum, "--", *batch] for batch in _batches(paths)] if sha256sum else []
    verify_s = sha_s = float("inf")
    for _ in range(repeat):
        verify_s = min(verify_s, _time([verify_command]))
        if hash_commands:
            sha_s = min(sha_s, _time(hash_commands))
    has_sha = bool(hash_commands)
    return {
        "nodes": nodes,
        "python": python,
        "files": len(paths),
        "bytes": sum(os.path.getsize(p) for p in paths),
        "verify_s": round(verify_s, 4),
        "sha256sum_s": round(sha_s, 4) if has_sha else None,
        "verify_ratio": round(verify_s / sha_s, 2) if has_sha and sha_s else None,
    }


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="apg-escrow-bench-") as tmp:
        print(json.dumps(verify_benchmark(Path(tmp)), indent=2))
