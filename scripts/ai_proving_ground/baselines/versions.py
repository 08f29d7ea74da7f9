"""The versions manifest: code identity recorded with a baseline, compared on provision and reset.

``versions.<key>.json`` is a :class:`VersionsRecord` (``schemas/versions.schema.json``), written
and read through :mod:`ai_proving_ground.records`: a manifest that is not JSON or breaks the
schema is ``APG_VERSIONS_UNREADABLE``, naming the file and the JSON path.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ai_proving_ground.errors import ApgError
from ai_proving_ground.records import FieldsRecord, read_record
from ai_proving_ground.sites.base import Versions

FORMAT = 1
UNREADABLE = "APG_VERSIONS_UNREADABLE"


@dataclass(frozen=True)
class VersionsRecord(FieldsRecord):
    """:class:`sites.base.Versions` as the baseline records it, with its format."""

    SCHEMA: ClassVar[str] = "versions"

    format: int
    core: str
    runtime: dict[str, str]
    modules: dict[str, dict[str, str | None]]
    schema: dict[str, int | None]


def record(versions: Versions) -> VersionsRecord:
    return VersionsRecord(format=FORMAT, **dataclasses.asdict(versions))


def load(path: Path) -> VersionsRecord | None:
    """The recorded manifest, or None for an older baseline that has none."""
    if not path.is_file():
        return None
    try:
        return read_record(path, VersionsRecord, UNREADABLE)
    except ApgError as exc:
        raise ApgError(UNREADABLE, f"{exc.message}; recapture the baseline to record it "
                       "again") from None


Difference = tuple[str, str, str]  # subject, recorded, live


def code_differences(recorded: VersionsRecord, live: VersionsRecord) -> list[Difference]:
    """Differences in code identity; schema versions are for diagnosis and never compared."""
    out: list[Difference] = []
    if recorded.core != live.core:
        out.append(("core", recorded.core, live.core))
    sections: tuple[tuple[str, dict[str, Any], dict[str, Any], Any], ...] = (
        ("runtime", recorded.runtime, live.runtime, str),
        ("modules", recorded.modules, live.modules, _describe))
    for section, old, new, describe in sections:
        for name in sorted(set(old) | set(new)):
            if old.get(name) != new.get(name):
                out.append((f"{section}.{name}", describe(old.get(name)), describe(new.get(name))))
    return out


def describe_differences(differences: list[Difference]) -> str:
    return "; ".join(f"{s}: recorded {r}, live {v}" for s, r, v in differences)


def _describe(identity: Any) -> str:
    if not isinstance(identity, dict):
        return "absent"
    parts = [str(identity.get("package") or "?"), str(identity.get("version") or "unknown")]
    if identity.get("source_reference"):
        parts.append(str(identity["source_reference"]))
    return " ".join(parts)
