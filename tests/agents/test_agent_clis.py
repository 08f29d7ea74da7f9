"""The installer of the pinned CLIs says why it cannot install, naming what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.agent_clis import PINS, cache_dir, ensure


def test_without_node_and_npm_it_names_them_and_the_packages(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    clis = ensure(tmp_path / "cache")
    assert clis.missing.startswith("node and npm are not on PATH")
    for package, (version, _, _) in PINS.items():
        assert f"{package}@{version}" in clis.missing
    assert not (tmp_path / "cache").exists()  # nothing was installed anywhere


def test_a_wrong_version_in_the_cache_is_not_taken(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "cache" / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    for executable in ("claude", "codex"):
        (bin_dir / executable).write_text("#!/bin/sh\necho 0.0.1\n", encoding="utf-8")
        (bin_dir / executable).chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert "@anthropic-ai/claude-code@" in ensure(tmp_path / "cache").missing


def test_the_cache_is_outside_the_repository(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    monkeypatch.delenv("AI_PG_AGENT_CLI_CACHE", raising=False)
    assert cache_dir() == Path.home() / ".cache" / "apg-agent-clis"
    monkeypatch.setenv("AI_PG_AGENT_CLI_CACHE", str(tmp_path))
    assert cache_dir() == tmp_path
