"""A task of several turns on the real Claude Code and Codex CLIs, driven by a scripted model: the
first turn only asks, so "the view still does not exist" holds and the second turn is sent, by
resuming the CLI's own session (the same session id in its transcript, the model server given the
earlier conversation); the second builds the view, so the third turn, under the same condition,
is skipped. Each turn keeps its transcript and the site's config; run.json sums the turns' tokens;
re-parsing the raw output offline gives the same records; the grade checks the final block and
the second turn's own behaviour."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_kit import TASK, Drive

from ai_proving_ground.cli import grade as grade_cli
from ai_proving_ground.cli import transcript as transcript_cli
from ai_proving_ground.paths import project_dir
from ai_proving_ground.tasks.dataset import load_dataset
from ai_proving_ground.transcripts import load
from support.model_server import Reply, Shell, Step

VIEW = "views.view.kb_billing"
ASK = "Shall I create the kb_billing view now, or do you want to review the plan first?"
GO_ON = "Yes, go ahead and create it."
STILL_MISSING = "It still is not there. Please create it."
# The view still does not exist (the seed's "the container is still running").
MISSING = [{"id": "view-missing", "not": {"type": "config_exists", "name": VIEW}}]


def turns_dataset(folder: Path) -> Path:
    """The shipped build task as a case of three turns, its checks as the final block."""
    shipped = yaml.safe_load((project_dir("datasets") / "build_tasks.yml").read_text("utf-8"))
    task = next(t for t in shipped["tasks"] if t["id"] == TASK)
    task.pop("hidden_verifier", None)
    task["final"] = {"checks": task.pop("checks")}
    task["turns"] = [
        {"id": "go-on", "prompt": GO_ON, "only_if": MISSING,
         "behaviour": [{"id": "sets-view", "kind": "commands",
                        "must": rf"^apg site config:set {VIEW}\b"}]},
        {"id": "still-missing", "prompt": STILL_MISSING, "only_if": MISSING,
         "behaviour": [{"id": "never-sent", "kind": "commands", "must": "never"}]}]
    path = folder / "turns.yml"
    path.write_text(yaml.safe_dump({"dataset": "turn_cases", "version": 1, "tasks": [task]}),
                    "utf-8")
    return path


def script() -> list[Step]:
    """Turn 1 asks and does nothing; turn 2 runs the reference steps and says so."""
    task = load_dataset(project_dir("datasets") / "build_tasks.yml").task(TASK)
    return [Reply(ASK), *(Shell("apg site " + shlex.join(s)) for s in task.reference_steps),
            Reply("The kb_billing view is saved.")]


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_later_turn_resumes_the_session_only_while_its_condition_holds(
        agent: str, drive: Drive, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = turns_dataset(tmp_path)
    steps = script()
    driven = drive(agent, steps, f"--dataset={dataset}")
    assert driven.rc == 0, driven.err
    record, run_dir = driven.record, driven.run_dir
    assert record["status"] == "attempted"
    first, second, third = record["turns"]
    assert (first["turn"], first["sent"], second["sent"], third["sent"]) == (1, True, True, False)
    assert [(c["id"], c["negated"], c["holds"]) for c in second["conditions"]] == [
        ("view-missing", True, True)], second
    assert third["skipped"].startswith("only_if does not hold: view-missing"), third
    assert "APG_RUN_TURN_SKIPPED" in driven.err

    # The resume: the CLI's own transcripts of both turns name one session, the one apg resumed.
    one, two = load(run_dir / "turns" / "1"), load(run_dir / "turns" / "2")
    assert one.session_id and second["resumed_session"] == one.session_id == two.session_id
    # The CLI kept one session between the turns (its own store in the run's HOME or work folder).
    stored = (sorted(p.name for p in (run_dir / "home" / ".claude" / "projects").rglob("*.jsonl"))
              if agent == "claude-code"
              else sorted(p.name for p in (run_dir / "work" / "codex-sessions").rglob("*.jsonl")))
    assert len(stored) == 1 and one.session_id in stored[0], stored
    request = json.loads((run_dir / "turns" / "2" / "request.json").read_text("utf-8"))
    assert (request["turn"], request["resume_session"]) == (2, one.session_id)
    # ... and the model server got the earlier conversation with the second prompt.
    api = "anthropic" if agent == "claude-code" else "openai"
    main = driven.server.main_requests(api)
    bodies = [json.dumps(r.body) for r in main]
    resumed = next(n for n, b in enumerate(bodies) if GO_ON in b)
    assert resumed == 1 and main[resumed].step == 1
    assert "machine name kb_billing" in bodies[resumed] and ASK in bodies[resumed]
    assert not any(STILL_MISSING in b for b in bodies)  # the third turn never reached it
    assert len(main) == len(steps)

    # Each turn: its own transcript and the site's config as it left it.
    assert (one.commands, one.final_reply) == ((), ASK)
    assert [c.command for c in two.commands] == [s.command for s in steps if isinstance(s, Shell)]
    states = [json.loads((run_dir / "turns" / n / "config.json").read_text("utf-8"))
              for n in ("1", "2")]
    assert VIEW not in states[0] and VIEW in states[1]
    assert (first["state"], second["state"]) == ("turns/1/config.json", "turns/2/config.json")
    # run.json and transcript.json: the turns summed, equal to what the server sent.
    whole = load(run_dir)
    sent = driven.server.tokens_sent(api)
    assert (whole.usage.input_tokens, whole.usage.output_tokens) == (
        sent.input_tokens, sent.output_tokens) == (
        one.usage.input_tokens + two.usage.input_tokens,
        one.usage.output_tokens + two.usage.output_tokens)
    assert whole.turns == len(main) and whole.final_reply == "The kb_billing view is saved."
    summary: dict[str, Any] = record["agent_transcript"]
    assert (summary["usage"]["input_tokens"], summary["tool_calls"]) == (
        sent.input_tokens, one.tool_calls + two.tool_calls)

    # Offline, the raw output of each turn gives the same records again.
    capsys.readouterr()
    assert transcript_cli.main([str(run_dir), "--check"]) == 0, capsys.readouterr().err

    # The grade: the final block passes; turn 2's behaviour scored, turn 3's skipped.
    capsys.readouterr()
    rc = grade_cli.main(["--approot", str(record["approot"]), TASK, f"--run={record['run_id']}",
                         f"--dataset={dataset}"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    details = json.loads(captured.out)["evaluation_results"][0]["score_details"]["details"]
    assert (details["verdict"], details["failed_checks"]) == ("pass", "")
    assert details["turns_sent"] == "1,2" and details["turns_skipped"].startswith("3: only_if")
    by_id = {b["id"]: b for b in json.loads(details["turn_behaviour"])}
    assert by_id["sets-view"]["passed"] is True and by_id["never-sent"]["skipped"] is True
    assert details["turn_behaviour_passed"] == "1/1"
