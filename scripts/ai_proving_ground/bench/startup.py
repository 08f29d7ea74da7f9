"""Whole-process timings: what an operator or a harness waits for when it runs ``apg``.

``apg site config:get system.site`` on an embedded bed (interpreter start-up and imports
included; real ``drush config:get`` takes about 0.23 s), and ``apg reset`` of a provisioned
default-set bed beside ``cp -a`` of that same bed, the floor any restore of a whole bed pays.
Best of ``repeat`` runs, each as wall time and as CPU time (user + system of the process and
its children, which a loaded machine disturbs far less); reset and copy are interleaved so a
burst of load hits both. ``python_start`` is the same interpreter doing nothing: the part of
every number no change to the package can remove.
The package's bytecode is compiled first, as an installed package has it: with
PYTHONDONTWRITEBYTECODE set, an editable install would otherwise compile every module per run.
"""

from __future__ import annotations

import compileall
import contextlib
import io
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.bed import init_bed
from ai_proving_ground.fixtures import DEFAULT_FIXTURES
from ai_proving_ground.paths import PACKAGE_DIR
from ai_proving_ground.tasks.site_access import apg_command


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: Sequence[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one whole process (its children included)."""
    start, cpu = time.perf_counter(), _children_cpu()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start, _children_cpu() - cpu


def _best(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return min(wall for wall, _ in runs), min(cpu for _, cpu in runs)


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 2) if denominator else None


def measure_startup(workdir: Path, repeat: int = 5) -> dict[str, Any]:
    """config_get_s; reset_process_s, copy_s and reset_copy_ratio; the same in CPU time."""
    bed = workdir / "startup-bed"
    with contextlib.redirect_stderr(io.StringIO()):
        site = init_bed(bed, DEFAULT_FIXTURES)
        provision(bed, DEFAULT_FIXTURES, site)
    compileall.compile_dir(PACKAGE_DIR, quiet=1)
    apg = apg_command()  # the way an adapter reaches it
    config_get = [*apg, "site", "--approot", str(bed), "config:get", "system.site"]
    config_get_s, config_get_cpu = _best([_run(config_get) for _ in range(repeat)])
    _, python_cpu = _best([_run([sys.executable, "-c", "pass"]) for _ in range(repeat)])
    resets, copies = [], []
    copy = workdir / "startup-copy"
    for _ in range(repeat):
        resets.append(_run([*apg, "reset", "--approot", str(bed)]))
        copies.append(_run(["cp", "-a", str(bed), str(copy)]))
        shutil.rmtree(copy)
    (reset_s, reset_cpu), (copy_s, copy_cpu) = _best(resets), _best(copies)
    return {"config_get_s": round(config_get_s, 4), "reset_process_s": round(reset_s, 4),
            "copy_s": round(copy_s, 4), "reset_copy_ratio": _ratio(reset_s, copy_s),
            "config_get_cpu_s": round(config_get_cpu, 4),
            "reset_process_cpu_s": round(reset_cpu, 4), "copy_cpu_s": round(copy_cpu, 4),
            "reset_copy_cpu_ratio": _ratio(reset_cpu, copy_cpu),
            "python_start_cpu_s": round(python_cpu, 4)}
