"""Named crash points, so tests can kill a command at an exact step (a failpoint).

Set ``AI_PG_CRASH_AT=<name>``: the process sends itself SIGKILL when it reaches that point,
exactly as an operator's kill -9 or a power cut would stop it. Unset, a point costs one lookup.
"""

from __future__ import annotations

import os
import signal


def crashpoint(name: str) -> None:
    """Die here, without cleanup, if the environment asks for it."""
    if os.environ.get("AI_PG_CRASH_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
