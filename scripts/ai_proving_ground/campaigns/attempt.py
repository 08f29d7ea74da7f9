"""One campaign attempt on one job's bed, phase by phase, every product step in-process.

1. verify --restore against the job's escrow (its hashes checked first); 2. reset (from the
baseline tag's files the job read when its bed was escrowed: no git) and the doctor; 3. the
arm's setup steps (``apg site`` command lines, run in-process); 4. the agent (``run_task``, whose
adapter is the only child besides the verifier), then everything it started is stopped; 5. verify
again (never repairing): judging code changed, a baseline that no longer matches (its tag moved
or deleted), a changed repository (:func:`escrowed.repository_state`, read before and after the
agent) or a broken record of ``apg run`` make the attempt ``tampered``; 6. ``model.diff``
(in-process, against those files) and ``config.json``: what the model left, before any hidden
overlay, and its final state for re-grading (:mod:`campaigns.final_state`); 7. grade (public
checks); 8. the hidden verifier, when the task has one. What each phase established goes into
:class:`outcome.Facts`; :func:`outcome.decide` gives the one outcome. Diagnostics of every
step land in the attempt's ``steps.log``.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ai_proving_ground import proc, report
from ai_proving_ground.arms.leaks import describe
from ai_proving_ground.baselines import grader_tree
from ai_proving_ground.baselines.reset import reset
from ai_proving_ground.campaigns import agent_usage, behaviour_rates, streams
from ai_proving_ground.campaigns.beds import Job
from ai_proving_ground.campaigns.escrowed import Verdict, differences, repository_state
from ai_proving_ground.campaigns.evidence import HIDDEN_FILE, VERIFY_FILE, HiddenRecord, VerifyRecord
from ai_proving_ground.campaigns.final_state import keep, state_dir
from ai_proving_ground.campaigns.outcome import NOT_STARTED_EXIT_CODES, Facts, decide
from ai_proving_ground.campaigns.records import INTERRUPTED, AttemptRecord, CampaignFiles
from ai_proving_ground.campaigns.spec import Attempt, Campaign
from ai_proving_ground.doctor import diagnose
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_bytes, atomic_write_json
from ai_proving_ground.records import write_record
from ai_proving_ground.scorers import triggers
from ai_proving_ground.scorers.judge import Votes
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks import hidden
from ai_proving_ground.tasks.envelope import write_envelope
from ai_proving_ground.tasks.grade import GradeRequest, check_envelope, grade
from ai_proving_ground.tasks.model_diff import model_diff
from ai_proving_ground.tasks.run import RunOptions, now_iso, run_task, site_command
from ai_proving_ground.tasks.run_files import RunRecordBroken

# Runs one ``apg site`` command line on a bed: (exit code, what it said on stderr).
SiteStep = Callable[[Path, Sequence[str]], tuple[int, str]]


@dataclass
class Context:
    """What every job shares; read-only once the attempts start, except the stop flag."""

    campaign: Campaign
    files: CampaignFiles
    template: Path
    settings: Settings
    site_step: SiteStep
    stop: threading.Event = field(default_factory=threading.Event)
    children: proc.Children = field(default_factory=proc.Children)


class _Setup(Exception):
    """The attempt could not be set up (or was interrupted): an infrastructure error."""


class _Evidence(Exception):
    """The agent's work could not be captured or graded: an infrastructure error."""


class _Unreadable(Exception):
    """The site the agent left cannot be read (its database broken, ...): the agent's failure,
    never an infrastructure error that would drop the attempt from k/n."""


def _not_captured(what: str, exc: ApgError) -> Exception:
    """The site refused (``APG_SITE_*``): the agent left it so. Anything else is the harness's."""
    return (_Unreadable if exc.token.startswith("APG_SITE_") else _Evidence)(f"{what}: {exc}")


class AttemptRun:
    """One attempt; :meth:`run` returns its record, written last, new-then-rename."""

    def __init__(self, context: Context, job: Job | None, attempt: Attempt,
                 tries: Sequence[dict[str, Any]] = ()) -> None:
        self.context = context
        self.job = job
        self.attempt = attempt
        self.directory = context.files.attempt_dir(attempt.order)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.verifier = context.campaign.verifiers.get(attempt.task_id)
        # tries: the earlier tries of this attempt, when it is tried again (campaigns.retry).
        self.record = AttemptRecord.planned(attempt, now_iso(), self.verifier is not None, tries)
        self.facts = Facts(hidden_status="absent" if self.verifier is None else "not_run")
        self.verify = VerifyRecord()
        self.run_dir: Path | None = None
        self.model_diff = b""
        self.repository: dict[str, str] = {}  # the bed's repository as the agent got it
        # Why the job's bed must be replaced after this attempt ("tampered", "reset-failed").
        self.set_aside: str | None = None

    # -- driving

    def run(self) -> AttemptRecord:
        with (self.directory / "steps.log").open("a", encoding="utf-8") as log, \
                report.redirected(log, log):
            try:
                self._phases()
            except _Setup as exc:
                self._note(setup_error=str(exc))
            except _Evidence as exc:
                self._note(evidence_error=str(exc))
            except _Unreadable as exc:
                self._note(unreadable=str(exc))
            except Exception as exc:  # a bug in one attempt must not take the campaign down
                log.write(traceback.format_exc())
                self._note(setup_error=f"unexpected {type(exc).__name__}: {exc}")
            finally:
                self._collect_run_dir()
        if self.record.leaks:  # on the campaign's stderr (out of steps.log's redirection)
            report.say(agent_usage.LEAK_TOKEN, f"attempt {self.attempt.order:04d} (arm "
                       f"{self.attempt.arm}): the agent's start-up showed what its arm did not "
                       f"give it: {describe(self.record.leaks)}")
        return self.conclude()

    def fail(self, reason: str) -> AttemptRecord:
        """An attempt that never got a bed (no usable bed was left to run it)."""
        self._note(setup_error=reason)
        return self.conclude()

    def conclude(self) -> AttemptRecord:
        outcome, reason = decide(self.facts)
        # A resume runs again what starts so (records.AttemptRecord.interrupted).
        if self.context.stop.is_set() and outcome == "infra_error" and \
                not reason.startswith(INTERRUPTED):
            reason = f"{INTERRUPTED} ({reason})"
        self.record = replace(self.record, outcome=outcome, reason=reason,
                              tampered=outcome == "tampered", finished_at=now_iso(),
                              # hashed as kept: a regrade re-scores only these (campaigns.streams)
                              streams=streams.recorded(self.directory))
        if self.verify.ran:
            write_record(self.directory / VERIFY_FILE, self.verify)
        write_record(self.context.files.attempt(self.attempt.order), self.record)
        return self.record

    def _note(self, **facts: Any) -> None:
        self.facts = replace(self.facts, **facts)

    def _phases(self) -> None:
        self._verify_before()
        self._reset()
        self._arm_setup()
        self._run_agent()
        if self.context.stop.is_set():
            raise _Setup("interrupted while the agent ran")
        if self._verify_after():
            self.set_aside = "tampered"
            self._capture()  # evidence only: never graded, never verified further
            return
        self._capture()
        if self._agent_ran():  # what is graded now can be graded again later (not tampered work)
            self._keep_state()
            self._grade()
        if self.facts.run_status == "attempted":
            self._hidden()

    def _agent_ran(self) -> bool:
        """Whether there is the agent's work to grade (as evidence, when it recorded no attempt)."""
        code = self.facts.adapter_exit_code
        return (self.facts.run_status in ("attempted", "no_attempt", "timed_out")
                and code is not None and code not in NOT_STARTED_EXIT_CODES)

    @property
    def _job(self) -> Job:
        assert self.job is not None and self.job.escrowed is not None
        return self.job

    # -- phases

    def _verify_before(self) -> None:
        verdict = self._escrow_verify("before", restore=True)
        if not verdict.ok:
            raise _Setup(f"verify before the attempt failed: {verdict.tokens()}")
        dataset = self.context.campaign.dataset
        try:
            now = hashlib.sha256(dataset.path.read_bytes()).hexdigest()
        except OSError as exc:
            now = f"unreadable ({exc.strerror or exc})"
        if now != dataset.sha256:  # what grades the agent must be what the campaign loaded
            raise _Setup(f"APG_CAMPAIGN_DATASET_CHANGED {dataset.path} is no longer the dataset "
                         f"the campaign started with (sha256 {dataset.sha256}, now {now})")

    def _reset(self) -> None:
        job, fixtures = self._job, self.context.campaign.fixtures
        # Reset ends by checking the judging code; the doctor, at once after it on this thread
        # with no agent started yet, reads the same files (grader_tree.read_once). Reset's
        # marker need not reach the disk in a bed no crash leaves for anyone (Job.disposable).
        with grader_tree.read_once(), job.disposable():
            try:
                outcome = reset(job.bed, fixtures, job.site(), job.settings, job.tree,
                                job.snapshot)
            except ApgError as exc:
                self.set_aside = "reset-failed"
                raise _Setup(f"reset failed: {exc}") from None
            if outcome.failures:
                self.set_aside = "reset-failed"
                raise _Setup(f"reset failed: {'; '.join(outcome.failures)}")
            # The known state must hold before an agent sees the bed: drift is the bed's fault.
            verdict = diagnose(job.bed, fixtures, job.site(), job.settings)
        if not verdict["healthy"]:
            self.set_aside = "reset-failed"
            raise _Setup(f"the doctor found drift after reset: {_drifted(verdict)}")

    def _arm_setup(self) -> None:
        arm = self.context.campaign.spec.arm(self.attempt.arm)
        for number, args in enumerate(arm.setup, start=1):
            code, said = self.context.site_step(self._job.bed, args)
            # What the step said (its own APG_* lines), then one line naming the step and its exit.
            report.stderr().write(said)
            report.say("APG_CAMPAIGN_ARM_STEP", f"arm {arm.name} step {number}: apg site "
                                               f"{shlex.join(args)} exited {code}")
            if code != 0:
                tokens = [line for line in said.splitlines() if line.startswith("APG_")]
                raise _Setup(f"arm {arm.name} setup step {number} ({args[0]}) failed: "
                             f"{' | '.join(tokens[-3:]) or f'exit {code}'}")

    def _run_agent(self) -> None:
        job, spec = self._job, self.context.campaign.spec
        self.repository = repository_state(job.bed)
        arm = spec.arm(self.attempt.arm)
        options = RunOptions(task_id=self.attempt.task_id, approot=job.bed,
                             agent=self.attempt.agent, dataset=str(self.context.campaign.dataset.path),
                             model=self.attempt.model, echo_stdout_to_stderr=True,
                             extra_env=arm.agent_env, arm=arm.given,
                             timeout_s=spec.agent_timeout_s,
                             children=self.context.children, settings=self._agent_settings())
        with (self.directory / "agent.log").open("w", encoding="utf-8") as log, \
                report.redirected(log, log):
            try:
                outcome = run_task(options)
            except RunRecordBroken as exc:  # the agent reached apg's records: its own outcome
                self.run_dir = exc.run_dir
                self.record = replace(self.record, run_id=exc.run_dir.name,
                                      run_status=exc.record.get("status"),
                                      adapter_exit_code=exc.record.get("adapter_exit_code"))
                self._note(tampered=f"{exc.token} {'; '.join(exc.problems)}",
                           run_status=exc.record.get("status"))
                return
            except ApgError as exc:
                raise _Setup(f"the adapter could not be run: {exc}") from None
        self.run_dir = outcome.run_dir
        run = outcome.record
        code = run.get("adapter_exit_code")
        summary = run.get("agent_transcript")
        leaks = list(summary.get("leaks") or []) if isinstance(summary, dict) else []
        self.record = replace(self.record, run_id=run["run_id"], run_status=run["status"],
                              adapter_exit_code=code, leaks=leaks,
                              usage=agent_usage.figures(outcome.run_dir, summary))
        said = _last_line(outcome.run_dir / "stderr.log") if code in NOT_STARTED_EXIT_CODES else ""
        self._note(run_status=run["status"], adapter_exit_code=code, adapter_said=said,
                   timeout_s=spec.agent_timeout_s,
                   no_attempt_reason=str(run.get("no_attempt_reason") or ""))

    def _agent_settings(self) -> Settings:
        """The job's settings, with the campaign directory and the job's escrow hidden from the
        agent's sandbox (records, other beds, the escrowed verifier)."""
        job, hide = self._job, (str(self.context.files.directory), str(self._job.escrow_root))
        return replace(job.settings, sandbox_hide=(*job.settings.sandbox_hide, *hide))

    def _verify_after(self) -> bool:
        """True when the attempt reached what judges it; nothing is repaired here (the bed is
        set aside): between verify before and after only the agent had the bed."""
        verdict = self._escrow_verify("after", restore=False)
        found = [self.facts.tampered] if self.facts.tampered else []
        changed = differences(self.repository, repository_state(self._job.bed))
        if changed:
            found.append(f"APG_CAMPAIGN_REPOSITORY_CHANGED {', '.join(changed[:5])}"
                         + (f" and {len(changed) - 5} more" if len(changed) > 5 else ""))
        if verdict.tampered or verdict.mismatched:
            found.append(verdict.tokens())
        elif not verdict.ok and not found:  # the verifier itself could not say
            raise _Evidence(f"verify after the attempt failed: {verdict.tokens()}")
        if not found:
            return False
        self._note(tampered=" | ".join(found))
        report.say("APG_CAMPAIGN_TAMPERED", f"attempt {self.attempt.order:04d}: {' | '.join(found)}")
        return True

    def _escrow_verify(self, when: str, restore: bool) -> Verdict:
        job = self._job
        assert job.escrowed is not None
        verdict = job.escrowed.verify(job.bed, restore, proc.child_env(os.environ))
        self.verify = self.verify.with_verdict(when, verdict)
        return verdict

    def _capture(self) -> None:
        """model.diff and config.json: the model's own work, before any hidden overlay."""
        try:
            self.model_diff = self._diff()
            config = self._job.site().all_config()
        except ApgError as exc:
            raise _not_captured("could not capture the model's work", exc) from None
        atomic_write_bytes(self.directory / "model.diff", self.model_diff)
        # Not a record: every config object the site holds, name -> value, as the site gives it
        # (its shape is the site's, so no schema of ours can close it). Data, kept as data.
        atomic_write_json(self.directory / "config.json", config)

    def _keep_state(self) -> None:
        """The site's final state, for ``apg campaign regrade`` (after config.json: a site that
        refuses to be read, a linked db/ say, stopped the capture before it is dumped).
        Keeping it never changes the outcome: a failure is said in steps.log, nothing kept."""
        job = self._job
        try:
            state = keep(self.directory, job.bed, job.site())
        except (OSError, ApgError) as exc:
            shutil.rmtree(state_dir(self.directory), ignore_errors=True)
            report.say("APG_CAMPAIGN_STATE_NOT_KEPT", f"attempt {self.attempt.order:04d}: {exc}")
            return
        self.record = replace(self.record, state=state.as_json())

    def _grade(self) -> None:
        """The public checks, in-process; a run that recorded no attempt is graded as evidence."""
        job = self._job
        request = GradeRequest(approot=job.bed, task_id=self.attempt.task_id,
                               dataset=str(self.context.campaign.dataset.path),
                               run_id=self.record.run_id, settings=job.settings,
                               force=self.facts.run_status != "attempted", hidden=False,
                               votes=Votes())  # kept in attempt.json, for a regrade to serve
        try:
            envelope = check_envelope(grade(request, job.site()))
        except ApgError as exc:
            raise _not_captured("grade failed", exc) from None
        # The harness's own copy of the envelope (the bed's can be rewritten).
        write_envelope(self.directory / "grade.json", envelope)
        score = envelope.score
        details = envelope.document["evaluation_results"][0]["score_details"]["details"]
        self.record = replace(self.record, score=score, trigger=triggers.recorded(details),
                              behaviour=behaviour_rates.recorded(details),
                              judge_votes=(request.votes.used or None) if request.votes else None)
        self._note(score=score)

    def _hidden(self) -> None:
        if self.verifier is None:
            return
        bed, env = self._job.bed, proc.child_env(os.environ)
        outcome = hidden.run_hidden(bed, self.verifier, env, self.directory / ".scratch",
                                    site_command(bed))
        if self._diff() != self.model_diff:
            outcome.warnings.append("APG_CAMPAIGN_HIDDEN_RESIDUE the bed's diff differs from "
                                    "model.diff after restoring the snapshot")
        self.record = replace(self.record, hidden=outcome.summary())
        self._note(hidden_status=outcome.status)
        write_record(self.directory / HIDDEN_FILE, HiddenRecord.of(outcome, self.verifier))

    def _diff(self) -> bytes:
        job = self._job
        assert job.tree is not None  # read when the bed was escrowed
        return model_diff(job.bed, job.tree)

    def _collect_run_dir(self) -> None:
        """Move the bed's run directory here (the next agent on this bed must not read this
        attempt's prompt, transcripts or grade) and keep a copy of run.json beside the record."""
        shutil.rmtree(self.directory / ".scratch", ignore_errors=True)
        source = self.run_dir
        if source is None or not source.is_dir():
            return
        try:
            shutil.move(str(source), str(self.directory / "run"))
            if (self.directory / "run" / "run.json").is_file() and \
                    not (self.directory / "run" / "run.json").is_symlink():  # a broken one stays put
                shutil.copy2(self.directory / "run" / "run.json", self.directory / "run.json")
        except OSError as exc:
            report.say("APG_CAMPAIGN_RUN_NOT_COLLECTED", f"{source}: {exc}")


def _drifted(verdict: dict[str, Any]) -> str:
    """The failing doctor checks and their subjects, in one line."""
    failing = [c for c in verdict["checks"] if c.get("status") == "fail"]
    return "; ".join(f"{c['name']}: " + ", ".join(str(d.get("subject")) for d in
                                                  c.get("drift", [])[:5]) for c in failing)


def _last_line(path: Path) -> str:
    """The last line the adapter wrote (it says why, e.g. which CLI is missing)."""
    try:
        lines = [line for line in path.read_text("utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no stderr transcript"
    return lines[-1][-300:] if lines else "it printed nothing on stderr"
