"""An attempt's evidence files beside attempt.json: verify.json and hidden.json, as values.

``VerifyRecord`` (``schemas/verify_record.schema.json``) holds each escrowed verify the attempt
ran (``before``; ``after``; ``after_restore`` is kept for records of older runners: a mismatch
after the attempt is now tampering, never restored), a key only for a verify that ran.
``HiddenRecord`` (``schemas/hidden_record.schema.json``) is the hidden verifier's result
(:class:`tasks.hidden.HiddenOutcome`: its status and checks, which attempt.json keeps too) with
what ran it: the patch as the dataset names it, the commands, their time limit, and the
warnings restoring the bed gave. Both are written and read through :mod:`records`.
``config.json`` beside them is no record: it is the site's config as the model left it, data.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from ai_proving_ground.campaigns.escrowed import Verdict
from ai_proving_ground.records import FieldsRecord, read_record
from ai_proving_ground.tasks.hidden import HiddenOutcome, HiddenVerifier

VERIFY_FILE = "verify.json"
HIDDEN_FILE = "hidden.json"
WHEN = ("before", "after", "after_restore")


@dataclass(frozen=True)
class VerifyRecord(FieldsRecord):
    """verify.json: each escrowed verify of the attempt (``Verdict.as_json``); None: not run."""

    SCHEMA: ClassVar[str] = "verify_record"

    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    after_restore: dict[str, Any] | None = None

    def with_verdict(self, when: str, verdict: Verdict) -> VerifyRecord:
        assert when in WHEN, when
        return replace(self, **{when: verdict.as_json()})

    @property
    def ran(self) -> bool:
        """Whether any verify ran (else there is no verify.json)."""
        return any(v is not None for v in (self.before, self.after, self.after_restore))

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in super().as_json().items() if v is not None}


@dataclass(frozen=True)
class HiddenRecord(FieldsRecord):
    """hidden.json: the hidden verifier's result and what ran it."""

    SCHEMA: ClassVar[str] = "hidden_record"

    status: str
    checks: list[dict[str, Any]]
    patch: str | None  # as the dataset names it; null: commands only
    commands: list[list[str]]
    timeout_s: float
    restore_warnings: list[str]

    @classmethod
    def of(cls, outcome: HiddenOutcome, verifier: HiddenVerifier) -> HiddenRecord:
        return cls(**outcome.summary(), patch=verifier.patch_ref,
                   commands=[list(c) for c in verifier.commands], timeout_s=verifier.timeout_s,
                   restore_warnings=list(outcome.warnings))


def read_verify(path: Path) -> VerifyRecord:
    return read_record(path, VerifyRecord)


def read_hidden(path: Path) -> HiddenRecord:
    return read_record(path, HiddenRecord)
