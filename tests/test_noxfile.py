"""The noxfile runs the tests on the supported Pythons this machine has, and never skips to green.

The noxfile is copied into a temporary directory (it links interpreters found off PATH into
``.nox/_interpreters`` beside itself) and run with a PATH that holds only the interpreters a
test chooses.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import nox.registry
import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
CURRENT = f"{sys.version_info.major}.{sys.version_info.minor}"
REAL_PYTHON = os.path.realpath(sys.executable)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(CHECKOUT / "noxfile.py", tmp_path / "noxfile.py")
    (tmp_path / "bin").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path


def _env(project: Path) -> dict[str, str]:
    return {"PATH": str(project / "bin"), "HOME": str(project / "home"),
            "PYENV_ROOT": str(project / "no-pyenv")}


def _load(project: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    for name, value in _env(project).items():
        monkeypatch.setenv(name, value)
    # The copy registers its sessions again: give it a registry of its own.
    monkeypatch.setattr(nox.registry, "_REGISTRY", {})
    spec = importlib.util.spec_from_file_location("apg_noxfile_under_test", project / "noxfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_only_the_pythons_found_get_a_tests_session(project: Path) -> None:
    # The one interpreter on PATH is the running one, under its usual name pythonX.Y.
    (project / "bin" / f"python{CURRENT}").symlink_to(REAL_PYTHON)
    listed = subprocess.run([sys.executable, "-m", "nox", "-f", str(project / "noxfile.py"),
                             "--list", "--json"], cwd=project, env=_env(project),
                            capture_output=True, text=True, check=False)
    assert listed.returncode == 0, listed.stderr
    sessions = {s["session"]: s["python"] for s in json.loads(listed.stdout)}
    # make test runs the suite once, on the oldest found; the matrix session covers each one found.
    assert sessions["tests"] == CURRENT
    assert [name for name in sessions if name.startswith("tests")] == ["tests"]
    assert sessions["lint"] == CURRENT


def test_an_interpreter_off_path_is_found_under_pyenv(project: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    versions = project / "no-pyenv" / "versions" / f"{CURRENT}.99" / "bin"
    versions.mkdir(parents=True)
    (versions / f"python{CURRENT}").symlink_to(REAL_PYTHON)
    noxfile = _load(project, monkeypatch)
    assert noxfile.available_pythons(str(project / "bin"), str(project / "no-pyenv"),
                                     project / "shims") == [CURRENT]
    assert (project / "shims" / f"python{CURRENT}").resolve() == Path(REAL_PYTHON)


def test_no_supported_python_is_found_and_nox_fails_every_session(project: Path) -> None:
    # nox runs from this venv (a supported Python), but that is not an interpreter found by
    # name; PATH holds only an unsupported one and there is no pyenv.
    (project / "bin" / "python3.99").symlink_to(REAL_PYTHON)
    report = project / "report.json"
    done = subprocess.run([sys.executable, "-m", "nox", "-f", str(project / "noxfile.py"),
                           "-s", "tests", "lint", "eee", "--report", str(report)],
                          cwd=project, env=_env(project), capture_output=True, text=True, check=False)
    assert done.returncode != 0, done.stderr
    assert "APG_NO_PYTHON none of Python 3.11, 3.12, 3.13 found" in done.stderr, done.stderr
    sessions = json.loads(report.read_text())["sessions"]
    # eee runs once per every_eval_ever release; none of them skips to green either.
    assert sorted(s["name"] for s in sessions) == ["eee", "eee", "lint", "tests"], sessions
    assert {s["result"] for s in sessions} == {"aborted"}, sessions  # session.error: not skipped
    assert not (project / ".nox" / "tests").exists()  # no venv made on nox's own interpreter


def test_a_broken_pyenv_shim_is_not_an_interpreter(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shim = project / "bin" / f"python{CURRENT}"
    shim.write_text("#!/bin/sh\necho 'pyenv: python: command not found' >&2\nexit 127\n")
    shim.chmod(0o755)
    noxfile = _load(project, monkeypatch)
    assert noxfile.available_pythons(str(project / "bin"), str(project / "no-pyenv"),
                                     project / "shims") == []


def test_the_first_make_demo_says_what_its_slow_steps_do(tmp_path: Path) -> None:
    """The first `make demo` spends a minute in quiet pip installs: it says so before each."""
    make = shutil.which("make")
    if make is None:
        pytest.skip("needs make")
    planned = subprocess.run([make, "-n", "-f", str(CHECKOUT / "Makefile"), "demo",
                              f"VENV={tmp_path / 'venv'}"], capture_output=True, text=True,
                             timeout=60, check=True, cwd=tmp_path).stdout
    lines = planned.splitlines()
    first_run = next(i for i, line in enumerate(lines) if "First run: making" in line)
    assert first_run < next(i for i, line in enumerate(lines) if "-m venv" in line)
    says_install = next(i for i, line in enumerate(lines) if "nox installs apg" in line)
    assert says_install < next(i for i, line in enumerate(lines) if " -s demo" in line)
