"""apg dataset validate and apg campaign validate: the shipped datasets and campaign pass; a
telltale word in a prompt, an arm's instructions or a skill's name is refused with its
file:line:col: $.path, and apg campaign run --dry-run refuses the same spec."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from ai_proving_ground.paths import project_dir
from ai_proving_ground.telltale import telltales

MainRunner = Callable[..., tuple[int, str, str]]
SHIPPED = sorted(project_dir("datasets").glob("*.yml"))


def test_words_match_whole_and_plural() -> None:
    assert telltales("This eval checks the fixture.", ["eval", "fixture"]) == ["eval", "fixture"]
    assert telltales("Evals, kb_eval and a TEST  harness", ["eval", "test harness"]) == [
        "Evals", "eval", "TEST  harness"]
    assert telltales("evaluate the prefixture of medieval text", ["eval", "fixture"]) == []


@pytest.mark.parametrize("path", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_shipped_datasets_pass(path: Path, apg: MainRunner) -> None:
    rc, _, err = apg("dataset", "validate", str(path))
    assert (rc, err.split()[0]) == (0, "APG_DATASET_VALID"), err


def test_a_telltale_prompt_is_refused(tmp_path: Path, apg: MainRunner) -> None:
    path = tmp_path / "d.yml"
    path.write_text("dataset: d\nversion: 1\ntasks:\n- id: ok\n  prompt: Add a page.\n"
                    "  fixtures: [kb_docs]\n- id: told\n  fixtures: [kb_docs]\n"
                    "  prompt: Build the view; this eval checks the fixture.\n", "utf-8")
    rc, _, err = apg("dataset", "validate", str(path))
    assert rc == 2
    assert err.startswith(f"APG_TELLTALE_WORD {path}:9:11: $.tasks[1].prompt: task told's "
                          "prompt holds telltale word(s) 'eval', 'fixture'"), err
    # The list is configurable: without those words it passes.
    assert apg("dataset", "validate", str(path), "--words=grader")[0] == 0


def campaign_spec(tmp_path: Path, arms: dict[str, object]) -> Path:
    spec = yaml.safe_load((project_dir("campaigns") / "example.yml").read_text("utf-8"))
    spec.update(arms=arms, compare=list(arms))
    path = tmp_path / "spec.yml"
    path.write_text(yaml.safe_dump(spec), "utf-8")
    return path


def test_the_shipped_campaign_passes(apg: MainRunner) -> None:
    rc, _, err = apg("campaign", "validate", str(project_dir("campaigns") / "example.yml"))
    assert rc == 0 and "APG_CAMPAIGN_VALID" in err, err


def test_telltale_instructions_and_skill_names_are_refused(tmp_path: Path,
                                                           apg: MainRunner) -> None:
    skill = tmp_path / "skills" / "grader-tricks"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: grader-tricks\n---\nx\n", "utf-8")
    path = campaign_spec(tmp_path, {
        "plain": {"description": "nothing"},
        "told": {"description": "x", "instructions": {"text": "Win the benchmark.", "to": "prompt"},
                 "skills": {"catalog": "skills"}}})
    rc, _, err = apg("campaign", "validate", str(path))
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert lines[0].startswith(f"APG_TELLTALE_WORD {path}:") and lines[0].endswith(
        "$.arms.told.instructions.text: arm told's instructions holds telltale word(s) "
        "'benchmark'; say it as a user would"), lines
    assert "$.arms.told.skills: arm told's skill name 'grader-tricks' holds" in lines[1]
    # The run and its dry run refuse the same spec, before anything is written.
    out = tmp_path / "out"
    rc, stdout, err = apg("campaign", "run", str(path), "--dry-run", f"--out={out}")
    assert (rc, stdout) == (2, "") and "APG_TELLTALE_WORD" in err and not out.exists()
    rc, _, err = apg("campaign", "run", str(path), f"--out={out}")
    assert rc == 2 and "APG_TELLTALE_WORD" in err and not out.exists()
