"""Whole-process timings: what an operator or a harness waits for when it runs ``apg``.

``apg site config:get system.site`` on an embedded bed (interpreter start-up and imports
included; real ``drush config:get`` takes about 0.23 s), and ``apg reset`` of a provisioned
default-set bed beside ``cp -a`` of that same bed, the floor any restore of a whole bed pays.
Best of ``repeat`` wall times; reset and copy are interleaved so a burst of load hits both.
The package's bytecode is compiled first, as an installed package has it: with
PYTHONDONTWRITEBYTECODE set, an editable install would otherwise compile every module per run.
"""

from __future__ import annotations

import compileall
import contextlib
import io
import shutil
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.bed import init_bed
from ai_proving_ground.fixtures import DEFAULT_FIXTURES
from ai_proving_ground.paths import PACKAGE_DIR
from ai_proving_ground.tasks.site_access import apg_command


def _run(argv: Sequence[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def measure_startup(workdir: Path, repeat: int = 5) -> dict[str, Any]:
    """config_get_s; reset_process_s, copy_s and reset_copy_ratio."""
    bed = workdir / "startup-bed"
    with contextlib.redirect_stderr(io.StringIO()):
        site = init_bed(bed, DEFAULT_FIXTURES)
        provision(bed, DEFAULT_FIXTURES, site)
    compileall.compile_dir(PACKAGE_DIR, quiet=1)
    apg = apg_command()  # the way an adapter reaches it
    config_get = [*apg, "site", "--approot", str(bed), "config:get", "system.site"]
    config_get_s = min(_run(config_get) for _ in range(repeat))
    reset_times, copy_times = [], []
    copy = workdir / "startup-copy"
    for _ in range(repeat):
        reset_times.append(_run([*apg, "reset", "--approot", str(bed)]))
        copy_times.append(_run(["cp", "-a", str(bed), str(copy)]))
        shutil.rmtree(copy)
    reset_s, copy_s = min(reset_times), min(copy_times)
    return {"config_get_s": round(config_get_s, 4), "reset_process_s": round(reset_s, 4),
            "copy_s": round(copy_s, 4),
            "reset_copy_ratio": round(reset_s / copy_s, 2) if copy_s else None}
