"""Checks every record test makes: off-schema is refused on write and on read, naming the file
and the JSON path, and what is written is the canonical JSON the product always wrote."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.records import RECORD_INVALID, Record, write_record


def canonical(data: Any) -> str:
    """The bytes ``fsutil.atomic_write_json`` has always written for ``data``."""
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


def refused_on_write(path: Path, record: Record, where: str) -> None:
    """Writing ``record`` raises APG_RECORD_INVALID naming ``path`` and ``where``; nothing lands."""
    with pytest.raises(ApgError) as raised:
        write_record(path, record)
    assert raised.value.token == RECORD_INVALID
    assert str(path) in raised.value.message and f"{where}:" in raised.value.message
    assert not path.exists()


def refused_on_read(path: Path, data: Any, read: Callable[[Path], Any], where: str,
                    token: str = RECORD_INVALID) -> str:
    """``read`` of a file holding ``data`` raises ``token`` naming ``path`` and ``where``;
    the message, for further checks."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ApgError) as raised:
        read(path)
    assert raised.value.token == token
    assert str(path) in raised.value.message and f"{where}:" in raised.value.message
    return raised.value.message
