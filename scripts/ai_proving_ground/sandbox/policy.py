"""What an adapter's sandbox allows, as data: an allow-list of paths plus masks.

A :class:`Policy` says which paths the adapter may read, which it may write, and which it must
never see even where an allowed path contains them (``masked``). Nothing else of the host's
file system exists inside the sandbox, so the escrow, the campaign directory, other beds and the
operator's HOME are out of reach unless an allowed path holds them, and then a mask hides them.
:func:`mount_plan` turns a policy into one ordered list of mounts that both backends follow:
bubblewrap mounts them in order (a deeper mount lands on top of a shallower one), Landlock grants
them as rules and carves the masks out of the grants that contain them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import is_within
from ai_proving_ground.paths import PACKAGE_DIR
from ai_proving_ground.sandbox.relay import Endpoint

# The system's programs and libraries; each is bound read-only when it exists (a symlink such
# as /bin -> usr/bin stays a symlink).
SYSTEM_READS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# Host secrets inside the system paths: masked even though /etc is readable.
SYSTEM_SECRETS = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers",
                  "/etc/sudoers.d", "/etc/ssh", "/etc/ssl/private")
# Sockets that hand out the host: never reachable, whatever an adapter declares.
DOCKER_SOCKETS = ("/run/docker.sock", "/var/run/docker.sock", "/run/podman/podman.sock",
                  "/var/run/podman/podman.sock", "/run/containerd/containerd.sock")
# The project folders apg itself needs at run time (the package, adapters, recipes and
# fixtures); datasets/, campaigns/, tests/ and build/ stay out.
PROJECT_READS = ("scripts", "ddev", "recipes", "fixtures")
# Shipped folders an adapter never sees, even where the package is readable (a wheel ships them
# inside it, under ai_proving_ground/_data/).
SHIPPED_HIDDEN = ("datasets", "campaigns")
# Where Python finds installed packages (a user site lies in a HOME: only that folder is read).
SITE_DIRS = ("site-packages", "dist-packages")

MOUNT_KINDS = ("ro", "rw", "mask")


@dataclass(frozen=True)
class Policy:
    """One adapter's sandbox: where it starts, what it reads, writes and never sees."""

    workdir: Path
    home: Path
    tmp: Path
    writable: tuple[Path, ...]
    readable: tuple[Path, ...]
    masked: tuple[Path, ...]
    network: bool = True  # False: a network namespace with only loopback (or, for Landlock
    # without namespaces, no TCP at all) and the relayed model endpoints
    relayed: tuple[Endpoint, ...] = ()  # model endpoints relayed into a cut network

    def as_record(self, plan: Sequence[Mount] | None = None) -> dict[str, object]:
        """What the sandbox allowed, for run.json (mounts only where the path exists; ``plan``:
        the mount plan the sandbox was built from, else made now)."""
        if plan is None:
            plan = mount_plan(self)
        return {
            "workdir": str(self.workdir), "home": str(self.home), "tmp": str(self.tmp),
            "network": self.network,
            "writable": [m.path for m in plan if m.kind == "rw"],
            "readable": [m.path for m in plan if m.kind == "ro"],
            "masked": [m.path for m in plan if m.kind == "mask"],
            "model_relay": [e.as_record() for e in self.relayed],
        }


@dataclass(frozen=True, order=True)
class Mount:
    """One step of the mount plan: ``path`` (absolute, resolved) bound ``ro``/``rw`` or masked.

    ``link`` is set when the policy named a symlink: the link is recreated, pointing at ``path``.
    """

    depth: int
    path: str
    kind: str
    link: str | None = field(default=None, compare=False)
    is_dir: bool = field(default=True, compare=False)


def resolved(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


def link_hops(path: Path | str, most: int = 40) -> list[Path]:
    """Each symlink met on the way from ``path`` to the file it names, one link at a time (the
    link's own path, its folder resolved): where every hop lives must exist in the sandbox."""
    hops: list[Path] = []
    current = resolved(Path(path).absolute().parent) / Path(path).name
    while current.is_symlink() and current not in hops and len(hops) < most:
        hops.append(current)
        target = current.parent / os.readlink(current)
        current = resolved(target.parent) / target.name
    return hops


def mount_plan(policy: Policy) -> list[Mount]:
    """Binds for every existing readable and writable path, then masks wherever a bound path
    contains a masked one, ordered so that a deeper mount always lands on a shallower one."""
    binds: dict[Path, Mount] = {}
    named: list[Path] = []
    for kind, paths in (("ro", policy.readable), ("rw", policy.writable)):
        for raw in paths:
            real = resolved(raw)
            if real.exists():
                binds[real] = _mount(real, kind)  # writable wins over readable at one path
                named.append(Path(os.path.abspath(raw)))
    links = _links(named, set(binds))
    masks: dict[Path, Mount] = {}
    for raw in policy.masked:
        real = resolved(raw)
        if real.exists() and any(is_within(real, bound) for bound in binds):
            if binds.get(real, _mount(real, "ro")).kind == "rw":
                raise ApgError("APG_RUN_SANDBOX_CONFLICT", f"{real} must be both writable and "
                               "hidden in the adapter's sandbox; move it (the bed, the run "
                               "directory) away from the escrow, campaign and dataset directories")
            masks[real] = _mount(real, "mask")
            binds.pop(real, None)
    return sorted([*binds.values(), *masks.values(), *links])


def _links(named: list[Path], bound: set[Path]) -> list[Mount]:
    """Paths the policy named through a symlink (/bin -> usr/bin, a bed reached through a linked
    folder), recreated as links to their real path unless a bound or linked parent shows them."""
    links = {path: resolved(path) for path in named if resolved(path) != path}
    shown = bound | set(links)
    return [Mount(len(path.parts), str(path), "ro", link=str(real))
            for path, real in links.items() if not any(o != path and is_within(path, o) for o in shown)]


def _mount(path: Path, kind: str) -> Mount:
    return Mount(len(path.parts), str(path), kind, is_dir=path.is_dir())


# A mask a mount namespace mounts over: its path, whether it is a directory, and what the plan
# shows inside it (bound paths and links: path, is a directory, link target), mounted back in.
Cover = tuple[str, bool, list[tuple[str, bool, "str | None"]]]


def covers(policy: Policy, plan: Sequence[Mount] | None = None) -> list[Cover]:
    """Every existing masked path, resolved, shallowest first, with the plan's entries inside it
    that are not inside another of them: where a mount namespace lets the sandbox mount over
    its masks (an empty directory with those entries bound back in, or /dev/null), a mask is
    absent as under bubblewrap, a Unix socket's path included, not merely refused."""
    plan = [m for m in (mount_plan(policy) if plan is None else plan) if m.kind != "mask"]
    found: dict[str, Cover] = {}
    for raw in policy.masked:
        real = resolved(raw)
        if not real.exists() or any(m.path == str(real) for m in plan):
            continue
        inside = [m for m in plan if real in Path(m.path).parents]
        outer = [m for m in inside if not any(Path(o.path) in Path(m.path).parents
                                              for o in inside)]
        found[str(real)] = (str(real), real.is_dir(),
                            [(m.path, m.is_dir, m.link) for m in outer])
    return sorted(found.values(), key=lambda c: (len(Path(c[0]).parts), c[0]))


def masks_under(plan: Iterable[Mount], root: str) -> list[str]:
    """The masked paths strictly below ``root``."""
    base = Path(root)
    return [m.path for m in plan if m.kind == "mask" and base in Path(m.path).parents]


def python_reads() -> list[Path]:
    """This interpreter wherever it lives (a venv, pyenv, /usr), its site folders (a user site
    too) and the folder the package is imported from (an editable checkout's scripts/)."""
    from_python = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    paths = [Path(p) for p in sorted(from_python)]
    paths.append(resolved(sys.executable).parent.parent)
    # A venv's python may reach its interpreter through links in folders of their own (nox's
    # .nox/_interpreters/python3.12 -> pyenv): without them the venv's python is "not found".
    paths += [hop.parent for hop in link_hops(sys.executable)]
    # Site folders only: sys.path may also hold a harness's own folders (pytest's tests/).
    paths += [Path(entry) for entry in sys.path
              if Path(entry).name in SITE_DIRS and os.path.isdir(entry)]
    return [*paths, PACKAGE_DIR.parent]


def project_reads(project_root: Path) -> list[Path]:
    """The shipped folders apg needs (its datasets and campaigns are masked: see SHIPPED_HIDDEN)."""
    return [project_root / name for name in PROJECT_READS]


def resolv_conf_reads() -> list[Path]:
    """A symlinked /etc/resolv.conf points into /run, which is not bound: bind its target."""
    conf = Path("/etc/resolv.conf")
    return [resolved(conf)] if conf.is_symlink() else []
