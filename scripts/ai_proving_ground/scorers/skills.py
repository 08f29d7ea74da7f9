"""``skill_loaded``: whether the agent loaded a skill (by name).

Claude Code's Skill tool names the skill it loads: that is direct evidence. Otherwise a skill
counts as loaded when the agent read its ``<name>/SKILL.md``, by a file read or by a shell
command naming it (or naming its folder and a bare ``SKILL.md``: ``cd <name> && cat SKILL.md``):
Codex has no skill tool, so for it this is the only evidence there is, and
a heuristic (a command naming the file may not have printed it); the result says which counted.
"""

from __future__ import annotations

import re
from typing import Any

from ai_proving_ground.scorers.base import Context, Observation
from ai_proving_ground.transcripts.record import Transcript


def observe(target: Any, transcript: Transcript, context: Context) -> Observation:
    name = str(target)
    if name in transcript.skills_used:
        return Observation(seen=True, evidence=(f"skill tool: {name}",))
    # <name>/SKILL.md as a whole path component, so "views" does not match "my-views/SKILL.md".
    path = re.compile(rf"(?:^|[/\s'\"]){re.escape(name)}/SKILL\.md\b")
    evidence = (*(f"file read: {f}" for f in transcript.files_read if path.search(f)),
                *(f"command: {c.command}" for c in transcript.commands
                  if path.search(c.command) or _in_folder(name, c.command)))
    return Observation(seen=bool(evidence), evidence=evidence, heuristic=bool(evidence))


def _in_folder(name: str, command: str) -> bool:
    """A command that names the skill's folder and a bare SKILL.md (``cd .../<name> && cat
    SKILL.md``), the other way a shell reads it."""
    folder = re.search(rf"(?:^|[/\s'\"]){re.escape(name)}/?(?:$|[\s'\";&|)])", command)
    return folder is not None and re.search(r"(?:^|[\s'\"])SKILL\.md\b", command) is not None
