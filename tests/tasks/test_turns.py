"""Tasks of several turns (tasks/turns.py) without an agent CLI: the dataset's turns, only_if
(``not:``) and final block; apg run sending a later turn while its conditions hold and skipping it
once they do not, what it hands the adapter (APG_TURN, the turn's prompt and request), each
turn's config snapshot, a failed or timed-out turn stopping the rest; the grade's final checks and
turns; and the transcripts of several turns summed (transcripts/turns.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.tasks.dataset import load_dataset
from ai_proving_ground.telltale.check import check_dataset
from ai_proving_ground.transcripts.record import CommandRun, TokenUsage, Transcript
from ai_proving_ground.transcripts.startup import Startup
from ai_proving_ground.transcripts.turns import (
    KEPT_FROM_FIRST,
    merge,
    own_usage,
    session_part,
    summed_fields,
)
from ai_proving_ground.yamldump import dumps

Run = Callable[..., Any]
NOTE = "system.turns"
# Sent while the note is not set: turn 2 sets it (when asked to), so turn 3 is skipped.
UNSET = [{"id": "note-unset", "not": {"type": "config_exists", "name": NOTE}}]
# Records what each turn was given in its work folder; turn 2 sets the note unless told to fail
# or to hang.
ADAPTER = f"""#!/usr/bin/env bash
## Credentials: none
turn="${{APG_TURN:-1}}"
{{ echo "turn=$turn resume=${{APG_RESUME_SESSION-unset}}"; cat "$APG_PROMPT_FILE"; echo;
   cat "$APG_REQUEST_FILE"; }} > "$APG_RUN_DIR/turn-$turn.txt"
if [ "$turn" = 1 ] && grep -q "at once" "$APG_PROMPT_FILE"; then
  exec $APG_SITE --approot "$APG_APPROOT" config:set {NOTE} value yes
fi
if [ "$turn" = 2 ]; then
  case "$(cat "$APG_PROMPT_FILE")" in
    *fail*) exit 3 ;;
    *hang*) sleep 30 ;;
  esac
  exec $APG_SITE --approot "$APG_APPROOT" config:set {NOTE} value yes
fi
"""


def task(turn_two: str = "Now set the note.", first: str = "Look around first.",
         **extra: Any) -> dict[str, Any]:
    return {"id": "t_turns", "prompt": first, "fixtures": [],
            "final": {"checks": [{"id": "note-set", "type": "config_exists", "name": NOTE}]},
            "turns": [{"id": "two", "prompt": turn_two, "only_if": UNSET,
                       "behaviour": [{"id": "sets", "kind": "commands", "must": "config:set"}]},
                      {"id": "three", "prompt": "Is it set now?", "only_if": UNSET}], **extra}


def write_dataset(folder: Path, *tasks: dict[str, Any]) -> Path:
    path = folder / "turns.yml"
    path.write_text(dumps({"dataset": "turn_tests", "version": 1, "tasks": list(tasks)}), "utf-8")
    return path


@pytest.fixture
def turn_bed(fixtures_bed: Path) -> Path:
    agents = fixtures_bed / ".ddev" / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "turner").write_text(ADAPTER, "utf-8")
    (agents / "turner").chmod(0o755)
    return fixtures_bed


def run_turns(apg: Run, bed: Path, dataset: Path, *extra: str) -> tuple[int, str, Path,
                                                                         dict[str, Any]]:
    rc, out, err = apg("run", "t_turns", "--approot", str(bed), "--dataset", str(dataset),
                       "--agent", "turner", "--json", *extra)
    record = json.loads(out)
    return rc, err, bed / ".ai-proving-ground" / "runs" / record["run_id"], record


# ---------------------------------------------------------------------------- the dataset


def test_a_task_of_turns_loads_and_grades_its_final_block(tmp_path: Path) -> None:
    loaded = load_dataset(write_dataset(tmp_path, task())).task("t_turns")
    assert [c["id"] for c in loaded.checks] == ["note-set"]
    assert [t["id"] for t in loaded.turns] == ["two", "three"]
    assert load_dataset(write_dataset(tmp_path, {"id": "one", "prompt": "p", "fixtures": []})
                        ).task("one").turns == []


def test_a_later_turns_prompt_is_checked_for_telltale_words(tmp_path: Path) -> None:
    dataset = load_dataset(write_dataset(tmp_path, task("This eval checks the fixture.")))
    [finding] = check_dataset(dataset)
    assert "$.tasks[0].turns[0].prompt" in finding and "turn 2 prompt" in finding


@pytest.mark.parametrize(("change", "where"), [
    ({"checks": [{"type": "config_exists", "name": "x"}]}, "$.tasks[0].checks"),
    ({"turns": [{"prompt": "p", "behaviour": [{"kind": "commands", "must": "("}]}]},
     "$.tasks[0].turns[0].behaviour[0].must"),
    ({"turns": [{"prompt": "p", "only_if": [{"not": {"type": "config_exists", "name": "x"},
                                             "name": "x"}]}]}, "$.tasks[0].turns[0].only_if[0]"),
    ({"turns": [{"prompt": "p", "when": []}]}, "$.tasks[0].turns[0]"),
], ids=["checks-beside-final", "bad-pattern", "not-with-more", "unknown-key"])
def test_a_turn_or_final_block_that_is_wrong_is_refused(tmp_path: Path, change: dict[str, Any],
                                                        where: str) -> None:
    with pytest.raises(ApgError) as caught:
        load_dataset(write_dataset(tmp_path, {**task(), **change}))
    assert caught.value.token == "APG_DATASET_INVALID" and where in caught.value.message


# ---------------------------------------------------------------------------- apg run


def test_a_turn_is_sent_while_its_condition_holds_and_skipped_once_it_does_not(
        turn_bed: Path, tmp_path: Path, apg: Run) -> None:
    dataset = write_dataset(tmp_path, task())
    rc, err, run_dir, record = run_turns(apg, turn_bed, dataset)
    assert rc == 0 and record["status"] == "attempted", err
    one, two, three = record["turns"]
    assert (one["sent"], two["sent"], three["sent"]) == (True, True, False)
    assert two["conditions"] == [{"id": "note-unset", "type": "config_exists", "negated": True,
                                  "holds": True, "message": two["conditions"][0]["message"]}]
    assert three["conditions"][0]["holds"] is False
    assert three["skipped"].startswith("only_if does not hold: note-unset (not config_exists")
    assert "APG_RUN_TURN_SKIPPED" in err and "turn 3 not sent" in err
    # What the adapter was handed: no session to resume (apg has no parser for it), the turn's
    # own prompt and request.
    work = run_dir / "work"
    assert (work / "turn-1.txt").read_text("utf-8").startswith("turn=1 resume=unset\nLook around")
    seen = (work / "turn-2.txt").read_text("utf-8")
    assert seen.startswith("turn=2 resume=\nNow set the note.\n")
    request = json.loads((run_dir / "turns" / "2" / "request.json").read_text("utf-8"))
    assert request["turn"] == 2 and "resume_session" not in request
    assert request["prompt_file"] == str(run_dir / "turns" / "2" / "prompt.txt")
    assert "turn" not in json.loads((run_dir / "request.json").read_text("utf-8"))
    assert not (work / "turn-3.txt").exists()
    # The site after each turn.
    states = [json.loads((run_dir / "turns" / n / "config.json").read_text("utf-8"))
              for n in ("1", "2")]
    assert NOTE not in states[0] and states[1][NOTE] == {"value": "yes"}
    assert "APG_SITE_OK" in (run_dir / "turns" / "2" / "stderr.log").read_text("utf-8")
    # The grade: the final block, which turns were sent; turn 2's behaviour has no transcript.
    rc, out, err = apg("grade", "t_turns", "--approot", str(turn_bed), "--dataset", str(dataset),
                       f"--run={record['run_id']}")
    assert rc == 0, err
    details = json.loads(out)["evaluation_results"][0]["score_details"]["details"]
    assert details["checks_passed"] == "1/1" and details["turns_sent"] == "1,2"
    assert details["turns_skipped"].startswith("3: only_if does not hold")
    [sets] = json.loads(details["turn_behaviour"])
    assert (sets["turn"], sets["passed"], details["verdict"]) == (2, False, "fail")


def test_a_first_turn_that_makes_the_condition_false_is_the_whole_conversation(
        turn_bed: Path, tmp_path: Path, apg: Run) -> None:
    dataset = write_dataset(tmp_path, task(first="Set the note at once."))
    rc, err, run_dir, record = run_turns(apg, turn_bed, dataset)
    assert rc == 0 and record["status"] == "attempted", err
    assert [(t["turn"], t["sent"]) for t in record["turns"]] == [(1, True), (2, False), (3, False)]
    assert all(t["skipped"].startswith("only_if does not hold: note-unset")
               for t in record["turns"][1:])
    assert not (run_dir / "work" / "turn-2.txt").exists()
    assert not (run_dir / "turns" / "2").exists()


@pytest.mark.parametrize(("turn_two", "timeout", "status", "rc_expected", "reason"), [
    ("Please fail.", [], "no_attempt", 1, "turn 2 ended with exit 3"),
    ("Please hang.", ["--timeout", "3"], "timed_out", 1, "the run was stopped in turn 2"),
], ids=["fails", "times-out"])
def test_a_turn_that_fails_or_outlives_the_limit_ends_the_conversation(
        turn_bed: Path, tmp_path: Path, apg: Run, turn_two: str, timeout: list[str],
        status: str, rc_expected: int, reason: str) -> None:
    dataset = write_dataset(tmp_path, task(turn_two))
    rc, err, run_dir, record = run_turns(apg, turn_bed, dataset, *timeout)
    assert (rc, record["status"]) == (rc_expected, status), err
    one, two, three = record["turns"]
    assert (one["sent"], two["sent"], three["sent"], three["skipped"]) == (True, True, False,
                                                                           reason)
    assert (run_dir / "turns" / "2" / "config.json").is_file()
    if status == "timed_out":
        assert two["stopped"] is True and record["adapter_exit_code"] is not None
    else:
        assert two["adapter_exit_code"] == record["adapter_exit_code"] == 3


# ---------------------------------------------------------------------------- transcripts


def transcript(**values: Any) -> Transcript:
    return Transcript(**{"agent": "codex", "source": "codex.jsonl", "developer": "openai",
                         "model": "m", "completed": True, "usage_source": "turns", **values})


def test_the_turns_of_a_conversation_are_summed() -> None:
    first = transcript(session_id="s", turns=1, tool_calls=1, usage=TokenUsage(1000, 20),
                       commands=(CommandRun("ls", 0, "exec_command"),), cost_usd=0.5,
                       tools_used={"exec_command": 1}, final_reply="asked")
    # Codex reports the session's running total after a resume: the turn's own is the growth.
    second = own_usage("codex", transcript(session_id="s", turns=3, tool_calls=2,
                                           usage=TokenUsage(4060, 86), cost_usd=0.25,
                                           tools_used={"exec_command": 2}, final_reply="done"),
                       [first])
    assert second.usage == TokenUsage(3060, 66)
    assert own_usage("claude-code", second, [first]) == second  # its totals are the turn's
    whole = merge([first, second])
    assert (whole.usage, whole.turns, whole.tool_calls, whole.cost_usd) == (
        TokenUsage(4060, 86), 4, 3, 0.75)
    assert (whole.final_reply, whole.session_id, whole.tools_used) == (
        "done", "s", {"exec_command": 3})
    assert whole.source == "turns/*/transcript.json" and merge([first]) == first
    assert merge([first, transcript(cost_usd=None)]).cost_usd is None  # not a partial sum
    shown = merge([transcript(startup=Startup(True, ("a",), ("s",))),
                   transcript(startup=Startup(True, ("b",), ("s",)))]).startup
    assert shown == Startup(True, ("a", "b"), ("s",))  # a leak in any turn's start-up shows
    # Every field of the record is summed, joined or chosen: none taken from turn 1 by oversight.
    assert set(summed_fields([first, second])) | KEPT_FROM_FIRST == {
        f.name for f in fields(Transcript)}


def test_a_turn_keeps_its_own_part_of_a_shared_session_file() -> None:
    head = b'{"type":"session_meta","payload":{"cli_version":"1"}}\n'
    one = head + b'{"type":"turn_context","n":1}\n'
    whole = one + b'{"type":"turn_context","n":2}\n'
    assert session_part("codex", whole, len(one)) == head + b'{"type":"turn_context","n":2}\n'
    assert session_part("codex", whole, 0) == whole
    assert session_part("codex", one, len(whole)) == one  # not the file it was: a new session
