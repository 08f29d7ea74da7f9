"""The fuzz tests run under the fuzz-ci profile wherever ``make test`` runs, CI included."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_CONFTEST = Path(__file__).with_name("conftest.py")
_SHOW_PROFILE = (
    "import runpy, sys; runpy.run_path(sys.argv[1]); "
    "from hypothesis import settings; print(settings.get_current_profile_name())"
)


@pytest.mark.parametrize("ci_value", ["", "true"])
def test_the_fuzz_ci_profile_is_chosen_with_and_without_a_ci_environment(ci_value: str) -> None:
    # Hypothesis picks its own "ci" profile when CI is set; that profile fails the fuzz
    # fixtures' health checks, which is how CI once failed while every local run passed.
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
    if ci_value:
        env["CI"] = ci_value
    shown = subprocess.run([sys.executable, "-c", _SHOW_PROFILE, str(_CONFTEST)], env=env,
                           capture_output=True, text=True, check=True, timeout=120)
    assert shown.stdout.strip() == "fuzz-ci", shown.stderr
