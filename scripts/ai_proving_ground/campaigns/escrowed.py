"""A job's escrow, kept by the harness: made once per bed, checked by hash before each use.

The campaign makes each job's escrow set in its own directory (never at a path a bed leads to)
and keeps the SHA-256 of every file in the set, the verifier copy included, in memory. Before
each verify, :meth:`Escrowed.verify` re-hashes the set: anything changed, added or removed
means someone with the operator's rights reached it during the attempt, and the result is
``tampered`` without running a verifier that may no longer be the one escrowed. Otherwise the
escrowed copy runs as a child, ``python3 -I -S escrow_verify.pyc BED SET [--restore]``: its
bytecode, compiled once when the set was made (see :meth:`Escrowed.compile`).

:func:`repository_state` is the harness's own view of a bed's repository (what decides what git
does there and which commit the baseline tag names: HEAD, config, refs, packed refs, hooks,
info, alternates), read without git: an attempt that leaves any of it changed reached the
harness's repository, which is tampering however the verifier later reads it.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.util import MAGIC_NUMBER
from pathlib import Path

from ai_proving_ground import proc
from ai_proving_ground.escrow.capture import escrow
from ai_proving_ground.fsutil import atomic_write_bytes
from ai_proving_ground.settings import Settings

VERIFIER = "escrow_verify.py"
COMPILED = "escrow_verify.pyc"  # in the job's escrow root, beside its set
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
    compiled: Path | None = None  # the verifier's bytecode (None: the copy itself runs)
    compiled_sha256: str = ""

    @classmethod
    def make(cls, bed: Path, fixtures: Sequence[str], root: Path, settings: Settings) -> Escrowed:
        """Escrow ``bed`` under ``root`` (replacing an earlier set there), keep its hashes and
        compile its verifier."""
        set_dir = escrow(bed, fixtures, force=True, root=root, settings=settings)
        made = cls(set_dir=set_dir, hashes=digests(set_dir))
        made.compile(root / COMPILED)
        return made

    def compile(self, target: Path) -> None:
        """Write the escrowed verifier's bytecode to ``target`` and keep its hash.

        A script run by path is compiled on every start (the verifier, 8 ms of CPU of each
        verify's 29; two verifies an attempt), while a .pyc file runs as it is. The bytecode is
        compiled here from the very bytes whose SHA-256 the set's hashes hold, so what runs is
        the escrowed code; it lies in the job's escrow root, which no agent's sandbox shows (as
        the set), and :meth:`changes` checks its own hash before every run as it checks each of
        the set's files. A copy that no longer matches its hash is not compiled: it runs (and is
        reported changed) as before."""
        source = (self.set_dir / VERIFIER).read_bytes()
        if hashlib.sha256(source).hexdigest() != self.hashes.get(VERIFIER):
            return
        code = compile(source, str(self.set_dir / VERIFIER), "exec", dont_inherit=True,
                       optimize=0)  # asserts kept, whatever -O the harness runs with
        # PEP 552's header: magic, flags (0: by timestamp), the source's mtime (unused when a
        # .pyc is run directly) and size.
        data = MAGIC_NUMBER + bytes(8) + len(source).to_bytes(4, "little") + marshal.dumps(code)
        atomic_write_bytes(target, data)
        self.compiled, self.compiled_sha256 = target, hashlib.sha256(data).hexdigest()

    def changes(self) -> list[str]:
        """What differs from the hashes taken when the set (and its bytecode) was made."""
        found = differences(self.hashes, digests(self.set_dir) if self.set_dir.is_dir() else {})
        if self.compiled is not None and _entry(self.compiled) != self.compiled_sha256:
            found.append(f"{self.compiled.name} changed")
        return found

    def verify(self, bed: Path, restore: bool, env: dict[str, str]) -> Verdict:
        """The escrowed verifier on ``bed``, after checking that it is still the one escrowed."""
        changes = self.changes()
        if changes:
            return Verdict(None, [f"APG_TAMPERED escrow:{c}" for c in changes])
        # -S as well as -I: the verifier is stdlib only, and the site module (a virtualenv's .pth
        # files) would add 2-3 ms of CPU to each of an attempt's two verifies.
        script = self.compiled or self.set_dir / VERIFIER
        argv = [sys.executable, "-I", "-S", str(script), str(bed), str(self.set_dir)]
        finished = proc.run([*argv, *(["--restore"] if restore else [])], cwd=self.set_dir,
                            env=env, guard=False)
        text = finished.error or finished.stderr.decode(errors="replace")
        return Verdict(finished.exit_code, [line for line in text.splitlines() if line])
