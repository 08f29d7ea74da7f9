"""The site broker: drush for one bed, one request at a time, refusing anything else.

The broker is given a stand-in for the ddev driver's drush command line (a Python one-liner
that prints its arguments), so these tests need neither DDEV nor a sandbox; the DDEV end-to-end
test runs the real thing through the stub ``ddev`` in a real sandbox.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sandbox.broker import (
    MAX_REQUEST_BYTES,
    SOCKET_NAME,
    SiteBroker,
    ask,
)

ECHO = "import json, sys; print(json.dumps(sys.argv[1:])); print('to stderr', file=sys.stderr)"


def echo_drush(args: Sequence[str]) -> list[str]:
    return [sys.executable, "-c", ECHO, *args]


def script_broker(tmp_path: Path, bed: Path, script: str, given: Path) -> SiteBroker:
    """A broker whose "drush" is a Python ``script`` handed ``given`` before the arguments."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    return SiteBroker(run_dir / SOCKET_NAME, bed,
                      lambda args: [sys.executable, "-c", script, str(given), *args], os.environ)


@pytest.fixture
def bed(tmp_path: Path) -> Path:
    approot = tmp_path / "bed"
    (approot / ".ddev").mkdir(parents=True)
    return approot


@pytest.fixture
def broker(bed: Path, tmp_path: Path) -> Iterator[SiteBroker]:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with SiteBroker(run_dir / SOCKET_NAME, bed, echo_drush, os.environ).serving() as serving:
        yield serving


def raw_request(path: Path, payload: bytes) -> dict[str, object]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(str(path))
        client.sendall(payload)
        client.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := client.recv(65536):
            chunks.append(chunk)
    answer: dict[str, object] = json.loads(b"".join(chunks))
    return answer


def test_the_bed_s_drush_runs_and_its_output_and_exit_code_come_back(
        broker: SiteBroker, bed: Path) -> None:
    reply = ask(broker.socket_path, ["--approot", str(bed), "config:set", "a.b", "c", "{x: 1}"])
    assert reply.exit_code == 0
    assert json.loads(reply.stdout) == ["config:set", "a.b", "c", "{x: 1}"]  # verbatim
    assert reply.stderr == "to stderr\n"
    assert broker.served == 1
    assert os.stat(broker.socket_path).st_mode & 0o777 == 0o600


def test_another_approot_is_refused_and_nothing_runs(broker: SiteBroker, tmp_path: Path,
                                                     bed: Path) -> None:
    other = tmp_path / "other-bed"
    (other / ".ddev").mkdir(parents=True)
    for argv in (["--approot", str(other), "status"], [f"--approot={other}", "status"],
                 ["--approot", f"{bed}/../other-bed", "status"],
                 ["--approot", "bed", "status"]):  # relative: relative to what? refused
        with pytest.raises(ApgError) as caught:
            ask(broker.socket_path, argv)
        assert caught.value.token == "APG_SITE_BROKER_REFUSED", argv
        assert caught.value.exit_code == 2
    assert broker.served == 0
    # The bed itself, named through a symlink, is the same bed.
    link = tmp_path / "bed-link"
    link.symlink_to(bed)
    assert ask(broker.socket_path, [f"--approot={link}", "status"]).exit_code == 0
    assert broker.served == 1


def test_an_oversized_request_is_refused_and_nothing_runs(broker: SiteBroker) -> None:
    answer = raw_request(broker.socket_path, b"x" * (MAX_REQUEST_BYTES + 1))
    assert answer["error"] == "APG_SITE_BROKER_TOO_LARGE"
    with pytest.raises(ApgError) as caught:  # the client says so before sending
        ask(broker.socket_path, ["config:set", "a.b", "c", "y" * MAX_REQUEST_BYTES])
    assert caught.value.token == "APG_SITE_BROKER_TOO_LARGE"
    assert broker.served == 0


@pytest.mark.parametrize("payload", [b"not json", b'{"argv": "status"}', b'{"argv": [1]}', b"[]",
                                     b'{"argv": []}'])
def test_a_malformed_request_is_refused_with_a_token(broker: SiteBroker, payload: bytes) -> None:
    answer = raw_request(broker.socket_path, payload)
    assert str(answer["error"]).startswith("APG_")
    assert broker.served == 0


def test_requests_are_served_one_at_a_time(bed: Path, tmp_path: Path) -> None:
    log = tmp_path / "order.log"
    marker = ("import sys, time; log = open(sys.argv[1], 'a'); log.write('start\\n'); "
              "log.flush(); time.sleep(0.2); log.write('end\\n')")

    with script_broker(tmp_path, bed, marker, log).serving() as broker:
        clients = [threading.Thread(target=ask, args=(broker.socket_path, ["status"]))
                   for _ in range(3)]
        for client in clients:
            client.start()
        for client in clients:
            client.join()
    assert log.read_text().split() == ["start", "end"] * 3  # never two at once


def test_a_long_socket_path_works(bed: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / ("r" * 60) / ("u" * 60)
    run_dir.mkdir(parents=True)
    path = run_dir / SOCKET_NAME
    assert len(str(path)) > 108  # more than sockaddr_un holds
    with SiteBroker(path, bed, echo_drush, os.environ).serving():
        assert json.loads(ask(path, ["status"]).stdout) == ["status"]


def test_stopping_ends_the_drush_in_flight_and_the_socket(bed: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "drush.pid"
    hang = ("import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); "
            "time.sleep(600)")

    broker = script_broker(tmp_path, bed, hang, pid_file)
    broker.start()
    answers: list[object] = []

    def client() -> None:
        try:
            answers.append(ask(broker.socket_path, ["status"]))
        except ApgError as exc:
            answers.append(exc.token)

    asking = threading.Thread(target=client)
    asking.start()
    while not pid_file.exists() or not pid_file.read_text():
        assert asking.is_alive(), answers
        asking.join(0.05)
    pid = int(pid_file.read_text())
    broker.stop()
    asking.join()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not broker.socket_path.exists()
    assert len(answers) == 1  # the client got an answer (drush's killed exit), never a hang
    with pytest.raises(ApgError) as caught:
        ask(broker.socket_path, ["status"])
    assert caught.value.token == "APG_SITE_BROKER_UNREACHABLE"
