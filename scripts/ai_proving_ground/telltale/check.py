"""Finding telltale words in a dataset's prompts and in what a campaign's arms give the agent.

An agent that reads "eval" or "fixture" in its task knows it is being measured, and may act
otherwise than it would for a user: the seed names this a validity threat. A word counts as a
whole word, case-insensitive, plural ``s`` included; letters on either side make another word
("evaluate" is not "eval"), while ``_``, ``-`` and digits do not ("kb_eval" holds "eval").
Each finding is ``file:line:col: $.path: ...`` of the string it is in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ai_proving_ground.campaigns.spec import Campaign
from ai_proving_ground.errors import ApgError
from ai_proving_ground.tasks.dataset import Dataset
from ai_proving_ground.yamlio import YamlDocument, load_document

TELLTALE = "APG_TELLTALE_WORD"
DEFAULT_WORDS: tuple[str, ...] = ("eval", "evaluation", "fixture", "grader", "grading",
                                  "benchmark", "test harness", "rubric", "hidden verifier")


def telltales(text: str, words: Iterable[str]) -> list[str]:
    """The listed words found in ``text``, as written there, in order."""
    found = []
    for word in words:
        spaced = r"\s+".join(re.escape(part) for part in word.split())
        found += [m.group(0) for m in re.finditer(rf"(?<![A-Za-z]){spaced}s?(?![A-Za-z])", text,
                                                   flags=re.IGNORECASE)]
    return found


def _finding(doc: YamlDocument, parts: list[str | int], text: str, what: str,
             words: Sequence[str]) -> list[str]:
    hits = telltales(text, words)
    return [f"{doc.where(parts)}: {what} holds telltale word(s) "
            f"{', '.join(repr(h) for h in dict.fromkeys(hits))}; say it as a user would"] if hits else []


def check_dataset(dataset: Dataset, words: Sequence[str] = DEFAULT_WORDS,
                  task_ids: Iterable[str] | None = None) -> list[str]:
    """Findings in the prompts of ``dataset``'s tasks (only ``task_ids`` when given)."""
    doc = load_document(dataset.path, token="APG_DATASET_INVALID")
    wanted = set(task_ids) if task_ids is not None else None
    findings = []
    for index, task in enumerate(dataset.tasks):
        if wanted is None or task.id in wanted:
            findings += _finding(doc, ["tasks", index, "prompt"], task.prompt,
                                 f"task {task.id}'s prompt", words)
            for number, turn in enumerate(task.turns):  # a later turn's prompt reaches it too
                findings += _finding(doc, ["tasks", index, "turns", number, "prompt"],
                                     str(turn["prompt"]), f"task {task.id}'s turn {number + 2} "
                                     "prompt", words)
    return findings


def check_campaign(campaign: Campaign, words: Sequence[str] = DEFAULT_WORDS) -> list[str]:
    """Findings in what a campaign shows its agents: its tasks' prompts, each arm's instructions
    and the names of the skills it installs."""
    findings = check_dataset(campaign.dataset, words, [t.id for t in campaign.tasks])
    doc = campaign.spec.doc
    for arm in campaign.spec.arms:
        body = doc.data["arms"].get(arm.name) or {}
        parts: list[str | int] = ["arms", arm.name, "instructions"]
        if isinstance(body.get("instructions"), dict):
            parts.append("text")
        findings += _finding(doc, parts, arm.given.instructions,
                             f"arm {arm.name}'s instructions", words)
        for skill in arm.given.skills:
            findings += _finding(doc, ["arms", arm.name, "skills"], skill.name,
                                 f"arm {arm.name}'s skill name {skill.name!r}", words)
    return findings


def refuse(findings: list[str]) -> None:
    """Raise APG_TELLTALE_WORD (bad input, exit 2) listing every finding, if there is one."""
    if findings:
        raise ApgError(TELLTALE, "\n".join(findings), exit_code=2)
