"""A job's escrow, kept by the harness: made once per bed, checked by hash before each use.

The campaign makes each job's escrow set in its own directory (never at a path a bed leads to)
and keeps the SHA-256 of every file in the set, the verifier copy included, in memory. Before
each verify, :meth:`Escrowed.verify` re-hashes the set: anything changed, added or removed
means someone with the operator's rights reached it during the attempt, and the result is
``tampered`` without running a verifier that may no longer be the one escrowed. Otherwise the
escrowed copy runs as a child, ``python3 -I -S escrow_verify.py BED SET [--restore]``.

:func:`repository_state` is the harness's own view of a bed's repository (what decides what git
does there and which commit the baseline tag names: HEAD, config, refs, packed refs, hooks,
info, alternates), read without git: an attempt that leaves any of it changed reached the
harness's repository, which is tampering however the verifier later reads it.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ai_proving_ground import proc
from ai_proving_ground.escrow.capture import escrow
from ai_proving_ground.settings import Settings

VERIFIER = "escrow_verify.py"
_TOKEN_LINE = re.compile(r"^APG_[A-Z0-9_]+ ")


@dataclass(frozen=True)
class Verdict:
    """One verify: its exit code (None: not run) and what it said, line by line."""

    exit_code: int | None
    lines: list[str]

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def tampered(self) -> bool:
        return any(line.startswith("APG_TAMPERED ") for line in self.lines)

    @property
    def mismatched(self) -> bool:
        """The baseline (dump, sidecars, the tag and its commit) no longer matches the escrow."""
        return any(line.startswith("APG_ESCROW_MISMATCH ") for line in self.lines)

    def tokens(self, limit: int = 3) -> str:
        """The last token lines (the reason, in the verifier's own words)."""
        found = [line for line in self.lines if _TOKEN_LINE.match(line)]
        return " | ".join(found[-limit:] or self.lines[-1:]) or f"exit {self.exit_code}"

    def as_json(self) -> dict[str, object]:
        return {"exit_code": self.exit_code, "ok": self.ok, "lines": self.lines}


def digests(root: Path) -> dict[str, str]:
    """SHA-256 of every file under ``root`` (symlinks by their target text), by relative path."""
    found: dict[str, str] = {}
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[relative] = "symlink:" + os.readlink(path)
                continue
            digest = hashlib.sha256()
            with path.open("rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
            found[relative] = digest.hexdigest()
    return found


# The parts of a repository that steer git or name the baseline's commit (the index and the
# objects themselves do not: a new object changes nothing until a ref names it).
REPOSITORY_PARTS = ("HEAD", "config", "packed-refs", "shallow", "commondir", "hooks", "info",
                    "refs", "objects/info")


def repository_state(bed: Path) -> dict[str, str]:
    """SHA-256 of each file of :data:`REPOSITORY_PARTS` in ``bed/.git`` (links by their target),
    by path; a ``.git`` that is not a plain folder is one entry, itself."""
    git_dir = bed / ".git"
    if git_dir.is_symlink() or not git_dir.is_dir():
        return {".git": _entry(git_dir)}
    state: dict[str, str] = {}
    for part in REPOSITORY_PARTS:
        path = git_dir / part
        if path.is_dir() and not path.is_symlink():
            state.update({f".git/{part}/{name}": d for name, d in digests(path).items()})
        elif os.path.lexists(path):
            state[f".git/{part}"] = _entry(path)
    return state


def _entry(path: Path) -> str:
    if path.is_symlink():
        return "symlink:" + os.readlink(path)
    if not os.path.lexists(path):
        return "absent"
    if not path.is_file():
        return "not a file"
    return hashlib.sha256(path.read_bytes()).hexdigest()


def differences(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """``path changed``, ``path removed`` and ``path added``, each sorted."""
    return ([f"{p} changed" for p in sorted(before) if p in now and now[p] != before[p]]
            + [f"{p} removed" for p in sorted(set(before) - set(now))]
            + [f"{p} added" for p in sorted(set(now) - set(before))])


@dataclass
class Escrowed:
    """A job's escrow set and the hashes of its files when it was made."""

    set_dir: Path
    hashes: dict[str, str] = field(default_factory=dict)

    @classmethod
    def make(cls, bed: Path, fixtures: Sequence[str], root: Path, settings: Settings) -> Escrowed:
        """Escrow ``bed`` under ``root`` (replacing an earlier set there) and keep its hashes."""
        set_dir = escrow(bed, fixtures, force=True, root=root, settings=settings)
        return cls(set_dir=set_dir, hashes=digests(set_dir))

    def changes(self) -> list[str]:
        """What differs from the hashes taken when the set was made."""
        return differences(self.hashes, digests(self.set_dir) if self.set_dir.is_dir() else {})

    def verify(self, bed: Path, restore: bool, env: dict[str, str]) -> Verdict:
        """The escrowed verifier on ``bed``, after checking that it is still the one escrowed."""
        changes = self.changes()
        if changes:
            return Verdict(None, [f"APG_TAMPERED escrow:{c}" for c in changes])
        # -S as well as -I: the verifier is stdlib only, and the site module (a virtualenv's .pth
        # files) would add 2-3 ms of CPU to each of an attempt's two verifies.
        argv = [sys.executable, "-I", "-S", str(self.set_dir / VERIFIER), str(bed),
                str(self.set_dir)]
        finished = proc.run([*argv, *(["--restore"] if restore else [])], cwd=self.set_dir,
                            env=env, guard=False)
        text = finished.error or finished.stderr.decode(errors="replace")
        return Verdict(finished.exit_code, [line for line in text.splitlines() if line])
