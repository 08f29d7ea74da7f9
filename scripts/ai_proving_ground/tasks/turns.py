"""A task's later turns: each sent by resuming the agent's own session, while its conditions hold.

A task's ``prompt`` is its first turn; ``turns`` lists the later ones (dataset schema,
``$defs/turn``). After every turn apg keeps that turn's transcript and snapshots the site, then
decides the next turn: it is sent only when the turn before ended with exit 0, apg read the
agent's session id from that turn's transcript (an adapter whose CLI apg has no parser for gets
the turn with no id) and every ``only_if`` condition holds now (a state check, or ``not:`` one
that must fail; one driver round trip for all of them). Otherwise it is skipped, and run.json's
``turns`` says why; a skipped turn does not stop the next one being considered, a failed one does.

Later turns run the same adapter with ``APG_TURN`` (its number), ``APG_RESUME_SESSION`` (the
session to resume), ``APG_PROMPT_FILE`` and ``APG_REQUEST_FILE`` pointing into
``turns/<n>/`` (README, "Adapters"). What each turn leaves in the run directory:

``turns/<n>/``  ``prompt.txt``, ``request.json``, ``stdout.log``, ``stderr.log`` and the CLI's raw
                output (turn 1's stay where every run keeps them, beside run.json);
                ``transcript.json`` that turn's own transcript; ``config.json`` every config
                object of the site once the turn ended
``transcript.json``  beside run.json: the whole conversation's (``transcripts.turns.merge``), so
                run.json's ``agent_transcript`` sums tokens, cost and calls over the turns sent
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from ai_proving_ground import transcripts
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_bytes, atomic_write_json, atomic_write_text
from ai_proving_ground.records import write_record
from ai_proving_ground.report import say
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.base import SiteDriver, driver_for
from ai_proving_ground.tasks import run_transcript
from ai_proving_ground.tasks.checks import run_checks
from ai_proving_ground.tasks.dataset import Task
from ai_proving_ground.tasks.request import PROMPT_FILE, REQUEST_FILE, read_request
from ai_proving_ground.tasks.run_files import STDOUT_LOG, RunFiles
from ai_proving_ground.tasks.run_spawn import TRANSCRIPTS
from ai_proving_ground.tasks.sandboxing import run_work
from ai_proving_ground.transcripts.record import Transcript
from ai_proving_ground.transcripts.turns import TURNS_DIR, merge, own_usage, session_part

STATE_FILE = "config.json"
# Sends one later turn: (the variables it adds, the folder for its logs) -> the adapter's exit.
Send = Callable[[Mapping[str, str], Path], "int | None"]


def turn_dir(number: int) -> str:
    """Turn ``number``'s folder, relative to the run directory."""
    return f"{TURNS_DIR}/{number}"


def check_conditions(conditions: list[dict[str, Any]], driver: SiteDriver, approot: Path,
                     fixtures: list[str], settings: Settings) -> list[dict[str, Any]]:
    """Each ``only_if`` condition now: its check's result, and whether the condition holds (the
    check passed, or failed under ``not``)."""
    specs = [dict(c["not"], id=c.get("id") or c["not"].get("id") or f"not#{n}") if "not" in c
             else c for n, c in enumerate(conditions)]
    results = run_checks(specs, driver, approot, fixtures, settings)
    return [{"id": r.id, "type": r.type, "negated": "not" in c, "holds": r.passed != ("not" in c),
             "message": r.message} for c, r in zip(conditions, results, strict=True)]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class TurnEntry:
    """One turn in run.json's ``turns`` (``schemas/run.schema.json``), filled in as it happens."""

    turn: int
    sent: bool
    id: str | None = None
    skipped: str | None = None  # why it was not sent
    conditions: list[dict[str, Any]] | None = None  # its only_if as read (check_conditions)
    prompt_sha256: str | None = None
    resumed_session: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    adapter_exit_code: int | None = None
    stopped: bool | None = None  # apg stopped the run in this turn
    agent_transcript: dict[str, Any] | None = None
    state: str | None = None  # turns/<n>/config.json
    state_error: str | None = None

    # Kept even when null: the turn's exit code (null: it could not start, or was stopped).
    ALWAYS: ClassVar[frozenset[str]] = frozenset({"turn", "sent", "adapter_exit_code"})

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items()
                if v is not None or (k in self.ALWAYS and self.sent)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TurnEntry:
        return cls(**data)


@dataclass
class Conversation:
    """The turns of one run: what each left, and what run.json says about them."""

    task: Task
    agent: str
    files: RunFiles
    approot: Path
    settings: Settings
    limit: int
    entries: list[TurnEntry] = field(default_factory=list)
    kept: list[Transcript] = field(default_factory=list)
    _site: SiteDriver | None = None
    # The shared session file's size after the turn before (where this turn's part starts),
    # and after this one.
    _session_size: int = 0
    _session_now: int | None = None
    _session_name: str | None = None  # the shared session file, relative to the work folder
    _current: int = 1  # the turn in flight

    @property
    def run_dir(self) -> Path:
        return self.files.run_dir

    def site(self) -> SiteDriver:
        if self._site is None:
            self._site = driver_for(self.approot, self.settings)
        return self._site

    # -- the turns

    def carry_on(self, first_exit: int | None, send: Send) -> int | None:
        """After the first turn (which exited ``first_exit``): keep it, then decide and send
        each later turn; the exit code of the last turn sent."""
        self.entries.append(TurnEntry(turn=1, sent=True, adapter_exit_code=first_exit))
        self._after(1)
        code = first_exit
        for number, turn in enumerate(self.task.turns, start=2):
            entry = TurnEntry(turn=number, sent=False, id=turn.get("id"))
            self.entries.append(entry)
            reason = ("apg's records of this run were changed while the adapter ran"
                      if self.files.problems() else self._why_not(turn, code, entry))
            if reason is not None:
                entry.skipped = reason
                say("APG_RUN_TURN_SKIPPED", f"run {self.run_dir.name}: turn {number} not sent: "
                    f"{reason}")
                continue
            self._current = number
            entry.sent, entry.started_at = True, _now()
            session = self._session_id()
            say("APG_RUN_TURN", f"run {self.run_dir.name}: turn {number} of "
                f"{len(self.task.turns) + 1}, resuming session {session or '(none)'}")
            code = send(self._prepare(number, turn, session), self.run_dir / turn_dir(number))
            entry.adapter_exit_code, entry.finished_at = code, _now()
            entry.resumed_session = session
            self._after(number)
        return code

    def _why_not(self, turn: dict[str, Any], code: int | None,
                 entry: TurnEntry) -> str | None:
        """Why this turn is not sent now, or None when it is."""
        last = [e for e in self.entries if e.sent][-1].turn
        if code != 0:
            return f"turn {last} ended with exit {code}"
        if self.agent in transcripts.PARSERS and self._session_id() is None:
            return f"turn {last}'s transcript names no session to resume"
        if not turn.get("only_if"):
            return None
        try:
            found = check_conditions(turn["only_if"], self.site(), self.approot,
                                     self.task.fixtures, self.settings)
        except ApgError as exc:
            return f"only_if could not be read: {exc}"
        entry.conditions = found
        failing = [f"{c['id']} ({'not ' if c['negated'] else ''}{c['type']}: {c['message']})"
                   for c in found if not c["holds"]]
        return f"only_if does not hold: {'; '.join(failing)}" if failing else None

    def _session_id(self) -> str | None:
        return self.kept[-1].session_id if self.kept else None

    def _prepare(self, number: int, turn: dict[str, Any], session: str | None) -> dict[str, str]:
        """The turn's prompt and request in its folder; the variables that point at them."""
        folder = self.run_dir / turn_dir(number)
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / PROMPT_FILE, str(turn["prompt"]))
        request = replace(read_request(self.run_dir / REQUEST_FILE), turn=number,
                          resume_session=session, prompt_file=str(folder / PROMPT_FILE))
        write_record(folder / REQUEST_FILE, request)
        for name in (PROMPT_FILE, REQUEST_FILE, *TRANSCRIPTS.values()):
            (folder / name).touch()
        self.files.note(*(f"{turn_dir(number)}/{n}"
                          for n in (PROMPT_FILE, REQUEST_FILE, *TRANSCRIPTS.values())))
        self.entries[-1].prompt_sha256 = hashlib.sha256(
            str(turn["prompt"]).encode("utf-8")).hexdigest()
        return {"APG_TURN": str(number), "APG_RESUME_SESSION": session or "",
                "APG_PROMPT_FILE": str(folder / PROMPT_FILE),
                "APG_REQUEST_FILE": str(folder / REQUEST_FILE)}

    # -- what a turn leaves

    def _after(self, number: int) -> None:
        """Keep turn ``number``'s transcript and snapshot the site's config."""
        entry = self.entries[-1]
        transcript = self._keep_transcript(number)
        if transcript is not None:
            self.kept.append(transcript)
            entry.agent_transcript = transcript.summary(
                f"{turn_dir(number)}/{transcripts.TRANSCRIPT_FILE}")
        try:
            atomic_write_json(self.run_dir / turn_dir(number) / STATE_FILE, self.site().all_config())
            entry.state = f"{turn_dir(number)}/{STATE_FILE}"
        except (ApgError, OSError) as exc:  # the agent may have left a site that cannot be read
            entry.state_error = str(exc)

    def _keep_transcript(self, number: int) -> Transcript | None:
        folder = self.run_dir / turn_dir(number)
        folder.mkdir(parents=True, exist_ok=True)
        if number == 1:  # where every run keeps it; a copy in turns/1/ beside the later ones
            run_transcript.keep(self.files, self.agent, self.limit)
            source = self.run_dir
            session = transcripts.SESSION_DIRS.get(self.agent)
            self._session_name = (run_transcript.newest_session(run_work(self.run_dir), session[0],
                                                                session[1]) if session else None)
        else:
            self._collect(number)
            source = folder
            with contextlib.suppress(ApgError, OSError):
                parsed = transcripts.parse_run(folder, self.agent)
                if parsed is not None:
                    write_record(folder / transcripts.TRANSCRIPT_FILE,
                                 own_usage(self.agent, parsed, self.kept))
        self._session_size, self._session_now = self._session_bytes(source), None
        if not (source / transcripts.TRANSCRIPT_FILE).is_file():
            return None
        try:
            transcript = transcripts.load(source)
        except ApgError:
            return None
        if number == 1:
            write_record(folder / transcripts.TRANSCRIPT_FILE, transcript)
        return transcript

    def _collect(self, number: int) -> None:
        """Turn ``number``'s raw output out of the work folder into its folder; of a session
        file the whole conversation shares, this turn's part alone."""
        work, target = run_work(self.run_dir), turn_dir(number)
        stream = transcripts.STREAM_FILES.get(self.agent)
        if stream:  # the event stream is apg's capture of this turn's stdout, as for turn 1
            self.files.collect_as(self.run_dir, ((f"{target}/{STDOUT_LOG}", f"{target}/{stream}"),),
                                  self.limit + run_transcript.TRUNCATION_ROOM)
        session = transcripts.SESSION_DIRS.get(self.agent)
        newest = (run_transcript.newest_session(work, session[0], session[1]) if session
                  else None)
        if session is None or newest is None:
            return
        kept = f"{target}/{session[2]}"
        self.files.collect_as(work, ((newest, kept),), self.limit)
        whole = (self.run_dir / kept).read_bytes()
        # Another file than the turn before's is another session: the turn's whole.
        previous = self._session_size if newest == self._session_name else 0
        atomic_write_bytes(self.run_dir / kept, session_part(self.agent, whole, previous))
        self._session_now, self._session_name = len(whole), newest

    def _session_bytes(self, source: Path) -> int:
        """How long the shared session file was after this turn (where the next turn's part
        starts): turn 1's copy is the whole file as it was then."""
        if self._session_now is not None:
            return self._session_now
        session = transcripts.SESSION_DIRS.get(self.agent)
        path = source / session[2] if session else None
        return os.path.getsize(path) if path is not None and path.is_file() else 0

    # -- the end

    def stopped(self, record: dict[str, Any]) -> None:
        """The run was stopped in the turn in flight: keep what it did, skip the rest."""
        if self.files.problems():
            return
        number = self._current
        if not self.entries:
            self.entries.append(TurnEntry(turn=1, sent=True))
        self.entries[-1].finished_at, self.entries[-1].stopped = _now(), True
        self._after(number)
        for later in range(number + 1, len(self.task.turns) + 2):
            self.entries.append(TurnEntry(turn=later, sent=False,
                                          id=self.task.turns[later - 2].get("id"),
                                          skipped=f"the run was stopped in turn {number}"))
        self.conclude(record)

    def conclude(self, record: dict[str, Any]) -> str | None:
        """run.json's ``turns`` and ``agent_transcript`` (the turns summed; transcript.json
        beside it the whole conversation's); the no-attempt reason when every call was denied."""
        record["turns"] = [e.as_json() for e in self.entries]
        if not self.kept:
            return None
        whole = merge(self.kept)
        write_record(self.run_dir / transcripts.TRANSCRIPT_FILE, whole)
        record["agent_transcript"] = whole.summary(transcripts.TRANSCRIPT_FILE)
        return transcripts.no_attempt_reason(whole)
