"""The sandbox: the mount plan, both backends for real, detection and the refusal.

Tests that run a backend skip with a message naming it when it is absent (bubblewrap is the
Debian package ``bubblewrap``; Landlock needs Linux 5.13+ with the landlock LSM).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sandbox import broker, bwrap, confine, landlock, policy
from ai_proving_ground.sandbox.confine import (
    Backend,
    RunPaths,
    SandboxOptions,
    choose_backend,
    command_reads,
    run_policy,
)
from ai_proving_ground.sandbox.policy import Mount, Policy, link_hops, mount_plan, python_reads

BWRAP = shutil.which("bwrap")
LANDLOCK_ABI = landlock.abi_version()
needs_bwrap = pytest.mark.skipif(
    BWRAP is None or bwrap.probe(BWRAP) is not None,
    reason="needs bubblewrap (apt-get install bubblewrap) working on this machine")
needs_landlock = pytest.mark.skipif(
    LANDLOCK_ABI == 0, reason="needs Landlock (Linux 5.13+ with the landlock LSM enabled)")
BACKENDS = [pytest.param("bwrap", marks=needs_bwrap),
            pytest.param("landlock", marks=needs_landlock)]


class World:
    """A bed with a run directory, an earlier run, an escrow and a fake operator HOME."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.bed = root / "bed"
        self.state = self.bed / ".ai-proving-ground"
        self.run_dir = self.state / "runs" / "apg-run-now"
        self.earlier = self.state / "runs" / "apg-run-before" / "run.json"
        self.escrow = root / "escrow" / "escrow_verify.py"
        self.home_key = root / "operator" / ".ssh" / "id_rsa"
        self.dataset = self.bed / "datasets" / "tasks.yml"
        for path in (self.run_dir / "home", self.run_dir / "tmp", self.run_dir / "work",
                     self.bed / "db"):
            path.mkdir(parents=True)
        for path, text in ((self.earlier, "EARLIER-RECORD"), (self.escrow, "ESCROWED"),
                           (self.home_key, "PRIVATE-KEY"), (self.dataset, "DATASET"),
                           (self.bed / "db" / "site.sqlite", "db")):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def policy(self, reads: tuple[Path, ...] = (), network: bool = True) -> Policy:
        paths = RunPaths(approot=self.bed, run_dir=self.run_dir, home=self.run_dir / "home",
                         tmp=self.run_dir / "tmp", adapter=Path("/bin/sh"), state_dir=self.state,
                         hidden=(self.escrow.parent, self.home_key.parent.parent,
                                 self.dataset.parent))
        return run_policy(paths, reads, network)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def sandboxed(backend: str, policy: Policy, script: str) -> subprocess.CompletedProcess[str]:
    chosen = choose_backend(SandboxOptions(backend=backend))
    argv = chosen.confine(policy).wrap(["/bin/sh", "-c", script])
    env = {"PATH": os.environ["PATH"], "TMPDIR": str(policy.tmp), "HOME": str(policy.home)}
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60,
                          stdin=subprocess.DEVNULL)


def readable(backend: str, policy: Policy, path: Path) -> bool:
    done = sandboxed(backend, policy, f"cat '{path}' >/dev/null 2>&1 && echo READ || echo DENIED")
    assert done.stdout.strip() in {"READ", "DENIED"}, done.stderr  # the sandbox itself ran
    return done.stdout.strip() == "READ"


# ---------------------------------------------------------------------------- the plan


def test_plan_orders_mounts_by_depth_and_masks_only_inside_bound_paths(world: World) -> None:
    plan = mount_plan(world.policy(reads=(world.root,)))
    kinds = {m.path: m.kind for m in plan}
    assert kinds[str(world.root.resolve())] == "ro"
    assert kinds[str(world.bed.resolve())] == "rw"
    assert kinds[str(world.state.resolve())] == "mask"  # other runs, inside the writable bed
    assert kinds[str(world.run_dir.resolve())] == "ro"  # this run's directory back on top: apg's
    assert kinds[str((world.run_dir / "work").resolve())] == "rw"  # the adapter's folder in it
    assert kinds[str(world.escrow.parent.resolve())] == "mask"
    assert [m.depth for m in plan] == sorted(m.depth for m in plan)
    # Without the broad read, the escrow is simply not bound: nothing to mask.
    narrow = {m.path for m in mount_plan(world.policy())}
    assert str(world.escrow.parent.resolve()) not in narrow
    assert str(world.state.resolve()) in narrow


def test_a_path_both_writable_and_hidden_is_refused(world: World) -> None:
    policy = Policy(workdir=world.bed, home=world.run_dir, tmp=world.run_dir,
                    writable=(world.bed,), readable=(), masked=(world.bed,))
    with pytest.raises(ApgError) as caught:
        mount_plan(policy)
    assert caught.value.token == "APG_RUN_SANDBOX_CONFLICT"


def test_a_declared_read_never_uncovers_a_docker_socket(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    socket = tmp_path / "var" / "run" / "docker.sock"
    socket.parent.mkdir(parents=True)
    socket.write_text("")
    run.mkdir()
    monkeypatch.setattr(confine, "DOCKER_SOCKETS", (str(socket),))
    paths = RunPaths(approot=run, run_dir=run, home=run, tmp=run, adapter=Path("/bin/sh"),
                     state_dir=tmp_path / "state")
    plan = mount_plan(run_policy(paths, [tmp_path / "var"], True))
    assert Mount(len(socket.parts), str(socket), "mask") in plan


def test_bwrap_argv_drops_capabilities_and_dies_with_its_parent(world: World) -> None:
    argv = bwrap.bwrap_argv("/usr/bin/bwrap", world.policy(network=False))
    for flag in ("--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[-3:] == ["--chdir", str(world.bed), "--"]
    assert "--unshare-net" not in bwrap.bwrap_argv("/usr/bin/bwrap", world.policy())


def test_command_reads_are_the_install_prefixes(tmp_path: Path) -> None:
    prefix = tmp_path / "npm"
    real = prefix / "lib" / "node_modules" / "tool" / "cli.js"
    real.parent.mkdir(parents=True)
    real.write_text("#!/bin/sh\n")
    real.chmod(0o755)
    (prefix / "bin").mkdir()
    (prefix / "bin" / "tool").symlink_to(real)
    found = command_reads(["tool", "not-installed"], str(prefix / "bin"))
    # npm's global layout: bin/ and lib/node_modules/ (with the package's siblings) both readable.
    assert found == [prefix, (prefix / "lib").resolve()]
    local = tmp_path / "project" / "node_modules" / ".bin"
    local.mkdir(parents=True)
    (local / "tool").symlink_to(real)
    assert command_reads(["tool"], str(local)) == [tmp_path / "project", (prefix / "lib").resolve()]


def link_chain(tmp_path: Path) -> tuple[Path, Path]:
    """A venv's python as nox makes one: bin/python -> python3.12 -> a link in a folder of its
    own (.nox/_interpreters) -> the real interpreter (pyenv's)."""
    real = tmp_path / "pyenv" / "bin" / "python3.12"
    real.parent.mkdir(parents=True)
    real.write_text("#!/bin/sh\n")
    real.chmod(0o755)
    interpreters = tmp_path / "nox" / "_interpreters"
    interpreters.mkdir(parents=True)
    (interpreters / "python3.12").symlink_to(real)
    venv_bin = tmp_path / "nox" / "eee" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python3.12").symlink_to(interpreters / "python3.12")
    (venv_bin / "python").symlink_to("python3.12")
    return venv_bin / "python", interpreters


def test_every_hop_of_a_link_chain_is_found(tmp_path: Path) -> None:
    python, interpreters = link_chain(tmp_path)
    venv_bin = python.parent.resolve()
    assert link_hops(python) == [venv_bin / "python", venv_bin / "python3.12",
                                 interpreters.resolve() / "python3.12"]
    assert link_hops(tmp_path / "pyenv" / "bin" / "python3.12") == []
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert link_hops(loop) == [tmp_path.resolve() / "loop"]


def test_the_interpreters_link_folders_are_readable(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # What broke the eee session: nox's venv python reached pyenv's through .nox/_interpreters,
    # which the sandbox did not bind, so the confined oracle's apg was "not found".
    python, interpreters = link_chain(tmp_path)
    monkeypatch.setattr(policy.sys, "executable", str(python))
    assert interpreters.resolve() in python_reads()
    assert interpreters.resolve() in command_reads(["python"], str(python.parent))


# ---------------------------------------------------------------------------- detection


def test_no_backend_refuses_with_a_token_unless_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confine, "_bwrap_here", lambda: (None, "bubblewrap (bwrap) is not installed"))
    monkeypatch.setattr(landlock, "abi_version", lambda: 0)
    with pytest.raises(ApgError) as caught:
        choose_backend(SandboxOptions())
    assert caught.value.token == "APG_RUN_UNCONFINED"
    assert "bubblewrap" in caught.value.message and "AI_PG_ALLOW_UNCONFINED=1" in caught.value.message
    allowed = choose_backend(SandboxOptions(allow_unconfined=True))
    assert (allowed.name, allowed.unconfined_allowed) == ("none", True)


def test_landlock_is_the_fallback_when_bwrap_does_not_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(confine, "_bwrap_here", lambda: (None, "bubblewrap does not work here"))
    monkeypatch.setattr(landlock, "abi_version", lambda: 3)
    chosen = choose_backend(SandboxOptions())
    assert (chosen.name, chosen.abi) == ("landlock", 3)
    assert "bubblewrap does not work here" in chosen.notes


def test_no_sandbox_on_request_needs_the_opt_out() -> None:
    with pytest.raises(ApgError) as caught:
        choose_backend(SandboxOptions(backend="none"))
    assert caught.value.token == "APG_RUN_UNCONFINED"
    assert choose_backend(SandboxOptions(backend="none", allow_unconfined=True)) == \
        Backend("none", True, notes=("the operator asked for no sandbox (AI_PG_SANDBOX=none)",
                                     "AI_PG_ALLOW_UNCONFINED=1: unconfined"))


# ---------------------------------------------------------------------------- for real


@pytest.mark.parametrize("backend", BACKENDS)
def test_what_the_sandbox_reads_and_writes(backend: str, world: World) -> None:
    policy = world.policy(reads=(world.root,))  # a broad read: the masks must do the work
    for secret in (world.earlier, world.escrow, world.home_key, world.dataset, Path("/etc/shadow")):
        assert not readable(backend, policy, secret), secret
    site = f"{sys.executable} -c 'import ai_proving_ground.cli.main'"
    done = sandboxed(backend, policy, f"echo x > '{world.bed}/db/site.sqlite' && "
                     f"echo x > '{world.run_dir}/work/out' && echo x > \"$TMPDIR/t\" && {site}")
    assert done.returncode == 0, done.stderr
    # apg's records beside the work folder: readable, never written, replaced or removed.
    (world.run_dir / "run.json").write_text("APG-RECORD", encoding="utf-8")
    done = sandboxed(backend, policy, f"cat '{world.run_dir}/run.json' && "
                     f"{{ echo x > '{world.run_dir}/run.json' || mv '{world.run_dir}/run.json' "
                     f"'{world.run_dir}/work/' || rm -f '{world.run_dir}/run.json' || "
                     f"mkdir '{world.run_dir}/new'; }}")
    assert done.stdout == "APG-RECORD" and done.returncode != 0, done.stderr
    assert (world.run_dir / "run.json").read_text(encoding="utf-8") == "APG-RECORD"
    assert not (world.run_dir / "new").exists()
    done = sandboxed(backend, policy, f"echo x > '{world.escrow}'")
    assert done.returncode != 0 and world.escrow.read_text(encoding="utf-8") == "ESCROWED"
    assert world.earlier.read_text(encoding="utf-8") == "EARLIER-RECORD"


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_beds_repository_is_hidden_and_the_agent_gets_its_own(backend: str,
                                                                  world: World) -> None:
    # The bed's .git is the harness's (baseline tag, objects, config): a confined agent can
    # neither read it nor plant anything in it; with GIT_DIR (as apg run sets it) its own
    # git init and commit land in its work folder.
    subprocess.run(["git", "init", "-q", str(world.bed)], check=True)
    config = world.bed / ".git" / "config"
    before = config.read_bytes()
    policy = world.policy()
    assert not readable(backend, policy, config)
    mine = world.run_dir / "work" / "git"
    done = sandboxed(backend, policy, f"cd '{world.bed}' && "
                     f"{{ echo '[core] fsmonitor = touch /tmp/x' >> .git/config; "
                     f"touch .git/hooks/post-commit; true; }} && "
                     f"export GIT_DIR='{mine}' GIT_WORK_TREE='{world.bed}' && git init -q && "
                     "git -c user.name=a -c user.email=a@b commit -q --allow-empty -m mine && "
                     "git log --format=%s")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "mine"
    assert config.read_bytes() == before
    assert not (world.bed / ".git" / "hooks" / "post-commit").exists()
    assert (mine / "HEAD").is_file()


@pytest.mark.parametrize("backend", BACKENDS)
def test_nothing_outside_the_policy_exists(backend: str, world: World, tmp_path: Path) -> None:
    beside = tmp_path.parent / f"{tmp_path.name}-other-bed"
    beside.mkdir()
    (beside / "file").write_text("OTHER")
    try:
        assert not readable(backend, world.policy(), beside / "file")
        assert not readable(backend, world.policy(), world.escrow)
    finally:
        shutil.rmtree(beside)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bed_named_through_a_symlink_is_there_by_that_name(backend: str, world: World,
                                                            tmp_path: Path) -> None:
    linked = tmp_path / "linked" / "bed"
    linked.parent.mkdir()
    linked.symlink_to(world.bed)
    paths = RunPaths(approot=linked, run_dir=world.run_dir, home=world.run_dir / "home",
                     tmp=world.run_dir / "tmp", adapter=Path("/bin/sh"), state_dir=world.state)
    done = sandboxed(backend, run_policy(paths, [], True), f"pwd; cat '{linked}/db/site.sqlite'")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(linked), "db"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("network", [True, False])
def test_the_site_broker_is_reachable_from_inside(backend: str, network: bool,
                                                  world: World) -> None:
    """The broker's socket in the run directory is the sandbox's one way to the site."""
    echo = [sys.executable, "-c", "import sys; print(' '.join(sys.argv[1:]))"]
    path = world.run_dir / broker.SOCKET_NAME
    client = (f"{sys.executable} -c 'import sys, pathlib; from ai_proving_ground.sandbox.broker "
              "import ask; print(ask(pathlib.Path(sys.argv[1]), sys.argv[2:]).stdout, end=\"\")' "
              f"'{path}' status --format=json")
    with broker.SiteBroker(path, world.bed, lambda args: [*echo, *args], os.environ).serving():
        done = sandboxed(backend, world.policy(network=network), client)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "status --format=json\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_cut_network_leaves_only_loopback(backend: str, world: World) -> None:
    if backend == "landlock" and not choose_backend(
            SandboxOptions(backend=backend, network=False)).isolated:
        pytest.skip("Landlock without namespaces cuts TCP, not interfaces")
    script = "cat /proc/net/dev"
    cut = sandboxed(backend, world.policy(network=False), script)
    assert cut.returncode == 0, cut.stderr
    interfaces = [line.split(":")[0].strip() for line in cut.stdout.splitlines() if ":" in line]
    assert interfaces == ["lo"]


@needs_landlock
def test_landlock_wrapper_refuses_to_run_on_a_bad_policy(world: World) -> None:
    spec = json.dumps({"abi": LANDLOCK_ABI, "network": True, "workdir": str(world.bed),
                       "rules": [[str(world.bed), 1 << 40]]})
    done = subprocess.run([sys.executable, "-m", "ai_proving_ground.sandbox.landlock",
                           "--policy", spec, "--", "/bin/sh", "-c", "echo ran"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 126 and "ran" not in done.stdout
    assert "APG_RUN_SANDBOX_FAILED" in done.stderr


def test_the_record_says_the_mounts_the_argv_was_built_from(world: World) -> None:
    """One plan for both: a readable path that appears after the sandbox was planned is bound
    by neither the argv nor the record."""
    late = world.root / "appears-later"
    confinement = confine.Backend("bwrap", False, program="/usr/bin/bwrap").confine(
        world.policy(reads=(late,)))
    late.mkdir()
    record = confinement.as_record()
    assert str(late) not in confinement.prefix
    assert str(late) not in record["readable"]  # type: ignore[operator]
    assert str(world.bed) in record["writable"]  # type: ignore[operator]
