"""The DDEV host wrappers. Their behaviour is tested by escrow_wrappers.bats, which
tests/test_bats.py runs with every other bats file."""

from __future__ import annotations

import subprocess

import pytest

from ai_proving_ground.paths import PROJECT_ROOT

HOST = PROJECT_ROOT / "ddev" / "commands" / "host"


@pytest.mark.parametrize("command", ["ai-eval-escrow", "ai-eval-verify"])
def test_wrappers_are_executable_bash_with_ddev_annotations(command: str) -> None:
    path = HOST / command
    text = path.read_text()
    assert path.stat().st_mode & 0o111
    assert text.startswith("#!/usr/bin/env bash\n")
    for annotation in ("## Description: ", f"## Usage: {command} ", '## Example: "ddev '):
        assert annotation in text, annotation
    # DDEV parses a command's flags itself when it declares ## Flags:, and --help is lost.
    assert "## Flags:" not in text
    assert subprocess.run(["bash", "-n", str(path)], check=False).returncode == 0


def test_the_verify_wrapper_runs_only_escrowed_verifier_copies() -> None:
    text = (HOST / "ai-eval-verify").read_text()
    runs = [line for line in text.splitlines() if line.lstrip().startswith("exec ")]
    assert runs and all('"$python" -I' in line for line in runs)
    assert "scripts/escrow_verify.py" not in text  # never the bed's copy
