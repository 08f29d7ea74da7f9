"""`inspect eval ai_proving_ground/build_tasks --model apg/...` from Inspect's own command line,
found through the package's ``inspect_ai`` entry point, offline.

Offline means: every proxy points at a closed port and tiktoken's cache is an empty directory,
so a download (an API call, tiktoken fetching its encoding) would fail the eval.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, read_eval_log

from ai_proving_ground.integrations.inspect_ai import TASK_VERSION
from ai_proving_ground.integrations.inspect_registry import task_ids
from ai_proving_ground.paths import project_dir
from ai_proving_ground.tasks.dataset import load_dataset

INSPECT = Path(sys.executable).parent / "inspect"
DATASET = load_dataset(project_dir("datasets") / "build_tasks.yml")


def inspect_eval(tmp_path: Path, model: str, *args: str) -> EvalLog:
    logs = tmp_path / "logs"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INSPECT_", "AI_PG_"))}
    closed = "http://127.0.0.1:9"
    env.update({"HTTP_PROXY": closed, "HTTPS_PROXY": closed, "http_proxy": closed,
                "https_proxy": closed, "NO_PROXY": "", "no_proxy": "",
                "TIKTOKEN_CACHE_DIR": str(tmp_path / "tiktoken-empty")})
    done = subprocess.run([str(INSPECT), "eval", "ai_proving_ground/build_tasks", "--model", model,
                           "--log-dir", str(logs), "--log-format", "json", "--display", "none",
                           "--max-samples", "1", *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    [path] = logs.glob("*.json")
    log = read_eval_log(str(path))
    assert log.status == "success", log.error
    assert not (tmp_path / "tiktoken-empty").exists() or not any((tmp_path / "tiktoken-empty").iterdir())
    return log


def test_the_oracle_model_solves_every_task_and_each_sample_has_one_explained_score(
        tmp_path: Path) -> None:
    log = inspect_eval(tmp_path, "apg/oracle")
    assert log.eval.task == "ai_proving_ground/build_tasks"
    assert log.eval.task_version == TASK_VERSION
    assert log.samples is not None
    assert sorted(str(s.id) for s in log.samples) == sorted(t.id for t in DATASET.tasks if t.checks)
    for sample in log.samples:
        assert sample.scores is not None and len(sample.scores) == 1
        [score] = sample.scores.values()
        task = DATASET.task(str(sample.id))
        assert score.value == 1.0, score.explanation
        # One line per check of the task, by its id and type.
        assert score.explanation is not None
        assert score.explanation.splitlines() == [f"all {len(task.checks)} checks passed:", *(
            f"- {check['id']} ({check['type']}): passed" for check in task.checks)]
        envelope = score.metadata["envelope"] if score.metadata else {}
        # The envelope joins back to its sample: id, epoch and uuid.
        details = envelope["source_metadata"]["additional_details"]
        assert details["inspect_sample_id"] == str(sample.id)
        assert details["inspect_epoch"] == str(sample.epoch)
        assert envelope["evaluation_id"] == (f"build_tasks/{sample.id}/apg/oracle/"
                                             f"inspect-{sample.uuid}")


def test_nop_scores_zero_with_the_failed_checks_named_and_tasks_selects_several(
        tmp_path: Path) -> None:
    log = inspect_eval(tmp_path, "apg/nop", "-T", "tasks=cv01_footer_heading,dv01_view_build")
    assert log.samples is not None
    assert sorted(str(s.id) for s in log.samples) == ["cv01_footer_heading", "dv01_view_build"]
    for sample in log.samples:
        assert sample.scores is not None and len(sample.scores) == 1
        [score] = sample.scores.values()
        assert score.value == 0.0
        assert score.explanation is not None
        failed = [c for c in score.metadata["checks"] if not c["passed"]] if score.metadata else []
        assert failed
        lines = score.explanation.splitlines()
        assert lines[0] == f"{len(failed)} of {len(score.metadata['checks'])} checks failed:"
        assert len(lines) == 1 + len(score.metadata["checks"])  # one line per check
        for check in failed:
            assert f"- {check['id']} ({check['type']}): expected " in score.explanation


@pytest.mark.parametrize(("given", "expected"), [
    (None, None),
    ("dv01_view_build", ["dv01_view_build"]),
    ("a,b", ["a", "b"]),
    (["a", "b"], ["a", "b"]),  # what Inspect's -T parser makes of a,b
    (["a,b", " c "], ["a", "b", "c"]),
    ("", None),
])
def test_task_ids_take_what_the_command_line_gives(given: str | list[str] | None,
                                                   expected: list[str] | None) -> None:
    assert task_ids(given) == expected
