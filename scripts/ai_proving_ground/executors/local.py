"""The local executor (the default): one thread per job in the runner's process.

The runner's driver is where the beds are made (:func:`prepare_jobs`): a clone of the template per
job (a DDEV job: its project, in place), escrowed and reset, before the first attempt. Each job's
bed work runs on its own thread of a pool as wide as the jobs; the runner gives a job
its next attempt when the last one is collected, so a job never holds two. Cancel sets the
campaign's stop flag and interrupts every child the attempts started (the adapters, under the
keeper; the verifiers), so the running attempts end recorded as interrupted.
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ai_proving_ground.campaigns import beds
from ai_proving_ground.campaigns.attempt import Context
from ai_proving_ground.campaigns.spec import Attempt, Campaign
from ai_proving_ground.executors.base import Finished, run_on_bed
from ai_proving_ground.settings import Settings

# The beds are made here, in the driver's process, before the executor opens (executors.base).
BEDS_ON_NODES = False


def prepare_jobs(campaign: Campaign, template: Path, tag: str, bed_root: Path, escrow_root: Path,
                 count: int, settings: Settings) -> list[beds.Job]:
    """One freshly cloned (DDEV: each project, reset in place), escrowed and reset bed per job
    (beds.CannotRun when one cannot be)."""
    projects = list(campaign.spec.ddev_beds[:count])
    if projects:
        return beds.prepare_ddev_jobs(campaign, projects, tag, escrow_root, settings)
    return beds.prepare_jobs(campaign, template, tag, bed_root, escrow_root, count, settings)


class LocalExecutor:
    """:class:`executors.base.Executor` on a thread pool."""

    def __init__(self, context: Context, jobs: list[beds.Job]) -> None:
        self._context = context
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(jobs)))
        self._done: queue.Queue[Finished] = queue.Queue()
        self._lock = threading.Lock()
        self._running = 0

    def submit(self, job: beds.Job, attempt: Attempt) -> None:
        with self._lock:
            self._running += 1
        self._pool.submit(self._run, job, attempt)

    def _run(self, job: beds.Job, attempt: Attempt) -> None:
        try:
            finished = run_on_bed(self._context, job, attempt)
        except BaseException as exc:  # a bug: that job stops, the others go on
            finished = Finished(job, attempt, None, error=exc)
        finally:
            # The result is queued before the count drops, so "not busy" means all is queued.
            self._done.put(finished)
            with self._lock:
                self._running -= 1

    def collect(self, timeout: float) -> list[Finished]:
        try:
            got = [self._done.get(timeout=timeout) if timeout > 0 else self._done.get_nowait()]
        except queue.Empty:
            return []
        while True:
            try:
                got.append(self._done.get_nowait())
            except queue.Empty:
                return got

    def busy(self) -> bool:
        with self._lock:
            return self._running > 0

    def cancel(self) -> None:
        self._context.stop.set()
        self._context.children.interrupt_all()

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def open_executor(context: Context, jobs: list[beds.Job]) -> LocalExecutor:
    return LocalExecutor(context, jobs)
