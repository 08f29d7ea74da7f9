"""Beds and escrows for the escrow tests, and a runner for the verifier as a process.

``template`` is built once per session: ``apg bed init``, then the judging files an attack needs
(a bed-local dataset, the bed's own copy of the verifier, a host command and an agent adapter),
committed and provisioned for the default set. ``escrowed`` copies it and escrows the copy into
the test's own escrow root. ``snapshot_grader`` points escrow at a frozen copy of the package and
the project datasets: judging the live checkout would make these tests fail whenever someone
edits the package while they run (which the verifier would rightly call tampering).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from escrow_kit import ADAPTER, ENV_PREFIXES, HOST_VERIFY, VERIFIER, Escrowed, make_escrow

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.bed import init_bed
from ai_proving_ground.escrow import judging as escrow_judging
from ai_proving_ground.fixtures import DEFAULT_FIXTURES
from ai_proving_ground.gitutil import git
from ai_proving_ground.paths import PACKAGE_DIR, PROJECT_ROOT
from ai_proving_ground.sites.embedded.driver import EmbeddedSite


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith(ENV_PREFIXES):
            monkeypatch.delenv(name)
    # Never the operator's ~/.ai-proving-ground-escrow, even when a test forgets to choose.
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "default-escrow"))


@contextlib.contextmanager
def _no_apg_env() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith(ENV_PREFIXES):
                patch.delenv(name)
        yield


def _build_template(target: Path) -> None:
    init_bed(target)
    (target / "datasets").mkdir()
    (target / "datasets" / "local.yml").write_text("questions:\n  - id: local_task\n")
    (target / "scripts").mkdir()
    shutil.copy2(VERIFIER, target / "scripts" / "escrow_verify.py")
    host = target / ".ddev" / "commands" / "host"
    host.mkdir(parents=True)
    shutil.copy2(HOST_VERIFY, host / "ai-eval-verify")
    os.chmod(host / "ai-eval-verify", 0o755)
    agents = target / ".ddev" / "agents"
    agents.mkdir()
    (agents / "manual").write_text(ADAPTER)
    os.chmod(agents / "manual", 0o755)
    git(target, ["add", "-A"])
    git(target, ["commit", "--quiet", "-m", "judging files"])
    with contextlib.redirect_stderr(io.StringIO()):
        provision(target, list(DEFAULT_FIXTURES), EmbeddedSite(target))


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("escrow_template") / "bed"
    with _no_apg_env():
        _build_template(target)
    return target


@pytest.fixture(scope="session")
def frozen_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the grader package and the project datasets, as escrow would judge them."""
    root = tmp_path_factory.mktemp("frozen_project")
    shutil.copytree(PACKAGE_DIR, root / "scripts" / "ai_proving_ground",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(PROJECT_ROOT / "datasets", root / "datasets")
    shutil.copytree(PROJECT_ROOT / "ddev" / "agents", root / "ddev" / "agents", symlinks=True)
    return root


@pytest.fixture
def snapshot_grader(frozen_project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(escrow_judging, "PACKAGE_DIR", frozen_project / "scripts" / "ai_proving_ground")
    monkeypatch.setattr(escrow_judging, "PROJECT_ROOT", frozen_project)
    return frozen_project


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    path = tmp_path / "empty-cwd"
    path.mkdir()
    return path


@pytest.fixture
def bed(template: Path, tmp_path: Path) -> Path:
    target = tmp_path / "bed"
    shutil.copytree(template, target, symlinks=True)
    return target


@pytest.fixture
def escrowed(bed: Path, tmp_path: Path, empty_dir: Path, snapshot_grader: Path,
             monkeypatch: pytest.MonkeyPatch) -> Escrowed:
    root = tmp_path / "escrow"
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(root))
    return make_escrow(bed, root, empty_dir)
