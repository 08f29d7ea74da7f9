"""fsutil.volatile: atomic writes that skip fsync in one thread's block, still new-then-rename."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from ai_proving_ground import fsutil
from ai_proving_ground.campaigns.beds import Job
from ai_proving_ground.settings import Settings


def test_writes_in_the_block_skip_fsync_and_still_land_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real(fd))
    fsutil.atomic_write_text(tmp_path / "durable", "one\n")
    assert len(synced) == 1
    in_thread: list[int] = []
    with fsutil.volatile():
        fsutil.atomic_write_text(tmp_path / "volatile", "two\n")
        assert len(synced) == 1
        # Another thread's writes are its own: durable unless it says otherwise.
        worker = threading.Thread(target=lambda: (fsutil.atomic_write_text(tmp_path / "t", "3\n"),
                                                  in_thread.append(len(synced))))
        worker.start()
        worker.join()
    assert in_thread == [2]
    fsutil.atomic_write_text(tmp_path / "durable", "four\n")
    assert len(synced) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["durable", "t", "volatile"]
    assert (tmp_path / "volatile").read_text() == "two\n"


def test_only_an_embedded_job_bed_is_disposable(tmp_path: Path) -> None:
    def job(driver: str) -> Job:
        return Job(number=0, bed=tmp_path, escrow_root=tmp_path, tag="t",
                   settings=Settings(site_driver=driver))

    with job("sqlite").disposable():
        assert not fsutil._durable.get()
    with job("ddev").disposable():  # the operator's project: its writes stay durable
        assert fsutil._durable.get()
