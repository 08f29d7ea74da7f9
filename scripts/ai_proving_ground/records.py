"""Records the product writes: each one a dataclass plus a JSON Schema in ``schemas/``.

A record class names its schema (``SCHEMA``) and converts itself to and from JSON data
(``as_json`` / ``from_json``). :func:`write_record` checks the data against the schema before
writing it new-then-rename (a record that breaks its own schema is a bug, never written);
:func:`read_record` checks what it reads the same way, so a reader gets a typed value or one
error naming the file and the JSON path, never a dict it must re-check field by field. It reads
only a regular file, never through a symlink: a record may sit where an agent could have put a
link to something else, and a folder or a link in a record's place is a broken record.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import asdict
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self, TypeVar

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_json
from ai_proving_ground.schemas import schema_errors
from ai_proving_ground.yamlio import json_path

RECORD_INVALID = "APG_RECORD_INVALID"


class Record(Protocol):
    SCHEMA: ClassVar[str]

    def as_json(self) -> dict[str, Any]: ...


R = TypeVar("R", bound="Readable")


class Readable(Record, Protocol):
    @classmethod
    def from_json(cls: type[R], data: dict[str, Any]) -> R: ...


class FieldsRecord:
    """Base of a dataclass record whose JSON is its fields as they are, no more, no less."""

    SCHEMA: ClassVar[str]

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = asdict(self)  # type: ignore[call-overload]  # subclasses are dataclasses
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Self:
        return cls(**data)


def problems(data: Any, schema: str) -> list[str]:
    """Each violation of ``schema`` as ``$.path: message``, in document order."""
    return [f"{json_path(list(e.absolute_path))}: {e.message}" for e in schema_errors(data, schema)]


def write_record(path: Path, record: Record) -> None:
    """Check ``record`` against its schema, then write it new-then-rename."""
    data = record.as_json()
    found = problems(data, record.SCHEMA)
    if found:
        raise ApgError(RECORD_INVALID, f"{path}: the {record.SCHEMA} record breaks its own schema "
                       f"(a bug): {'; '.join(found[:5])}")
    atomic_write_json(path, data)


def parse_record(data: Any, cls: type[R], where: str, token: str = RECORD_INVALID) -> R:
    """``data`` as a ``cls``; a violation raises ``token`` naming ``where`` and the JSON path."""
    found = problems(data, cls.SCHEMA)
    if found:
        raise ApgError(token, f"{where}: not a valid {cls.SCHEMA} record: "
                       f"{'; '.join(found[:5])}")
    try:
        return cls.from_json(data)
    except ApgError as exc:  # what the schema cannot say, said the same way
        raise ApgError(token, f"{where}: not a valid {cls.SCHEMA} record: {exc.message}") from None


def read_record(path: Path, cls: type[R], token: str = RECORD_INVALID) -> R:
    """The record in ``path``; unreadable, not JSON or off-schema raises ``token``
    (APG_RECORD_INVALID unless the record's command documents its own)."""
    try:
        data = json.loads(_regular_file_text(path))
    except FileNotFoundError:
        raise ApgError(token, f"{path} is missing") from None
    except _NotRegular as exc:
        raise ApgError(token, f"{path} is {exc}, not a record file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApgError(token, f"{path} is not readable JSON ({exc})") from None
    return parse_record(data, cls, str(path), token)


class _NotRegular(Exception):
    """What stands where a record file should be."""


def _regular_file_text(path: Path) -> str:
    """The text of ``path`` if it is a regular file, opened without following a symlink."""
    if os.path.islink(path):
        raise _NotRegular("a symlink")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a FIFO must not hang us
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise _NotRegular("a folder" if stat.S_ISDIR(mode) else "not a regular file")
    with os.fdopen(fd, "rb") as handle:
        return handle.read().decode("utf-8")
