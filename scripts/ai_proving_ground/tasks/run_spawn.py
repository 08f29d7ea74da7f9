"""Running the adapter's process once: in its sandbox, its output teed, stopped at its limit.

``apg run`` calls :func:`spawn` once per turn it sends (a task's later turns too, ``tasks.turns``):
each call writes its own ``stdout.log`` and ``stderr.log`` into the folder it is given.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Mapping
from pathlib import Path

from ai_proving_ground import proc, report
from ai_proving_ground.report import say
from ai_proving_ground.sandbox.confine import Confinement
from ai_proving_ground.tasks.adapters import Adapter

TRANSCRIPTS = {"stdout": "stdout.log", "stderr": "stderr.log"}


class Interrupted(KeyboardInterrupt):
    """Ctrl-C while the adapter ran, carrying how the adapter ended."""

    def __init__(self, adapter_exit_code: int | None) -> None:
        super().__init__()
        self.adapter_exit_code = adapter_exit_code


class TimedOut(Exception):
    """The adapter outlived its time limit and was stopped."""

    def __init__(self, adapter_exit_code: int | None) -> None:
        super().__init__(adapter_exit_code)
        self.adapter_exit_code = adapter_exit_code


def spawn(adapter: Adapter, approot: Path, logs: Path, env: Mapping[str, str],
          confinement: Confinement, children: proc.Children, timeout_s: float | None,
          limit: int, echo_stdout_to_stderr: bool) -> int | None:
    """Run the adapter in its sandbox, teeing its output into ``logs``; None when it could not
    be started. Raises :class:`TimedOut` past ``timeout_s``, :class:`Interrupted` on Ctrl-C."""
    interactive = adapter.header.interactive
    try:
        # A non-interactive adapter gets its own session under the keeper, so a timeout, an
        # interrupt or the death of this process stops everything it started (an agent CLI's
        # shells and servers), not just the adapter itself. An interactive one stays in the
        # terminal's foreground group, where Ctrl-C reaches it directly. Either way it runs in
        # its sandbox, where a failed exec would only be the sandbox's exit code: check first.
        proc.check_program(str(adapter.path), approot, dict(env))
        child = proc.Child(confinement.wrap([str(adapter.path)]), cwd=approot, env=dict(env),
                           stdin=None if interactive else proc.DEVNULL,
                           new_session=not interactive, guard=not interactive)
    except proc.CannotStart as exc:
        say("APG_RUN_NO_ATTEMPT", f"adapter {adapter.name!r} {exc} ({adapter.path})")
        return None
    echo_out = report.stderr() if echo_stdout_to_stderr else report.stdout()
    process = child.process
    assert process.stdout is not None and process.stderr is not None
    pumps = [proc.tee(process.stdout, logs / TRANSCRIPTS["stdout"], echo_out, limit),
             proc.tee(process.stderr, logs / TRANSCRIPTS["stderr"], report.stderr(), limit)]
    try:
        with children.holding(child):
            code = child.wait(timeout_s)
    except subprocess.TimeoutExpired:
        child.stop()
        raise TimedOut(child.returncode) from None
    except KeyboardInterrupt:
        # In its own session the adapter missed the terminal's SIGINT: stop its group now. In
        # the terminal's group it got the SIGINT too: give it a moment first.
        if interactive:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(proc.STOP_GRACE_S)
        child.stop()
        raise Interrupted(child.returncode) from None
    finally:
        for pump in pumps:
            pump.join(proc.DRAIN_TIMEOUT_S)
    return code
