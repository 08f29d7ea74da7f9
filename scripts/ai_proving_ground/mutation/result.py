"""What ``apg task mutate`` finds: a :class:`MutationReport` (schema ``mutation_report``), the
one shape ``--json`` prints and the scores file keeps a summary of.

Each mutant is ``killed`` (graded fail), ``survived`` (graded pass though its behaviour differs
from the reference's), ``equivalent`` (its behaviour equals the reference's: not counted, its
verdict kept to show checks that reject a right build), ``stillborn`` (the site refused its
writes, as it would refuse an agent's: not counted) or ``error`` (it could not be graded).
The score is killed / (killed + survived); None when no mutant behaves differently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from ai_proving_ground.records import FieldsRecord

STATUSES = ("killed", "survived", "equivalent", "stillborn", "error")
DEFAULT_THRESHOLD = 0.95
UNPROVABLE = "APG_MUTATE_UNPROVABLE"  # a task with no checks or no reference: usage, exit 2


@dataclass(frozen=True)
class BuildResult:
    """One graded build: the reference, nop or a mutant (part of the report, no record alone)."""

    name: str
    operator: str
    description: str
    status: str
    verdict: str | None = None  # "pass" or "fail" as graded; None when not graded
    failed_checks: list[str] = field(default_factory=list)
    message: str = ""


@dataclass(frozen=True)
class MutationReport(FieldsRecord):
    """Every build of one task, graded, and the score."""

    SCHEMA: ClassVar[str] = "mutation_report"

    task_id: str
    dataset: str
    dataset_sha256: str
    task_sha256: str
    threshold: float
    reference: BuildResult
    nop: BuildResult
    mutants: list[BuildResult]
    bed: str = "embedded"  # the kind of bed every build was graded on: embedded or ddev

    def count(self, status: str) -> int:
        return sum(1 for m in self.mutants if m.status == status)

    @property
    def score(self) -> float | None:
        counted = self.count("killed") + self.count("survived")
        return self.count("killed") / counted if counted else None

    @property
    def ok(self) -> bool:
        """The reference passes, nop fails, nothing errs and the score meets the threshold."""
        score = self.score
        return (self.reference.verdict == "pass" and self.nop.verdict == "fail"
                and not self.count("error") and (score is None or score >= self.threshold))

    def survivors(self) -> list[str]:
        return [m.name for m in self.mutants if m.status == "survived"]

    def as_json(self) -> dict[str, Any]:
        data = super().as_json()
        data["counts"] = {status: self.count(status) for status in STATUSES}
        data["score"] = self.score
        data["ok"] = self.ok
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MutationReport:
        return cls(task_id=data["task_id"], dataset=data["dataset"],
                   dataset_sha256=data["dataset_sha256"], task_sha256=data["task_sha256"],
                   threshold=data["threshold"], reference=BuildResult(**data["reference"]),
                   nop=BuildResult(**data["nop"]),
                   mutants=[BuildResult(**m) for m in data["mutants"]],
                   bed=data.get("bed", "embedded"))

    def lines(self) -> list[str]:
        """The report for people: one line per build, then the score."""
        out = [_line(self.reference), _line(self.nop), *(_line(m) for m in self.mutants)]
        counted = self.count("killed") + self.count("survived")
        score = "n/a (no mutant behaves differently)" if self.score is None else \
            f"{self.score:.3f} ({self.count('killed')}/{counted} killed)"
        out.append(f"score {score}; {self.count('equivalent')} equivalent, "
                   f"{self.count('stillborn')} stillborn, {self.count('error')} error(s); "
                   f"threshold {self.threshold:g}; on the {self.bed} site")
        return out


def _line(build: BuildResult) -> str:
    verdict = f" graded {build.verdict}" if build.verdict else ""
    failed = f" (failed: {', '.join(build.failed_checks)})" if build.failed_checks else ""
    note = f" - {build.message}" if build.message else ""
    return f"{build.status:<10} {build.name}{verdict}{failed}: {build.description}{note}"
