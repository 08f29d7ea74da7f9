"""``apg task verify``: the reference through the oracle adapter (confined, as any adapter),
the public checks and the hidden verifier, on a fresh embedded bed."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from mutation_kit import dv01, write_dataset

PROBE_PATCH = ("diff --git a/hidden-probe.txt b/hidden-probe.txt\nnew file mode 100644\n"
               "--- /dev/null\n+++ b/hidden-probe.txt\n@@ -0,0 +1 @@\n+probe\n")


def test_the_shipped_reference_verifies(apg: Any) -> None:
    result = apg("task", "verify", "dv01_view_build")
    assert result.rc == 0, result.err
    assert result.out.startswith("embedded ")
    assert "run attempted, grade pass, hidden verifier absent" in result.out
    assert "APG_TASK_VERIFY_PASS dv01_view_build on embedded" in result.err


def hidden_task(tmp_path: Path, exit_code: int) -> Path:
    task = dv01()
    # The hidden command reads the file only the patch adds: it ran after the overlay.
    script = f"import pathlib, sys; pathlib.Path('hidden-probe.txt').read_text(); sys.exit({exit_code})"
    task["hidden_verifier"] = {"patch": "probe.patch",
                               "commands": [shlex.join([sys.executable, "-c", script])]}
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "probe.patch").write_text(PROBE_PATCH, encoding="utf-8")
    return write_dataset(tmp_path / "hidden.yml", task)


def test_the_hidden_verifier_runs_and_counts(apg: Any, tmp_path: Path) -> None:
    passing = apg("task", "verify", "dv01_view_build", "--dataset", str(hidden_task(tmp_path, 0)),
                  "--json")
    assert passing.rc == 0, passing.err
    assert json.loads(passing.out)[0]["hidden_verifier"] == "pass"
    failing = apg("task", "verify", "dv01_view_build", "--dataset",
                  str(hidden_task(tmp_path / "f", 1)), "--json")
    assert failing.rc == 1
    (verdict,) = json.loads(failing.out)
    assert (verdict["bed"], verdict["verdict"], verdict["hidden_verifier"], verdict["passed"]) == \
        ("embedded", "fail", "fail", False)
    assert verdict["failed_checks"] == []  # the public checks passed: the hidden part failed
    assert "APG_TASK_VERIFY_FAIL dv01_view_build on embedded" in failing.err


def test_a_reference_that_misses_its_checks_fails(apg: Any, tmp_path: Path) -> None:
    task = dv01()
    next(c for c in task["checks"] if c["type"] == "view_rows")["rows"] = ["nope"]
    result = apg("task", "verify", "dv01_view_build", "--dataset",
                 str(write_dataset(tmp_path / "wrong.yml", task)))
    assert result.rc == 1 and "grade fail" in result.out and "failed: " in result.out


def test_a_task_without_a_reference_is_usage(apg: Any, tmp_path: Path) -> None:
    task = dv01()
    del task["reference_solution"]
    result = apg("task", "verify", "dv01_view_build", "--dataset",
                 str(write_dataset(tmp_path / "none.yml", task)))
    assert result.rc == 2 and result.err.startswith("APG_TASK_VERIFY_UNPROVABLE")
    assert apg("task", "verify", "dv01_view_build", "--ddev-bed", str(tmp_path)).rc == 2
