"""The one way the product runs a child process: its own session, a deadline, drained output,
and a stop that reaches its whole process group.

* :class:`Child` starts a command in a new session (so a stop reaches everything it started, not
  just ``argv[0]``); ``guard=True`` runs it under :mod:`ai_proving_ground.keeper`, which kills
  the command's whole tree when the command exits or when the thread that started it dies,
  whatever killed the runner (``PR_SET_PDEATHSIG`` + a child subreaper);
* :func:`run` runs one to completion with a deadline and returns a :class:`Finished`;
* :class:`Children` keeps the live ones of a harness, so Ctrl-C can reach them (in their own
  session a terminal's SIGINT would not);
* :func:`child_env` is the environment of a trusted child (a verifier, git), :func:`bed_env` the
  environment of a command the harness runs in a bed (a check command, a hidden verifier's
  commands): an allow-list, never the operator's environment.

A program that cannot be started (not found, not executable) is reported before anything is
spawned, so callers can tell "could not start" from "exited non-zero" under the keeper too.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO

# After a stop, how long a grandchild may keep the output pipes open before we stop reading.
DRAIN_TIMEOUT_S = 5.0
# Between SIGTERM and SIGKILL when a child is stopped.
STOP_GRACE_S = 5.0
KEEPER = Path(__file__).resolve().parent / "keeper.py"
DEVNULL = subprocess.DEVNULL
PIPE = subprocess.PIPE
Stream = int | IO[Any] | None
_STEERING = ("AI_PG_", "APG_", "GIT_")
# What a command run in a bed keeps of the harness's environment: enough to find programs and
# speak the locale, nothing that names the operator, a credential, a setting or git's state.
BED_ENV_NAMES = frozenset({"PATH", "LANG", "TERM", "TZ"})
BED_ENV_PREFIXES = ("LC_",)
# What execve runs: a script with a #! line or an ELF binary.
_EXECUTABLE_MAGIC = (b"#!", b"\x7fELF")


class CannotStart(Exception):
    """The program is missing or not executable; nothing was spawned."""


def child_env(host: Mapping[str, str]) -> dict[str, str]:
    """A trusted child's environment (a verifier, git, a hidden verifier's commands): the host's,
    minus every variable that could steer the product or git on the bed's behalf."""
    return {k: v for k, v in host.items() if not k.startswith(_STEERING)}


class BedEnv(dict[str, str]):
    """A bed command's environment; its own HOME and TMPDIR go when it is no longer used."""


def bed_env(host: Mapping[str, str], home: Path | None = None) -> BedEnv:
    """The environment of a command the harness runs in a bed (a check command, a hidden
    verifier's commands): ``PATH``, ``LANG``, ``LC_*``, ``TERM`` and ``TZ`` from ``host``, and a
    ``HOME`` and ``TMPDIR`` of its own: ``home/home`` and ``home/tmp`` when given (the caller
    removes them), else a new private folder removed when the returned value is collected.
    Never ``AI_PG_*``, ``APG_*`` (the caller adds the request it means), ``GIT_*``, the
    operator's HOME, credentials or any other variable the operator happens to have."""
    env = BedEnv({k: v for k, v in host.items()
                  if k in BED_ENV_NAMES or k.startswith(BED_ENV_PREFIXES)})
    if home is None:
        own = Path(tempfile.mkdtemp(prefix="apg-bed-command-"))
        weakref.finalize(env, shutil.rmtree, own, ignore_errors=True)
    else:
        own = home
    for name, folder in (("HOME", own / "home"), ("TMPDIR", own / "tmp")):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        env[name] = str(folder)
    return env


def guarded(argv: Sequence[str]) -> list[str]:
    """``argv`` under the keeper (Linux); elsewhere as given."""
    if not sys.platform.startswith("linux"):
        return list(argv)
    return [sys.executable, "-I", "-S", str(KEEPER), str(os.getpid()), "--", *argv]


def check_program(program: str, cwd: Path, env: Mapping[str, str]) -> None:
    """Raise :class:`CannotStart` when ``program`` would not start (a path or a PATH name)."""
    if "/" in program:
        path = Path(program) if os.path.isabs(program) else cwd / program
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath))
        if found is None:
            raise CannotStart(f"could not start {program}: not found on PATH")
        path = Path(found)
    if not path.exists():
        raise CannotStart(f"could not start {program}: No such file or directory")
    if path.is_dir() or not os.access(path, os.X_OK):
        raise CannotStart(f"could not start {program}: Permission denied")
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise CannotStart(f"could not start {program}: {exc.strerror or exc}") from None
    if not magic.startswith(_EXECUTABLE_MAGIC):
        # What execve would say (ENOEXEC): under the keeper it would only be an exit code.
        raise CannotStart(f"could not start {program}: Exec format error (no #! line)")


class Child:
    """A started child in its own session (``new_session``), optionally under the keeper."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str],
                 stdin: Stream = DEVNULL, stdout: Stream = PIPE, stderr: Stream = PIPE,
                 new_session: bool = True, guard: bool = True) -> None:
        check_program(argv[0], cwd, env)
        self.argv = list(argv)
        self.new_session = new_session
        command = guarded(argv) if guard else list(argv)
        self.guarded = command != self.argv
        try:
            self.process = subprocess.Popen(command, cwd=cwd, env=dict(env), stdin=stdin,
                                            stdout=stdout, stderr=stderr,
                                            start_new_session=new_session)
        except OSError as exc:
            raise CannotStart(f"could not start {argv[0]}: {exc.strerror or exc}") from None

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def wait(self, timeout_s: float | None = None) -> int:
        """The exit code; raises ``subprocess.TimeoutExpired`` past ``timeout_s``."""
        return self.process.wait(timeout=timeout_s)

    def communicate(self, timeout_s: float | None = None) -> tuple[bytes, bytes]:
        out, err = self.process.communicate(timeout=timeout_s)
        return out or b"", err or b""

    def signal(self, signum: int) -> None:
        """``signum`` to the child's group (to the child alone when it shares ours)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if self.new_session:
                os.killpg(self.process.pid, signum)
            else:
                self.process.send_signal(signum)

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM to the group, ``grace_s`` to exit, then SIGKILL to the group (a child that
        ignores SIGTERM must not outlive the attempt and keep changing the bed)."""
        self.signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=grace_s)
        self.kill()

    def kill(self) -> None:
        """Stop everything now, and reap the child. A keeper is asked first (it also reaches
        what left the group); SIGKILL to the group follows whatever it did."""
        if self.guarded and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                self.process.send_signal(signal.SIGUSR1)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=DRAIN_TIMEOUT_S)
        self.signal(signal.SIGKILL)
        self.process.wait()

    def drain(self) -> tuple[bytes, bytes]:
        """After a stop: what the pipes still hold, never waiting past ``DRAIN_TIMEOUT_S`` on a
        pipe that something outside the group keeps open."""
        try:
            return self.communicate(DRAIN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            for pipe in (self.process.stdout, self.process.stderr):
                if pipe is not None:
                    pipe.close()
            return b"", b""


@dataclass(frozen=True)
class Finished:
    """A child run to completion: exit code (None: it could not start), output, and whether the
    deadline stopped it."""

    argv: tuple[str, ...]
    exit_code: int | None
    stdout: bytes = b""
    stderr: bytes = b""
    timed_out: bool = False
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


def run(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout_s: float | None = None,
        stdout: Stream = PIPE, stderr: Stream = PIPE, guard: bool = True,
        children: Children | None = None) -> Finished:
    """Run ``argv`` to completion (stdin /dev/null); past ``timeout_s`` its group is killed."""
    try:
        child = Child(argv, cwd=cwd, env=env, stdout=stdout, stderr=stderr, guard=guard)
    except CannotStart as exc:
        return Finished(tuple(argv), None, error=str(exc))
    with (children or Children()).holding(child):
        try:
            out, err = child.communicate(timeout_s)
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.drain()
            return Finished(tuple(argv), child.returncode, out, err, timed_out=True)
    return Finished(tuple(argv), child.returncode, out, err)


TRUNCATED = "APG_LOG_TRUNCATED"


def tee(stream: IO[bytes], transcript: Path, echo: TextIO,
        limit: int | None = None) -> threading.Thread:
    """Drain a pipe in a thread: to its transcript file (bytes as given) and to ``echo`` (as text).

    With ``limit``, the first ``limit`` bytes are kept and echoed; the rest is still read (a
    child blocked on a full pipe would never finish) but dropped as it arrives, never held, and
    one last line says how much was dropped (``APG_LOG_TRUNCATED``)."""

    def copy() -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        kept = dropped = 0
        with transcript.open("wb") as sink:
            while chunk := os.read(stream.fileno(), 65536):
                if limit is not None and kept + len(chunk) > limit:
                    dropped += kept + len(chunk) - limit
                    chunk = chunk[:limit - kept]
                kept += len(chunk)
                if chunk:
                    sink.write(chunk)
                    sink.flush()
                    _echo(echo, decoder.decode(chunk))
            _echo(echo, decoder.decode(b"", final=True))
            if dropped:
                line = (f"\n{TRUNCATED} {transcript.name}: kept the first {limit} bytes, "
                        f"dropped {dropped} more (AI_PG_LOG_LIMIT sets the limit)\n")
                sink.write(line.encode())
                _echo(echo, line)

    thread = threading.Thread(target=copy, daemon=True)
    thread.start()
    return thread


def _echo(stream: TextIO, text: str) -> None:
    # A closed terminal must not stop the transcript from being written.
    with contextlib.suppress(OSError, ValueError):
        stream.write(text)
        stream.flush()


class Children:
    """The live children of a harness, so an interrupt can reach every one of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: set[Child] = set()

    @contextlib.contextmanager
    def holding(self, child: Child) -> Any:
        with self._lock:
            self._live.add(child)
        try:
            yield child
        finally:
            with self._lock:
                self._live.discard(child)

    def interrupt_all(self) -> None:
        with self._lock:
            live = list(self._live)
        for child in live:
            child.signal(signal.SIGINT)
