"""A hostile adapter forges a baseline file in a real campaign: ``tampered``.

``site_unchanged`` grades the live config against ``config.<set>.json`` in the baseline
directory, which an embedded bed keeps inside itself (``.ai-proving-ground/``). Unconfined, an
agent can rewrite it to match the site it left; the job's escrow holds the export, so the verify
after the attempt reports it (``APG_ESCROW_MISMATCH``) and the attempt is never graded. The same
for the whole-bed listing (``bed.<set>.json``, what reset makes the bed equal to): the agent
plants an object (named by its own hash) and points a config file's entry at it, so that every
later reset would write its bytes; the verify after names the listing, and the verify before the
next attempt puts it back (that attempt is tampered again, not an infra error).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from campaign_kit import attempts, run_campaign, write_spec
from test_hostile_records import RecordScene

FORGE = textwrap.dedent("""\
    found = glob.glob(os.path.join(approot, '.ai-proving-ground', 'config.*.json'))
    for name in found:
        with open(name, encoding='utf-8') as handle:
            data = json.load(handle)
        first = sorted(data['config'])[0]
        data['config'][first] = dict(data['config'][first], planted=True)
        with open(name, 'w', encoding='utf-8') as handle:
            handle.write(json.dumps(data))
    loot('forge', str(len(found)))
    """)
FORGE_LISTING = textwrap.dedent("""\
    import hashlib
    base = os.path.join(approot, '.ai-proving-ground')
    forged = b'name: planted by the attempt\\n'
    sha = hashlib.sha256(forged).hexdigest()
    with open(os.path.join(base, 'objects', sha), 'wb') as handle:
        handle.write(forged)
    found = glob.glob(os.path.join(base, 'bed.*.json'))
    for name in found:
        with open(name, encoding='utf-8') as handle:
            data = json.load(handle)
        entry = next(e for e in data['entries']
                     if e['kind'] == 'file' and e['path'].startswith('config/sync/'))
        entry.update(data=sha, size=len(forged))
        with open(name, 'w', encoding='utf-8') as handle:
            handle.write(json.dumps(data))
    loot('forge', str(len(found)))
    """)
ATTACKS = {"forge-config": FORGE, "forge-listing": FORGE_LISTING}
TOKENS = {"forge-config": "APG_ESCROW_MISMATCH config.",
          "forge-listing": "APG_ESCROW_MISMATCH bed."}


class ForgeScene(RecordScene):
    """The records scene with the one forging adapter."""

    attacks: dict[str, str] = ATTACKS


@pytest.mark.parametrize("agent", list(ATTACKS))
def test_a_forged_baseline_file_makes_the_attempt_tampered(
        agent: str, apg: Any, tmp_path: Path, fixtures_template_bed: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    scene = ForgeScene(tmp_path / "scene", fixtures_template_bed)
    monkeypatch.setenv("HOME", str(scene.home))
    monkeypatch.setenv("AI_PG_SANDBOX", "none")
    monkeypatch.setenv("AI_PG_ALLOW_UNCONFINED", "1")
    spec = write_spec(scene.root / "spec.yml", {
        "name": "forge", "dataset": str(scene.dataset), "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {}}, "agents": [agent], "repeats": 1, "jobs": 1, "seed": 3,
        "bed": str(scene.bed)})
    out = scene.root / "out"
    result = run_campaign(apg, spec, out)
    assert "Traceback" not in result.err
    records = attempts(out)
    assert len(records) == 2
    for record in records:
        directory = out / "runs" / f"{record['order']:04d}"
        loot = next((directory / "run" / "work").glob("loot-*")).read_text(encoding="utf-8")
        assert loot == "1"  # the forgery landed in the job's bed
        assert record["outcome"] == "tampered" and record["tampered"] is True, record
        assert TOKENS[agent] in record["reason"], record
        assert not (directory / "grade.json").exists()  # never graded against the forgery
