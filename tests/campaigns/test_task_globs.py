"""Task globs in a spec (``tasks: ["nv*", dv01_view_build]``) and campaigns named like datasets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from campaign_kit import EXAMPLE, write_spec

from ai_proving_ground.campaigns.spec import SPEC_INVALID, SPEC_NOT_FOUND, find_spec, load_spec, resolve
from ai_proving_ground.errors import ApgError
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.tasks.dataset import load_dataset

DATASET = [t.id for t in load_dataset(PROJECT_ROOT / "datasets" / "build_tasks.yml").tasks]


def spec_with(tmp_path: Path, tasks: list[str]) -> Path:
    return write_spec(tmp_path / "spec.yml", {
        "name": "globs", "dataset": "build_tasks", "tasks": tasks, "arms": {"a": {}, "b": {}},
        "agents": ["nop"], "repeats": 1, "seed": 1})


def task_ids(path: Path) -> list[str]:
    return [t.id for t in resolve(load_spec(path)).tasks]


def test_a_glob_expands_in_dataset_order_beside_plain_ids(tmp_path: Path) -> None:
    nv = [t for t in DATASET if t.startswith("nv")]
    assert len(nv) == 5  # the dataset's own order, not the alphabet's
    assert task_ids(spec_with(tmp_path, ["nv*", "dv01_view_build"])) == [*nv, "dv01_view_build"]
    assert task_ids(spec_with(tmp_path, ["n[ck]0?_*"])) == [
        t for t in DATASET if t[:2] in ("nc", "nk")]


def test_a_task_two_entries_name_runs_once_where_it_is_first_named(tmp_path: Path) -> None:
    assert task_ids(spec_with(tmp_path, ["cv02_front_page_card", "cv*"])) == [
        "cv02_front_page_card", "cv01_footer_heading"]


def test_a_glob_that_matches_nothing_is_refused_where_it_is_listed(tmp_path: Path) -> None:
    path = spec_with(tmp_path, ["dv01_view_build", "zz*"])
    with pytest.raises(ApgError) as caught:
        resolve(load_spec(path))
    assert (caught.value.token, caught.value.exit_code) == (SPEC_INVALID, 2)
    # write_spec writes JSON: the list's second item sits on line 6, column 5.
    assert caught.value.message.startswith(
        f"{path}:6:5: $.tasks[1]: dataset build_tasks (")
    assert "has no task matching the glob 'zz*'; its tasks: dv01_view_build, " in caught.value.message


def test_the_campaign_records_the_expanded_tasks(apg: Any, tmp_path: Path) -> None:
    result = apg("campaign", "run", str(spec_with(tmp_path, ["cv*"])), "--dry-run", "--json")
    assert result.rc == 0, result.err
    assert {json.loads(line)["task_id"] for line in result.out.splitlines()} == {
        "cv01_footer_heading", "cv02_front_page_card"}


# ---------------------------------------------------------------------------- named campaigns


def test_a_bare_name_is_a_shipped_campaign_a_path_is_a_path(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert find_spec("example") == EXAMPLE
    (tmp_path / "example").write_text("name: mine\n", encoding="utf-8")  # a file here wins
    assert find_spec("example") == tmp_path / "example"
    assert find_spec("mine.yml") == tmp_path / "mine.yml"  # a path, found or not (load says)
    assert find_spec("sub/example") == tmp_path / "sub" / "example"


def test_a_named_campaign_runs_from_any_directory(apg: Any, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = apg("campaign", "run", "example", "--dry-run", "--json")
    assert result.rc == 0, result.err
    assert [json.loads(line)["order"] for line in result.out.splitlines()] == [0, 1, 2, 3]


def test_an_unknown_name_lists_the_shipped_campaigns(apg: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = apg("campaign", "run", "exampel", "--dry-run")
    assert (result.rc, result.out) == (2, "")
    assert result.err.startswith(f"{SPEC_NOT_FOUND} no campaign spec 'exampel': not a file here "
                                 f"and not a shipped campaign ({PROJECT_ROOT / 'campaigns'}/exampel.yml)")
    assert result.err.rstrip().endswith("pass a spec path or one of: example, views_skill")
