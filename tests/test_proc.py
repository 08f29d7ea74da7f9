"""``proc``: one way to run a child; the keeper leaves nothing behind, whatever kills its parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ai_proving_ground import keeper, proc
from proc_kit import alive, wait_until_dead

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the keeper is Linux's")

# Starts a grandchild in a session of its own (out of the child's process group), writes its pid
# and waits; only the keeper's subreaper walk can still find it.
ESCAPER = """#!/bin/sh
setsid sleep 300 > /dev/null 2>&1 < /dev/null &
echo $! > "$1"
sleep "$2"
"""


def read_pid(path: Path, limit_s: float = 30.0) -> int:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        text = path.read_text() if path.is_file() else ""
        if text.strip():
            return int(text)
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")


@pytest.fixture
def escaper(tmp_path: Path) -> Path:
    script = tmp_path / "escaper"
    script.write_text(ESCAPER, encoding="utf-8")
    script.chmod(0o755)
    return script


def test_a_finished_command_takes_its_escaped_grandchild_with_it(tmp_path: Path, escaper: Path) -> None:
    pidfile = tmp_path / "pid"
    finished = proc.run([str(escaper), str(pidfile), "0"], cwd=tmp_path, env=os.environ)
    assert finished.ok and finished.exit_code == 0
    assert wait_until_dead(read_pid(pidfile))


def test_a_deadline_stops_the_whole_tree(tmp_path: Path, escaper: Path) -> None:
    pidfile = tmp_path / "pid"
    finished = proc.run([str(escaper), str(pidfile), "300"], cwd=tmp_path, env=os.environ,
                        timeout_s=0.5)
    assert finished.timed_out and not finished.ok
    assert wait_until_dead(read_pid(pidfile))


def test_a_stopped_child_ends_by_its_signal(tmp_path: Path) -> None:
    child = proc.Child(["sleep", "300"], cwd=tmp_path, env=os.environ)
    with pytest.raises(subprocess.TimeoutExpired):
        child.wait(0.1)
    child.stop()
    assert child.returncode == -signal.SIGTERM


def test_sigkill_of_the_parent_kills_the_tree(tmp_path: Path, escaper: Path) -> None:
    """The parent is a separate Python that starts a guarded child; SIGKILL it mid-run."""
    pidfile = tmp_path / "pid"
    parent = subprocess.Popen([sys.executable, "-c", (
        "import os, sys; from pathlib import Path; from ai_proving_ground import proc; "
        f"child = proc.Child([{str(escaper)!r}, {str(pidfile)!r}, '300'], cwd=Path('.'), "
        "env=os.environ); child.wait()")], cwd=tmp_path)
    try:
        grandchild = read_pid(pidfile)
        assert alive(grandchild)
    finally:
        parent.kill()
        parent.wait()
    assert wait_until_dead(grandchild)


@pytest.mark.parametrize(("body", "mode", "said"), [
    (None, 0o755, "No such file or directory"),
    ("#!/bin/sh\n", 0o644, "Permission denied"),
    ("echo no shebang\n", 0o755, "Exec format error"),
])
def test_a_program_that_cannot_start_spawns_nothing(tmp_path: Path, body: str | None, mode: int,
                                                     said: str) -> None:
    program = tmp_path / "program"
    if body is not None:
        program.write_text(body, encoding="utf-8")
        program.chmod(mode)
    finished = proc.run([str(program)], cwd=tmp_path, env=os.environ)
    assert finished.exit_code is None and finished.error is not None and said in finished.error
    assert not proc.run(["apg-no-such-program"], cwd=tmp_path, env=os.environ).ok


@pytest.mark.parametrize("argv", [["keeper.py"], ["keeper.py", "12", "ls"], ["keeper.py", "x", "--", "ls"]])
def test_keeper_refuses_a_malformed_command_line_with_a_token(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert keeper.main(argv) == 2
    assert capsys.readouterr().err == "APG_KEEPER_USAGE usage: keeper.py PARENT_PID -- ARGV...\n"


def test_the_keeper_starts_without_enum_or_contextlib(tmp_path: Path) -> None:
    """signal's enums and contextlib were a third of the keeper's start-up CPU (one keeper per
    adapter run); it uses _signal's plain functions, and still ends as its command ended."""
    done = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", str(proc.KEEPER),
                           str(os.getpid()), "--", "sh", "-c", "exit 3"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=False)
    imported = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert done.returncode == 3
    assert "ctypes" in imported  # the listing is read
    assert not imported & {"enum", "contextlib", "signal"}
