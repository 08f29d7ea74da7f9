"""Is every runbook prompt a task? The entries a dataset or campaign declares, and what covers them.

A runbook is the list of prompts an evaluation promises to exercise (the seed's "every runbook
prompt is covered, and the validator enforces that"). A dataset or a campaign spec declares it
under ``runbook:``, either inline (a list of entries) or as a file of entries (a path, relative
to the declaring file, of a YAML list); an entry is an id (``clean-up-sweeping``) or a mapping
``{id, prompt}``. A task covers the entries its ``covers:`` list names. A dataset's runbook must
be covered by its tasks; a campaign's by the tasks the campaign runs, so a campaign that leaves
out the only task covering an entry is refused. A covers id no runbook declares is no error (a
task may serve several runbooks). Each finding is ``file:line:col: $.path: ...`` of the entry.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.yamlio import YamlDocument, load_document

UNCOVERED = "APG_RUNBOOK_UNCOVERED"
INVALID = "APG_RUNBOOK_INVALID"


def entries(doc: YamlDocument) -> list[tuple[str, str]]:
    """``doc``'s runbook as (id, where) pairs, in order; none without ``runbook:``. A file of
    entries that is missing or not a list of entries raises APG_RUNBOOK_INVALID (exit 2)."""
    declared = doc.data.get("runbook") if isinstance(doc.data, dict) else None
    if declared is None:
        return []
    if isinstance(declared, str):
        source = (doc.path.parent / declared).resolve()
        try:
            listed = load_document(source, token=INVALID)
        except ApgError as exc:  # a missing or broken file of entries is bad input: usage
            raise ApgError(INVALID, f"{doc.where(['runbook'])}: {exc.message}",
                           exit_code=2) from None
        if not isinstance(listed.data, list):
            raise ApgError(INVALID, f"{doc.where(['runbook'])}: runbook file {source} holds no "
                           "list of entries; write one '- id' or '- {id: ..., prompt: ...}' a "
                           "line", exit_code=2)
        return _entries(listed, listed.data, [])
    return _entries(doc, declared, ["runbook"])


def _entries(doc: YamlDocument, items: list[Any], base: list[str | int]) -> list[tuple[str, str]]:
    found = []
    for index, item in enumerate(items):
        entry = item.get("id") if isinstance(item, dict) else item
        if not isinstance(entry, str) or not entry:
            raise ApgError(INVALID, f"{doc.where([*base, index])}: a runbook entry is an id or a "
                           "mapping with an id", exit_code=2)
        found.append((entry, doc.where([*base, index])))
    return found


def covered(dataset_doc: YamlDocument, task_ids: Iterable[str] | None = None) -> set[str]:
    """The entry ids the dataset's tasks (only ``task_ids`` when given) say they cover."""
    wanted = set(task_ids) if task_ids is not None else None
    tasks = dataset_doc.data.get("tasks") if isinstance(dataset_doc.data, dict) else None
    found: set[str] = set()
    for task in tasks if isinstance(tasks, list) else []:
        if isinstance(task, dict) and (wanted is None or task.get("id") in wanted):
            found.update(str(c) for c in task.get("covers") or [])
    return found


def _findings(declared: list[tuple[str, str]], covering: set[str], by: str) -> list[str]:
    return [f"{where}: runbook entry {entry!r} is covered by no task {by}; give a task that "
            f"exercises it 'covers: [{entry}]'" for entry, where in declared
            if entry not in covering]


def check_dataset(path: Path) -> list[str]:
    """Findings for the dataset at ``path``: each entry of its runbook no task covers."""
    doc = load_document(path, token="APG_DATASET_INVALID")
    return _findings(entries(doc), covered(doc), "of the dataset")


def check_campaign(spec_doc: YamlDocument, dataset_path: Path, task_ids: Iterable[str]) -> list[str]:
    """Findings for a campaign: its dataset's runbook and its own, each entry that none of the
    tasks it runs (``task_ids``) covers."""
    dataset_doc = load_document(dataset_path, token="APG_DATASET_INVALID")
    covering = covered(dataset_doc, task_ids)
    return _findings([*entries(dataset_doc), *entries(spec_doc)], covering,
                     "the campaign runs (its tasks: list one that covers it)")


def refuse(findings: list[str]) -> None:
    """Raise APG_RUNBOOK_UNCOVERED (bad input, exit 2) listing every finding, if there is one."""
    if findings:
        raise ApgError(UNCOVERED, "\n".join(findings), exit_code=2)
