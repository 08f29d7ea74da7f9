"""Hidden verifiers: a patch and commands kept outside the bed, run only after the agent stopped.

A task's ``hidden_verifier`` names a patch (relative to the dataset file, and it must stay inside
the dataset's folder) and commands (argument lists). Neither reaches the agent: the prompt is the
task's prompt and the request file carries no checks. After the attempt, once the model's own
diff is captured, :func:`run_hidden`:

1. snapshots what the overlay can touch: the tracked paths, the database folder and every path
   the patch names outside them (the first missing folder of a new path, so it goes again whole);
2. applies the patch with ``git apply`` in the bed; if it does not apply the status is ``fail``
   and no command runs (the model's workspace is what the patch is checked against);
3. runs each command in the bed (cwd the app root, its own process group, ``timeout_s`` each,
   default 60) with the harness's environment plus ``APG_APPROOT`` and ``APG_SITE``; exit 0
   passes, anything else (a timeout too) fails. A program on PATH that cannot start makes the
   status ``error``: a broken verifier, not the agent's failure. A program that is a path into
   the bed and cannot start is a failed check: the workspace is the model's;
4. restores the snapshot, whatever happened, and reports what it could not restore (and any
   change ``git status`` still shows) as warnings beside the result, never instead of it.

The result is ``{"status": "pass"|"fail"|"error", "checks": [...]}``; each check is the patch
step (``kind: patch``) or one command that ran (``kind: command``) with its exit code and the
tails of its output. ``hidden.json`` adds the patch's path and hash and the warnings.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ai_proving_ground import proc
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import contained_path, is_within
from ai_proving_ground.gitutil import git
from ai_proving_ground.layout import TRACKED_PATHS, BedLayout
from ai_proving_ground.report import say
from ai_proving_ground.tasks.dataset import Dataset, Task

DEFAULT_TIMEOUT_S = 60.0
TAIL_CHARS = 2000


@dataclass(frozen=True)
class HiddenVerifier:
    """A task's hidden verifier, resolved: the patch as an absolute path inside the dataset dir."""

    patch: Path | None
    patch_ref: str | None  # as the dataset writes it, for the record
    commands: tuple[tuple[str, ...], ...]
    timeout_s: float


@dataclass
class HiddenOutcome:
    """The verdict, the checks behind it and what restoring the bed reported."""

    status: str
    checks: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """What attempt.json keeps: the status and the checks, nothing else."""
        return {"status": self.status, "checks": self.checks}


def resolve_verifier(dataset: Dataset, task: Task) -> HiddenVerifier | None:
    """The task's verifier; an unsafe or missing patch path fails here, before any attempt."""
    raw = task.hidden_verifier
    if raw is None:
        return None
    patch_ref = raw.get("patch")
    patch = None
    if patch_ref is not None:
        patch = contained_path(dataset.path.parent, patch_ref, f"task {task.id} hidden_verifier.patch")
        if not patch.is_file():
            raise ApgError("APG_HIDDEN_INVALID", f"task {task.id}: hidden_verifier.patch "
                           f"{patch_ref!r} is not a file ({patch})", exit_code=2)
    return HiddenVerifier(patch=patch, patch_ref=patch_ref,
                          commands=tuple(tuple(str(a) for a in c) for c in raw["commands"]),
                          timeout_s=float(raw.get("timeout_s", DEFAULT_TIMEOUT_S)))


# ---------------------------------------------------------------------------- git in the bed
# The agent had the bed's .git to itself: every call goes through gitutil.git (no hooks, no
# fsmonitor, none of the caller's GIT_* variables).


def _status(bed: Path, env: Mapping[str, str]) -> bytes:
    return git(bed, ["status", "--porcelain=v1", "-z", "--untracked-files=all"], check=False,
               env=env).stdout


# ---------------------------------------------------------------------------- the snapshot


@dataclass
class _Snapshot:
    """Copies of bed paths (``None``: the path did not exist and must not exist afterwards)."""

    bed: Path
    store: Path
    saved: dict[str, Path | None] = field(default_factory=dict)

    def take(self, relatives: Sequence[str]) -> None:
        self.store.mkdir(parents=True, exist_ok=True)
        for number, relative in enumerate(dict.fromkeys(relatives)):
            source = self.bed / relative
            if not os.path.lexists(source):
                self.saved[relative] = None
                continue
            copy = self.store / str(number)
            _copy(source, copy)
            self.saved[relative] = copy

    def restore(self) -> list[str]:
        """Put every path back; each failure is a warning, and the next path is still tried."""
        warnings = []
        for relative, copy in self.saved.items():
            target = self.bed / relative
            try:
                _remove(target)
                if copy is not None:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    _copy(copy, target)
            except OSError as exc:
                warnings.append(f"APG_CAMPAIGN_HIDDEN_RESTORE_FAILED {relative}: {exc}")
        return warnings


def _copy(source: Path, target: Path) -> None:
    if source.is_dir() and not source.is_symlink():
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copy2(source, target, follow_symlinks=False)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def _patch_paths(bed: Path, patch: Path, env: Mapping[str, str]) -> list[str] | None:
    """Every path the patch names (both sides of a rename); None when git cannot read it."""
    done = git(bed, ["apply", "--numstat", "-z", str(patch)], check=False, env=env)
    if done.returncode != 0:
        return None
    fields = done.stdout.decode("utf-8", "surrogateescape").split("\0")
    paths: list[str] = []
    position = 0
    while position < len(fields):
        entry = fields[position]
        if not entry:
            position += 1
            continue
        name = entry.split("\t", 2)[2] if entry.count("\t") >= 2 else ""
        if name:  # added<TAB>deleted<TAB>path
            paths.append(name)
            position += 1
        else:  # a rename: added<TAB>deleted<TAB>, then the old and the new path
            paths.extend(fields[position + 1:position + 3])
            position += 3
    return [p for p in paths if p]


def _overlay_roots(bed: Path, touched: Sequence[str]) -> list[str]:
    """What to snapshot for the patch's paths outside the tracked paths and the database: the
    path itself when it exists, else its first missing folder (removed again whole)."""
    covered = (*TRACKED_PATHS, _database_dir(bed))
    roots = []
    for name in touched:
        contained_path(bed, name, "hidden patch path")  # git refuses these too; be sure
        pure = PurePosixPath(name)
        if any(pure == PurePosixPath(c) or PurePosixPath(c) in pure.parents for c in covered):
            continue
        parts = pure.parts
        chosen = name
        for depth in range(1, len(parts) + 1):
            prefix = PurePosixPath(*parts[:depth]).as_posix()
            if not os.path.lexists(bed / prefix):
                chosen = prefix
                break
        roots.append(chosen)
    return roots


def _database_dir(bed: Path) -> str:
    return BedLayout(bed).database.parent.relative_to(bed).as_posix()


# ---------------------------------------------------------------------------- running it


def run_hidden(bed: Path, verifier: HiddenVerifier, env: Mapping[str, str], scratch: Path,
               site_command: Sequence[str]) -> HiddenOutcome:
    """Overlay the patch, run the commands, restore the bed; see the module doc."""
    touched: list[str] = []
    if verifier.patch is not None:
        found = _patch_paths(bed, verifier.patch, env)
        if found is None:
            return _patch_failed(verifier, "git cannot read the patch", [])
        try:
            touched = _overlay_roots(bed, found)
        except ApgError as exc:
            return _patch_failed(verifier, exc.message, [])
    before = _status(bed, env)
    snapshot = _Snapshot(bed, scratch / "snapshot")
    snapshot.take([*TRACKED_PATHS, _database_dir(bed), *touched])
    try:
        outcome = _overlay_and_run(bed, verifier, env, site_command)
    finally:
        warnings = snapshot.restore()
        shutil.rmtree(scratch / "snapshot", ignore_errors=True)
    if _status(bed, env) != before:
        warnings.append("APG_CAMPAIGN_HIDDEN_RESIDUE git status differs from before the hidden "
                        "verifier after restoring the snapshot")
    for warning in warnings:
        token, _, message = warning.partition(" ")
        say(token, f"{bed}: {message}")
    outcome.warnings.extend(warnings)
    return outcome


def _overlay_and_run(bed: Path, verifier: HiddenVerifier, env: Mapping[str, str],
                     site_command: Sequence[str]) -> HiddenOutcome:
    checks: list[dict[str, Any]] = []
    if verifier.patch is not None:
        applied = git(bed, ["apply", "--whitespace=nowarn", str(verifier.patch)], check=False,
                      env=env)
        checks.append(_patch_check(verifier, applied.returncode,
                                   applied.stderr.decode(errors="replace")))
        if applied.returncode != 0:
            return HiddenOutcome(status="fail", checks=checks)
    command_env = {**env, "APG_APPROOT": str(bed), "APG_SITE": shlex.join(site_command)}
    for number, argv in enumerate(verifier.commands, start=1):
        checks.append(_run_command(number, argv, bed, command_env, verifier.timeout_s))
    return HiddenOutcome(status=_verdict(checks), checks=checks)


def _verdict(checks: list[dict[str, Any]]) -> str:
    if any(c.get("error") for c in checks):
        return "error"
    return "pass" if all(c["passed"] for c in checks) else "fail"


def _patch_failed(verifier: HiddenVerifier, reason: str, checks: list[dict[str, Any]]) -> HiddenOutcome:
    return HiddenOutcome(status="fail", checks=[*checks, _patch_check(verifier, None, reason)])


def _patch_check(verifier: HiddenVerifier, exit_code: int | None, stderr: str) -> dict[str, Any]:
    assert verifier.patch is not None
    return {"id": "patch", "kind": "patch", "path": verifier.patch_ref,
            "sha256": hashlib.sha256(verifier.patch.read_bytes()).hexdigest(),
            "passed": exit_code == 0, "exit_code": exit_code, "stderr_tail": _tail(stderr)}


def _run_command(number: int, argv: Sequence[str], bed: Path, env: Mapping[str, str],
                 timeout_s: float) -> dict[str, Any]:
    check: dict[str, Any] = {"id": f"command-{number}", "kind": "command", "argv": list(argv),
                             "passed": False, "exit_code": None, "timed_out": False,
                             "error": None, "stdout_tail": "", "stderr_tail": ""}
    started = time.monotonic()
    finished = proc.run(argv, cwd=bed, env=env, timeout_s=timeout_s)
    if finished.error is not None:
        if _in_bed(argv[0], bed):
            # The workspace is the model's: a script it removed or broke is its failure, never
            # an infrastructure error that would drop the attempt from the statistics.
            check["stderr_tail"] = finished.error
        else:
            check["error"] = finished.error
        return check
    check.update(exit_code=finished.exit_code, passed=finished.ok, timed_out=finished.timed_out,
                 stdout_tail=_tail(finished.stdout.decode(errors="replace")),
                 stderr_tail=_tail(finished.stderr.decode(errors="replace")),
                 duration_s=round(time.monotonic() - started, 3))
    return check


def _in_bed(program: str, bed: Path) -> bool:
    """Whether a command's program is a path into the bed (not a program found on PATH)."""
    if "/" not in program:
        return False
    path = Path(program) if os.path.isabs(program) else bed / program
    base = bed.resolve()
    resolved = path.resolve()
    return is_within(resolved, base)


def _tail(text: str) -> str:
    return text[-TAIL_CHARS:]
