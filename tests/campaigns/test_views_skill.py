"""The shipped skill evaluation's files and the trigger arithmetic, offline: the outcome cases of
datasets/views_skill.yml are the shipped Views build tasks unchanged; the dataset and
campaigns/views_skill.yml pass validation (telltale words included); the arms differ by the one
skill; a trigger case is graded on its transcript only (none: it says so); the report's rates
count judged attempts with a transcript only. The campaign itself runs with the real CLIs in
tests/agents/test_views_skill_real_clis.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ai_proving_ground.campaigns.behaviour_rates import behaviour_rows
from ai_proving_ground.campaigns.records import AttemptRecord, CampaignRecord
from ai_proving_ground.campaigns.triggers import trigger_rows, trigger_tasks
from ai_proving_ground.errors import ApgError
from ai_proving_ground.paths import project_dir
from ai_proving_ground.scorers import triggers
from ai_proving_ground.settings import DEFAULT_SETTINGS
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.dataset import load_dataset
from ai_proving_ground.tasks.envelope import Envelope, verdict_line
from ai_proving_ground.tasks.grade import GradeRequest, grade
from ai_proving_ground.transcripts.record import CommandRun, Transcript

SKILL = "drupal-views-build"
SAME = ("prompt", "fixtures", "checks", "reference_solution", "title")


def test_the_outcome_cases_are_the_shipped_views_tasks_unchanged() -> None:
    shipped = load_dataset(project_dir("datasets") / "build_tasks.yml")
    cases = load_dataset(project_dir("datasets") / "views_skill.yml")
    outcome = [t for t in cases.tasks if t.checks]
    assert [t.id for t in outcome] == ["dv01_view_build", "nv01_release_notes_pager",
                                       "nv03_urgent_block", "nv04_exposed_product_filter",
                                       "nv05_fix_maintenance_page"]
    for task in outcome:
        assert {k: task.data.get(k) for k in SAME} == {
            k: shipped.task(task.id).data.get(k) for k in SAME}, task.id
        assert task.trigger == {"skill": SKILL, "expect": "load"}
        assert [b["kind"] for b in task.behaviour] == ["judge"]
    routing = [t for t in cases.tasks if not t.checks]
    expects = [(t.trigger or {}).get("expect") for t in routing]
    owners = {(t.trigger or {}).get("owner") for t in routing if t.trigger}
    assert expects.count("load") >= 3 and expects.count("no_load") >= 3
    assert "drupal-content-edit" in owners  # near misses owned by the neighbouring skill
    assert (project_dir("skills") / "drupal-content-edit" / "SKILL.md").is_file()


def test_the_shipped_dataset_and_campaign_validate(apg: Any) -> None:
    dataset = apg("dataset", "validate", str(project_dir("datasets") / "views_skill.yml"))
    assert dataset.rc == 0 and "no telltale word" in dataset.err, dataset.err
    campaign = apg("campaign", "validate", str(project_dir("campaigns") / "views_skill.yml"))
    assert campaign.rc == 0 and "no telltale word" in campaign.err, campaign.err
    spec = yaml.safe_load((project_dir("campaigns") / "views_skill.yml").read_text("utf-8"))
    with_, without = (set(spec["arms"][a]["skills"]["exclude"]) for a in ("with", "without"))
    assert without - with_ == {SKILL} and not with_ - without  # the one skill apart
    card = apg("task", "card", "--dataset", "views_skill", "tn01_unpublish_faq_item")
    assert ("None: a skill trigger case, graded on the run's transcript: it passes when the agent "
            f"does not load `{SKILL}` (a near miss owned by `drupal-content-edit`)") in card.out


def transcript(*commands: str, skills: tuple[str, ...] = ()) -> Transcript:
    return Transcript(agent="codex", source="x", developer="openai", model="m",
                      commands=tuple(CommandRun(c, 0, "shell") for c in commands),
                      skills_used=skills)


@pytest.mark.parametrize(("expect", "seen", "correct"), [
    ("load", transcript(f"cat /h/skills/{SKILL}/SKILL.md"), True),
    ("load", transcript("cat /h/skills/my-drupal-views-build/SKILL.md"), False),
    ("load", transcript(f"cd /h/skills/{SKILL} && sed -n 1,80p SKILL.md"), True),
    ("load", transcript(f"cd '/h/skills/{SKILL}'; cat SKILL.md"), True),
    ("load", transcript(f"ls /h/skills/{SKILL}", "cat SKILL.md"), False),  # not one command
    ("load", transcript(f"cd /h/skills/{SKILL}-old && cat SKILL.md"), False),
    ("no_load", transcript(skills=(SKILL,)), False),
    ("no_load", transcript("apg site status"), True),
    ("no_load", None, False),  # no transcript: nothing shows it stayed out
])
def test_a_trigger_is_right_only_when_the_transcript_shows_it(
        expect: str, seen: Transcript | None, correct: bool) -> None:
    result = triggers.observe({"skill": SKILL, "expect": expect}, seen, graded=True)
    assert result.correct is correct
    assert result.loaded is (None if seen is None else (correct == (expect == "load")))


def test_a_trigger_case_without_a_run_is_skipped_saying_why(tmp_path: Path) -> None:
    # Refused before the site is read, so no bed is needed.
    request = GradeRequest(approot=tmp_path, task_id="tl01_getting_started_page",
                           dataset="views_skill", settings=DEFAULT_SETTINGS)
    with pytest.raises(ApgError) as raised:
        grade(request, EmbeddedSite(tmp_path))
    assert raised.value.token == "APG_GRADE_SKIP"
    assert "skill trigger case, graded on a run's transcript; give --run" in raised.value.message


def record(order: int, task: str, arm: str, outcome: str, trigger: dict[str, Any] | None,
           behaviour: list[dict[str, Any]] | None = None) -> AttemptRecord:
    return AttemptRecord(index=order, order=order, task_id=task, arm=arm, agent="codex",
                         model=None, repeat=0, outcome=outcome, reason="", started_at="t",
                         trigger=trigger, behaviour=behaviour)


def result(expect: str, loaded: bool | None, owner: str | None = None,
           graded: bool = True) -> dict[str, Any]:
    return triggers.TriggerResult(SKILL, expect, owner, loaded, heuristic=bool(loaded),
                                  graded=graded).as_json()


CAMPAIGN = CampaignRecord(name="c", seed=1, dataset={}, arms=["without", "with"],
                          compare=["without", "with"], tasks=[], agents=["codex"],
                          models=[None], repeats=1, jobs=1, created_at="t")


def test_the_rates_count_judged_attempts_with_a_transcript() -> None:
    campaign = CAMPAIGN
    records = [
        record(0, "a", "with", "pass", result("load", True)),
        record(1, "b", "with", "fail", result("load", False)),
        record(2, "c", "with", "pass", result("load", None)),  # no transcript: unknown
        record(3, "d", "with", "infra_error", result("load", True)),  # never the agent's
        record(4, "e", "with", "fail", result("no_load", True, owner="drupal-content-edit")),
        record(5, "f", "with", "pass", result("no_load", False)),
        record(6, "g", "with", "pass", result("load", True, graded=False)),  # an outcome case
        record(7, "h", "with", "pass", None),
        record(8, "a", "without", "fail", result("load", False)),
    ]
    rows = trigger_rows(records, campaign)
    assert [r["arm"] for r in rows] == ["without", "with"]
    row = rows[1]
    assert (row["hit"]["k"], row["hit"]["n"]) == (2, 3)
    assert (row["false_load"]["k"], row["false_load"]["n"]) == (1, 2)
    assert (row["near_miss_false_load"]["k"], row["near_miss_false_load"]["n"]) == (1, 1)
    assert (row["unknown"], row["heuristic_loads"]) == (1, 3)
    assert row["hit"]["wilson"][0] > 0 and row["hit"]["wilson"][1] < 1
    assert trigger_tasks(records) == {"a", "b", "c", "d", "e", "f"}


def judged(passed: bool, undecided: bool = False) -> list[dict[str, Any]]:
    return [{"id": "says-where", "kind": "judge", "passed": passed, "scored": False,
             "undecided": undecided}]


def test_behaviour_per_arm_counts_undecided_apart() -> None:
    records = [record(0, "a", "with", "pass", None, judged(True)),
               record(1, "b", "with", "fail", None, judged(False)),
               record(2, "c", "with", "pass", None, judged(False, undecided=True)),
               record(3, "d", "with", "infra_error", None, judged(True)),
               record(4, "a", "without", "pass", None, judged(False))]
    rows = behaviour_rows(records, CAMPAIGN)
    assert [(r["arm"], r["held"]["k"], r["held"]["n"], r["undecided"]) for r in rows] == [
        ("without", 0, 1, 0), ("with", 1, 2, 1)]
    assert rows[1]["kind"] == "judge" and rows[1]["scored"] is False
    assert "behaviour" not in record(5, "e", "with", "pass", None).as_json()


def test_the_verdict_line_says_how_the_trigger_went() -> None:
    details = {"trigger": json.dumps(result("no_load", True, owner="drupal-content-edit"))}
    document = {"model_info": {"additional_details": {"agent_adapter": "codex"}},
                "evaluation_results": [{"score_details": {"score": 0.0, "details": details}}]}
    envelope = Envelope(evaluation_id="e", task_id="tn01", model_id="m", score=0.0,
                        verdict="fail", checks_passed="0/0", run_id=None, retrieved_timestamp="t",
                        dataset_sha256=None, checks=(), document=document)
    assert verdict_line(envelope) == ("tn01 agent=codex score=0 checks 0/0, trigger "
                                      f"{SKILL} expected no_load: loaded")


def test_a_trigger_on_a_skill_no_arm_installs_is_refused(apg: Any, tmp_path: Path) -> None:
    spec = yaml.safe_load((project_dir("campaigns") / "views_skill.yml").read_text("utf-8"))
    for arm in spec["arms"].values():
        arm["skills"] = {"catalog": str(project_dir("skills")),
                         "exclude": sorted({*arm["skills"]["exclude"], SKILL})}
    path = tmp_path / "typo.yml"
    path.write_text(json.dumps(spec), encoding="utf-8")
    refused = apg("campaign", "validate", str(path))
    assert refused.rc == 2
    assert (f"task dv01_view_build's trigger names skill '{SKILL}', which no arm installs "
            "(arms' skills: drupal-content-edit)") in refused.err
