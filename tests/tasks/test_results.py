"""Where verdicts go: grade stores every envelope after stdout is complete; an identical re-grade
is already stored, a changed measurement is a conflict, and no storage problem ever changes the
verdict, the exit code or stdout. ``apg results`` lists what is stored."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from ai_proving_ground.baselines.store import baseline_dir
from ai_proving_ground.cli.grade import main as grade_main
from ai_proving_ground.cli.main import main as apg_main
from ai_proving_ground.cli.results import main as results_main
from ai_proving_ground.paths import project_dir
from ai_proving_ground.tasks import results
from ai_proving_ground.tasks.dataset import load_dataset
from support.envelope_kit import smallest_envelope

RUN_ID = "apg-run-20260718T101500Z-a1b2c3"
MODEL = "anthropic/claude-sonnet-4"
TASK = "cv01_footer_heading"



class Out(NamedTuple):
    rc: int
    out: str
    err: str


Runner = Callable[..., Out]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], check_envelope_schemas: Callable[[Any], None]) -> Runner:
    """``cli(main, *argv)`` in-process; a grade's stdout must be one valid envelope, and its
    stderr must start with the one APG_GRADE_VERDICT line (``err`` is what follows it)."""

    def call(main: Callable[[list[str]], int], *argv: str) -> Out:
        capsys.readouterr()
        rc = main(list(argv))
        out, err = capsys.readouterr()
        if main is grade_main and out:
            check_envelope_schemas(json.loads(out))
            first, _, err = err.partition("\n")
            assert first.startswith(f"APG_GRADE_VERDICT {TASK} "), first
        return Out(rc, out, err)

    return call


def grade(cli: Runner, bed: Path, *args: str) -> Out:
    return cli(grade_main, "--approot", str(bed), *args)


def stored(bed: Path) -> list[Path]:
    return sorted((baseline_dir(bed) / "results").glob("*.json"))


def verdict(envelope: dict[str, Any]) -> str:
    return str(envelope["evaluation_results"][0]["score_details"]["details"]["verdict"])


def solve(cli: Runner, bed: Path) -> None:
    from ai_proving_ground.cli.site import main as site_main

    for step in load_dataset(project_dir("datasets") / "build_tasks.yml").task(TASK).reference_steps:
        assert cli(site_main, "--approot", str(bed), *step).rc == 0


def stored_line(envelope_json: str, state: str) -> str:
    """What grade reports on stderr once the envelope it printed is in the store."""
    evaluation_id = json.loads(envelope_json)["evaluation_id"]
    return f"APG_GRADE_STORED {evaluation_id}: {state} in the results store\n"


def without_retrieval_time(envelope: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in envelope.items() if k != "retrieved_timestamp"}


# ---------------------------------------------------------------------------- storing


def test_first_grade_is_stored(fixtures_bed: Path, cli: Runner) -> None:
    done = grade(cli, fixtures_bed, TASK)
    assert done.rc == 0
    assert done.err == stored_line(done.out, "stored")
    [path] = stored(fixtures_bed)
    assert json.loads(path.read_text(encoding="utf-8")) == json.loads(done.out)


def test_store_lives_under_the_baseline_dir(fixtures_bed: Path, cli: Runner,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_BASELINE_DIR", "state")
    assert grade(cli, fixtures_bed, TASK).rc == 0
    assert len(list((fixtures_bed / "state" / "results").glob("*.json"))) == 1
    # The default folder holds the bed's driver record (bed.json) since bed init; no results.
    assert not (fixtures_bed / ".ai-proving-ground" / "results").exists()


def test_identical_regrade_of_a_run_is_already_stored(fixtures_bed: Path, cli: Runner,
                                                       write_run_record: Any) -> None:
    write_run_record(fixtures_bed, RUN_ID, task_id=TASK)
    first = grade(cli, fixtures_bed, TASK, f"--run={RUN_ID}")
    [path] = stored(fixtures_bed)
    kept = path.read_text(encoding="utf-8")
    again = grade(cli, fixtures_bed, TASK, f"--run={RUN_ID}")
    assert again.rc == 0
    assert again.err == stored_line(again.out, "already stored")
    assert stored(fixtures_bed) == [path]
    assert path.read_text(encoding="utf-8") == kept
    assert without_retrieval_time(json.loads(again.out)) == \
        without_retrieval_time(json.loads(first.out))


def test_changed_measurement_for_the_same_run_is_a_conflict(fixtures_bed: Path, cli: Runner,
                                                            write_run_record: Any) -> None:
    run_dir = write_run_record(fixtures_bed, RUN_ID, task_id=TASK)
    first = grade(cli, fixtures_bed, TASK, f"--run={RUN_ID}")
    assert verdict(json.loads(first.out)) == "fail"
    solve(cli, fixtures_bed)
    second = grade(cli, fixtures_bed, TASK, f"--run={RUN_ID}")
    assert second.rc == 0
    envelope = json.loads(second.out)
    assert verdict(envelope) == "pass"
    evaluation_id = f"build_tasks/{TASK}/{MODEL}/{RUN_ID}"
    assert envelope["evaluation_id"] == evaluation_id
    assert second.err.startswith(f"APG_GRADE_NOT_STORED conflict: {evaluation_id} is already "
                                 "stored with a different measurement")
    [path] = stored(fixtures_bed)
    assert verdict(json.loads(path.read_text(encoding="utf-8"))) == "fail"
    # The run directory keeps the latest grade regardless of the store.
    assert json.loads((run_dir / "grade.json").read_text(encoding="utf-8")) == envelope


def test_grades_without_run_never_collide(fixtures_bed: Path, cli: Runner) -> None:
    first = grade(cli, fixtures_bed, TASK)
    solve(cli, fixtures_bed)
    second = grade(cli, fixtures_bed, TASK)
    assert (first.err, second.err) == (stored_line(first.out, "stored"),
                                       stored_line(second.out, "stored"))
    assert len(stored(fixtures_bed)) == 2


def results_dir_is_a_file(bed: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    target = baseline_dir(bed) / "results"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("not a directory", encoding="utf-8")
    return "APG_GRADE_NOT_STORED "


def store_raises_oserror(bed: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    def broken(*_args: Any) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(results, "store", broken)
    return "APG_GRADE_NOT_STORED OSError: [Errno 28] No space left on device\n"


def store_raises_anything(bed: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    def broken(*_args: Any) -> str:
        raise RuntimeError("importer exploded")

    monkeypatch.setattr(results, "store", broken)
    return "APG_GRADE_NOT_STORED RuntimeError: importer exploded\n"


@pytest.mark.parametrize("spoil", [results_dir_is_a_file, store_raises_oserror,
                                   store_raises_anything])
def test_storage_failure_never_changes_the_verdict(
        fixtures_bed: Path, cli: Runner, write_run_record: Any,
        spoil: Callable[[Path, pytest.MonkeyPatch], str]) -> None:
    run_dir = write_run_record(fixtures_bed, RUN_ID, task_id=TASK)
    with pytest.MonkeyPatch.context() as patch:
        expected_err = spoil(fixtures_bed, patch)
        failed = grade(cli, fixtures_bed, TASK, f"--run={RUN_ID}")
    assert failed.rc == 0
    assert failed.err.startswith(expected_err)
    assert failed.err.count("\n") == 1
    assert stored(fixtures_bed) == []
    # grade.json is still saved, and stdout is what a grade that stored would have printed.
    saved = json.loads((run_dir / "grade.json").read_text(encoding="utf-8"))
    assert saved == json.loads(failed.out)
    (baseline_dir(fixtures_bed) / "results").unlink(missing_ok=True)
    good = grade(cli, fixtures_bed, TASK, f"--run={RUN_ID}")
    assert good.err == stored_line(good.out, "stored")
    assert without_retrieval_time(json.loads(good.out)) == \
        without_retrieval_time(json.loads(failed.out))


def test_stdout_is_complete_before_storing(fixtures_bed: Path, cli: Runner,
                                           capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def spy(approot: Path, envelope: dict[str, Any], settings: object) -> str:
        seen.append(capsys.readouterr().out)
        return "stored"

    monkeypatch.setattr(results, "store", spy)
    done = grade(cli, fixtures_bed, TASK)
    assert done.rc == 0
    assert done.out == ""  # everything was already out when storing began
    assert json.loads(seen[0])["evaluation_results"][0]["evaluation_name"] == f"build_tasks.{TASK}"


def test_no_import_stores_nothing(fixtures_bed: Path, cli: Runner, write_run_record: Any,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = write_run_record(fixtures_bed, RUN_ID, task_id=TASK)
    monkeypatch.setenv("AI_PG_NO_IMPORT", "1")
    done = grade(cli, fixtures_bed, TASK, f"--run={RUN_ID}")
    assert (done.rc, done.err) == (0, "")
    assert not (baseline_dir(fixtures_bed) / "results").exists()
    assert json.loads((run_dir / "grade.json").read_text(encoding="utf-8")) == json.loads(done.out)


# ---------------------------------------------------------------------------- apg results


def test_results_lists_stored_verdicts(fixtures_bed: Path, cli: Runner,
                                       write_run_record: Any) -> None:
    empty = cli(results_main, "--approot", str(fixtures_bed), "--json")
    assert (empty.rc, json.loads(empty.out)) == (0, [])
    write_run_record(fixtures_bed, RUN_ID, task_id=TASK)
    assert grade(cli, fixtures_bed, TASK, f"--run={RUN_ID}").rc == 0
    solve(cli, fixtures_bed)
    assert grade(cli, fixtures_bed, TASK, "build_tasks", "openai/gpt-x").rc == 0
    listed = cli(results_main, "--approot", str(fixtures_bed), "--json")
    assert listed.rc == 0
    rows = json.loads(listed.out)
    assert [{k: r[k] for k in ("task", "model", "score", "verdict", "run")} for r in rows] == [
        {"task": TASK, "model": MODEL, "score": 0.0, "verdict": "fail", "run": RUN_ID},
        {"task": TASK, "model": "openai/gpt-x", "score": 1.0, "verdict": "pass", "run": ""},
    ]
    assert rows[0]["evaluation_id"] == f"build_tasks/{TASK}/{MODEL}/{RUN_ID}"
    assert [(r["agent"], r["run_status"]) for r in rows] == [("nop", "attempted"), ("", "no run")]
    assert {Path(r["file"]) for r in rows} == set(stored(fixtures_bed))
    table = cli(apg_main, "results", "--approot", str(fixtures_bed))
    assert table.rc == 0
    lines = table.out.splitlines()
    assert lines[0].split() == ["task", "agent", "model", "status", "score", "verdict", "when",
                                "run"]
    assert lines[1].split() == [TASK, "nop", MODEL, "attempted", "0.0", "fail", rows[0]["when"],
                                RUN_ID]
    assert lines[2].split() == [TASK, "-", "openai/gpt-x", "no", "run", "1.0", "pass",
                                rows[1]["when"], "-"]
    passed = cli(apg_main, "results", "--approot", str(fixtures_bed), "--verdict=pass", "--json")
    assert [r["model"] for r in json.loads(passed.out)] == ["openai/gpt-x"]
    csv = cli(apg_main, "results", "--approot", str(fixtures_bed), "--format=csv",
              "--fields=model,score")
    assert csv.out.splitlines() == ["model,score", f"{MODEL},0.0", "openai/gpt-x,1.0"]


def test_results_reports_an_unreadable_file(fixtures_bed: Path, cli: Runner) -> None:
    assert grade(cli, fixtures_bed, TASK).rc == 0
    broken = baseline_dir(fixtures_bed) / "results" / "broken.json"
    broken.write_text("{", encoding="utf-8")
    rows = json.loads(cli(results_main, "--approot", str(fixtures_bed), "--json").out)
    assert len(rows) == 2
    [bad] = [r for r in rows if r.get("error")]
    assert bad["file"] == str(broken)
    assert bad["error"].startswith("unreadable: ")


def test_store_directly(tmp_path: Path) -> None:
    envelope = smallest_envelope("1")
    assert results.store(tmp_path, envelope) == "stored"
    assert results.store(tmp_path, {**envelope, "retrieved_timestamp": "2.0"}) == "already stored"
    with pytest.raises(Exception, match="conflict: d/t/m/r is already stored"):
        results.store(tmp_path, smallest_envelope("2"))
    [path] = results.results_dir(tmp_path).glob("*.json")
    assert json.loads(path.read_text(encoding="utf-8"))["retrieved_timestamp"] == "1.0"
