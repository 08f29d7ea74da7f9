"""Hidden verifiers: a patch and commands kept outside the bed, run only after the agent stopped.

A task's ``hidden_verifier`` names a patch (relative to the dataset file, inside the dataset's
folder, ``.patch`` or ``.diff``) and commands (strings split as shell words, or argument lists);
the dataset loader refuses anything else (:mod:`.hidden_spec`). Neither reaches the agent: the
prompt is the task's prompt and the request file carries no checks. After the attempt, once the model's own
diff is captured, :func:`run_hidden`:

1. reads the patch (:mod:`.patch_parse`; one that cannot be read fails the patch step before
   anything changes) and lists every file, symlink and folder in the bed but ``.git/`` (a
   file's size, mtime and mode, a symlink's target);
2. snapshots what the overlay can touch: the tracked paths, the database folder and every path
   the patch names outside them, both sides of renames (the first missing folder of a new path,
   so it goes again whole);
3. applies the patch in-process, as strictly as ``git apply`` (:mod:`.patch_apply`: exact
   context, all or nothing, and a binary or symlink entry refused with its reason); if it does
   not apply the status is ``fail``, the reason is the patch step's ``stderr_tail``, and no
   command runs (the model's workspace is what the patch is checked against);
4. runs each command in the bed (cwd the app root, its own process group, ``timeout_s`` each,
   default 60) with :func:`proc.bed_env` (an allow-list of ``env``, a HOME and TMPDIR of their
   own under the scratch folder) plus ``APG_APPROOT`` and ``APG_SITE``; exit 0
   passes, anything else (a timeout too) fails. A program on PATH that cannot start makes the
   status ``error``: a broken verifier, not the agent's failure. A program that is a path into
   the bed and cannot start is a failed check: the workspace is the model's;
5. restores the snapshot, whatever happened, lists the bed again and reports what it could not
   restore, and every path outside the snapshot that was added, removed or changed
   (``APG_CAMPAIGN_HIDDEN_RESIDUE``), as warnings beside the result, never instead of it.

The residue check is stricter than the ``git status`` it replaces: ignored files count too,
since a file the verifier left anywhere in the bed is one the next attempt's agent could read.
Only the hidden commands are child processes; git is not called at all.

The result is ``{"status": "pass"|"fail"|"error", "checks": [...]}``; each check is the patch
step (``kind: patch``) or one command that ran (``kind: command``) with its exit code and the
tails of its output (the patch step's ``exit_code`` is 0 when it applied, 1 when it did not and
None when it could not be read, as before; its ``sha256`` is the patch's hash).
``hidden.json`` (:class:`ai_proving_ground.campaigns.evidence.HiddenRecord`) adds the patch's
path as the dataset names it, the commands, the timeout and the restore warnings.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shlex
import shutil
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ai_proving_ground import proc
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import contained_path, is_within
from ai_proving_ground.layout import TRACKED_PATHS, BedLayout
from ai_proving_ground.report import say
from ai_proving_ground.tasks.dataset import Dataset, Task
from ai_proving_ground.tasks.hidden_spec import command_argv
from ai_proving_ground.tasks.patch_apply import apply_patch
from ai_proving_ground.tasks.patch_parse import FilePatch, PatchError, parse_patch, patch_paths

DEFAULT_TIMEOUT_S = 60.0
TAIL_CHARS = 2000
RESIDUE_NAMED = 5  # paths a residue warning names before "and N more"
# A patch step's check from its exit code and reason; the patch's path and hash are bound.
PatchCheck = Callable[[int | None, str], dict[str, Any]]


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
    patch_ref = str(raw["patch"])
    # The loader proved it safe (tasks/hidden_spec.py); checked again here because the file may
    # have moved since, and grading must never follow a path out of the dataset's folder.
    patch = contained_path(dataset.path.parent, patch_ref, f"task {task.id} hidden_verifier.patch")
    if not patch.is_file():
        raise ApgError("APG_HIDDEN_INVALID", f"task {task.id}: hidden_verifier.patch "
                       f"{patch_ref!r} is not a file ({patch})", exit_code=2)
    return HiddenVerifier(patch=patch, patch_ref=patch_ref,
                          commands=tuple(command_argv(c) for c in raw["commands"]),
                          timeout_s=float(raw.get("timeout_s", DEFAULT_TIMEOUT_S)))


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


def _overlay_roots(bed: Path, touched: Sequence[str]) -> list[str]:
    """What to snapshot for the patch's paths outside the tracked paths and the database: the
    path itself when it exists, else its first missing folder (removed again whole)."""
    covered = (*TRACKED_PATHS, _database_dir(bed))
    roots = []
    for name in touched:
        contained_path(bed, name, "hidden patch path")  # the applier refuses these too
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


# ---------------------------------------------------------------------------- the residue check

Listing = dict[str, tuple[object, ...]]


def _listing(bed: Path, restored: Sequence[str]) -> Listing:
    """Every file, symlink and folder in the bed but ``.git`` and what the snapshot restores
    (not walked: the snapshot answers for it): a file's size, mtime and mode, a symlink's
    target, a folder's being there. Ignored files count: the next agent reads them."""
    skipped = {".git", *restored}  # .git: the folder, or a linked worktree's .git file
    found: Listing = {}
    for folder, dirs, files in os.walk(bed):
        prefix = os.path.relpath(folder, bed).replace(os.sep, "/")
        prefix = "" if prefix == "." else prefix + "/"
        dirs[:] = [d for d in dirs if prefix + d not in skipped]
        for name in [*files, *dirs]:
            relative = prefix + name
            if relative in skipped:
                continue
            try:
                found[relative] = _entry(os.path.join(folder, name))
            except FileNotFoundError:  # removed while the bed was listed
                continue
    return found


def _entry(path: str) -> tuple[object, ...]:
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        return ("symlink", os.readlink(path))
    if stat.S_ISDIR(info.st_mode):
        return ("dir",)
    return ("file", info.st_size, info.st_mtime_ns, info.st_mode)


def _residue(before: Listing, after: Listing) -> list[str]:
    """A warning naming what changed outside the paths the snapshot put back, if anything did."""
    found = {"added": sorted(after.keys() - before.keys()),
             "removed": sorted(before.keys() - after.keys()),
             "changed": sorted(p for p in before.keys() & after.keys() if before[p] != after[p])}
    total = sum(len(paths) for paths in found.values())
    if not total:
        return []
    named, budget = [], RESIDUE_NAMED
    for kind, paths in found.items():
        if paths and budget > 0:
            named.append(f"{kind} {', '.join(paths[:budget])}")
            budget -= len(paths[:budget])
    more = f" and {total - RESIDUE_NAMED} more" if total > RESIDUE_NAMED else ""
    return [f"APG_CAMPAIGN_HIDDEN_RESIDUE {total} path(s) outside what the snapshot restores "
            f"differ from before the hidden verifier: {'; '.join(named)}{more}"]


# ---------------------------------------------------------------------------- running it


def run_hidden(bed: Path, verifier: HiddenVerifier, env: Mapping[str, str], scratch: Path,
               site_command: Sequence[str]) -> HiddenOutcome:
    """Overlay the patch, run the commands, restore the bed; see the module doc."""
    patches: list[FilePatch] = []
    touched: list[str] = []
    check: PatchCheck | None = None  # the patch step, when there is a patch
    if verifier.patch is not None:
        # Read once: what is parsed, applied and hashed into the record are the same bytes.
        data = verifier.patch.read_bytes()
        check = functools.partial(_patch_check, verifier, hashlib.sha256(data).hexdigest())
        try:
            patches = parse_patch(data)
            touched = _overlay_roots(bed, patch_paths(patches))
        except PatchError as exc:
            return HiddenOutcome("fail", [check(None, f"the patch cannot be read: {exc}")])
        except ApgError as exc:
            return HiddenOutcome("fail", [check(None, exc.message)])
    restored = [*TRACKED_PATHS, _database_dir(bed), *touched]
    if is_within(scratch.resolve(), bed.resolve()):
        restored.append(scratch.resolve().relative_to(bed.resolve()).as_posix())
    before = _listing(bed, restored)
    snapshot = _Snapshot(bed, scratch / "snapshot")
    snapshot.take(restored)
    try:
        outcome = _overlay_and_run(bed, verifier, check, patches,
                                   proc.bed_env(env, scratch / "env"), site_command)
    finally:
        warnings = snapshot.restore()
        shutil.rmtree(scratch / "snapshot", ignore_errors=True)
        shutil.rmtree(scratch / "env", ignore_errors=True)
    warnings.extend(_residue(before, _listing(bed, restored)))
    for warning in warnings:
        token, _, message = warning.partition(" ")
        say(token, f"{bed}: {message}")
    outcome.warnings.extend(warnings)
    return outcome


def _overlay_and_run(bed: Path, verifier: HiddenVerifier, check: PatchCheck | None,
                     patches: list[FilePatch], env: Mapping[str, str],
                     site_command: Sequence[str]) -> HiddenOutcome:
    checks: list[dict[str, Any]] = []
    if check is not None:
        try:
            apply_patch(bed, patches)
        except (PatchError, OSError) as exc:
            return HiddenOutcome(status="fail", checks=[check(1, f"the patch does not apply: {exc}")])
        checks.append(check(0, ""))
    command_env = {**env, "APG_APPROOT": str(bed), "APG_SITE": shlex.join(site_command)}
    for number, argv in enumerate(verifier.commands, start=1):
        checks.append(_run_command(number, argv, bed, command_env, verifier.timeout_s))
    return HiddenOutcome(status=_verdict(checks), checks=checks)


def _verdict(checks: list[dict[str, Any]]) -> str:
    if any(c.get("error") for c in checks):
        return "error"
    return "pass" if all(c["passed"] for c in checks) else "fail"


def _patch_check(verifier: HiddenVerifier, sha256: str, exit_code: int | None,
                 stderr: str) -> dict[str, Any]:
    return {"id": "patch", "kind": "patch", "path": verifier.patch_ref, "sha256": sha256,
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
