"""verify_benchmark: the verifier and sha256sum timed over the same files in one run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ai_proving_ground.bench.escrow import files_read, verify_benchmark


def test_verify_benchmark_reports_both_timings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AI_PG_FIXTURE_PATH", "kept")  # restored afterwards, untouched by the bench
    row = verify_benchmark(tmp_path, nodes=12, repeat=1)
    assert row["nodes"] == 12 and row["files"] > 100 and row["bytes"] > 0
    assert row["verify_s"] > 0 and os.access(row["python"], os.X_OK)
    if shutil.which("sha256sum"):
        assert row["sha256sum_s"] > 0
        assert row["verify_ratio"] == pytest.approx(row["verify_s"] / row["sha256sum_s"], rel=0.05, abs=0.02)
    set_dir = next((tmp_path / "escrow-bench-escrow").glob("*/*"))
    paths = files_read(set_dir)
    assert len(paths) == row["files"] and all(Path(p).is_file() for p in paths)
    assert any(p.endswith("/content/node/be0c0000-0000-4000-8000-000000000012.yml") for p in paths)
    assert os.environ["AI_PG_FIXTURE_PATH"] == "kept"
