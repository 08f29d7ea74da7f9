"""An SQLite index beside the stored envelopes, so listing and filtering stay fast at any size.

The envelope files (``tasks.results``) stay the source of truth: the index is a cache of one row
per file, brought up to date on every read by comparing each file's stat stamp (size, mtime,
ctime, inode: ``utime`` can forge mtime but not ctime) with the one indexed, so only new or
changed files are parsed and removed ones dropped. An index that is missing, of another format
or unreadable is rebuilt from the files; deleting it loses nothing. SQLite is in the standard
library and does the filtering and ordering; a JSON cache would have to be parsed whole on
every listing, which is what made the file-per-envelope store slow.
"""

from __future__ import annotations

import calendar
import os
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ai_proving_ground.errors import ApgError
from ai_proving_ground.tasks.envelope import Envelope, read_envelope

INDEX_NAME = ".index.sqlite"
FORMAT = 1  # PRAGMA user_version: a different number rebuilds the index
# Another process may be bringing the index up to date: wait for it this long, then fail.
BUSY_TIMEOUT_S = 30.0
NO_RUN = "no run"  # the run status of a grade made without --run


class ResultRow(NamedTuple):
    """What a listing shows of one stored envelope (``error`` set when the file did not read).
    A named tuple: a listing makes one per stored envelope, and a frozen dataclass costs about
    four times as much to make."""

    evaluation_id: str
    task: str
    agent: str
    model: str
    run_status: str
    score: float | None
    verdict: str
    run: str
    retrieved: str  # the envelope's retrieved_timestamp: Unix seconds, as text
    file: str
    error: str = ""

    @property
    def when(self) -> str:
        """``retrieved`` as an ISO 8601 UTC time, for people."""
        try:
            return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(float(self.retrieved)))
        except (ValueError, OverflowError):
            return self.retrieved

    def as_json(self) -> dict[str, Any]:
        data = self._asdict()
        data["when"] = self.when
        if not self.error:
            del data["error"]
        return data


@dataclass(frozen=True)
class Filters:
    """Which rows to list; ``task`` and ``model`` are shell-style globs, the rest exact."""

    task: str | None = None
    agent: str | None = None
    model: str | None = None
    run_status: str | None = None
    verdict: str | None = None
    since: float | None = None  # Unix seconds: rows retrieved at or after
    limit: int | None = None  # the newest N (still listed oldest first)


_COLUMNS = ResultRow._fields
_CREATE = (f"CREATE TABLE rows (name TEXT PRIMARY KEY, stamp TEXT NOT NULL, "
           f"{', '.join(c + ' TEXT' if c != 'score' else 'score REAL' for c in _COLUMNS)})")


def row_of(path: Path) -> ResultRow:
    """The row of one envelope file; one that does not read is a row naming why."""
    try:
        envelope = read_envelope(path)
    except ApgError as exc:
        return ResultRow(evaluation_id="", task="", agent="", model="", run_status="",
                         score=None, verdict="", run="", retrieved="", file=str(path),
                         error=f"unreadable: {exc.message}")
    return _row(envelope, path)


def _row(envelope: Envelope, path: Path) -> ResultRow:
    document = envelope.document
    model_details = document["model_info"].get("additional_details", {})
    source = document["source_metadata"].get("additional_details", {})
    return ResultRow(evaluation_id=envelope.evaluation_id, task=envelope.task_id,
                     agent=str(model_details.get("agent_adapter", "")), model=envelope.model_id,
                     run_status=str(source.get("apg_run_status", NO_RUN)),
                     score=envelope.score, verdict=envelope.verdict, run=envelope.run_id or "",
                     retrieved=envelope.retrieved_timestamp, file=str(path))


def _stamp(entry: os.DirEntry[str]) -> str:
    st = entry.stat(follow_symlinks=False)
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


def _envelope_files(directory: Path) -> dict[str, tuple[str, str]]:
    """Every ``*.json`` regular file of the store: name -> (stat stamp, path). Paths stay
    strings: making a Path for each of 10,000 files costs more than the whole query."""
    found: dict[str, tuple[str, str]] = {}
    try:
        with os.scandir(directory) as scan:
            for entry in scan:
                if entry.name.endswith(".json") and entry.is_file(follow_symlinks=False):
                    found[entry.name] = (_stamp(entry), entry.path)
    except FileNotFoundError:
        pass
    return found


@contextmanager
def _opened(directory: Path) -> Iterator[sqlite3.Connection]:
    path = directory / INDEX_NAME
    try:
        connection = _connect(str(path))
    except sqlite3.OperationalError:
        # A store this user may read but not write: index in memory (every file parsed).
        connection = _connect(":memory:")
    except sqlite3.DatabaseError:
        path.unlink(missing_ok=True)  # not a database (or one too damaged to open): rebuild
        connection = _connect(str(path))
    try:
        yield connection
    finally:
        connection.close()


def _connect(path: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        (version,) = connection.execute("PRAGMA user_version").fetchone()
        if version != FORMAT:
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("DROP TABLE IF EXISTS rows")
            connection.execute(_CREATE)
            connection.execute(f"PRAGMA user_version = {FORMAT}")
            connection.execute("COMMIT")
        connection.execute("SELECT count(*) FROM rows").fetchone()
    except sqlite3.DatabaseError:
        connection.close()
        raise
    return connection


def _refresh(connection: sqlite3.Connection, directory: Path) -> None:
    """Make the index equal to the files: parse new and changed ones, drop removed ones."""
    files = _envelope_files(directory)
    indexed = dict(connection.execute("SELECT name, stamp FROM rows").fetchall())
    stale = [name for name in indexed if name not in files]
    fresh = [name for name, (stamp, _) in files.items() if indexed.get(name) != stamp]
    if not stale and not fresh:
        return
    placeholders = ", ".join("?" for _ in range(len(_COLUMNS) + 2))
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.executemany("DELETE FROM rows WHERE name = ?", [(n,) for n in stale])
        connection.executemany(
            f"INSERT OR REPLACE INTO rows (name, stamp, {', '.join(_COLUMNS)}) "
            f"VALUES ({placeholders})",
            [(name, files[name][0], *row_of(Path(files[name][1]))) for name in fresh])
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise


def list_rows(directory: Path, filters: Filters = Filters()) -> list[ResultRow]:
    """The store's rows that pass ``filters``, oldest first (by retrieval time, then file)."""
    if not directory.is_dir():
        return []
    clauses, values = _where(filters)
    order = "CAST(retrieved AS REAL), name"
    query = f"SELECT {', '.join(_COLUMNS)} FROM rows{clauses} ORDER BY {order}"
    if filters.limit is not None:
        query = (f"SELECT * FROM (SELECT {', '.join(_COLUMNS)}, name FROM rows{clauses} "
                 f"ORDER BY CAST(retrieved AS REAL) DESC, name DESC LIMIT ?) ORDER BY {order}")
        values.append(filters.limit)
    with _opened(directory) as connection:
        _refresh(connection, directory)
        width = len(_COLUMNS)
        return [ResultRow._make(found[:width]) for found in connection.execute(query, values)]


def _where(filters: Filters) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    values: list[Any] = []
    for column, value, glob in (("task", filters.task, True), ("model", filters.model, True),
                                ("agent", filters.agent, False),
                                ("run_status", filters.run_status, False),
                                ("verdict", filters.verdict, False)):
        if value is not None:
            clauses.append(f"{column} {'GLOB' if glob else '='} ?")
            values.append(value)
    if filters.since is not None:
        clauses.append("CAST(retrieved AS REAL) >= ?")
        values.append(filters.since)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), values


def parse_since(raw: str) -> float:
    """``--since``: a UTC date (2026-12-01) or time (2026-12-01T10:00[:00][Z]) as Unix seconds."""
    text = raw.strip().removesuffix("Z")
    for shape in ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d"):
        try:
            return float(calendar.timegm(time.strptime(text, shape)))
        except ValueError:
            continue
    raise ApgError("APG_USAGE", f"--since {raw!r}: not a UTC date or time; use 2026-12-01 or "
                   "2026-12-01T10:00:00Z", exit_code=2)
