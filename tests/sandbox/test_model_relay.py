"""The model relay under ``apg run --unshare-net``: the declared endpoint is reached at its own
address, nothing else on the host's loopback is, and the relay is a byte pipe to that one
endpoint whatever is sent through it (not an HTTP proxy: it cannot be pointed elsewhere).

The "model" is a plain TCP server on the host's 127.0.0.1 that answers every connection with
``ENDPOINT:`` and the bytes it received; a second server on another port must never be reached.
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_kit import BACKENDS, add_adapter, apg_process, only_record

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sandbox.confine import Backend
from ai_proving_ground.sandbox.relay import Endpoint, declared_endpoints, parse_endpoint
from ai_proving_ground.tasks.network_preflight import network_preflight


class Recorder:
    """A TCP server on the host's loopback that echoes what it got, prefixed ``ENDPOINT:``."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                data = b""
                with_eof = True
                while with_eof:
                    chunk = conn.recv(4096)
                    data += chunk
                    with_eof = bool(chunk) and not data.endswith(b"\n")
                self.received.append(data)
                conn.sendall(b"ENDPOINT:" + data)


@pytest.fixture
def servers() -> Iterator[tuple[Recorder, Recorder]]:
    model, other = Recorder(), Recorder()
    yield model, other
    model.sock.close()
    other.sock.close()


# The adapter: three tries, one line of result each.
ATTACK = """\
import os, socket, sys
model, other = int(sys.argv[1]), int(sys.argv[2])
def talk(port, data):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(data)
            answer = b""
            while chunk := sock.recv(4096):
                answer += chunk
            return answer.decode("latin-1").strip()
    except OSError as exc:
        return "unreachable " + type(exc).__name__
# 1. not HTTP at all: raw bytes
print(talk(model, bytes(range(1, 9)) + b"not-http\\n"))
# 2. asking the relay to go elsewhere, as one would ask an HTTP proxy
print(talk(model, f"CONNECT 127.0.0.1:{other} HTTP/1.1\\n".encode()))
# 3. the other port directly
print(talk(other, b"hello\\n"))
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_only_the_declared_endpoint_is_reachable_and_only_as_a_byte_pipe(
        backend: str, bed: Path, servers: tuple[Recorder, Recorder]) -> None:
    model, other = servers
    (bed / "attack.py").write_text(ATTACK, encoding="utf-8")
    add_adapter(bed, "prober", f'exec {sys.executable} "$APG_APPROOT/attack.py" '
                f"{model.port} {other.port}",
                header="## Env: ANTHROPIC_BASE_URL,OPENAI_BASE_URL\n")
    # Two variables naming one gateway (by two names for loopback) share its relay.
    done = apg_process(bed, "prober", {"AI_PG_SANDBOX": backend,
                                       "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{model.port}",
                                       "OPENAI_BASE_URL": f"http://localhost:{model.port}/v1"},
                       "--unshare-net")
    assert done.returncode == 0, done.stderr
    raw, steer, direct = done.stdout.splitlines()[:3]
    assert raw == "ENDPOINT:" + bytes(range(1, 9)).decode("latin-1") + "not-http"
    assert steer == f"ENDPOINT:CONNECT 127.0.0.1:{other.port} HTTP/1.1"  # the model got it
    assert direct.startswith("unreachable")
    assert other.received == []
    assert len(model.received) == 2
    assert "APG_RUN_NET_RELAYED" in done.stderr and "ANTHROPIC_BASE_URL" in done.stderr
    sandbox = only_record(bed)["sandbox"]
    anthropic, openai = sandbox["model_relay"]
    assert (anthropic["variable"], anthropic["address"]) == (
        "ANTHROPIC_BASE_URL", f"127.0.0.1:{model.port}")
    assert (openai["variable"], openai["address"]) == (
        "OPENAI_BASE_URL", f"localhost:{model.port}")
    assert anthropic["socket"] == openai["socket"]
    assert not Path(anthropic["socket"]).exists()  # the relay stopped with the adapter


@pytest.mark.parametrize("backend", BACKENDS)
def test_without_a_declared_endpoint_nothing_on_loopback_is_reachable(
        backend: str, bed: Path, servers: tuple[Recorder, Recorder]) -> None:
    model, other = servers
    (bed / "attack.py").write_text(ATTACK, encoding="utf-8")
    # The URL is in the environment, but this adapter does not declare it: nothing is relayed.
    add_adapter(bed, "prober", f'exec {sys.executable} "$APG_APPROOT/attack.py" '
                f"{model.port} {other.port}")
    done = apg_process(bed, "prober", {"AI_PG_SANDBOX": backend,
                                       "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{model.port}"},
                       "--unshare-net")
    assert done.returncode == 0, done.stderr
    assert all(line.startswith("unreachable") for line in done.stdout.splitlines()[:3])
    assert model.received == other.received == []
    assert only_record(bed)["sandbox"]["model_relay"] == []


def test_a_remote_endpoint_is_refused_naming_the_variable(bed: Path) -> None:
    add_adapter(bed, "remote", "exit 0", header="## Env: OPENAI_BASE_URL\n")
    done = apg_process(bed, "remote", {"AI_PG_ALLOW_UNCONFINED": "1",
                                       "OPENAI_BASE_URL": "https://api.openai.com/v1"},
                       "--unshare-net")
    assert done.returncode == 2
    assert "APG_RUN_NET_REFUSED" in done.stderr and "OPENAI_BASE_URL" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("url", "why"), [
    ("https://api.anthropic.com", "is not on loopback"),
    ("http://10.0.0.5:8080", "is not on loopback"),
    ("ftp://127.0.0.1:2121", "is not an http(s) URL"),
    ("http://127.0.0.1", "uses port 80"),
    ("http://127.0.0.1:99999", "is not a URL"),
])
def test_endpoints_that_cannot_be_relayed(url: str, why: str) -> None:
    with pytest.raises(ApgError) as caught:
        parse_endpoint("ANTHROPIC_BASE_URL", url)
    assert caught.value.token == "APG_RUN_NET_REFUSED" and caught.value.exit_code == 2
    assert why in caught.value.message and "ANTHROPIC_BASE_URL" in caught.value.message


def test_a_password_in_a_url_is_never_printed() -> None:
    with pytest.raises(ApgError) as caught:
        parse_endpoint("OPENAI_BASE_URL", "https://user:hunter2@gateway.example:8443/v1")
    assert "hunter2" not in caught.value.message


def test_loopback_endpoints_keep_their_address() -> None:
    found = declared_endpoints({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8123",
                                "OPENAI_BASE_URL": "http://[::1]:9000/v1",
                                "MY_BASE_URL": "", "APG_CLAUDE_ARGS": "http://x"},
                               ["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "MY_BASE_URL",
                                "APG_CLAUDE_ARGS"])
    assert [(e.variable, e.address) for e in found] == [
        ("ANTHROPIC_BASE_URL", "127.0.0.1:8123"), ("OPENAI_BASE_URL", "[::1]:9000")]
    assert Endpoint("X", "localhost", 8000).listen_hosts() == ["127.0.0.1", "::1"]


def test_a_sandbox_that_cannot_relay_refuses_before_anything_runs() -> None:
    values = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8123"}
    flat = Backend("landlock", False, abi=4, isolated=False, notes=("no namespaces",))
    with pytest.raises(ApgError) as caught:
        network_preflight(["ANTHROPIC_BASE_URL"], values, True, flat)
    assert caught.value.token == "APG_RUN_NET_REFUSED" and "no namespaces" in caught.value.message
    with pytest.raises(ApgError) as unconfined:
        network_preflight(["ANTHROPIC_BASE_URL"], values, True, Backend("none", True))
    assert unconfined.value.token == "APG_RUN_NET_REFUSED"
    # The network kept: nothing to relay, whatever the backend.
    assert network_preflight(["ANTHROPIC_BASE_URL"], values, False, flat).relayed == ()
