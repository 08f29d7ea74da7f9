"""Hidden verifiers: applied after the agent, kept from it, restored away, and not to be faked.

The unit tests drive :func:`run_hidden` on a provisioned bed; the campaign test runs a synthetic
dataset whose task ``hv01`` (the Views task) has weak public checks (the view exists, and a
visible check script in the bed passes) and a hidden verifier that adds its own row check.
"""

from __future__ import annotations

import hashlib
import json
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.baselines.tree import read_tree
from ai_proving_ground.campaigns.evidence import read_hidden
from ai_proving_ground.campaigns.records import CampaignFiles, read_setup
from ai_proving_ground.gitutil import git
from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.tasks import hidden
from ai_proving_ground.tasks.dataset import load_dataset
from ai_proving_ground.tasks.hidden import HiddenVerifier, run_hidden
from ai_proving_ground.tasks.model_diff import model_diff
from ai_proving_ground.tasks.run import site_command

FIXTURES = ["kb_docs", "canvas_home"]
# The 12 published billing articles by weight, as the shipped dv01 task lists them.
BILLING_ROWS = [str(row) for row in next(
    c for c in load_dataset(PROJECT_ROOT / "datasets" / "build_tasks.yml").task(
        "dv01_view_build").checks if c["id"] == "rows-in-order")["rows"]]
VISIBLE_CHECK = "web/modules/custom/kb_checks/check_view.py"
HIDDEN_CHECK = "web/modules/custom/hidden_check/check_rows.py"
# The visible check runs under the grader (no APG_SITE); the hidden one uses what it is given.
ROWS_CHECK = f"""\
import json, os, shlex, subprocess, sys
site = shlex.split(os.environ.get("APG_SITE") or "{sys.executable} -m ai_proving_ground.cli.main site")
done = subprocess.run([*site, "--approot", ".", "views:execute", "kb_billing", "page_1",
                       "--format=json"], capture_output=True, text=True)
rows = [row["uuid"] for row in json.loads(done.stdout)] if done.returncode == 0 else None
print("rows:", rows)
sys.exit(0 if rows == {BILLING_ROWS!r} else 1)
"""



def new_file_patch(relative: str, text: str) -> str:
    """A git patch that adds one file."""
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (f"diff --git a/{relative} b/{relative}\nnew file mode 100644\n--- /dev/null\n"
            f"+++ b/{relative}\n@@ -0,0 +1,{len(lines)} @@\n{body}")


def reference_view(section: str = "billing") -> list[str]:
    step = load_dataset(PROJECT_ROOT / "datasets" / "build_tasks.yml").task(
        "dv01_view_build").reference_steps[0]
    return [part.replace("{billing: billing}", f"{{{section}: {section}}}") for part in step]


def adapter(name: str, body: str) -> str:
    return (f"#!{sys.executable}\n## Description: test adapter {name}\n## Credentials: none\n"
            "import json, os, shlex, shutil, subprocess, sys\n"
            "approot = os.environ['APG_APPROOT']\n"
            "site = shlex.split(os.environ['APG_SITE'])\n" + textwrap.dedent(body))


ADAPTERS = {
    # Copies what it was handed, to show the hidden verifier is in none of it.
    "recorder": """\
        seen = os.path.join(os.environ['APG_RUN_DIR'], 'seen')
        os.mkdir(seen)
        shutil.copy(os.environ['APG_PROMPT_FILE'], os.path.join(seen, 'prompt.txt'))
        shutil.copy(os.environ['APG_REQUEST_FILE'], os.path.join(seen, 'request.json'))
        with open(os.path.join(seen, 'env.json'), 'w') as handle:
            json.dump(dict(os.environ), handle)
        """,
    # A wrong view, and the visible check made to pass: the public verdict is fooled.
    "cheat_visible": f"""\
        subprocess.run([*site, '--approot', approot, *{reference_view('accounts')!r}], check=True)
        with open(os.path.join(approot, {VISIBLE_CHECK!r}), 'w') as handle:
            handle.write('import sys\\nsys.exit(0)\\n')
        """,
    # A wrong view, and a stand-in where it guesses the hidden check will go.
    "cheat_preempt": f"""\
        subprocess.run([*site, '--approot', approot, *{reference_view('accounts')!r}], check=True)
        os.makedirs(os.path.join(approot, {str(Path(HIDDEN_CHECK).parent)!r}))
        with open(os.path.join(approot, {HIDDEN_CHECK!r}), 'w') as handle:
            handle.write('import sys\\nsys.exit(0)\\n')
        """,
}


@pytest.fixture(scope="module")
def template(fixtures_template_bed: Path, tmp_path_factory: pytest.TempPathFactory,
             copy_template: Callable[[Path, Path], Path]) -> Path:
    """A provisioned bed with a visible check script (committed) and the test adapters."""
    bed = copy_template(fixtures_template_bed, tmp_path_factory.mktemp("hidden_template") / "bed")
    visible = bed / VISIBLE_CHECK
    visible.parent.mkdir(parents=True)
    visible.write_text(ROWS_CHECK, encoding="utf-8")
    git(bed, ["add", "-A"])
    git(bed, ["commit", "--quiet", "-m", "a visible check"])
    agents = bed / ".ddev" / "agents"
    agents.mkdir(parents=True)
    for name, body in ADAPTERS.items():
        (agents / name).write_text(adapter(name, body), encoding="utf-8")
        (agents / name).chmod(0o755)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("AI_PG_BASELINE_DIR", raising=False)
        provision(bed, FIXTURES, EmbeddedSite(bed))
    return bed


@pytest.fixture
def bed(template: Path, tmp_path: Path, copy_template: Callable[[Path, Path], Path]) -> Path:
    return copy_template(template, tmp_path / "bed")


def tag_of(bed: Path) -> str:
    return git(bed, ["tag", "-l", "apg-baseline-*"]).stdout.decode().strip()


def verifier(tmp_path: Path, patch: str | None, *commands: list[str],
             timeout_s: float = 30.0) -> HiddenVerifier:
    path = None
    if patch is not None:
        path = tmp_path / "data" / "hidden.patch"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(patch, encoding="utf-8")
    return HiddenVerifier(patch=path, patch_ref="hidden.patch" if patch else None,
                          commands=tuple(tuple(c) for c in commands), timeout_s=timeout_s)


def env() -> dict[str, str]:
    import os

    return dict(os.environ)


# ---------------------------------------------------------------------------- run_hidden


def test_the_bed_returns_to_the_model_final_state(bed: Path, tmp_path: Path) -> None:
    site = EmbeddedSite(bed)
    subprocess_site = [*site_command(bed), "--approot", str(bed)]
    import subprocess

    subprocess.run([*subprocess_site, *reference_view()], check=True, capture_output=True)
    (bed / "web/modules/custom/mine").mkdir(parents=True)
    (bed / "web/modules/custom/mine/notes.txt").write_text("the model's own file\n", "utf-8")
    before_diff = model_diff(bed, read_tree(bed, tag_of(bed)))
    before_config = site.all_config()
    patch = (new_file_patch(HIDDEN_CHECK, ROWS_CHECK)
             + new_file_patch("tests/hidden/README", "outside the tracked paths\n"))
    # The second command changes the database and the tracked config/sync: both must be undone.
    outcome = run_hidden(bed, verifier(tmp_path, patch, [sys.executable, HIDDEN_CHECK],
                                       [*subprocess_site, "config:set", "system.site", "name",
                                        "Overlaid"],
                                       [*subprocess_site, "config:export", "-y"]),
                         env(), tmp_path / "scratch", site_command(bed))
    assert outcome.status == "pass", outcome.checks
    assert [(c["id"], c["passed"]) for c in outcome.checks] == [
        ("patch", True), ("command-1", True), ("command-2", True), ("command-3", True)]
    assert outcome.warnings == []
    assert model_diff(bed, read_tree(bed, tag_of(bed))) == before_diff
    assert b"notes.txt" in before_diff and b"hidden_check" not in before_diff
    assert not (bed / "web/modules/custom/hidden_check").exists()
    assert not (bed / "tests").exists()
    assert EmbeddedSite(bed).all_config() == before_config
    assert not (tmp_path / "scratch" / "snapshot").exists()


ABSENT = ("diff --git a/web/modules/custom/absent.py b/web/modules/custom/absent.py\n"
          "--- a/web/modules/custom/absent.py\n+++ b/web/modules/custom/absent.py\n"
          "@@ -1 +1 @@\n-old\n+new\n")
# Refused in-process, with its reason: git would have needed the repository's objects.
BINARY = ("diff --git a/web/modules/custom/x.bin b/web/modules/custom/x.bin\nnew file mode 100644\n"
          "index 0000000..1234567\nGIT binary patch\nliteral 3\nKcmZQzWB>pO00031\n\nliteral 0\n"
          "HcmV?d00001\n\n")


@pytest.mark.parametrize("patch, exit_code, reason", [
    (ABSENT, 1, "the patch does not apply: web/modules/custom/absent.py: No such file"),
    (BINARY, 1, "the patch does not apply: web/modules/custom/x.bin: binary patches are not "
                "supported"),
    # One that cannot be read fails before anything is snapshotted or run.
    ("@@ -1 +1 @@\n-a\n+b\n", None, "the patch cannot be read: patch fragment without header"),
], ids=["missing-file", "binary", "unreadable"])
def test_a_patch_that_does_not_apply_fails_says_why_and_runs_nothing(
        bed: Path, tmp_path: Path, patch: str, exit_code: int | None, reason: str) -> None:
    marker = tmp_path / "ran"
    outcome = run_hidden(bed, verifier(tmp_path, patch, ["touch", str(marker)]), env(),
                         tmp_path / "scratch", site_command(bed))
    assert outcome.status == "fail"
    [check] = outcome.checks
    assert (check["id"], check["kind"], check["passed"]) == ("patch", "patch", False)
    assert check["exit_code"] == exit_code and check["stderr_tail"].startswith(reason)
    assert check["sha256"] == hashlib.sha256(patch.encode()).hexdigest()  # the bytes it read
    assert not marker.exists() and not (bed / "web/modules/custom/x.bin").exists()


def test_what_the_verifier_leaves_outside_the_snapshot_is_a_residue_warning(
        bed: Path, tmp_path: Path) -> None:
    """Stricter than git status: a file the bed's .gitignore hides is a leak all the same."""
    leak = "web/sites/default/files/leak.txt"
    assert "/web/sites/default/files/" in (bed / ".gitignore").read_text("utf-8")
    script = (f"import pathlib; pathlib.Path({leak!r}).write_text('the answer'); "
              "p = pathlib.Path('.gitignore'); p.write_text(p.read_text() + '#\\n'); "
              "pathlib.Path('web/modules/custom/inside.txt').write_text('restored away')")
    outcome = run_hidden(bed, verifier(tmp_path, None, [sys.executable, "-c", script]), env(),
                         tmp_path / "scratch", site_command(bed))
    assert outcome.status == "pass"  # the warning is beside the verdict, never instead of it
    [warning] = outcome.warnings
    assert warning == ("APG_CAMPAIGN_HIDDEN_RESIDUE 2 path(s) outside what the snapshot restores "
                       f"differ from before the hidden verifier: added {leak}; changed .gitignore")
    assert not (bed / "web/modules/custom/inside.txt").exists()
    many = "import pathlib\nfor n in range(7): pathlib.Path(f'left-{n}').write_text('x')"
    outcome = run_hidden(bed, verifier(tmp_path, None, [sys.executable, "-c", many]), env(),
                         tmp_path / "scratch", site_command(bed))
    [warning] = outcome.warnings
    assert warning.endswith("added left-0, left-1, left-2, left-3, left-4 and 2 more")


def test_commands_that_cannot_start(bed: Path, tmp_path: Path) -> None:
    # Not on PATH: the verifier is broken, an infrastructure error.
    broken = run_hidden(bed, verifier(tmp_path, None, ["apg-no-such-program"]), env(),
                        tmp_path / "scratch", site_command(bed))
    assert broken.status == "error"
    assert broken.checks[0]["error"].startswith("could not start apg-no-such-program")
    # A path into the bed: the workspace is the model's, so it is the model's failure.
    missing = run_hidden(bed, verifier(tmp_path, None, ["./web/modules/custom/gone.sh"]), env(),
                         tmp_path / "scratch", site_command(bed))
    assert missing.status == "fail"
    assert missing.checks[0]["error"] is None
    assert "could not start" in missing.checks[0]["stderr_tail"]


def test_a_command_that_hangs_times_out_and_fails(bed: Path, tmp_path: Path) -> None:
    outcome = run_hidden(bed, verifier(tmp_path, None, ["sleep", "30"], timeout_s=0.3), env(),
                         tmp_path / "scratch", site_command(bed))
    assert outcome.status == "fail"
    assert outcome.checks[0]["timed_out"] is True


def test_resolving_a_verifier_splits_command_strings(tmp_path: Path) -> None:
    data = tmp_path / "tasks.yml"
    (tmp_path / "hv.diff").write_text("", encoding="utf-8")
    data.write_text(json.dumps({"dataset": "unit", "version": 1, "tasks": [{
        "id": "t1", "prompt": "p", "fixtures": [], "checks": [{"type": "module_enabled",
                                                              "module": "node"}],
        "hidden_verifier": {"patch": "hv.diff", "commands": [["true"], "make 'check all'"],
                            "timeout_s": 5}}]}))
    dataset = load_dataset(data)
    resolved = hidden.resolve_verifier(dataset, dataset.task("t1"))
    assert resolved == HiddenVerifier(patch=(tmp_path / "hv.diff").resolve(), patch_ref="hv.diff",
                                      commands=(("true",), ("make", "check all")), timeout_s=5.0)


# ---------------------------------------------------------------------------- in a campaign


def write_dataset(directory: Path) -> Path:
    dv01 = load_dataset(PROJECT_ROOT / "datasets" / "build_tasks.yml").task("dv01_view_build")
    (directory / "hidden").mkdir(parents=True)
    (directory / "hidden" / "hv01.patch").write_text(new_file_patch(HIDDEN_CHECK, ROWS_CHECK),
                                                     encoding="utf-8")
    task = {
        "id": "hv01", "prompt": dv01.prompt, "fixtures": FIXTURES,
        "checks": [{"id": "view-exists", "type": "config_exists", "name": "views.view.kb_billing"},
                   {"id": "visible-check", "type": "command",
                    "argv": [sys.executable, VISIBLE_CHECK]}],
        "reference_solution": {"steps": dv01.reference_steps},
        "hidden_verifier": {"patch": "hidden/hv01.patch",
                            "commands": [[sys.executable, HIDDEN_CHECK]], "timeout_s": 30},
    }
    path = directory / "tasks.yml"
    path.write_text(json.dumps({"dataset": "hidden_unit", "version": 1, "tasks": [task]}))
    return path


def test_a_campaign_with_a_hidden_verifier(apg: Any, tmp_path: Path, template: Path) -> None:
    dataset = write_dataset(tmp_path / "data")
    spec = tmp_path / "spec.yml"
    spec.write_text(json.dumps({
        "name": "hidden", "dataset": str(dataset), "tasks": ["hv01"],
        "arms": {"a": {}, "b": {"agent_env": {"APG_ARM_FLAVOUR": "b"}}},
        "agents": ["oracle", "nop", "cheat_visible", "cheat_preempt", "recorder"],
        "repeats": 1, "seed": 11, "jobs": 2, "bed": str(template)}), encoding="utf-8")
    out = tmp_path / "out"
    result = apg("campaign", "run", str(spec), "--out", str(out), "--beds", str(tmp_path / "beds"),
                 "--keep-beds")  # the beds are read afterwards
    assert result.rc == 0, result.err
    records = [json.loads(p.read_text()) for p in sorted(out.glob("runs/*/attempt.json"))]
    assert len(records) == 10

    def summary(record: dict[str, Any]) -> tuple[Any, ...]:
        checks = [(c["id"], c["passed"]) for c in record["hidden"]["checks"]]
        return record["outcome"], record["score"], record["hidden"]["status"], checks

    patch_ok, ran_ok, ran_failed = ("patch", True), ("command-1", True), ("command-1", False)
    expected = {
        "oracle": ("pass", 1.0, "pass", [patch_ok, ran_ok]),
        "nop": ("fail", 0.0, "fail", [patch_ok, ran_failed]),
        # The visible check was made to pass; the hidden one, applied afterwards, was not fooled.
        "cheat_visible": ("fail", 1.0, "fail", [patch_ok, ran_failed]),
        # The patch meets the agent's stand-in and does not apply; its command never runs.
        "cheat_preempt": ("fail", 0.0, "fail", [("patch", False)]),
        "recorder": ("fail", 0.0, "fail", [patch_ok, ran_failed]),
    }
    for record in records:
        assert summary(record) == expected[record["agent"]], record["agent"]
        directory = out / "runs" / f"{record['order']:04d}"
        details = read_hidden(directory / "hidden.json")
        assert details.restore_warnings == []
        assert details.patch == "hidden/hv01.patch"
        diff = (directory / "model.diff").read_bytes()
        # The model's diff is the model's: never the overlay (except what an agent wrote itself).
        assert (b"hidden_check" in diff) == (record["agent"] == "cheat_preempt")
        assert (b"kb_checks/check_view.py" in diff) == (record["agent"] == "cheat_visible")
        if record["agent"] == "recorder":
            check_nothing_leaked(directory / "run" / "work" / "seen", record["arm"])
    check_beds_are_model_final(out, records)


def check_nothing_leaked(seen: Path, arm: str) -> None:
    """Neither the prompt, nor the request, nor the environment names the hidden verifier."""
    # The project's own paths are not the verifier's (a checkout may well sit in a "hidden/").
    handed = {name: (seen / name).read_text("utf-8").replace(str(PROJECT_ROOT), "<project>")
              for name in ("prompt.txt", "request.json", "env.json")}
    for name, text in handed.items():
        for secret in ("hv01.patch", "hidden/", "check_rows", "hidden_check", "hidden_verifier"):
            assert secret not in text, (name, secret)
    environment = json.loads(handed["env.json"])
    assert environment.get("APG_ARM_FLAVOUR") == ("b" if arm == "b" else None)


def check_beds_are_model_final(out: Path, records: list[dict[str, Any]]) -> None:
    """Each bed ends as the last attempt on it left it: its model.diff, no overlay."""
    setup = read_setup(CampaignFiles(out)).as_json()
    last: dict[str, int] = {}
    for record in records:
        approot = json.loads((out / "runs" / f"{record['order']:04d}" / "run.json").read_text())
        last[approot["approot"]] = record["order"]
    for job in setup["jobs"]:
        diff = model_diff(Path(job["bed"]), read_tree(Path(job["bed"]), setup["tag"]))
        assert diff == (out / "runs" / f"{last[job['bed']]:04d}" / "model.diff").read_bytes()
