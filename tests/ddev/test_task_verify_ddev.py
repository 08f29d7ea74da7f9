"""``apg task verify --ddev-bed``: the reference through the oracle, the checks and the hidden
verifier on a fresh embedded bed and on a DDEV bed (here the stub ``ddev``, answering from its
site model, which executes a stored view with the embedded Views engine), each with its own
verdict and token. nf01's hidden verifier applies its recipes through ``apg drush recipe``: the
one filing a notice as Security must apply, the one leaving a notice uncategorised must fail."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from ddev_stub import Cli, Stub
from test_ddev_end_to_end import provision

from ai_proving_ground.cli import task as task_cli

pytestmark = pytest.mark.skipif(shutil.which("php") is None, reason="php not found: apt-get install php-cli")


FIXTURES = {"dv01_view_build": ["kb_docs"], "cv01_footer_heading": ["kb_docs", "canvas_home"],
            "nf01_fix_category_field": ["kb_notices"]}


@pytest.mark.parametrize("task_id", sorted(FIXTURES))
def test_the_reference_verifies_on_both_beds(bed: Path, stub: Stub, cli: Cli, task_id: str) -> None:
    provision(cli, bed, *FIXTURES[task_id])
    rc, out, err = cli(task_cli.main, "verify", task_id, "--ddev-bed", str(bed), "--json")
    assert rc == 0, out + err
    embedded, ddev = json.loads(out)
    assert (embedded["bed"], embedded["passed"]) == ("embedded", True)
    assert (ddev["bed"], ddev["approot"], ddev["passed"], ddev["run_status"]) == \
        ("ddev", str(bed), True, "attempted")
    hidden = "pass" if task_id == "nf01_fix_category_field" else "absent"
    assert (embedded["hidden_verifier"], ddev["hidden_verifier"]) == (hidden, hidden)
    assert f"APG_TASK_VERIFY_PASS {task_id} on embedded" in err
    assert f"APG_TASK_VERIFY_PASS {task_id} on ddev {bed}" in err
    # The oracle's steps reached drush in the web container.
    assert any(c["command"][:2] == ["exec", "drush"] for c in stub.calls())


def test_a_ddev_bed_without_the_baseline_fails_its_part(bed: Path, stub: Stub, cli: Cli) -> None:
    rc, out, err = cli(task_cli.main, "verify", "cv01_footer_heading", "--ddev-bed", str(bed),
                       "--json")
    assert rc == 1
    embedded, ddev = json.loads(out)
    assert embedded["passed"] is True and ddev["passed"] is False
    assert "APG_RESET_NO_BASELINE" in ddev["message"]
    assert "APG_TASK_VERIFY_FAIL cv01_footer_heading on ddev" in err
