"""An attempt's one outcome, decided in one place by explicit rules, and the check that a
record's fields agree with it.

The rules, first match wins (each names the fact it reads):

1. setup: verify before, reset, the doctor, an arm's setup step, or starting the adapter failed
   → ``infra_error`` (the agent never got the bed);
2. the agent reached what judges it: verify after (or the escrow's own hash check) found judging
   code changed or the baseline no longer matching (its tag moved or deleted), the bed's
   repository (HEAD, config, refs, hooks, info) changed, or a record ``apg run`` wrote is no
   longer the file it wrote (``APG_RUN_RECORD_BROKEN``) → ``tampered``, never repaired and never
   ``infra_error`` (which is only for what the agent cannot have caused);
3. the run was interrupted, refused by the credential preflight, recorded nothing, or the adapter
   exited 126/127 (the shell's "cannot execute" / "not found": its agent never ran)
   → ``infra_error``;
4. the adapter outlived the time limit and was stopped → ``timeout``;
5. the adapter exited non-zero (it ran and gave up or crashed), or its CLI exited 0 although
   every tool call was denied (run.json's ``no_attempt_reason``) → ``no_attempt``;
6. the site the agent left cannot be read to capture or grade it (the site refused:
   ``APG_SITE_*``, a database it broke) → ``fail``: it is the agent's work;
7. capturing the model's work, grading, or the hidden verifier could not run for any other
   reason → ``infra_error``;
8. the public checks scored 1 and the hidden verifier (when the task has one) passed → ``pass``;
9. otherwise → ``fail`` (the public checks failed, or they passed and the hidden verifier failed).

Every outcome but ``infra_error`` is the agent's and counts in k/n (only ``pass`` in k).
"""

from __future__ import annotations

from dataclasses import dataclass

from ai_proving_ground.campaigns.records import AttemptRecord
from ai_proving_ground.transcripts import ALL_DENIED

# How the reason of a fail that could not be graded begins (the report accepts its null score).
UNREADABLE = "the site the agent left cannot be read"
# The shell's conventions for "found but cannot execute" and "not found": the agent never ran.
NOT_STARTED_EXIT_CODES = frozenset({126, 127})


@dataclass(frozen=True)
class Facts:
    """What an attempt established, phase by phase (None: that phase did not get that far)."""

    setup_error: str | None = None
    tampered: str | None = None
    run_status: str | None = None
    adapter_exit_code: int | None = None
    adapter_said: str = ""
    no_attempt_reason: str = ""  # run.json's, when the CLI exited 0 yet tried nothing
    timeout_s: float | None = None
    evidence_error: str | None = None
    unreadable: str | None = None  # the site the agent left refused to be read
    score: float | None = None
    hidden_status: str = "absent"


def decide(facts: Facts) -> tuple[str, str]:
    """The outcome and its reason (see the module doc for the rules, in order)."""
    if facts.setup_error is not None:
        return "infra_error", facts.setup_error
    if facts.tampered is not None:
        return "tampered", f"the attempt reached what judges it: {facts.tampered}"
    started = _not_started(facts)
    if started is not None:
        return "infra_error", started
    if facts.run_status == "timed_out":
        limit = f" {facts.timeout_s:g}s" if facts.timeout_s is not None else ""
        return "timeout", f"the adapter outlived its{limit} time limit and was stopped"
    if facts.run_status == "no_attempt":
        return "no_attempt", (facts.no_attempt_reason or f"the adapter exited "
                              f"{facts.adapter_exit_code}: it recorded no attempt")
    if facts.unreadable is not None:
        return "fail", f"{UNREADABLE}: {facts.unreadable}"
    if facts.evidence_error is not None:
        return "infra_error", facts.evidence_error
    if facts.hidden_status == "error":
        return "infra_error", "the hidden verifier could not run a command (see hidden.json)"
    if facts.score == 1.0 and facts.hidden_status in ("pass", "absent"):
        hidden = "; the hidden verifier passed" if facts.hidden_status == "pass" else ""
        return "pass", f"the public checks passed{hidden}"
    if facts.score == 1.0:
        return "fail", "the public checks passed; the hidden verifier failed"
    return "fail", "the public checks failed"


def _not_started(facts: Facts) -> str | None:
    said = f" ({facts.adapter_said})" if facts.adapter_said else ""
    if facts.run_status == "interrupted":
        return "interrupted while the agent ran"
    if facts.run_status == "refused":
        return f"the credential preflight refused the adapter{said}"
    if facts.run_status is None:
        return f"apg run recorded nothing{said}"
    if facts.run_status == "no_attempt" and facts.adapter_exit_code is None:
        return f"the adapter could not be started{said}"
    if facts.adapter_exit_code in NOT_STARTED_EXIT_CODES:
        return f"the adapter exited {facts.adapter_exit_code}: its agent could not start{said}"
    return None


def disagreements(record: AttemptRecord) -> list[str]:
    """Where a record's fields disagree with its outcome; reported, never reclassified."""
    found = []
    outcome, hidden = record.outcome, record.hidden["status"]
    if record.tampered != (outcome == "tampered"):
        found.append(f"tampered is {str(record.tampered).lower()} but the outcome is {outcome}")
    if outcome == "pass":
        if record.score != 1.0:
            found.append(f"the outcome is pass but the public score is {record.score}")
        if hidden not in ("pass", "absent"):
            found.append(f"the outcome is pass but the hidden verifier's status is {hidden}")
        if record.adapter_exit_code != 0:
            found.append(f"the outcome is pass but the adapter exited {record.adapter_exit_code}")
    if outcome == "fail" and record.score == 1.0 and hidden != "fail":
        found.append("the outcome is fail but the public score is 1.0 and the hidden verifier "
                     f"did not fail ({hidden})")
    if outcome == "fail" and record.score is None and not record.reason.startswith(UNREADABLE):
        found.append("the outcome is fail but nothing was graded")
    if outcome == "timeout" and record.run_status != "timed_out":
        found.append(f"the outcome is timeout but the run's status is {record.run_status}")
    # Exit 0 and no attempt agree when run.json said why (every tool call was denied).
    if (outcome == "no_attempt" and record.adapter_exit_code in (0, None)
            and not record.reason.startswith(ALL_DENIED)):
        found.append(f"the outcome is no_attempt but the adapter exited {record.adapter_exit_code}")
    return found
