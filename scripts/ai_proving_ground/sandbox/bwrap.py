"""The bubblewrap backend: a policy as a ``bwrap`` argv prefix.

The sandbox starts from an empty root: only the mount plan's paths exist in it, ``/proc`` and
``/dev`` are the sandbox's own, ``/tmp`` is an empty tmpfs and the root is read-only. The adapter
runs in new PID, IPC, UTS and cgroup namespaces (and a network namespace with only loopback when
the network is cut: the model relay's forwarder, :mod:`ai_proving_ground.sandbox.relay`, is put
before the adapter by :mod:`ai_proving_ground.sandbox.confine`), with every capability dropped
(bwrap keeps them for root otherwise, and a root with CAP_SYS_ADMIN could unmount a mask; the
bounding set stays as it was, but bwrap's no_new_privs keeps any exec from raising the empty
permitted set), in a new session (no TIOCSTI into the caller's terminal), and dies with its
parent: when bwrap goes, the PID namespace and everything in it go.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import PurePath

from ai_proving_ground.sandbox.policy import Mount, Policy, mount_plan

BWRAP = "bwrap"
NAMESPACES = ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try")
# Mounts that every sandbox gets, placed in the plan by depth like any other.
SPECIAL = (("--proc", "/proc"), ("--dev", "/dev"), ("--tmpfs", "/tmp"))
PROBE_TIMEOUT_S = 10.0


def find_bwrap() -> str | None:
    return shutil.which(BWRAP)


def probe(bwrap: str) -> str | None:
    """None when bwrap can build a sandbox here, else why not (its own words)."""
    argv = [bwrap, "--ro-bind", "/", "/", "--cap-drop", "ALL", *NAMESPACES, "--proc", "/proc",
            "--dev", "/dev", "--die-with-parent", "--new-session", "true"]
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap} could not run: {exc}"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return f"{bwrap} exited {done.returncode}: {said[-1] if said else 'no message'}"
    return None


def bwrap_argv(bwrap: str, policy: Policy, plan: Sequence[Mount] | None = None) -> list[str]:
    """``bwrap ... --`` : put the adapter's argv after it (``plan``: the policy's mount plan,
    when the caller made it already)."""
    argv = [bwrap, "--die-with-parent", "--new-session", "--cap-drop", "ALL", *NAMESPACES]
    if not policy.network:
        argv.append("--unshare-net")
    if plan is None:
        plan = mount_plan(policy)
    argv += _mounts(plan)
    # Last, once every mount point exists: the root and the masks' empty tmpfs read-only.
    argv += ["--remount-ro", "/"]
    for mount in plan:
        if mount.kind == "mask" and mount.is_dir:
            argv += ["--remount-ro", mount.path]
    argv += ["--chdir", str(policy.workdir), "--"]
    return argv


def _mounts(plan: Sequence[Mount]) -> list[str]:
    special = [Mount(len(PurePath(path).parts), path, flag) for flag, path in SPECIAL]
    argv: list[str] = []
    for mount in sorted([*plan, *special]):
        argv += _mount_args(mount)
    return argv


def _mount_args(mount: Mount) -> list[str]:
    if mount.kind.startswith("--"):
        return [mount.kind, mount.path]
    if mount.link is not None:
        return ["--symlink", mount.link, mount.path]
    if mount.kind == "mask":
        # A directory becomes an empty tmpfs; a file reads as empty.
        return ["--tmpfs", mount.path] if mount.is_dir else ["--ro-bind", "/dev/null", mount.path]
    flag = "--bind" if mount.kind == "rw" else "--ro-bind"
    return [flag, mount.path, mount.path]
