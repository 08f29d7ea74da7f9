"""Fixtures for the ddev driver's tests: a stub ``ddev`` first on PATH, and a project for it."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ddev_stub import STUB_SOURCE, Stub

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
