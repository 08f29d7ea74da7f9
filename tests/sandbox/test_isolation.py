"""Hostile adapters against the process side of the sandbox: no capability, no other process's
environment, no other process at all where the kernel allows namespaces.

``apg run`` runs as its own process with a secret planted in its environment, as an operator's
shell would leave one; the adapter looks for it in every /proc/PID/environ it can open, in apg's
own (its PID is handed over in a file) and in PID 1's. Unconfined (the opt-out) the same adapter
finds it: the control that shows the adapter can tell.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hostile_kit import BACKENDS, add_adapter, apg_process, needs_landlock, only_record

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sandbox import confine, isolate, landlock
from ai_proving_ground.sandbox.confine import Backend
from ai_proving_ground.sandbox.policy import Policy

SECRET = "planted-operator-secret-7f3a"
CAPS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
# Prints how many environments held the secret (all of /proc, apg's, PID 1's), then the
# capability sets and how many processes it can see.
SNOOP = f"""\
apg_pid="$(cat "$APG_APPROOT/apg.pid")"
for file in /proc/[0-9]*/environ "/proc/$apg_pid/environ" /proc/1/environ; do
  tr '\\0' '\\n' < "$file" 2>/dev/null
done | grep -c "{SECRET}"
grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' /proc/self/status
ls -d /proc/[0-9]* | wc -l
exit 0
"""


def snoop(approot: Path, backend: str) -> tuple[int, dict[str, int], int, dict[str, object]]:
    add_adapter(approot, "snoop", SNOOP)
    env = {"APG_TEST_SECRET": SECRET, "AI_PG_SANDBOX": backend}
    if backend == "none":
        env["AI_PG_ALLOW_UNCONFINED"] = "1"
    done = apg_process(approot, "snoop", env, pid_file=approot / "apg.pid")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    found = int(lines[0])
    caps = {line.split(":")[0]: int(line.split()[1], 16) for line in lines[1:7]}
    assert set(caps) == {*CAPS, "NoNewPrivs"}, done.stdout
    return found, caps, int(lines[7]), only_record(approot)["sandbox"]


def test_unconfined_the_secret_is_there_to_find(bed: Path) -> None:
    # The control: with no sandbox, root's adapter reads apg's environment.
    found, caps, _, _ = snoop(bed, "none")
    assert found >= 1
    if os.geteuid() == 0:
        assert caps["CapEff"] != 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_capability_and_no_other_process_environment(backend: str, bed: Path) -> None:
    found, caps, processes, sandbox = snoop(bed, backend)
    assert found == 0
    assert caps["NoNewPrivs"] == 1  # nothing can be regained by exec (setuid, file caps)
    # Landlock empties the bounding set too; bwrap leaves it as it was (no_new_privs makes it
    # unusable: an exec can never raise the permitted set above the empty one it has).
    emptied = CAPS if backend == "landlock" else ("CapInh", "CapPrm", "CapEff", "CapAmb")
    assert {name: caps[name] for name in emptied} == dict.fromkeys(emptied, 0)
    # Its own PID namespace: PID 1 (bwrap, or the Landlock wrapper's init), the adapter, and
    # the few it started (tr, ls), never the host's processes.
    assert processes <= 8
    assert sandbox["own_pid_namespace"] is True


@needs_landlock
def test_landlock_without_namespaces_still_drops_every_capability(tmp_path: Path) -> None:
    """Where the kernel gives no namespace, Landlock still drops every capability: other
    processes are listed, their command lines readable, but not their environments."""
    marker = f"{SECRET}-parent"
    policy = Policy(workdir=tmp_path, home=tmp_path, tmp=tmp_path, writable=(tmp_path,),
                    readable=tuple(Path(p) for p in ("/usr", "/bin", "/lib", "/lib64", "/etc",
                                                     sys.prefix, sys.base_prefix)),
                    masked=())
    script = ('tr "\\0" "\\n" < /proc/$PPID/environ 2>/dev/null | grep -c "$0"; '
              'grep -E "^Cap(Eff|Prm|Bnd)" /proc/self/status; cat /proc/$PPID/cmdline >/dev/null'
              ' && echo cmdline-readable')
    wrapped = Backend("landlock", False, abi=landlock.abi_version(), isolated=False).confine(
        policy).wrap(["/bin/sh", "-c", script, marker])
    # The sandbox's parent is a shell holding the marker in its environment.
    done = subprocess.run(["/bin/sh", "-c", '"$@"; true', "sh", *wrapped], capture_output=True,
                          text=True, env={"PATH": os.environ["PATH"], "MARK": marker},
                          timeout=60, check=False)
    lines = done.stdout.split("\n")
    assert lines[0] == "0", done
    assert [int(line.split()[1], 16) for line in lines[1:4]] == [0, 0, 0]
    assert lines[4] == "cmdline-readable"


@pytest.mark.skipif(os.geteuid() != 0, reason="as root, as CI runs")
def test_as_root_the_landlock_sandbox_gets_namespaces() -> None:
    assert isolate.available(False) is None and isolate.available(True) is None


@needs_landlock
def test_landlock_without_namespaces_is_not_used_beside_a_docker_socket(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its rules cannot keep a socket from being connected to, and without a mount namespace
    # nothing can be mounted over it: the run is refused rather than handed the Docker socket.
    socket_path = tmp_path / "docker.sock"
    socket_path.write_text("", encoding="utf-8")
    monkeypatch.setattr(confine, "_bwrap_here", lambda: (None, "bubblewrap is not installed"))
    monkeypatch.setattr(isolate, "available", lambda network_cut: "user namespaces are off")
    monkeypatch.setattr(confine, "DOCKER_SOCKETS", (str(socket_path),))
    with pytest.raises(ApgError) as caught:
        confine.choose_backend(confine.SandboxOptions(backend="landlock"))
    assert caught.value.token == "APG_RUN_UNCONFINED" and str(socket_path) in caught.value.message
    socket_path.unlink()
    chosen = confine.choose_backend(confine.SandboxOptions(backend="landlock"))
    assert (chosen.name, chosen.isolated) == ("landlock", False)
    assert any("other processes stay visible" in note for note in chosen.notes)


SYSTEM_PYTHON = "/usr/bin/python3"
NOBODY = 65534


def _unprivileged_can_run() -> str | None:
    """Why an unprivileged account cannot run the wrapper here, or None."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return "needs root and setpriv (util-linux) to become an unprivileged user"
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        return f"needs {SYSTEM_PYTHON}"
    return None


def _reachable_scripts(folder: Path) -> Path:
    """The package's folder where the unprivileged account can read it: the checkout's when every
    folder above it lets others in, else a copy in ``folder`` (a clone made in mktemp's 0700
    folder, as CI's may be, is the root's alone)."""
    if all(os.stat(p).st_mode & 0o005 for p in [SCRIPTS, *SCRIPTS.parents]):
        return SCRIPTS
    copy = folder / "scripts"
    shutil.copytree(SCRIPTS / "ai_proving_ground", copy / "ai_proving_ground",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return copy


SCRIPTS = Path(isolate.__file__).resolve().parents[2]


@pytest.mark.skipif(landlock.abi_version() == 0, reason="needs Landlock")
@pytest.mark.skipif(_unprivileged_can_run() is not None, reason=str(_unprivileged_can_run()))
def test_an_unprivileged_account_gets_a_user_namespace_or_a_reason() -> None:
    """Not root: the wrapper moves into a user namespace that maps the account's own uid (as it
    is, not root), then the PID, mount and IPC namespaces, where the kernel allows; else the
    probe says why and the wrapper runs without them, capabilities still dropped."""
    shared = Path(tempfile.mkdtemp(prefix="apg-unprivileged-code-"))
    try:
        _as_nobody(_reachable_scripts(shared))
    finally:
        shutil.rmtree(shared)


def _as_nobody(scripts: Path) -> None:
    nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
              "env", f"PYTHONPATH={scripts}", "PATH=/usr/bin:/bin"]
    probe = subprocess.run([*nobody, SYSTEM_PYTHON, "-P", "-m", "ai_proving_ground.sandbox.isolate",
                            "--probe", "keep"], capture_output=True, text=True, timeout=60,
                           check=False)
    isolated = probe.returncode == 0
    # Where that account can reach it (pytest's folders are the root's alone).
    work = Path(tempfile.mkdtemp(prefix="apg-unprivileged-"))
    os.chown(work, NOBODY, NOBODY)
    try:
        done = _run_as(nobody, work, isolated, scripts)
    finally:
        shutil.rmtree(work)
    assert done.returncode == 0, (probe.stderr, done.stderr)
    lines = done.stdout.split("\n")
    assert lines[0] == str(NOBODY)  # its own identity, not root inside the namespace
    assert [int(line.split()[1], 16) for line in lines[1:3]] == [0, 0]
    if isolated:
        assert int(lines[3]) <= 6  # the init, the shell and its ls: nothing of the host


def _run_as(nobody: list[str], work: Path, isolated: bool,
            scripts: Path) -> subprocess.CompletedProcess[str]:
    policy = Policy(workdir=work, home=work, tmp=work, writable=(work,),
                    readable=(*(Path(p) for p in ("/usr", "/bin", "/lib", "/lib64", "/etc")),
                              scripts), masked=())
    argv = Backend("landlock", False, abi=landlock.abi_version(), isolated=isolated).confine(
        policy).wrap(["/bin/sh", "-c", "id -u; grep -E '^Cap(Eff|Prm)' /proc/self/status; "
                      "ls -d /proc/[0-9]* | wc -l"])
    argv[0] = SYSTEM_PYTHON  # the test's own interpreter may live where nobody can reach
    return subprocess.run([*nobody, *argv], capture_output=True, text=True, timeout=60,
                          check=False)
