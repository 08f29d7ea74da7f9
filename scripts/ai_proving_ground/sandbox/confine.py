"""Choosing the sandbox for one adapter run, and the policy a run gets.

:func:`run_policy` builds the policy of one ``apg run``: it writes the bed, its work folder in
the run directory and the run's own HOME and TMP; it reads the run directory itself (apg's
records there, ``run.json``, the request, the prompt and the logs, stay apg's: the adapter can
neither change nor replace them); it reads the system, this Python and the installed package, the
adapter and whatever the adapter or the operator declared; it never sees the baseline directory
(other runs' records, grades, dumps), the dataset's directory (checks, hidden verifiers,
reference solutions), the escrow, the operator's HOME, host secrets or a Docker socket.
:func:`choose_backend` picks the backend: bubblewrap when it works here, else Landlock (in
namespaces of its own where the kernel allows them), else it refuses with ``APG_RUN_UNCONFINED``
unless the operator allowed running unconfined. :meth:`Backend.confine` builds the argv prefix
(:data:`PREFIXES`), with the model relay's forwarder after it when the network is cut and
endpoints are relayed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ai_proving_ground.errors import ApgError
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.sandbox import bwrap, isolate, landlock, relay
from ai_proving_ground.sandbox.policy import (
    DOCKER_SOCKETS,
    SYSTEM_READS,
    SYSTEM_SECRETS,
    Mount,
    Policy,
    link_hops,
    mount_plan,
    project_reads,
    python_reads,
    resolv_conf_reads,
    resolved,
)
from ai_proving_ground.sandbox.relay import Endpoint
from ai_proving_ground.settings import Settings

# "none" runs unconfined on purpose, and only with allow_unconfined.
BACKENDS = ("auto", "bwrap", "landlock", "none")
UNCONFINED_VARIABLE = "AI_PG_ALLOW_UNCONFINED"


@dataclass(frozen=True)
class SandboxOptions:
    """How the operator wants adapters confined; resolved once at the edge."""

    allow_unconfined: bool = False  # AI_PG_ALLOW_UNCONFINED=1: run unconfined when none works
    network: bool = True  # --unshare-net: loopback and the model relay only
    backend: str = "auto"  # auto (bwrap, else Landlock), one of them only, or none
    extra_reads: tuple[Path, ...] = ()  # more read-only paths (an npm prefix, a model cache)
    extra_masks: tuple[Path, ...] = ()  # more paths the adapter must never see
    relayed: tuple[Endpoint, ...] = ()  # model endpoints to relay into a cut network

    @classmethod
    def from_settings(cls, settings: Settings, network: bool = True,
                      hide: Iterable[Path] = ()) -> SandboxOptions:
        """AI_PG_ALLOW_UNCONFINED, AI_PG_SANDBOX, AI_PG_SANDBOX_READS and AI_PG_SANDBOX_HIDE;
        ``hide`` adds what the caller knows must stay hidden (the escrow root)."""
        return cls(allow_unconfined=settings.allow_unconfined, network=network,
                   backend=settings.sandbox or "auto",
                   extra_reads=tuple(Path(p) for p in settings.sandbox_reads),
                   extra_masks=(*(Path(p) for p in settings.sandbox_hide), *hide))


@dataclass(frozen=True)
class RunPaths:
    """The paths of one run that the policy is made of."""

    approot: Path
    run_dir: Path
    home: Path
    tmp: Path
    adapter: Path
    state_dir: Path  # the baseline directory: dumps, other runs, stored grades
    # The adapter's own writable folder inside the run directory (None: ``run_dir/work``); the
    # run directory itself, which holds apg's records, is only readable.
    work: Path | None = None
    hidden: tuple[Path, ...] = ()  # dataset, hidden verifier, escrow, operator's HOME, ...


@dataclass(frozen=True)
class Confinement:
    """The sandbox an adapter runs in: an argv prefix, the policy and how it was chosen."""

    backend: str  # bwrap, landlock or none
    prefix: tuple[str, ...]
    policy: Policy
    unconfined_allowed: bool
    notes: tuple[str, ...] = ()
    own_pid_namespace: bool = False  # other processes hidden, /proc the sandbox's own
    # The mounts the prefix was built from: the record says what the sandbox got, not a second
    # reading of the file system (the plan resolves every path: 4% of a campaign attempt).
    plan: tuple[Mount, ...] | None = None  # None: made again when recorded

    def wrap(self, argv: Sequence[str]) -> list[str]:
        return [*self.prefix, *argv]

    def relaying(self) -> contextlib.AbstractContextManager[object]:
        """While the adapter runs: the model relay serves its endpoints (none: nothing)."""
        return relay.ModelRelay(self.policy.relayed).serving()

    def as_record(self) -> dict[str, object]:
        record: dict[str, object] = {"backend": self.backend,
                                     "unconfined_allowed": self.unconfined_allowed,
                                     "notes": list(self.notes)}
        if self.backend != "none":
            record.update(self.policy.as_record(self.plan))
            record["own_pid_namespace"] = self.own_pid_namespace
        return record


@dataclass(frozen=True)
class Backend:
    """The sandbox that works on this machine, chosen before a run directory exists."""

    name: str  # bwrap, landlock or none
    unconfined_allowed: bool
    program: str = ""  # bwrap's path
    abi: int = 0  # Landlock's ABI
    notes: tuple[str, ...] = ()
    isolated: bool = False  # in namespaces of its own: processes hidden, a network of its own

    @property
    def can_relay(self) -> bool:
        """It can cut the network and still relay model endpoints (a network namespace)."""
        return self.isolated

    def confine(self, policy: Policy) -> Confinement:
        # No sandbox, no mounts (an unconfined run was never refused for a plan's conflicts).
        plan = None if self.name == "none" else tuple(mount_plan(policy))
        prefix = PREFIXES[self.name](self, policy, plan or ())
        if policy.relayed:
            if policy.network or not self.can_relay:
                raise ApgError("APG_RUN_NET_REFUSED", f"the {self.name} sandbox cannot relay "
                               "model endpoints here (they are relayed only into a network "
                               "namespace of the sandbox's own)", exit_code=2)
            prefix += relay.forwarder_argv(policy.relayed)
        return Confinement(self.name, tuple(prefix), policy, self.unconfined_allowed, self.notes,
                           own_pid_namespace=self.isolated, plan=plan)


def _bwrap_prefix(backend: Backend, policy: Policy, plan: Sequence[Mount]) -> list[str]:
    return bwrap.bwrap_argv(backend.program, policy, plan)


def _landlock_prefix(backend: Backend, policy: Policy, plan: Sequence[Mount]) -> list[str]:
    return landlock.wrapper_argv(policy, backend.abi, backend.isolated, plan)


def _no_prefix(backend: Backend, policy: Policy, plan: Sequence[Mount]) -> list[str]:
    del backend, policy, plan
    return []


# The argv prefix each backend puts before the adapter.
PREFIXES = {"bwrap": _bwrap_prefix, "landlock": _landlock_prefix, "none": _no_prefix}


def choose_backend(options: SandboxOptions) -> Backend:
    """The first backend that works here; ``APG_RUN_UNCONFINED`` when none does and the
    operator did not allow running unconfined."""
    if options.backend not in BACKENDS:
        raise ApgError("APG_USAGE", f"sandbox backend {options.backend!r} is not one of "
                       f"{', '.join(BACKENDS)}", exit_code=2)
    allowed, tried = options.allow_unconfined, []
    if options.backend == "none":
        tried.append("the operator asked for no sandbox (AI_PG_SANDBOX=none)")
    if options.backend in ("auto", "bwrap"):
        found, why = _bwrap_here()
        if found is not None:
            return Backend("bwrap", allowed, program=found, isolated=True)
        tried.append(why)
    if options.backend in ("auto", "landlock"):
        abi = landlock.abi_version()
        why_not = isolate.available(network_cut=not options.network) if abi > 0 else None
        sockets = [p for p in DOCKER_SOCKETS if os.path.exists(p)] if why_not else []
        if abi > 0 and not sockets:
            shared = () if why_not is None else (
                f"no namespaces for the Landlock sandbox ({why_not}): other processes stay "
                "visible and a cut network cannot relay model endpoints",)
            return Backend("landlock", allowed, abi=abi, isolated=why_not is None,
                           notes=(*tried, f"Landlock ABI {abi}", *shared))
        tried.append(f"Landlock without namespaces ({why_not}) cannot hide {', '.join(sockets)} "
                     "(its rules do not cover connecting to a socket)" if sockets else
                     "Landlock is not available (it needs Linux 5.13+ with the landlock LSM)")
    if allowed:
        return Backend("none", True, notes=(*tried, f"{UNCONFINED_VARIABLE}=1: unconfined"))
    raise ApgError("APG_RUN_UNCONFINED", f"no sandbox for the adapter: {'; '.join(tried)}. "
                   "Install bubblewrap (apt-get install bubblewrap) or run on Linux 5.13+ with "
                   f"Landlock enabled; or set {UNCONFINED_VARIABLE}=1 to run adapters unconfined "
                   "deliberately (recorded in run.json and the envelope)")


@cache
def _bwrap_here() -> tuple[str | None, str]:
    """bwrap's path when it can build a sandbox on this machine, else why not (asked once)."""
    found = bwrap.find_bwrap()
    if found is None:
        return None, "bubblewrap (bwrap) is not installed"
    why = bwrap.probe(found)
    return (None, f"bubblewrap does not work here: {why}") if why else (found, "")


def run_policy(paths: RunPaths, reads: Iterable[Path], network: bool) -> Policy:
    """The policy of one adapter run (see the module doc)."""
    work = paths.work or paths.run_dir / "work"
    writable = [paths.approot, work, paths.home, paths.tmp]
    readable = [Path(p) for p in SYSTEM_READS] + python_reads() + project_reads(PROJECT_ROOT)
    # Readable, never writable: a record the adapter could rewrite, replace or turn into a
    # folder would let it forge or void its own attempt.
    readable += [*resolv_conf_reads(), paths.run_dir, paths.adapter, *reads]
    # The bed's .git is the harness's baseline repository (objects, refs, config, hooks): never
    # the agent's to read or write; its own git goes to GIT_DIR in its work folder.
    masked = [Path(p) for p in (*SYSTEM_SECRETS, *DOCKER_SOCKETS)] + [paths.state_dir,
                                                                     paths.approot / ".git"]
    real_writable = {resolved(p) for p in writable}
    masked += [p for p in paths.hidden if resolved(p) not in real_writable]
    return Policy(workdir=paths.approot, home=paths.home, tmp=paths.tmp,
                  writable=tuple(writable), readable=tuple(readable), masked=tuple(masked),
                  network=network)


def command_reads(commands: Iterable[str], search_path: str) -> list[Path]:
    """The install prefix of each command found on ``search_path``, both where PATH finds it
    and where its symlink leads; a command not found adds nothing (the adapter says so)."""
    found: list[Path] = []
    for name in commands:
        hit = shutil.which(name, path=search_path)
        if hit is not None:
            chain = link_hops(hit) or [Path(hit).absolute()]
            found += [*(install_prefix(hop) for hop in chain), install_prefix(resolved(hit))]
    return found


def install_prefix(program: Path) -> Path:
    """``P`` for ``P/node_modules/...`` (the outermost: an npm package needs its siblings, such
    as a platform binary), else ``X`` for ``X/bin/NAME``, else the program's folder."""
    modules = [parent for parent in program.parents if parent.name == "node_modules"]
    if modules:
        return modules[-1].parent
    return program.parent.parent if program.parent.name == "bin" else program.parent
