"""The executor seam: what a campaign runner asks of whatever runs its attempts.

The runner owns the plan and the order: it submits one attempt at a time to a job's bed, takes
each result as it finishes (saying the attempt's line, submitting that job's next attempt), and on
an interrupt cancels what runs. An executor owns only where and how the bed work happens: the
local one (:mod:`executors.local`) on a thread per job in this process; a distributed engine
(issue 23's Ray) on its own workers, with the records still written under the campaign
directory. The bed work of one attempt is :func:`run_on_bed`, the same for every executor.

The executor also owns where the job beds are made: its module's ``prepare_jobs(campaign,
template, tag, bed_root, escrow_root, count, settings)`` gives the jobs the runner opens it with
(:func:`executors.registry.prepare_jobs`), and ``BEDS_ON_NODES`` says whether they are made where
the attempts run rather than here. The local executor makes, escrows and resets each bed on the
driver; the Ray executor's jobs are only planned, and each actor makes its bed on its node (a
DDEV project reset there first), escrows it there, and refuses one whose fingerprints
(provenance.NODE_KEYS: set key, baseline tag, grader tree, the code) differ from the campaign's.
The driver keeps what is checked centrally: the spec, the campaign's provenance and resume's
fingerprints (on Ray, all but the bed's own, which each actor compares on its node).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ai_proving_ground.campaigns import beds, retry
from ai_proving_ground.campaigns.attempt import AttemptRun, Context
from ai_proving_ground.campaigns.records import AttemptRecord
from ai_proving_ground.campaigns.spec import Attempt
from ai_proving_ground.errors import ApgError


@dataclass(frozen=True)
class Finished:
    """One submitted attempt, ended. ``record`` None: it never ran (the campaign was stopping
    first) or the bed work broke before recording it (``error``). ``lost``: why the job's bed
    could not be replaced after the attempt set it aside; ``error``: a bug in the bed work. Either
    way the job takes no more attempts."""

    job: beds.Job
    attempt: Attempt
    record: AttemptRecord | None
    lost: str | None = None
    error: BaseException | None = None


class Executor(Protocol):
    """Runs attempts on the jobs' beds it was opened with (:func:`executors.registry.open_executor`)."""

    def submit(self, job: beds.Job, attempt: Attempt) -> None:
        """Start ``attempt`` on ``job``'s bed (the runner gives a job one attempt at a time)."""

    def collect(self, timeout: float) -> list[Finished]:
        """What finished since the last call, waiting up to ``timeout`` seconds for the first (0:
        no wait); the wait must end often enough for the runner to see Ctrl-C."""

    def busy(self) -> bool:
        """Whether a submitted attempt has not ended yet; when False, :meth:`collect` holds every
        result still to be taken."""

    def cancel(self) -> None:
        """Stop: attempts that run are stopped and come back recorded as interrupted; none that
        were submitted and not started will run."""

    def close(self) -> None:
        """Release the workers (after every submitted attempt ended)."""


def run_on_bed(context: Context, job: beds.Job, attempt: Attempt,
               earlier: Sequence[dict[str, Any]] = ()) -> Finished:
    """One attempt on the job's bed, its record written; a bed it set aside replaced by a fresh
    one before the job takes another attempt (or tries this one again: campaigns.retry).
    ``earlier``: the tries this attempt already had elsewhere (a Ray actor lost mid-attempt)."""
    if context.stop.is_set():  # submitted, never started: an interrupted campaign leaves it out
        return Finished(job, attempt, None)
    tries: list[dict[str, Any]] = list(earlier)
    while True:
        run = AttemptRun(context, job, attempt, tries)
        record = run.run()
        if run.set_aside is not None:
            label = f"{run.set_aside}-{attempt.order:04d}" + (f".{len(tries)}" if tries else "")
            try:
                beds.replace_bed(context.campaign, context.template, job, label)
            except (OSError, ApgError) as exc:
                return Finished(job, attempt, record, lost=f"could not replace its bed: {exc}")
            except Exception as exc:  # a bug: the attempt's record stands, the job stops
                return Finished(job, attempt, record, error=exc)
        if not retry.again(context, record):
            return Finished(job, attempt, record)
        tries = retry.keep_try(context, record)
