"""A campaign attempt whose CLI exited 0 with every tool call denied is no_attempt, with the
run's reason, and that is not a disagreement between the record's fields."""

from __future__ import annotations

from ai_proving_ground.campaigns.outcome import Facts, decide, disagreements
from ai_proving_ground.campaigns.records import AttemptRecord

REASON = "every tool call (2) was denied permission: Bash(touch x); Bash(rm y)"


def record(outcome: str, reason: str, code: int | None) -> AttemptRecord:
    return AttemptRecord(index=0, order=0, task_id="t", arm="a", agent="claude-code", model=None,
                         repeat=0, outcome=outcome, reason=reason, started_at="x",
                         run_status="no_attempt", adapter_exit_code=code)


def test_all_denied_is_no_attempt_with_the_runs_reason() -> None:
    facts = Facts(run_status="no_attempt", adapter_exit_code=0, no_attempt_reason=REASON)
    assert decide(facts) == ("no_attempt", REASON)
    assert disagreements(record("no_attempt", REASON, 0)) == []


def test_no_attempt_with_exit_0_and_no_reason_is_still_a_disagreement() -> None:
    outcome, reason = decide(Facts(run_status="no_attempt", adapter_exit_code=5))
    assert (outcome, reason) == ("no_attempt", "the adapter exited 5: it recorded no attempt")
    assert disagreements(record("no_attempt", "the adapter exited 0: it recorded no attempt",
                                0)) == ["the outcome is no_attempt but the adapter exited 0"]
