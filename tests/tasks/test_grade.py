"""``apg grade``: verdicts on the shipped tasks, the envelope's provenance hashes, --run, exit codes
and tokens, and the unresolved cases. Every envelope is checked against both schemas."""

from __future__ import annotations

import calendar
import hashlib
import json
import os
import re
import shutil
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import yaml

from ai_proving_ground import records
from ai_proving_ground.baselines.store import baseline_dir
from ai_proving_ground.cli.grade import main as grade_main
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_json
from ai_proving_ground.paths import project_dir
from ai_proving_ground.schemas import schema_errors
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks import checks as checks_module
from ai_proving_ground.tasks import grade as grade_module
from ai_proving_ground.tasks.dataset import Dataset, Task, load_dataset

SHIPPED = project_dir("datasets") / "build_tasks.yml"
RUN_ID = "apg-run-20260718T101500Z-a1b2c3"
MODEL = "anthropic/claude-sonnet-4"
# The 12 published billing articles by weight, as the shipped dv01 task lists them.
BILLING_BY_WEIGHT = next(c for c in load_dataset(SHIPPED).task("dv01_view_build").checks
                         if c["id"] == "rows-in-order")["rows"]
SHIPPED_TASKS = [t.id for t in load_dataset(SHIPPED).tasks]



class Graded(NamedTuple):
    rc: int
    out: str
    err: str
    envelope: dict[str, Any] | None

    @property
    def result(self) -> dict[str, Any]:
        assert self.envelope is not None
        result: dict[str, Any] = self.envelope["evaluation_results"][0]
        return result

    @property
    def details(self) -> dict[str, str]:
        details: dict[str, str] = self.result["score_details"]["details"]
        return details

    @property
    def checks(self) -> list[dict[str, Any]]:
        checks: list[dict[str, Any]] = json.loads(self.details["checks"])
        return checks

    @property
    def source(self) -> dict[str, str]:
        assert self.envelope is not None
        source: dict[str, str] = self.envelope["source_metadata"]["additional_details"]
        return source

    @property
    def library(self) -> dict[str, str]:
        assert self.envelope is not None
        library: dict[str, str] = self.envelope["eval_library"]["additional_details"]
        return library


GradeFn = Callable[..., Graded]


@pytest.fixture
def grade(capsys: pytest.CaptureFixture[str],
          check_envelope_schemas: Callable[[Any], None]) -> GradeFn:
    """``grade(bed, *args)``: ``apg grade --approot BED ARGS`` in-process; checks the envelope."""

    def call(bed: Path, *args: str) -> Graded:
        capsys.readouterr()
        try:
            rc = grade_main(["--approot", str(bed), *args])
        except SystemExit as exc:
            rc = int(exc.code or 0)
        out, err = capsys.readouterr()
        envelope = json.loads(out) if out else None
        if envelope is not None:
            check_envelope_schemas(envelope)
        return Graded(rc, out, err, envelope)

    return call


@pytest.fixture
def site(capsys: pytest.CaptureFixture[str]) -> Callable[..., None]:
    """``site(bed, *args)``: ``apg site`` in-process; it must succeed."""
    from ai_proving_ground.cli.site import main

    def call(bed: Path, *args: str) -> None:
        rc = main(["--approot", str(bed), *args])
        assert rc == 0, capsys.readouterr()

    return call


def apply_reference(site: Callable[..., None], bed: Path, task_id: str) -> None:
    for step in load_dataset(SHIPPED).task(task_id).reference_steps:
        site(bed, *step)


def canonical_task_sha(path: Path, task_id: str) -> str:
    """The documented canonical JSON hash, computed here independently of the product."""
    entry = next(t for t in yaml.safe_load(path.read_bytes())["tasks"] if t["id"] == task_id)
    text = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_dataset(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def stored(bed: Path) -> list[Path]:
    return sorted((baseline_dir(bed) / "results").glob("*.json"))


# ---------------------------------------------------------------------------- verdicts


@pytest.mark.parametrize("task_id", SHIPPED_TASKS)
def test_shipped_task_floor_and_ceiling(provisioned_set: Callable[[list[str], Path], Path],
                                        tmp_path: Path, grade: GradeFn,
                                        site: Callable[..., None], task_id: str) -> None:
    # A bed of the task's own fixture set.
    fixtures_bed = provisioned_set(load_dataset(SHIPPED).task(task_id).fixtures, tmp_path / "bed")
    floor = grade(fixtures_bed, task_id)
    assert floor.rc == 0
    assert floor.result["score_details"]["score"] == 0.0
    assert floor.details["verdict"] == "fail"
    assert floor.details["failed_checks"] != ""
    apply_reference(site, fixtures_bed, task_id)
    ceiling = grade(fixtures_bed, task_id)
    assert ceiling.rc == 0
    assert ceiling.result["score_details"]["score"] == 1.0
    assert ceiling.details["verdict"] == "pass"
    assert ceiling.details["failed_checks"] == ""
    total = len(load_dataset(SHIPPED).task(task_id).checks)
    assert ceiling.details["checks_passed"] == f"{total}/{total}"
    assert all(c["passed"] for c in ceiling.checks)
    assert ceiling.result["evaluation_name"] == f"build_tasks.{task_id}"


WRONG_SECTION = ("value: {billing: billing}", "value: {accounts: accounts}")
WRONG_ORDER = ("sorts: {field_kb_weight_value: {id: field_kb_weight_value, table: "
               "node__field_kb_weight, field: field_kb_weight_value, order: ASC}}",
               "sorts: {title: {id: title, table: node_field_data, field: title, order: ASC}}")


@pytest.mark.parametrize(("change", "why", "count"), [
    (WRONG_SECTION, "other rows", 3),
    (WRONG_ORDER, "the same rows in another order", 12),
], ids=["wrong-section", "wrong-order"])
def test_config_valid_view_fails_only_the_execution_checks(
        fixtures_bed: Path, grade: GradeFn, site: Callable[..., None],
        change: tuple[str, str], why: str, count: int) -> None:
    step = load_dataset(SHIPPED).task("dv01_view_build").reference_steps[0]
    assert change[0] in step[3]
    site(fixtures_bed, *step[:3], step[3].replace(*change), *step[4:])
    site(fixtures_bed, "cr")  # its route, as the reference's own cr gives it
    graded = grade(fixtures_bed, "dv01_view_build")
    assert graded.rc == 0
    assert graded.result["score_details"]["score"] == 0.0
    assert graded.details["verdict"] == "fail"
    assert graded.details["failed_checks"] == "rows-in-order, page-served"
    assert graded.details["checks_passed"] == "2/4"
    by_id = {c["id"]: c for c in graded.checks}
    assert [c["id"] for c in graded.checks if c["passed"]] == ["view-exists", "rest-unchanged"]
    rows = by_id["rows-in-order"]
    assert rows["type"] == "view_rows"
    assert rows["expected"] == BILLING_BY_WEIGHT
    assert rows["found"] != BILLING_BY_WEIGHT
    assert len(rows["found"]) == count
    assert rows["message"] == f"executing kb_billing/page_1 gave {why}"
    assert by_id["page-served"]["message"] == f"executing the page /kb/billing gave {why}"


def test_grade_costs_one_round_trip(fixtures_bed: Path,
                                    check_envelope_schemas: Callable[[Any], None]) -> None:
    driver = EmbeddedSite(fixtures_bed)
    envelope = grade_module.grade(grade_module.GradeRequest(fixtures_bed, "dv01_view_build"),
                                  driver)
    assert driver.round_trips == 1
    assert envelope["evaluation_results"][0]["score_details"]["score"] == 0.0
    check_envelope_schemas(envelope)


def spoil_tree(e: dict[str, Any]) -> None:
    del e["eval_library"]["additional_details"]["grader_tree_sha256"]


def spoil_class(e: dict[str, Any]) -> None:
    del e["eval_library"]["additional_details"]["grader_class_sha256"]


def spoil_dataset(e: dict[str, Any]) -> None:
    del e["source_metadata"]["additional_details"]["task_sha256"]


def spoil_verdict(e: dict[str, Any]) -> None:
    e["evaluation_results"][0]["score_details"]["score"] = 1.0


def spoil_string_map(e: dict[str, Any]) -> None:
    e["evaluation_results"][0]["score_details"]["details"]["attempt_index"] = 1


def spoil_timestamp(e: dict[str, Any]) -> None:
    e["retrieved_timestamp"] = 1767269105.5


def spoil_run_id(e: dict[str, Any]) -> None:
    e["source_metadata"]["additional_details"]["apg_run_id"] = "../../run"


def spoil_availability(e: dict[str, Any]) -> None:  # a free string in 0.2.2, refused by 0.3.0
    e["model_info"]["additional_details"]["model_availability"] = "recorded"


def spoil_deployment(e: dict[str, Any]) -> None:  # required by 0.3.0
    del e["model_info"]["additional_details"]["deployment_type"]


@pytest.mark.parametrize("spoil", [spoil_tree, spoil_class, spoil_dataset, spoil_verdict,
                                   spoil_string_map, spoil_timestamp, spoil_run_id,
                                   spoil_availability, spoil_deployment])
def test_envelope_schema_refuses_what_grade_never_emits(
        fixtures_bed: Path, spoil: Callable[[dict[str, Any]], None]) -> None:
    envelope = grade_module.grade(grade_module.GradeRequest(fixtures_bed, "dv01_view_build"),
                                  EmbeddedSite(fixtures_bed))
    assert schema_errors(envelope, "envelope") == []
    spoil(envelope)
    assert schema_errors(envelope, "envelope") != []
    with pytest.raises(ApgError) as caught:
        grade_module.check_envelope(envelope)
    assert caught.value.token == "APG_GRADE_ENVELOPE_INVALID"


def test_envelope_without_task_id_is_refused_with_the_grade_token(fixtures_bed: Path) -> None:
    """What the schema cannot say (a task_id in a free string map) is refused the same way."""
    envelope = grade_module.grade(grade_module.GradeRequest(fixtures_bed, "dv01_view_build"),
                                  EmbeddedSite(fixtures_bed))
    del envelope["evaluation_results"][0]["source_data"]["additional_details"]["task_id"]
    assert schema_errors(envelope, "envelope") == []
    with pytest.raises(ApgError) as caught:
        grade_module.check_envelope(envelope)
    assert caught.value.token == "APG_GRADE_ENVELOPE_INVALID"
    assert "names no task_id" in caught.value.message


def test_the_envelope_value_carries_the_check_results_and_the_dataset_hash(
        fixtures_bed: Path) -> None:
    """What a reader needs (the Inspect scorer) as typed values, not paths into the document."""
    request = grade_module.GradeRequest(fixtures_bed, "dv01_view_build")
    envelope = grade_module.check_envelope(grade_module.grade(request, EmbeddedSite(fixtures_bed)))
    details = envelope.document["evaluation_results"][0]["score_details"]["details"]
    assert [c.as_json() for c in envelope.checks] == json.loads(details["checks"])
    assert envelope.checks and not all(c.passed for c in envelope.checks)
    assert envelope.dataset_sha256 == hashlib.sha256(SHIPPED.read_bytes()).hexdigest()
    details["checks"] = '[{"id": "c1"}]'  # a free string to the schema
    with pytest.raises(ApgError) as caught:
        grade_module.check_envelope(envelope.document)
    assert caught.value.token == "APG_GRADE_ENVELOPE_INVALID"
    assert "details.checks: not a JSON list of check results" in caught.value.message


# ---------------------------------------------------------------------------- provenance


def test_envelope_provenance_for_the_shipped_dataset(fixtures_bed: Path, grade: GradeFn) -> None:
    graded = grade(fixtures_bed, "cv01_footer_heading")
    assert graded.source == {
        "dataset_path": "apg:datasets/build_tasks.yml",  # shipped: never a host path
        "dataset_sha256": sha256_of(SHIPPED),
        "task_sha256": canonical_task_sha(SHIPPED, "cv01_footer_heading"),
    }
    class_file = Path(checks_module.__file__).resolve()
    assert graded.library["grader_class_file"] == "apg:ai_proving_ground/tasks/checks/__init__.py"
    assert graded.library["grader_class_sha256"] == sha256_of(class_file)
    assert graded.library["hash_algorithm"] == "sha256"
    assert re.fullmatch(r"[0-9a-f]{64}", graded.library["grader_tree_sha256"])
    assert graded.envelope is not None
    assert re.fullmatch(r"build_tasks/cv01_footer_heading/unknown/unknown/\d+-[0-9a-f]{8}",
                        graded.envelope["evaluation_id"])
    assert graded.result["source_data"] == {
        "source_type": "other", "dataset_name": "build_tasks",
        "additional_details": {"task_id": "cv01_footer_heading", "dataset_version": "1"}}
    again = grade(fixtures_bed, "cv01_footer_heading")
    assert again.envelope is not None
    assert again.envelope["evaluation_id"] != graded.envelope["evaluation_id"]


def test_dataset_inside_the_approot_is_app_relative(fixtures_bed: Path, grade: GradeFn) -> None:
    copy = fixtures_bed / "datasets" / "mine.yml"
    copy.parent.mkdir()
    copy.write_bytes(SHIPPED.read_bytes() + b"# a local copy\n")
    shutil.copytree(SHIPPED.parent / "hidden", copy.parent / "hidden")  # its hidden verifiers' patches
    graded = grade(fixtures_bed, "dv01_view_build", "--dataset", "datasets/mine.yml")
    assert graded.source["dataset_path"] == "datasets/mine.yml"
    assert graded.source["dataset_sha256"] == sha256_of(copy) != sha256_of(SHIPPED)
    assert graded.source["task_sha256"] == canonical_task_sha(copy, "dv01_view_build")
    # The same task in another file hashes the same: the task hash is of the task alone.
    assert graded.source["task_sha256"] == canonical_task_sha(SHIPPED, "dv01_view_build")
    positional = grade(fixtures_bed, "dv01_view_build", str(copy))
    assert positional.source["dataset_path"] == "datasets/mine.yml"


def test_grader_tree_matches_the_provisioned_fingerprint(provisioned_fixtures_bed: Path,
                                                         grade: GradeFn) -> None:
    recorded = list(baseline_dir(provisioned_fixtures_bed).glob("grader.*.sha256"))
    assert len(recorded) == 1
    graded = grade(provisioned_fixtures_bed, "cv01_footer_heading")
    assert graded.library["grader_tree_sha256"] == recorded[0].read_text(encoding="utf-8").strip()
    # The baseline's identity rides along: the set key that names the provisioned files.
    assert recorded[0].name == f"grader.{graded.library['fixture_set_key']}.sha256"
    assert '"fixtures":["canvas_home@1","kb_docs@3"]' in graded.library["fixture_set"]
    # Changing judged code (a recipe in the bed) changes the fingerprint.
    (provisioned_fixtures_bed / "recipes" / "extra.txt").write_text("x", encoding="utf-8")
    changed = grade(provisioned_fixtures_bed, "cv01_footer_heading")
    assert changed.library["grader_tree_sha256"] != graded.library["grader_tree_sha256"]


# What the envelope records of write_run_record's run.
RUN_DETAILS = {"apg_run_status": "attempted", "apg_run_started_at": "2026-07-18T10:15:00.000Z",
               "apg_run_finished_at": "2026-07-18T10:20:00.000Z", "apg_run_adapter_exit_code": "0"}


def raise_oserror(*_args: Any, **_kwargs: Any) -> Any:
    raise OSError("dataset volume went away")


@pytest.mark.parametrize("broken", ["portable_path", "task_sha256"])
def test_dataset_provenance_unresolved(fixtures_bed: Path, grade: GradeFn, write_run_record: Any,
                                       monkeypatch: pytest.MonkeyPatch, broken: str) -> None:
    normal = grade(fixtures_bed, "dv01_view_build")
    write_run_record(fixtures_bed, RUN_ID)
    if broken == "portable_path":
        monkeypatch.setattr(Dataset, "portable_path", raise_oserror)
    else:
        monkeypatch.setattr(Task, "sha256", property(raise_oserror))
    # A task that cannot be hashed cannot be matched with the run's: only --force grades it.
    force = ["--force"] if broken == "task_sha256" else []
    graded = grade(fixtures_bed, "dv01_view_build", f"--run={RUN_ID}", *force)
    assert graded.rc == 0
    assert "APG_GRADE_DATASET_UNRESOLVED dataset volume went away\n" in graded.err
    # A run recorded without a sandbox record says so ("unrecorded").
    assert graded.source == {"dataset_provenance": "unresolved: dataset volume went away",
                             "apg_run_id": RUN_ID, **RUN_DETAILS, "apg_sandbox": "unrecorded"}
    # The verdict does not change (the run adds only its agent), and the grader hashes are there.
    expected = normal.result["score_details"]
    expected["details"] = {**expected["details"], "agent_adapter": "nop"}
    assert graded.result["score_details"] == expected
    assert graded.library == normal.library


def test_grader_tree_unresolved_for_an_unknown_fixture(fixtures_bed: Path, grade: GradeFn,
                                                       tmp_path: Path) -> None:
    dataset = write_dataset(tmp_path / "ds.yml", """
    dataset: odd
    version: 1
    tasks:
    - id: t1
      prompt: p
      fixtures: [no_such_fixture]
      checks:
      - {id: views-on, type: module_enabled, module: views}
    """)
    graded = grade(fixtures_bed, "t1", "--dataset", str(dataset))
    assert graded.rc == 0
    assert "APG_GRADE_GRADER_UNRESOLVED grader tree: " in graded.err
    assert "grader_tree_sha256" not in graded.library
    assert graded.library["grader_tree"].startswith("unresolved: APG_FIXTURE_NOT_FOUND ")
    assert graded.library["grader_class_sha256"] == sha256_of(Path(checks_module.__file__))
    assert graded.result["score_details"]["score"] == 1.0
    assert "APG_GRADE_DATASET_UNRESOLVED" not in graded.err


def test_grader_tree_unresolved_when_the_set_fails_at_grade_time(
        fixtures_bed: Path, grade: GradeFn, monkeypatch: pytest.MonkeyPatch) -> None:
    normal = grade(fixtures_bed, "dv01_view_build")

    def no_set(*_args: Any, **_kwargs: Any) -> Any:
        raise ApgError("APG_FIXTURE_NOT_FOUND", "fixture kb_docs vanished")

    monkeypatch.setattr(grade_module, "load_set", no_set)
    graded = grade(fixtures_bed, "dv01_view_build")
    assert graded.rc == 0
    assert ("APG_GRADE_GRADER_UNRESOLVED grader tree: APG_FIXTURE_NOT_FOUND fixture kb_docs "
            "vanished\n") in graded.err
    assert graded.library == {
        "hash_algorithm": "sha256",
        "grader_class_file": normal.library["grader_class_file"],
        "grader_class_sha256": normal.library["grader_class_sha256"],
        "grader_tree": "unresolved: APG_FIXTURE_NOT_FOUND fixture kb_docs vanished",
    }
    assert graded.result["score_details"] == normal.result["score_details"]
    assert graded.source == normal.source


def test_grader_class_unresolved(fixtures_bed: Path, grade: GradeFn,
                                 monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(checks_module, "__file__", str(tmp_path / "gone" / "checks.py"))
    graded = grade(fixtures_bed, "dv01_view_build")
    assert graded.rc == 0
    assert "APG_GRADE_GRADER_UNRESOLVED grader class file: " in graded.err
    assert graded.library["grader_class"].startswith("unresolved: ")
    assert "grader_class_file" not in graded.library
    assert "grader_class_sha256" not in graded.library
    assert "grader_tree_sha256" in graded.library


# ---------------------------------------------------------------------------- --run


def test_run_provenance_model_and_grade_json(fixtures_bed: Path, grade: GradeFn,
                                             write_run_record: Any) -> None:
    run_dir = write_run_record(fixtures_bed, RUN_ID)
    graded = grade(fixtures_bed, "dv01_view_build", f"--run={RUN_ID}")
    assert graded.rc == 0
    assert graded.envelope is not None
    assert graded.source["apg_run_id"] == RUN_ID
    assert graded.envelope["evaluation_id"] == f"build_tasks/dv01_view_build/{MODEL}/{RUN_ID}"
    info = graded.envelope["model_info"]
    assert (info["id"], info["name"], info["developer"]) == (MODEL, "claude-sonnet-4", "anthropic")
    # every_eval_ever 0.3.0's closed sets: a vendor's service, weights not known to us.
    assert info["additional_details"] == {"deployment_type": "externally_managed",
                                          "model_availability": "unknown", "agent_adapter": "nop"}
    finished = str(calendar.timegm((2026, 7, 18, 10, 20, 0, 0, 0, 0)))
    assert graded.envelope["evaluation_timestamp"] == finished
    assert graded.result["evaluation_timestamp"] == finished
    saved = json.loads((run_dir / "grade.json").read_text(encoding="utf-8"))
    assert saved == graded.envelope
    # --run may come first, and a model argument equal to the recorded one is fine.
    again = grade(fixtures_bed, "--run", RUN_ID, "dv01_view_build", "build_tasks", MODEL)
    assert again.rc == 0
    assert again.envelope is not None
    assert json.loads((run_dir / "grade.json").read_text(encoding="utf-8")) == again.envelope
    assert again.envelope["retrieved_timestamp"] != saved["retrieved_timestamp"]


@pytest.fixture
def berlin_time() -> Iterator[None]:
    """Local time with daylight saving, so local-time parsing would be off by an hour."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Berlin"
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()


@pytest.mark.usefixtures("berlin_time")
@pytest.mark.parametrize(("finished_at", "expected"), [
    ("2026-07-18T10:20:00.000Z", (2026, 7, 18, 10, 20, 0)),
    ("2026-07-18T12:20:00+02:00", (2026, 7, 18, 10, 20, 0)),
    ("2026-07-18T10:20:00", (2026, 7, 18, 10, 20, 0)),  # no offset: UTC
    (None, (2026, 7, 18, 10, 15, 0)),  # not finished: the time in the run id
    ("yesterday", (2026, 7, 18, 10, 15, 0)),
])
def test_evaluation_timestamp_is_the_runs_utc_time(
        fixtures_bed: Path, grade: GradeFn, write_run_record: Any, finished_at: str | None,
        expected: tuple[int, ...]) -> None:
    write_run_record(fixtures_bed, RUN_ID, finished_at=finished_at)
    graded = grade(fixtures_bed, "dv01_view_build", f"--run={RUN_ID}")
    assert graded.envelope is not None
    assert graded.envelope["evaluation_timestamp"] == str(calendar.timegm((*expected, 0, 0, 0)))


def test_run_without_a_recorded_model(fixtures_bed: Path, grade: GradeFn,
                                      write_run_record: Any) -> None:
    write_run_record(fixtures_bed, RUN_ID, model=None)
    graded = grade(fixtures_bed, "dv01_view_build", "build_tasks", "openai/gpt-x", f"--run={RUN_ID}")
    assert graded.envelope is not None
    assert graded.envelope["model_info"]["id"] == "openai/gpt-x"
    bare = grade(fixtures_bed, "dv01_view_build", f"--run={RUN_ID}")
    assert bare.envelope is not None
    assert bare.envelope["model_info"]["id"] == "unknown/unknown"
    assert bare.envelope["model_info"]["additional_details"] == {"deployment_type": "unknown",
                                                                 "model_availability": "unknown",
                                                                 "agent_adapter": "nop"}


@pytest.mark.parametrize("argv", [
    ["dv01_view_build", f"--run={RUN_ID}", "build_tasks", "openai/gpt-x"],
    [f"--run={RUN_ID}", "dv01_view_build", "build_tasks", "openai/gpt-x"],
    ["dv01_view_build", "build_tasks", "--run", RUN_ID, "openai/gpt-x"],
], ids=["between-task-and-dataset", "first", "between-dataset-and-model"])
def test_run_option_anywhere_among_the_arguments(fixtures_bed: Path, grade: GradeFn,
                                                 write_run_record: Any, argv: list[str]) -> None:
    # The original system (and `ddev ai-eval-grade`, which passes arguments through) take --run
    # anywhere; every order grades the same run with the same dataset and model.
    write_run_record(fixtures_bed, RUN_ID, model=None)
    graded = grade(fixtures_bed, *argv)
    assert graded.envelope is not None
    assert graded.envelope["model_info"]["id"] == "openai/gpt-x"
    assert graded.envelope["model_info"]["additional_details"]["agent_adapter"] == "nop"


RunSetup = Callable[[Path, Any], str]


def malformed(bed: Path, write: Any) -> str:
    write(bed, RUN_ID)
    return "apg-run-../../etc"


def empty_id(bed: Path, write: Any) -> str:
    return ""


def missing_dir(bed: Path, write: Any) -> str:
    return RUN_ID


def bad_json(bed: Path, write: Any) -> str:
    run_dir = write(bed, RUN_ID)
    (run_dir / "run.json").write_text("{not json", encoding="utf-8")
    return RUN_ID


def run_json_is_a_directory(bed: Path, write: Any) -> str:
    run_dir = baseline_dir(bed) / "runs" / RUN_ID / "run.json"
    run_dir.mkdir(parents=True)
    return RUN_ID


def not_an_object(bed: Path, write: Any) -> str:
    run_dir = write(bed, RUN_ID)
    (run_dir / "run.json").write_text("[]", encoding="utf-8")
    return RUN_ID


def another_run(bed: Path, write: Any) -> str:
    run_dir = write(bed, RUN_ID)
    record = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    record["run_id"] = "apg-run-20260718T101500Z-ffffff"
    (run_dir / "run.json").write_text(json.dumps(record), encoding="utf-8")
    return RUN_ID


def recorded_run(bed: Path, write: Any) -> str:
    write(bed, RUN_ID)
    return RUN_ID


def another_task(bed: Path, write: Any) -> str:
    write(bed, RUN_ID, task_id="cv01_footer_heading")
    return RUN_ID


@pytest.mark.parametrize(("setup", "extra", "reason"), [
    (malformed, (), "is not a run id"),
    (empty_id, (), "is not a run id"),
    (missing_dir, (), "does not exist"),
    (bad_json, (), "is unreadable"),
    (run_json_is_a_directory, (), "is unreadable"),
    (not_an_object, (), "does not record run"),
    (another_run, (), "does not record run"),
    (another_task, (), "attempted task 'cv01_footer_heading', not 'dv01_view_build'"),
    (recorded_run, ("build_tasks", "openai/gpt-x"),
     "model 'openai/gpt-x' conflicts with the run's recorded model 'anthropic/claude-sonnet-4'"),
    (recorded_run, ("--model", "openai/gpt-x"), "conflicts with the run's recorded model"),
], ids=["malformed", "empty", "missing-dir", "bad-json", "run-json-dir", "not-object",
        "other-run", "other-task", "model-positional", "model-option"])
def test_run_invalid(fixtures_bed: Path, grade: GradeFn, write_run_record: Any,
                     setup: RunSetup, extra: tuple[str, ...], reason: str) -> None:
    run_id = setup(fixtures_bed, write_run_record)
    graded = grade(fixtures_bed, "dv01_view_build", *extra, f"--run={run_id}")
    assert graded.rc == 1
    assert graded.out == ""
    assert graded.err.startswith("APG_GRADE_RUN_INVALID ")
    assert reason in graded.err
    # No verdict: nothing saved, nothing stored.
    assert not list((baseline_dir(fixtures_bed) / "runs").glob("*/grade.json"))
    assert stored(fixtures_bed) == []


def verdict_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("APG_GRADE_VERDICT ")]


def test_the_verdict_line_names_the_first_failed_check(fixtures_bed: Path, grade: GradeFn,
                                                       site: Callable[..., None]) -> None:
    failed = grade(fixtures_bed, "cv01_footer_heading")
    first = next(c for c in failed.checks if not c["passed"])
    passed_count = sum(c["passed"] for c in failed.checks)
    assert verdict_lines(failed.err) == [
        f"APG_GRADE_VERDICT cv01_footer_heading agent=unrecorded score=0 checks "
        f"{passed_count}/{len(failed.checks)}, first failed: {first['id']} ({first['type']}): "
        f"expected {json.dumps(first['expected'], sort_keys=True)}, "
        f"found {json.dumps(first['found'], sort_keys=True)}"]
    assert passed_count < len(failed.checks)
    apply_reference(site, fixtures_bed, "cv01_footer_heading")
    passed = grade(fixtures_bed, "cv01_footer_heading")
    count = len(passed.checks)
    assert verdict_lines(passed.err) == [
        f"APG_GRADE_VERDICT cv01_footer_heading agent=unrecorded score=1 checks {count}/{count}"]


def test_the_envelope_and_the_verdict_line_name_the_agent(fixtures_bed: Path, grade: GradeFn,
                                                          write_run_record: Any) -> None:
    transcript = {"file": "transcript.json", "source": "claude-code.jsonl",
                  "model": MODEL, "cli_version": "2.1.3", "turns": 4, "tool_calls": 7,
                  "commands": 3, "permission_denials": 0,
                  "usage": {"input_tokens": 1200, "output_tokens": 300}, "cost_usd": 0.25,
                  "errors": 0, "completed": True}
    write_run_record(fixtures_bed, RUN_ID, adapter={"name": "claude-code"},
                     agent_transcript=transcript)
    graded = grade(fixtures_bed, "dv01_view_build", f"--run={RUN_ID}")
    assert graded.rc == 0
    assert graded.envelope is not None
    agent = {"agent_adapter": "claude-code", "agent_cli": "claude-code",
             "agent_cli_version": "2.1.3", "agent_model": MODEL}
    for details in (graded.envelope["model_info"]["additional_details"], graded.details):
        assert {key: details.get(key) for key in agent} == agent
    [line] = verdict_lines(graded.err)
    assert line.startswith("APG_GRADE_VERDICT dv01_view_build agent=claude-code score=0 checks ")
    # A transcript that could not be parsed names no CLI; the adapter is still named.
    write_run_record(fixtures_bed, RUN_ID, adapter={"name": "claude-code"},
                     agent_transcript={"error": "no JSON lines"})
    unparsed = grade(fixtures_bed, "dv01_view_build", f"--run={RUN_ID}")
    assert unparsed.envelope is not None
    details = unparsed.envelope["model_info"]["additional_details"]
    assert details["agent_adapter"] == "claude-code"
    assert "agent_cli" not in details


# ---------------------------------------------------------------------------- exit codes


def test_pass_and_fail_both_exit_zero(fixtures_bed: Path, grade: GradeFn,
                                      site: Callable[..., None]) -> None:
    failed = grade(fixtures_bed, "cv01_footer_heading")
    assert (failed.rc, failed.details["verdict"]) == (0, "fail")
    apply_reference(site, fixtures_bed, "cv01_footer_heading")
    passed = grade(fixtures_bed, "cv01_footer_heading")
    assert (passed.rc, passed.details["verdict"]) == (0, "pass")
    assert "APG_GRADE_NOT_" not in failed.err + passed.err


@pytest.mark.parametrize("checks", ["", "  checks: []\n"])
def test_task_without_checks_is_skipped(fixtures_bed: Path, grade: GradeFn, tmp_path: Path,
                                        checks: str) -> None:
    dataset = tmp_path / "ds.yml"
    dataset.write_text("dataset: skip\nversion: 1\ntasks:\n- id: t1\n  prompt: p\n"
                       f"  fixtures: [kb_docs]\n{checks}", encoding="utf-8")
    graded = grade(fixtures_bed, "t1", "--dataset", str(dataset))
    assert graded.rc == 3
    assert graded.out == ""
    assert graded.err == "APG_GRADE_SKIP task t1 has no checks; nothing was graded\n"
    assert stored(fixtures_bed) == []


def test_unknown_task_and_dataset(fixtures_bed: Path, grade: GradeFn) -> None:
    task = grade(fixtures_bed, "no_such_task")
    assert (task.rc, task.out) == (2, "")
    assert task.err.startswith("APG_TASK_UNKNOWN ")
    dataset = grade(fixtures_bed, "dv01_view_build", "no_such_dataset")
    assert (dataset.rc, dataset.out) == (2, "")
    assert dataset.err.startswith("APG_DATASET_NOT_FOUND ")
    option = grade(fixtures_bed, "dv01_view_build", "--dataset", "nowhere/ds.yml")
    assert (option.rc, option.out) == (2, "")
    assert option.err.startswith("APG_DATASET_NOT_FOUND ")


def test_dataset_from_the_environment(fixtures_bed: Path, grade: GradeFn, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = write_dataset(tmp_path / "env.yml", """
    dataset: from_env
    version: 2
    tasks:
    - id: t1
      prompt: p
      fixtures: [kb_docs]
      checks:
      - {type: module_enabled, module: views}
    """)
    monkeypatch.setenv("AI_PG_DATASET", str(dataset))
    graded = grade(fixtures_bed, "t1")
    assert graded.rc == 0
    assert graded.result["source_data"]["dataset_name"] == "from_env"
    assert graded.result["source_data"]["additional_details"]["dataset_version"] == "2"
    assert graded.source["dataset_path"] == "external:env.yml"  # outside the bed: its name only
    assert graded.source["dataset_sha256"] == sha256_of(dataset)
    shipped = grade(fixtures_bed, "dv01_view_build", "--dataset", "build_tasks")
    assert shipped.result["source_data"]["dataset_name"] == "build_tasks"


def grade_json_is_a_directory(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (run_dir / "grade.json").mkdir()


def read_only_run_dir(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    os.chmod(run_dir, 0o555)
    probe = run_dir / ".probe"
    try:
        probe.write_text("", encoding="utf-8")
    except PermissionError:
        return
    # Root ignores the mode; make the save meet the error a read-only directory gives.
    probe.unlink()
    def refuse(path: Path, data: Any) -> None:
        if path.parent == run_dir:
            raise PermissionError(13, "Permission denied", str(path))
        atomic_write_json(path, data)

    monkeypatch.setattr(records, "atomic_write_json", refuse)  # grade.json is written there


@pytest.mark.parametrize("spoil", [grade_json_is_a_directory, read_only_run_dir])
def test_grade_json_not_saved(fixtures_bed: Path, grade: GradeFn, write_run_record: Any,
                              monkeypatch: pytest.MonkeyPatch,
                              spoil: Callable[[Path, pytest.MonkeyPatch], None]) -> None:
    run_dir = write_run_record(fixtures_bed, RUN_ID)
    spoil(run_dir, monkeypatch)
    try:
        graded = grade(fixtures_bed, "dv01_view_build", f"--run={RUN_ID}")
    finally:
        os.chmod(run_dir, 0o755)
    assert graded.rc == 0
    assert graded.envelope is not None
    assert graded.source["apg_run_id"] == RUN_ID
    assert re.search(r"^APG_GRADE_NOT_SAVED .+$", graded.err, re.MULTILINE)
    assert not (run_dir / "grade.json").is_file()
    assert [p.name for p in run_dir.iterdir() if p.name.endswith(".new")] == []
    # Saving failed; storing did not.
    assert "APG_GRADE_NOT_STORED" not in graded.err
    assert len(stored(fixtures_bed)) == 1


def test_grade_json_is_replaced_by_a_regrade(fixtures_bed: Path, grade: GradeFn,
                                             write_run_record: Any,
                                             site: Callable[..., None]) -> None:
    run_dir = write_run_record(fixtures_bed, RUN_ID, task_id="cv01_footer_heading")
    first = grade(fixtures_bed, "cv01_footer_heading", f"--run={RUN_ID}")
    assert first.details["verdict"] == "fail"
    apply_reference(site, fixtures_bed, "cv01_footer_heading")
    second = grade(fixtures_bed, "cv01_footer_heading", f"--run={RUN_ID}")
    assert second.details["verdict"] == "pass"
    assert json.loads((run_dir / "grade.json").read_text(encoding="utf-8")) == second.envelope
    assert sorted(p.name for p in run_dir.iterdir()) == ["grade.json", "run.json"]


@pytest.mark.parametrize(("value", "expected"), [("", "ai_proving_ground"), ("Acme Evals", "Acme Evals")])
def test_organization_name(fixtures_bed: Path, grade: GradeFn, monkeypatch: pytest.MonkeyPatch,
                           value: str, expected: str) -> None:
    monkeypatch.setenv("AI_PG_ORGANIZATION", value)
    graded = grade(fixtures_bed, "dv01_view_build")
    assert graded.rc == 0
    assert graded.envelope is not None
    assert graded.envelope["source_metadata"]["source_organization_name"] == expected
