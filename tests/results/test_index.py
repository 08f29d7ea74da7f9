"""The results index: every listing equals what the envelope files hold, however they changed."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.results.index import INDEX_NAME, Filters, list_rows, parse_since
from ai_proving_ground.tasks import results
from support.envelope_kit import smallest_envelope


def store(bed: Path, name: str, **fields: str) -> Path:
    results.store(bed, smallest_envelope("n", evaluation_id=name, **fields))
    return results.result_path(bed, name)


def listed(bed: Path, filters: Filters | None = None) -> list[str]:
    return [row.evaluation_id for row in list_rows(results.results_dir(bed), filters or Filters())]


def test_the_index_follows_every_change_to_the_files(tmp_path: Path) -> None:
    first = store(tmp_path, "a", retrieved="10")
    store(tmp_path, "b", retrieved="20")
    assert listed(tmp_path) == ["a", "b"]
    assert (results.results_dir(tmp_path) / INDEX_NAME).is_file()
    store(tmp_path, "c", retrieved="5")
    assert listed(tmp_path) == ["c", "a", "b"]  # oldest first, by retrieval time
    first.unlink()
    assert listed(tmp_path) == ["c", "b"]
    # Rewritten in place with the same size and its old mtime put back: ctime still differs.
    path = results.result_path(tmp_path, "b")
    stat = path.stat()
    text = path.read_text(encoding="utf-8").replace('"task_id": "t"', '"task_id": "u"')
    assert len(text) == stat.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    [row] = [r for r in list_rows(results.results_dir(tmp_path)) if r.evaluation_id == "b"]
    assert row.task == "u" and not row.error


def test_a_broken_or_foreign_index_is_rebuilt_from_the_files(tmp_path: Path) -> None:
    store(tmp_path, "a")
    assert listed(tmp_path) == ["a"]
    index = results.results_dir(tmp_path) / INDEX_NAME
    index.write_bytes(b"not a database at all" * 100)
    assert listed(tmp_path) == ["a"]
    connection = sqlite3.connect(index)
    connection.execute("PRAGMA user_version = 99")
    connection.commit()
    connection.close()
    store(tmp_path, "b", retrieved="2")
    assert listed(tmp_path) == ["a", "b"]
    index.unlink()
    assert listed(tmp_path) == ["a", "b"]


def test_an_unreadable_file_is_a_row_naming_why(tmp_path: Path) -> None:
    store(tmp_path, "a")
    (results.results_dir(tmp_path) / "broken.json").write_text("{", encoding="utf-8")
    rows = list_rows(results.results_dir(tmp_path))
    [bad] = [r for r in rows if r.error]
    assert bad.file.endswith("broken.json") and bad.error.startswith("unreadable: ")
    assert [r.evaluation_id for r in rows if not r.error] == ["a"]


def test_filters(tmp_path: Path) -> None:
    store(tmp_path, "1", task="nv01_x", agent="codex", model="openai/gpt-5", retrieved="100",
          run_status="attempted")
    store(tmp_path, "2", task="nv02_y", agent="claude-code", model="anthropic/claude-x",
          verdict="fail", retrieved="200", run_status="timed_out")
    store(tmp_path, "3", task="dv01_view_build", agent="codex", model="openai/gpt-5",
          retrieved="300")
    assert listed(tmp_path, Filters(task="nv*")) == ["1", "2"]
    assert listed(tmp_path, Filters(agent="codex")) == ["1", "3"]
    assert listed(tmp_path, Filters(model="anthropic/*")) == ["2"]
    assert listed(tmp_path, Filters(run_status="timed_out")) == ["2"]
    assert listed(tmp_path, Filters(run_status="no run")) == ["3"]
    assert listed(tmp_path, Filters(verdict="pass")) == ["1", "3"]
    assert listed(tmp_path, Filters(since=150)) == ["2", "3"]
    assert listed(tmp_path, Filters(limit=2)) == ["2", "3"]  # the newest two, oldest first
    assert listed(tmp_path, Filters(agent="codex", task="dv*")) == ["3"]


def test_since_takes_utc_dates_and_times() -> None:
    assert parse_since("1970-01-02") == 86400.0
    assert parse_since("1970-01-01T01:00Z") == 3600.0
    assert parse_since("1970-01-01T00:00:30") == 30.0
    with pytest.raises(ApgError, match="not a UTC date or time"):
        parse_since("yesterday")


def test_an_index_that_cannot_be_opened_lists_from_the_files_alone(tmp_path: Path) -> None:
    store(tmp_path, "a")
    (results.results_dir(tmp_path) / INDEX_NAME).mkdir()  # as a read-only store would refuse it
    assert listed(tmp_path) == ["a"]
