"""Escrow: copy a set's baseline and the verifier outside the project; record the judging tree.

``escrow`` writes ``<escrow root>/<project>/<set key>/``: the baseline files (``baseline/``), a git
bundle of the baseline tag (``tag.bundle``), a copy of ``scripts/escrow_verify.py`` with a bash
launcher (``escrow-verify.sh``) and ``escrow.json``, the only metadata the verifier reads. The
judging-tree hashes are taken by the verifier's own code (loaded from its file, never copied
here), so escrow and verify can never disagree about how a tree is read.

Everything is written into a temporary directory beside the set and swapped into place at the
end (an atomic exchange where the kernel offers one): a crash leaves the old set or the new one.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import importlib.util
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from ai_proving_ground import yamlio
from ai_proving_ground.baselines import grader_tree
from ai_proving_ground.baselines.locking import bed_lock
from ai_proving_ground.baselines.public_files import snapshot_paths
from ai_proving_ground.baselines.store import Baseline
from ai_proving_ground.baselines.tree import require_repository
from ai_proving_ground.ddev_compose import looks_like_path, volume_source
from ai_proving_ground.errors import ApgError
from ai_proving_ground.faults import crashpoint
from ai_proving_ground.fixtures import FixtureSet, load_set
from ai_proving_ground.fsutil import safe_name
from ai_proving_ground.paths import BASE_RECIPE_NAME, PACKAGE_DIR, PROJECT_ROOT
from ai_proving_ground.report import say
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings

VERIFIER_SOURCE = PROJECT_ROOT / "scripts" / "escrow_verify.py"
DEFAULT_ROOT = "~/.ai-proving-ground-escrow"
LAUNCHER = "escrow-verify.sh"
# Inside a DDEV web container the project is mounted here; escrow runs on the host.
CONTAINER_APPROOT = "/var/www/html"
DEFAULT_BASELINE = ".ai-proving-ground"

NO_BASELINE = "APG_ESCROW_NO_BASELINE"
UNSAFE = "APG_ESCROW_UNSAFE"
EXISTS = "APG_ESCROW_EXISTS"
SKIPPED = "APG_ESCROW_SKIPPED"

_CHUNK = 1 << 20

LAUNCHER_TEXT = """\
#!/usr/bin/env bash
# Written by apg escrow: run this set's verifier with a trusted interpreter, never the bed's.
#   /usr/bin/bash "$ESCROW_SET_DIR/escrow-verify.sh" "$BED_APPROOT" "$ESCROW_SET_DIR" [--restore]
# Interpreter: $AI_PG_ESCROW_PYTHON, else /usr/bin/python3, else python3 on PATH (3.9 or newer).
set -eu
here=${BASH_SOURCE[0]%/*}
[ "$here" != "${BASH_SOURCE[0]}" ] || here=.
python=${AI_PG_ESCROW_PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3 ]; then
    python=/usr/bin/python3
  else
    python=$(command -v python3) || { echo "APG_USAGE no python3; set AI_PG_ESCROW_PYTHON" >&2; exit 2; }
  fi
fi
exec "$python" -I "$here/escrow_verify.py" "$@"
"""


# --- the verifier, loaded from its file -----------------------------------------------------------


@cache
def load_verifier(path: Path = VERIFIER_SOURCE) -> ModuleType:
    """The verifier module (stdlib only, so loading it runs nothing of the bed's)."""
    spec = importlib.util.spec_from_file_location("apg_escrow_verify", path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ApgError("APG_INSTALL_BROKEN", f"{path} is missing; reinstall the project")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- where things are -------------------------------------------------------------------------------


def escrow_root(settings: Settings = DEFAULT_SETTINGS) -> Path:
    """``$AI_PG_ESCROW_DIR``, else ``~/.ai-proving-ground-escrow``, as an absolute path."""
    raw = settings.escrow_dir or DEFAULT_ROOT
    return Path(raw).expanduser().absolute()


def project_name(approot: Path) -> str:
    """The DDEV project name (``name:`` in .ddev/config.yaml), else the app root's folder name."""
    name: Any = None
    config = approot / ".ddev" / "config.yaml"
    if config.is_file():
        data = yamlio.load_yaml(config, token="APG_ESCROW_CONFIG_INVALID")
        if isinstance(data, dict):
            name = data.get("name")
    if not isinstance(name, str) or not name:
        name = approot.resolve().name
    return safe_name(name, "project name")


@dataclass(frozen=True)
class BaselineLocation:
    """The baseline directory as configured, relative to the bed when inside it, and absolute."""

    configured: str | None
    relative: str | None
    directory: Path

    @property
    def label(self) -> str:
        return f"{self.relative}/" if self.relative else f"{self.directory}/"


def _plain_relative(raw: str) -> str | None:
    parts = [p for p in raw.replace("\\", "/").split("/") if p not in {"", "."}]
    if not parts or ".." in parts or raw.startswith("/"):
        return None
    return "/".join(parts)


def baseline_location(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> BaselineLocation:
    """Like ``baseline_dir``, and a container path under /var/www/html names the host project."""
    bed = approot.resolve()
    raw = settings.baseline_dir
    text = raw or DEFAULT_BASELINE
    if text.startswith(CONTAINER_APPROOT + "/"):
        text = text[len(CONTAINER_APPROOT) + 1:]
    elif text.startswith("~"):
        text = str(Path(text).expanduser())
    if not os.path.isabs(text):
        relative = _plain_relative(text)
        if relative is None:
            raise ApgError(UNSAFE, f"AI_PG_BASELINE_DIR={raw!r} does not name a folder inside the "
                           f"bed {bed}; use a plain relative path or an absolute one")
        return BaselineLocation(raw, relative, bed / relative)
    absolute = Path(os.path.normpath(text))
    for root in {bed, approot.absolute()}:
        if root in absolute.parents:
            relative = absolute.relative_to(root).as_posix()
            return BaselineLocation(raw, relative, bed / relative)
    return BaselineLocation(raw, None, absolute)


def baseline_names(set_key: str) -> list[str]:
    """Every baseline file of a set, the dump first."""
    baseline = Baseline(Path("."), set_key)
    snapshot = snapshot_paths(Path("."), set_key)
    return [p.name for p in (baseline.dump, snapshot.archive, snapshot.sidecar, snapshot.listing,
                             baseline.grader_sha256, baseline.grader_files, baseline.versions,
                             baseline.metadata)]


def judging_roots(approot: Path, fixture_set: FixtureSet,
                  settings: Settings = DEFAULT_SETTINGS) -> list[dict[str, str]]:
    """Labelled absolute roots. Inside the bed a root's label is its bed-relative path; outside,
    ``grader:``, ``project:`` or ``fixture:`` names it. Roots inside another root are dropped."""
    bed = approot.resolve()
    in_bed = ["recipes", "datasets", ".ddev/commands", ".ddev/agents", "scripts/escrow_verify.py"]
    candidates: list[tuple[str, Path, bool]] = [(rel, bed / rel, True) for rel in in_bed]
    candidates.append(("grader:ai_proving_ground", PACKAGE_DIR, False))
    candidates.append(("project:datasets", PROJECT_ROOT / "datasets", False))
    # apg run falls back to the shipped adapters when the bed has none of that name.
    candidates.append(("project:ddev/agents", PROJECT_ROOT / "ddev" / "agents", False))
    if not (bed / "recipes" / BASE_RECIPE_NAME / "recipe.yml").is_file():
        candidates.append((f"project:recipes/{BASE_RECIPE_NAME}",
                           PROJECT_ROOT / "recipes" / BASE_RECIPE_NAME, False))
    for fixture in sorted(fixture_set.fixtures, key=lambda f: f.name):
        candidates.append((f"fixture:{fixture.name}", fixture.directory, False))
    dataset = _configured_dataset(approot, settings)
    if dataset is not None:
        candidates.append((f"dataset:{dataset.name}", dataset, False))
    roots: list[dict[str, str]] = []
    chosen: list[Path] = []
    for label, path, inside in candidates:
        if not inside:
            # Outside roots are recorded resolved; one that resolves into the bed is a bed path.
            path = path.resolve()
            if bed in path.parents:
                label = path.relative_to(bed).as_posix()
        if any(path == seen or seen in path.parents for seen in chosen):
            continue
        chosen.append(path)
        roots.append({"label": label, "path": str(path)})
    return roots


def _configured_dataset(approot: Path, settings: Settings) -> Path | None:
    """The dataset file $AI_PG_DATASET names, when set: grading reads it, so it is judged."""
    if not settings.dataset:
        return None
    from ai_proving_ground.tasks.dataset import resolve_dataset_path

    try:
        return resolve_dataset_path(None, approot, settings)
    except ApgError as exc:
        say("APG_ESCROW_DATASET_UNRESOLVED", f"{exc.message}; it is not fingerprinted")
        return None


# --- bind sources ---------------------------------------------------------------------------------


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _substitute(source: str, variable: str, value: Path) -> str | None:
    match = re.match(r"^(\$" + variable + r"|\$\{" + variable + r"(:?[-?][^}]*)?\})(?=/|$)", source)
    return str(value) + source[match.end():] if match else None


def resolve_source(source: str, approot: Path, where: str) -> Path:
    """A bind source as the host sees it; an unresolved ``$`` substitution refuses (fail closed)."""
    text = source
    for variable, value in (("HOME", Path.home()), ("DDEV_APPROOT", approot)):
        substituted = _substitute(text, variable, value)
        if substituted is not None:
            text = substituted
            break
    if text == "~" or text.startswith("~/"):
        text = str(Path.home()) + text[1:]
    if "$" in text or text.startswith("~"):
        raise ApgError(UNSAFE, f"{where}: bind source {source!r} holds a substitution escrow cannot "
                       "resolve; refusing (fail closed). Write the path out, or choose an escrow "
                       "directory after inspecting the effective mounts yourself")
    path = Path(text)
    if not path.is_absolute():
        path = approot / ".ddev" / path
    return Path(os.path.normpath(path)).resolve()


def _volume_sources(item: Any) -> list[str]:
    source = volume_source(item)
    return [source] if source and looks_like_path(source) else []


def bind_sources(approot: Path) -> list[tuple[Path, str]]:
    """(host path, where) for every recognised bind source in .ddev/docker-compose.*.yaml."""
    ddev = approot / ".ddev"
    files = sorted({*ddev.glob("docker-compose.*.yaml"), *ddev.glob("docker-compose.*.yml")})
    found: list[tuple[Path, str]] = []
    for compose in files:
        try:
            data = yamlio.loads(compose.read_text(encoding="utf-8"))
        except (ApgError, OSError, UnicodeDecodeError) as exc:
            raise ApgError(UNSAFE, f"{compose} cannot be read ({exc}); refusing (fail closed): "
                           "escrow cannot tell what it mounts") from None
        if not isinstance(data, dict):
            continue
        services = data.get("services")
        for name, service in (services.items() if isinstance(services, dict) else []):
            volumes = service.get("volumes") if isinstance(service, dict) else None
            for index, item in enumerate(volumes if isinstance(volumes, list) else []):
                where = f"{compose} services.{name}.volumes[{index}]"
                found.extend((resolve_source(s, approot, where), where) for s in _volume_sources(item))
        volumes = data.get("volumes")
        for name, spec in (volumes.items() if isinstance(volumes, dict) else []):
            options = spec.get("driver_opts") if isinstance(spec, dict) else None
            device = options.get("device") if isinstance(options, dict) else None
            if isinstance(device, str) and device:
                where = f"{compose} volumes.{name}.driver_opts.device"
                found.append((resolve_source(device, approot, where), where))
    return found


def check_destination(set_dir: Path, approot: Path) -> None:
    """Refuse a set directory inside the project or overlapping a recognised bind source."""
    target = set_dir.resolve()
    for shown, inside in ((target, approot.resolve()), (set_dir.absolute(), approot.absolute())):
        if _within(shown, inside):
            raise ApgError(UNSAFE, f"escrow directory {set_dir} resolves to {shown}, inside the project "
                           f"{inside}, where an attempt can rewrite it; set AI_PG_ESCROW_DIR to a "
                           "directory outside the project and outside every container mount")
    for source, where in bind_sources(approot):
        if _within(target, source) or _within(source, target):
            raise ApgError(UNSAFE, f"escrow directory {target} lies under the bind source {source} "
                           f"({where}), which a container can write; set AI_PG_ESCROW_DIR to a "
                           "directory outside every container mount")


# --- writing ------------------------------------------------------------------------------------


def _copy_hashed(source: Path, target: Path) -> dict[str, Any]:
    """Copy a regular file (never through a symlink); return its sha256, size, mode and inode."""
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ApgError(UNSAFE, f"baseline file {source} is not a regular file")
        digest, size = hashlib.sha256(), 0
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            while block := os.read(fd, _CHUNK):
                digest.update(block)
                size += len(block)
                view = memoryview(block)
                while view:
                    view = view[os.write(out, view):]
            os.fsync(out)
        finally:
            os.close(out)
    finally:
        os.close(fd)
    return {"sha256": digest.hexdigest(), "size": size, "mode": stat.S_IMODE(st.st_mode),
            "inode": st.st_ino}


def _write(path: Path, data: bytes, mode: int = 0o600) -> str:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(path, mode)
    return hashlib.sha256(data).hexdigest()


def _exchange(first: Path, second: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE); False when unavailable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    done = renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange)
    return bool(done == 0)


def _remove_tree(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _swap_into_place(new: Path, target: Path) -> None:
    """Make ``new`` the set at ``target``; a crash at any point leaves the old set or the new one
    there (between the two renames of the fallback, the old set waits under a hidden name)."""
    if not os.path.lexists(target):
        os.rename(new, target)
    elif _exchange(new, target):
        crashpoint("escrow.swapped")
        _remove_tree(new)
    else:
        old = new.with_name(new.name.replace(".new-", ".old-"))
        os.rename(target, old)
        crashpoint("escrow.swapping")
        os.rename(new, target)
        _remove_tree(old)
    with contextlib.suppress(OSError):
        fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _recover(set_dir: Path) -> None:
    """Undo an escrow killed between the two renames of the fallback swap: the old set waits
    under a hidden name and nothing is at ``set_dir``; put the old set back."""
    if os.path.lexists(set_dir):
        return
    waiting = sorted(set_dir.parent.glob(f".{set_dir.name}.old-*"), key=os.path.getmtime)
    if waiting and (waiting[-1] / "escrow.json").is_file():
        os.rename(waiting[-1], set_dir)
        say("APG_ESCROW_RECOVERED", f"{set_dir} (an earlier escrow was interrupted)")


def _clear_stale(parent: Path, set_key: str) -> None:
    """Remove leftovers of an earlier escrow of this set that was killed mid-way."""
    for stale in parent.glob(f".{set_key}.new-*"):
        _remove_tree(stale)
    if (parent / set_key).is_dir():
        for stale in parent.glob(f".{set_key}.old-*"):
            _remove_tree(stale)


def _tag_state(verifier: ModuleType, approot: Path, tag: str) -> dict[str, Any]:
    state: dict[str, Any] = verifier.read_tag(str(approot), tag)
    return state


def escrow(approot: Path, names: Sequence[str], force: bool = False, root: Path | None = None,
           settings: Settings = DEFAULT_SETTINGS) -> Path:
    """Write the escrow set for ``names``; return its directory."""
    fixture_set = load_set(names, approot, settings=settings)
    location = baseline_location(approot, settings)
    baseline = Baseline(location.directory, fixture_set.key, settings.baseline_ref)
    require_repository(approot)
    verifier = load_verifier()
    tag_state = _tag_state(verifier, approot, baseline.tag)
    if not baseline.dump.is_file() or tag_state["state"] != "present":
        have = (f"dump {'present' if baseline.dump.is_file() else 'missing'}, tag {baseline.tag} "
                f"{'present' if tag_state['state'] == 'present' else 'missing'}")
        raise ApgError(NO_BASELINE, f"set {fixture_set.key} has no complete baseline in "
                       f"{location.directory} ({have}); provision it first: apg provision "
                       f"--approot {approot} {' '.join(fixture_set.names)}")
    set_dir = (root or escrow_root(settings)) / project_name(approot) / fixture_set.key
    check_destination(set_dir, approot)
    if set_dir.parent.is_dir():
        _recover(set_dir)
    if os.path.lexists(set_dir) and not force:
        raise ApgError(EXISTS, f"{set_dir} already holds an escrow of set {fixture_set.key}; pass "
                       "--force to replace it, and only from freshly installed or re-provisioned "
                       "trusted code, never to accept an attempt's drift")
    set_dir.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with bed_lock(baseline.lock, "escrow", settings.lock_wait_seconds):
        _clear_stale(set_dir.parent, fixture_set.key)
        staging = Path(tempfile.mkdtemp(prefix=f".{fixture_set.key}.new-", dir=set_dir.parent))
        try:
            _fill(staging, approot, fixture_set, location, baseline, tag_state, verifier, settings)
            crashpoint("escrow.written")
            _swap_into_place(staging, set_dir)
        finally:
            if os.path.lexists(staging):
                _remove_tree(staging)
    _warn_grader_drift(approot, fixture_set, baseline)
    return set_dir


def _fill(staging: Path, approot: Path, fixture_set: FixtureSet, location: BaselineLocation,
          baseline: Baseline, tag_state: dict[str, Any], verifier: ModuleType,
          settings: Settings) -> None:
    os.chmod(staging, 0o700)
    copies = staging / verifier.BASELINE_SUBDIR
    copies.mkdir(mode=0o700)
    files: dict[str, dict[str, Any]] = {}
    escrowed: dict[str, str] = {}
    for name in baseline_names(fixture_set.key):
        source = location.directory / name
        if not os.path.lexists(source):
            say(SKIPPED, f"{name} (not in {location.directory})")
            files[name] = {"absent": True}
            continue
        files[name] = _copy_hashed(source, copies / name)
        escrowed[f"{verifier.BASELINE_SUBDIR}/{name}"] = files[name]["sha256"]
    bundle = staging / verifier.BUNDLE
    done = verifier.run_git(str(approot), ["bundle", "create", "--quiet", str(bundle),
                                           f"refs/tags/{baseline.tag}"])
    if done.returncode != 0:
        raise ApgError("APG_GIT_FAILED", f"git bundle create of tag {baseline.tag} failed: "
                       f"{done.stderr.decode(errors='replace').strip()}")
    escrowed[verifier.BUNDLE] = verifier.hash_path(str(bundle))[0]
    escrowed[verifier.VERIFIER] = _write(staging / verifier.VERIFIER, VERIFIER_SOURCE.read_bytes(),
                                         0o755)
    escrowed[LAUNCHER] = _write(staging / LAUNCHER, LAUNCHER_TEXT.encode(), 0o755)
    roots = judging_roots(approot, fixture_set, settings)
    data = {
        "format": verifier.FORMAT,
        "kind": "ai_proving_ground escrow",
        "created_at": int(time.time()),
        "set_key": fixture_set.key,
        "canonical": fixture_set.canonical,
        "fixtures": fixture_set.names,
        "pins": sorted(f.pin for f in fixture_set.fixtures),
        "project": project_name(approot),
        "approot": str(approot),
        "approot_real": os.path.realpath(approot),
        "baseline": {
            "configured": location.configured,
            "relative": location.relative,
            "dir": str(location.directory),
            "label": location.label,
            "ref_configured": baseline.ref,
            "tag": baseline.tag,
            "tag_commit": tag_state["commit"],
            "tag_state": tag_state,
            "files": files,
        },
        "bundle": verifier.BUNDLE,
        "verifier": verifier.VERIFIER,
        "launcher": LAUNCHER,
        "escrowed": escrowed,
        "judging": {"roots": roots, "files": verifier.scan_tree(roots)},
    }
    _write(staging / verifier.ESCROW_JSON, render_json(data).encode())
    _self_check(staging, approot, verifier)


def render_json(data: dict[str, Any]) -> str:
    """Indented JSON, except one compact line per judged file: a tree of thousands of files stays
    readable, and quick for the verifier to load."""
    judging = data["judging"]
    sentinel = f"@files-{os.urandom(8).hex()}@"
    body = json.dumps({**data, "judging": {**judging, "files": sentinel}}, indent=2, sort_keys=True)
    lines = ",\n".join(f"      {json.dumps(path)}: {json.dumps(entry, sort_keys=True, separators=(',', ':'))}"
                       for path, entry in sorted(judging["files"].items()))
    files = "{\n" + lines + "\n    }" if lines else "{}"
    return body.replace(json.dumps(sentinel), files, 1) + "\n"


def _self_check(staging: Path, approot: Path, verifier: ModuleType) -> None:
    """What was written must verify now: otherwise something changed during escrow, or the
    baseline directory sits behind a symlink that every later check would flag."""
    escrow_data = verifier.load_escrow(str(staging))
    try:
        verifier.check_escrow_files(str(staging), escrow_data)
    except verifier.EscrowError as exc:
        raise ApgError("APG_ESCROW_CHANGED", f"an escrowed copy changed while it was written ({exc}); "
                       "stop writers to the bed and escrow again") from None
    problems = verifier.check_baseline(str(staging), escrow_data) + verifier.check_tag(
        escrow_data, str(approot))
    if problems:
        label = escrow_data["baseline"]["label"]
        detail = "; ".join(f"{name} {change}" for name, change in problems)
        if (label, "replaced") in problems:
            raise ApgError(UNSAFE, f"the baseline directory {label} passes through a symlink or a "
                           "file, which an attempt could redirect; make it a real directory")
        raise ApgError("APG_ESCROW_CHANGED", f"the baseline changed while it was escrowed ({detail}); "
                       "stop writers to the bed and escrow again")


def _warn_grader_drift(approot: Path, fixture_set: FixtureSet, baseline: Baseline) -> None:
    """Escrow records the code as it is now; say so when that is not the code provision saw."""
    if not baseline.grader_files.is_file():
        return
    recorded = grader_tree.parse_listing(baseline.grader_files.read_text(encoding="utf-8"))
    changed = grader_tree.changes(recorded, grader_tree.fingerprint(approot, fixture_set))
    if changed:
        say("APG_ESCROW_GRADER_DRIFT", f"the grader code differs from what provision recorded "
            f"({'; '.join(changed[:5])}{'; ...' if len(changed) > 5 else ''}); escrow only from "
            "trusted, freshly installed code")


# --- verifying ------------------------------------------------------------------------------------


def select_set(approot: Path, names: Sequence[str],
               settings: Settings = DEFAULT_SETTINGS) -> Path | None:
    """The one escrow set for this bed and fixture names, by escrow metadata; None (after
    printing APG_ESCROW_NONE and the candidates) when there is not exactly one."""
    verifier = load_verifier()
    root = str(escrow_root(settings))
    wanted = sorted(set(names))
    ref = settings.baseline_ref
    matches, others = verifier.find_sets(root, project_name(approot), str(approot), wanted, ref)
    if len(matches) != 1:
        verifier.report_none(root, str(approot), wanted, ref, matches, others)
        return None
    chosen = Path(matches[0]["dir"])
    say("APG_ESCROW_SELECTED", str(chosen))
    return chosen


def verify(approot: Path, names: Sequence[str], set_dir: Path | None = None,
           restore: bool = False, settings: Settings = DEFAULT_SETTINGS) -> int:
    """Run the escrowed verifier copy on the bed; its exit code."""
    chosen = set_dir.absolute() if set_dir is not None else select_set(approot, names, settings)
    if chosen is None:
        return 1
    copy = chosen / VERIFIER_SOURCE.name
    if not copy.is_file():
        say("APG_ESCROW_UNREADABLE", f"{copy} is missing; is {chosen} an escrow set directory?")
        return 2
    command = [sys.executable, "-I", str(copy), str(approot), str(chosen)]
    return subprocess.run(command + (["--restore"] if restore else []), check=False).returncode
