"""Shell completion: `eval "$(apg completion bash)"` completes commands, subcommands and options
in a real bash, read from the parsers' own --help."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ai_proving_ground.cli.completion import candidates
from ai_proving_ground.cli.main import COMMANDS

MODULES = {name: module for name, (module, _) in COMMANDS.items()}
APG = Path(sys.executable).parent / "apg"


@pytest.mark.parametrize(("words", "expected"), [
    ([""], sorted(COMMANDS)),
    (["pro"], ["provision"]),
    (["--v"], ["--version"]),
    (["-"], ["--help", "--version", "-V"]),
    (["site", "config:g"], ["config:get"]),
    (["run", "--ag"], ["--agent"]),
    (["site", "config:get", "--f"], ["--fields", "--format"]),
    (["campaign", ""], ["regrade", "report", "resume", "run", "validate"]),
    (["run", "--r"], []),  # run's help names grade's --run in prose: not an option of run
    (["completion", ""], ["bash", "zsh"]),
    (["no-such-command", ""], []),
])
def test_candidates(words: list[str], expected: list[str]) -> None:
    assert candidates(words, MODULES) == expected


def test_every_command_completes_its_own_options() -> None:
    for name in COMMANDS:
        options = candidates([name, "--"], MODULES)
        assert "--help" in options, name


def _bash_complete(words: list[str], line: str) -> list[str]:
    """Run the printed completion function in bash as bash would call it for ``line``."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash not found")
    script = subprocess.run([str(APG), "completion", "bash"], capture_output=True, text=True,
                            check=True).stdout
    quoted = " ".join(f"'{w}'" for w in words)
    probe = (f'{script}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; '
             f'COMP_LINE="{line}"; COMP_POINT=${{#COMP_LINE}}; _apg_complete; '
             'printf "%s\\n" "${COMPREPLY[@]}"')
    env = {**os.environ, "PATH": f"{APG.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([bash, "--norc", "-c", probe], capture_output=True, text=True,
                          check=True, env=env)
    return [line for line in done.stdout.splitlines() if line]


def test_bash_completes_a_command() -> None:
    assert _bash_complete(["apg", "provi"], "apg provi") == ["provision"]


def test_bash_completes_after_the_colon_it_splits_at() -> None:
    # bash splits config:g into config, :, g (COMP_WORDBREAKS holds ':').
    assert _bash_complete(["apg", "site", "config", ":", "g"], "apg site config:g") == ["get"]


def test_completion_needs_a_known_shell() -> None:
    done = subprocess.run([str(APG), "completion", "fish"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("APG_USAGE")
