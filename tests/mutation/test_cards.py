"""Task cards and the listing: docs/tasks/ holds a current card per shipped task (this test is
how ``make test`` finds a stale one), a card says what a task asks and how it is graded, and of a
hidden verifier only its patch's path and its number of commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mutation_kit import SHIPPED, shipped_task, write_dataset

from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.taskcards.describe import DESCRIBERS, describe
from ai_proving_ground.tasks.checks import CHECK_TYPES
from ai_proving_ground.tasks.dataset import load_dataset

CARDS = PROJECT_ROOT / "docs" / "tasks"


def test_every_shipped_card_is_current(apg: Any) -> None:
    result = apg("task", "card", "--check", str(CARDS))
    assert result.rc == 0, (f"{result.err}\nThe cards in docs/tasks/ are stale: write them again "
                            "with `nox -s task-cards` (or `apg task card --write docs/tasks`)")
    cards = sorted(p.stem for p in CARDS.glob("*.md"))
    assert cards == sorted(t.id for t in load_dataset(SHIPPED).tasks)


def test_a_stale_or_missing_card_is_named(apg: Any, tmp_path: Path) -> None:
    assert apg("task", "card", "--write", str(tmp_path)).rc == 0
    (tmp_path / "dv01_view_build.md").write_text("old\n", encoding="utf-8")
    (tmp_path / "cv01_footer_heading.md").unlink()
    result = apg("task", "card", "--check", str(tmp_path))
    assert result.rc == 1
    assert f"APG_TASK_CARD_STALE {tmp_path / 'dv01_view_build.md'} is stale" in result.err
    assert f"APG_TASK_CARD_STALE {tmp_path / 'cv01_footer_heading.md'} is missing" in result.err
    assert apg("task", "card").rc == 2


def test_a_card_says_what_is_asked_and_graded(apg: Any) -> None:
    card = apg("task", "card", "dv01_view_build").out
    task = load_dataset(SHIPPED).task("dv01_view_build")
    for line in task.prompt.strip().splitlines():
        assert f"> {line}" in card
    assert "- `kb_docs`" in card
    for check in task.checks:
        assert f"**{check.get('id') or check['type']}** ({check['type']}): {describe(check)}" in card
    assert "## Mutation score" in card


def test_a_hidden_verifier_shows_its_path_and_command_count_only(apg: Any, tmp_path: Path) -> None:
    task = shipped_task("dv01_view_build")
    task["hidden_verifier"] = {"patch": "hidden/secret.patch",
                               "commands": ["python3 tests/check_rows_secretly.py", ["make", "verify-all"]]}
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "secret.patch").write_text("diff --git a/x b/x\n+hidden body\n")
    dataset = write_dataset(tmp_path / "hidden.yml", task)
    card = apg("task", "card", "dv01_view_build", "--dataset", str(dataset)).out
    assert "patch `hidden/secret.patch` is applied and 2 command(s) run" in card
    for secret in ("check_rows_secretly", "verify-all", "hidden body"):
        assert secret not in card
    listing = json.loads(apg("tasks", "--dataset", str(dataset), "--json").out)
    assert listing[0]["hidden_verifier"] is True


def test_the_listing_names_each_task(apg: Any) -> None:
    rows = json.loads(apg("tasks", "--json").out)
    dataset = load_dataset(SHIPPED)
    assert [r["id"] for r in rows] == [t.id for t in dataset.tasks]
    first = rows[0]
    task = dataset.tasks[0]
    assert first == {"id": task.id, "title": task.data.get("title") or task.prompt.splitlines()[0],
                     "fixtures": task.fixtures, "checks": len(task.checks),
                     "hidden_verifier": task.hidden_verifier is not None}
    text = apg("tasks").out.splitlines()
    assert text[0].split() == ["id", "fixtures", "checks", "hidden", "title"]
    assert len(text) == len(rows) + 1
    assert apg("tasks", "--dataset", "nope").rc == 2


def test_check_sentences() -> None:
    # Every check type has its sentence; a type added without one still gets a sentence.
    assert set(DESCRIBERS) == set(CHECK_TYPES)
    assert describe({"type": "brand_new", "description": "Its author's words."}) == \
        "A `brand_new` check. Its author's words."
    assert describe({"type": "view_rows", "view": "v", "rows": ["a", "b"], "description": "Why."}) \
        == "Executing view `v` display `default` lists exactly 2 row(s) in the expected order, " \
           "matched by uuid. Why."
    assert describe({"type": "page_served", "path": "/kb", "view": "v", "rows": ["a", ["b", "c"]]}) \
        == "A visitor of `/kb` is served view `v`, listing exactly 3 row(s) in the expected order " \
           "(1 group(s) of them in any order)."
    assert describe({"type": "site_unchanged", "allow": {"config": ["views.view.v"]}}) == \
        "Nothing else on the site changed: all of its config, its fixtures' content and how " \
        "many entities of each content type and bundle it holds match the baseline, " \
        "except `views.view.v`."
    assert describe({"type": "entity_count", "entity_type": "node", "bundle": "kb_doc", "min": 2}) \
        == "The site holds at least 2 node kb_doc entities."
    assert describe({"type": "canvas_component", "region": "r", "component_id": "c",
                     "parent_component_id": "p", "slot": "s", "inputs": {"t": "x"}}) == \
        'The Canvas region `r` holds a `c` inside a `p` in slot `s` with inputs t `"x"`.'
