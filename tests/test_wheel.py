"""The built wheel works on its own: installed into a fresh venv outside the checkout, its `apg`
runs the demo loop (bed init, provision, doctor, run oracle and nop, grade, escrow and verify)
with nothing but the wheel's own files.

Building needs the build backend (setuptools, from the package index, as pip builds any
project); the test copies the checkout first so a stale ``build/`` never leaks into the wheel.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ai_proving_ground.paths import PROJECT_ROOT

pytestmark = pytest.mark.slow

CHECKOUT = Path(__file__).resolve().parents[1]
_NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", ".nox", "build", "dist", "*.egg-info",
                                     "__pycache__", ".*_cache", ".ai-proving-ground")
SHIPPED = ["recipes/apg_base/recipe.yml", "fixtures/fixture_kb_docs/recipe.yml",
           "fixtures/fixture_canvas_home/manifest/fragment.yml", "datasets/build_tasks.yml",
           "campaigns/example.yml", "ddev/agents/oracle", "ddev/agents/nop",
           "ddev/commands/host/ai-eval-verify", "ddev/install.yaml", "scripts/escrow_verify.py",
           "campaigns/views_skill.yml", "datasets/views_skill.yml",
           "skills/drupal-views-build/SKILL.md", "skills/drupal-content-edit/SKILL.md"]


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)


def _ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, f"{done.args} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if PROJECT_ROOT != CHECKOUT:
        pytest.skip("the tests run from an installed package, not a checkout: no source to build")
    root = tmp_path_factory.mktemp("wheel")
    source = root / "src"
    shutil.copytree(CHECKOUT, source, ignore=_NOT_SOURCE)
    _ok(_run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(root / "dist"),
              str(source)], cwd=root))
    [built] = (root / "dist").glob("ai_proving_ground-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding the wheel (and its declared dependencies) and nothing of the checkout."""
    target = tmp_path_factory.mktemp("venv") / "venv"
    _ok(_run([sys.executable, "-m", "venv", str(target)], cwd=target.parent))
    _ok(_run([str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)],
             cwd=target.parent))
    return target


def test_the_wheel_carries_every_shipped_file_and_the_license(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
        metadata = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    for relative in SHIPPED:
        assert f"ai_proving_ground/_data/{relative}" in names, relative
    for adapter in ("oracle", "nop", "manual"):
        assert modes[f"ai_proving_ground/_data/ddev/agents/{adapter}"] & 0o111, adapter
    assert "ai_proving_ground/py.typed" in names
    for template in ("base", "report", "attempt", "results"):
        assert f"ai_proving_ground/viewer/templates/{template}.html.j2" in names, template
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "License-Expression: GPL-2.0-or-later" in metadata
    assert "Requires-Dist: sh" not in metadata
    assert not any(n.startswith(("tests/", "ai_proving_ground/_data/tests")) for n in names)


def test_the_installed_apg_runs_the_demo_loop_outside_the_checkout(venv: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AI_PG_", "APG_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["AI_PG_ESCROW_DIR"] = str(tmp_path / "escrow")
    work = tmp_path / "work"
    work.mkdir()
    apg = str(venv / "bin" / "apg")

    where = _ok(_run([str(venv / "bin" / "python"), "-c",
                      "import ai_proving_ground.paths as p; print(p.PROJECT_ROOT)"], work, env))
    shipped_root = Path(where.stdout.strip())
    assert shipped_root.is_relative_to(venv.resolve()), shipped_root
    assert not shipped_root.is_relative_to(CHECKOUT)
    # The README's way to find the add-on: apg where, from the installed copy.
    addon = Path(_ok(_run([apg, "where", "ddev"], work, env)).stdout.strip())
    assert addon == shipped_root / "ddev" and (addon / "install.yaml").is_file()

    bed = work / "bed"
    _ok(_run([apg, "bed", "init", str(bed)], work, env))
    provisioned = _ok(_run([apg, "provision", "--approot", str(bed)], work, env))
    assert "APG_PROVISION" in provisioned.stderr
    doctor = _ok(_run([apg, "doctor", "--approot", str(bed)], work, env))
    assert json.loads(doctor.stdout)["healthy"] is True
    _ok(_run([apg, "escrow", "--approot", str(bed)], work, env))
    for agent, expected in (("oracle", 1.0), ("nop", 0.0)):
        _ok(_run([apg, "reset", "--approot", str(bed)], work, env))
        _ok(_run([apg, "verify", "--approot", str(bed)], work, env))
        ran = _ok(_run([apg, "run", "dv01_view_build", f"--agent={agent}", "--json",
                        "--approot", str(bed)], work, env))
        record = json.loads(ran.stdout)
        graded = _ok(_run([apg, "grade", "dv01_view_build", f"--run={record['run_id']}",
                           "--approot", str(bed)], work, env))
        envelope = json.loads(graded.stdout)
        assert envelope["evaluation_results"][0]["score_details"]["score"] == expected, agent
    assert not (work / ".ai-proving-ground").exists()
    # A campaign from the installed copy writes its report pages (the templates are in the wheel).
    campaign = work / "campaign"
    _ok(_run([apg, "campaign", "run", str(shipped_root / "campaigns" / "example.yml"),
              "--out", str(campaign)], work, env))
    viewed = _ok(_run([apg, "view", str(campaign), "--static"], work, env))
    assert viewed.stdout.strip() == str(campaign / "report.html")
    assert "Per arm, pooled over tasks" in (campaign / "report.html").read_text(encoding="utf-8")


def test_the_readmes_everyday_commands_work_from_the_installed_wheel(venv: Path,
                                                                     tmp_path: Path) -> None:
    """The README's commands beyond the loop, each as the README gives it, from an empty folder
    outside the checkout with only the installed wheel on PATH."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AI_PG_", "APG_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    work = tmp_path / "empty"
    work.mkdir()
    apg = str(venv / "bin" / "apg")
    bed = work / "bed"

    def ok(*argv: str) -> subprocess.CompletedProcess[str]:
        return _ok(_run([apg, *argv], work, env))

    assert ok("-V").stdout.strip() and "commands:" in ok("--help").stdout
    assert "dv01_view_build" in ok("tasks").stdout
    assert "oracle" in ok("agents").stdout and "kb_docs" in ok("fixtures").stdout
    assert "_apg_complete" in ok("completion", "bash").stdout
    ok("dataset", "validate", "build_tasks")
    assert "kb_docs" in ok("task", "card", "dv01_view_build").stdout
    ok("bed", "init", str(bed), "kb_docs")
    ok("provision", "--approot", str(bed), "kb_docs")
    assert json.loads(ok("hash", "--approot", str(bed), "kb_docs", "--json").stdout)
    assert json.loads(ok("doctor", "--approot", str(bed)).stdout)["healthy"] is True
    assert "views" in ok("site", "--approot", str(bed), "pm:list", "--format=csv",
                         "--fields=name").stdout
    ok("grade", "dv01_view_build", "--approot", str(bed), "build_tasks", "acme/m1")
    listed = json.loads(ok("results", "--approot", str(bed), "--json").stdout)
    assert [row["model"] for row in listed] == ["acme/m1"]
    exported = ok("results", "export", "--approot", str(bed), "--eee", str(work / "eee"))
    assert exported.stdout.strip().startswith(str(work / "eee" / "data" / "build_tasks" / "acme"))
    ok("campaign", "run", "example", "--dry-run")
    ok("campaign", "validate", "views_skill")  # its skills catalog is in the wheel too
    campaign = Path(ok("campaign", "run", "example").stdout.strip())
    assert campaign.is_relative_to(tmp_path / "data")  # the data directory, not the cwd
    assert "Campaign smoke" in ok("campaign", "report", str(campaign)).stdout
    ok("campaign", "report", str(campaign), "--gate", "oracle=0.3")
    assert sorted(p.name for p in work.iterdir()) == ["bed", "eee"]  # nothing else left here


def test_the_demo_closing_hint_runs_as_printed(venv: Path, tmp_path: Path) -> None:
    # As under `make demo`: nox runs the demo with its venv first on PATH, but the user's shell,
    # where the hint is pasted, does not have it there, so the hint must not say bare `apg`.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AI_PG_", "APG_", "PYTHON", "VIRTUAL_ENV"))}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not (Path(p) / "apg").exists())
    under_nox = {**env, "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}"}
    bed = tmp_path / "demo bed"  # a space: the hint quotes what it names
    demo = _ok(_run([str(venv / "bin" / "python"), "-m", "ai_proving_ground.demo", str(bed)],
                    tmp_path, under_nox))
    hint = re.search(r"try `([^`]+)`", demo.stdout)
    assert hint, demo.stdout
    assert hint.group(1).startswith(shlex.quote(str(venv / "bin" / "apg")))
    listed = _ok(_run(["bash", "-c", hint.group(1)], tmp_path, env))
    assert "node.type.kb_doc" in listed.stdout


def test_the_installed_apg_finds_the_shipped_campaign_by_name(venv: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AI_PG_", "APG_", "PYTHON", "VIRTUAL_ENV"))}
    dry = _ok(_run([str(venv / "bin" / "apg"), "campaign", "run", "example", "--dry-run", "--json"],
                   tmp_path, env))
    entries = [json.loads(line) for line in dry.stdout.splitlines()]
    assert [e["order"] for e in entries] == [0, 1, 2, 3]
    # The wheel's own adapters, not the checkout's.
    assert all(Path(e["command"][0]).is_relative_to(venv.resolve()) for e in entries), entries
