"""A hostile adapter dials a path-named Unix socket that apg hides (a Docker-like socket in a
masked directory, as a campaign's or an escrow's folder could hold): under bubblewrap the path
does not exist, under Landlock with namespaces an empty directory is mounted over it (Landlock's
own rules cannot stop a connect)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hostile_kit import BACKENDS

from ai_proving_ground.sandbox.confine import SandboxOptions, choose_backend
from ai_proving_ground.sandbox.policy import Policy, covers

DIAL = """\
import socket, sys
client = socket.socket(socket.AF_UNIX)
try:
    client.connect(sys.argv[1])
    print(client.recv(64).decode())
except OSError as exc:
    print("unreachable", type(exc).__name__)
"""


@pytest.fixture
def hidden_socket(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "hidden"
    folder.mkdir()
    path = folder / "daemon.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(4)

    def answer() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"DAEMON")

    threading.Thread(target=answer, daemon=True).start()
    yield path
    server.close()


def policy(root: Path, masked: tuple[Path, ...]) -> Policy:
    work = root / "work"
    work.mkdir(exist_ok=True)
    reads = tuple(Path(p) for p in ("/usr", "/bin", "/lib", "/lib64", "/etc", sys.prefix,
                                    sys.base_prefix, os.path.dirname(os.path.dirname(
                                        os.path.dirname(__file__))) + "/scripts"))
    return Policy(workdir=work, home=work, tmp=work, writable=(work,), readable=reads,
                  masked=masked)


def dial(backend: str, chosen_policy: Policy, path: Path) -> str:
    chosen = choose_backend(SandboxOptions(backend=backend))
    argv = chosen.confine(chosen_policy).wrap([sys.executable, "-c", DIAL, str(path)])
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False,
                          env={"PATH": os.environ["PATH"]}, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_socket_answers_outside_the_sandbox(hidden_socket: Path) -> None:
    # The control: the dialer reaches the daemon when nothing is in the way.
    done = subprocess.run([sys.executable, "-c", DIAL, str(hidden_socket)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.stdout.strip() == "DAEMON"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_socket_in_a_masked_folder_cannot_be_dialled(backend: str, tmp_path: Path,
                                                       hidden_socket: Path) -> None:
    masked = policy(tmp_path, (hidden_socket.parent,))
    assert covers(masked) == [(str(hidden_socket.parent.resolve()), True, [])]
    assert dial(backend, masked, hidden_socket).startswith("unreachable")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_masked_folder_is_absent_but_what_is_bound_inside_it(backend: str,
                                                               tmp_path: Path) -> None:
    # An operator HOME that holds the bed (or a pyenv): the HOME is hidden, the bed is there.
    home = tmp_path / "home"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "key").write_text("SECRET", encoding="utf-8")
    inside = policy(home, (home,))  # the work folder home/work is bound inside the mask
    [(path, is_dir, shown)] = covers(inside)
    assert (path, is_dir) == (str(home.resolve()), True)
    assert shown == [(str((home / "work").resolve()), True, None)]
    chosen = choose_backend(SandboxOptions(backend=backend))
    script = f"ls -a '{home}'; cat '{home}/notes/key' 2>&1 || true; echo ok > '{home}/work/f'"
    done = subprocess.run(chosen.confine(inside).wrap(["/bin/sh", "-c", script]),
                          capture_output=True, text=True, timeout=60, check=False,
                          env={"PATH": os.environ["PATH"]}, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    # Landlock grants no listing of the mask's folder itself; bwrap shows only the mount point.
    assert "notes" not in done.stdout.split() and "SECRET" not in done.stdout
    assert "No such file" in done.stdout  # absent, not merely refused
    assert (home / "work" / "f").read_text(encoding="utf-8") == "ok\n"
