"""What the pages show, read from a campaign directory: the report, each attempt's record and
the evidence beside it (prompt, transcript, checks, the model's diff, the hidden verifier).

Everything under ``runs/`` was written while an agent ran, some of it from what the agent said
or made, so it is data to show, never to trust: a file is read only when it is a regular file
inside the campaign directory (no link out), and only its first :data:`MAX_BYTES`; the pages
escape every value (``render``).
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ai_proving_ground.campaigns import agent_usage
from ai_proving_ground.campaigns.records import AttemptRecord, CampaignFiles, read_attempt
from ai_proving_ground.errors import ApgError

MAX_BYTES = 512 * 1024  # of one evidence file shown on a page


@dataclass(frozen=True)
class Evidence:
    """One file's text as a page shows it, or why it is not shown."""

    text: str | None
    note: str = ""


def read_evidence(root: Path, path: Path) -> Evidence:
    """``path``'s text when it is a regular file inside ``root`` reached through no link."""
    try:
        relative = path.relative_to(root)
    except ValueError:
        return Evidence(None, f"{path} is outside the campaign")
    current = root
    for part in relative.parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return Evidence(None, "not recorded")
        if stat.S_ISLNK(mode):
            return Evidence(None, f"{relative} is a link: not followed")
    if not stat.S_ISREG(mode):
        return Evidence(None, f"{relative} is not a file")
    with open(current, "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    text = data[:MAX_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_BYTES:
        return Evidence(text, f"only the first {MAX_BYTES // 1024} KiB of {relative} is shown")
    return Evidence(text)


def _json(evidence: Evidence) -> Any:
    if evidence.text is None or evidence.note:
        return None
    try:
        return json.loads(evidence.text)
    except ValueError:
        return None


@dataclass
class AttemptView:
    """One attempt's page."""

    order: int
    record: dict[str, Any]
    attempt: AttemptRecord  # the same record, as read: what the usage tables sum
    prompt: Evidence
    checks: list[dict[str, Any]]  # every public check's result, failed ones first
    commands: list[dict[str, Any]]  # from the normalized transcript, when the agent wrote one
    denials: list[dict[str, Any]]
    transcript: dict[str, Any] | None  # run.json's summary: model, tokens, cost, tool calls
    diff: Evidence
    hidden: dict[str, Any]
    verify: dict[str, Any] | None
    reply: str | None
    problems: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[dict[str, Any]]:
        return [check for check in self.checks if not check.get("passed")]

    @property
    def page(self) -> str:
        return attempt_page(self.order)


def attempt_page(order: int) -> str:
    """An attempt page's path, relative to the campaign directory."""
    return f"attempts/{order:04d}.html"


def check_anchor(check_id: str) -> str:
    return "check-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in check_id)


def load_attempt(files: CampaignFiles, order: int) -> AttemptView:
    root = files.directory
    run_dir = files.attempt_dir(order)
    attempt = read_attempt(files.attempt(order))
    record = attempt.as_json()
    problems: list[str] = []
    grade = _json(read_evidence(root, run_dir / "grade.json"))
    checks: list[dict[str, Any]] = []
    if isinstance(grade, dict):
        try:
            details = grade["evaluation_results"][0]["score_details"]["details"]
            checks = json.loads(details.get("checks", "[]"))
        except (KeyError, IndexError, TypeError, ValueError):
            problems.append("grade.json holds no readable check results")
    checks.sort(key=lambda check: bool(check.get("passed")))
    run = _json(read_evidence(root, run_dir / "run.json"))
    summary = run.get("agent_transcript") if isinstance(run, dict) else None
    transcript = _json(read_evidence(root, run_dir / "run" / "transcript.json"))
    commands = denials = []
    reply = None
    if isinstance(transcript, dict):
        commands = [c for c in transcript.get("commands", []) if isinstance(c, dict)]
        denials = [d for d in transcript.get("permission_denials", []) if isinstance(d, dict)]
        reply = transcript.get("final_reply") if isinstance(transcript.get("final_reply"), str) \
            else None
    hidden = _json(read_evidence(root, run_dir / "hidden.json")) or record.get("hidden") or {}
    return AttemptView(order=order, record=record, attempt=attempt,
                       prompt=read_evidence(root, run_dir / "run" / "prompt.txt"),
                       checks=checks, commands=commands, denials=denials,
                       transcript=summary if isinstance(summary, dict) else None,
                       diff=read_evidence(root, run_dir / "model.diff"),
                       hidden=hidden if isinstance(hidden, dict) else {},
                       verify=_json(read_evidence(root, run_dir / "verify.json")),
                       reply=reply, problems=problems)


def recorded_orders(files: CampaignFiles) -> list[int]:
    """The orders with an attempt record, in order; nothing when runs/ is not a folder."""
    runs = files.runs
    if not runs.is_dir() or runs.is_symlink():
        return []
    orders = []
    for entry in sorted(runs.iterdir()):
        if entry.name.isdigit() and (entry / "attempt.json").is_file():
            orders.append(int(entry.name))
    return orders


def load_attempts(files: CampaignFiles) -> tuple[list[AttemptView], list[str]]:
    """Every readable attempt, and a line for each that is not."""
    views, unreadable = [], []
    for order in recorded_orders(files):
        try:
            views.append(load_attempt(files, order))
        except ApgError as exc:
            unreadable.append(f"runs/{order:04d}: {exc.message}")
    return views, unreadable


def usage_rows(attempts: list[AttemptView], by: str) -> list[dict[str, Any]]:
    """Tokens, cost, tool calls, commands and denials summed per arm or per agent (``by``), from
    each attempt record's ``usage`` (campaigns.agent_usage, which report.json's ``usage`` is
    too); attempts with no transcript count only in ``attempts``."""
    rows = agent_usage.grouped((view.attempt for view in attempts),
                               lambda record: str(getattr(record, by)))
    return [{by: name, **row} for name, row in rows.items()]

