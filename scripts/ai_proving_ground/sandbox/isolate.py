"""The Landlock wrapper's steps before exec: no capability at all, and the host's processes hidden.

:func:`drop_capabilities` empties every capability set (effective, permitted, inheritable,
ambient and the bounding set), locks root out of regaining them on exec (``SECBIT_NOROOT``) and
sets no_new_privs, so even a uid-0 adapter holds nothing more than any other user: it cannot
read another process's ``/proc/PID/environ`` (that needs CAP_SYS_PTRACE across Landlock's
domain), remount, or bind a privileged port.

:func:`enter` gives the wrapper its own PID, mount and IPC namespaces (and a network namespace
with only loopback when the network is cut): as root directly, otherwise inside a new user
namespace that maps the caller's own uid and gid, where unprivileged user namespaces are
allowed. The wrapper's first child is then PID 1 of the new namespace: it mounts a /proc of its
own (only the sandbox's processes are in it) and stays as the namespace's init (:func:`init`),
reaping orphans and passing signals on; when the adapter exits, the init exits with its status
and the kernel kills whatever the adapter left behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Callable, Sequence
from functools import cache

from ai_proving_ground.sandbox.policy import Cover

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND = 1, 2, 4, 8, 32, 4096
MS_REC, MS_PRIVATE = 1 << 14, 1 << 18
PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 28, 47, 4
PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG = 38, 1
SECBIT_NOROOT, SECBIT_NOROOT_LOCKED = 1 << 0, 1 << 1
LINUX_CAPABILITY_VERSION_3 = 0x20080522
CAP_LAST_CAP = "/proc/sys/kernel/cap_last_cap"
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
# Signals the wrapper and the init pass on to the adapter (apg run's stop, a terminal's Ctrl-C).
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
             signal.SIGUSR2)
PROBE_TIMEOUT_S = 10.0


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what} failed: {os.strerror(errno)}")


def drop_capabilities() -> None:
    """Leave this process (and what it execs) no capability and no way to gain one."""
    libc = _libc()
    privileged = os.geteuid() == 0 or _effective() != 0
    if privileged:  # CAP_SETPCAP is needed for the securebits and the bounding set
        _check(libc.prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED, 0, 0, 0),
               "prctl(PR_SET_SECUREBITS)")
    with open(CAP_LAST_CAP, encoding="ascii") as last:
        caps = range(int(last.read()) + 1)
    for cap in caps:
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 and privileged:
            _check(-1, f"prctl(PR_CAPBSET_DROP, {cap})")
    # An unprivileged caller cannot shrink its bounding set, and needs not: it has nothing to
    # bound, and no_new_privs keeps setuid and file capabilities from giving it anything.
    _check(libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "prctl(PR_CAP_AMBIENT)")
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    header, data = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    _check(libc.capset(ctypes.byref(header), data), "capset")


def _effective() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("CapEff:"):
                return int(line.split()[1], 16)
    return 0


def enter(network_cut: bool) -> None:
    """Unshare the PID, mount and IPC namespaces (and the network when cut); the next child
    forked is the new PID namespace's init. Raises OSError when the kernel refuses."""
    libc = _libc()
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | (CLONE_NEWNET if network_cut else 0)
    uid, gid = os.getuid(), os.getgid()
    if os.geteuid() != 0:
        flags |= CLONE_NEWUSER
    _check(libc.unshare(flags), "unshare")
    if flags & CLONE_NEWUSER:  # keep the caller's own identity inside, not root
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as file:
        file.write(text)


def become_init(network_cut: bool, covers: Sequence[Cover] = ()) -> None:
    """In the new namespaces' first process: a /proc of their own, loopback up when cut, and
    each of ``covers`` mounted over (see :func:`cover`)."""
    libc = _libc()
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # Private first, so no mount here ever propagates back to the host's mount table.
    _check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount(/, private)")
    _check(libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None),
           "mount(/proc)")
    # Handles on what is shown inside the covers, taken before any cover hides it.
    handles = {path: os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
               for _, _, shown in covers for path, _, link in shown if link is None}
    try:
        for mask in covers:
            if os.path.lexists(mask[0]):  # else inside an earlier cover: gone already
                cover(libc, mask, handles)
    finally:
        for handle in handles.values():
            os.close(handle)
    if network_cut:
        loopback_up()


def cover(libc: ctypes.CDLL, mask: Cover, handles: dict[str, int]) -> None:
    """Mount over one mask, as bubblewrap builds it: a directory becomes an empty tmpfs with the
    plan's entries inside it bound (or linked) back in, then read-only; anything else, a Unix
    socket too, a /dev/null that cannot be opened (Landlock's rules cannot keep a socket from
    being connected to)."""
    path, is_dir, shown = mask
    target = os.fsencode(path)
    if not is_dir:
        _check(libc.mount(b"/dev/null", target, None, MS_BIND, None), f"mount(over {path})")
        # nodev, as bwrap binds it: the device cannot even be opened (EACCES), as a mask should
        # read, rather than reading as empty.
        _check(libc.mount(None, target, None,
                          MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NODEV | MS_NOSUID, None),
               f"remount({path}, read-only, nodev)")
        return
    _check(libc.mount(b"tmpfs", target, b"tmpfs", MS_NOSUID | MS_NODEV, b"mode=0755"),
           f"mount(tmpfs over {path})")
    for inner, inner_dir, link in shown:
        os.makedirs(os.path.dirname(inner), mode=0o755, exist_ok=True)  # inside the tmpfs
        if link is not None:
            os.symlink(link, inner)
            continue
        if inner_dir:
            os.mkdir(inner, 0o755)
        else:
            os.close(os.open(inner, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
        source = f"/proc/self/fd/{handles[inner]}".encode()
        _check(libc.mount(source, os.fsencode(inner), None, MS_BIND | MS_REC, None),
               f"mount({inner} back inside {path})")
    _check(libc.mount(b"tmpfs", target, b"tmpfs", MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
                      b"mode=0755"), f"remount({path}, read-only)")


def loopback_up() -> None:
    """Bring ``lo`` up in this network namespace (a new one starts with it down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def exit_status(status: int) -> int:
    """A wait status as a shell reports it: the exit code, or 128 + the signal."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def pass_signals(to: Callable[[int], None]) -> None:
    """Forward :data:`FORWARDED` signals that reach this process to ``to``."""
    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            to(signum)

    for signum in FORWARDED:
        signal.signal(signum, forward)


def wait_for(pid: int) -> int:
    """The wrapper outside: wait for the init, passing signals on; its status as an exit code."""
    pass_signals(lambda signum: os.kill(pid, signum))
    return exit_status(os.waitpid(pid, 0)[1])


def init(adapter: int) -> int:
    """PID 1 of the sandbox: reap every orphan until the adapter exits, then return its code
    (the namespace dies with this process, and with it whatever the adapter left running)."""
    pass_signals(lambda signum: os.killpg(adapter, signum))
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            return 1
        if pid == adapter:
            return exit_status(status)


@cache
def available(network_cut: bool) -> str | None:
    """None when :func:`enter` and :func:`become_init` work here, else why not (asked once, in
    a child process: unsharing changes the caller)."""
    argv = [sys.executable, "-P", "-m", "ai_proving_ground.sandbox.isolate", "--probe",
            "net" if network_cut else "keep"]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=PROBE_TIMEOUT_S, check=False, env=_probe_env())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the namespace probe could not run: {exc}"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return said[-1] if said else f"the namespace probe exited {done.returncode}"
    return None


def _probe_env() -> dict[str, str]:
    # The package must be importable as it is here (an editable checkout, a test's sys.path).
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return {"PATH": os.defpath, "PYTHONPATH": here}


def _probe(network_cut: bool) -> int:
    try:
        enter(network_cut)
        pid = os.fork()
        if pid == 0:
            try:
                become_init(network_cut)
                drop_capabilities()
            except OSError as exc:
                print(exc, file=sys.stderr)
                os._exit(1)
            os._exit(0 if os.getpid() == 1 else 1)
        return exit_status(os.waitpid(pid, 0)[1])
    except OSError as exc:
        print(exc, file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(_probe(sys.argv[1:] == ["--probe", "net"]))
