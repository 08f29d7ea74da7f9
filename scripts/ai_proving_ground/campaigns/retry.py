"""Infrastructure errors tried again, up to the spec's ``retries: {infra_error: N}``.

An attempt that ends in ``infra_error`` (the agent never got a sound bed, or its work could not
be captured: nothing the agent is answerable for) is tried again on the same job, at most N more
times, unless the campaign is stopping. Before the next try, everything the failed try left in
``runs/<order>/`` (its attempt.json, logs, run directory) moves to ``runs/<order>/tries/<k>/``
(k from 1), and the next try's record lists the earlier ones in ``tries``. Each try starts as
every attempt does: verify --restore, reset and the doctor on the job's bed, so it runs on a
freshly reset bed; a try that set its bed aside (a failed reset) gets a fresh clone first
(:func:`executors.base.run_on_bed`). Only the last try's outcome counts; the report counts the
earlier tries as ``retries``.

A runner killed between moving a try aside and the next try's record leaves ``runs/<order>/``
without attempt.json: a resume discards the whole attempt, tries included, and runs it again.
"""

from __future__ import annotations

import shutil
from typing import Any

from ai_proving_ground.campaigns.attempt import Context
from ai_proving_ground.campaigns.records import AttemptRecord
from ai_proving_ground.report import say


def again(context: Context, record: AttemptRecord) -> bool:
    """Whether the attempt that gave ``record`` is tried once more."""
    limit = context.campaign.spec.infra_retries
    return (record.outcome == "infra_error" and len(record.tries) < limit
            and not context.stop.is_set() and not record.interrupted)


def keep_try(context: Context, record: AttemptRecord) -> list[dict[str, Any]]:
    """Move the failed try's files to ``tries/<k>/``; the tries so far, this one last."""
    files, order = context.files, record.order
    number = len(record.tries) + 1
    target = files.tries(order) / str(number)
    target.mkdir(parents=True, exist_ok=True)
    for entry in sorted(files.attempt_dir(order).iterdir()):
        if entry.name != files.tries(order).name:
            shutil.move(str(entry), str(target / entry.name))
    limit = context.campaign.spec.infra_retries
    say("APG_CAMPAIGN_RETRY", f"#{order:04d} try {number} of {limit + 1} was an infra_error "
        f"({record.reason}); trying again on a freshly reset bed")
    return [*record.tries, {"try": number, "outcome": record.outcome, "reason": record.reason,
                            "started_at": record.started_at, "finished_at": record.finished_at}]
