"""The Landlock backend (Linux 5.13+, unprivileged): the policy applied by a small exec wrapper.

``python -m ai_proving_ground.sandbox.landlock --policy JSON -- ARGV`` starts a new session
unless it leads one and asks for SIGKILL when its parent dies. Where the kernel allows (as root,
or with unprivileged user namespaces) it then moves into PID, mount and IPC namespaces of its own
(and a network namespace with only loopback when the network is cut) whose init mounts a /proc
of its own (:mod:`ai_proving_ground.sandbox.isolate`). Last it drops every capability, restricts
itself with the policy's rules (``landlock_create_ruleset``, ``landlock_add_rule``,
``landlock_restrict_self`` through ctypes) and execs ARGV, which inherits all of it.

Landlock only grants, so a mask inside a granted tree is carved out: the tree's directories on
the way to the mask are granted listing only, and every other entry of theirs gets the full
grant (a new entry beside a mask cannot be created). What Landlock cannot do: make a fresh /tmp
(``TMPDIR`` is the run's), keep a path-named Unix socket it can see from being connected to, or,
without namespaces, hide other processes (a sandboxed process cannot ptrace them or read their
environment, and from ABI 6 cannot signal one outside its domain, but sees their command lines)
or cut the network but loopback (with the network cut, from ABI 4, all TCP bind and connect is
refused, loopback included, save the relayed model ports).
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import signal
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from ai_proving_ground.sandbox import isolate
from ai_proving_ground.sandbox.policy import Cover, Mount, Policy, covers, mount_plan

# Syscall numbers are shared by every architecture that has Landlock (the generic table).
SYSCALLS = {"create_ruleset": 444, "add_rule": 445, "restrict_self": 446}
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH, RULE_NET_PORT = 1, 2
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
TRUNCATE, IOCTL_DEV = 1 << 14, 1 << 15
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR
# Filesystem rights each ABI knows: v1 bits 0-12, v2 adds REFER, v3 TRUNCATE, v5 IOCTL_DEV.
FS_RIGHTS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1
# Device files an adapter needs (read and write); /proc is readable.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
           "/dev/ptmx", "/dev/pts")
PROC = "/proc"


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPortAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class LandlockError(OSError):
    """A Landlock call failed; the wrapper says which and exits without running the adapter."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI, 0 when it has none (not Linux, too old, or disabled)."""
    if platform.system() != "Linux":
        return 0
    libc = _libc()
    version = libc.syscall(SYSCALLS["create_ruleset"], None, ctypes.c_size_t(0),
                           ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(int(version), 0)


def fs_rights(abi: int) -> int:
    return max(rights for since, rights in FS_RIGHTS_BY_ABI.items() if abi >= since)


def grants(plan: Sequence[Mount], abi: int) -> list[tuple[str, int]]:
    """(path, rights) rules for the plan: binds granted, masks carved out of their parents."""
    rw, masks = fs_rights(abi), {Path(m.path) for m in plan if m.kind == "mask"}
    rules: list[tuple[str, int]] = []
    for mount in plan:
        if mount.kind in ("ro", "rw") and mount.link is None:
            rights = rw if mount.kind == "rw" else READ_RIGHTS
            rules += _carve(Path(mount.path), rights, masks)
    devices = [(path, FILE_RIGHTS | (READ_DIR if os.path.isdir(path) else 0))
               for path in DEVICES if os.path.exists(path)]
    return [*rules, *devices, (PROC, READ_RIGHTS)]


def _carve(root: Path, rights: int, masks: set[Path]) -> list[tuple[str, int]]:
    below = [m for m in masks if root in m.parents]
    if root in masks:
        return []
    if not below or not root.is_dir():
        return [(str(root), rights if root.is_dir() else rights & FILE_RIGHTS)]
    rules = [(str(root), READ_DIR)]
    for child in sorted(root.iterdir()):
        rules += _carve(child, rights, masks)
    return rules


def restrict(rules: Iterable[tuple[str, int]], abi: int, network: bool,
             ports: Iterable[int] = ()) -> None:
    """Restrict this process (and what it execs) to ``rules``; with the network cut, TCP only
    on ``ports`` (the relayed model ports); raises :class:`LandlockError`."""
    libc = _libc()
    handled_net = 0 if network or abi < 4 else NET_BIND_TCP | NET_CONNECT_TCP
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    attr = _RulesetAttr(fs_rights(abi), handled_net, scoped)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(SYSCALLS["create_ruleset"], ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
    _check(ruleset, "landlock_create_ruleset")
    try:
        for path, access in rules:
            # A right this kernel's ABI does not handle cannot be granted (EINVAL).
            _add_path_rule(libc, ruleset, path, access & fs_rights(abi))
        for port in ports if handled_net else ():
            rule = _NetPortAttr(handled_net, port)
            _check(libc.syscall(SYSCALLS["add_rule"], ruleset, RULE_NET_PORT, ctypes.byref(rule),
                                ctypes.c_uint32(0)), f"landlock_add_rule(port {port})")
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        _check(libc.syscall(SYSCALLS["restrict_self"], ruleset, ctypes.c_uint32(0)),
               "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _add_path_rule(libc: ctypes.CDLL, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone since the plan was made: nothing to grant
    try:
        rule = _PathBeneathAttr(access, fd)
        _check(libc.syscall(SYSCALLS["add_rule"], ruleset, RULE_PATH_BENEATH, ctypes.byref(rule),
                            ctypes.c_uint32(0)), f"landlock_add_rule({path})")
    finally:
        os.close(fd)


def _check(result: int, what: str) -> None:
    if result < 0:
        errno = ctypes.get_errno()
        raise LandlockError(errno, f"{what} failed: {os.strerror(errno)}")


def wrapper_argv(policy: Policy, abi: int, isolated: bool,
                 plan: Sequence[Mount] | None = None) -> list[str]:
    """The argv prefix that runs ARGV under ``policy`` (in namespaces of its own when
    ``isolated``): put the adapter's argv after it (``plan``: the policy's mount plan, when the
    caller made it already)."""
    if plan is None:
        plan = mount_plan(policy)
    spec = {"abi": abi, "network": policy.network, "workdir": str(policy.workdir),
            "isolate": isolated, "ports": sorted({e.port for e in policy.relayed}),
            "covers": covers(policy, plan) if isolated else [],
            "rules": grants(plan, abi)}
    return [sys.executable, "-P", "-m", "ai_proving_ground.sandbox.landlock", "--policy",
            json.dumps(spec, separators=(",", ":")), "--"]


def main(argv: Sequence[str] | None = None) -> int:
    """The wrapper: isolate, drop, restrict, then exec; never runs ARGV unrestricted."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 4 or args[0] != "--policy" or args[2] != "--":
        print("APG_USAGE usage: python -m ai_proving_ground.sandbox.landlock --policy JSON -- "
              "ARGV...", file=sys.stderr)
        return 2
    spec, command = json.loads(args[1]), args[3:]
    if os.getsid(0) != os.getpid():
        os.setsid()
    _libc().prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    network = bool(spec["network"])
    try:
        if spec.get("isolate"):
            isolate.enter(network_cut=not network)
            init = os.fork()
            if init:
                return isolate.wait_for(init)  # outside: the init's status is the adapter's
            _run_init(not network, [(str(p), bool(d), [(str(i), bool(k), ln) for i, k, ln in s])
                                    for p, d, s in spec.get("covers", [])])
        isolate.drop_capabilities()
        restrict([(str(p), int(a)) for p, a in spec["rules"]], int(spec["abi"]), network,
                 [int(p) for p in spec.get("ports", [])])
        os.chdir(spec["workdir"])
        os.environ["PWD"] = spec["workdir"]  # the name it was given, as bwrap --chdir does
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"APG_RUN_SANDBOX_FAILED landlock: {exc}; the adapter was not started",
              file=sys.stderr)
    return 126


def _run_init(network_cut: bool, covers: Sequence[Cover]) -> None:
    """PID 1 of the new namespaces: its /proc and covers, then the adapter's process, which
    alone returns from here."""
    isolate.become_init(network_cut, covers)
    adapter = os.fork()
    if adapter == 0:
        os.setpgid(0, 0)  # the init passes signals to the adapter's group, once
        return
    try:
        isolate.drop_capabilities()  # the init needs none either
        code = isolate.init(adapter)
    except OSError:
        code = 126
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())
