"""The site broker: a confined adapter on a DDEV bed reaches its site without the Docker socket.

While a confined adapter runs on a DDEV bed, ``apg run`` serves that bed's site command line
(``apg drush``) on an AF_UNIX socket in the run directory, the one place outside the bed both
sides can reach. Inside the sandbox ``apg drush`` (``$APG_SITE_BROKER`` names the socket) sends its
argv as one JSON request, ``{"argv": [...]}`` of at most :data:`MAX_REQUEST_BYTES`, and gets back
``{"exit_code", "stdout", "stderr"}``, or ``{"error": "APG_...", "message"}`` when the request was
refused. The broker runs nothing but drush, through the driver of the bed it was started for:
a request whose ``--approot`` names any other directory is refused (``APG_SITE_BROKER_REFUSED``),
and so is every drush command line the policy of :mod:`.drush_policy` refuses (files written
where told, PHP or SQL run, the site replaced) unless the operator allowed it
(``AI_PG_SITE_ALLOW``). One request at a time, in the order they arrive; when the adapter stops,
so does the broker and the drush it is running.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground import proc
from ai_proving_ground.errors import ApgError
from ai_proving_ground.sandbox import drush_policy

ENV_VARIABLE = "APG_SITE_BROKER"
SOCKET_NAME = "site.sock"
MAX_REQUEST_BYTES = 1 << 20  # a request is an argv: a config:set's YAML fits many times over
READ_TIMEOUT_S = 30.0  # a client that connects and sends nothing must not hold the queue
POLL_S = 0.1  # how often the idle broker looks whether the adapter stopped
# Longer socket paths do not fit sockaddr_un (108 bytes): they are reached through /proc.
SUN_PATH_MAX = 100

# The drush command line that runs ``args`` for the bed (raises ApgError, e.g. ddev missing).
DrushCommand = Callable[[Sequence[str]], Sequence[str]]


def split_approot(args: Sequence[str]) -> tuple[str | None, list[str]]:
    """A leading ``--approot DIR`` / ``--approot=DIR`` and the drush arguments after it."""
    rest = list(args)
    if rest[:1] == ["--approot"] and len(rest) > 1:
        return rest[1], rest[2:]
    if rest and rest[0].startswith("--approot="):
        return rest[0].split("=", 1)[1], rest[1:]
    return None, rest


@contextlib.contextmanager
def _address(path: Path) -> Iterator[str]:
    """An address for ``path`` that fits sockaddr_un: itself, else through its folder's fd."""
    if len(os.fsencode(path)) < SUN_PATH_MAX:
        yield str(path)
        return
    folder = os.open(path.parent, os.O_PATH | os.O_DIRECTORY)
    try:
        yield f"/proc/self/fd/{folder}/{path.name}"
    finally:
        os.close(folder)


@dataclass(frozen=True)
class Reply:
    """What the broker answered: drush's exit code and output."""

    exit_code: int
    stdout: str
    stderr: str


def ask(socket_path: Path, argv: Sequence[str]) -> Reply:
    """Send ``argv`` to the broker at ``socket_path``; its refusal raises as the ApgError it is."""
    request = json.dumps({"argv": list(argv)}).encode("utf-8")
    if len(request) > MAX_REQUEST_BYTES:
        raise ApgError("APG_SITE_BROKER_TOO_LARGE", f"the drush command line is {len(request)} "
                       f"bytes as a request, over the site broker's {MAX_REQUEST_BYTES}; pass "
                       "large values in a file in the bed instead", exit_code=2)
    try:
        with _address(socket_path) as address, \
                socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(address)
            client.sendall(request)
            client.shutdown(socket.SHUT_WR)
            answer = _read_all(client, limit=None)
    except OSError as exc:
        raise ApgError("APG_SITE_BROKER_UNREACHABLE", f"no site broker at {socket_path} "
                       f"({ENV_VARIABLE}): {exc.strerror or exc}; it serves only while apg run's "
                       "adapter runs") from None
    return _reply(answer, socket_path)


def _reply(answer: bytes, socket_path: Path) -> Reply:
    try:
        data = json.loads(answer)
    except (UnicodeDecodeError, json.JSONDecodeError):
        data = None
    if not isinstance(data, dict):
        raise ApgError("APG_SITE_BROKER_FAILED", f"the site broker at {socket_path} answered "
                       "something that is not a reply; run the task again")
    try:
        if "error" in data:
            failure = ApgError(str(data["error"]), str(data.get("message", "")),
                               exit_code=int(data.get("exit_code", 1)))
        else:
            return Reply(int(data["exit_code"]), str(data["stdout"]), str(data["stderr"]))
    except (KeyError, TypeError, ValueError):
        raise ApgError("APG_SITE_BROKER_FAILED", f"the site broker at {socket_path} answered "
                       "an incomplete reply; run the task again") from None
    raise failure


def _read_all(conn: socket.socket, limit: int | None) -> bytes:
    """Everything until EOF, or ``limit + 1`` bytes when there is more than ``limit``."""
    chunks, size = [], 0
    while limit is None or size <= limit:
        chunk = conn.recv(65536 if limit is None else min(65536, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _refused(token: str, message: str) -> ApgError:
    return ApgError(token, message, exit_code=2)


class SiteBroker:
    """Serves drush for the bed at ``approot`` on ``socket_path`` (see the module doc)."""

    def __init__(self, socket_path: Path, approot: Path, drush: DrushCommand,
                 env: Mapping[str, str], max_request_bytes: int = MAX_REQUEST_BYTES,
                 allow: Iterable[str] = ()) -> None:
        self.socket_path = socket_path
        self.allow = drush_policy.parse_allow(allow)
        self.approot = approot
        self._drush = drush
        self._env = dict(env)
        self._max = max_request_bytes
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._child: proc.Child | None = None
        self._listener: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self.served = 0

    @property
    def address(self) -> str:
        return str(self.socket_path)

    def as_record(self) -> dict[str, object]:
        """For run.json's sandbox record."""
        record: dict[str, object] = {"socket": str(self.socket_path), "serves": "drush",
                                     "approot": str(self.approot),
                                     "environment_variable": ENV_VARIABLE}
        if self.allow:  # the operator widened the drush policy for this run
            record["site_allow"] = sorted(self.allow)
        return record

    def start(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.socket_path.unlink(missing_ok=True)
            with _address(self.socket_path) as address:
                listener.bind(address)
            os.chmod(self.socket_path, 0o600)
            listener.listen(16)
        except OSError as exc:
            listener.close()
            raise ApgError("APG_SITE_BROKER_FAILED", f"could not serve the site on "
                           f"{self.socket_path}: {exc.strerror or exc}; check the run "
                           "directory is writable and local") from None
        listener.settimeout(POLL_S)
        self._listener = listener
        self._thread = threading.Thread(target=self._serve, name="apg-site-broker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting, stop the drush in flight, and remove the socket."""
        self._stopping.set()
        with self._lock:
            child = self._child
        if child is not None:
            child.stop()
        if self._thread is not None:
            self._thread.join(proc.DRAIN_TIMEOUT_S + proc.STOP_GRACE_S)
        if self._listener is not None:
            self._listener.close()
        self.socket_path.unlink(missing_ok=True)

    @contextlib.contextmanager
    def serving(self) -> Iterator[SiteBroker]:
        self.start()
        try:
            yield self
        finally:
            self.stop()

    def _serve(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed under us: stopping
            with conn:
                self._handle(conn)

    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(READ_TIMEOUT_S)
        try:
            answer = self._answer(_read_all(conn, self._max))
        except OSError:
            return  # the client went away or sent nothing in time: nothing to answer
        with contextlib.suppress(OSError):
            conn.sendall(json.dumps(answer).encode("utf-8"))

    def _answer(self, request: bytes) -> dict[str, Any]:
        try:
            argv = self.check(request)
            return self._run(argv)
        except ApgError as exc:  # the driver's own (APG_DDEV_MISSING, APG_DDEV_NOT_RUNNING, ...)
            return {"error": exc.token, "message": exc.message, "exit_code": exc.exit_code}
        except Exception as exc:  # the broker thread must answer, never die
            return {"error": "APG_SITE_BROKER_FAILED", "exit_code": 1,
                    "message": f"the site broker could not run the request: {exc!r}"}

    def check(self, request: bytes) -> list[str]:
        """The drush arguments of a request; a refusal raises (exit code 2)."""
        if len(request) > self._max:
            raise _refused("APG_SITE_BROKER_TOO_LARGE", f"the request is over the site broker's "
                           f"{self._max} bytes; pass large values in a file in the bed instead")
        try:
            data = json.loads(request)
        except (UnicodeDecodeError, json.JSONDecodeError):
            data = None
        argv = data.get("argv") if isinstance(data, dict) else None
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
            raise _refused("APG_SITE_BROKER_REFUSED", 'a request is {"argv": [strings]}, '
                           "as apg drush sends it")
        approot, args = split_approot(argv)
        if approot is not None and not self._same_bed(approot):
            raise _refused("APG_SITE_BROKER_REFUSED", f"--approot {approot} is not the bed this "
                           f"run serves ({self.approot}); the broker reaches only its own site")
        if not args:
            raise _refused("APG_USAGE", "apg drush needs a drush command, e.g. apg drush status")
        drush_policy.check(args, self.allow)
        return args

    def _same_bed(self, approot: str) -> bool:
        return os.path.isabs(approot) and os.path.realpath(approot) == os.path.realpath(
            self.approot)

    def _run(self, args: Sequence[str]) -> dict[str, Any]:
        command = list(self._drush(args))
        with self._lock:
            if self._stopping.is_set():
                raise ApgError("APG_SITE_BROKER_UNREACHABLE", "the adapter's run is over")
            try:
                child = self._child = proc.Child(command, cwd=self.approot, env=self._env)
            except proc.CannotStart as exc:
                raise ApgError("APG_DDEV_MISSING", f"{exc}; install DDEV on the host",
                               exit_code=2) from None
        try:
            out, err = child.communicate()
        finally:
            with self._lock:
                self._child = None
        self.served += 1
        return {"exit_code": child.returncode, "stdout": out.decode("utf-8", "replace"),
                "stderr": err.decode("utf-8", "replace")}
