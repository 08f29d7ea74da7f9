"""How ``apg run`` confines its adapter: the run's paths turned into a sandbox policy.

What the adapter never sees, beyond what :mod:`ai_proving_ground.sandbox.confine` always hides:
the dataset file and its directory (checks, hidden verifier patches), the shipped datasets and
campaigns (inside the package, in a wheel), and the operator's HOME (both ``$HOME`` and the
account's home directory); ``apg run`` adds the escrow root. What it may read beyond the system,
this Python and the package: its ``## Reads:`` paths, the install prefixes of its
``## Commands:``, and the operator's extra reads (``SandboxOptions``). With the network cut, the
model endpoints :func:`plan_sandbox` accepted are relayed in (sockets in the run directory).
"""

from __future__ import annotations

import contextlib
import os
import pwd
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ai_proving_ground.escrow.locations import escrow_root
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.report import say
from ai_proving_ground.sandbox.confine import (
    Backend,
    Confinement,
    RunPaths,
    SandboxOptions,
    choose_backend,
    command_reads,
    run_policy,
)
from ai_proving_ground.sandbox.policy import SHIPPED_HIDDEN
from ai_proving_ground.sandbox.relay import with_sockets
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.adapters import Adapter
from ai_proving_ground.tasks.dataset import Dataset, Task
from ai_proving_ground.tasks.network_preflight import describe_relay, network_preflight


def run_home(run_dir: Path) -> Path:
    return run_dir / "home"


def run_tmp(run_dir: Path) -> Path:
    return run_dir / "tmp"


def run_work(run_dir: Path) -> Path:
    """The adapter's own writable folder (``APG_RUN_DIR``); the run directory is apg's."""
    return run_dir / "work"


def agent_git_dir(run_dir: Path) -> Path:
    """The agent's own git repository (``GIT_DIR``, created by its first ``git init``): the bed's
    ``.git`` is the harness's baseline repository, hidden from a confined adapter, and a commit
    there would make the attempt ``tampered``, so an agent that uses git gets this one instead,
    which the harness never reads."""
    return run_work(run_dir) / "git"


def run_folders_env(run_dir: Path, approot: Path) -> dict[str, str]:
    """The adapter's own folders beside its HOME, made (mode 0700), as its environment: TMPDIR,
    APG_RUN_DIR (its work folder; the rest of the run directory is apg's) and its own git
    repository, with the bed as the work tree."""
    for folder in (run_tmp(run_dir), run_work(run_dir)):
        folder.mkdir(mode=0o700, exist_ok=True)
    return {"TMPDIR": str(run_tmp(run_dir)), "APG_RUN_DIR": str(run_work(run_dir)),
            "GIT_DIR": str(agent_git_dir(run_dir)), "GIT_WORK_TREE": str(approot)}


def operator_homes(host: Mapping[str, str]) -> list[Path]:
    """``$HOME`` and the account's own home directory (they differ under a harness)."""
    homes = [Path(host["HOME"])] if host.get("HOME") else []
    with contextlib.suppress(KeyError):  # an account without a passwd entry
        homes.append(Path(pwd.getpwuid(os.getuid()).pw_dir))
    return homes


def hidden_paths(dataset: Dataset, task: Task) -> list[Path]:
    """What grades the task: the dataset, its directory, its hidden verifier."""
    hidden = [dataset.path, dataset.path.parent, *(PROJECT_ROOT / n for n in SHIPPED_HIDDEN)]
    patch = (task.hidden_verifier or {}).get("patch")
    if isinstance(patch, str) and patch:
        hidden.append(dataset.path.parent / patch)
    return hidden


def plan_sandbox(settings: Settings, unshare_net: bool, adapter: Adapter,
                 values: Mapping[str, str]) -> tuple[SandboxOptions, Backend]:
    """How this run's adapter will be confined (before anything is written): the options, with
    the model endpoints to relay when the network is cut (``values``: what the adapter's
    variables will hold), and the backend that works here. Refusals raise (exit 2)."""
    options = SandboxOptions.from_settings(settings, network=not unshare_net,
                                           hide=[escrow_root(settings)])
    backend = choose_backend(options)
    network = network_preflight(adapter.header.env, values, unshare_net, backend)
    return replace(options, relayed=network.relayed), backend


def confine_adapter(backend: Backend, options: SandboxOptions, approot: Path, run_dir: Path,
                    adapter: Adapter, dataset: Dataset, task: Task,
                    env: Mapping[str, str], host: Mapping[str, str]) -> Confinement:
    """The sandbox for this run; ``env`` is the adapter's environment (its HOME and PATH)."""
    home, tmp = Path(env["HOME"]), Path(env["TMPDIR"])
    homes = operator_homes(host)
    shared_home = home in homes  # a host-shared adapter, allowed deliberately
    declared = [Path(p) for p in adapter.header.reads]
    reads = [*declared, *command_reads(adapter.header.commands, env.get("PATH", "")),
             *options.extra_reads]
    hidden = hidden_paths(dataset, task) + list(options.extra_masks)
    if not shared_home:
        hidden += homes
    paths = RunPaths(approot=approot, run_dir=run_dir, home=home, tmp=tmp, adapter=adapter.path,
                     work=run_work(run_dir),
                     state_dir=run_dir.parent.parent, hidden=tuple(hidden))
    relayed = with_sockets(options.relayed, run_dir)
    confinement = backend.confine(replace(run_policy(paths, reads, options.network),
                                          relayed=relayed))
    if not options.network:
        say("APG_RUN_NET_RELAYED", f"run {run_dir.name}: {describe_relay(relayed)}")
    if confinement.backend == "none":
        say("APG_RUN_UNCONFINED_ALLOWED", f"run {run_dir.name}: no sandbox here "
            f"({'; '.join(confinement.notes)}); the adapter runs unconfined as the operator allowed")
    return confinement

