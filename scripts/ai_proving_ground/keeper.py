"""The keeper: runs one command and makes sure nothing it started outlives it, or its parent.

``python3 -I -S keeper.py PARENT_PID -- ARGV...`` (built by :func:`ai_proving_ground.proc.guarded`).
Stdlib only and never importing the package, so it starts fast and runs nothing of a bed's.

1. ``PR_SET_PDEATHSIG``: when the thread that started the keeper dies (whatever killed the
   runner, ``SIGKILL`` included) the kernel sends the keeper ``SIGTERM``;
2. ``PR_SET_CHILD_SUBREAPER``: a grandchild whose parent exits (a daemon that forked away, even
   into its own session) is re-parented to the keeper, not to init, so it can still be found;
3. when the command exits, or the keeper is told to stop (``SIGTERM``, ``SIGHUP``), every
   descendant gets ``SIGTERM``, a moment to exit (``GRACE_S``), then ``SIGKILL``, and is
   reaped; ``SIGUSR1`` (a deadline passed) skips the moment. The keeper then ends the way the
   command ended (its exit code, or its signal).

``SIGINT`` is ignored here: it reaches the command through its process group, which decides.
Linux only (prctl and /proc); elsewhere the command runs without the guard.
"""

from __future__ import annotations

import ctypes
import os
import sys
import time

# The C module under signal, when there is one: signal wraps it in enums, and importing enum
# was 5 ms of the keeper's 18 ms of CPU at start-up (one keeper per adapter run, check command
# and hidden verifier; with contextlib, also gone, 18 ms became 12). Same functions, ints for
# the signal numbers.
TYPE_CHECKING = False  # typing itself is not imported: start-up time
if TYPE_CHECKING:  # _signal has no stubs; its functions are signal's
    import signal
else:
    try:
        import _signal as signal
    except ImportError:  # not CPython
        import signal

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 5.0
SETTLE_S = 0.05  # how long children that are exiting get before the tree is searched
_POLL_S = 0.02
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1)


def _prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl here: run unguarded, as elsewhere
        return


def descendants(root: int) -> list[int]:
    """Every live process below ``root`` (by parent links read from /proc)."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields start after the last ")".
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and fields[0] != b"Z":
            parents[int(name)] = int(fields[1])
    found: list[int] = []
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found.extend(children)
        frontier.extend(children)
    return found


def _signal_all(signum: int) -> bool:
    """Send ``signum`` to every descendant; True when there was one."""
    pids = descendants(os.getpid())
    for pid in pids:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):  # gone already, or not ours to stop
            continue
    return bool(pids)


def _reap() -> dict[int, int]:
    """Reap every exited child without blocking; pid -> wait status."""
    reaped: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped[pid] = status


def _has_children() -> bool:
    """Whether any process, live or exited, is still our child (none is reaped here)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def _no_child_left(reaped: dict[int, int]) -> bool:
    """Reap the children that end within ``SETTLE_S``; True when none is left.

    As the subreaper, every live descendant hangs below a child of ours: with none left there
    is nothing to stop, and /proc, every process of the machine, need not be read twice (10-30
    ms of an adapter's run on a shared machine). bwrap's own child is handed to us still
    exiting when bwrap returns, hence the short wait."""
    deadline = time.monotonic() + SETTLE_S
    while True:
        reaped.update(_reap())
        if not _has_children():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.001)


def _stop_tree(grace_s: float) -> dict[int, int]:
    """Stop every descendant (SIGTERM, ``grace_s``, SIGKILL); the wait statuses reaped."""
    reaped: dict[int, int] = {}
    if _no_child_left(reaped):
        return reaped
    if _signal_all(signal.SIGTERM):
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline and descendants(os.getpid()):
            reaped.update(_reap())
            time.sleep(_POLL_S)
    while _signal_all(signal.SIGKILL):
        reaped.update(_reap())
        time.sleep(_POLL_S)
    reaped.update(_reap())
    return reaped


class _Stop(Exception):
    """SIGTERM or SIGHUP: a blocking wait must end (PEP 475 would otherwise retry it)."""


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--" or not argv[1].isdigit():
        sys.stderr.write("APG_KEEPER_USAGE usage: keeper.py PARENT_PID -- ARGV...\n")
        return 2
    parent, command = int(argv[1]), argv[3:]

    def stop(signum: int, _frame: object) -> None:
        raise _Stop(signum)

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before the death signal was armed
        return 128 + signal.SIGTERM
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    child = _start(command)
    status: int | None = None
    grace_s = GRACE_S
    try:
        for signum in _STOP_SIGNALS:
            signal.signal(signum, stop)
        status = _wait_for(child)
    except _Stop as stopped:
        grace_s = 0.0 if stopped.args[0] == signal.SIGUSR1 else GRACE_S
    for signum in _STOP_SIGNALS:  # nothing may cut the clean-up short
        signal.signal(signum, signal.SIG_IGN)
    reaped = _stop_tree(grace_s)
    if status is None:  # stopped before the command ended: a wait status, SIGTERM by default
        status = reaped.get(child, signal.SIGTERM)
    if os.WIFSIGNALED(status):  # end the way the command ended, for whoever waits on us
        killed_by = os.WTERMSIG(status)
        signal.signal(killed_by, signal.SIG_DFL)
        os.kill(os.getpid(), killed_by)
        return 128 + killed_by
    return os.waitstatus_to_exitcode(status)


def _start(command: list[str]) -> int:
    """Fork and exec the command (127: not found, 126: cannot execute, as a shell says)."""
    child = os.fork()
    if child == 0:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            sys.stderr.write(f"keeper: cannot start {command[0]}: {exc.strerror or exc}\n")
            os._exit(127 if isinstance(exc, FileNotFoundError) else 126)
    return child


def _wait_for(child: int) -> int | None:
    """The command's wait status, or None when the keeper was told to stop first."""
    try:
        while True:
            pid, status = os.waitpid(-1, 0)  # orphans re-parented here are reaped on the way
            if pid == child:
                return status
    except ChildProcessError:
        return None


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
