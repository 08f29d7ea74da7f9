"""grade.json: the every_eval_ever envelope ``apg grade`` emits, as a value
(``schemas/envelope.schema.json``).

Built by :mod:`ai_proving_ground.tasks.grade`, saved as a run's ``grade.json`` and a campaign
attempt's, and kept by :mod:`ai_proving_ground.tasks.results`. :class:`Envelope` names what the
product reads back (the id, task, model, score, verdict, run and retrieval time) and keeps the
whole document, so writing it back gives the same JSON, key for key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ai_proving_ground.errors import ApgError
from ai_proving_ground.records import RECORD_INVALID, read_record, write_record
from ai_proving_ground.tasks.checks import CheckResult


@dataclass(frozen=True)
class Envelope:
    """One graded attempt: what results and reports read, over the document as emitted."""

    SCHEMA: ClassVar[str] = "envelope"

    evaluation_id: str
    task_id: str
    model_id: str
    score: float
    verdict: str
    checks_passed: str | None
    run_id: str | None
    retrieved_timestamp: str
    dataset_sha256: str | None  # of the dataset file the task was graded from
    checks: tuple[CheckResult, ...]  # each public check's result, in the task's order
    document: dict[str, Any] = field(repr=False)

    def as_json(self) -> dict[str, Any]:
        return self.document

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Envelope:
        """The envelope ``data`` holds (already checked against the schema)."""
        result = data["evaluation_results"][0]
        details = result["score_details"]["details"]
        source = data["source_metadata"]["additional_details"]
        task_id = result["source_data"].get("additional_details", {}).get("task_id")
        if not isinstance(task_id, str):
            raise ApgError(RECORD_INVALID, "$.evaluation_results[0].source_data"
                           ".additional_details: names no task_id")
        return cls(evaluation_id=data["evaluation_id"], task_id=task_id,
                   model_id=data["model_info"]["id"],
                   score=float(result["score_details"]["score"]), verdict=details["verdict"],
                   checks_passed=details.get("checks_passed"),
                   run_id=source.get("apg_run_id"), retrieved_timestamp=data["retrieved_timestamp"],
                   dataset_sha256=source.get("dataset_sha256"), checks=_checks(details),
                   document=data)


def _checks(details: dict[str, Any]) -> tuple[CheckResult, ...]:
    """The check results the details hold as JSON text (none in an unresolved envelope)."""
    where = "$.evaluation_results[0].score_details.details.checks"
    try:
        listed = json.loads(details.get("checks", "[]"))
        return tuple(CheckResult(**check) for check in listed)
    except (ValueError, TypeError) as exc:
        raise ApgError(RECORD_INVALID, f"{where}: not a JSON list of check results ({exc})") from None


def read_envelope(path: Path) -> Envelope:
    return read_record(path, Envelope)


def write_envelope(path: Path, envelope: Envelope) -> None:
    """``path`` (a grade.json or a stored result), checked against the schema first."""
    write_record(path, envelope)


VERDICT_TOKEN = "APG_GRADE_VERDICT"
# An expected or found value longer than this is cut in the verdict line (the envelope has all).
_SHOWN_CHARS = 120


def verdict_line(envelope: Envelope) -> str:
    """The one line that answers "did it pass?" for a person, from the envelope alone:
    ``<task> agent=<adapter> score=<s> checks k/n`` and the first failing check with what it
    expected and found (the token is the caller's: :data:`VERDICT_TOKEN`)."""
    document = envelope.document
    model_details = document["model_info"].get("additional_details", {})
    details = document["evaluation_results"][0]["score_details"]["details"]
    agent = model_details.get("agent_adapter", "unrecorded")
    passed = sum(1 for check in envelope.checks if check.passed)
    line = (f"{envelope.task_id} agent={agent} score={envelope.score:g} "
            f"checks {passed}/{len(envelope.checks)}")
    failed = next((check for check in envelope.checks if not check.passed), None)
    if failed is not None:
        line += (f", first failed: {failed.id} ({failed.type}): expected "
                 f"{_shown(failed.expected)}, found {_shown(failed.found)}")
    if "trigger" in details:  # scorers.triggers.DETAILS_KEY
        # Here for start-up time: the scorers are needed only for a skill trigger case's line.
        from ai_proving_ground.scorers import triggers

        trigger = triggers.recorded(details)
        if trigger is not None:
            line += f", {triggers.said(trigger)}"
    if "behaviour_passed" in details:
        line += f", behaviour {details['behaviour_passed']}"
        if details.get("behaviour_undecided", "0") != "0":
            line += f" ({details['behaviour_undecided']} undecided)"
    hidden = details.get("hidden_verifier")
    if hidden not in (None, "absent", "pass"):
        line += f", hidden verifier: {hidden}"
    return line


def _shown(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS - 3] + "..."
