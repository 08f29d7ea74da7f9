"""Which session file apg copies out of a work folder: the newest, never through a link."""

from __future__ import annotations

import os
from pathlib import Path

from ai_proving_ground.tasks.run_transcript import newest_session

PATTERN = "rollout-*.jsonl"


def test_the_newest_session_is_the_last_named(tmp_path: Path) -> None:
    for day, name in (("01", "rollout-2026-12-01T10-00-00-a.jsonl"),
                      ("02", "rollout-2026-12-02T09-00-00-b.jsonl"),
                      ("02", "notes.txt")):
        folder = tmp_path / "codex-sessions" / "2026" / "12" / day
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("{}\n", encoding="utf-8")
    assert newest_session(tmp_path, "codex-sessions", PATTERN) == os.path.join(
        "codex-sessions", "2026", "12", "02", "rollout-2026-12-02T09-00-00-b.jsonl")


def test_a_link_is_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "2026").mkdir(parents=True)
    (outside / "2026" / "rollout-2026-12-03T00-00-00-x.jsonl").write_text("{}\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    (work / "codex-sessions").symlink_to(outside)
    assert newest_session(work, "codex-sessions", PATTERN) is None
    (work / "codex-sessions").unlink()
    (work / "codex-sessions").mkdir()
    (work / "codex-sessions" / "2026").symlink_to(outside / "2026")
    (work / "codex-sessions" / "rollout-2026-12-04T00-00-00-y.jsonl").symlink_to(
        outside / "2026" / "rollout-2026-12-03T00-00-00-x.jsonl")
    (work / "codex-sessions" / "rollout-2026-12-01T00-00-00-z.jsonl").write_text(
        "{}\n", encoding="utf-8")
    assert newest_session(work, "codex-sessions", PATTERN) == os.path.join(
        "codex-sessions", "rollout-2026-12-01T00-00-00-z.jsonl")
    assert newest_session(work, "missing", PATTERN) is None
