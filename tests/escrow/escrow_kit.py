"""Helpers shared by the escrow tests: the verifier as a process, its output, and escrowing."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground.baselines.store import Baseline
from ai_proving_ground.escrow import capture as escrow_module
from ai_proving_ground.fixtures import DEFAULT_FIXTURES, load_set
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.settings import Settings

VERIFIER = PROJECT_ROOT / "scripts" / "escrow_verify.py"
HOST_VERIFY = PROJECT_ROOT / "ddev" / "commands" / "host" / "ai-eval-verify"
ENV_PREFIXES = ("AI_PG_", "GIT_")
# The ``apg`` fixture of tests/conftest.py: ``apg(*argv)`` -> CliResult(rc, out, err).
ApgRunner = Callable[..., Any]
ADAPTER = ("#!/usr/bin/env bash\n## Description: prints the prompt\n## Credentials: none\n"
           'cat "$APG_PROMPT_FILE"\n')


def clean_environ(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(ENV_PREFIXES)}
    env.update(extra)
    return env


@dataclass
class Escrowed:
    """A bed of its own, its escrow set and how to run the verifier on them."""

    bed: Path
    root: Path
    set_dir: Path
    key: str
    empty: Path

    @property
    def baseline(self) -> Baseline:
        return Baseline.of(self.bed, self.key, Settings.from_environ())

    @property
    def tag(self) -> str:
        # The tag's name needs no baseline directory (an attack may have made that a link).
        return Baseline(self.bed, self.key, Settings.from_environ().baseline_ref).tag

    def verify(self, *args: str, python: str = sys.executable, copy: Path | None = None,
               selection: list[str] | None = None, **env: str) -> Result:
        """Run ``python -I <copy> BED SET ARGS`` from an empty directory; with ``selection``
        (fixture names, possibly none) the set is chosen from escrow metadata instead."""
        script = copy or self.set_dir / "escrow_verify.py"
        target = [str(self.set_dir)] if selection is None else selection
        done = subprocess.run([python, "-I", str(script), str(self.bed), *target, *args],
                              cwd=self.empty, capture_output=True, text=True, timeout=60,
                              env=clean_environ(AI_PG_ESCROW_DIR=str(self.root), **env), check=False)
        return Result(done.returncode, done.stdout, done.stderr)


@dataclass
class Result:
    rc: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.err.splitlines()

    @property
    def findings(self) -> list[str]:
        """Every reported problem: all lines but OK, RESTORED and SELECTED."""
        quiet = ("APG_ESCROW_OK ", "APG_ESCROW_RESTORED ", "APG_ESCROW_SELECTED ")
        return [line for line in self.lines if not line.startswith(quiet)]


def make_escrow(bed: Path, root: Path, empty: Path, names: list[str] | None = None) -> Escrowed:
    names = names or list(DEFAULT_FIXTURES)
    with contextlib.redirect_stderr(io.StringIO()):
        set_dir = escrow_module.escrow(bed, names, root=root, settings=Settings.from_environ())
    key = load_set(names, bed, settings=Settings.from_environ()).key
    return Escrowed(bed=bed, root=root, set_dir=set_dir, key=key, empty=empty)




def reprovisioned(bed: Path, settings: Settings | None = None) -> str:
    """New trusted state, as a recapture leaves it: a new commit, the tag on it, and the baseline
    metadata recording it (escrow refuses a tag moved off the recorded commit). Its commit."""
    from dataclasses import replace

    from ai_proving_ground.baselines.store import read_metadata
    from ai_proving_ground.baselines.tree import create_tag
    from ai_proving_ground.gitutil import git
    from ai_proving_ground.records import write_record

    settings = settings or Settings.from_environ()
    baseline = Baseline.of(bed, load_set(list(DEFAULT_FIXTURES), bed, settings=settings).key,
                           settings)
    git(bed, ["commit", "--allow-empty", "-q", "-m", "new trusted state"])
    commit = create_tag(bed, baseline.tag)
    write_record(baseline.metadata, replace(read_metadata(baseline), commit=commit))
    return commit
