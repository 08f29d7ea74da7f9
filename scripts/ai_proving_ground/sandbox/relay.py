"""The model relay: with the network cut, an adapter still reaches the model endpoints it declared
on loopback, and nothing else.

Under ``apg run --unshare-net`` the adapter has a network namespace of its own: the host's
127.0.0.1 is not there. For each endpoint the adapter declares in a base URL variable
(``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``, any ``*_BASE_URL`` in its ``## Env:``) that points
at the host's loopback, :class:`ModelRelay` (in apg, outside) listens on an AF_UNIX socket in the
run directory and pipes each connection to that endpoint. Inside, the forwarder (``python -m
ai_proving_ground.sandbox.relay --forward HOST:PORT=SOCKET ... -- ARGV``, put before the adapter
by the sandbox) listens on the same address and port in the sandbox's loopback, pipes each
connection to its socket, and execs ARGV: the adapter's URL works unchanged.

It is a byte pipe to one endpoint, the way the site broker is a pipe to one bed's drush: whatever
is sent (HTTP, TLS, anything else) reaches that endpoint and only it; the relay never reads,
rewrites or logs the bytes, so it is no proxy and cannot be steered elsewhere. An endpoint that is
not on loopback, not http(s), or on a privileged port (the sandbox holds no capability to bind it)
is refused before anything runs (``APG_RUN_NET_REFUSED``, naming the variable).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import selectors
import socket
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit

from ai_proving_ground.errors import ApgError

# The broker's way to reach a socket whose path is too long for sockaddr_un (through /proc).
from ai_proving_ground.sandbox.broker import _address

URL_SUFFIX = "_BASE_URL"  # ANTHROPIC_BASE_URL, OPENAI_BASE_URL, and any adapter's own
DEFAULT_PORTS = {"http": 80, "https": 443}
FIRST_UNPRIVILEGED_PORT = 1024
MAX_CONNECTIONS = 64  # a model client keeps a few; more is an adapter hammering the pipe
CHUNK = 65536
POLL_S = 0.1
SOCKET_PREFIX = "model-relay-"


@dataclass(frozen=True)
class Endpoint:
    """One declared model endpoint on loopback: where the adapter's URL points."""

    variable: str
    host: str  # as the URL names it: 127.0.0.1, ::1 or localhost
    port: int
    socket: str = ""  # the relay's socket outside, once the run directory exists

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def listen_hosts(self) -> list[str]:
        """Where the forwarder listens inside: the URL's address; both families for a name."""
        return ["127.0.0.1", "::1"] if self.host == "localhost" else [self.host]

    def as_record(self) -> dict[str, object]:
        return {"variable": self.variable, "address": self.address, "socket": self.socket}


def url_variables(declared: Iterable[str]) -> list[str]:
    """The adapter's declared variables that name a model endpoint."""
    return [name for name in declared if name.endswith(URL_SUFFIX)]


def declared_endpoints(values: Mapping[str, str], declared: Iterable[str]) -> list[Endpoint]:
    """Each set base URL variable as an endpoint; one that cannot be relayed is refused."""
    return [parse_endpoint(name, values[name]) for name in url_variables(declared)
            if values.get(name)]


def _shown(url: str) -> str:
    """``url`` without its user and password: never print a secret."""
    if "@" not in url:
        return url
    try:
        parts = urlsplit(url)
        return parts._replace(netloc=parts.hostname or "").geturl()
    except ValueError:
        return "(a URL with credentials in it)"


def _refused(variable: str, url: str, why: str) -> ApgError:
    return ApgError("APG_RUN_NET_REFUSED", f"{variable}={_shown(url)} {why}; with --unshare-net the "
                    "adapter reaches only model endpoints on this machine's loopback (relayed "
                    f"into its sandbox): point {variable} at 127.0.0.1 (a gateway or model "
                    "server there), unset it, or run without --unshare-net", exit_code=2)


def parse_endpoint(variable: str, url: str) -> Endpoint:
    """``url`` as a relayable endpoint, or ``APG_RUN_NET_REFUSED`` saying why not."""
    try:
        parts = urlsplit(url)
        port = parts.port or DEFAULT_PORTS.get(parts.scheme, 0)
    except ValueError:
        raise _refused(variable, url, "is not a URL") from None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise _refused(variable, url, "is not an http(s) URL")
    host = parts.hostname
    if not _is_loopback(host):
        raise _refused(variable, url, "is not on loopback")
    if port < FIRST_UNPRIVILEGED_PORT:
        raise _refused(variable, url, f"uses port {port}, which the sandbox (no capabilities) "
                       f"cannot listen on; use a port of {FIRST_UNPRIVILEGED_PORT} or above")
    return Endpoint(variable, host, port)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        try:
            found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
        except OSError:
            return False
        return bool(found) and all(ipaddress.ip_address(str(info[4][0])).is_loopback
                                   for info in found)
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def with_sockets(endpoints: Sequence[Endpoint], run_dir: Path) -> tuple[Endpoint, ...]:
    """Each endpoint with its relay socket in the run directory: one per port, so two variables
    naming one gateway share it (the first one's host is where it leads)."""
    return tuple(replace(e, socket=str(run_dir / f"{SOCKET_PREFIX}{e.port}.sock"))
                 for e in endpoints)


def forwarder_argv(endpoints: Sequence[Endpoint]) -> list[str]:
    """The argv prefix that starts the forwarder inside the sandbox; the adapter's argv follows."""
    specs = list(dict.fromkeys(f"{e.host}:{e.port}={e.socket}" for e in endpoints))
    return [sys.executable, "-P", "-m", "ai_proving_ground.sandbox.relay",
            *(arg for spec in specs for arg in ("--forward", spec)), "--"]


# ---------------------------------------------------------------------------- the pipe


def pipe(left: socket.socket, right: socket.socket, stopping: threading.Event) -> None:
    """Copy bytes both ways until both sides have finished (or ``stopping`` is set); each
    side's end of input is passed on as a half-close, as TCP does."""
    with selectors.DefaultSelector() as selector, left, right:
        peers = {left: right, right: left}
        for sock in peers:
            selector.register(sock, selectors.EVENT_READ)
        while peers and not stopping.is_set():
            for key, _ in selector.select(POLL_S):
                source: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    data = source.recv(CHUNK)
                    if data:
                        peers[source].sendall(data)
                        continue
                    peers[source].shutdown(socket.SHUT_WR)
                except OSError:
                    return  # a side reset or went away: nothing more can be passed on
                selector.unregister(source)
                del peers[source]


class _Pipes:
    """The accept loops of one side of the relay and the pipes they started."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._live = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def serve(self, listener: socket.socket, open_peer: Callable[[], socket.socket]) -> None:
        thread = threading.Thread(target=self._accept, args=(listener, open_peer), daemon=True,
                                  name="apg-model-relay")
        self._threads.append(thread)
        thread.start()

    def _accept(self, listener: socket.socket, open_peer: Callable[[], socket.socket]) -> None:
        listener.settimeout(POLL_S)
        while not self.stopping.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed under us: stopping
            conn.settimeout(None)
            if not self._live.acquire(blocking=False):
                conn.close()  # over MAX_CONNECTIONS at once
                continue
            threading.Thread(target=self._one, args=(conn, open_peer), daemon=True).start()

    def _one(self, conn: socket.socket, open_peer: Callable[[], socket.socket]) -> None:
        try:
            try:
                peer = open_peer()
            except OSError:
                conn.close()  # the endpoint is not there: the client sees its connection end
                return
            pipe(conn, peer, self.stopping)
        finally:
            self._live.release()

    def stop(self) -> None:
        self.stopping.set()
        for thread in self._threads:
            thread.join(POLL_S * 5)


def _unix_client(path: str) -> socket.socket:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with _address(Path(path)) as address:
            client.connect(address)
    except OSError:
        client.close()
        raise
    return client


class ModelRelay:
    """apg's side: a socket per endpoint in the run directory, piped to the endpoint."""

    def __init__(self, endpoints: Sequence[Endpoint]) -> None:
        self.endpoints = tuple(endpoints)
        self._pipes = _Pipes()
        self._listeners: list[socket.socket] = []

    def as_record(self) -> list[dict[str, object]]:
        return [e.as_record() for e in self.endpoints]

    def start(self) -> None:
        first: dict[str, Endpoint] = {}  # one socket per port: the first endpoint leads it
        for endpoint in self.endpoints:
            first.setdefault(endpoint.socket, endpoint)
        for endpoint in first.values():
            path = Path(endpoint.socket)
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                path.unlink(missing_ok=True)
                with _address(path) as address:
                    listener.bind(address)
                os.chmod(path, 0o600)
                listener.listen(16)
            except OSError as exc:
                listener.close()
                self.stop()
                raise ApgError("APG_RUN_RELAY_FAILED", f"could not relay {endpoint.variable} "
                               f"on {path}: {exc.strerror or exc}; check the run directory is "
                               "writable and local") from None
            self._listeners.append(listener)
            target = (endpoint.host, endpoint.port)
            self._pipes.serve(listener, partial(socket.create_connection, target))

    def stop(self) -> None:
        self._pipes.stopping.set()
        for listener in self._listeners:
            listener.close()
        self._pipes.stop()
        for endpoint in self.endpoints:
            Path(endpoint.socket).unlink(missing_ok=True)

    @contextlib.contextmanager
    def serving(self) -> Iterator[ModelRelay]:
        self.start()
        try:
            yield self
        finally:
            self.stop()


# ---------------------------------------------------------------------------- inside


def listen_inside(specs: Sequence[str]) -> list[tuple[socket.socket, str]]:
    """Bind every ``HOST:PORT=SOCKET`` on the sandbox's loopback (before the adapter starts, so
    its first request finds the port open); a name listens on both families where it can."""
    listeners: list[tuple[socket.socket, str]] = []
    taken: set[tuple[str, int]] = set()  # localhost and 127.0.0.1 on one port: listened once
    for spec in specs:
        where, _, path = spec.partition("=")
        host, _, port = where.rpartition(":")
        endpoint = Endpoint("", host, int(port), path)
        bound = 0
        for address in endpoint.listen_hosts():
            if (address, endpoint.port) in taken:
                bound += 1
                continue
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((address, endpoint.port))
                sock.listen(16)
            except OSError:
                sock.close()
                if endpoint.host != "localhost":
                    raise
                continue  # localhost: no ::1 in this sandbox is fine when 127.0.0.1 is there
            listeners.append((sock, path))
            taken.add((address, endpoint.port))
            bound += 1
        if not bound:
            raise OSError(f"could not listen on {endpoint.address} inside the sandbox")
    return listeners


def serve_inside(listeners: Sequence[tuple[socket.socket, str]]) -> None:
    """Pipe every connection to a forwarded port into its relay socket (daemon threads)."""
    pipes = _Pipes()
    for listener, path in listeners:
        pipes.serve(listener, partial(_unix_client, path))


def main(argv: Sequence[str] | None = None) -> int:
    """The forwarder: listen, fork the pipes into a child, exec the adapter in this process."""
    args = list(sys.argv[1:] if argv is None else argv)
    specs: list[str] = []
    while len(args) >= 2 and args[0] == "--forward":
        specs.append(args[1])
        args = args[2:]
    if not specs or args[:1] != ["--"] or len(args) < 2:
        print("APG_USAGE usage: python -m ai_proving_ground.sandbox.relay --forward "
              "HOST:PORT=SOCKET ... -- ARGV...", file=sys.stderr)
        return 2
    try:
        listeners = listen_inside(specs)
    except (OSError, ValueError) as exc:
        print(f"APG_RUN_SANDBOX_FAILED model relay: {exc}; the adapter was not started",
              file=sys.stderr)
        return 126
    child = os.fork()
    if child == 0:
        # The pipes live in a grandchild, so the adapter keeps this PID and its exit status and
        # never meets a child it did not start; the sandbox's PID 1 (bwrap, Landlock's init)
        # adopts it, and ends it with the adapter when the PID namespace goes.
        if os.fork() == 0:
            serve_inside(listeners)
            threading.Event().wait()
        os._exit(0)
    os.waitpid(child, 0)
    for listener, _ in listeners:
        listener.close()
    command = args[1:]
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"APG_RUN_SANDBOX_FAILED model relay: {command[0]}: {exc}", file=sys.stderr)
    return 126


if __name__ == "__main__":
    raise SystemExit(main())
