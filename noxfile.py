"""Sessions for ai_proving_ground: each is thin; the logic lives in the package."""

from __future__ import annotations

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"


def _install(session: nox.Session, *extras: str) -> None:
    spec = f".[{','.join(extras)}]" if extras else "."
    session.install("-e", spec)


@nox.session(python=PYTHON, default=True)
def tests(session: nox.Session) -> None:
    """Run the whole pytest suite (bats wrappers included)."""
    _install(session, "test")
    session.run("pytest", *session.posargs)


@nox.session(python=PYTHON, default=True)
def lint(session: nox.Session) -> None:
    """Lint with ruff and type-check with mypy."""
    _install(session, "lint")
    session.run("ruff", "check", "scripts", "tests", "noxfile.py")
    session.run("mypy", *session.posargs)


@nox.session(python=PYTHON, default=False)
def demo(session: nox.Session) -> None:
    """Create an embedded bed and run the main job end to end."""
    _install(session)
    session.run("python", "-m", "ai_proving_ground.demo", *session.posargs)


@nox.session(python=PYTHON, default=False)
def bench(session: nox.Session) -> None:
    """Print speed numbers and ratios and write them to build/bench.json."""
    _install(session)
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
