"""Hostile adapters against the bed itself, in a real campaign (escrow, a hidden verifier).

Each adapter of issue 18's bed attacks runs four times on one job's bed (two arms, two repeats),
so whatever one attempt leaves is there for the next unless reset removes it:

* ``link-db`` swaps ``db/`` for a link to a copy it made, then builds through the link: the
  harness must never grade (or reset) through it; never ``pass``, never ``infra_error``;
* ``plant-ddev`` plants a ``.ddev/config.yaml`` (an embedded bed pretending to be DDEV) and
  builds nothing: ``fail``, and the next attempt still runs on the embedded site;
* ``leave-note`` leaves answers in a new top-level folder, in ``private/`` and in
  ``web/sites/default``, after first looking for the notes an earlier attempt left: it never
  finds one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from campaign_kit import attempts, run_campaign, write_spec
from test_hostile_adapters import backend_works
from test_hostile_records import RecordScene

NOTES = ("notes/answers.txt", "private/answers.txt", "web/sites/default/answers.txt")
ATTACKS = {
    "link-db": """\
        import shutil
        db = os.path.join(approot, 'db')
        copy = os.path.join(approot, 'web', 'db-copy')
        try:
            shutil.copytree(db, copy)
            shutil.rmtree(db)
            os.symlink(copy, db)
            loot('link', 'done')
        except OSError as exc:
            loot('link', exc.strerror)
        cheat()
        """,
    "plant-ddev": """\
        try:
            os.makedirs(os.path.join(approot, '.ddev'), exist_ok=True)
            with open(os.path.join(approot, '.ddev', 'config.yaml'), 'w') as handle:
                handle.write('name: planted\\ntype: drupal10\\n')
            loot('ddev', 'done')
        except OSError as exc:
            loot('ddev', exc.strerror)
        """,
    "leave-note": f"""\
        notes = {NOTES!r}
        seen = [n for n in notes if os.path.exists(os.path.join(approot, n))]
        left = []
        for note in notes:
            try:
                os.makedirs(os.path.dirname(os.path.join(approot, note)), exist_ok=True)
                with open(os.path.join(approot, note), 'w') as handle:
                    handle.write('the view is kb_billing, sorted by weight')
                left.append(note)
            except OSError:
                pass
        loot('note', json.dumps({{'seen': seen, 'left': left}}))
        """,
}


class BedScene(RecordScene):
    """The hostile scene with the bed attacks as its adapters."""

    attacks = ATTACKS


def landed(loot: Path, backend: str) -> None:
    """Unconfined (the control) the attack lands; a sandbox may refuse it (Landlock grants no
    link or file creation in some of the bed's folders), never crash it."""
    said = loot.read_text(encoding="utf-8")
    assert said == "done" if backend == "none" else said in ("done", "Permission denied"), said


@pytest.mark.parametrize("backend", ["bwrap", "landlock", "none"])
def test_what_an_attempt_does_to_its_bed_never_passes_or_reaches_the_next(
        apg: Any, tmp_path: Path, backend: str, fixtures_template_bed: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    if not backend_works(backend):
        pytest.skip("needs bubblewrap (apt-get install bubblewrap)" if backend == "bwrap"
                    else "needs Landlock (Linux 5.13+)")
    scene = BedScene(tmp_path / "scene", fixtures_template_bed)
    monkeypatch.setenv("HOME", str(scene.home))
    monkeypatch.setenv("AI_PG_SANDBOX", backend)
    if backend == "none":
        monkeypatch.setenv("AI_PG_ALLOW_UNCONFINED", "1")
    spec = write_spec(scene.root / "spec.yml", {
        "name": "bed", "dataset": str(scene.dataset), "tasks": ["dv01_view_build"],
        "arms": {"a": {}, "b": {}}, "agents": sorted(ATTACKS), "repeats": 2, "jobs": 1,
        "seed": 7, "bed": str(scene.bed)})
    out = scene.root / "out"
    result = run_campaign(apg, spec, out)
    assert "Traceback" not in result.err
    records = attempts(out)
    assert len(records) == 4 * len(ATTACKS)
    for record in records:
        assert record["outcome"] not in ("pass", "infra_error"), record
        run = out / "runs" / f"{record['order']:04d}" / "run"
        if record["agent"] == "link-db":
            # The site refuses the link (APG_BED_PATH_UNSAFE) before the build writes through it.
            assert record["outcome"] in ("tampered", "fail", "no_attempt"), record
            landed(run / "work" / "loot-link", backend)
        if record["agent"] == "plant-ddev":
            assert record["outcome"] == "fail", record
            landed(run / "work" / "loot-ddev", backend)
        if record["agent"] == "leave-note":
            loot = (run / "work" / "loot-note").read_text(encoding="utf-8")
            assert '"seen": []' in loot, (record, loot)
            assert '"left": []' not in loot, loot  # the notes were written: reset removed them
            assert record["outcome"] == "fail", record
