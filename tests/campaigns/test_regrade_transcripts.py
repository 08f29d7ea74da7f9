"""``apg campaign regrade`` re-scores what the agent did, not only the site: a skill trigger case
and a ``commands`` behaviour entry are graded again on the attempt's stream, parsed anew from
apg's own capture (``stdout.log``). One campaign of a bed adapter named claude-code that prints
Claude Code 2.1.332's recorded reference stream (tests/agents/transcripts/claude-code/reference:
it builds the view with ``apg site config:set`` and runs ``views:execute``, and loads no skill),
over dv01 (the solved arm's state passes its checks) with ``commands`` must_not ``views:execute``
and a trigger case expecting no load. Changing the trigger's expect and the behaviour's pattern
changes only those verdicts, with no adapter and no child process; the run folder's
transcript.json and the work folder's stream copy, forged, are never read; a stream that is
missing or unreadable makes the attempt not regradable, never a pass."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from campaign_kit import FIXTURES, attempts, reference_steps, write_spec

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.campaigns import streams
from ai_proving_ground.campaigns.runner import RunnerOptions, run_campaign
from ai_proving_ground.cli.campaign import site_step
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.settings import DEFAULT_SETTINGS
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.yamlio import load_yaml
from support.model_server import ScriptedModelServer
from support.no_agent import watch_children

STREAM = Path(__file__).parents[1] / "agents" / "transcripts" / "claude-code" / "reference" \
    / "claude-code.jsonl"
SKILL = "drupal-views-build"
JUDGE = "judge-model-1"
CRITERION = "The reply says the view was saved."
TRIGGER = "tr01_routing"
TURNS = "tt01_two_turns"
# The operator-side skills no agent under test may see (campaigns/views_skill.yml's arms).
SKILLS = {"catalog": str(PROJECT_ROOT / "skills"),
          "exclude": ["extending-the-proving-ground", "running-proving-ground-evals"]}


def write_dataset(path: Path, expect: str = "no_load", must_not: str = "views:execute",
                  criterion: str = CRITERION) -> Path:
    data = load_yaml(PROJECT_ROOT / "datasets" / "build_tasks.yml")
    [dv01] = [t for t in data["tasks"] if t["id"] == "dv01_view_build"]
    dv01["behaviour"] = [{"id": "no-execute", "kind": "commands", "must_not": must_not},
                         {"id": "explains", "kind": "judge", "must": criterion}]
    trigger = {"id": TRIGGER, "title": "Routing", "prompt": "Unpublish the FAQ item.",
               "fixtures": ["kb_docs"], "trigger": {"skill": SKILL, "expect": expect}}
    # A later turn's behaviour is scored on that turn's own stream (turns/2/stdout.log).
    turns = {"id": TURNS, "title": "Turns", "prompt": "Look first.", "fixtures": ["kb_docs"],
             "final": {"checks": [{"id": "built", "type": "config_exists",
                                   "name": "views.view.kb_billing"}]},
             "turns": [{"prompt": "Now show it.", "behaviour": [
                 {"id": "no-execute", "kind": "commands", "must_not": must_not}]}]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**data, "tasks": [dv01, trigger, turns]}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def judge_server() -> Iterator[ScriptedModelServer]:
    """The scripted judge: three YES for the campaign's grade, then a reply that is no vote."""
    with ScriptedModelServer([], side_replies=["YES"] * 3) as server:
        yield server


def judge_requests(server: ScriptedModelServer) -> int:
    return sum(r.path.startswith("/v1/messages") for r in server.requests)


@pytest.fixture(autouse=True)
def judge_env(judge_server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every regrade here has the campaign's judge model, at the scripted server."""
    for name, value in (("AI_PG_JUDGE_MODEL", JUDGE), ("AI_PG_JUDGE_BASE_URL", judge_server.url),
                        ("AI_PG_JUDGE_API_KEY", "scripted-dummy-key")):
        monkeypatch.setenv(name, value)


@pytest.fixture(scope="module")
def finished(fixtures_template_bed: Path, tmp_path_factory: pytest.TempPathFactory,
             copy_template: Callable[[Path, Path], Path], judge_server: ScriptedModelServer
             ) -> Path:
    """The finished campaign (its beds removed): dv01 fails on its must_not (its judge entry
    passes, three votes asked), the trigger case passes (no load)."""
    root = tmp_path_factory.mktemp("regrade_transcripts")
    bed = copy_template(fixtures_template_bed, root / "bed")
    agents = bed / ".ddev" / "agents"
    agents.mkdir(parents=True)
    (agents / "claude-code").write_text(
        "#!/bin/sh\n## Credentials: none\n# a copy in the work folder, as the real adapter tees\n"
        f"tee \"$APG_RUN_DIR/claude-code.jsonl\" <<'EOF'\n{STREAM.read_text('utf-8')}EOF\n",
        encoding="utf-8")
    (agents / "claude-code").chmod(0o755)
    provision(bed, FIXTURES, EmbeddedSite(bed))
    spec = write_spec(root / "spec.yml", {
        "name": "rescore", "dataset": str(write_dataset(root / "data" / "tasks.yml")),
        "tasks": ["dv01_view_build", TRIGGER, TURNS],
        "arms": {"solved": {"setup": reference_steps(), "skills": SKILLS}},
        "agents": ["claude-code"], "repeats": 1, "seed": 1, "jobs": 1, "bed": str(bed),
        "fixtures": FIXTURES})
    out = root / "out"
    settings = replace(DEFAULT_SETTINGS, judge_model=JUDGE, judge_base_url=judge_server.url,
                       judge_api_key="scripted-dummy-key")
    assert run_campaign(RunnerOptions(spec_path=spec, out=out, beds=root / "beds",
                                      site_step=site_step, settings=settings)).exit_code == 0
    recorded = {r["task_id"]: r for r in attempts(out)}
    assert recorded["dv01_view_build"]["outcome"] == "fail"
    assert recorded["dv01_view_build"]["score"] == 0.0
    assert recorded["dv01_view_build"]["behaviour"][0]["passed"] is False
    assert recorded["dv01_view_build"]["behaviour"][1]["passed"] is True
    [votes] = recorded["dv01_view_build"]["judge_votes"].values()
    assert votes == ["yes"] * 3 and judge_requests(judge_server) == 3
    assert recorded[TRIGGER]["outcome"] == "pass"
    assert recorded[TRIGGER]["trigger"]["loaded"] is False
    assert recorded[TURNS]["outcome"] == "fail"  # its second turn ran views:execute
    return out


@pytest.fixture
def campaign(finished: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(finished, tmp_path / "out"))


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every child process started; running an adapter fails the test."""
    started = watch_children(monkeypatch)
    return started


def regrade(apg: Any, directory: Path, *extra: str) -> dict[int, dict[str, Any]]:
    result = apg("campaign", "regrade", str(directory), "--json", *extra)
    assert result.rc == 0, result.err
    return {a["order"]: a for a in json.loads(result.out)["attempts"]}, result.err


def run_folder(campaign: Path, task: str) -> Path:
    [order] = [r["order"] for r in attempts(campaign) if r["task_id"] == task]
    return campaign / "runs" / f"{order:04d}" / "run"


def test_a_changed_trigger_and_pattern_change_only_their_verdicts(
        apg: Any, campaign: Path, spawned: list[list[str]], tmp_path: Path) -> None:
    # What no regrade may read: the run's old transcript.json and the work folder's copy of
    # the stream, both rewritten to show a skill load and no views:execute.
    forged = run_folder(campaign, TRIGGER)
    (forged / "work" / "claude-code.jsonl").write_text("{}\n", encoding="utf-8")
    old = json.loads((forged / "transcript.json").read_text("utf-8"))
    (forged / "transcript.json").write_text(json.dumps({**old, "skills_used": [SKILL],
                                                        "commands": []}), encoding="utf-8")
    same, _ = regrade(apg, campaign)
    for entry in same.values():
        assert entry["status"] == "regraded" and entry["new"] == entry["old"], entry
        assert entry["changed"] == [], entry
    by_task = {e["task_id"]: e for e in same.values()}
    assert [c["id"] for c in by_task[TRIGGER]["checks"]] == ["trigger"]
    assert {"id": "behaviour:no-execute", "old": "fail", "new": "fail"} in \
        by_task["dv01_view_build"]["checks"]
    assert [c["id"] for c in by_task[TURNS]["checks"]] == ["built", "turn2:no-execute"]

    changed = write_dataset(tmp_path / "data" / "tasks.yml", expect="load", must_not="rm -rf")
    data, err = regrade(apg, campaign, "--dataset", str(changed))
    by_task = {e["task_id"]: e for e in data.values()}
    dv01, trigger = by_task["dv01_view_build"], by_task[TRIGGER]
    assert dv01["changed"] == ["behaviour:no-execute"]
    assert (dv01["old"]["outcome"], dv01["new"]["outcome"]) == ("fail", "pass")
    assert all(c["old"] == c["new"] == "pass" for c in dv01["checks"]
               if not c["id"].startswith("behaviour:")), dv01["checks"]
    assert trigger["changed"] == ["trigger"]
    assert by_task[TURNS]["changed"] == ["turn2:no-execute"]
    assert (by_task[TURNS]["old"]["outcome"], by_task[TURNS]["new"]["outcome"]) == ("fail", "pass")
    assert (trigger["old"]["outcome"], trigger["new"]["outcome"]) == ("pass", "fail")
    [folder] = sorted((campaign / "regrades").iterdir())[-1:]
    new = {r.parent.name: json.loads(r.read_text("utf-8")) for r in
           (folder / "runs").glob("*/attempt.json")}
    assert {r["task_id"]: r.get("trigger") for r in new.values()}[TRIGGER]["expect"] == "load"
    assert "regraded pass -> fail; changed: trigger" in err
    assert spawned == []  # no adapter, no child process at all: the transcript was parsed


@pytest.mark.parametrize(("spoil", "token"), [
    (lambda run: (run / "stdout.log").unlink(), "APG_REGRADE_TRANSCRIPT_MISSING"),
    (lambda run: ((run / "stdout.log").unlink(), (run / "stdout.log").symlink_to(STREAM)),
     "APG_REGRADE_TRANSCRIPT_UNREADABLE"),
])
def test_a_stream_that_cannot_be_read_is_never_graded(
        apg: Any, campaign: Path, spoil: Callable[[Path], Any], token: str) -> None:
    for task in ("dv01_view_build", TRIGGER):
        spoil(run_folder(campaign, task))
    spoil(run_folder(campaign, TURNS) / "turns" / "2")  # a later turn's stream alone
    data, err = regrade(apg, campaign)
    for order, entry in data.items():
        assert (entry["status"], entry["token"], entry["new"]) == ("not_regradable", token, None)
        assert f"{token} #{order:04d}" in err


def test_a_stream_changed_since_its_attempt_is_refused_and_an_unhashed_one_warned(
        apg: Any, campaign: Path) -> None:
    records = {r["task_id"]: r for r in attempts(campaign)}
    assert set(records[TURNS]["streams"]) == {"run/stdout.log", "run/turns/2/stdout.log"}
    # One byte of dv01's stream and of the two-turn task's second-turn stream alone.
    for stream in (run_folder(campaign, "dv01_view_build") / "stdout.log",
                   run_folder(campaign, TURNS) / "turns" / "2" / "stdout.log"):
        data = bytearray(stream.read_bytes())
        data[len(data) // 2] ^= 1
        stream.write_bytes(bytes(data))
    # A record from before streams were hashed: regraded, with a warning.
    old = campaign / "runs" / f"{records[TRIGGER]['order']:04d}" / "attempt.json"
    old.write_text(json.dumps({k: v for k, v in records[TRIGGER].items() if k != "streams"}),
                   encoding="utf-8")
    data, err = regrade(apg, campaign)
    by_task = {e["task_id"]: e for e in data.values()}
    for task, name in (("dv01_view_build", "run/stdout.log"), (TURNS, "run/turns/2/stdout.log")):
        entry = by_task[task]
        assert (entry["status"], entry["token"], entry["new"]) == \
            ("not_regradable", "APG_REGRADE_TRANSCRIPT_TAMPERED", None), entry
        assert f"{entry['order']:04d}/{name} is not the stream the attempt kept" in entry["reason"]
    assert by_task[TRIGGER]["status"] == "regraded" and by_task[TRIGGER]["changed"] == []
    assert f"APG_REGRADE_TRANSCRIPT_UNHASHED {old.parent}: attempt.json records no hash" in err


def test_an_empty_stream_is_no_evidence_for_a_must_not_nor_a_no_load(
        apg: Any, campaign: Path, tmp_path: Path) -> None:
    # As if each CLI had written nothing: dv01's stream and the trigger case's emptied, their
    # records hashing the empty streams, as the runner would have.
    for task in ("dv01_view_build", TRIGGER):
        (run_folder(campaign, task) / "stdout.log").write_bytes(b"")
        attempt = run_folder(campaign, task).parent
        record = json.loads((attempt / "attempt.json").read_text("utf-8"))
        (attempt / "attempt.json").write_text(json.dumps(
            {**record, "streams": streams.recorded(attempt)}), encoding="utf-8")
    # must_not rm -rf: "not seen" in an empty stream would pass it; no_load likewise.
    changed = write_dataset(tmp_path / "data" / "tasks.yml", must_not="rm -rf")
    data, _ = regrade(apg, campaign, "--dataset", str(changed))
    by_task = {e["task_id"]: e for e in data.values()}
    assert {"id": "behaviour:no-execute", "old": "fail", "new": "fail"} in \
        by_task["dv01_view_build"]["checks"]
    assert by_task[TRIGGER]["changed"] == ["trigger"]
    assert (by_task[TRIGGER]["old"]["outcome"], by_task[TRIGGER]["new"]["outcome"]) == \
        ("pass", "fail")
    [folder] = sorted((campaign / "regrades").iterdir())[-1:]
    grade = json.loads((folder / "runs" / f"{by_task['dv01_view_build']['order']:04d}"
                        / "grade.json").read_text("utf-8"))
    found = json.loads(grade["evaluation_results"][0]["score_details"]["details"]["behaviour"])
    assert [(e["id"], e["passed"]) for e in found] == [("no-execute", False), ("explains", False)]
    assert all("holds no event" in e["message"] for e in found), found


def test_a_regrade_serves_the_attempts_own_judge_votes_and_asks_only_for_a_changed_criterion(
        apg: Any, campaign: Path, judge_server: ScriptedModelServer, tmp_path: Path) -> None:
    asked = judge_requests(judge_server)
    data, _ = regrade(apg, campaign)  # the campaign's judge cache went with its beds
    dv01 = {e["task_id"]: e for e in data.values()}["dv01_view_build"]
    assert {"id": "behaviour:explains", "old": "pass", "new": "pass"} in dv01["checks"]
    assert judge_requests(judge_server) == asked  # not one request: the attempt's votes served
    changed = write_dataset(tmp_path / "data" / "tasks.yml", criterion="It names the view.")
    data, _ = regrade(apg, campaign, "--dataset", str(changed))
    assert judge_requests(judge_server) == asked + 3  # the changed criterion's three votes
    dv01 = {e["task_id"]: e for e in data.values()}["dv01_view_build"]
    assert dv01["changed"] == ["behaviour:explains"]  # its votes are no votes: undecided
    [folder] = sorted((campaign / "regrades").iterdir())[-1:]
    record = json.loads((folder / "runs" / f"{dv01['order']:04d}" / "attempt.json"
                         ).read_text("utf-8"))
    [votes] = record["judge_votes"].values()  # the new criterion's, which this grade used
    assert votes == ["unknown"] * 3
