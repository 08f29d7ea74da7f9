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
