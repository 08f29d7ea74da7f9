"""Issue 19: campaigns run on DDEV beds, through the stub ``ddev``, with the embedded rules.

One job per DDEV project the spec's ``ddev_beds`` names, used in place; verify before and after
every attempt by the escrowed verifier's own copy (``python3 -I -S escrow_verify.pyc BED SET``,
its bytecode compiled from the set's copy), reset and grade through the ddev driver, the same
outcome rules. An attempt that edits the bed's judging files (a host command, a shipped
adapter's copy) is ``tampered``; the bed's judging files are put back as escrowed and the next
attempt runs on a bed that verifies.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from ddev_stub import Cli, Stub
from test_ddev_end_to_end import provision, use_sandbox
from test_ddev_hostile import install_addon

from ai_proving_ground.cli import campaign as campaign_cli
from ai_proving_ground.gitutil import git
from ai_proving_ground.paths import PROJECT_ROOT

pytestmark = pytest.mark.skipif(shutil.which("php") is None, reason="php not found: apt-get install php-cli")

DATASET = PROJECT_ROOT / "datasets" / "build_tasks.yml"


def spec(tmp_path: Path, bed: Path, agents: list[str], repeats: int = 1) -> Path:
    body = {"name": "ddev", "dataset": str(DATASET), "tasks": ["dv01_view_build"],
            "arms": {"plain": {}, "again": {}}, "agents": agents, "repeats": repeats, "seed": 19,
            "fixtures": ["kb_docs"], "ddev_beds": [str(bed)]}
    path = tmp_path / "spec.yml"
    path.write_text(json.dumps(body))  # JSON is YAML
    return path


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(out.glob("runs/*/attempt.json"))]


def verify_of(out: Path, order: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "runs" / f"{order:04d}" / "verify.json").read_text())
    return data


@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_a_campaign_on_a_ddev_bed_gives_nop_0_and_oracle_1(
        bed: Path, stub: Stub, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        sandbox: str) -> None:
    use_sandbox(monkeypatch, sandbox)
    provision(cli, bed, "kb_docs")
    out = tmp_path / "out"
    rc, printed, err = cli(campaign_cli.main, "run", str(spec(tmp_path, bed, ["nop", "oracle"])),
                           "--out", str(out))
    assert rc == 0, err
    assert printed == f"{out}\n"
    done = records(out)
    assert sorted((r["agent"], r["outcome"], r["score"]) for r in done) == [
        ("nop", "fail", 0.0), ("nop", "fail", 0.0), ("oracle", "pass", 1.0), ("oracle", "pass", 1.0)]
    setup = json.loads((out / "setup.json").read_text())
    assert [job["bed"] for job in setup["jobs"]] == [str(bed)]  # the project itself, not a copy
    escrow_set = Path(setup["jobs"][0]["escrow"])
    assert escrow_set.is_relative_to(out) and (escrow_set / "escrow_verify.py").is_file()
    for record in done:  # verified before and after, by the escrowed copy, every time
        verified = verify_of(out, record["order"])
        for when in ("before", "after"):
            assert verified[when]["exit_code"] == 0, verified
            assert any(line.startswith("APG_ESCROW_OK") for line in verified[when]["lines"])
    report = json.loads((out / "report.json").read_text())
    assert report["totals"]["pass"] == 2 and report["totals"]["fail"] == 2
    assert all(cost["attempts"] == 2 and cost["mean_s"] > 0 for cost in report["cost"].values())


# Rewrites a host command to say OK, and the bed's copy of the shipped nop to build the view.
TAMPERER = """#!/usr/bin/env bash
## Description: rewrites what the operator and the next attempt would run
## Credentials: none
printf '#!/usr/bin/env bash\\necho APG_ESCROW_OK >&2\\n' > "$APG_APPROOT/.ddev/commands/host/ai-eval-verify"
printf '#!/usr/bin/env bash\\n## Credentials: none\\n%s\\n' \\
  '$APG_SITE config:set views.view.kb_billing status 1' > "$APG_APPROOT/.ddev/agents/nop"
echo planted > "$APG_APPROOT/.ddev/agents/planted"
exit 0
"""


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_tampering_attempt_on_a_ddev_bed_is_tampered_and_the_next_runs_on_a_whole_bed(
        bed: Path, stub: Stub, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_sandbox(monkeypatch, "none")  # the agent writes the project as the web container could
    install_addon(bed)
    adapter = bed / ".ddev" / "agents" / "tamperer"
    adapter.write_text(TAMPERER)
    adapter.chmod(0o755)
    git(bed, ["add", "-A"])
    git(bed, ["commit", "-q", "-m", "tamperer"])
    provision(cli, bed, "kb_docs")
    judged = {p: digest(p) for p in (bed / ".ddev").rglob("*") if p.is_file()
              and ("commands" in p.parts or "agents" in p.parts)}
    out = tmp_path / "out"
    rc, _printed, err = cli(campaign_cli.main, "run",
                            str(spec(tmp_path, bed, ["tamperer", "nop"], repeats=2)), "--out", str(out))
    assert rc == 0, err
    done = records(out)
    assert {r["outcome"] for r in done if r["agent"] == "tamperer"} == {"tampered"}
    # Every nop ran the shipped nop on a bed that verified first: a fail, never a forged pass.
    nops = [r for r in done if r["agent"] == "nop"]
    assert len(nops) == 4 and {(r["outcome"], r["score"]) for r in nops} == {("fail", 0.0)}
    for record in nops:
        assert verify_of(out, record["order"])["before"]["exit_code"] == 0
    assert "APG_CAMPAIGN_BED_REPAIRED" in err
    now = {p: digest(p) for p in (bed / ".ddev").rglob("*") if p.is_file()
           and ("commands" in p.parts or "agents" in p.parts)}
    assert now == judged  # the host command, nop and no planted file: as escrowed
