"""Watching processes by PID in tests: alive (a zombie is not), and waiting for one to die."""

from __future__ import annotations

import time
from pathlib import Path


def alive(pid: int) -> bool:
    """Running (a zombie is dead: it only waits to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:].split()[0] != b"Z"


def wait_until_dead(pid: int, limit_s: float = 30.0) -> bool:
    """True once ``pid`` is gone; False if it still runs after ``limit_s`` (a generous bound)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False
