"""What an arm gives the agent (skill folders, instructions) and how it reaches the run's HOME.

Where each shipped CLI reads them, checked against the real CLIs (tests/agents/test_arms_real_clis.py):

=============  ===============================  ===========================================
CLI            skills (``<name>/SKILL.md``)     instructions file
=============  ===============================  ===========================================
Claude Code    ``~/.claude/skills/``            ``~/.claude/CLAUDE.md`` (user memory)
Codex          ``$CODEX_HOME/skills/``          ``$CODEX_HOME/AGENTS.md`` (global)
=============  ===============================  ===========================================

``apg run`` installs them into the run's own ``home/`` (``HOME``), before the adapter starts;
the codex adapter copies ``~/.codex/`` into the fresh ``CODEX_HOME`` it makes. Never the
operator's HOME (an arm that gives something refuses a host-shared adapter), never the bed, where
the next attempt would see it. A run's HOME is new for every run, so nothing of one arm reaches
another. Instructions ``to: prompt`` go to ``arm_prompt.txt`` in the run directory instead, which
the adapters append to the task prompt (``APG_INSTRUCTIONS_FILE``).

What was given is recorded in the run directory's ``arm.json`` (:class:`ArmRecord`, schema
``arm.schema.json``; none when nothing was): each skill's name and the SHA-256 of its tree, the
instructions' SHA-256.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_text
from ai_proving_ground.records import FieldsRecord, write_record

SKILL_FILE = "SKILL.md"
ARM_RECORD = "arm.json"
ARM_PROMPT = "arm_prompt.txt"
PROMPT_VARIABLE = "APG_INSTRUCTIONS_FILE"
# Relative to the run's HOME: where each CLI reads skills and its user-level instructions. The
# codex adapter points CODEX_HOME at a copy of ``.codex``.
SKILL_DIRS = (".claude/skills", ".codex/skills")
INSTRUCTION_FILES = (".claude/CLAUDE.md", ".codex/AGENTS.md")
INSTRUCTIONS_TO = ("file", "prompt")


@dataclass(frozen=True)
class Skill:
    """One skill folder of a catalog: its name (the folder's) and its tree's SHA-256."""

    name: str
    source: Path
    sha256: str


@dataclass(frozen=True)
class Given:
    """What one arm gives the agent; empty when it gives nothing beyond the stock CLI."""

    skills: tuple[Skill, ...] = ()
    catalog: Path | None = None
    excluded: tuple[str, ...] = ()
    instructions: str = ""
    instructions_to: str = "file"

    @property
    def empty(self) -> bool:
        return not self.skills and not self.instructions

    @property
    def recorded(self) -> bool:
        """Whether ``arm.json`` is written: something given, or a catalog all excluded. No
        ``arm.json``: the stock CLI, nothing added."""
        return not self.empty or self.catalog is not None

    def record(self) -> ArmRecord:
        text = self.instructions
        return ArmRecord(
            catalog=str(self.catalog) if self.catalog is not None else None,
            excluded=list(self.excluded),
            skills=[{"name": s.name, "sha256": s.sha256} for s in self.skills],
            instructions_to=self.instructions_to if text else None,
            instructions_sha256=hashlib.sha256(text.encode("utf-8")).hexdigest() if text else None)


@dataclass(frozen=True)
class ArmRecord(FieldsRecord):
    """``arm.json``: what the arm gave this run, by hash."""

    SCHEMA: ClassVar[str] = "arm"

    catalog: str | None
    excluded: list[str] = field(default_factory=list)
    skills: list[dict[str, str]] = field(default_factory=list)
    instructions_to: str | None = None
    instructions_sha256: str | None = None


def tree_sha256(root: Path) -> str:
    """SHA-256 over every regular file's relative path and bytes, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        relative = path.relative_to(root).as_posix().encode("utf-8")
        digest.update(len(relative).to_bytes(8, "big") + relative)
        data = path.read_bytes()
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def catalog_skills(catalog: Path, exclude: tuple[str, ...]) -> tuple[Skill, ...]:
    """The catalog's skill folders (each holding SKILL.md), sorted by name, minus ``exclude``.

    Raises ``ValueError`` naming the problem (the spec loader turns it into its own error)."""
    if not catalog.is_dir():
        raise ValueError(f"skills catalog {catalog} is not a directory")
    linked = sorted(p.name for p in catalog.iterdir() if p.is_symlink())
    if linked:  # a skill folder must be the catalog's own, as its hash is
        raise ValueError(f"skills catalog {catalog}: {', '.join(linked)} is a symbolic link; "
                         "put the skill folder itself in the catalog")
    folders = {p.name: p for p in sorted(catalog.iterdir())
               if p.is_dir() and not p.name.startswith(".")}
    for name, folder in folders.items():
        if not (folder / SKILL_FILE).is_file():
            raise ValueError(f"skills catalog {catalog}: {name}/ has no {SKILL_FILE}")
        # The hash covers regular files only: a link would be installed as what it points to,
        # which the recorded hash never saw.
        links = sorted(str(p.relative_to(catalog)) for p in folder.rglob("*") if p.is_symlink())
        if links:
            raise ValueError(f"skills catalog {catalog}: {', '.join(links)} is a symbolic link; "
                             "put the file itself in the skill folder")
    unknown = [name for name in exclude if name not in folders]
    if unknown:
        raise ValueError(f"skills catalog {catalog} has no skill {', '.join(unknown)} to exclude; "
                         f"its skills: {', '.join(folders) or 'none'}")
    return tuple(Skill(name, folder, tree_sha256(folder))
                 for name, folder in folders.items() if name not in exclude)


def install(given: Given, home: Path, run_dir: Path) -> dict[str, str]:
    """Put ``given`` into the run's ``home`` (and ``arm_prompt.txt`` into ``run_dir``); write
    ``arm.json``. Returns the variables the adapter gets (the prompt file, when there is one)."""
    for skill in given.skills:
        if tree_sha256(skill.source) != skill.sha256:  # changed since the spec was loaded
            raise ApgError("APG_ARM_SKILL_CHANGED", f"skill {skill.name} ({skill.source}) changed "
                           "after the campaign recorded its hash; run the campaign again")
        for skills_dir in SKILL_DIRS:
            target = home / skills_dir / skill.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(skill.source, target, symlinks=False)
    env: dict[str, str] = {}
    if given.instructions and given.instructions_to == "file":
        for name in INSTRUCTION_FILES:
            (home / name).parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(home / name, given.instructions)
    elif given.instructions:
        atomic_write_text(run_dir / ARM_PROMPT, given.instructions)
        os.chmod(run_dir / ARM_PROMPT, stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)
        env[PROMPT_VARIABLE] = str(run_dir / ARM_PROMPT)
    if given.recorded:
        write_record(run_dir / ARM_RECORD, given.record())
    return env


def arm_home(home: Path, run_dir: Path, given: Given, shared_home: str | None) -> dict[str, str]:
    """The adapter's ``HOME`` (its run's own ``home``, made now, holding what ``given`` gives;
    or ``shared_home``, the operator's, for a host-shared adapter, which may be given nothing)."""
    if shared_home is not None:
        if not given.empty:  # campaigns refuse this in the spec already (runner.check_agents)
            raise ApgError("APG_RUN_ARM_REFUSED", "a host-shared adapter runs in the operator's "
                           "HOME, where an arm's skills or instructions would stay; give the arm "
                           "an adapter with its own HOME", exit_code=2)
        return {"HOME": shared_home}
    home.mkdir(mode=0o700, exist_ok=True)
    return {"HOME": str(home), **install(given, home, run_dir)}


def given_files(run_dir: Path) -> list[str]:
    """The files :func:`install` wrote in ``run_dir`` (apg's, checked after the adapter ran)."""
    return [name for name in (ARM_RECORD, ARM_PROMPT) if (run_dir / name).exists()]
