"""Live progress of a campaign: done/total, counts per outcome, elapsed time, ETA, what runs now.

Whatever runs attempts (``apg campaign run``, ``apg campaign resume``) feeds a :class:`Progress`
the runner's events, all from one thread: :meth:`~Progress.begin` once the plan is known (with the
outcomes a resumed campaign had already recorded), :meth:`~Progress.started` when an attempt is
handed to a job's bed, :meth:`~Progress.finished` when its record comes back, and
:meth:`~Progress.close` at the end. Two views share one :class:`Tally`, the one owner of the
numbers and the ETA: :class:`PlainProgress` says one ``APG_*`` line per event on stderr (a log
file, a pipe, ``NO_COLOR``) and :class:`LiveProgress` keeps a rich live display on a terminal,
with each finished attempt printed above it. The edge chooses (:func:`for_stream`, from
``cli/``). The agent's own output never reaches either: each attempt's thread writes it to that
attempt's ``agent.log``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from ai_proving_ground.campaigns.records import OUTCOMES
from ai_proving_ground.campaigns.spec import Attempt
from ai_proving_ground.report import say

if TYPE_CHECKING:  # rich is imported by LiveProgress itself, for start-up time
    from rich.console import Console, RenderableType

Clock = Callable[[], float]


class Progress(Protocol):
    """What a campaign runner tells whoever shows its progress."""

    def begin(self, name: str, total: int, recorded: Mapping[str, int] | None = None) -> None:
        """The plan has ``total`` attempts; ``recorded``: outcome -> count of those already done
        (a resumed campaign), counted as done but not in the rate behind the ETA."""

    def started(self, job: str, attempt: Attempt) -> None:
        """``attempt`` was handed to ``job``'s bed."""

    def finished(self, job: str, attempt: Attempt, outcome: str | None, reason: str = "") -> None:
        """``attempt`` ended with ``outcome`` (None: nothing was recorded, the job is lost or the
        campaign was stopping before it started)."""

    def close(self) -> None:
        """The attempts are over (also after an interrupt)."""


def describe(attempt: Attempt) -> str:
    """An attempt in one phrase: its order, its cell and its repeat."""
    return (f"#{attempt.order:04d} {attempt.task_id} arm={attempt.arm} agent={attempt.agent} "
            f"model={attempt.model or '-'} repeat={attempt.repeat}")


def clock_text(seconds: float | None) -> str:
    """``h:mm:ss``, or ``?`` while unknown."""
    if seconds is None:
        return "?"
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


@dataclass
class Tally:
    """The numbers both views show, kept in one place."""

    clock: Clock = time.monotonic
    name: str = ""
    total: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    recorded: int = 0  # done before this run began (resume)
    running: dict[str, tuple[Attempt, float]] = field(default_factory=dict)  # job -> since
    began: float = 0.0

    def begin(self, name: str, total: int, recorded: Mapping[str, int] | None) -> None:
        self.name, self.total, self.began = name, total, self.clock()
        for outcome, count in (recorded or {}).items():
            self.counts[outcome] = self.counts.get(outcome, 0) + count
        self.recorded = sum((recorded or {}).values())

    def start(self, job: str, attempt: Attempt) -> None:
        self.running[job] = (attempt, self.clock())

    def finish(self, job: str, outcome: str | None) -> None:
        self.running.pop(job, None)
        if outcome is not None:
            self.counts[outcome] = self.counts.get(outcome, 0) + 1

    @property
    def done(self) -> int:
        return sum(self.counts.values())

    @property
    def elapsed(self) -> float:
        return self.clock() - self.began

    @property
    def eta(self) -> float | None:
        """Seconds left at this run's own rate (attempts recorded before it do not count:
        they took no time here); None until an attempt of this run has finished."""
        finished_here = self.done - self.recorded
        left = max(0, self.total - self.done)
        if left == 0:
            return 0.0
        if finished_here <= 0:
            return None
        return self.elapsed / finished_here * left

    def count_text(self) -> str:
        """Each outcome seen so far with its count, in the records' order."""
        shown = [f"{self.counts[o]} {o}" for o in self.counts if self.counts[o]]
        return ", ".join(shown) or "none yet"

    def status(self) -> str:
        return (f"{self.done}/{self.total} done ({self.count_text()}), elapsed "
                f"{clock_text(self.elapsed)}, eta {clock_text(self.eta)}")


class PlainProgress:
    """One line per event on (this thread's) stderr: ``APG_CAMPAIGN_PLAN`` at the start,
    ``APG_CAMPAIGN_RUNNING`` when an attempt starts, ``APG_CAMPAIGN_ATTEMPT`` when it ends."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.tally = Tally(clock=clock)

    def begin(self, name: str, total: int, recorded: Mapping[str, int] | None = None) -> None:
        self.tally.begin(name, total, recorded)
        say("APG_CAMPAIGN_PLAN", f"{name}: {total} planned, {self.tally.done} already recorded, "
            f"{total - self.tally.done} to run")

    def started(self, job: str, attempt: Attempt) -> None:
        self.tally.start(job, attempt)
        say("APG_CAMPAIGN_RUNNING", f"{job}: {describe(attempt)}")

    def finished(self, job: str, attempt: Attempt, outcome: str | None, reason: str = "") -> None:
        self.tally.finish(job, outcome)
        if outcome is None:
            return
        detail = f" ({reason})" if outcome != "pass" and reason else ""
        say("APG_CAMPAIGN_ATTEMPT", f"{self.tally.status()}; {describe(attempt)}: "
            f"{outcome}{detail}")

    def close(self) -> None:
        """Nothing is left on screen to take down."""


_STYLES = {"pass": "green", "fail": "red", "timeout": "yellow", "tampered": "bold magenta",
           "no_attempt": "yellow", "infra_error": "bold red"}


class LiveProgress:
    """A rich live display on ``console`` (a bar, the counts, a line per running attempt), with
    each finished attempt printed above it. Rich renders from its own refresh thread, so every
    change and every render holds one lock."""

    def __init__(self, console: Console, clock: Clock = time.monotonic,
                 auto_refresh: bool = True) -> None:
        # Imported here, for start-up time: only a campaign run on a terminal draws.
        from rich.live import Live

        self.console = console
        self.tally = Tally(clock=clock)
        self._lock = threading.Lock()
        # stderr is wrapped so that the runner's own diagnostics print above the display; stdout
        # is left alone (it carries data: the campaign directory).
        self._live = Live(console=console, get_renderable=self._render, transient=False,
                          auto_refresh=auto_refresh, refresh_per_second=2, redirect_stdout=False,
                          redirect_stderr=True)

    def begin(self, name: str, total: int, recorded: Mapping[str, int] | None = None) -> None:
        with self._lock:
            self.tally.begin(name, total, recorded)
        self._live.start()

    def started(self, job: str, attempt: Attempt) -> None:
        with self._lock:
            self.tally.start(job, attempt)
        self._live.refresh()

    def finished(self, job: str, attempt: Attempt, outcome: str | None, reason: str = "") -> None:
        from rich.text import Text  # for start-up time, as in __init__

        with self._lock:
            self.tally.finish(job, outcome)
        if outcome is not None:
            line = Text(f"{describe(attempt)}: ")
            line.append(outcome, style=_STYLES.get(outcome, ""))
            if outcome != "pass" and reason:
                line.append(f" ({reason})", style="dim")
            self.console.print(line)
        self._live.refresh()

    def close(self) -> None:
        self._live.stop()

    def _render(self) -> RenderableType:
        from rich import console, progress_bar, table, text  # for start-up time, as in __init__

        with self._lock:
            tally = self.tally
            head = table.Table.grid(padding=(0, 1))
            bar = progress_bar.ProgressBar(total=max(1, tally.total), completed=tally.done, width=30)
            head.add_row(text.Text(tally.name, style="bold"), bar,
                         text.Text(f"{tally.done}/{tally.total} done"),
                         text.Text(f"elapsed {clock_text(tally.elapsed)}"),
                         text.Text(f"eta {clock_text(tally.eta)}"))
            counts = text.Text()
            for outcome, count in tally.counts.items():
                if count:
                    counts.append(f"{count} {outcome}  ", style=_STYLES.get(outcome, ""))
            rows: list[Any] = [head, counts or text.Text("no attempt finished yet", style="dim")]
            now = tally.clock()
            for job, (attempt, since) in sorted(tally.running.items()):
                rows.append(text.Text(f"  {job}  {describe(attempt)}  {clock_text(now - since)}"))
        return console.Group(*rows)


def for_stream(stream: TextIO, no_color: bool) -> Progress:
    """The live display on a terminal that can redraw, plain lines elsewhere (a pipe, a file,
    ``TERM=dumb``) and whenever ``NO_COLOR`` is set (https://no-color.org: set and not empty)."""
    if no_color or not stream.isatty():
        return PlainProgress()
    from rich.console import Console  # for start-up time: only a terminal needs it

    console = Console(file=stream)
    # A dumb terminal cannot move the cursor: rich would draw only the last frame.
    return LiveProgress(console) if console.is_interactive else PlainProgress()
