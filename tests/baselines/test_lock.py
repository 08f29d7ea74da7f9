"""The bed lock: one provision or reset at a time; a busy lock is refused after a bounded wait."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.baselines.locking import bed_lock

Kit = Any  # the ``kit`` fixture of tests/baselines/conftest.py

DELETED = "6b0d0c00-0000-4000-8000-000000000003"

HOLDER = """
import sys
from pathlib import Path
from ai_proving_ground.baselines.locking import bed_lock
with bed_lock(Path(sys.argv[1]), "holder"):
    print("held", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def held(kit: Kit, pbed: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the bed's lock until its stdin is closed."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(kit.baseline(pbed).lock)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    try:
        yield holder
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait()


def _release(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None
    holder.stdin.close()
    assert holder.wait(timeout=10) == 0


def test_busy_lock_refuses_reset_and_provision_then_proceeds(
        kit: Kit, pbed: Path, held: subprocess.Popen[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    kit.mutate(pbed)
    monkeypatch.setenv("AI_PG_LOCK_TIMEOUT", "0.5")
    started = time.monotonic()
    rc, _out, err = kit.run("reset", pbed)
    waited = time.monotonic() - started
    assert rc == 1 and "APG_LOCK_BUSY" in err
    assert f"{held.pid} holder" in err and "AI_PG_LOCK_TIMEOUT" in err
    assert 0.5 <= waited < 5
    # Nothing changed: the agent's work is all still there, no reset was started.
    assert not kit.node_exists(pbed, DELETED)
    assert (pbed / "config" / "sync" / "agent.settings.yml").is_file()
    assert not kit.baseline(pbed).reset_marker.exists()

    rc, _out, err = kit.run("provision", pbed)
    assert rc == 1 and "APG_LOCK_BUSY" in err and "provision waited" in err

    _release(held)
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 0 and "APG_RESET_OK" in err, err
    kit.assert_healthy(pbed)


def test_reset_waits_for_a_lock_released_within_the_timeout(kit: Kit, pbed: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    kit.mutate(pbed)
    monkeypatch.setenv("AI_PG_LOCK_TIMEOUT", "10")
    taken = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with bed_lock(kit.baseline(pbed).lock, "thread"):
            taken.set()
            release.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    assert taken.wait(10)
    timer = threading.Timer(0.3, release.set)
    timer.start()
    started = time.monotonic()
    try:
        rc, _out, err = kit.run("reset", pbed)
    finally:
        release.set()
        thread.join()
    assert rc == 0, err
    assert time.monotonic() - started >= 0.3
    kit.assert_healthy(pbed)


def test_concurrent_resets_serialise(kit: Kit, pbed: Path) -> None:
    kit.mutate(pbed)
    env = {k: v for k, v in os.environ.items() if not k.startswith("AI_PG_")}
    command = [sys.executable, "-m", "ai_proving_ground.cli.main", "reset", "--approot", str(pbed)]
    runs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(3)]
    results = [(p.wait(timeout=60), p.stderr.read() if p.stderr else "") for p in runs]
    for p in runs:
        for stream in (p.stdout, p.stderr):
            if stream:
                stream.close()
    assert all(rc == 0 for rc, _err in results), results
    kit.assert_healthy(pbed)


def test_bad_lock_timeout_is_a_usage_error(kit: Kit, pbed: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_LOCK_TIMEOUT", "soon")
    rc, _out, err = kit.run("reset", pbed)
    assert rc == 2 and "APG_USAGE" in err and "AI_PG_LOCK_TIMEOUT" in err
