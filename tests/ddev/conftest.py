"""Fixtures for the ddev driver's tests: a stub ``ddev`` first on PATH, and a project for it."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from ddev_stub import STUB_SOURCE, Cli, Stub, fresh_site_state, new_project

from ai_proving_ground.sites.ddev import DdevSite


@pytest.fixture
def approot(make_approot: Callable[..., Path]) -> Path:
    return make_approot("site", "recipes")


@pytest.fixture
def stub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stub]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "ddev"
    script.write_text(f"#!{sys.executable}\n" + STUB_SOURCE.read_text(encoding="utf-8"))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    state = Stub(tmp_path)
    settings = {
        "APG_STUB_DDEV_SCENARIO": str(state.scenario),
        "APG_STUB_DDEV_LOG": str(state.log),
        "APG_STUB_DDEV_LIB": str(Path(__file__).resolve().parent),
    }
    (bin_dir / "ddev-stub.json").write_text(json.dumps(settings))
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    yield state


@pytest.fixture
def ddev_site(approot: Path, stub: Stub) -> DdevSite:
    return DdevSite(approot)


@pytest.fixture
def bed(tmp_path: Path, stub: Stub, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A DDEV project as `ddev config --project-type=drupal10` leaves it, under git."""
    approot = new_project(tmp_path / "bed")
    state = tmp_path / "site-state.json"
    state.write_text(json.dumps(fresh_site_state()))
    stub.use_site(state)
    monkeypatch.setenv("AI_PG_SITE_DRIVER", "ddev")
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "escrow"))
    # A DDEV bed's baselines and records default to the operator's HOME, outside the project.
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "t")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "t@t")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "t")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "t@t")
    return approot


@pytest.fixture
def cli(capfd: pytest.CaptureFixture[str]) -> Cli:
    # capfd, not capsys: the adapter and the escrowed verifier are child processes.
    def call(main: Callable[[Sequence[str]], int], *argv: str) -> tuple[int, str, str]:
        capfd.readouterr()
        rc = main(list(argv))
        out, err = capfd.readouterr()
        return rc, out, err

    return call
