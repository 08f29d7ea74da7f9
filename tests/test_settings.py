"""Settings: read once from the environment at the edge, then passed down; the library never
reads AI_PG_* itself, so two beds with different settings can be driven in one process."""

from __future__ import annotations

import contextlib
import io
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.baselines.reset import reset
from ai_proving_ground.baselines.store import Baseline, baseline_dir
from ai_proving_ground.doctor import diagnose
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixtures import load_set
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings, resolve_approot
from ai_proving_ground.sites.embedded.driver import EmbeddedSite


def test_every_variable_is_read_the_way_the_commands_read_it() -> None:
    settings = Settings.from_environ({
        "AI_PG_APPROOT": "/srv/bed", "AI_PG_BASELINE_DIR": "state", "AI_PG_BASELINE_REF": "mine",
        "AI_PG_FIXTURE_PATH": "a::/abs/b", "AI_PG_FIXTURES": "kb_docs, canvas_home",
        "AI_PG_SITE_DRIVER": "ddev", "AI_PG_DATASET": "d.yml", "AI_PG_AGENT": "nop",
        "AI_PG_ORGANIZATION": "Acme", "AI_PG_ESCROW_DIR": "/escrow", "AI_PG_LOCK_TIMEOUT": "2.5",
        "AI_PG_NO_IMPORT": "1", "AI_PG_ALLOW_UNTRACKED": "1", "AI_PG_ALLOW_STALE_BASELINE": "1",
        "AI_PG_ALLOW_HOST_CREDS": "1"})
    assert settings == Settings(
        approot="/srv/bed", baseline_dir="state", baseline_ref="mine", fixture_path=("a", "/abs/b"),
        fixtures=("kb_docs", "canvas_home"), site_driver="ddev", dataset="d.yml", agent="nop",
        organization="Acme", escrow_dir="/escrow", lock_timeout="2.5", no_import=True,
        allow_untracked=True, allow_stale_baseline=True, allow_host_creds=True)
    assert settings.lock_wait_seconds == 2.5


def test_empty_means_unset_and_only_1_turns_a_switch_on() -> None:
    names = ["AI_PG_APPROOT", "AI_PG_BASELINE_DIR", "AI_PG_BASELINE_REF", "AI_PG_FIXTURE_PATH",
             "AI_PG_FIXTURES", "AI_PG_SITE_DRIVER", "AI_PG_DATASET", "AI_PG_AGENT",
             "AI_PG_ORGANIZATION", "AI_PG_ESCROW_DIR", "AI_PG_LOCK_TIMEOUT"]
    assert Settings.from_environ(dict.fromkeys(names, "")) == DEFAULT_SETTINGS
    switches = ["AI_PG_NO_IMPORT", "AI_PG_ALLOW_UNTRACKED", "AI_PG_ALLOW_STALE_BASELINE",
                "AI_PG_ALLOW_HOST_CREDS"]
    assert Settings.from_environ(dict.fromkeys(switches, "true")) == DEFAULT_SETTINGS
    assert DEFAULT_SETTINGS.lock_wait_seconds == 30.0


def test_a_bad_lock_timeout_is_a_usage_error_naming_the_variable() -> None:
    with pytest.raises(ApgError) as caught:
        _ = Settings(lock_timeout="soon").lock_wait_seconds
    assert (caught.value.token, caught.value.exit_code) == ("APG_USAGE", 2)
    assert "AI_PG_LOCK_TIMEOUT='soon'" in caught.value.message


def test_approot_comes_from_the_argument_then_the_variable_then_the_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    assert resolve_approot("a", Settings(approot="/nowhere")) == tmp_path / "a"
    assert resolve_approot(None, Settings(approot=str(tmp_path / "a"))) == tmp_path / "a"
    assert resolve_approot(None, DEFAULT_SETTINGS) == tmp_path
    with pytest.raises(ApgError) as caught:
        resolve_approot(None, Settings(approot=str(tmp_path / "missing")))
    assert caught.value.token == "APG_APPROOT_MISSING" and "(from AI_PG_APPROOT)" in caught.value.message


def test_the_library_reads_no_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_BASELINE_DIR", str(tmp_path / "from-env"))
    monkeypatch.setenv("AI_PG_BASELINE_REF", "from-env")
    assert baseline_dir(tmp_path) == tmp_path / ".ai-proving-ground"
    assert Baseline.of(tmp_path, "k").tag == "apg-baseline-k"
    assert Baseline.of(tmp_path, "k", Settings(baseline_ref="mine")).tag == "mine"


def test_two_beds_with_their_own_settings_run_in_one_process_at_once(
        fixtures_bed: Path, tmp_path: Path, copy_template: Callable[[Path, Path], Path],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # What the process environment says must not matter: each bed's settings are its own.
    monkeypatch.setenv("AI_PG_BASELINE_DIR", str(tmp_path / "from-env"))
    monkeypatch.setenv("AI_PG_BASELINE_REF", "from-env")
    second = copy_template(fixtures_bed, tmp_path / "second")
    extra = tmp_path / "extra"  # searched first for the second bed only; it holds no fixture
    extra.mkdir()
    beds = {
        fixtures_bed: Settings(baseline_dir=str(tmp_path / "baselines-1")),
        second: Settings(baseline_dir="state", baseline_ref="second-baseline",
                         fixture_path=(str(extra),)),
    }
    errors: list[BaseException] = []
    verdicts: dict[Path, bool] = {}

    def drive(bed: Path, settings: Settings) -> None:
        try:
            site = EmbeddedSite(bed)
            provision(bed, ["kb_docs", "canvas_home"], site, settings)
            outcome = reset(bed, ["kb_docs", "canvas_home"], site, settings)
            assert outcome.failures == []
            verdicts[bed] = bool(diagnose(bed, ["kb_docs", "canvas_home"], site, settings)["healthy"])
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    env_before = dict(os.environ)
    with contextlib.redirect_stderr(io.StringIO()):
        threads = [threading.Thread(target=drive, args=item) for item in beds.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
    assert errors == []
    assert verdicts == {fixtures_bed: True, second: True}
    assert dict(os.environ) == env_before
    key = load_set(["kb_docs", "canvas_home"], fixtures_bed).key
    assert Baseline(tmp_path / "baselines-1", key).dump.is_file()
    assert Baseline(second / "state", key).dump.is_file()
    assert not (fixtures_bed / ".ai-proving-ground" / f"db.{key}.dump").exists()
    assert not (second / ".ai-proving-ground" / f"db.{key}.dump").exists()
    assert not (tmp_path / "from-env").exists()
