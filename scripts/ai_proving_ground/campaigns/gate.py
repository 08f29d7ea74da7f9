"""``apg campaign report DIR --gate ARM=MIN``: a campaign as a CI check.

A gate holds when the arm's pooled pass rate is proven at least ``MIN``: the lower bound of its
95% Wilson interval, not the rate itself, so that three lucky passes do not open a gate a
hundred attempts would close. An arm run for several agents or models must hold for each; an
arm with no judged attempt (all infrastructure errors, say) proves nothing and fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ai_proving_ground.errors import ApgError


@dataclass(frozen=True)
class Gate:
    arm: str
    minimum: float

    @classmethod
    def parse(cls, raw: str) -> Gate:
        arm, sep, value = raw.rpartition("=")
        try:
            minimum = float(value)
        except ValueError:
            minimum = float("nan")
        if not sep or not arm or not 0.0 <= minimum <= 1.0:
            raise ApgError("APG_USAGE", f"--gate {raw!r}: write ARM=MIN with MIN between 0 and 1 "
                           "(e.g. --gate with_skill=0.6)", exit_code=2)
        return cls(arm, minimum)


@dataclass(frozen=True)
class GateResult:
    gate: Gate
    agent: str
    model: str | None
    low: float
    k: int
    n: int

    @property
    def holds(self) -> bool:
        return self.n > 0 and self.low >= self.gate.minimum

    def line(self) -> str:
        who = f"{self.agent}, {self.model or '(default model)'}"
        if self.n == 0:
            return f"arm {self.gate.arm} ({who}): no judged attempt, nothing proven"
        relation = ">=" if self.holds else "<"
        return (f"arm {self.gate.arm} ({who}): {self.k}/{self.n}, Wilson lower bound "
                f"{self.low:.3f} {relation} {self.gate.minimum:g}")


def evaluate(report: dict[str, Any], gates: list[Gate]) -> list[GateResult]:
    """Each gate against each (agent, model) row of its arm; an arm the campaign does not have
    is a usage error naming the arms it has."""
    arms = report["campaign"].get("arms") or sorted({row["arm"] for row in report["arms"]})
    results = []
    for gate in gates:
        rows = [row for row in report["arms"] if row["arm"] == gate.arm]
        if gate.arm not in arms:
            raise ApgError("APG_USAGE", f"--gate {gate.arm}: the campaign has no such arm; its "
                           f"arms are {', '.join(arms) or 'none'}", exit_code=2)
        if not rows:
            results.append(GateResult(gate, "-", None, 0.0, 0, 0))
        for row in rows:
            results.append(GateResult(gate, row["agent"], row["model"], row["wilson"][0],
                                      row["k"], row["n"]))
    return results
