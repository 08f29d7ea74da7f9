"""Sessions for ai_proving_ground: each is thin; the logic lives in the package.

The supported Pythons are 3.11, 3.12 and 3.13, found by name: on PATH as ``pythonX.Y``, or
installed by pyenv or uv without being on PATH. `tests` and every other session run once, on the
oldest found (so `make test` costs one suite run, as CI's time budget needs); `tests-matrix` runs
the suite on each one found. With none of them, every session fails (APG_NO_PYTHON): a missing
interpreter is an error, never a skip.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True

SUPPORTED = ("3.11", "3.12", "3.13")
_SHIMS = Path(__file__).resolve().parent / ".nox" / "_interpreters"


def _works(executable: str, version: str) -> bool:
    # A pyenv shim is on PATH for every installed version but fails for those not selected.
    probe = f"import sys; raise SystemExit(sys.version_info[:2] != {tuple(map(int, version.split('.')))})"
    try:
        return subprocess.run([executable, "-c", probe], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _candidates(version: str, path: str, pyenv_root: str) -> list[str]:
    found = [shutil.which(f"python{version}", path=path) or ""]
    found += sorted(glob.glob(f"{pyenv_root}/versions/{version}.*/bin/python{version}"), reverse=True)
    uv = shutil.which("uv", path=path)
    if uv:
        done = subprocess.run([uv, "python", "find", version], capture_output=True, text=True, check=False)
        found.append(done.stdout.strip() if done.returncode == 0 else "")
    return [c for c in found if c]


def available_pythons(path: str, pyenv_root: str, shims: Path) -> list[str]:
    """The supported versions found here by name (PATH, pyenv, uv). Those not on PATH by their
    usual name ``pythonX.Y`` are linked into ``shims``, for the caller to put first on PATH, so
    that nox finds them. nox's own interpreter does not count: the venv nox runs in is no
    interpreter a user installed."""
    available = []
    for version in SUPPORTED:
        usable = next((c for c in _candidates(version, path, pyenv_root)
                       if _works(c, version)), None)
        if usable is None:
            continue
        available.append(version)
        if usable != shutil.which(f"python{version}", path=path):
            shims.mkdir(parents=True, exist_ok=True)
            link = shims / f"python{version}"
            link.unlink(missing_ok=True)
            link.symlink_to(usable)
    return available


FOUND = available_pythons(
    os.environ.get("PATH", ""), os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv"), _SHIMS)
if _SHIMS.is_dir():
    os.environ["PATH"] = f"{_SHIMS}{os.pathsep}{os.environ.get('PATH', '')}"
# None found: the sessions get no venv (python=False) and fail in _need_python. Declaring the
# versions for nox to miss is not enough: nox finds its own interpreter by version even off PATH
# (through python-discovery, as 2026.10 does), and would run them there.
PYTHON: str | bool = FOUND[0] if FOUND else False
TEST_PYTHONS: list[str] | bool = FOUND or False


def _need_python(session: nox.Session) -> None:
    if not FOUND:
        session.error(f"APG_NO_PYTHON none of Python {', '.join(SUPPORTED)} found (pythonX.Y on "
                      "PATH, pyenv or uv): install one")


def _install(session: nox.Session, *extras: str, also: tuple[str, ...] = ()) -> None:
    """The project (with ``extras``) and ``also`` into the session's venv, then `pip check`:
    every nox venv must hold a consistent set of packages."""
    _need_python(session)
    spec = f".[{','.join(extras)}]" if extras else "."
    session.install("-e", spec, *also)
    session.run("python", "-m", "pip", "check")


# lint too: tests/test_dependencies.py reads what every declared dependency provides.
TEST_EXTRAS = ("test", "lint")


@nox.session(python=PYTHON, default=True)
def tests(session: nox.Session) -> None:
    """Run the whole pytest suite (bats wrappers included) on the oldest supported Python found."""
    # ray here only: tests/campaigns/test_ray_executor.py runs in CI on one module-scoped
    # cluster (tens of seconds); the matrix skips it, saying the extra is absent.
    _install(session, *TEST_EXTRAS, "ray")
    session.run("pytest", *session.posargs)


@nox.session(name="tests-matrix", python=TEST_PYTHONS, default=False)
def tests_matrix(session: nox.Session) -> None:
    """Run the whole pytest suite on every supported Python found."""
    _install(session, *TEST_EXTRAS)
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON, default=True)
def lint(session: nox.Session) -> None:
    """Lint with ruff and type-check with mypy."""
    _install(session, "lint")
    session.run("ruff", "check", "scripts", "tests", "noxfile.py")
    session.run("mypy", *session.posargs)


# every-eval-ever needs Python 3.12 or newer and brings pandas, duckdb and matplotlib: it gets venvs
# of its own. PyPI has no 0.2.2 release; 0.2.3rc1 bundles the 0.2.2 schema and models unchanged.
# On a machine with only 3.11 the session says so and skips; .ci/run fails on a skipped session.
EEE_PYTHON = next((v for v in FOUND if v in ("3.12", "3.13")), PYTHON)
EEE_RELEASES = {"0.2.2": "0.2.3rc1", "0.3.0": "0.3.0"}  # schema version -> package release
ENVELOPE_TESTS = ["tests/tasks/test_demo.py", "tests/tasks/test_grade.py",
                  "tests/tasks/test_results.py", "tests/tasks/test_end_to_end.py"]


@nox.session(python=EEE_PYTHON, default=True)
@nox.parametrize("release", list(EEE_RELEASES.values()), ids=list(EEE_RELEASES))
def eee(session: nox.Session, release: str) -> None:
    """Check the demo's and the tests' envelopes with the official every_eval_ever package."""
    _need_python(session)
    if EEE_PYTHON not in ("3.12", "3.13"):
        session.skip("every-eval-ever needs Python 3.12 or newer: install python3.12 (or 3.13)")
    _install(session, also=("pytest>=8", f"every-eval-ever=={release}"))
    session.run("pytest", "-p", "no:cacheprovider", f"--official-eee={release}", *ENVELOPE_TESTS,
                *session.posargs)


@nox.session(python=PYTHON, default=False)
def fuzz(session: nox.Session) -> None:
    """Fuzz the loaders and `apg site` for longer: random, 2,000 examples a target (make test
    runs a short fixed-seed pass of the same targets inside the tests session)."""
    _install(session, "test")
    session.run("pytest", "tests/fuzz", "-p", "no:cacheprovider", "--hypothesis-profile=fuzz-long",
                *session.posargs)


@nox.session(python=PYTHON, default=False)
def demo(session: nox.Session) -> None:
    """Create an embedded bed and run the main job end to end."""
    _install(session)
    session.run("python", "-m", "ai_proving_ground.demo", *session.posargs)


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Print speed numbers and ratios and write them to build/bench.json."""
    _install(session, "ray")  # the Ray part (bench.ray_campaign); skipped, saying so, without it
    session.run("python", "-m", "ai_proving_ground.bench", *session.posargs)


def _apg(session: nox.Session, command: str) -> None:
    _install(session)
    session.run("apg", command, *session.posargs)


@nox.session(python=PYTHON, default=False)
def provision(session: nox.Session) -> None:
    """Apply the base recipe and fixtures to a bed and capture its baseline."""
    _apg(session, "provision")


@nox.session(python=PYTHON, default=False)
def reset(session: nox.Session) -> None:
    """Restore a bed's baseline for its fixture set."""
    _apg(session, "reset")


@nox.session(python=PYTHON, default=False)
def doctor(session: nox.Session) -> None:
    """Print the doctor's JSON verdict for a bed."""
    _apg(session, "doctor")


@nox.session(name="fixture-export", python=PYTHON, default=False)
def fixture_export(session: nox.Session) -> None:
    """Export a fixture's config, content and facts from a live source site."""
    _apg(session, "fixture-export")


@nox.session(python=PYTHON, default=False)
def escrow(session: nox.Session) -> None:
    """Save a set's baseline, tag bundle and the verifier outside the project."""
    _apg(session, "escrow")


@nox.session(python=PYTHON, default=False)
def verify(session: nox.Session) -> None:
    """Check a bed against its escrow with the escrowed stdlib-only verifier."""
    _apg(session, "verify")


@nox.session(python=PYTHON, default=False)
def run(session: nox.Session) -> None:
    """Hand a task to an agent adapter and record the attempt (never grades)."""
    _apg(session, "run")


@nox.session(python=PYTHON, default=False)
def grade(session: nox.Session) -> None:
    """Grade a task on a bed's live state and print its every_eval_ever envelope."""
    _apg(session, "grade")


@nox.session(python=PYTHON, default=False)
def campaign(session: nox.Session) -> None:
    """Run a campaign spec (many attempts, seeded order) or report on a campaign directory."""
    _apg(session, "campaign")


@nox.session(name="task-cards", python=PYTHON, default=False)
def task_cards(session: nox.Session) -> None:
    """Write docs/tasks/<task>.md for every shipped task (a test fails when one is stale)."""
    _install(session)
    session.run("apg", "task", "card", "--write", "docs/tasks", *session.posargs)


@nox.session(python=PYTHON, default=False)
def mutate(session: nox.Session) -> None:
    """Prove every shipped task's graders (apg task mutate --all), keep the scores in
    docs/tasks/mutation-scores.json and write the cards again. Not a default session: it grades
    every mutant of every task, so CI runs it only for dv01 (in the tests). ``-- --ddev-bed DIR``
    proves them on that provisioned DDEV bed instead and records nothing: the cards keep the
    embedded site's scores."""
    _install(session)
    if any(arg == "--ddev-bed" or arg.startswith("--ddev-bed=") for arg in session.posargs):
        session.run("apg", "task", "mutate", "--all", *session.posargs)
        return
    # The cards are written even when a score is under the threshold: they show it.
    session.run("apg", "task", "mutate", "--all", "--record-score", *session.posargs,
                success_codes=[0, 1])
    session.run("apg", "task", "card", "--write", "docs/tasks")
