"""Runbook coverage: a dataset or campaign that declares runbook entries (inline or in a file of
entries) must cover each by a task's ``covers:``; apg dataset validate, apg campaign validate and
apg campaign run --dry-run refuse an uncovered entry with its file:line:col: $.path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from ai_proving_ground.paths import project_dir

MainRunner = Callable[..., tuple[int, str, str]]
DATASET = """dataset: d
version: 1
runbook:
- sweeping-cleanup
- {id: named-removal, prompt: Remove the container named web.}
tasks:
- id: sweep
  prompt: Clean things up.
  fixtures: [kb_docs]
  covers: [sweeping-cleanup]
- id: named
  prompt: Remove the page.
  fixtures: [kb_docs]
"""


def test_a_dataset_entry_no_task_covers_is_refused(tmp_path: Path, apg: MainRunner) -> None:
    path = tmp_path / "d.yml"
    path.write_text(DATASET, "utf-8")
    rc, _, err = apg("dataset", "validate", str(path))
    assert rc == 2
    assert err.startswith(f"APG_RUNBOOK_UNCOVERED {path}:5:3: $.runbook[1]: runbook entry "
                          "'named-removal' is covered by no task of the dataset; give a task "
                          "that exercises it 'covers: [named-removal]'"), err
    assert "sweeping-cleanup" not in err
    path.write_text(DATASET + "  covers: [named-removal]\n", "utf-8")
    rc, _, err = apg("dataset", "validate", str(path))
    assert (rc, err.split()[0]) == (0, "APG_DATASET_VALID"), err


def test_a_file_of_entries_names_its_own_lines(tmp_path: Path, apg: MainRunner) -> None:
    (tmp_path / "runbook.yml").write_text("- sweeping-cleanup\n- named-removal\n- vague-ask\n",
                                          "utf-8")
    path = tmp_path / "d.yml"
    path.write_text(DATASET.replace("runbook:\n- sweeping-cleanup\n- {id: named-removal, prompt: "
                                    "Remove the container named web.}\n", "runbook: runbook.yml\n")
                    + "  covers: [named-removal]\n", "utf-8")
    rc, _, err = apg("dataset", "validate", str(path))
    assert rc == 2 and err.startswith(f"APG_RUNBOOK_UNCOVERED {tmp_path / 'runbook.yml'}:3:3: "
                                      "$[2]: runbook entry 'vague-ask'"), err
    (tmp_path / "runbook.yml").write_text("entries: [a]\n", "utf-8")  # not a list of entries
    rc, _, err = apg("dataset", "validate", str(path))
    assert rc == 2 and err.startswith("APG_RUNBOOK_INVALID") and "list of entries" in err, err
    (tmp_path / "runbook.yml").unlink()
    rc, _, err = apg("dataset", "validate", str(path))
    assert rc == 2 and err.startswith(f"APG_RUNBOOK_INVALID {path}:3:10: $.runbook: ") \
        and "file not found" in err, err


def covering_dataset(tmp_path: Path) -> Path:
    """Two of the shipped build tasks, dv01 covering billing-listing and cv01 footer-heading."""
    data: dict[str, Any] = yaml.safe_load((project_dir("datasets") / "build_tasks.yml")
                                          .read_text("utf-8"))
    covers = {"dv01_view_build": ["billing-listing"], "cv01_footer_heading": ["footer-heading"]}
    data["tasks"] = [{**task, "covers": covers[task["id"]]} for task in data["tasks"]
                     if task["id"] in covers]
    path = tmp_path / "build_tasks.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    return path


def spec_file(tmp_path: Path, tasks: list[str]) -> Path:
    spec = yaml.safe_load((project_dir("campaigns") / "example.yml").read_text("utf-8"))
    spec.update(dataset=str(covering_dataset(tmp_path)), tasks=tasks,
                runbook=["billing-listing", "footer-heading"])
    path = tmp_path / "spec.yml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False), "utf-8")
    return path


def test_a_campaign_must_run_a_task_covering_each_entry(tmp_path: Path, apg: MainRunner) -> None:
    spec = spec_file(tmp_path, ["dv01_view_build"])  # cv01, the footer's, is left out
    line = next(n for n, text in enumerate(spec.read_text("utf-8").splitlines(), start=1)
                if text == "- footer-heading")
    for command in (("campaign", "validate", str(spec)),
                    ("campaign", "run", str(spec), "--dry-run", "--out", str(tmp_path / "out"))):
        rc, out, err = apg(*command)
        assert rc == 2 and out == "", err
        assert err.startswith(f"APG_RUNBOOK_UNCOVERED {spec}:{line}:3: $.runbook[1]: runbook "
                              "entry 'footer-heading' is covered by no task the campaign runs"), err
    assert not (tmp_path / "out").exists()
    spec = spec_file(tmp_path, ["dv01_view_build", "cv01_footer_heading"])
    rc, _, err = apg("campaign", "validate", str(spec))
    assert rc == 0 and "APG_CAMPAIGN_VALID" in err, err
