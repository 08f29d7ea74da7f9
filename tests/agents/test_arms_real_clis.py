"""Arms that change what the agent gets, through a whole campaign with the real Claude Code and
Codex CLIs against the scripted model server: the requests each CLI sent carry the skill's name
and description in the with-skill arm only, and the instruction text in the instruction arms only
(once from the instruction file, once from the prompt), and so do the CLIs' own records (Claude
Code's stream-json init event lists the skill; Codex's session file keeps the skill and the
instruction it sent); each attempt's ``arm.json`` names what it
was given by SHA-256, nothing of one arm is in another's HOME, and no attempt reports a leak (the
skills its start-up shows are its arm's and the CLI's own)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cli_kit import FIXTURES, TASK, provider_env

from ai_proving_ground.arms.given import tree_sha256
from support.model_server import Recorded, Reply, ScriptedModelServer

AGENTS = ["claude-code", "codex"]
API = {"claude-code": "anthropic", "codex": "openai"}
# Unique words, so that a hit in a request can only come from the arm.
SKILL = "kb-billing-views"
SKILL_DESCRIPTION = "Use when building the kb_billing view: zebra-quartz-1789 ordering rules."
OTHER_SKILL = "unrelated-helper"
INSTRUCTION = "Always mention the word periwinkle-4471 in your final reply."


def catalog(root: Path) -> Path:
    for name, description in ((SKILL, SKILL_DESCRIPTION),
                              (OTHER_SKILL, "Use for nothing in this campaign (xylo-2231).")):
        folder = root / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n"
                                         f"# {name}\n\nSteps for {name}.\n", encoding="utf-8")
    return root / "skills"


def run(apg: Any, tmp_path: Path, cli_bed: Path, agents: list[str], name: str,
        arms: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[list[dict[str, Any]],
                                                                       list[Recorded], Path]:
    """The campaign with one attempt per arm and agent (jobs 1: they start, and ask, in plan
    order); the attempt records in order and the main requests the CLIs sent, as they came."""
    spec = tmp_path / f"{name}.yml"
    spec.write_text(json.dumps({
        "name": name, "dataset": "build_tasks", "tasks": [TASK], "arms": arms,
        "agents": agents, "repeats": 1, "seed": 3, "jobs": 1, "bed": str(cli_bed),
        "fixtures": FIXTURES, "agent_timeout_s": 200}), encoding="utf-8")
    out = tmp_path / f"{name}-out"
    with ScriptedModelServer([Reply("Nothing to build here.")], timeout_s=400) as server:
        for agent in agents:
            for variable, value in provider_env(agent, server.url).items():
                monkeypatch.setenv(variable, value)
        result = apg("campaign", "run", str(spec), "--out", str(out),
                     "--beds", str(tmp_path / f"{name}-beds"))
        requests = [r for r in server.requests if r.main]
    assert result.rc == 0, result.err
    records = sorted((json.loads(p.read_text("utf-8")) for p in out.glob("runs/*/attempt.json")),
                     key=lambda r: r["order"])
    assert [r["outcome"] for r in records] == ["fail"] * len(arms) * len(agents), result.err
    # One Reply step: one main request per attempt, from that attempt's CLI.
    assert [r.api for r in requests] == [API[r["agent"]] for r in records]
    return records, requests, out


def sent(request: Recorded) -> str:
    return json.dumps(request.body)


def own_transcript(out: Path, record: dict[str, Any], agent: str) -> str:
    """What the CLI itself recorded of what it was offered: Claude Code's stream-json ``init``
    event (its skill list), Codex's session file (its developer and user messages)."""
    run = out / "runs" / attempt_dir(out, record) / "run"
    if agent == "codex":
        return (run / "codex-session.jsonl").read_text("utf-8")
    events = [json.loads(line) for line in (run / "claude-code.jsonl").read_text("utf-8").splitlines()]
    [init] = [e for e in events if e.get("type") == "system" and e.get("subtype") == "init"]
    return json.dumps(init.get("skills"))


def arm_record(out: Path, record: dict[str, Any]) -> dict[str, Any] | None:
    path = out / "runs" / attempt_dir(out, record) / "run" / "arm.json"
    return json.loads(path.read_text("utf-8")) if path.exists() else None


def attempt_dir(out: Path, record: dict[str, Any]) -> str:
    [found] = [p.parent.name for p in out.glob("runs/*/attempt.json")
               if json.loads(p.read_text("utf-8"))["order"] == record["order"]]
    return found


@pytest.mark.parametrize("agent", AGENTS)
def test_the_skill_reaches_the_cli_in_the_with_arm_only(
        agent: str, apg: Any, tmp_path: Path, cli_bed: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    skills = catalog(tmp_path)
    arms = {"without": {"skills": {"catalog": str(skills), "exclude": [SKILL]}},
            "with": {"skills": {"catalog": str(skills)}}}
    records, requests, out = run(apg, tmp_path, cli_bed, [agent], "skills", arms,
                                   monkeypatch)
    for record, request in zip(records, requests, strict=True):
        body, own = sent(request), own_transcript(out, record, agent)
        given = arm_record(out, record)
        assert given is not None
        installed = {s["name"]: s["sha256"] for s in given["skills"]}
        assert OTHER_SKILL in body and OTHER_SKILL in own  # both arms: the catalog's other skill
        # Every skill the start-up showed was the arm's (and the CLI's own): no leak.
        assert record["leaks"] == [], record["leaks"]
        assert record["usage"]["tool_calls"] == 0 and record["usage"]["asked_first"] is False
        if record["arm"] == "with":
            assert SKILL in body and SKILL_DESCRIPTION in body and SKILL in own
            assert installed == {SKILL: tree_sha256(skills / SKILL),
                                 OTHER_SKILL: tree_sha256(skills / OTHER_SKILL)}
        else:
            assert SKILL not in body and "zebra-quartz-1789" not in body and SKILL not in own
            assert installed == {OTHER_SKILL: tree_sha256(skills / OTHER_SKILL)}
            assert given["excluded"] == [SKILL]
            # Nothing of the other arm in this run's HOME.
            home = out / "runs" / attempt_dir(out, record) / "run" / "home"
            assert not list(home.rglob(SKILL))


@pytest.mark.parametrize("agent", AGENTS)
def test_the_instruction_reaches_the_cli_in_the_instruction_arms_only(
        agent: str, apg: Any, tmp_path: Path, cli_bed: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    arms = {"plain": {}, "file": {"instructions": INSTRUCTION},
            "prompt": {"instructions": {"text": INSTRUCTION, "to": "prompt"}}}
    records, requests, out = run(apg, tmp_path, cli_bed, [agent], "instructions", arms,
                                 monkeypatch)
    digest = hashlib.sha256(INSTRUCTION.encode("utf-8")).hexdigest()
    for record, request in zip(records, requests, strict=True):
        body, given = sent(request), arm_record(out, record)
        # Codex's session file keeps the messages it sent; Claude Code's stream-json does not.
        own = own_transcript(out, record, agent) if agent == "codex" else body
        if record["arm"] == "plain":
            assert "periwinkle-4471" not in body and "periwinkle-4471" not in own
            assert given is None  # the stock CLI: nothing given, nothing recorded
            continue
        assert INSTRUCTION in body and INSTRUCTION in own, record["arm"]
        assert given is not None
        assert (given["instructions_to"], given["instructions_sha256"]) == (record["arm"], digest)


def test_one_instruction_arm_across_both_clis(apg: Any, tmp_path: Path, cli_bed: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A cross-agent campaign: the agents axis, an arm with no adapter of its own."""
    arms = {"plain": {}, "told": {"instructions": INSTRUCTION}}
    records, requests, _ = run(apg, tmp_path, cli_bed, AGENTS, "across", arms, monkeypatch)
    seen = {(r["arm"], r["agent"]): INSTRUCTION in sent(q)
            for r, q in zip(records, requests, strict=True)}
    assert seen == {("plain", "claude-code"): False, ("plain", "codex"): False,
                    ("told", "claude-code"): True, ("told", "codex"): True}
