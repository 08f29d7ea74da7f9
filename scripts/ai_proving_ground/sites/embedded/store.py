"""The embedded site's database: one SQLite file holding config, content and key-value state."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.base import EntityRecord

SCHEMA = """
CREATE TABLE IF NOT EXISTS config (name TEXT PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS key_value (
  collection TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (collection, name));
CREATE TABLE IF NOT EXISTS entity (
  entity_type TEXT NOT NULL, id INTEGER NOT NULL, uuid TEXT NOT NULL UNIQUE,
  bundle TEXT NOT NULL, label TEXT NOT NULL, status INTEGER NOT NULL,
  langcode TEXT NOT NULL DEFAULT 'en', created INTEGER NOT NULL, changed INTEGER NOT NULL,
  fields TEXT NOT NULL, PRIMARY KEY (entity_type, id));
CREATE INDEX IF NOT EXISTS entity_bundle ON entity (entity_type, bundle);
CREATE TABLE IF NOT EXISTS sequences (entity_type TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS cache (cid TEXT PRIMARY KEY, data TEXT NOT NULL);
"""

# SQLite caps bound parameters per statement; batches of UUIDs are split to stay below it.
_IN_CHUNK = 500


def as_stored(data: Any) -> Any:
    """Config as the database holds it: JSON, so mapping keys are strings (403 becomes '403').

    Compare config only in this form, or YAML's integer keys make equal objects look different.
    """
    return json.loads(_encode(data))


def _encode(data: Any) -> str:
    return json.dumps(data, sort_keys=False, separators=(",", ":"))


# How long a command waits for another command's write to finish before it gives up. An agent
# runs several `apg site` commands at once; each waits its turn instead of failing.
BUSY_TIMEOUT_S = 30.0

_READONLY = ("APG_SITE_READONLY", "cannot be written here: the bed is read-only for this process "
             "(a read-only sandbox or mount); run the command where the bed is writable, e.g. "
             "codex --sandbox workspace-write")
_BUSY = ("APG_SITE_BUSY", "is locked by another command for longer than the wait; wait for it "
         "to finish and run this one again")
# SQLite's primary result codes an agent can cause, as the tokens a command prints.
_FAILURES = {"SQLITE_READONLY": _READONLY, "SQLITE_CANTOPEN": _READONLY, "SQLITE_BUSY": _BUSY,
             "SQLITE_LOCKED": _BUSY,
             "SQLITE_FULL": ("APG_SITE_DISK_FULL", "could not grow: the disk is full; free space "
                                                   "and run the command again")}


def database_error(exc: sqlite3.Error, db_path: Path) -> ApgError:
    """What a failed statement means for the person (or agent) who ran the command."""
    primary = "_".join((getattr(exc, "sqlite_errorname", None) or "").split("_")[:2])
    token, advice = _FAILURES.get(primary, ("APG_SITE_DB_ERROR", "failed; if it persists, restore "
                                                                 "the bed with `apg reset`"))
    return ApgError(token, f"the site database {db_path} {advice} ({exc})")


@contextlib.contextmanager
def database_errors(db_path: Path) -> Iterator[None]:
    """A failed statement inside the block is raised as the ApgError that says what it means."""
    try:
        yield
    except sqlite3.Error as exc:
        raise database_error(exc, db_path) from None


@contextlib.contextmanager
def open_session(db_path: Path, busy_timeout_s: float = BUSY_TIMEOUT_S) -> Iterator[Store]:
    """One connection and one all-or-nothing write transaction, taken before anything is read, so
    that commands on one bed run one after another (a read-then-write can never lose the race)."""
    with database_errors(db_path):
        store = Store(db_path, busy_timeout_s)
        try:
            with store.transaction():
                yield store
        finally:
            store.close()


def _refuse_untrusted(db_path: Path) -> None:
    """The database and its folder are trusted paths: each must be what it claims (lstat), a
    real folder and a real file. An attempt that links ``db/`` to another bed's would otherwise
    be graded, and reset, on that bed."""
    for path, wanted, what in ((db_path.parent, stat.S_ISDIR, "a folder"),
                               (db_path, stat.S_ISREG, "a file")):
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return  # absent: the not-installed refusal below says so
        if not wanted(mode):
            raise ApgError("APG_BED_PATH_UNSAFE", f"{path} is a symlink or not {what}, so the site "
                           "database cannot be trusted; an attempt may have replaced it. Run "
                           f"`apg reset --approot {db_path.parent.parent}` to repair the bed (it "
                           "never writes through a link)")


class Store:
    """A thin, typed layer over the SQLite file. Callers group writes with :meth:`transaction`."""

    def __init__(self, db_path: Path, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.db_path = db_path
        _refuse_untrusted(db_path)
        if not db_path.is_file():
            raise ApgError(
                "APG_SITE_NOT_INSTALLED",
                f"no embedded site database at {db_path}; create a bed with `apg bed init DIR`",
                exit_code=2,
            )
        with database_errors(db_path):
            self.conn = sqlite3.connect(db_path, isolation_level=None, timeout=busy_timeout_s)
        self.conn.row_factory = sqlite3.Row
        self._depth = 0

    @classmethod
    def create(cls, db_path: Path) -> Store:
        """Create an empty database file with the schema."""
        db_path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(db_path)
        conn.executescript(SCHEMA)
        conn.commit()
        conn.close()
        return cls(db_path)

    def close(self) -> None:
        self.conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All-or-nothing; nests by savepoints so a recipe and its sub-recipes roll back together.

        The outermost level takes the write lock first (BEGIN IMMEDIATE): a deferred transaction
        that read and then wants to write fails at once with "database is locked" when another
        connection writes, whatever the busy timeout.
        """
        outermost = self._depth == 0
        name = f"sp{self._depth}"
        self.conn.execute("BEGIN IMMEDIATE" if outermost else f"SAVEPOINT {name}")
        self._depth += 1
        try:
            yield
        except BaseException:
            with contextlib.suppress(sqlite3.Error):  # a failed write may have ended it already
                self.conn.execute("ROLLBACK" if outermost else f"ROLLBACK TO {name}")
                if not outermost:
                    self.conn.execute(f"RELEASE {name}")
            raise
        else:
            self.conn.execute("COMMIT" if outermost else f"RELEASE {name}")
        finally:
            self._depth -= 1

    # ------------------------------------------------------------------ config

    def config_get(self, name: str) -> Any:
        row = self.conn.execute("SELECT data FROM config WHERE name = ?", (name,)).fetchone()
        return None if row is None else json.loads(row["data"])

    def config_get_many(self, names: Sequence[str]) -> dict[str, Any]:
        found: dict[str, Any] = dict.fromkeys(names)
        for chunk in _chunks(list(dict.fromkeys(names))):
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(f"SELECT name, data FROM config WHERE name IN ({marks})", chunk)
            for row in rows:
                found[row["name"]] = json.loads(row["data"])
        return found

    def config_names(self, prefix: str = "") -> list[str]:
        rows = self.conn.execute(
            "SELECT name FROM config WHERE substr(name, 1, ?) = ? ORDER BY name", (len(prefix), prefix)
        )
        return [row["name"] for row in rows]

    def config_all(self) -> dict[str, Any]:
        rows = self.conn.execute("SELECT name, data FROM config ORDER BY name")
        return {row["name"]: json.loads(row["data"]) for row in rows}

    def config_set(self, name: str, data: Any) -> None:
        self.conn.execute(
            "INSERT INTO config (name, data) VALUES (?, ?) "
            "ON CONFLICT(name) DO UPDATE SET data = excluded.data",
            (name, _encode(data)),
        )

    def config_delete(self, name: str) -> bool:
        return self.conn.execute("DELETE FROM config WHERE name = ?", (name,)).rowcount > 0

    def config_replace_all(self, objects: dict[str, Any]) -> None:
        self.conn.execute("DELETE FROM config")
        self.conn.executemany(
            "INSERT INTO config (name, data) VALUES (?, ?)",
            [(name, _encode(data)) for name, data in objects.items()],
        )

    # ------------------------------------------------------------------ key-value

    def kv_all(self, collection: str) -> dict[str, Any]:
        rows = self.conn.execute(
            "SELECT name, value FROM key_value WHERE collection = ? ORDER BY name", (collection,)
        )
        return {row["name"]: json.loads(row["value"]) for row in rows}

    def kv_set(self, collection: str, name: str, value: Any) -> None:
        self.conn.execute(
            "INSERT INTO key_value (collection, name, value) VALUES (?, ?, ?) "
            "ON CONFLICT(collection, name) DO UPDATE SET value = excluded.value",
            (collection, name, _encode(value)),
        )

    def kv_replace(self, collection: str, values: dict[str, Any]) -> None:
        """Make ``collection`` hold exactly ``values``."""
        self.conn.execute("DELETE FROM key_value WHERE collection = ?", (collection,))
        self.conn.executemany(
            "INSERT INTO key_value (collection, name, value) VALUES (?, ?, ?)",
            [(collection, name, _encode(value)) for name, value in values.items()],
        )

    def kv_delete(self, collection: str, name: str) -> None:
        self.conn.execute(
            "DELETE FROM key_value WHERE collection = ? AND name = ?", (collection, name)
        )

    # ------------------------------------------------------------------ entities

    def next_id(self, entity_type: str) -> int:
        """A serial that is never reused, like an auto-increment column."""
        row = self.conn.execute(
            "SELECT value FROM sequences WHERE entity_type = ?", (entity_type,)
        ).fetchone()
        value = (row["value"] if row else 0) + 1
        self.conn.execute(
            "INSERT INTO sequences (entity_type, value) VALUES (?, ?) "
            "ON CONFLICT(entity_type) DO UPDATE SET value = excluded.value",
            (entity_type, value),
        )
        return value

    def entity_insert(self, record: EntityRecord) -> None:
        self.conn.execute(
            "INSERT INTO entity (entity_type, id, uuid, bundle, label, status, created, changed,"
            " fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (record.entity_type, record.id, record.uuid, record.bundle, record.label,
             int(record.status), record.created, record.changed, _encode(record.fields)),
        )

    def entity_update(self, record: EntityRecord) -> None:
        self.conn.execute(
            "UPDATE entity SET label = ?, status = ?, changed = ?, fields = ? WHERE uuid = ?",
            (record.label, int(record.status), int(time.time()), _encode(record.fields),
             record.uuid),
        )

    def entity_delete(self, uuid: str) -> bool:
        return self.conn.execute("DELETE FROM entity WHERE uuid = ?", (uuid,)).rowcount > 0

    def entities_by_uuid(self, uuids: Sequence[str]) -> dict[str, EntityRecord]:
        found: dict[str, EntityRecord] = {}
        rows = self.conn.cursor()
        rows.row_factory = None  # plain tuples: a doctor reads every entity of its fixtures here
        for chunk in _chunks(list(dict.fromkeys(uuids))):
            marks = ",".join("?" * len(chunk))
            for row in rows.execute(f"SELECT {_ENTITY} FROM entity WHERE uuid IN ({marks})",
                                    chunk):
                record = _record(row)
                found[record.uuid] = record
        return found

    def entity_by_id(self, entity_type: str, entity_id: int) -> EntityRecord | None:
        row = self.conn.execute(
            f"SELECT {_ENTITY} FROM entity WHERE entity_type = ? AND id = ?",
            (entity_type, entity_id)
        ).fetchone()
        return None if row is None else _record(row)

    def entities_of(self, entity_type: str, bundle: str | None = None) -> list[EntityRecord]:
        if bundle is None:
            rows = self.conn.execute(
                f"SELECT {_ENTITY} FROM entity WHERE entity_type = ? ORDER BY id", (entity_type,)
            )
        else:
            rows = self.conn.execute(
                f"SELECT {_ENTITY} FROM entity WHERE entity_type = ? AND bundle = ? ORDER BY id",
                (entity_type, bundle),
            )
        return [_record(row) for row in rows]

    def entity_count(self, entity_type: str, bundle: str | None = None) -> int:
        if bundle is None:
            row = self.conn.execute(
                "SELECT COUNT(*) AS n FROM entity WHERE entity_type = ?", (entity_type,)
            ).fetchone()
        else:
            row = self.conn.execute(
                "SELECT COUNT(*) AS n FROM entity WHERE entity_type = ? AND bundle = ?",
                (entity_type, bundle),
            ).fetchone()
        return int(row["n"])

    def uuids_present(self, uuids: Iterable[str]) -> set[str]:
        present: set[str] = set()
        for chunk in _chunks(list(dict.fromkeys(uuids))):
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(f"SELECT uuid FROM entity WHERE uuid IN ({marks})", chunk)
            present.update(row["uuid"] for row in rows)
        return present

    # ------------------------------------------------------------------ cache

    def cache_clear(self) -> int:
        return self.conn.execute("DELETE FROM cache").rowcount


def _chunks(items: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(items), _IN_CHUNK):
        yield items[start : start + _IN_CHUNK]


# The columns an EntityRecord is read from, in the order _record takes them.
_ENTITY = "entity_type, uuid, id, bundle, label, status, fields, created, changed"


def _record(row: Sequence[Any]) -> EntityRecord:
    """An entity from a row of ``SELECT {_ENTITY}`` (a sqlite3.Row or a plain tuple)."""
    entity_type, uuid, entity_id, bundle, label, status, fields, created, changed = row
    return EntityRecord(entity_type=entity_type, uuid=uuid, id=int(entity_id), bundle=bundle,
                        label=label, status=bool(status), fields=json.loads(fields),
                        created=int(created), changed=int(changed))
