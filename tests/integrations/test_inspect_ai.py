"""The Inspect AI integration, driven by Inspect's mockllm model (no API is called).

A scripted model applies the reference solution through the ``site`` tool and scores 1; a model
that only talks scores 0 and the explanation names the failing check; two samples running at
once get different beds; the tool refuses ``--approot`` and paths outside the bed; samples hold
no checks or solutions; the envelope in the score metadata meets the project's schema.
"""

from __future__ import annotations

import functools
import json
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import ChatMessage, ChatMessageTool, ModelOutput, ModelUsage
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolError

import eee_official
from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.bed import clone_bed, init_bed
from ai_proving_ground.errors import ApgError
from ai_proving_ground.integrations.inspect_ai import (
    STORE_APPROOT,
    apg_dataset,
    apg_task,
    site_tool,
)
from ai_proving_ground.integrations.inspect_beds import SampleBeds
from ai_proving_ground.paths import project_dir
from ai_proving_ground.schemas import schema_errors
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks.dataset import load_dataset

DATASET = project_dir("datasets") / "build_tasks.yml"
MODEL = "mockllm/model"
FIXTURES = ["kb_docs", "canvas_home"]


def reference_steps(task_id: str) -> list[list[str]]:
    """The task's reference solution, read from the shipped dataset (never from a sample)."""
    steps = load_dataset(DATASET).task(task_id).reference_steps
    assert steps, f"{task_id} has no reference solution"
    return steps


def with_usage(output: ModelOutput) -> ModelOutput:
    # mockllm counts tokens with tiktoken when an output has no usage, which downloads its
    # encoding: a fixed usage keeps the tests offline.
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def site_call(command: Sequence[str] | str) -> ModelOutput:
    return with_usage(ModelOutput.for_tool_call(MODEL, "site", {"command": command}))


def answer(text: str) -> ModelOutput:
    return with_usage(ModelOutput.from_content(MODEL, text))


def run_eval(log_dir: Path, outputs: Any, **task_args: Any) -> EvalLog:
    max_samples = task_args.pop("max_samples", None)
    [log] = inspect_eval(apg_task(dataset=str(DATASET), **task_args), model=MODEL,
                         model_args={"custom_outputs": outputs}, log_dir=str(log_dir),
                         display="none", max_samples=max_samples)
    assert log.status == "success", log.error
    assert log.samples is not None
    return log


def only_sample(log: EvalLog) -> EvalSample:
    assert log.samples is not None and len(log.samples) == 1
    return log.samples[0]


def the_score(sample: EvalSample) -> Score:
    assert sample.scores is not None and len(sample.scores) == 1, sample.scores
    return next(iter(sample.scores.values()))


def tool_messages(sample: EvalSample) -> list[ChatMessageTool]:
    return [m for m in sample.messages if isinstance(m, ChatMessageTool)]


def site_name(approot: Path) -> Any:
    return EmbeddedSite(approot).config_get("system.site")["name"]


@pytest.fixture(scope="module")
def reference_log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """dv01 solved by a model that runs the reference steps; the template is made by the task."""
    outputs = [site_call(step) for step in reference_steps("dv01_view_build")]
    outputs.append(answer("The kb_billing view is built."))
    return run_eval(tmp_path_factory.mktemp("reference"), outputs, tasks=["dv01_view_build"])


@pytest.fixture(scope="module")
def talk_log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    """dv01 attempted by a model that only answers in text."""
    outputs = [answer("I created the kb_billing view with a page at kb/billing.")]
    return run_eval(tmp_path_factory.mktemp("talk"), outputs, tasks=["dv01_view_build"])


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A provisioned bed for kb_docs + canvas_home, handed to the task as its template."""
    bed = tmp_path_factory.mktemp("template") / "bed"
    init_bed(bed, FIXTURES)
    provision(bed, list(FIXTURES), EmbeddedSite(bed))
    return bed


@pytest.fixture
def bed(template: Path, tmp_path: Path) -> Path:
    """A copy of the template for tests that run the tool directly."""
    copy = tmp_path / "bed"
    clone_bed(template, copy)
    return copy


# ---------------------------------------------------------------------------- scores


def test_reference_solution_through_the_site_tool_scores_one(reference_log: EvalLog) -> None:
    sample = only_sample(reference_log)
    results = tool_messages(sample)
    assert len(results) == len(reference_steps("dv01_view_build"))
    assert all(m.error is None and m.text.endswith("[exit code 0]") for m in results), results
    assert "Saved views.view.kb_billing." in results[0].text
    score = the_score(sample)
    assert score.value == 1.0
    assert score.answer is None
    assert score.explanation is not None
    assert score.explanation.splitlines() == [f"all {len(score.metadata['checks'])} checks passed:", *(
        f"- {check['id']} ({check['type']}): passed" for check in score.metadata["checks"])]
    assert all(check["passed"] for check in score.metadata["checks"])
    assert reference_log.results is not None
    metrics = reference_log.results.scores[0].metrics
    assert metrics["accuracy"].value == 1.0
    assert "stderr" in metrics


def test_a_model_that_only_talks_scores_zero_and_the_failing_check_is_named(talk_log: EvalLog) -> None:
    sample = only_sample(talk_log)
    assert tool_messages(sample) == []
    score = the_score(sample)
    assert score.value == 0.0
    assert score.explanation is not None
    assert "- rows-in-order (view_rows): expected [" in score.explanation
    assert "\n- rest-unchanged (site_unchanged): passed" in score.explanation  # every check has its line
    checks = {c["id"]: c for c in score.metadata["checks"]}
    assert checks["rows-in-order"]["passed"] is False
    assert checks["rest-unchanged"]["passed"] is True
    assert talk_log.results is not None
    assert talk_log.results.scores[0].metrics["accuracy"].value == 0.0


@pytest.mark.parametrize("log_name", ["reference_log", "talk_log"])
def test_the_envelope_in_the_score_meets_the_schema(log_name: str, request: pytest.FixtureRequest) -> None:
    log: EvalLog = request.getfixturevalue(log_name)
    score = the_score(only_sample(log))
    assert score.metadata is not None
    envelope = score.metadata["envelope"]
    assert schema_errors(envelope, "envelope") == []
    eee_official.check(envelope)  # the published package too, in the eee nox session
    result = envelope["evaluation_results"][0]
    assert result["score_details"]["score"] == score.value
    assert envelope["model_info"]["id"] == MODEL
    details = envelope["source_metadata"]["additional_details"]
    metadata = only_sample(log).metadata
    assert details["dataset_sha256"] == metadata["dataset_sha256"]
    assert details["task_sha256"] == metadata["task_sha256"]


def test_graded_beds_are_removed_and_nothing_is_stored(reference_log: EvalLog) -> None:
    sample = only_sample(reference_log)
    approot = Path(sample.store[STORE_APPROOT])
    assert the_score(sample).metadata["approot"] == str(approot)
    assert not approot.exists()


# ---------------------------------------------------------------------------- beds


def parallel_model() -> Callable[..., Any]:
    """Each sample writes its own site name, waits until the other has written too, then reads
    the name back: a run that is not parallel times out, a shared bed reads the other's name."""
    written: set[str] = set()
    events: list[anyio.Event] = []

    async def outputs(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        prompt = next(m.text for m in messages if m.role == "user")
        tag = "footer" if "footer" in prompt else "front"
        calls = sum(1 for m in messages if m.role == "tool")
        if calls == 0:
            return site_call(["config:set", "system.site", "name", f"bed of {tag}"])
        if calls == 1:
            if not events:
                events.append(anyio.Event())
            written.add(tag)
            if len(written) == 2:
                events[0].set()
            with anyio.fail_after(20):
                await events[0].wait()
            return site_call("config:get system.site name")
        return answer("done")

    return outputs


def test_parallel_samples_get_their_own_beds(template: Path, tmp_path: Path) -> None:
    # Two tasks of the template's set (kb_docs + canvas_home).
    log = run_eval(tmp_path, parallel_model(), tasks=["cv01_footer_heading", "cv02_front_page_card"],
                   template=template, max_samples=2)
    assert log.samples is not None and len(log.samples) == 2
    approots = set()
    for sample in log.samples:
        tag = "footer" if sample.id == "cv01_footer_heading" else "front"
        other = "front" if tag == "footer" else "footer"
        results = tool_messages(sample)
        assert [m.error for m in results] == [None, None]
        assert f"bed of {tag}" in results[1].text
        assert f"bed of {other}" not in results[1].text
        approots.add(sample.store[STORE_APPROOT])
        assert the_score(sample).value == 0.0
    assert len(approots) == 2
    assert all(not Path(a).exists() for a in approots)  # removed once scored
    assert site_name(template) == "AI proving ground"  # the template is never worked on


def test_kept_beds_hold_the_samples_work(template: Path, tmp_path: Path) -> None:
    work = tmp_path / "beds"
    log = run_eval(tmp_path / "logs", [site_call(["config:set", "system.site", "name", "kept"]),
                                       answer("done")],
                   tasks=["cv01_footer_heading"], template=template, work_dir=work)
    approot = Path(only_sample(log).store[STORE_APPROOT])
    assert approot.is_relative_to(work)
    assert site_name(approot) == "kept"


# ---------------------------------------------------------------------------- the site tool


def run_tool(approot: Path, command: Sequence[str] | str) -> str:
    result: str = anyio.run(functools.partial(site_tool(approot=str(approot)), command=command))
    return result


def test_the_tool_refuses_approot_inside_an_eval(template: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    clone_bed(template, other)
    outputs = [site_call(["config:set", "system.site", "name", "escaped", "--approot", str(other)]),
               answer("done")]
    log = run_eval(tmp_path / "logs", outputs, tasks=["cv01_footer_heading"], template=template)
    [result] = tool_messages(only_sample(log))
    assert result.error is not None
    assert result.error.message.startswith("APG_SITE_TOOL_REFUSED")
    assert "--approot" in result.error.message
    assert site_name(other) == "AI proving ground"


@pytest.mark.parametrize("command", [
    ["config:set", "system.site", "name", "escaped", "--approot", "{other}"],
    ["config:set", "system.site", "name", "escaped", "--approot={other}"],
    ["--appr", "{other}", "config:set", "system.site", "name", "escaped"],
    "config:set system.site name escaped --app {other}",
    ["config:export", "--destination", "{outside}"],
    ["config:export", "--dest=../outside"],
    ["config:import", "--source", "{other}/config/sync"],
    ["recipe", "{other}/recipes/apg_base"],
    ["sql:query", "ATTACH DATABASE '{outside}.sqlite' AS x"],
    ["sql:query", "vacuum into '{outside}.sqlite'"],
])
def test_the_tool_refuses_what_reaches_outside_the_bed(command: list[str] | str, bed: Path,
                                                       template: Path, tmp_path: Path) -> None:
    other, outside = tmp_path / "other", tmp_path / "outside"
    clone_bed(template, other)
    values = {"other": shlex.quote(str(other)) if isinstance(command, str) else str(other),
              "outside": str(outside)}
    filled = (command.format(**values) if isinstance(command, str)
              else [part.format(**values) for part in command])
    with pytest.raises(ToolError, match=r"^APG_SITE_TOOL_REFUSED"):
        run_tool(bed, filled)
    assert site_name(other) == "AI proving ground"
    assert not outside.exists() and not Path(f"{outside}.sqlite").exists()


# One argument longer than Linux's per-argument limit (MAX_ARG_STRLEN, 128 KiB): exec fails E2BIG.
TOO_LONG = "x" * 200_000


@pytest.mark.parametrize(("command", "reason"), [
    (["config:set", "system.site", "name", TOO_LONG], "Argument list too long"),
    (["config:get", "system.site\x00name"], "null byte"),
    (["config:export", "--destination=~no_such_user_here/x"], "home directory"),
])
def test_a_command_that_cannot_start_is_a_refusal_the_model_reads(
        bed: Path, command: list[str], reason: str) -> None:
    with pytest.raises(ToolError, match=r"^APG_SITE_TOOL_FAILED ") as caught:
        run_tool(bed, command)
    assert reason in str(caught.value)
    assert site_name(bed) == "AI proving ground"


def test_an_argument_list_too_long_inside_an_eval_reaches_the_model(template: Path,
                                                                      tmp_path: Path) -> None:
    outputs = [site_call(["config:set", "system.site", "name", TOO_LONG]), answer("done")]
    log = run_eval(tmp_path / "logs", outputs, tasks=["cv01_footer_heading"], template=template)
    sample = only_sample(log)
    assert sample.error is None  # the sample went on: the model read the refusal
    [result] = tool_messages(sample)
    assert result.error is not None
    assert result.error.message.startswith("APG_SITE_TOOL_FAILED")
    assert "Argument list too long" in result.error.message


def test_the_tool_runs_commands_inside_the_bed(bed: Path) -> None:
    assert run_tool(bed, ["status", "--field=site-name"]) == "AI proving ground\n[exit code 0]"
    exported = run_tool(bed, ["config:export", "--destination", "config/sync"])
    assert exported.endswith("[exit code 0]") and "Config exported to config/sync" in exported
    refused = run_tool(bed, "config:get no.such.config")
    assert refused == "APG_CONFIG_MISSING config no.such.config does not exist\n[exit code 1]"
    assert run_tool(bed, "sql:query 'SELECT count(*) FROM config WHERE name = \"system.site\"'") \
        == "1\n[exit code 0]"


# ---------------------------------------------------------------------------- samples


def test_samples_hold_no_checks_or_solutions(talk_log: EvalLog) -> None:
    dataset = load_dataset(DATASET)
    secrets = [json.dumps(part)[1:-1] for task in dataset.tasks
               for step in task.reference_steps for part in step if len(part) > 40]
    secrets += [json.dumps(row)[1:-1] for task in dataset.tasks for check in task.checks
                for row in check.get("rows", [])]
    assert len(secrets) >= 6  # the three reference payloads and the three expected rows
    samples = list(apg_dataset(str(DATASET)))
    assert [s.id for s in samples] == [t.id for t in dataset.tasks]
    logged = only_sample(talk_log)
    fields = [json.dumps(s.model_dump(), ensure_ascii=False) for s in samples]
    fields.append(json.dumps({"input": logged.input, "target": logged.target,
                              "metadata": logged.metadata}, ensure_ascii=False))
    for text in fields:
        for secret in secrets:
            assert secret not in text
        for word in ("reference_solution", "hidden_verifier", "checks", "rows-in-order"):
            assert word not in text
    assert samples[0].metadata is not None
    assert set(samples[0].metadata) == {"task_id", "dataset", "dataset_path", "dataset_sha256",
                                        "task_sha256", "fixtures"}
    assert samples[0].input == dataset.tasks[0].prompt


def test_a_template_without_the_samples_set_is_refused_with_the_command_that_captures_it(
        template: Path, tmp_path: Path) -> None:
    """The template holds kb_docs + canvas_home; a kb_docs-only sample (as dv01 is) is refused
    before a copy is made, naming the template, not a per-sample copy, in the command."""
    work = tmp_path / "work"
    beds = SampleBeds(template, work, Settings())
    with pytest.raises(ApgError) as refused:
        beds.prepare("only-kb", ("kb_docs",))
    assert refused.value.token == "APG_INSPECT_TEMPLATE_INVALID" and refused.value.exit_code == 2
    assert f"template {template} cannot serve a sample of fixtures kb_docs" in refused.value.message
    assert f"apg provision --approot {template} kb_docs" in refused.value.message
    assert not list(work.glob("*/beds/*"))
    bed, _warnings = beds.prepare("both", ("kb_docs", "canvas_home"))  # its own set still serves
    assert bed.parent.parent.parent == work and (bed / ".git").exists()
