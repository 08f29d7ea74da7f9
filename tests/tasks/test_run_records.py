"""apg run's own records: capped logs, and records an adapter could not have replaced.

Each adapter here attacks the run's records from inside the sandbox (or, as the control,
without one); apg must keep its records, or say the record is broken, never die on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_run import add_adapter, only_run

Run = Any
# 200 MB on stdout, in 1 MB writes (the adapter's own memory stays small too).
FLOOD = ('python3 -c "import sys\nchunk = b\'x\' * (1 << 20)\nfor _ in range(200): '
         'sys.stdout.buffer.write(chunk)"')


@pytest.fixture
def plain(bed: Path) -> Path:
    return bed


def test_a_flood_of_output_is_capped_while_it_drains(plain: Path, apg: Run,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_LOG_LIMIT", "100000")
    add_adapter(plain, "flood", FLOOD + '\necho "said on stderr" >&2')
    rc, out, err = apg("run", "dv01_view_build", "--approot", str(plain), "--agent", "flood")
    assert rc == 0, err
    run_dir, record = only_run(plain)
    assert record["status"] == "attempted"
    kept = (run_dir / "stdout.log").read_bytes()
    head, _, line = kept.partition(b"\nAPG_LOG_TRUNCATED ")
    assert head == b"x" * 100000
    assert line == (f"stdout.log: kept the first 100000 bytes, dropped {200 * (1 << 20) - 100000} "
                    "more (AI_PG_LOG_LIMIT sets the limit)\n").encode()
    assert (run_dir / "stderr.log").read_bytes() == b"said on stderr\n"  # under the cap: whole
    # The terminal got the same: the kept bytes and the line, not 200 MB.
    assert len(out) < 101000 and "APG_LOG_TRUNCATED stdout.log: kept the first" in out


@pytest.mark.parametrize("value", ["0", "-5", "lots", "1.5"])
def test_a_bad_log_limit_is_usage_and_records_nothing(plain: Path, apg: Run, value: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_LOG_LIMIT", value)
    add_adapter(plain, "quiet", "exit 0")
    rc, _, err = apg("run", "dv01_view_build", "--approot", str(plain), "--agent", "quiet")
    assert rc == 2
    assert err.startswith(f"APG_USAGE AI_PG_LOG_LIMIT={value!r} is not a whole number of bytes")
    assert not (plain / ".ai-proving-ground" / "runs").exists()


# ---------------------------------------------------------------------------- the records

# Each attack on apg's records, from inside the adapter (its APG_RUN_DIR is work/, the run
# directory is its parent).
ATTACKS = {
    "dir-at-run-json": 'r="$(dirname "$APG_RUN_DIR")"; rm -f "$r/run.json"; mkdir "$r/run.json"',
    "forged-run-json": ('r="$(dirname "$APG_RUN_DIR")"; sed s/running/attempted/ "$r/run.json" '
                        '> "$APG_RUN_DIR/forged" && cat "$APG_RUN_DIR/forged" > "$r/run.json"'),
    "rewritten-log": ('echo "honest output"; r="$(dirname "$APG_RUN_DIR")"; '
                      'echo "I built the view" > "$APG_RUN_DIR/log" && mv "$APG_RUN_DIR/log" '
                      '"$r/stdout.log"'),
    "rewritten-request": ('r="$(dirname "$APG_RUN_DIR")"; echo "{}" > "$r/request.json"'),
}
BACKENDS = ["bwrap", "landlock"]


def backend_works(name: str) -> bool:
    from ai_proving_ground.sandbox import bwrap, landlock

    if name == "bwrap":
        import shutil

        found = shutil.which("bwrap")
        return found is not None and bwrap.probe(found) is None
    return landlock.abi_version() > 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_confined_adapter_cannot_touch_apgs_records(plain: Path, apg: Run, backend: str,
                                                      attack: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    if not backend_works(backend):
        pytest.skip(f"needs {backend}")
    monkeypatch.setenv("AI_PG_SANDBOX", backend)
    add_adapter(plain, attack, ATTACKS[attack] + "\nexit 0")
    rc, _, err = apg("run", "dv01_view_build", "--approot", str(plain), "--agent", attack)
    run_dir, record = only_run(plain)
    assert rc == 0 and "APG_RUN_ATTEMPTED" in err, err
    assert (record["status"], record["sandbox"]["backend"]) == ("attempted", backend)
    assert (run_dir / "run.json").is_file() and (run_dir / "request.json").read_text() != "{}\n"
    if attack == "rewritten-log":
        assert (run_dir / "stdout.log").read_text() == "honest output\n"


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_unconfined_a_touched_record_is_broken_never_a_traceback(
        plain: Path, apg: Run, attack: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control, and what apg does when a record was reached all the same: it says so."""
    monkeypatch.setenv("AI_PG_SANDBOX", "none")
    monkeypatch.setenv("AI_PG_ALLOW_UNCONFINED", "1")
    add_adapter(plain, attack, ATTACKS[attack] + "\nexit 0")
    rc, _, err = apg("run", "dv01_view_build", "--approot", str(plain), "--agent", attack)
    [run_dir] = (plain / ".ai-proving-ground" / "runs").iterdir()
    assert rc == 1, err
    assert "Traceback" not in err and "APG_RUN_ATTEMPTED" not in err
    broken = [line for line in err.splitlines() if line.startswith("APG_RUN_RECORD_BROKEN ")]
    what = {"dir-at-run-json": "run.json is a folder, not the file apg wrote",
            "forged-run-json": "run.json was rewritten",
            "rewritten-log": "stdout.log was replaced",
            "rewritten-request": "request.json was rewritten"}[attack]
    assert broken == [f"APG_RUN_RECORD_BROKEN run {run_dir.name}: {what} in {run_dir}; apg's "
                      "records of this run cannot be trusted (something other than apg changed "
                      "them while the adapter ran)"], err
    # Nothing was written over what the adapter left: the evidence stays as it was found.
    if attack == "dir-at-run-json":
        assert (run_dir / "run.json").is_dir()
